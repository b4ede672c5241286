"""`vlmkit run --judge`: the judge reads only what the rules cannot, its calls are journalled apart from the model's
and resumed without asking again, a dead judge stops the run before the model is asked anything, its key reaches
no file, and a real `transformers serve` works as a judge."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.run_helpers import (chat_only, chat_requests, ctrl_c_as_a_terminal_gives_it, question_of, row_of,
                                       stderr_lines, vlmkit_cli)
from tests.support.run_helpers import write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

N = 12
JUDGE_KEY = "sk-judge-only-7d3e11"
MODEL_KEY = "sk-model-only-91ab02"


def truth(i: int) -> str:
    return "Yes" if i % 3 else "No"  # write_yorn_tsv's answers


def model_answers(request: Recorded) -> Reply:
    """Rows 0, 2, 4, ... answered plainly and right; odd rows hedge (no rule reads them)."""
    i = row_of(request)
    return chat_reply(truth(i) if i % 2 == 0 else "Hard to say from this picture, honestly.")


def judge_answers(request: Recorded) -> Reply:
    """Reads the row from the question quoted in the judge prompt: right for rows 1 and 3, wrong for 5, a reply no
    rule reads for 7 (asked again at each temperature), right for the rest."""
    if request.method == "GET":
        return Reply(404, {"error": {"message": "no models route"}})
    i = int(re.search(r"\[(\d+)\]", question_of(request)).group(1))
    if i == 5:
        return chat_reply("No" if truth(i) == "Yes" else "Yes")
    if i == 7:
        return chat_reply("I cannot tell.")
    return chat_reply(truth(i), usage={"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101})


def judge_prompts(requests: list[Recorded]) -> list[tuple[str, float]]:
    return [(question_of(r), r.body.get("temperature")) for r in chat_requests(requests)]


@pytest.fixture
def yorn(lmu_root: Path) -> Path:
    return write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)


def run_judged(model_base: str, judge_base: str, work: Path, lmu: Path, *extra: str,
               timeout: float = 300) -> subprocess.CompletedProcess:
    return vlmkit_cli("run", "--data", "MyYN", "--model", "served", "--api-base", model_base, "--api-key", MODEL_KEY,
                      "--work-dir", str(work), "--judge", "judge-m", "--judge-api-base", judge_base,
                      "--judge-api-key", JUDGE_KEY, *extra, env={"LMUData": str(lmu)}, timeout=timeout)


def test_the_judge_reads_only_what_rules_cannot_and_is_recorded_apart(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(model_answers)) as model, FaultServer(judge_answers) as judge:
        result = run_judged(model.base_url, judge.base_url, work, lmu_root)
        judged = judge_prompts(judge.requests)
        model_calls = chat_requests(model.requests)
        judge_headers = [r.headers.get("Authorization") for r in chat_requests(judge.requests)]
        model_headers = [r.headers.get("Authorization") for r in model_calls]
    assert result.returncode == 0, result.stderr
    assert len(model_calls) == N
    assert set(judge_headers) == {f"Bearer {JUDGE_KEY}"} and set(model_headers) == {f"Bearer {MODEL_KEY}"}
    # only the hedged (odd) rows reach the judge; row 7 is asked at VLMEvalKit's five temperatures
    asked_rows = sorted({int(re.search(r"\[(\d+)\]", q).group(1)) for q, _ in judged})
    assert asked_rows == [1, 3, 5, 7, 9, 11]
    assert sorted(t for q, t in judged if "[7]" in q) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert len(judged) == 5 + 5  # 7 five times, the others once

    run_dir = work / "served" / "MyYN"
    results = json.loads((run_dir / "results.json").read_text())
    counts = results["scoring"]["counts"]
    assert (counts["by_rule"], counts["by_judge"], counts["unread"], counts["judge_errors"]) == (6, 5, 1, 0)
    # right: the 6 rule-read rows, and judged rows 1, 3, 9, 11 (5 judged wrong, 7 unread)
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(10 / N * 100)  # Y/N accuracy in percent
    block = results["judge"]
    assert block["name"] == "judge-m" and block["base_url"] == judge.base_url.rstrip("/")
    assert block["asked_this_run"] == 10 and block["from_journal"] == 0 and block["errors"] == 0
    assert block["usage"]["input_tokens"] == 100 * 4 + 11 * 6  # apart from the model's usage
    assert results["usage"]["requests"] == N
    by_index = {rec["index"]: rec for rec in map(json.loads, (run_dir / "predictions.jsonl").read_text().splitlines())}
    assert by_index[3]["method"] == "judge" and by_index[3]["judge"] == truth(3)
    assert by_index[7]["method"] == "judge_unread" and by_index[7]["judge"] == "I cannot tell."
    assert by_index[2]["judge"] is None and by_index[2]["method"] != "judge"
    judge_journal = (run_dir / "judge.jsonl").read_text()
    assert len(judge_journal.splitlines()) == 1 + 10
    for secret in (JUDGE_KEY, MODEL_KEY):
        assert secret not in result.stdout + result.stderr
        assert [p for p in work.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []


def test_rules_only_without_judge_says_so(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(model_answers)) as model:
        result = vlmkit_cli("run", "--data", "MyYN", "--model", "served", "--api-base", model.base_url,
                            "--work-dir", str(work), env={"LMUData": str(lmu_root)})
    assert result.returncode == 0, result.stderr
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["judge"]["name"] is None and "rules only" in results["judge"]["note"]
    assert not (work / "served" / "MyYN" / "judge.jsonl").exists()


def test_a_dead_judge_stops_the_run_before_the_model_is_asked(yorn: Path, lmu_root: Path, tmp_path: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with FaultServer(chat_only(model_answers)) as model:
        result = run_judged(model.base_url, dead, tmp_path / "out", lmu_root)
        asked = chat_requests(model.requests)
    assert result.returncode == 4, result.stderr
    [line] = stderr_lines(result)
    assert line.startswith("vlmkit: error: judge judge-m: stopped before asking anything") and "--judge-api-base" in line
    assert asked == []  # found before hours of inference, not after


def test_killed_while_judging_resumes_without_judging_again(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    slow = {"delay": 0.4}

    def slow_judge(request: Recorded) -> Reply:
        reply = judge_answers(request)
        if request.method == "POST":
            reply.delay = slow["delay"]
        return reply

    with FaultServer(chat_only(model_answers)) as model, FaultServer(slow_judge) as judge:
        args = ["run", "--data", "MyYN", "--model", "served", "--api-base", model.base_url, "--work-dir", str(work),
                "--judge", "judge-m", "--judge-api-base", judge.base_url, "--judge-nproc", "1"]
        proc = subprocess.Popen([sys.executable, "-m", "vlmkit.cli", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**__import__("os").environ,
                                                                        "LMUData": str(lmu_root)}, preexec_fn=ctrl_c_as_a_terminal_gives_it)
        journal = work / "served" / "MyYN" / "judge.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if journal.exists() and len(journal.read_text().splitlines()) >= 1 + 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        first = judge_prompts(judge.requests)
        assert 3 <= len(first) < 10  # stopped part-way through judging
        slow["delay"] = 0.0
        result = run_judged(model.base_url, judge.base_url, work, lmu_root)
        everything = judge_prompts(judge.requests)
    assert result.returncode == 0, result.stderr
    # every (prompt, temperature) asked of the judge once over both runs, but the one in flight at the kill
    repeats = len(everything) - len(set(everything))
    assert repeats <= 1, everything
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["judge"]["from_journal"] >= 3 and results["scoring"]["counts"]["by_judge"] == 5


def test_transformers_serve_as_a_judge(served_llava: tuple[str, str], yorn: Path, lmu_root: Path, tmp_path: Path):
    api_base, judge_model = served_llava
    work = tmp_path / "out"
    with FaultServer(chat_only(model_answers)) as model:
        result = vlmkit_cli("run", "--data", "MyYN", "--model", "served", "--api-base", model.base_url, "--work-dir",
                            str(work), "--judge", judge_model, "--judge-api-base", api_base, "--judge-nproc", "2",
                            env={"LMUData": str(lmu_root)}, timeout=600)
    assert result.returncode in (0, 3), result.stderr  # a tiny random judge may fail to answer a row: partial
    run_dir = work / "served" / "MyYN"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["judge"]["name"] == judge_model and results["judge"]["replies"] >= 6
    records = [json.loads(line) for line in (run_dir / "judge.jsonl").read_text().splitlines()[1:]]
    assert len(records) >= 6 and all(r["prompt"][0]["content"][0]["value"] for r in records)
    replies = [r["prediction"] for r in records if r["error"] is None]
    assert replies and all(isinstance(r, str) for r in replies)
    predictions = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert {p["method"] for p in predictions if p["index"] % 2} <= {"judge", "judge_unread", "judge_error"}


def test_the_judge_from_the_config_file(yorn: Path, lmu_root: Path, tmp_path: Path):
    """`judge`, `judge_api_base`, `judge_api_key`, `judge_nproc` under `options` of a --config file; the key is
    sent to the judge only and written nowhere, the config file aside."""
    work = tmp_path / "out"
    config = tmp_path / "run.yaml"
    with FaultServer(chat_only(model_answers)) as model, FaultServer(judge_answers) as judge:
        config.write_text(
            f"data: [MyYN]\nmodel: [served]\noptions:\n  api_base: {model.base_url}\n  work_dir: {work}\n"
            f"  judge: judge-m\n  judge_api_base: {judge.base_url}\n  judge_api_key: {JUDGE_KEY}\n  judge_nproc: 2\n"
        )
        result = vlmkit_cli("run", "--config", str(config), env={"LMUData": str(lmu_root)})
        judge_headers = {r.headers.get("Authorization") for r in chat_requests(judge.requests)}
        model_headers = {r.headers.get("Authorization") for r in chat_requests(model.requests)}
    assert result.returncode == 0, result.stderr
    assert judge_headers == {f"Bearer {JUDGE_KEY}"} and JUDGE_KEY not in str(model_headers)
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["judge"]["name"] == "judge-m" and results["judge"]["nproc"] == 2
    assert results["scoring"]["counts"]["by_judge"] == 5
    assert JUDGE_KEY not in result.stdout + result.stderr
    assert [p for p in work.rglob("*") if p.is_file() and JUDGE_KEY.encode() in p.read_bytes()] == []


def test_judged_mcq_rows_by_hand(lmu_root: Path, tmp_path: Path):
    """An MCQ TSV: the rules read rows 0-3; rows 4-7 reach the judge with VLMEvalKit's prompt (options block as in
    the facts); its letters decide them (row 6: `Z`, no option; row 7: nothing readable three times)."""
    from tests.support.tsvs import b64, image_bytes, write_tsv

    options = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}
    rows = [{"index": i, "image": b64(image_bytes()), "question": f"[{i}] Which animal?", **options,
             "answer": "ABCD"[i % 4], "category": "animals"} for i in range(8)]
    write_tsv(lmu_root / "MyMCQ.tsv", rows)
    model_replies = {0: "A", 1: "The answer is B.", 2: "(C) bird", 3: "A",  # row 3 read by rule, wrong
                     4: "Looks furry to me.", 5: "Something with fins.", 6: "No idea.", 7: "Hmm."}
    judge_replies = {4: "A", 5: "D", 6: "Z", 7: "I am not sure"}

    def model(request: Recorded) -> Reply:
        return chat_reply(model_replies[row_of(request)])

    def judge_letters(request: Recorded) -> Reply:
        if request.method == "GET":
            return Reply(404, {"error": {"message": "no models route"}})
        return chat_reply(judge_replies[int(re.search(r"\[(\d+)\]", question_of(request)).group(1))])

    work = tmp_path / "out"
    with FaultServer(chat_only(model)) as served, FaultServer(judge_letters) as judge:
        result = vlmkit_cli("run", "--data", "MyMCQ", "--kind", "mcq", "--model", "served", "--api-base",
                            served.base_url, "--work-dir", str(work), "--judge", "judge-m", "--judge-api-base",
                            judge.base_url, env={"LMUData": str(lmu_root)})
        prompts = [question_of(r) for r in chat_requests(judge.requests)]
    assert result.returncode == 0, result.stderr
    assert len(prompts) == 3 + 3  # rows 4, 5, 6 once; row 7 three times (VLMEvalKit's 3 tries)
    first = next(p for p in prompts if "[4]" in p)
    assert first.startswith("You are an AI assistant who will help me to match an answer with several options")
    assert "Question: [4] Which animal??\nOptions: There are several options: \nA. cat\nB. dog\nC. bird\nD. fish\n\n" \
           "Answer: Looks furry to me.\nYour output: " in first
    results = json.loads((work / "served" / "MyMCQ" / "results.json").read_text())
    counts = results["scoring"]["counts"]
    assert (counts["by_rule"], counts["by_judge"], counts["unread"]) == (4, 3, 1)
    # by hand: rows 0, 1, 2 right by rule (3 wrong); row 4 judged A = right, 5 judged D != B, 6 Z, 7 unread: 4 of 8
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(4 / 8)
    by_index = {r["index"]: r for r in map(json.loads, (work / "served" / "MyMCQ" / "predictions.jsonl")
                                           .read_text().splitlines())}
    assert [by_index[i]["method"] for i in (4, 5, 6, 7)] == ["judge", "judge", "judge", "judge_unread"]
    assert by_index[4]["hit"] and not by_index[5]["hit"] and not by_index[7]["hit"]
