"""The `perf` subcommand: bad input gives one clear line and exit code 2; Ctrl-C keeps the figures so far."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.vlmkit.perf.conftest import ROOT, ListDataset
from vlmkit.perf import PerfOptions, run_perf
from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfInputError


@pytest.fixture
def tsv(tmp_path: Path) -> tuple[Path, Path]:
    """(LMUData root, a small VQA TSV with images)."""
    root = tmp_path / "LMUData"
    rows = [{"index": i, "image": b64(image_bytes(c)), "question": f"What colour is it? {i}", "answer": c}
            for i, c in enumerate(["red", "green", "blue", "white"])]
    return root, write_tsv(root / "colours.tsv", rows)


def _run(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def _one_line_error(err: str, *needles: str) -> None:
    """Exactly one error line (a dataset's progress bar may precede it), and no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("vlmkit perf: error: ")]
    assert len(lines) == 1 and err.rstrip("\n").endswith(lines[0]), err
    for needle in needles:
        assert needle in lines[0], lines[0]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _base(tsv: tuple[Path, Path], api_base: str, tmp_path: Path) -> list[str]:
    root, path = tsv
    return ["perf", "--model", "m", "--api-base", api_base, "--data", str(path), "--lmudata", str(root),
            "--out", str(tmp_path / "out"), "--no-plots"]


def test_unreachable_server_is_one_line(tsv, tmp_path: Path, capsys) -> None:
    code, err = _run(_base(tsv, f"http://127.0.0.1:{_free_port()}/v1", tmp_path), capsys)
    assert code == 2
    _one_line_error(err, "cannot reach http://127.0.0.1:")
    assert not (tmp_path / "out" / "perf_summary.json").exists()


def test_not_an_openai_endpoint(tsv, tmp_path: Path, capsys, mock_server) -> None:
    mock = mock_server()
    root = mock.base_url.rsplit("/v1", 1)[0]
    code, err = _run(_base(tsv, f"{root}/nothing-here", tmp_path), capsys)
    assert code == 2
    _one_line_error(err, "HTTP 404", "not an OpenAI-compatible chat-completions endpoint")


def test_a_server_that_does_not_stream(tsv, tmp_path: Path, capsys, mock_server) -> None:
    mock = mock_server("--no-stream")
    code, err = _run(_base(tsv, mock.base_url, tmp_path), capsys)
    assert code == 2
    _one_line_error(err, "not an OpenAI-compatible streaming endpoint")


@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--request-rate", "0"], "--request-rate must be a number > 0"),
        (["--request-rate", "-2"], "--request-rate must be a number > 0"),
        (["--concurrency", "0"], "--concurrency must be an integer > 0"),
        (["--request-rate", "5", "--burstiness", "-1"], "--burstiness"),
        (["--num-requests", "-3"], "--num-requests"),
        (["--slo", "latency:5"], "unknown SLO name 'latency'"),
        (["--slo", "ttft:fast"], "not a number"),
        (["--max-concurrency", "4"], "--max-concurrency caps the open loop"),
    ],
)
def test_bad_values_are_one_line(tsv, tmp_path: Path, capsys, flags, needle) -> None:
    code, err = _run(_base(tsv, "http://127.0.0.1:9/v1", tmp_path) + flags, capsys)
    assert code == 2
    _one_line_error(err, needle)


@pytest.mark.parametrize(
    "api_base, needle",
    [
        ("127.0.0.1:8000", "--api-base '127.0.0.1:8000' is not an http(s) URL; write http://127.0.0.1:8000/v1"),
        ("ftp://127.0.0.1:8000/v1", "is not an http(s) URL"),
        ("http://user:s3cret-pw@127.0.0.1:9/v1", "--api-base must not hold credentials"),
    ],
)
def test_a_base_url_the_api_model_refuses_is_one_line(tsv, tmp_path: Path, capsys, api_base: str, needle: str) -> None:
    code, err = _run(_base(tsv, api_base, tmp_path), capsys)
    assert code == 2
    _one_line_error(err, needle)
    assert "s3cret-pw" not in err and not (tmp_path / "out").exists()


def test_a_dataset_with_no_rows(tmp_path: Path, capsys, mock_server) -> None:
    mock = mock_server()
    with pytest.raises(PerfInputError, match="no rows"):
        run_perf(ListDataset([]), PerfOptions(model="m", api_base=mock.base_url, out_dir=tmp_path / "o", quiet=True))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, err = _run(["perf", "--model", "m", "--api-base", mock.base_url, "--data", str(empty), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    _one_line_error(err, "empty.jsonl")


def test_unknown_dataset_name(tmp_path: Path, capsys, mock_server) -> None:
    code, err = _run(["perf", "--model", "m", "--api-base", "http://127.0.0.1:9/v1", "--data", "NoSuchBench",
                      "--lmudata", str(tmp_path)], capsys)
    assert code == 2
    _one_line_error(err, "NoSuchBench")


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_writes_the_figures_so_far(tsv, tmp_path: Path, mock_server, workers: int) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "50", "--tokens", "8")  # about 0.4 s a request
    out = tmp_path / "out"
    argv = _base(tsv, mock.base_url, tmp_path) + ["--concurrency", "2", "--num-requests", "60", "--workers", str(workers)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "vlmkit.perf.cli", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(mock.bodies()) < 1 + 6 and time.monotonic() < deadline:  # the probe, then a few requests
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "cut short" in stderr and "Traceback" not in stderr
    summary = json.loads((out / "perf_summary.json").read_text())
    assert summary["interrupted"] is True and summary["status"] == "interrupted"
    assert any("cut short" in note for note in summary["notes"])
    level = summary["levels"][0]
    assert level["interrupted"] is True
    assert 2 <= level["requests"]["successful"] < 60
    assert level["requests"]["cancelled"] >= 1  # the ones in flight at Ctrl-C, in no figure
    assert level["ttft_ms"]["n"] == level["requests"]["successful"]
    lines = (out / "perf_requests.jsonl").read_text().splitlines()
    assert len(lines) == level["requests"]["measured"] + level["requests"]["cancelled"]
    assert (out / "perf_summary.csv").read_text().count("\n") == 2


def test_the_api_key_is_sent_and_never_written(tsv, tmp_path: Path, capsys, mock_server, monkeypatch) -> None:
    secret = "sk-perf-test-0123456789"
    mock = mock_server("--require-key", secret, "--tokens", "2")
    code, err = _run(_base(tsv, mock.base_url, tmp_path) + ["--api-key", "wrong-key"], capsys)
    assert code == 2
    _one_line_error(err, "HTTP 401", "check --api-key")
    argv = _base(tsv, mock.base_url, tmp_path) + ["--api-key", secret]
    monkeypatch.setattr(sys, "argv", ["vlmkit", *argv])
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads((tmp_path / "out" / "perf_summary.json").read_text())
    assert summary["levels"][0]["requests"]["successful"] == 4
    assert "***" in summary["argv"]
    written = [p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert all(secret not in text for text in written + [captured.out, captured.err])


def test_system_prompt_reaches_every_measured_body(tsv: tuple[Path, Path], mock_server, tmp_path: Path, capsys) -> None:
    root, path = tsv
    mock = mock_server("--tokens", "2")
    code, err = _run(["perf", "--model", "m", "--api-base", mock.base_url, "--data", str(path), "--lmudata", str(root),
                      "--num-requests", "4", "--system-prompt", "Be brief.", "--out", str(tmp_path / "o"),
                      "--no-plots"], capsys)
    assert code == 0, err
    measured = [b for b in mock.bodies() if b.get("stream")][-4:]
    assert [b["messages"][0] for b in measured] == [{"role": "system", "content": "Be brief."}] * 4
    summary = json.loads((tmp_path / "o" / "perf_summary.json").read_text())
    assert summary["options"]["system_prompt"] == "Be brief."
