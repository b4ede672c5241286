"""No API key reaches a file or a log line, whichever way it was given (flag, $OPENAI_API_KEY, config file), on the
success path and on the error paths (a server that refuses the key and echoes the header back)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from tests.support.run_helpers import answer_yes, chat_only, chat_requests, files_holding, probes, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply
from vlmkit.cli.main import main


def echo_refusal(request: Recorded) -> Reply:
    """401 whose body quotes the Authorization header it received, as some proxies do."""
    return Reply(401, {"error": {"message": f"invalid key: {request.headers.get('Authorization')}"}})


def run_cli(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    monkeypatch.setattr(sys, "argv", ["vlmkit", *argv])  # results.json records sys.argv
    return main(argv)


@pytest.mark.parametrize("way", ["flag", "env", "config"])
def test_no_key_in_any_file_or_log(way: str, lmu_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture) -> None:
    key = f"sk-unique-{way}-7f3a9c01d2"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=20)
    caplog.set_level(logging.INFO)
    codes = []
    servers = {"ok": chat_only(answer_yes), "chat_refused": chat_only(echo_refusal), "probe_refused": echo_refusal}
    for name, responder in servers.items():
        with FaultServer(responder) as server:
            work = tmp_path / f"out-{name}"
            argv = ["run", "--data", "MyYN", "--model", "served", "--work-dir", str(work), "--nproc", "2"]
            if way == "flag":
                argv += ["--api-key", key, "--api-base", server.base_url]
            elif way == "env":
                monkeypatch.setenv("OPENAI_API_KEY", key)
                argv += ["--api-base", server.base_url]
            else:
                config = tmp_path / f"run-{name}.yaml"
                config.write_text(f"options: {{api_key: '{key}', api_base: '{server.base_url}'}}\n")
                argv += ["--config", str(config)]
            codes.append(run_cli(monkeypatch, argv))
            ours = chat_requests(server.requests) + probes(server.requests)
            assert ours, name
            assert all(r.headers.get("Authorization") == f"Bearer {key}" for r in ours)
    assert codes == [0, 4, 4]  # done; stopped by the first samples' 401; stopped by the probe's 401

    out, err = capsys.readouterr()
    assert "HTTP 401" in err and "***" in err  # the refusal is quoted, the echoed key masked
    assert key not in out and key not in err
    assert key not in caplog.text and all(key not in r.getMessage() for r in caplog.records)
    written = [p for p in files_holding(key, tmp_path, lmu_root) if not p.name.startswith("run-")]
    assert written == []  # only the user's own config file holds it

    ok = json.loads((tmp_path / "out-ok" / "served" / "MyYN" / "results.json").read_text())
    assert ok["status"] == "success" and ok["counts"]["completed"] == 20
    if way == "flag":
        assert ok["argv"][ok["argv"].index("--api-key") + 1] == "***"
    journal = tmp_path / "out-chat_refused" / "served" / "MyYN" / "journal.jsonl"
    refused = [json.loads(line) for line in journal.open()]
    assert 8 <= len(refused) - 1 <= 10 and all(r["error"]["status"] == 401 for r in refused[1:])  # stopped early
