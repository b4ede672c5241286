"""A reply's reasoning kept apart from its answer: `<think>...</think>` blocks and servers' `reasoning_content`.

Reasoning models write their thinking before the answer, in the reply text (`<think>...</think>`, as Qwen3, QwQ
and DeepSeek-R1 checkpoints do when the server runs no reasoning parser) or in a field of their own
(`reasoning_content` from vLLM/SGLang reasoning parsers and DeepSeek's API; `reasoning` from some others). The answer
is what follows the last `</think>`; the reasoning is kept in the journal and predictions.jsonl under `reasoning`
and is never read as the answer. A reply that opens `<think>` and never closes it ran out of tokens while thinking:
it is truncated, not an answer (the run records an error that names --max-tokens).
"""

from __future__ import annotations

import re

OPEN, CLOSE = "<think>", "</think>"
_OPEN_AT_START = re.compile(r"\s*<think>", re.I)


def split_reasoning(text: str) -> tuple[str, str | None, bool]:
    """(answer, reasoning or None, truncated): the text after the last `</think>`, the thinking before it (without
    its tags), and whether the reply opened `<think>` without closing it (then the answer is "")."""
    close = text.lower().rfind(CLOSE)
    if close >= 0:
        thinking = text[:close]
        opened = _OPEN_AT_START.match(thinking)
        if opened:
            thinking = thinking[opened.end():]
        return text[close + len(CLOSE):].strip(), thinking.strip() or None, False
    opened = _OPEN_AT_START.match(text)
    if opened:
        return "", text[opened.end():].strip() or None, True
    return text, None, False


def answer_part(text: str) -> str:
    """The answer of a reply that may still hold its reasoning (a record journalled before the split existed)."""
    return split_reasoning(text)[0]
