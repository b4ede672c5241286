"""End to end: `vlmkit run` on an MMBench-shaped TSV (circular copies sharing images by index) against an
OpenAI-compatible server that answers from a key. Printed accuracy equals the known value; a run killed midway
resumes without asking the model again for a finished sample."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

COLOURS = ["red", "green", "blue", "yellow"]
N_GROUPS = 6
WRONG_GROUP = 4  # the server answers one rotation of this group wrongly: the group is a miss
UNPARSED_GROUP = 5  # the server answers this group's main row with prose: unparsed, a miss
CATEGORIES = ["colour", "colour", "colour", "shape", "shape", "shape"]
EXPECTED_OVERALL = 4 / 6


def _jpeg_b64(colour: str) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), colour).save(buffer, format="JPEG")
    return base64.b64encode(buffer.getvalue()).decode()


def write_circular_tsv(path: Path) -> None:
    """N_GROUPS questions x 4 rotations; copies reference the main row's image by its index."""
    rows = []
    for g in range(N_GROUPS):
        answer_colour = COLOURS[g % 4]
        for k in range(4):
            options = COLOURS[k:] + COLOURS[:k]
            rows.append(
                {
                    "index": g + k * 1_000_000,
                    "image": _jpeg_b64(answer_colour) if k == 0 else str(g),
                    "question": f"[q{g}] What colour fills the picture?",
                    "hint": "Look closely." if g % 2 else "",
                    **dict(zip("ABCD", options)),
                    "answer": "ABCD"[options.index(answer_colour)],
                    "category": CATEGORIES[g],
                    "l2-category": "perception",
                    "split": "dev",
                }
            )
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)


def key_answer(request: Recorded) -> Reply:
    """Reads the question id and the options from the prompt and answers from the key."""
    parts = request.body["messages"][-1]["content"]
    text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
    group = int(re.search(r"\[q(\d+)\]", text).group(1))
    options = dict(re.findall(r"^([A-D])\. (\w+)$", text, flags=re.M))
    truth = next(letter for letter, colour in options.items() if colour == COLOURS[group % 4])
    if group == WRONG_GROUP and truth != "A":
        return chat_reply("A")
    if group == UNPARSED_GROUP and options["A"] == "red":
        return chat_reply("I cannot tell from this picture.")
    return chat_reply(f"The answer is ({truth})." if group % 2 else truth)


def question_key(request: Recorded) -> str:
    parts = request.body["messages"][-1]["content"]
    return "".join(p.get("text", "") for p in parts if p.get("type") == "text")


def vlmkit(args: list[str], lmu: Path, work: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**(env or os.environ), "LMUData": str(lmu), "OPENAI_API_KEY": "sk-e2e-secret-key-0123456789"}
    cmd = [sys.executable, "-m", "vlmkit.cli", "run", "--work-dir", str(work), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def lmu(tmp_path: Path) -> Path:
    root = tmp_path / "LMUData"
    root.mkdir()
    write_circular_tsv(root / "MyCircular.tsv")
    return root


def test_run_scores_known_accuracy_and_resumes_after_a_kill(lmu: Path, tmp_path: Path) -> None:
    hold_at = 9  # the 10th request is never answered: the run is killed while it waits

    def responder(request: Recorded) -> Reply:
        if request.number == hold_at:
            return Reply(200, {}, delay=120)
        return key_answer(request)

    work = tmp_path / "outputs"
    with FaultServer(chat_only(responder)) as server:
        args = ["--data", "MyCircular", "--model", "served", "--api-base", server.base_url, "--nproc", "2"]
        first = vlmkit(args, lmu, work)
        deadline = time.monotonic() + 60
        while len(server.requests) <= hold_at and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert len(server.requests) > hold_at, first.communicate()
        time.sleep(1.0)  # let the answered requests reach the journal
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)

        journal = work / "served" / "MyCircular" / "journal.jsonl"
        done_before = len(journal.read_text().splitlines()) - 1
        assert 0 < done_before < 4 * N_GROUPS

        second = vlmkit(args, lmu, work)
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err

    answered = Counter(question_key(r) for r in chat_requests(server.requests) if r.number != hold_at)
    assert len(answered) == 4 * N_GROUPS  # every sample asked
    assert set(answered.values()) == {1}  # and none asked twice

    results = json.loads((work / "served" / "MyCircular" / "results.json").read_text())
    overall = results["scoring"]["metrics"]["Overall"]
    assert overall == pytest.approx(EXPECTED_OVERALL)
    assert f"{EXPECTED_OVERALL:.4g}" in out  # the printed table
    assert results["counts"] == {
        "total": 24, "completed": 24, "inference_errors": 0, "not_run": 0, "xlsx_cells_truncated": 0,
    }
    assert results["scoring"]["counts"]["unparsed"] == 1
    assert results["model"]["kwargs"]["api_base"] == server.base_url
    for path in (work / "served").rglob("*"):  # the key never reaches a file
        if path.is_file() and path.suffix in (".json", ".jsonl", ".csv"):
            assert "sk-e2e-secret" not in path.read_text()

    table = pd.read_csv(work / "served" / "served_MyCircular_acc.csv")
    assert table.loc[0, "Overall"] == pytest.approx(EXPECTED_OVERALL)
    assert table.loc[0, "colour"] == pytest.approx(1.0) and table.loc[0, "shape"] == pytest.approx(1 / 3)
    xlsx = pd.read_excel(work / "served" / "served_MyCircular.xlsx")
    assert "image" not in xlsx.columns and len(xlsx) == 24 and xlsx["prediction"].notna().all()


def test_failed_calls_are_errors_not_predictions_and_are_retried(lmu: Path, tmp_path: Path) -> None:
    from vlmkit.run.resolve import ModelOptions
    from vlmkit.run.runner import RunOptions, Runner

    failing = {"healthy": False}

    def responder(request: Recorded) -> Reply:
        if "[q2]" in question_key(request) and not failing["healthy"]:
            return Reply(500, {"error": {"message": "boom"}})
        return key_answer(request)

    work = tmp_path / "outputs"
    with FaultServer(chat_only(responder)) as server:
        options = ModelOptions(api_base=server.base_url, extra={"retries": 0})
        runner = Runner(RunOptions(work_dir=work, nproc=2, root=lmu, progress=False), options)
        [outcome] = runner.run(["MyCircular"], ["served"])
        assert outcome.status == "partial" and outcome.n_errors == 4 and outcome.n_completed == 20
        records = [json.loads(line) for line in (work / "served" / "MyCircular" / "predictions.jsonl").open()]
        failed = [r for r in records if r["error"] is not None]
        assert len(failed) == 4 and all(r["prediction"] is None for r in failed)
        assert {r["error"]["kind"] for r in failed} == {"http_5xx"}
        assert outcome.evaluation.metrics["Overall"] == pytest.approx(3 / 6)  # group 2 counted as a miss

        failing["healthy"] = True
        asked_before = len(chat_requests(server.requests))
        [again] = Runner(RunOptions(work_dir=work, nproc=2, root=lmu, progress=False), options).run(["MyCircular"], ["served"])
        assert len(chat_requests(server.requests)) - asked_before == 4  # only the failed samples are asked again
        assert again.status == "success" and again.evaluation.metrics["Overall"] == pytest.approx(EXPECTED_OVERALL)


def test_sharded_run_under_torchrun_env_asks_each_sample_once(lmu: Path, tmp_path: Path) -> None:
    """Two ranks (as torchrun starts them) split the rows; rank 0 merges both journals and scores."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    work = tmp_path / "outputs"
    with FaultServer(chat_only(key_answer)) as server:
        args = ["--data", "MyCircular", "--model", "served", "--api-base", server.base_url, "--nproc", "2"]
        ranks = []
        for rank in (0, 1):
            env = {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
            ranks.append(vlmkit(args, lmu, work, env={**os.environ, **env}))
        outputs = [p.communicate(timeout=180) for p in ranks]
        assert [p.returncode for p in ranks] == [0, 0], outputs

    answered = Counter(question_key(r) for r in chat_requests(server.requests))
    assert len(answered) == 24 and set(answered.values()) == {1}
    run_dir = work / "served" / "MyCircular"
    shards = [len(json_lines(run_dir / f"journal.rank{r}.jsonl")) for r in (0, 1)]
    assert shards == [12, 12]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["scoring"]["metrics"]["Overall"] == pytest.approx(EXPECTED_OVERALL)
    assert results["counts"]["completed"] == 24


def json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]
