"""The judge a run uses: any OpenAI-compatible model, every call journalled like a model answer.

`JournalledJudge(model, journal_path)` takes a model (vlm.api's OpenAICompatModel, built by the runner from
--judge/--judge-api-base/...; asked through vlmkit.core.contracts.ModelView) and answers `ask(requests)`:

- Each request is keyed by a digest of the judge's name and `JudgeRequest.identity()` (prompt, system, temperature,
  max_tokens, attempt). A key with a journalled reply is read back (`cached`), never asked again: a killed run
  resumes without re-judging a judged row. A journalled *failure* is asked again, never reused as a result.
- The rest are asked `nproc` at a time (vlmkit.run.inference.run_api: daemon workers, each reply journalled as it
  arrives, Ctrl-C keeps what arrived). The journal is `judge.jsonl` beside the model's journal; its records hold the
  judge prompt, reply, usage and latency, so the judge's cost is recorded apart from the model's.
- A judge that cannot work stops the pair in one line (JudgeStopped): the first calls all unreachable or all refused
  with a status no retry fixes (vlmkit.run.failures.FirstFailures). The runner probes the judge before any inference,
  so a dead judge is found before the model is asked anything.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from vlmkit.core.contracts import Model, ModelView, model_view
from vlmkit.run.failures import FirstFailures, RunStopped
from vlmkit.run.inference import Task, run_api
from vlmkit.run.journal import Journal
from vlmkit.judging.base import JudgeReply, JudgeRequest, JudgeStopped

JOURNAL_FINGERPRINT = {"journal": "judge"}  # the replies are keyed by content: one journal serves any judge


def request_key(judge_name: str, request: JudgeRequest) -> str:
    """The journal key of one request to one judge."""
    identity = json.dumps({"judge": judge_name, **request.identity()}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(identity.encode()).hexdigest()[:24]


def request_messages(request: JudgeRequest) -> list[dict[str, Any]]:
    """The request as vlmkit's conversation format (a system turn when given, then one user turn)."""
    turns = []
    if request.system is not None:
        turns.append({"role": "system", "content": [{"type": "text", "value": request.system}]})
    turns.append({"role": "user", "content": [{"type": "text", "value": request.prompt}]})
    return turns


class JournalledJudge:
    """A judge over an OpenAI-compatible model with a resumable journal (see the module docstring)."""

    def __init__(self, model: Model | ModelView, journal_path: Path, *, nproc: int = 4,
                 secrets: Iterable[str | None] = (), name: str | None = None, progress: bool = False) -> None:
        self.model = model_view(model)
        self.name = name or self.model.model_id  # the served model id (the judge's --judge name), else the class
        self.journal_path = Path(journal_path)
        self.nproc = nproc
        self.progress = progress
        self._secrets = tuple(s for s in secrets if s)
        self._used: dict[str, dict[str, Any]] = {}  # key -> the record each reply of this run came from
        self.asked = 0  # calls made this run (a cached reply is not a call)
        self.cached = 0

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        keys = [request_key(self.name, r) for r in requests]
        journal = Journal(self.journal_path, JOURNAL_FINGERPRINT, secrets=self._secrets)
        records = journal.load()
        done = {k for k, rec in records.items() if rec.get("error") is None and rec.get("prediction") is not None}
        todo: dict[str, JudgeRequest] = {}
        for key, request in zip(keys, requests):
            if key not in done and key not in todo:
                todo[key] = request
        cached_keys = {k for k in keys if k in done}
        if todo:
            tasks = [Task(index=key, msgs=request_messages(r), target=r.row, params=_params(r)) for key, r in todo.items()]
            watch = FirstFailures(len(tasks))
            journal.open()
            try:
                run_api(self.model, tasks, journal, dataset=None, nproc=self.nproc, desc=f"judge {self.name}",
                        progress=self.progress, watch=watch.check)
            except RunStopped as stop:
                raise JudgeStopped(judge_words(f"judge {self.name}: {stop}")) from None
            finally:
                journal.close()
            self.asked += len(tasks)
            records = journal.records
        replies = []
        for key in keys:
            record = records.get(key) or {}
            self._used[key] = record
            error = record.get("error")
            text = record.get("prediction")
            if error is None and text is None:
                error = {"kind": "not_run", "message": "the judge gave no reply", "status": None}
            replies.append(JudgeReply(None if error else text, error, cached=key in cached_keys))
        self.cached += sum(1 for k in set(keys) if k in cached_keys)
        return replies

    def stats(self) -> dict[str, Any]:
        """The judge's part of results.json: who judged, and what it cost (apart from the model's usage)."""
        records = list(self._used.values())
        ok = [r for r in records if r.get("error") is None and r.get("prediction") is not None]
        latencies = [float(r["latency_ms"]) for r in ok if isinstance(r.get("latency_ms"), (int, float))]
        usage = {"input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
        for record in ok:
            for name in usage:
                usage[name] += int((record.get("usage") or {}).get(name) or 0)
        settings = self.model.settings()
        return {
            "name": self.name,
            "base_url": settings.get("base_url"),
            "journal": str(self.journal_path),
            "replies": len(records),
            "asked_this_run": self.asked,
            "from_journal": self.cached,
            "errors": len(records) - len(ok),
            "usage": usage,
            "latency_ms": {
                "mean": statistics.fmean(latencies) if latencies else None,
                "p50": statistics.median(latencies) if latencies else None,
                "max": max(latencies) if latencies else None,
            },
        }


def _params(request: JudgeRequest) -> dict[str, Any]:
    params: dict[str, Any] = {"temperature": request.temperature}
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    return params


_FLAGS = ("--api-base", "--api-key", "--timeout", "--retries")


def judge_words(message: str) -> str:
    """A message written for the evaluated model's flags, reworded for the judge's (`--api-base` ->
    `--judge-api-base`, ...): the same checks and probes serve both."""
    for flag in _FLAGS:
        message = message.replace(flag, "--judge-" + flag[2:])
    return message
