"""Split / category summary tables shared by every scorer (VLMEvalKit's `report_acc` layout).

The table has one row per `split` (sorted; a single row `none` when the table has no `split` column), then
`Overall`, then one column per value of each grouping column in `groups` (values sorted, missing values
skipped). A cell is the mean of `value_col` over the rows of that split and group value, times `scale`; NaN
where a split has no row of that value (as VLMEvalKit's `np.mean([])`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, listed
from vlmkit.scoring.common.text_norm import cell_text

# VLMEvalKit names these MMBench l2-categories by abbreviation in `_acc.csv` (MMB_abbrs); the MCQ scorer applies it.
MMBENCH_ABBREVIATIONS: Mapping[str, str] = {
    "coarse_perception": "CP",
    "finegrained_perception (instance-level)": "FP-S",
    "finegrained_perception (cross-instance)": "FP-C",
    "logic_reasoning": "LR",
    "relation_reasoning": "RR",
    "attribute_reasoning": "AR",
}

NO_SPLIT = "none"


def require_columns(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise a one-line ValueError naming the first missing column."""
    for col in columns:
        if col not in df.columns:
            have = ", ".join(map(str, df.columns))
            raise ValueError(f"{what}: the predictions table has no `{col}` column (columns: {have})")


def keyed_records(df: pd.DataFrame, columns: Iterable[str], what: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows as dicts, their index keys) of a predictions table that has `columns`, at least one row and no repeated
    `index`; a one-line ValueError otherwise."""
    require_columns(df, columns, what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    records = df.to_dict("records")
    keys = [index_key(row["index"]) for row in records]
    repeated = sorted(k for k, n in Counter(keys).items() if n > 1)
    if repeated:
        raise ValueError(f"{what}: duplicate `index` value(s): {listed(repeated)}")
    return records, keys


def required_text(row: Mapping[str, Any], field: str, what: str) -> str:
    """A row's cell as text; a one-line ValueError naming the row and the field when it is missing."""
    text = cell_text(row.get(field))
    if text is None:
        raise ValueError(f"{what}: row index {row.get('index')}, field `{field}`: missing")
    return text


def _label(value: object, rename: Mapping[str, str] | None) -> str:
    text = str(value)
    return rename.get(text, text) if rename else text


def _group_values(series: pd.Series) -> list[object]:
    values = [v for v in pd.unique(series) if not pd.isna(v)]
    return sorted(values, key=str)


def split_series(df: pd.DataFrame) -> pd.Series:
    """The `split` column as strings, `none` where there is no split column or the cell is empty."""
    if "split" not in df.columns:
        return pd.Series([NO_SPLIT] * len(df), index=df.index, dtype=object)
    return df["split"].map(lambda v: NO_SPLIT if pd.isna(v) else str(v)).astype(object)


def split_category_table(
    df: pd.DataFrame,
    value_col: str,
    *,
    groups: Sequence[str] = ("l2-category", "category"),
    scale: float = 1.0,
    rename: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Rows = split, columns `split`, `Overall`, then one column per group value (see module docstring)."""
    values = pd.to_numeric(df[value_col], errors="raise").astype(float) * scale
    splits = split_series(df)
    split_names = sorted(pd.unique(splits), key=str)
    table = pd.DataFrame({"split": split_names})
    table["Overall"] = values.groupby(splits).mean().reindex(split_names).to_numpy()
    for group in groups:
        if group not in df.columns:
            continue
        col = df[group]
        means = values.groupby([splits, col], dropna=True).mean()
        for val in _group_values(col):
            per_split = [means.get((sp, val), np.nan) for sp in split_names]
            table[_label(val, rename)] = per_split
    return table


def group_means(
    df: pd.DataFrame,
    value_col: str,
    *,
    groups: Sequence[str] = ("l2-category", "category"),
    scale: float = 1.0,
    rename: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Flat metrics over all rows (every split together): `Overall` plus one key per group value."""
    values = pd.to_numeric(df[value_col], errors="raise").astype(float) * scale
    out: dict[str, float] = {"Overall": float(values.mean())}
    for group in groups:
        if group not in df.columns:
            continue
        col = df[group]
        means = values.groupby(col, dropna=True).mean()
        for val in _group_values(col):
            out[_label(val, rename)] = float(means[val])
    return out


def headline_split(splits: Iterable[str]) -> str | None:
    """The split whose Overall VLMEvalKit reports as the headline when a table has several (its
    `_choose_primary_metric_key` over `split=<name>|Overall`: test, then validation, then val, then dev, else the
    first name in order); None for a single split, whose Overall is the headline as it is."""
    names = sorted({str(s) for s in splits})
    if len(names) < 2:
        return None

    def rank(name: str) -> tuple[int, str]:
        key = f"split={name}|overall".lower()
        for bonus, tag in ((4, "split=test"), (3, "split=validation"), (2, "split=val"), (1, "split=dev")):
            if tag in key:
                return -bonus, f"split={name}|Overall"
        return 0, f"split={name}|Overall"

    return min(names, key=rank)


def split_headline(units: pd.DataFrame, value_col: str, metrics: dict[str, float]) -> str:
    """Add `Overall (<split>)` for every split when the rows hold several, and return the name of the headline
    metric VLMEvalKit reports (headline_split), `Overall` otherwise."""
    splits = split_series(units)
    chosen = headline_split(splits.tolist())
    if chosen is None:
        return "Overall"
    values = pd.to_numeric(units[value_col], errors="raise").astype(float)
    for name, mean in values.groupby(splits).mean().items():
        metrics[f"Overall ({name})"] = float(mean)
    return f"Overall ({chosen})"
