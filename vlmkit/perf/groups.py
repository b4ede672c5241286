"""Figures kept apart per group of a level's requests (a session's turn number, a prefix shared or not): requests,
successes, TTFT and prompt tokens per group, in memory bounded by the number of groups, merged across processes."""

from __future__ import annotations

from typing import Any

from vlmkit.perf.digest import Digest


class KeyedTally:
    """Per integer key: [requests, successes, Digest of TTFT (ms), prompt token sum, requests with usage]."""

    def __init__(self) -> None:
        self.groups: dict[int, list[Any]] = {}

    def add(self, key: int, ok: bool, ttft_ms: float | None, input_tokens: int | None) -> None:
        entry = self.groups.setdefault(key, [0, 0, Digest(), 0, 0])
        entry[0] += 1
        if ok:
            entry[1] += 1
            if ttft_ms is not None:
                entry[2].add(ttft_ms)
            if input_tokens is not None:
                entry[3] += input_tokens
                entry[4] += 1

    def merge(self, other: "KeyedTally") -> None:
        for key, (n, ok, digest, tokens, usage) in other.groups.items():
            entry = self.groups.setdefault(key, [0, 0, Digest(), 0, 0])
            entry[0] += n
            entry[1] += ok
            entry[2].merge(digest)
            entry[3] += tokens
            entry[4] += usage

    def row(self, key: int) -> dict[str, Any]:
        """requests, successful, ttft_ms (stats), prompt_tokens_mean (None without usage) of one key."""
        n, ok, digest, tokens, usage = self.groups.get(key) or [0, 0, Digest(), 0, 0]
        return {"requests": n, "successful": ok, "ttft_ms": digest.stats(),
                "prompt_tokens_mean": tokens / usage if usage else None}
