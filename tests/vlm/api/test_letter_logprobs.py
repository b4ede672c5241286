"""vlm.api.letter_logprobs: option letters read from a server's top_logprobs (issue 28).

Reading is checked on reply bodies written here with figures worked by hand; asking goes over real HTTP to a FaultServer
that answers in OpenAI's logprobs shape (the shape vLLM and SGLang follow), and to `transformers serve` (5.x), which
ignores `logprobs` and so is the real server that gives none."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_body, models_reply
from vlm.api.letter_logprobs import (
    NO_LOGPROBS, NO_OPTION_LISTED, ask_letters, ask_letters_batch, letter_params, read_letter_logprobs, token_option,
)
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.model_calls import ModelCallError


def logprobs_field(first: str, top: list[tuple[str, float]]) -> dict[str, Any]:
    """A choice's `logprobs` as OpenAI gives it: the written token and its top alternatives."""
    figure = dict(top).get(first, top[0][1])
    return {"content": [{"token": first, "logprob": figure, "bytes": list(first.encode()),
                         "top_logprobs": [{"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top]}]}


TOP = [("A", -0.5), ("The", -0.9), (" B", -1.2), ("B", -2.0), ("(C", -3.0)]


def test_tokens_are_read_as_options_without_leading_space_or_parenthesis() -> None:
    assert [token_option(t) for t in ("A", " A", "(A", " (A", "\u0120B", "\u2581Yes", "a", " yes")] == \
        ["A", "A", "A", "A", "B", "Yes", "a", "yes"]


def test_figures_worked_by_hand() -> None:
    got = read_letter_logprobs(logprobs_field("A", TOP), ["A", "B", "C", "D"])
    assert got.logprobs["A"] == pytest.approx(-0.5)
    # " B" and "B" both write B: log(e^-1.2 + e^-2.0) = -1.2 + ln(1 + e^-0.8) = -1.2 + 0.371101
    assert got.logprobs["B"] == pytest.approx(-0.828899, abs=1e-6)
    assert got.logprobs["C"] == pytest.approx(-3.0)
    assert got.logprobs["D"] == -math.inf and got.missing == ("D",)
    assert got.floor == pytest.approx(-3.0) and got.first_token == "A" and got.listed == 5


def test_case_is_kept_and_a_reply_naming_no_option_fails() -> None:
    got = read_letter_logprobs(logprobs_field("yes", [("yes", -0.1), ("No", -2.5)]), ["Yes", "No"])
    assert got.logprobs["No"] == pytest.approx(-2.5) and got.logprobs["Yes"] == -math.inf  # "yes" is not "Yes"
    with pytest.raises(ModelCallError) as caught:
        read_letter_logprobs(logprobs_field("The", [("The", -0.1), ("It", -1.0)]), ["A", "B"])
    assert caught.value.kind == NO_OPTION_LISTED and "'The'" in str(caught.value)


@pytest.mark.parametrize("field", [None, {}, {"content": []}, {"content": [{"token": "A", "logprob": -0.1}]},
                                   {"content": [{"token": "A", "logprob": -0.1, "top_logprobs": []}]}])
def test_a_field_without_top_logprobs_is_no_logprobs(field: Any) -> None:
    with pytest.raises(ModelCallError) as caught:
        read_letter_logprobs(field, ["A", "B"])
    assert caught.value.kind == NO_LOGPROBS and "\n" not in str(caught.value)


def _served(top_for: dict[str, list[tuple[str, float]]]) -> Any:
    """A responder: the model list, and for each chat request the top list of the question it carries."""

    def respond(request: Recorded) -> Reply:
        if request.method == "GET":
            return models_reply("served-model")
        text = request.body["messages"][-1]["content"]
        text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
        top = next(v for k, v in top_for.items() if k in text)
        body = chat_body(top[0][0])
        body["choices"][0]["logprobs"] = logprobs_field(top[0][0], top)
        return Reply(200, body)

    return respond


def test_asking_sends_one_token_with_top_logprobs_and_reads_the_reply() -> None:
    with FaultServer(_served({"q1": TOP, "q2": [("B", -0.2), ("A", -1.7)]})) as server:
        model = OpenAICompatModel("served-model", api_base=server.base_url, retries=0)
        try:
            got = ask_letters(model, ["q1"], ["A", "B", "C", "D"])
            both = ask_letters_batch(model, [["q1"], ["q2"]], [["A", "B"], ["A", "B"]], workers=2)
        finally:
            model.close()
    body = server.bodies()[0]
    assert {k: body[k] for k in ("max_tokens", "logprobs", "top_logprobs")} == letter_params() == \
        {"max_tokens": 1, "logprobs": True, "top_logprobs": 20}
    assert got.logprobs["B"] == pytest.approx(-0.828899, abs=1e-6) and got.missing == ("D",)
    assert both[0].logprobs == {"A": pytest.approx(-0.5), "B": pytest.approx(-0.828899, abs=1e-6)}
    assert both[1].logprobs == {"A": pytest.approx(-1.7), "B": pytest.approx(-0.2)}  # in the rows' order


def test_a_server_that_refuses_logprobs_with_400_is_no_logprobs() -> None:
    refusal = Reply(400, {"error": {"message": "logprobs is not supported for this model", "type": "invalid_request"}})
    with FaultServer(lambda r: models_reply("m") if r.method == "GET" else refusal) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        try:
            with pytest.raises(ModelCallError) as caught:
                ask_letters(model, ["q"], ["A", "B"])
        finally:
            model.close()
    assert caught.value.kind == NO_LOGPROBS and "HTTP 400" in str(caught.value)
    assert "--mcq-mode generate" in str(caught.value) and "\n" not in str(caught.value)


def test_a_plain_reply_without_logprobs_is_no_logprobs() -> None:
    with FaultServer(lambda r: models_reply("m") if r.method == "GET" else Reply(200, chat_body("A"))) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0)
        try:
            with pytest.raises(ModelCallError) as caught:
                ask_letters(model, ["q"], ["A", "B"])
        finally:
            model.close()
    assert caught.value.kind == NO_LOGPROBS and "no logprobs field" in str(caught.value)


def test_transformers_serve_gives_no_logprobs(served_llava: tuple[str, str]) -> None:
    """`transformers serve` 5.x ignores `logprobs` / `top_logprobs` (it logs them as unsupported) and answers without
    them: the letter mode names that in one line."""
    api_base, model_path = served_llava
    model = OpenAICompatModel(model_path, api_base=api_base, retries=0, timeout=120)
    try:
        with pytest.raises(ModelCallError) as caught:
            ask_letters(model, ["Answer with A or B."], ["A", "B"])
    finally:
        model.close()
    assert caught.value.kind == NO_LOGPROBS and "\n" not in str(caught.value)
