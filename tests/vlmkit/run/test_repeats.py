"""`--repeats N` end to end through a local OpenAI-compatible server that answers by (row, seed): each attempt carries
its seed and is journalled apart, mean@N / spread / pass@k / majority against values counted here from the server's
own table, a greedy model is refused, and a run killed in its last attempt keeps the attempts already journalled."""

from __future__ import annotations

import itertools
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.run_helpers import (chat_only, chat_requests, ctrl_c_as_a_terminal_gives_it, row_of,
                                       write_yorn_tsv)
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.core.errors import ConfigError
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.runner import RunOptions, Runner, summary_rows

ROWS = 10
N = 3


def truth(row: int) -> str:
    return "Yes" if row % 3 else "No"  # write_yorn_tsv's answers


def reply(row: int, seed: int) -> str:
    """The server's answer to row under seed: varies by attempt, the same for the same (row, seed)."""
    return "Yes" if (row * 7 + seed * 3) % 5 < 3 else "No"


def by_row_and_seed(request: Recorded) -> Reply:
    return chat_reply(reply(row_of(request), int(request.body["seed"])))


def _run(lmu: Path, work: Path, server: FaultServer, **options) -> list:
    temperature = options.pop("temperature", 0.7)
    model_options = ModelOptions(api_base=server.base_url, api_key="sk-test", temperature=temperature)
    spec = resolve_model("served", model_options)
    runner = Runner(RunOptions(work_dir=work, root=lmu, progress=False, nproc=2, **options), model_options)
    return runner.run(["MyYN"], [spec])


def test_three_attempts_each_with_its_seed_and_the_figures_over_them(lmu_root: Path, tmp_path: Path) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=ROWS)
    with FaultServer(chat_only(by_row_and_seed)) as server:
        outcomes = _run(lmu_root, tmp_path / "out", server, repeats=N)
        asked = chat_requests(server.requests)
    outcome = outcomes[0]
    assert outcome.status == "success"
    # every (row, seed) asked exactly once, at the run's temperature
    assert sorted((row_of(r), r.body["seed"]) for r in asked) == sorted(itertools.product(range(ROWS), range(1, N + 1)))
    assert {r.body["temperature"] for r in asked} == {0.7}
    run_dir = tmp_path / "out" / "served" / "MyYN"
    for k, path in ((1, run_dir / "journal.jsonl"), (2, run_dir / "attempts/attempt2/journal.jsonl"),
                    (3, run_dir / "attempts/attempt3/journal.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        assert sorted(r["index"] for r in records) == list(range(ROWS))
        assert all(r["params"]["seed"] == k and r["prediction"] == reply(r["index"], k) for r in records)

    # expectations from the server's table (percent: the Y/N scorer's scale)
    hits = [[reply(r, s) == truth(r) for r in range(ROWS)] for s in range(1, N + 1)]
    per_attempt = [100 * sum(h) / ROWS for h in hits]
    block = json.loads((run_dir / "results.json").read_text())["scoring"]["repeats"]
    assert [a["value"] for a in block["per_attempt"]] == pytest.approx(per_attempt)
    assert block["mean"] == pytest.approx(statistics.mean(per_attempt))
    assert block["std"] == pytest.approx(statistics.stdev(per_attempt))
    for k in range(1, N + 1):  # each row: the share of its k-subsets of attempts holding a hit, averaged
        shares = []
        for r in range(ROWS):
            subsets = list(itertools.combinations([hits[s][r] for s in range(N)], k))
            shares.append(sum(any(c) for c in subsets) / len(subsets))
        assert block["pass_at_k"][str(k)] == pytest.approx(sum(shares) / ROWS)
    voted = []
    for r in range(ROWS):
        answers = [reply(r, s) for s in range(1, N + 1)]
        voted.append(max(answers, key=lambda a: (answers.count(a), -answers.index(a))))
    assert block["majority"]["value"] == pytest.approx(100 * sum(v == truth(r) for r, v in enumerate(voted)) / ROWS)
    # the headline is attempt 1's; the console says mean@3 under the table
    assert outcome.evaluation.primary_value == pytest.approx(per_attempt[0])
    assert f"mean@3 {statistics.mean(per_attempt):.2f}" in summary_rows(outcomes)


def test_a_greedy_model_is_refused_in_one_line(lmu_root: Path, tmp_path: Path) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=2)
    spec = resolve_model("served", ModelOptions(api_base="http://127.0.0.1:9/v1", api_key="sk-test"))
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False, repeats=3))
    with pytest.raises(ConfigError, match=r"--repeats 3: .* pass --temperature") as refused:
        runner.run(["MyYN"], [spec])
    assert "\n" not in str(refused.value)
    for bad in ({"repeats": 0}, {"repeats": 2, "retry_truncated": 8}, {"repeats": 2, "shard": "0/2"}):
        with pytest.raises(ConfigError):
            RunOptions(**bad).check()


def test_an_explicit_temperature_0_may_repeat(lmu_root: Path, tmp_path: Path) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=2)
    with FaultServer(chat_only(by_row_and_seed)) as server:
        outcome = _run(lmu_root, tmp_path / "out", server, repeats=2, temperature=0.0)[0]
        assert {r.body["temperature"] for r in chat_requests(server.requests)} == {0.0}
    assert outcome.status == "success" and len(outcome.evaluation.per_sample) == 2


def test_a_run_killed_in_its_last_attempt_resumes_with_the_attempts_journalled(lmu_root: Path, tmp_path: Path) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=ROWS)
    work = tmp_path / "out"
    args = [sys.executable, "-m", "vlmkit.cli", "run", "--data", "MyYN", "--model", "served", "--work-dir", str(work),
            "--temperature", "0.7", "--repeats", str(N), "--nproc", "2"]

    def attempt_3_hangs(request: Recorded) -> Reply:
        if request.body["seed"] == N:
            return Reply(200, {}, delay=60)  # abandoned when the server stops
        return by_row_and_seed(request)

    env = {"LMUData": str(lmu_root), "PATH": "/usr/bin:/bin"}
    with FaultServer(chat_only(attempt_3_hangs)) as server:
        child = subprocess.Popen([*args, "--api-base", server.base_url], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, preexec_fn=ctrl_c_as_a_terminal_gives_it)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and child.poll() is None:
                if any(r.body.get("seed") == N for r in chat_requests(server.requests)):
                    break
                time.sleep(0.05)
            assert child.poll() is None, child.stdout.read().decode()
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        first_run = chat_requests(server.requests)
    assert {r.body["seed"] for r in first_run} == {1, 2, 3}
    assert sum(r.body["seed"] in (1, 2) for r in first_run) == 2 * ROWS

    with FaultServer(chat_only(by_row_and_seed)) as server:
        done = subprocess.run([*args, "--api-base", server.base_url], env=env, capture_output=True, text=True,
                              timeout=300)
        second_run = chat_requests(server.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted((r.body["seed"], row_of(r)) for r in second_run) == [(N, r) for r in range(ROWS)]  # only attempt 3
    block = json.loads((work / "served" / "MyYN" / "results.json").read_text())["scoring"]["repeats"]
    assert [a["answered"] for a in block["per_attempt"]] == [ROWS] * N
    assert "mean@3" in done.stdout
