"""vlmkit.judging.base called directly: the rounds of asking (who is asked again, at which temperature and
attempt), failed calls as error records, and what a request's identity holds."""

from __future__ import annotations

from collections.abc import Sequence

from vlmkit.judging.base import FunctionJudge, JudgeOutcome, JudgeReply, JudgeRequest, judge_rounds


def _digit(_key: str, reply: str) -> int | None:
    return int(reply) if reply.strip().isdigit() else None


def test_rows_are_asked_again_until_read_at_each_rounds_temperature() -> None:
    # row a reads at once; b at the third round; c never; d's call fails at the second round
    script = {"a": ["1"], "b": ["?", "hmm", "3"], "c": ["x", "y", "z"], "d": ["?", RuntimeError("HTTP 500")]}

    def answer(request: JudgeRequest) -> str:
        reply = script[request.row][request.attempt]  # type: ignore[index]
        if isinstance(reply, Exception):
            raise reply
        return reply

    judge = FunctionJudge(answer, name="scripted")
    out = judge_rounds(judge, {"a": "pa", "b": "pb", "c": "pc", "d": "pd"}, _digit, temperatures=(0.0, 0.5, 1.0),
                       max_tokens=7, system="be brief")
    assert (out["a"].value, out["a"].replies, out["a"].error) == (1, ["1"], None)
    assert (out["b"].value, out["b"].replies) == (3, ["?", "hmm", "3"])
    assert (out["c"].value, out["c"].replies, out["c"].last_reply) == (None, ["x", "y", "z"], "z")
    assert out["d"].value is None and out["d"].replies == ["?"]
    assert out["d"].error == {"kind": "exception", "message": "RuntimeError: HTTP 500", "status": None}
    asked = [(r.row, r.attempt, r.temperature) for r in judge.asked]
    assert asked == [("a", 0, 0.0), ("b", 0, 0.0), ("c", 0, 0.0), ("d", 0, 0.0),
                     ("b", 1, 0.5), ("c", 1, 0.5), ("d", 1, 0.5),
                     ("b", 2, 1.0), ("c", 2, 1.0)]
    assert all(r.system == "be brief" and r.max_tokens == 7 for r in judge.asked)
    assert {r.prompt for r in judge.asked if r.row == "b"} == {"pb"}


def test_one_round_by_default_and_no_rows_no_calls() -> None:
    judge = FunctionJudge(lambda r: "no digits", name="j")
    out = judge_rounds(judge, {"k": "p"}, _digit)
    assert len(judge.asked) == 1 and out["k"].value is None and out["k"].replies == ["no digits"]
    empty = FunctionJudge(lambda r: "1")
    assert judge_rounds(empty, {}, _digit, temperatures=(0.0, 1.0)) == {} and empty.asked == []


class _Silent:
    """A judge whose replies carry neither text nor an error record."""

    name = "silent"

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        return [JudgeReply(None) for _ in requests]


def test_a_reply_without_text_is_an_error_never_an_answer() -> None:
    out = judge_rounds(_Silent(), {"k": "p"}, _digit, temperatures=(0.0, 0.5))
    assert out["k"].value is None and out["k"].replies == []
    assert out["k"].error == {"kind": "bad_response", "message": "no reply text", "status": None}


def test_reply_and_request_records() -> None:
    assert JudgeReply("A").ok and not JudgeReply(None).ok
    assert not JudgeReply("A", error={"kind": "timeout"}).ok
    request = JudgeRequest("p", system="s", temperature=0.5, max_tokens=3, attempt=2, row="r9")
    # the row is for error reports only: two rows with the same prompt share a reply
    assert request.identity() == {"prompt": "p", "system": "s", "temperature": 0.5, "max_tokens": 3, "attempt": 2}
    assert JudgeOutcome().last_reply is None
