"""vlmkit.run.likelihood.run_served: the letter mode on a served model, over real HTTP to a FaultServer answering in
OpenAI's logprobs shape (issue 28). The chosen letters and figures are worked by hand from the replies the server is
given; the journal is the real one."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_body, models_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run import likelihood
from vlmkit.run.failures import RunStopped
from vlmkit.run.inference import Task
from vlmkit.run.journal import Journal


def _reply(top: list[tuple[str, float]]) -> dict[str, Any]:
    body = chat_body(top[0][0])
    body["choices"][0]["logprobs"] = {"content": [{
        "token": top[0][0], "logprob": top[0][1],
        "top_logprobs": [{"token": t, "logprob": v} for t, v in top]}]}
    return body


# question -> the server's top list for its first token
TOPS = {
    "q0": [("B", -0.3), (" A", -1.5), ("A", -2.5), ("Hello", -3.0)],  # A: -1.5 + ln(1 + e^-1) = -1.186738
    "q1": [(" C", -0.2), ("A", -2.0)],  # B missing: -inf, recorded as null
    "q2": [("No", -0.4), ("Yes", -1.1)],
    "q3": [("The", -0.1), ("It", -2.0)],  # no option listed: the row fails alone
}


def _responder(request: Recorded) -> Reply:
    if request.method == "GET":
        return models_reply("m")
    question = request.body["messages"][-1]["content"]
    question = question if isinstance(question, str) else " ".join(p.get("text", "") for p in question)
    return Reply(200, _reply(TOPS[question.strip()]))


def _tasks() -> list[Task]:
    return [Task(index=0, msgs=["q0"], target="A", choices={"A": "red", "B": "blue"}),
            Task(index=1, msgs=["q1"], target="C", choices={"A": "x", "B": "y", "C": "z"}),
            Task(index=2, msgs=["q2"], target="No", choices={"Yes": "Yes", "No": "No"}),
            Task(index=3, msgs=["q3"], target="A", choices={"A": "a", "B": "b"})]


def _journalled(path: Path) -> dict[int, dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["index"]: r for r in lines if "index" in r}


def test_each_row_is_asked_once_and_answered_by_its_argmax_letter(tmp_path: Path) -> None:
    with FaultServer(_responder) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        try:
            with Journal(tmp_path / "journal.jsonl", {"model": "m"}) as journal:
                errors = likelihood.run_served(model, _tasks(), journal, dataset="demo", nproc=2, desc="served",
                                               progress=False)
        finally:
            model.close()
    chats = [r for r in server.requests if r.method == "POST"]
    assert len(chats) == 4  # the first row, asked alone first, is not asked again
    assert errors == 1
    got = _journalled(tmp_path / "journal.jsonl")
    assert got[0]["prediction"] == "B"
    assert got[0]["extra"]["likelihood"]["logprobs"] == {"B": pytest.approx(-0.3), "A": pytest.approx(-1.186738,
                                                                                                         abs=1e-6)}
    assert got[1]["prediction"] == "C" and got[1]["extra"]["likelihood"]["logprobs"]["B"] is None
    assert got[1]["extra"]["likelihood"]["missing"] == ["B"] and got[1]["extra"]["likelihood"]["floor"] == -2.0
    assert got[2]["prediction"] == "No"
    assert got[0]["usage"] == {"input_tokens": 11, "output_tokens": 3, "reasoning_tokens": 0}  # the server's usage
    assert got[3]["prediction"] is None and got[3]["error"]["kind"] == "no_option_listed"


def test_a_server_without_logprobs_stops_after_the_first_row(tmp_path: Path) -> None:
    plain = Reply(200, chat_body("B"))
    with FaultServer(lambda r: models_reply("m") if r.method == "GET" else plain) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        try:
            with Journal(tmp_path / "journal.jsonl", {"model": "m"}) as journal:
                with pytest.raises(RunStopped) as stopped:
                    likelihood.run_served(model, _tasks(), journal, dataset="demo", nproc=4, desc="served",
                                          progress=False)
        finally:
            model.close()
    assert len([r for r in server.requests if r.method == "POST"]) == 1
    message = str(stopped.value)
    assert "\n" not in message and "no log-probabilities" in message and "--mcq-mode generate" in message
    assert _journalled(tmp_path / "journal.jsonl") == {}  # nothing answered, nothing journalled


def test_served_extra_keeps_null_for_a_missing_letter() -> None:
    from vlm.api.letter_logprobs import LetterLogprobs

    scored = LetterLogprobs({"A": -0.1, "B": -math.inf}, ("B",), -4.0, "A", 20)
    extra = likelihood.served_extra({"A": "x", "B": "y"}, scored)
    assert extra["logprobs"] == {"A": -0.1, "B": None} and extra["missing"] == ["B"]
    json.dumps(extra, allow_nan=False)  # strict JSON: no -Infinity in a journal line


def test_a_refusal_every_row_would_meet_stops_after_the_first_row(tmp_path: Path) -> None:
    wrong = Reply(404, {"error": {"message": "The model `m` does not exist.", "type": "NotFoundError"}})
    with FaultServer(lambda r: models_reply("other") if r.method == "GET" else wrong) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        try:
            with Journal(tmp_path / "journal.jsonl", {"model": "m"}) as journal:
                with pytest.raises(RunStopped, match="does not exist"):
                    likelihood.run_served(model, _tasks(), journal, dataset="demo", nproc=4, desc="served",
                                          progress=False)
        finally:
            model.close()
    assert len([r for r in server.requests if r.method == "POST"]) == 1


def test_the_summary_counts_rows_with_an_option_outside_the_top_list() -> None:
    records = {"1": {"error": None, "extra": {"likelihood": {"mode": "logits", "logprobs": {"A": -1.0, "B": None},
                                                              "missing": ["B"]}}},
               "2": {"error": None, "extra": {"likelihood": {"mode": "logits", "logprobs": {"A": -1.0, "B": -2.0},
                                                              "missing": []}}},
               "3": {"error": {"kind": "no_option_listed"}, "extra": None}}
    assert likelihood.likelihood_summary("logits", records, ["1", "2", "3"], ["A", "A", "B"]) == \
        {"mode": "logits", "rows_with_unlisted_options": 1}
    assert likelihood.likelihood_summary("logits", {}, ["1"], ["A"]) == {"mode": "logits"}  # local runs: the mode
