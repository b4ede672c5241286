"""The run loop's quick readings of an answer give what the general readers give: `Reply.json` (a body opening with
`{` decoded directly) against json.loads, and `_generation`'s one-pass reading of a plain answer against
answer_text / reasoning_text / usage_from, over many shapes a server may send."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from vlm.api.connection import Reply
from vlm.api.http import Response
from vlm.api.openai_compat import _generation, answer_text, reasoning_text, usage_from
from vlmkit.core.model_calls import ModelCallError


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both
        return "error", type(exc).__name__


BODIES = [
    b'{"a": 1}', b'{"a": "\xc3\xa9"}', b'{"a": 1} trailing', b'{"a": 1}\n', b'{', b'{}', b'{"a": "\xff"}',
    b'{\x00"\x00', b'[1, 2]', b'"x"', b'  {"a": 1}', b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16"),
    '{"a": 1}'.encode("utf-16-le"), '{"a": 1}'.encode("utf-32"), b'', b'{"a": "\\ud800"}', b'{"a": NaN}',
]


@pytest.mark.parametrize("body", BODIES + [bytes(random.Random(seed).randrange(256) for _ in range(6)) for seed in
                                           range(40)] + [b"{" + bytes(random.Random(seed).randrange(256) for _ in
                                                                        range(5)) for seed in range(40)])
def test_reply_json_is_json_loads(body: bytes) -> None:
    assert _outcome(lambda: Reply(200, {}, body).json()) == _outcome(lambda: json.loads(body))


def _reference(data: dict[str, Any], attempts: int, latency: float) -> tuple[str, Any]:
    """What _generation gave before its one-pass reading: the general readers, each over the whole answer."""
    try:
        text, finish = answer_text(data)
    except ModelCallError as exc:
        return "error", (exc.kind, str(exc))
    extra: dict[str, Any] = {"response_model": data.get("model"), "attempts": attempts}
    if finish is not None:
        extra["finish_reason"] = finish
    if data["choices"][0].get("logprobs") is not None:
        extra["logprobs"] = data["choices"][0]["logprobs"]
    reasoning = reasoning_text(data)
    if reasoning is not None:
        extra["reasoning_content"] = reasoning.strip()
    return "ok", (text.strip(), usage_from(data), latency, extra)


CONTENTS = ["  Paris ", "", "   ", None, 7, [{"type": "text", "text": "B"}], ["x"]]
MESSAGE_EXTRAS = [{}, {"reasoning_content": "think"}, {"reasoning": "  "}, {"reasoning_content": None},
                  {"refusal": "no"}]
FINISHES = ["stop", "length", None, 3, "absent"]
CHOICE_EXTRAS = [{}, {"logprobs": {"content": []}}, {"logprobs": None}]
USAGES = [{"prompt_tokens": 5, "completion_tokens": 2}, None, "absent", {"prompt_tokens": True,
          "completion_tokens_details": {"reasoning_tokens": 4}}]


def _answers() -> list[dict[str, Any]]:
    shapes: list[dict[str, Any]] = [{}, {"choices": []}, {"choices": "x"}, {"choices": [None]}, {"choices": [{}]},
                                    {"choices": [{"message": "text"}]}]
    for content, more, finish, choice_more, usage in itertools.product(CONTENTS, MESSAGE_EXTRAS, FINISHES,
                                                                       CHOICE_EXTRAS, USAGES):
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content, **more},
                                  **choice_more}
        if finish != "absent":
            choice["finish_reason"] = finish
        data: dict[str, Any] = {"model": "m", "choices": [choice]}
        if usage != "absent":
            data["usage"] = usage
        shapes.append(data)
    return shapes


def test_generation_reads_every_shape_as_the_general_readers_do() -> None:
    answers = _answers()
    assert len(answers) > 2000
    for data in answers:
        try:
            got: tuple[str, Any] = "ok", _generation(Response(data=data, latency_ms=1.5, attempts=2))
        except ModelCallError as exc:
            got = "error", (exc.kind, str(exc))
        if got[0] == "ok":
            g = got[1]
            got = "ok", (g.text, g.usage, g.latency_ms, g.extra)
        assert got == _reference(data, 2, 1.5), data
