"""`vlmkit run` exit codes: one meaning each (the README and `vlmkit run --help` show this table)."""

from __future__ import annotations

from collections.abc import Iterable

OK = 0  # every (model, dataset) pair finished: every sample answered (and scored, unless --mode infer)
BAD_INPUT = 2  # bad input or usage: unknown name, bad flag or config, unreadable or empty dataset, nothing to score
SAMPLES_FAILED = 3  # the run finished but some samples have no answer (error records; a rerun asks them again)
STOPPED = 4  # stopped early: the server probe failed, the first samples all failed the same way, or a torchrun
#   rank never arrived (--barrier-timeout)
INTERRUPTED = 130  # Ctrl-C: every answer received so far is journalled; rerun the same command to resume

TABLE = (
    (OK, "done: every sample answered (and scored)"),
    (1, "an unexpected error (a bug in vlmkit: the traceback says where)"),
    (BAD_INPUT, "bad input or usage (unknown name, bad flag/config, empty or unreadable dataset, nothing to score)"),
    (SAMPLES_FAILED, "finished, but some samples failed (see the error summary; a rerun asks them again)"),
    (STOPPED, "stopped early: server probe failed, the first samples all failed the same way, or a torchrun rank never arrived"),
    (INTERRUPTED, "interrupted (Ctrl-C); answers so far are journalled, rerun to resume"),
)
# The worst of several outcomes decides the exit code.
_SEVERITY = (OK, SAMPLES_FAILED, BAD_INPUT, STOPPED, INTERRUPTED)
# DatasetRun.status -> exit code.
FOR_STATUS = {
    "success": OK, "inferred": OK, "no_target": OK, "shard_done": OK,
    "partial": SAMPLES_FAILED, "failed": SAMPLES_FAILED, "incomplete": SAMPLES_FAILED,
    "no_answers": BAD_INPUT, "kept": BAD_INPUT,
    "stopped": STOPPED, "skipped": STOPPED,
}


def worst(codes: Iterable[int]) -> int:
    return max(codes, key=_SEVERITY.index, default=OK)


def epilog() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in TABLE)
