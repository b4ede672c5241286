"""`vlmkit run --mcq-mode logits` on a served model through the CLI (issue 28): a FaultServer answering in OpenAI's
logprobs shape, the demo MCQ and Y/N sets; predictions are the argmax of the figures the server is given (worked by
hand), and a server that gives no logprobs stops the pair in one line after one request. Needs runner.py's
`likelihood.run_served` branch (issue 28's runner change)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.run_helpers import stderr_lines, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_body, models_reply

LIMIT = 6
MCQ_TOP = [("B", -0.2), (" A", -1.9), ("(C", -3.0), ("The", -3.5)]  # D outside the list
YORN_TOP = [("No", -0.1), (" Yes", -2.4)]


def _responder(request: Recorded) -> Reply:
    if request.method == "GET":
        return models_reply("served")
    text = json.dumps(request.body["messages"])
    top = YORN_TOP if "Yes or No" in text or "yes or no" in text.casefold() else MCQ_TOP
    body = chat_body(top[0][0])
    body["choices"][0]["logprobs"] = {"content": [{"token": top[0][0], "logprob": top[0][1], "top_logprobs": [
        {"token": t, "logprob": v} for t, v in top]}]}
    return Reply(200, body)


def _run(server: FaultServer, tmp_path: Path, dataset: str) -> Any:
    return vlmkit_cli("run", "--data", dataset, "--limit", str(LIMIT), "--model", "served", "--api-base",
                      server.base_url, "--work-dir", str(tmp_path / "out"), "--mcq-mode", "logits",
                      env={"LMUData": str(tmp_path / "lmu")})


def test_served_letters_are_the_argmax_of_the_servers_figures(tmp_path: Path) -> None:
    with FaultServer(_responder) as server:
        mcq = _run(server, tmp_path, "vlmkit_demo_mcq")
        asked = [r for r in server.requests if r.method == "POST"]
    assert mcq.returncode == 0, mcq.stderr[-2000:]
    assert len(asked) == LIMIT  # the first row, asked alone first, is not asked again
    assert all(r.body["max_tokens"] == 1 and r.body["logprobs"] is True and r.body["top_logprobs"] == 20
               for r in asked)
    folder = tmp_path / "out" / "served" / "vlmkit_demo_mcq"
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert [r["prediction"] for r in records] == ["B"] * LIMIT
    found = records[0]["extra"]["likelihood"]
    assert found["logprobs"] == {"A": -1.9, "B": -0.2, "C": -3.0, "D": None} and found["missing"] == ["D"]
    summary = json.loads((folder / "results.json").read_text())["scoring"]["likelihood"]
    assert summary == {"mode": "logits", "rows_with_unlisted_options": LIMIT}


def test_a_server_without_logprobs_stops_in_one_line(tmp_path: Path) -> None:
    plain = Reply(200, chat_body("B"))
    with FaultServer(lambda r: models_reply("served") if r.method == "GET" else plain) as server:
        result = _run(server, tmp_path, "vlmkit_demo_mcq")
        asked = [r for r in server.requests if r.method == "POST"]
    assert result.returncode != 0 and len(asked) == 1
    said = [line for line in stderr_lines(result) if "log-probabilities" in line]
    assert len(said) == 1 and "--mcq-mode generate" in said[0], result.stderr
