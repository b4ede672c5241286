"""The run loop's event-loop path (vlmkit.run.inference.run_api over `OpenAICompatModel.open_async`): the hostile
servers of test_api_hostile_servers.py hold there too (answers stay with their rows, the timeout bounds the whole
answer), a stopped run's calls in flight end when the model is closed and their loop thread with them, and a model
without `open_async` (asked from threads) journals the same records."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.vlm.api.raw_server import RawConnection, RawRequest, RawServer, chat_json, http_response
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.failures import RunStopped
from vlmkit.run.inference import Task, run_api
from vlmkit.run.journal import Journal

ROWS = 12
LIVENESS_S = 30.0  # a run still going after this outlived its timeout many times over: it would hang


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)


def run_rows(model: Any, tmp_path: Path, *, nproc: int, rows: int = ROWS, watch=None, name: str = "j") -> dict:
    """run_api over q0..q{rows-1} in a thread that must end within LIVENESS_S; the journalled records by index."""
    tasks = [Task(i, [f"q{i}"]) for i in range(rows)]
    journal = Journal(tmp_path / f"{name}.jsonl", {"test": name})
    journal.open()
    outcome: list[BaseException] = []

    def go() -> None:
        try:
            run_api(model, tasks, journal, dataset=None, nproc=nproc, desc="t", progress=False, watch=watch)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(LIVENESS_S)
    assert not thread.is_alive()
    journal.close()
    if outcome:
        raise outcome[0]
    lines = (tmp_path / f"{name}.jsonl").read_text().splitlines()[1:]
    return {r["index"]: r for r in map(json.loads, lines)}


def outcomes(records: dict) -> list[str]:
    return [r["prediction"] if r["error"] is None else f"error: {r['error']['kind']}"
            for _, r in sorted(records.items())]


@pytest.mark.parametrize("nproc", [1, 4])
def test_responses_too_many_never_answer_another_row(tmp_path: Path, nproc: int) -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        extra = http_response(200, chat_json(f"stale answer sent after {request.question}"))
        conn.send(http_response(200, chat_json(f"answer to {request.question}")) + extra)

    with RawServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        records = run_rows(model, tmp_path, nproc=nproc)
        model.close()
    assert outcomes(records) == [f"answer to q{i}" for i in range(ROWS)]


def test_a_body_longer_than_its_content_length_never_answers_the_next_row(tmp_path: Path) -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        body = chat_json(f"answer to {request.question}")
        smuggled = http_response(200, chat_json(f"smuggled after {request.question}"))
        conn.send(http_response(200, body + smuggled, length=len(body)))

    with RawServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        records = run_rows(model, tmp_path, nproc=1)
        model.close()
    assert outcomes(records) == [f"answer to q{i}" for i in range(ROWS)]


def test_a_trickling_body_costs_its_row_the_timeout_and_the_others_are_answered(tmp_path: Path) -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        body = chat_json(f"answer to {request.question}")
        if request.question != "q1":
            conn.send(http_response(200, body))
            return
        conn.send(http_response(200, body)[: -len(body)])
        for byte in body:  # one byte a second: the whole answer would take minutes
            conn.send(bytes([byte]))
            if conn.wait(1.0):
                return

    with RawServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=1.5)
        records = run_rows(model, tmp_path, nproc=2, rows=4)
        model.close()
    assert outcomes(records) == ["answer to q0", "error: timeout", "answer to q2", "answer to q3"]


def test_a_stopped_run_leaves_at_once_and_close_ends_its_calls_and_loop_thread(tmp_path: Path) -> None:
    """The first answer stops the run (a watch, as FirstFailures does); the other calls wait on a server that takes a
    minute. run_api leaves without them; close() ends them, and the loop thread ends; nothing more is journalled."""
    def answer(request: Recorded) -> Reply:
        question = request.body["messages"][-1]["content"]
        return chat_reply("fast") if question == "q0" else Reply(200, {"choices": []}, delay=60)

    before = {t for t in threading.enumerate() if t.name == "vlmkit-api-loop"}
    with FaultServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=3, backoff=0.01, timeout=120)
        with pytest.raises(RunStopped, match="stop here"):
            run_rows(model, tmp_path, nproc=4, watch=lambda record: "stop here")
        loops = {t for t in threading.enumerate() if t.name == "vlmkit-api-loop"} - before
        model.close()
        for thread in loops:
            thread.join(LIVENESS_S)
        posts = [r for r in server.requests if r.method == "POST"]
    assert not any(t.is_alive() for t in loops)
    assert len(posts) <= 4  # at most nproc asked; none retried after close()
    lines = (tmp_path / "j.jsonl").read_text().splitlines()[1:]
    assert [json.loads(line)["prediction"] for line in lines] == ["fast"]


class ThreadOnly:
    """The same model reached only through its blocking generate_full: run_api asks it from threads."""

    is_api = True

    def __init__(self, inner: OpenAICompatModel) -> None:
        self.inner = inner

    def generate(self, msgs, dataset=None):
        return self.inner.generate(msgs, dataset)

    def generate_full(self, msgs, dataset=None, params=None):
        return self.inner.generate_full(msgs, dataset, params)


def test_the_thread_path_and_the_event_loop_path_journal_the_same_records(tmp_path: Path) -> None:
    def answer(request: Recorded) -> Reply:
        return chat_reply(f"answer to {request.body['messages'][-1]['content']}", usage={"prompt_tokens": 3,
                          "completion_tokens": 2, "total_tokens": 5})

    with FaultServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        on_loop = run_rows(model, tmp_path, nproc=3, name="loop")
        in_threads = run_rows(ThreadOnly(model), tmp_path, nproc=3, name="threads")
        model.close()

    def comparable(records: dict) -> dict:
        return {i: {k: v for k, v in r.items() if k != "latency_ms"} for i, r in records.items()}

    assert comparable(on_loop) == comparable(in_threads)
    assert outcomes(on_loop) == [f"answer to q{i}" for i in range(ROWS)]


def test_a_video_and_audio_row_sends_on_the_loop_what_the_blocking_call_sends(tmp_path: Path) -> None:
    """Frames are decoded and audio converted off the event loop (a worker thread): the body is the same."""
    from tests.support.media_files import write_tone, write_video

    msgs = ["Watch and listen.", str(write_video(tmp_path / "clip.mp4", frames=16, fps=8.0)),
            str(write_tone(tmp_path / "tone.flac", rate=22050, channels=2)), "What happens?"]
    with FaultServer(lambda request: chat_reply("ok")) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=30, nframe=4)
        assert model.generate(msgs) == "ok"
        journal = Journal(tmp_path / "video.jsonl", {"test": "video"})
        journal.open()
        try:
            assert run_api(model, [Task(0, msgs)], journal, dataset=None, nproc=1, desc="t", progress=False) == 0
        finally:
            journal.close()
            model.close()
        blocking, on_loop = (r.body for r in server.requests)
    kinds = [p["type"] for p in on_loop["messages"][0]["content"]]
    assert kinds == ["text", "image_url", "image_url", "image_url", "image_url", "input_audio", "text"]
    assert on_loop == blocking
