"""Time writing the predictions table: pandas' to_excel (openpyxl) against vlmkit.outputs.xlsx.write_xlsx, best of N.

    python tools/bench_xlsx.py [--rows 4329] [--repeats 3]

The table is synthetic and seeded, MMBench-shaped (12 columns: index, question, hint, A-D, answer, category,
l2-category, split, prediction) with mixed cells: multi-line and unicode text, `&`/`<` to escape, missing values
(NaN), ints, floats and bools. Both writers get the same frame in the same invocation; vlmkit is timed at deflate
level 1 (its default) and 6 (zipfile's usual), and the files are read back with pandas.read_excel to check that
they hold the same values. The load average is printed: on a shared machine compare figures from one run only.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

import pandas as pd

from vlmkit.outputs.xlsx import write_xlsx

WORDS = "cat dog bird fish tree car house river mountain cloud lamp chair table book phone cup".split()


def make_table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    data = []
    for i in range(rows):
        data.append({
            "index": i if i % 3 else i + 1_000_000,
            "question": f"Which {text(6)} is shown? (A & B < C)" if i % 7 == 0 else f"What is the {text(8)}?",
            "hint": text(20) if i % 2 else None,
            "A": text(2), "B": text(3), "C": text(2) if i % 5 else None, "D": "猫と犬 🐱" if i % 11 == 0 else text(1),
            "answer": "ABCD"[i % 4],
            "category": rng.choice(WORDS),
            "l2-category": rng.random() if i % 4 else float("nan"),
            "split": i % 2 == 0,
            "prediction": f"The answer is {'ABCD'[i % 4]}.\n{text(rng.randint(0, 40))}",
        })
    return pd.DataFrame(data)


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4329)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    table = make_table(args.rows)
    columns = [str(c) for c in table.columns]
    with tempfile.TemporaryDirectory() as tmp:
        ours, ours6, theirs = Path(tmp, "ours.xlsx"), Path(tmp, "ours6.xlsx"), Path(tmp, "pandas.xlsx")
        t_pandas = best(lambda: table.to_excel(theirs, index=False, engine="openpyxl"), args.repeats)
        # rows as write_prediction_table gives them: to_numpy(object).tolist() is ~8x faster than itertuples
        t_ours = best(lambda: write_xlsx(ours, columns, table.to_numpy(dtype=object).tolist()), args.repeats)
        t_ours6 = best(
            lambda: write_xlsx(ours6, columns, table.to_numpy(dtype=object).tolist(), compresslevel=6), args.repeats
        )
        t_iter = best(lambda: write_xlsx(ours, columns, table.itertuples(index=False, name=None)), args.repeats)
        ours_back, theirs_back = pd.read_excel(ours), pd.read_excel(theirs)
        # openpyxl writes numbers as "%.16g" (the 17th digit lost), vlmkit as repr (exact): floats may differ there
        same = ours_back.equals(theirs_back)
        close = same or _close(ours_back, theirs_back)
        exact = ours_back.equals(table)
        sizes = {p.name: p.stat().st_size for p in (theirs, ours, ours6)}
    cells = table.shape[0] * table.shape[1]
    print(f"table: {table.shape[0]} rows x {table.shape[1]} columns = {cells} cells; best of {args.repeats}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"pandas.to_excel(openpyxl)   {t_pandas:.4f} s  {t_pandas / cells * 1e6:6.2f} us/cell  "
          f"{sizes['pandas.xlsx']:>9,} bytes")
    print(f"vlmkit.outputs.xlsx level 1         {t_ours:.4f} s  {t_ours / cells * 1e6:6.2f} us/cell  "
          f"{sizes['ours.xlsx']:>9,} bytes  ({t_pandas / t_ours:.1f}x faster)")
    print(f"vlmkit.outputs.xlsx level 6         {t_ours6:.4f} s  {t_ours6 / cells * 1e6:6.2f} us/cell  "
          f"{sizes['ours6.xlsx']:>9,} bytes")
    print(f"vlmkit.outputs.xlsx rows from itertuples  {t_iter:.4f} s")
    verdict = "same values" if same else "same but floats in the 17th digit" if close else "DIFFERENT VALUES"
    print(f"read back by pandas.read_excel, vlmkit's file against pandas': {verdict}; "
          f"vlmkit's file against the table written: {'equal' if exact else 'DIFFERENT'}")


def _close(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-15, atol=0)
    except AssertionError:
        return False
    return True


if __name__ == "__main__":
    main()
