"""`--prefix-share`/`--prefix-tokens` and `--metrics-url` against the mock server playing a prefix cache and a
Prometheus /metrics: which rows share, what the bodies carry, the two groups apart, and the server's own hit rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlmkit.perf.cli import main
from vlmkit.perf.prefix import shared_rows


def _run(mock, tmp_path: Path, *extra: str) -> tuple[int, dict, list[dict]]:
    out = tmp_path / "out"
    plots = [] if "--plots" in extra else ["--no-plots"]
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--out", str(out), *plots,
                 "--max-tokens", "2", *[x for x in extra if x != "--plots"]])
    if code:
        return code, {}, []
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    return code, json.loads((out / "perf_summary.json").read_text()), lines


def test_shared_rows_are_the_fraction_asked() -> None:
    assert len(shared_rows(40, 0.25, 0)) == 10 and shared_rows(40, 0.25, 0) == shared_rows(40, 0.25, 0)
    assert shared_rows(40, 0.25, 0) != shared_rows(40, 0.25, 1)
    assert shared_rows(7, 0.0, 0) == set() and shared_rows(7, 1.0, 0) == set(range(7))


def test_shared_and_unique_prefixes(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2", "--prefix-cache")
    code, summary, lines = _run(mock, tmp_path, "--prefix-share", "0.5", "--prefix-tokens", "200",
                                "--num-requests", "8", "--warmup", "1")
    assert code == 0
    bodies = [b for b in mock.bodies() if b["messages"][-1]["content"] != "Hi"]
    texts = [json.dumps(b["messages"]) for b in bodies]
    first_words = [t.split("Request")[0] for t in texts]  # the prefix, before the row's own text
    counts = {p: first_words.count(p) for p in first_words}
    # 9 rows (1 warm-up + 8): round(0.5 * 9) = 4 (banker's rounding of 4.5) share one prefix, 5 have their own
    assert sorted(counts.values()) == [1, 1, 1, 1, 1, 4]
    assert len({len(p.split()) for p in first_words}) == 1  # every prefix as long as the others
    by_line = {line["n"]: line["shared_prefix"] for line in lines}
    assert sum(by_line.values()) == 4
    block = summary["levels"][0]["prefix"]
    measured_shared = sum(v for n, v in by_line.items() if n >= 1)
    assert block["shared"]["requests"] == measured_shared and block["unique"]["requests"] == 8 - measured_shared
    assert "server_hit_rate" not in block  # no --metrics-url


def test_the_servers_hit_rate_beside_the_clients(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2", "--prefix-cache", "--itl-ms", "20")
    metrics = mock.base_url.rsplit("/v1", 1)[0] + "/metrics"
    code, summary, _ = _run(mock, tmp_path, "--prefix-share", "1", "--prefix-tokens", "300", "--num-requests", "6",
                            "--metrics-url", metrics, "--metrics-interval", "0.05", "--concurrency", "1", "--plots")
    assert code == 0
    assert (tmp_path / "out" / "plots" / "server_c_1.png").is_file()
    level = summary["levels"][0]
    server = level["server_metrics"]
    assert server["samples"] >= 2  # the baseline before the level and the last after it, at least
    # every body shares the prefix: the mock's hits are every whole 64-byte block of each body's common start,
    # after the first: so the rate is well above zero and below one (each body's own tail is a miss)
    assert 0.3 < server["prefix_cache_hit_rate"] < 1
    assert level["prefix"]["server_hit_rate"] == server["prefix_cache_hit_rate"]
    assert server["increase"]["prefix_cache_queries"] > 0
    assert set(server["gauges"]) == {"running", "waiting", "kv_cache_usage"}
    assert server["gauges"]["running"]["max"] <= 1  # one request at a time


def test_an_unreadable_metrics_url_is_a_warning(mock_server, tmp_path: Path, capsys) -> None:
    mock = mock_server("--tokens", "2")
    wrong = mock.base_url.rsplit("/v1", 1)[0] + "/nothing"
    code, summary, _ = _run(mock, tmp_path, "--synthetic-image", "8x8", "--num-requests", "2",
                            "--metrics-url", wrong, "--metrics-interval", "0.05")
    assert code == 0
    level = summary["levels"][0]
    assert level["server_metrics"]["samples"] == 0
    assert any("could not be read (HTTPError: HTTP Error 404" in w for w in level["warnings"]), level["warnings"]
    assert "could not be read" in capsys.readouterr().err


@pytest.mark.parametrize("extra, needle", [
    (("--prefix-share", "0.5"), "go together"), (("--prefix-share", "2", "--prefix-tokens", "5"), "fraction 0..1"),
    (("--prefix-share", "0.5", "--prefix-tokens", "0"), "--prefix-tokens must be"),
    (("--prefix-share", "0.5", "--prefix-tokens", "5", "--metrics-url", "ftp://x"), "--metrics-url must be"),
])
def test_bad_prefix_flags_are_one_line(mock_server, tmp_path: Path, capsys, extra: tuple, needle: str) -> None:
    mock = mock_server()
    assert _run(mock, tmp_path, *extra)[0] == 2
    assert needle in capsys.readouterr().err


def test_prefix_share_with_a_source_that_has_its_own_prefixes(mock_server, tmp_path: Path, capsys) -> None:
    mock = mock_server()
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps({"timestamp": 0, "input_length": 4, "output_length": 1}) + "\n")
    assert _run(mock, tmp_path, "--trace", str(trace), "--prefix-share", "0.5", "--prefix-tokens", "8")[0] == 2
    assert "hash_ids say which prefixes are shared" in capsys.readouterr().err
