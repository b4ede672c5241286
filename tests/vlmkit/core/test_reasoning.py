"""A reply's reasoning is kept apart from its answer and never read as the answer: `<think>` blocks in the text,
`reasoning_content` from the server, and a reply cut off while thinking is an error naming --max-tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, row_of, run_served, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_body
from vlmkit.core.reasoning import split_reasoning


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>It is red, so yes.</think>\n\nYes", ("Yes", "It is red, so yes.", False)),
        ("  <THINK>a</think>b</think> No.", ("No.", "a</think>b", False)),  # the answer follows the last close
        ("thinking without an opening tag</think>B", ("B", "thinking without an opening tag", False)),
        ("<think>I keep thinking and thinking", ("", "I keep thinking and thinking", True)),
        ("The answer is B. <think> is a tag", ("The answer is B. <think> is a tag", None, False)),
        ("Plain answer", ("Plain answer", None, False)),
        ("<think></think>A", ("A", None, False)),
    ],
)
def test_split_reasoning(text, expected):
    assert split_reasoning(text) == expected


def message(i: int) -> dict:
    """Row 0..: think-tagged text, then a server's reasoning_content, then a reply cut off while thinking."""
    kind = i % 3
    if kind == 0:
        return {"role": "assistant", "content": "<think>The picture is red... but is it? No wait.</think>Yes"}
    if kind == 1:
        return {"role": "assistant", "content": "No", "reasoning_content": "Blue, not red. Yes would be wrong."}
    return {"role": "assistant", "content": None, "reasoning_content": "Let me think about yes and no"}


def reasoner(request: Recorded) -> Reply:
    i = row_of(request)
    body = chat_body("x")
    body["choices"][0]["message"] = message(i)
    body["choices"][0]["finish_reason"] = "length" if i % 3 == 2 else "stop"
    return Reply(200, body)


def test_reasoning_is_kept_apart_and_never_scored(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=6)
    work = tmp_path / "out"
    with FaultServer(chat_only(reasoner)) as server:
        result = run_served(server.base_url, work, lmu_root)
    assert result.returncode == 3, result.stderr  # the two cut-off rows failed
    records = {r["index"]: r for r in map(json.loads, (work / "served" / "MyYN" / "predictions.jsonl")
                                          .read_text().splitlines())}
    assert records[0]["prediction"] == "Yes" and "No wait" in records[0]["reasoning"]
    assert records[1]["prediction"] == "No" and records[1]["reasoning"].startswith("Blue, not red")
    assert "reasoning_content" not in (records[1].get("extra") or {})
    for i in (2, 5):
        assert records[i]["prediction"] is None and records[i]["error"]["kind"] == "truncated_reasoning"
        assert "--max-tokens" in records[i]["error"]["message"]
    assert "truncated_reasoning" in result.stdout  # the error summary names it
