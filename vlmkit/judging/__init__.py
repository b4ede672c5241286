"""LLM judges for scorers: the interface scorers use (base) and the journalled judge the runner builds."""

from vlmkit.judging.base import (
    FunctionJudge,
    Judge,
    JudgeOutcome,
    JudgeReply,
    JudgeRequest,
    JudgeStopped,
    judge_rounds,
)

__all__ = ["FunctionJudge", "Judge", "JudgeOutcome", "JudgeReply", "JudgeRequest", "JudgeStopped", "judge_rounds"]
