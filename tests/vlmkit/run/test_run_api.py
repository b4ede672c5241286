"""vlmkit.run.inference.run_api against a real local server: every answer journalled once, in the journal's file as
in memory; a journal that cannot be written stops the loop with its error; an early stop asks at most nproc - 1
requests beyond the record that decided it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.servers import FaultServer, Reply, chat_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.failures import RunStopped
from vlmkit.run.inference import Task, run_api
from vlmkit.run.journal import Journal


def _tasks(n: int) -> list[Task]:
    return [Task(i, [{"type": "text", "value": f"question {i}"}], "a") for i in range(n)]


def _answer(request) -> Reply:
    question = request.body["messages"][-1]["content"]
    text = question if isinstance(question, str) else question[0]["text"]
    return chat_reply(text.replace("question", "answer"))


def test_every_answer_is_journalled_once_and_the_file_matches_memory(tmp_path: Path):
    with FaultServer(_answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        journal = Journal(tmp_path / "journal.jsonl", {"run": 1}, secrets=["sk-never-written"])
        with journal:
            errors = run_api(model, _tasks(40), journal, dataset="d", nproc=6, desc="t", progress=False)
        model.close()
    assert errors == 0
    lines = [json.loads(line) for line in journal.path.read_text().splitlines()[1:]]
    assert sorted(r["index"] for r in lines) == list(range(40))  # each once
    assert all(r["prediction"] == f"answer {r['index']}" for r in lines)  # each its own answer
    assert journal.current() == Journal(journal.path, {"run": 1}).load()  # what is held is what the file holds


def test_a_journal_that_cannot_be_written_stops_the_loop_with_its_error(tmp_path: Path):
    with FaultServer(_answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        journal = Journal(tmp_path / "journal.jsonl", {"run": 1})  # never opened: append raises
        with pytest.raises(RuntimeError, match="journal is not open"):
            run_api(model, _tasks(30), journal, dataset="d", nproc=4, desc="t", progress=False)
        model.close()
        assert len(server.requests) <= 4  # no worker went on asking after the failure


def test_an_early_stop_asks_at_most_nproc_minus_one_beyond_the_deciding_record(tmp_path: Path):
    with FaultServer(lambda request: Reply(404, {"error": {"message": "no such model"}})) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        seen: list[dict] = []

        def watch(record: dict) -> str | None:
            seen.append(record)
            return "stopped: three failures" if len(seen) == 3 else None

        with Journal(tmp_path / "journal.jsonl", {"run": 1}) as journal, pytest.raises(RunStopped, match="three"):
            run_api(model, _tasks(50), journal, dataset="d", nproc=4, desc="t", progress=False, watch=watch)
        model.close()
        assert 3 <= len(server.requests) <= 3 + 3
    journalled = journal.path.read_text().splitlines()[1:]
    assert 3 <= len(journalled) <= 3 + 3 and all(json.loads(line)["error"]["status"] == 404 for line in journalled)


def test_each_record_carries_the_servers_finish_reason(tmp_path: Path):
    """finish_reason as the server gave it ("length": cut by the token budget), None when it gives none; an error
    record has none (issue 27 counts truncated answers from it)."""
    def answer(request) -> Reply:
        row = int(request.body["messages"][-1]["content"].split()[-1])
        body = chat_reply(f"answer {row}").body
        if row % 4 == 0:
            return Reply(500, {"error": {"message": "busy"}})
        if row % 4 == 1:
            body["choices"][0]["finish_reason"] = "length"
        elif row % 4 == 2:
            del body["choices"][0]["finish_reason"]
        return Reply(200, body)

    with FaultServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        with Journal(tmp_path / "journal.jsonl", {"run": 1}) as journal:
            errors = run_api(model, _tasks(12), journal, dataset="d", nproc=4, desc="t", progress=False)
        model.close()
    assert errors == 3
    records = {r["index"]: r for r in map(json.loads, journal.path.read_text().splitlines()[1:])}
    expected = {0: "absent", 1: "length", 2: None, 3: "stop"}
    for index, record in records.items():
        want = expected[index % 4]
        if want == "absent":
            assert record["error"]["status"] == 500 and "finish_reason" not in record
        else:
            assert record["error"] is None and record["finish_reason"] == want


def test_every_answer_counted_nproc_answers_ago_is_on_disk(tmp_path: Path):
    """The event loop path writes the answers that arrive together in one go: at most nproc answers (one a worker)
    wait for that write, so when the watch sees its k-th record, every record it saw before the (k - nproc)-th is in
    the file already; and every one is when run_api returns."""
    nproc = 5
    path = tmp_path / "journal.jsonl"
    seen: list[int] = []
    late: list[tuple[int, list[int]]] = []

    def watch(record: dict) -> str | None:
        seen.append(record["index"])
        on_disk = {json.loads(line)["index"] for line in path.read_text().splitlines()[1:]}
        missing = [i for i in seen[: max(0, len(seen) - nproc)] if i not in on_disk]
        if missing:
            late.append((len(seen), missing))
        return None

    with FaultServer(_answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        with Journal(path, {"run": 1}) as journal:
            run_api(model, _tasks(60), journal, dataset="d", nproc=nproc, desc="t", progress=False, watch=watch)
            on_disk_at_return = [json.loads(line)["index"] for line in path.read_text().splitlines()[1:]]
        model.close()
    assert late == []
    assert sorted(on_disk_at_return) == list(range(60))
