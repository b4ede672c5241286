"""Failures stop early and say why: the probe, the first samples failing with a status no retry fixes, the flag that
fixes a max_tokens refusal, an error summary by kind on every run, no score file when nothing was scored, and
one-line errors (exit 2) for bad settings and empty datasets."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.support.run_helpers import (
    answer_yes,
    chat_only,
    chat_requests,
    probes,
    row_of,
    run_served,
    stderr_lines,
    vlmkit_cli,
    write_yorn_tsv,
)
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

N = 20


@pytest.fixture
def yorn(lmu_root: Path) -> Path:
    return write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)


run = run_served


def assert_nothing_scored(work: Path) -> None:
    """No _acc.csv/_score.csv and no xlsx: nothing a score collector could read as a result."""
    assert [p.name for p in work.rglob("*") if p.suffix in (".csv", ".xlsx")] == []


def test_model_not_found_stops_after_the_first_samples_quoting_the_server(yorn: Path, lmu_root: Path, tmp_path: Path):
    def not_found(request: Recorded) -> Reply:
        return Reply(404, {"error": {"message": "The model `served` does not exist.", "type": "NotFoundError"}})

    work = tmp_path / "out"
    with FaultServer(chat_only(not_found)) as server:
        result = run(server.base_url, work, lmu_root, "--nproc", "2")
        asked = len(chat_requests(server.requests))
    assert result.returncode == 4, result.stderr
    [line] = stderr_lines(result)
    assert line.startswith("vlmkit: error: served x MyYN: stopped") and "HTTP 404" in line and "does not exist" in line
    assert 8 <= asked <= 10 < N  # the first 8 (and at most the 2 in flight), not every row
    assert "http_4xx" in result.stdout and "first: row 0" in result.stdout  # the summary by kind
    assert_nothing_scored(work)
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())  # none before: why, on disk
    assert results["status"] == "stopped" and results["scoring"] is None and "does not exist" in results["message"]
    assert results["errors_by_kind"]["http_4xx"]["status"] == 404
    assert results["errors_by_kind"]["http_4xx"]["count"] == results["counts"]["inference_errors"] >= 8
    journal = (work / "served" / "MyYN" / "journal.jsonl").read_text().splitlines()[1:]
    assert all(json.loads(line)["error"]["status"] == 404 for line in journal)


def test_a_stopped_rerun_keeps_the_results_an_earlier_run_wrote(yorn: Path, lmu_root: Path, tmp_path: Path):
    def half(request: Recorded) -> Reply:  # answers the even rows, fails the odd ones for good
        return chat_reply("Yes") if row_of(request) % 2 == 0 else Reply(500, {"error": {"message": "flaky"}})

    work = tmp_path / "out"
    with FaultServer(chat_only(half)) as server:
        assert run(server.base_url, work, lmu_root, "--retries", "0").returncode == 3
    results_path = work / "served" / "MyYN" / "results.json"
    earlier = results_path.read_bytes()
    with FaultServer(chat_only(lambda request: Reply(401, {"error": {"message": "bad key"}}))) as server:
        again = run(server.base_url, work, lmu_root)
    assert again.returncode == 4, again.stderr
    assert results_path.read_bytes() == earlier  # the partial result with its scores stays; the stop is on stderr


def test_a_max_tokens_refusal_names_the_flag_that_fixes_it(yorn: Path, lmu_root: Path, tmp_path: Path):
    def short_context(request: Recorded) -> Reply:
        asked = request.body.get("max_tokens")
        if asked is not None and asked > 512:
            return Reply(400, {"error": {"message": f"max_tokens={asked} cannot be greater than max_model_len=512"}})
        return chat_reply("Yes")

    with FaultServer(chat_only(short_context)) as server:
        result = run(server.base_url, tmp_path / "out", lmu_root, "--max-tokens", "1024")
        fixed = run(server.base_url, tmp_path / "out", lmu_root, "--max-tokens", "16")
    assert result.returncode == 4
    [line] = stderr_lines(result)
    assert "max_model_len=512" in line and "--max-tokens N" in line
    assert fixed.returncode == 0, fixed.stderr  # the flag it names does fix it


def test_a_refused_port_fails_in_one_line_without_retrying_every_row(yorn: Path, lmu_root: Path, tmp_path: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    result = run(f"http://127.0.0.1:{port}/v1", tmp_path / "out", lmu_root)
    assert result.returncode == 4
    [line] = stderr_lines(result)  # no retry warnings, no traceback
    assert line.startswith("vlmkit: error: served x MyYN: stopped") and f"127.0.0.1:{port}" in line
    assert "cannot reach" in line or "could not reach" in line
    assert_nothing_scored(tmp_path / "out")


def test_every_sample_failing_writes_no_score_and_says_so(yorn: Path, lmu_root: Path, tmp_path: Path):
    """A retryable failure on every row: the run goes to the end, but scores nothing (no 0 that reads as a score)."""
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda r: Reply(503, {"error": {"message": "overloaded"}}))) as server:
        result = run(server.base_url, work, lmu_root, "--retries", "0", "--limit", "10")
        asked = len(chat_requests(server.requests))
    assert result.returncode == 3, result.stderr
    assert asked == 10  # --retries 0: one attempt each
    assert_nothing_scored(work)
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["status"] == "failed" and results["scoring"] is None
    failed = results["errors_by_kind"]["http_5xx"]
    assert failed["count"] == 10 and failed["first_index"] == 0 and "overloaded" in failed["first_message"]
    table_row = next(line for line in result.stdout.splitlines() if line.startswith("served"))
    assert table_row.split()[2:4] == ["-", "10"]  # metric "-", no value, then n
    assert "10 sample(s) failed with http_5xx; first: row 0" in result.stdout


def test_some_failures_and_unreadable_answers_are_summarised_by_kind(yorn: Path, lmu_root: Path, tmp_path: Path):
    def mixed(request: Recorded) -> Reply:
        row = row_of(request)
        if row in (3, 7):
            return Reply(500, {"error": {"message": f"boom on {row}"}})
        return chat_reply("I cannot say." if row == 5 else "Yes")

    work = tmp_path / "out"
    with FaultServer(chat_only(mixed)) as server:
        result = run(server.base_url, work, lmu_root, "--retries", "0")
    assert result.returncode == 3, result.stderr
    assert "2 sample(s) failed with http_5xx; first: row 3: " in result.stdout and "boom on 3" in result.stdout
    assert "1 unparsed" in result.stdout and "first: row 5: 'I cannot say.'" in result.stdout
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["status"] == "partial" and results["errors_by_kind"]["http_5xx"]["count"] == 2
    unparsed = results["scoring_failures"]["unparsed"]
    assert (unparsed["count"], unparsed["first_index"], unparsed["first_prediction"]) == (1, 5, "I cannot say.")
    assert [p.name for p in (work / "served").glob("*.csv")] == ["served_MyYN_score.csv"]  # 18 answers scored


def test_timeout_and_retries_reach_the_model(yorn: Path, lmu_root: Path, tmp_path: Path):
    def slow_row_4(request: Recorded) -> Reply:
        return Reply(200, {"choices": []}, delay=5) if row_of(request) == 4 else answer_yes(request)

    work = tmp_path / "out"
    with FaultServer(chat_only(slow_row_4)) as server:
        result = run(server.base_url, work, lmu_root, "--timeout", "0.5", "--retries", "0", "--limit", "6")
        asked_row_4 = sum(row_of(r) == 4 for r in chat_requests(server.requests))
    assert result.returncode == 3, result.stderr
    assert asked_row_4 == 1  # one attempt, given up after 0.5 s
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["model"]["settings"]["timeout"] == 0.5 and results["model"]["settings"]["retries"] == 0
    assert results["errors_by_kind"]["timeout"]["first_index"] == 4


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--api-base", "127.0.0.1:8000"], "--api-base '127.0.0.1:8000'"),
        (["--api-base", "http://127.0.0.1:9/v1", "--retries", "-1"], "--retries"),
        (["--api-base", "http://127.0.0.1:9/v1", "--timeout", "0"], "--timeout"),
        (["--api-base", "http://127.0.0.1:9/v1", "--limit", "0"], "--limit"),
        (["--api-base", "http://127.0.0.1:9/v1", "--nproc", "0"], "--nproc"),
    ],
)
def test_bad_settings_are_one_line(args: list[str], says: str, yorn: Path, lmu_root: Path, tmp_path: Path):
    result = vlmkit_cli("run", "--data", "MyYN", "--model", "served", "--work-dir", str(tmp_path / "out"), *args,
                        env={"LMUData": str(lmu_root)})
    assert result.returncode == 2
    [line] = stderr_lines(result)
    assert line.startswith("vlmkit: error: ") and says in line and "Traceback" not in result.stderr


def test_timeout_and_retries_from_the_config_file_are_checked(yorn: Path, lmu_root: Path, tmp_path: Path):
    config = tmp_path / "run.yaml"
    config.write_text("data: [MyYN]\nmodel: [served]\noptions: {api_base: 'http://127.0.0.1:9/v1', retries: 1.5}\n")
    result = vlmkit_cli("run", "--config", str(config), env={"LMUData": str(lmu_root)})
    assert result.returncode == 2 and "options.retries: expected a whole number, got 1.5" in result.stderr
    assert len(stderr_lines(result)) == 1


def test_an_empty_dataset_is_an_error_not_a_success(lmu_root: Path, tmp_path: Path):
    (lmu_root / "Empty.tsv").write_text("index\timage\tquestion\tanswer\n")
    empty_csv = tmp_path / "empty.csv"
    empty_csv.write_text("question,A,B,answer\n")
    with FaultServer(chat_only(answer_yes)) as server:
        tsv = vlmkit_cli("run", "--data", "Empty", "--model", "served", "--api-base", server.base_url,
                         "--work-dir", str(tmp_path / "out"), env={"LMUData": str(lmu_root)})
        csv = vlmkit_cli("run", "--custom-dataset-path", str(empty_csv), "--model", "served", "--api-base",
                         server.base_url, "--work-dir", str(tmp_path / "out"), env={"LMUData": str(lmu_root)})
        asked = len(chat_requests(server.requests) + probes(server.requests))
    for result, name in ((tsv, "Empty.tsv"), (csv, "empty.csv")):
        assert result.returncode == 2, result.stderr
        [line] = stderr_lines(result)
        assert line.startswith("vlmkit: error: ") and name in line
    assert asked == 0 and not (tmp_path / "out").exists()


def test_exit_codes_are_documented_in_the_help():
    result = vlmkit_cli("run", "--help")
    for code in ("0", "2", "3", "4", "130"):
        assert any(line.split()[:1] == [code] for line in result.stdout.splitlines()), code


def test_only_the_same_unfixable_failure_on_every_first_sample_stops_a_run():
    from vlmkit.run.failures import FirstFailures

    def error(status, kind="http_4xx"):
        return {"error": {"kind": kind, "status": status, "message": f"HTTP {status}: no"}}

    ok = {"error": None}
    same = FirstFailures(20)
    assert [same.check(error(404)) for _ in range(7)] == [None] * 7
    assert "HTTP 404" in same.check(error(404)) and same.check(error(404)) is None  # said once, after 8
    mixed = FirstFailures(20)
    assert [mixed.check(error(s)) for s in (400, 404) * 4] == [None] * 8
    one_answer = FirstFailures(20)
    assert [one_answer.check(r) for r in [ok] + [error(401)] * 9] == [None] * 10
    retryable = FirstFailures(20)
    assert [retryable.check(error(503, "http_5xx")) for _ in range(8)] == [None] * 8
    small = FirstFailures(3)  # a 3-row dataset decides after 3
    assert [small.check(error(422)) for _ in range(3)][-1] is not None
    unreachable = FirstFailures(20)
    assert "could not reach" in [unreachable.check(error(None, "connection")) for _ in range(8)][-1]
