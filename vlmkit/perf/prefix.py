"""`--prefix-share P --prefix-tokens N`: requests that share a prefix, to measure what a server's prefix cache buys.

Each request starts with N tokens of text (vlmkit.perf.blocks: N common words) as the first part of its first user
turn, before the row's own prompt. A fraction P of the rows (round(P * rows), picked by --seed) carry one prefix that
they all share; every other row carries a prefix of the same length that no other row has, so the two groups send
prompts of the same length and differ only in what a cache can reuse. The summary keeps TTFT apart for the two
groups (`prefix.shared`, `prefix.unique`); the first shared request of a run finds nothing cached (a --warmup of 1 or
more sends it before measuring). With --metrics-url, the server's own prefix-cache hit rate over each level stands
beside them (vlmkit.perf.server_metrics).

A server's cache outlives the run: a second run with the same --seed sends the same prefixes and finds even the
"unique" ones cached. Change --seed between runs (or restart the server) to measure a cold cache.
"""

from __future__ import annotations

import random
from typing import Any

from vlmkit.core.message import normalise_conversation
from vlmkit.perf.blocks import prompt_text
from vlmkit.perf.groups import KeyedTally

SHARED, UNIQUE = 1, 0


def shared_rows(rows: int, share: float, seed: int) -> set[int]:
    """The rows (of 0..rows-1) that carry the shared prefix: round(share * rows) of them, chosen by the seed."""
    return set(random.Random(seed).sample(range(rows), round(share * rows)))


def prefix_for(row: int, shared: bool, tokens: int, seed: int) -> str:
    """The prefix text of a row: the one shared by the run's shared rows, or the row's own."""
    unique = 0 if shared else row + 1
    return prompt_text([], tokens, tokens, unique + (seed + 1) * 1_000_003)


def with_prefix(msgs: Any, text: str) -> list[dict[str, Any]]:
    """The prompt as a conversation, `text` the first part of its first user turn."""
    turns = normalise_conversation(msgs)
    for turn in turns:
        if turn["role"] == "user":
            turn["content"] = [{"type": "text", "value": text + "\n"}, *turn["content"]]
            break
    return turns


def prefix_summary(tally: KeyedTally | None) -> dict[str, Any]:
    """The level's `prefix` block: TTFT and prompt tokens of the shared and the unique group."""
    tally = tally or KeyedTally()
    shared, unique = tally.row(SHARED), tally.row(UNIQUE)
    ratio = None
    if shared["ttft_ms"]["median"] is not None and unique["ttft_ms"]["median"]:
        ratio = shared["ttft_ms"]["median"] / unique["ttft_ms"]["median"]
    return {"shared": shared, "unique": unique, "ttft_median_shared_over_unique": ratio}
