"""`--sessions`: conversations replayed turn by turn against the mock server; each turn's body carries the history,
goes out only after the previous answer ended (read from perf_requests.jsonl: order, not clock), and the summary
has figures per turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.tsvs import image_bytes
from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfInputError
from vlmkit.perf.sessions import TurnTally, read_sessions, ttft_growth

LONG = "history " * 60  # each assistant reply adds ~500 bytes to the next turns' bodies


def _ark(i: int, fault_at: int | None = None) -> dict:
    messages = [{"role": "system", "content": "be brief"}]
    for k in range(3):
        text = f"session {i} question {k}" + (" [mock:http500]" if k == fault_at else "")
        messages.append({"role": "user", "content": text})
        if k < 2:
            messages.append({"role": "assistant", "content": f"answer {k} {LONG}"})
    return {"id": f"s{i}", "messages": messages}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_sharegpt_images_follow_their_marks(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(image_bytes("red"))
    (tmp_path / "b.png").write_bytes(image_bytes("blue"))
    path = _write(tmp_path / "s.jsonl", [
        {"conversations": [{"from": "human", "value": "look <image> here"}, {"from": "gpt", "value": "ok"},
                           {"from": "human", "value": "and now"}], "images": ["a.png", "b.png"]},
    ])
    (session,) = read_sessions(path)
    first, reply, second = session.turns
    # a.png is claimed by the mark; b.png, unclaimed, goes first in the first user turn
    assert first == {"role": "user", "content": [
        {"type": "image", "value": str(tmp_path / "b.png")}, {"type": "text", "value": "look"},
        {"type": "image", "value": str(tmp_path / "a.png")}, {"type": "text", "value": "here"}]}
    assert reply["role"] == "assistant" and second["content"] == [{"type": "text", "value": "and now"}]
    assert [len(p) for p in session.prefixes()] == [1, 3]
    assert session.name == "1"


@pytest.mark.parametrize("row, needle", [
    ({"messages": "hi"}, "line 2: messages: expected a non-empty list"),
    ({"messages": [{"role": "bot", "content": "x"}]}, "line 2: messages[0]: expected {role"),
    ({"messages": [{"role": "assistant", "content": "x"}]}, "line 2: messages: no user turn"),
    ({"conversations": [{"from": "human", "value": "<image>"}]}, "line 2: conversations[0]: more <image> marks"),
    ({"prompt": "x"}, "line 2: messages: expected `messages` (Ark) or `conversations` (ShareGPT)"),
])
def test_bad_lines_are_named(tmp_path: Path, row: dict, needle: str) -> None:
    path = _write(tmp_path / "bad.jsonl", [_ark(0), row])
    with pytest.raises(PerfInputError) as info:
        read_sessions(path)
    assert str(info.value).startswith(str(path)) and needle in str(info.value), info.value


def test_growth_is_a_least_squares_slope() -> None:
    rows = [{"prompt_tokens_mean": x, "ttft_ms": {"median": y}} for x, y in ((1000, 10.0), (2000, 30.0), (3000, 35.0))]
    growth = ttft_growth(rows)
    # by hand: mean x 2000, mean y 25; slope = (-1000*-15 + 0 + 1000*10) / 2e6 = 0.0125 ms/token
    assert growth == {"ms_per_1k_prompt_tokens": pytest.approx(12.5), "last_over_first": 3.5, "turns": 3}
    assert ttft_growth(rows[:1]) is None


def test_turn_tallies_merge_as_one() -> None:
    a, b, whole = TurnTally(), TurnTally(), TurnTally()
    for tally, values in ((a, (1.0, 2.0)), (b, (3.0,))):
        for v in values:
            tally.add(0, True, v, 10)
            whole.add(0, True, v, 10)
    b.add(1, False, None, None)
    whole.add(1, False, None, None)
    a.merge(b)
    assert a.summary() == whole.summary()
    assert a.summary()["turns"][0]["ttft_ms"]["median"] == 2.0


def _run(mock, tmp_path: Path, sessions: Path, *extra: str) -> tuple[dict, list[dict]]:
    out = tmp_path / "out"
    argv = ["perf", "--model", "m", "--api-base", mock.base_url, "--sessions", str(sessions), "--out", str(out),
            "--no-plots", "--max-tokens", "2", *extra]
    assert main(argv) == 0
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    return json.loads((out / "perf_summary.json").read_text()), lines


def test_turns_go_out_after_the_previous_answer_with_the_history(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2", "--itl-ms", "5")
    path = _write(tmp_path / "ark.jsonl", [_ark(i) for i in range(4)])
    summary, lines = _run(mock, tmp_path, path, "--concurrency", "2", "--think-time", "0.05")
    level = summary["levels"][0]
    assert level["requests"] == {"measured": 12, "successful": 12, "failed": 0, "errors_by_kind": {}, "cancelled": 0}
    by_session: dict[int, list[dict]] = {}
    for line in lines:
        by_session.setdefault(line["n"], []).append(line)
    assert sorted(by_session) == [0, 1, 2, 3]
    for n, requests in by_session.items():
        requests.sort(key=lambda r: r["turn"])
        assert [r["turn"] for r in requests] == [0, 1, 2]
        assert [r["index"] for r in requests] == [f"s{n}#0", f"s{n}#1", f"s{n}#2"]
        for before, after in zip(requests, requests[1:]):
            answered = before["start_ms"] + before["e2el_ms"]
            assert after["start_ms"] - answered >= 0.045  # the think time, after the answer ended (rounding: 1 us)
        tokens = [r["input_tokens"] for r in requests]
        assert tokens[0] < tokens[1] < tokens[2]  # the history grows (the mock counts body bytes / 4)
    # every body is the conversation up to its turn: system, then user/assistant pairs from the file
    bodies = [b for b in mock.bodies() if b["max_tokens"] != 1]
    session0 = sorted((b for b in bodies if "session 0 " in json.dumps(b)), key=lambda b: len(b["messages"]))
    expected = [{"role": t["role"], "content": t["content"]} for t in _ark(0)["messages"]]
    assert [b["messages"] for b in session0] == [expected[:2], expected[:4], expected[:6]]
    turns = level["sessions"]["turns"]
    assert [(t["turn"], t["requests"], t["successful"]) for t in turns] == [(1, 4, 4), (2, 4, 4), (3, 4, 4)]
    means = [t["prompt_tokens_mean"] for t in turns]
    assert means[0] < means[1] < means[2]
    assert level["sessions"]["ttft_growth"]["turns"] == 3 and level["sessions"]["cut_short"] == 0
    csv_text = (tmp_path / "out" / "perf_summary.csv").read_text()
    header, row = csv_text.splitlines()[:2]
    assert dict(zip(header.split(","), row.split(",")))["turns"] == "3"


def test_a_failed_turn_ends_its_session(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2", "--faults")
    path = _write(tmp_path / "ark.jsonl", [_ark(0), _ark(1, fault_at=1)])
    summary, lines = _run(mock, tmp_path, path, "--concurrency", "1")
    level = summary["levels"][0]
    assert sorted((line["n"], line["turn"], line["ok"]) for line in lines) == [
        (0, 0, True), (0, 1, True), (0, 2, True), (1, 0, True), (1, 1, False)]
    assert level["requests"]["errors_by_kind"] == {"http_500": 1}
    assert level["sessions"]["cut_short"] == 1
    assert [t["requests"] for t in level["sessions"]["turns"]] == [2, 2, 1]


def test_sessions_in_open_loop_and_workers(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2")
    path = _write(tmp_path / "ark.jsonl", [_ark(i) for i in range(4)])
    summary, lines = _run(mock, tmp_path, path, "--request-rate", "50", "--num-requests", "6", "--workers", "2")
    level = summary["levels"][0]
    assert level["requests"]["successful"] == 18  # 6 sessions (two of the file's sessions twice) x 3 turns
    assert sorted({line["n"] for line in lines}) == list(range(6))
    assert [t["requests"] for t in level["sessions"]["turns"]] == [6, 6, 6]
