"""No API key reaches a file or the console, whichever way it was given: --api-key, the abbreviation argparse
accepts (--api-k), $OPENAI_API_KEY, or pasted into another argument (the --api-base query). The mock server only
answers a request carrying the key (so the key really was used), and echoes a wrong key in its 401 message."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from vlmkit.perf.cli import main


def _argv(mock, data: Path, out: Path, api_base: str | None = None) -> list[str]:
    return ["perf", "--model", "m", "--api-base", api_base or mock.base_url, "--data", str(data), "--out", str(out),
            "--concurrency", "2", "--no-plots"]


def _written(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in folder.rglob("*") if p.is_file()]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join('{"question": "q %d", "answer": "a"}\n' % i for i in range(4)))
    return path


@pytest.mark.parametrize("way", ["--api-key", "--api-k", "--api-key=", "env", "env+workers", "pasted"])
def test_the_key_reaches_no_file_and_no_output(way: str, mock_server, data: Path, tmp_path: Path, monkeypatch,
                                               capfd, caplog) -> None:
    key = f"sk-vlmkit-perf-{way.strip('-=+')}-7f3a9c1e5b"
    mock = mock_server("--require-key", key, "--tokens", "2")
    out = tmp_path / "out"
    argv = _argv(mock, data, out)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if way in ("--api-key", "--api-k"):
        argv += [way, key]
    elif way == "--api-key=":
        argv += [f"--api-key={key}"]
    elif way.startswith("env"):
        monkeypatch.setenv("OPENAI_API_KEY", key)
        argv += ["--workers", "2"] if way == "env+workers" else []
    else:  # the key given as a flag and pasted into the URL's query too
        argv = _argv(mock, data, out, api_base=f"{mock.base_url}?key={key}") + ["--api-key", key]
    monkeypatch.setattr(sys, "argv", ["vlmkit", *argv])
    caplog.set_level(logging.DEBUG)
    code = main(argv)
    captured = capfd.readouterr()
    assert code == 0, captured.err
    assert len(mock.bodies()) == 1 + 4  # the probe and 4 requests, each accepted with the key
    files = _written(out)
    assert files and all(key.encode() not in blob for blob in files)
    for text in (captured.out, captured.err, caplog.text):
        assert key not in text
    summary = json.loads((out / "perf_summary.json").read_text())
    if not way.startswith("env"):  # the argv masked, not dropped
        assert summary["argv"][-2:] in ([way, "***"], ["--api-key", "***"]) or summary["argv"][-1] == "--api-key=***"
    if way == "pasted":
        assert summary["target"]["url"].endswith("/chat/completions?key=***")
        assert summary["options"]["api_base"].endswith("?key=***") and summary["argv"][5].endswith("?key=***")


def test_a_wrong_key_echoed_by_the_server_is_masked(mock_server, data: Path, tmp_path: Path, monkeypatch, capfd) -> None:
    mock = mock_server("--require-key", "sk-the-right-one-0123")
    wrong = "sk-wrong-key-9876543210"
    argv = _argv(mock, data, tmp_path / "out") + ["--api-k", wrong]
    monkeypatch.setattr(sys, "argv", ["vlmkit", *argv])
    code = main(argv)
    err = capfd.readouterr().err
    assert code == 2
    assert "HTTP 401" in err and "Incorrect API key provided: ***" in err and "check --api-key" in err
    assert wrong not in err


def test_a_key_with_white_space_around_it_is_masked_as_sent(mock_server, data: Path, tmp_path: Path, monkeypatch,
                                                            capfd) -> None:
    """A key read from a file keeps its newline; the header carries it stripped, and a server echoing what it got
    (here a wrong key) is masked in that form too."""
    mock = mock_server("--require-key", "sk-the-right-one-0123")
    wrong = "sk-wrong-key-with-newline-24680"
    monkeypatch.setenv("OPENAI_API_KEY", f"{wrong}\n")
    argv = _argv(mock, data, tmp_path / "out")
    monkeypatch.setattr(sys, "argv", ["vlmkit", *argv])
    code = main(argv)
    err = capfd.readouterr().err
    assert code == 2
    assert "HTTP 401" in err and "Incorrect API key provided: ***" in err
    assert wrong not in err
