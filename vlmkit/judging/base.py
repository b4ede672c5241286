"""What a scorer sees of an LLM judge: ask it text prompts, get replies (or typed errors) back.

A judge knows nothing of datasets, and scorers know nothing of HTTP: `vlmkit.run.runner` builds the judge from any
OpenAI-compatible model, wraps it so every call is journalled and resumable (`vlmkit.run.judge_journal`) and
passes it to `dataset.evaluate(predictions, judge=...)`. Scorers stay in the bottom layer and keep their judge
prompts beside them (one module per judged family).

- `JudgeRequest`: one text prompt (VLMEvalKit's judges never see the image), an optional system turn, temperature,
  max_tokens, and `attempt` (the n-th time the same prompt is asked: VLMEvalKit re-asks at temperature 0, and a
  resumed run must find each attempt's own reply).
- `JudgeReply`: the reply text, or a typed error record ({kind, message, status}) when the call failed after its
  retries. A failed call is never read as an answer: the row is reported as a judge error and asked again on the
  next run.
- `JudgeStopped`: raised by a judge that cannot work at all (unreachable, or its first calls all refused with a
  status no retry fixes). Scorers let it through; the runner stops the pair in one line. There is no silent fall-back
  to rules.
- `judge_rounds`: VLMEvalKit's "ask up to N times" loops (MCQ 3 times at temperature 0, Y/N and MathVista 5 times
  at 0, 0.5, ... 2.0), asked for all rows at once per round so that a judge can answer them concurrently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


class JudgeStopped(RuntimeError):
    """The judge cannot work (unreachable, or refusing every call): one line saying why and what to change."""


@dataclass(frozen=True)
class JudgeRequest:
    prompt: str
    system: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    attempt: int = 0  # 0 for the first ask of this prompt; the journal keys each attempt apart
    row: str | None = None  # index key of the row being judged (error reports only; not part of the identity)

    def identity(self) -> dict[str, Any]:
        """What the reply depends on (the journal key is a digest of this plus the judge's name)."""
        return {"prompt": self.prompt, "system": self.system, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "attempt": self.attempt}


@dataclass(frozen=True)
class JudgeReply:
    text: str | None  # None when the call failed
    error: dict[str, Any] | None = None  # {kind, message, status} of a failed call
    cached: bool = False  # read back from the journal of an earlier run

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


class Judge(Protocol):
    """Anything with a name and `ask`: replies in the order of the requests, one per request."""

    name: str

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]: ...


class FunctionJudge:
    """A judge from a Python function `fn(request) -> reply text` (a local rule, a test's key, a user's own client).

    An exception from fn becomes that request's error reply."""

    def __init__(self, fn: Callable[[JudgeRequest], str], name: str = "function") -> None:
        self.fn = fn
        self.name = name
        self.asked: list[JudgeRequest] = []

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        replies = []
        for request in requests:
            self.asked.append(request)
            try:
                replies.append(JudgeReply(str(self.fn(request))))
            except Exception as exc:  # a failed call is an error reply, never an answer
                replies.append(JudgeReply(None, {"kind": "exception", "message": f"{type(exc).__name__}: {exc}",
                                                 "status": None}))
        return replies


@dataclass
class JudgeOutcome(Generic[T]):
    """What the judge rounds gave for one row: the parsed value (None: unread after every attempt, or failed)."""

    value: T | None = None
    replies: list[str] = field(default_factory=list)  # every reply text, in the order asked
    error: dict[str, Any] | None = None  # the failed call's error record: the row could not be judged this run

    @property
    def last_reply(self) -> str | None:
        return self.replies[-1] if self.replies else None


def judge_rounds(
    judge: Judge,
    prompts: Mapping[str, str],
    parse: Callable[[str, str], T | None],
    *,
    temperatures: Sequence[float] = (0.0,),
    max_tokens: int | None = None,
    system: str | None = None,
) -> dict[str, JudgeOutcome[T]]:
    """Ask each prompt (keyed by row) once per round at that round's temperature, until `parse(key, reply)` reads a
    value or the rounds run out. A failed call ends that row's rounds with its error (its HTTP retries are spent)."""
    outcomes: dict[str, JudgeOutcome[T]] = {key: JudgeOutcome() for key in prompts}
    pending = list(prompts)
    for attempt, temperature in enumerate(temperatures):
        if not pending:
            break
        requests = [JudgeRequest(prompts[k], system=system, temperature=temperature, max_tokens=max_tokens,
                                 attempt=attempt, row=k) for k in pending]
        replies = judge.ask(requests)
        still: list[str] = []
        for key, reply in zip(pending, replies):
            outcome = outcomes[key]
            if not reply.ok:
                outcome.error = reply.error or {"kind": "bad_response", "message": "no reply text", "status": None}
                continue
            outcome.replies.append(reply.text or "")
            value = parse(key, reply.text or "")
            if value is None:
                still.append(key)
            else:
                outcome.value = value
        pending = still
    return outcomes
