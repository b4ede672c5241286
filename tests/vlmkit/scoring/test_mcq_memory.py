"""Issue 25, flat memory: scoring a large MCQ table keeps no dict a row (options, answer parts, VLMEvalKit's
choices): what it allocates at its peak, beyond the table it is given, stays a few hundred bytes a row. Measured by
what is allocated (tracemalloc), never by time."""

from __future__ import annotations

import gc
import tracemalloc

import pandas as pd

from vlmkit.scoring.kinds.mcq import score_mcq

N_ROWS = 20_000
# kept a row at the peak: a handful of lists of pointers (8 bytes each), the per-sample table, the int `index`
# values, the round-tripped reply and option columns (~350 measured); a dict a row (~230 bytes) more fails
ALLOWED_PEAK_BYTES_A_ROW = 500


def _table(replies: list[str]) -> pd.DataFrame:
    n = N_ROWS
    return pd.DataFrame({
        "index": range(n), "question": [f"Which colour is item {i}?" for i in range(n)],
        "A": ["red"] * n, "B": ["green"] * n, "C": ["blue"] * n, "D": ["grey"] * n,
        "answer": ["ABCD"[i % 4] for i in range(n)], "prediction": [replies[i % len(replies)] for i in range(n)],
    })


def _peak_a_row(df: pd.DataFrame) -> tuple[float, dict]:
    gc.collect()
    tracemalloc.start()
    try:
        result = score_mcq(df, circular=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / len(df), result.counts


def test_scoring_unreadable_replies_keeps_no_dict_a_row() -> None:
    # every reply unreadable: the rows a judge would be asked about, where per-row options used to be kept
    peak, counts = _peak_a_row(_table(["tok tok tok tok"]))
    assert counts["unparsed"] == N_ROWS and counts["hits"] == 0
    assert peak < ALLOWED_PEAK_BYTES_A_ROW, f"{peak:.0f} bytes a row at the peak"


def test_scoring_read_replies_keeps_no_dict_a_row() -> None:
    # the replies cycle A, B, C, D, "the answer is B" against answers cycling A..D: hits where both agree,
    # worked by hand over one cycle of 20 rows (lcm of 5 and 4): rows 0, 1, 2, 3 of the first four replies
    # match when i % 5 == i % 4 (i = 0, 1, 2, 3 in each 20), and "B" (reply 4) matches at i % 4 == 1, i % 5 == 4
    # (i = 9): 5 hits in 20 rows
    replies = ["A", "B", "C", "D", "The answer is B"]
    peak, counts = _peak_a_row(_table(replies))
    assert counts["hits"] == N_ROWS // 20 * 5
    assert peak < ALLOWED_PEAK_BYTES_A_ROW, f"{peak:.0f} bytes a row at the peak"
