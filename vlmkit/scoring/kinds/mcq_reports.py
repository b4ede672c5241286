"""Figures VLMEvalKit reports for some MCQ benchmarks instead of its usual split/category table, computed from the
per-row hits of vlmkit.scoring.kinds.mcq.score_mcq (the rows are read and judged exactly as for any MCQ benchmark).

- `paired_report` (MMVP, VLMEvalKit's report_acc_MMVP): in index order, rows 2i and 2i+1 ask the same question of
  two images; `Overall` is the fraction of pairs with both rows right (the headline), `Average` the fraction of rows.
- `setting_report` (MMSci, report_acc_MMSci): rows of the settings Fig2Cap, SubFig2Cap and SubCap2Fig only; the
  accuracy per setting of each `subject`, of each `category` (named `CATEGORY_<category>`) and over all rows
  (`Overall`), each with `Avg`, the mean of its settings (a subject without rows in a setting counts 0 there, as
  VLMEvalKit fills it). The table has one row per setting and `Avg` (VLMEvalKit's table, transposed into vlmkit's
  row-per-split layout); the metrics are the `Avg` of each, `Overall` being the headline, and the `Overall` of each
  setting.

Intervals (vlmkit.scoring.common.intervals): MMVP's Overall is Wilson over the pairs (each pair one 0/1 unit); MMSci's
Overall, a mean of setting accuracies, is bootstrapped with rows resampled within their setting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.intervals import stratum_mean_of_means, wilson
from vlmkit.scoring.result import EvalResult

MMSCI_SETTINGS = ("Fig2Cap", "SubFig2Cap", "SubCap2Fig")


def _hits(result: EvalResult, column: str = "hit") -> np.ndarray:
    return result.per_sample[column].to_numpy(dtype=float)


def _index_order(indices: pd.Series) -> np.ndarray:
    """Row positions in `index` order (numbers by value, as VLMEvalKit sorts its integer indices)."""
    numeric = pd.to_numeric(indices, errors="coerce")
    key = numeric if not numeric.isna().any() else indices.astype(str)
    return np.argsort(key.to_numpy(), kind="stable")


def paired_report(result: EvalResult, df: pd.DataFrame) -> EvalResult:
    """MMVP's figures from score_mcq's result on df (module docstring)."""
    require_columns(df, ("index", "question"), "MMVP pairs")
    order = _index_order(df["index"].reset_index(drop=True))
    if len(order) % 2:
        raise ValueError(f"MMVP pairs: {len(order)} rows, an odd number (rows 2i and 2i+1 in index order pair up)")
    indices = df["index"].to_numpy()[order]
    questions = df["question"].astype(str).to_numpy()[order]
    hits = _hits(result)[order]
    bad = [(indices[i], indices[i + 1]) for i in range(0, len(order), 2) if questions[i] != questions[i + 1]]
    if bad:
        raise ValueError(
            f"MMVP pairs: rows {bad[0][0]} and {bad[0][1]} (consecutive in index order) ask different questions; "
            f"{len(bad)} such pair(s)"
        )
    both = hits[0::2] * hits[1::2]
    metrics = {"Overall": float(both.mean()), "Average": float(hits.mean())}
    result.metrics = metrics
    if result.vlmevalkit is not None:
        theirs = _hits(result, "vlmevalkit_hit")[order]
        result.vlmevalkit.metrics = {"Overall": float((theirs[0::2] * theirs[1::2]).mean()),
                                     "Average": float(theirs.mean())}
        result.vlmevalkit.primary = "Overall"
    result.primary = "Overall"
    result.interval = wilson(both, "Overall", unit="question pair")
    result.table = pd.DataFrame([{"Average": metrics["Average"], "Overall": metrics["Overall"]}])
    result.scorer = "mmvp"
    result.counts["pairs"] = len(both)
    result.counts["pair_hits"] = int(both.sum())
    result.notes.append("Overall is over question pairs (both rows right), Average over rows, as VLMEvalKit's MMVP")
    return result


def _setting_figures(rows: pd.DataFrame, present: list[str]) -> dict[str, dict[str, float]]:
    """{label: {setting: acc, ..., Avg: mean}} per subject, per category (`CATEGORY_<category>`) and `Overall`, over
    the rows of MMSci's settings (columns setting, subject, category, hit)."""

    def per_setting(group: str | None) -> dict[str, dict[str, float]]:
        if group is None:
            accs = rows.groupby("setting")["hit"].mean()
            values = {s: float(accs[s]) for s in present}
            return {"Overall": {**values, "Avg": float(np.mean(list(values.values())))}}
        table = rows.groupby([group, "setting"])["hit"].mean().unstack(fill_value=0.0)
        out = {}
        for label, accs in table.iterrows():
            values = {s: float(accs.get(s, 0.0)) for s in present}
            name = f"CATEGORY_{label}" if group == "category" else str(label)
            out[name] = {**values, "Avg": float(np.mean(list(values.values())))}
        return out

    return {**per_setting("subject"), **per_setting("category"), **per_setting(None)}


def _setting_metrics(figures: dict[str, dict[str, float]], present: list[str]) -> dict[str, float]:
    metrics = {"Overall": figures["Overall"]["Avg"]}
    metrics.update({setting: figures["Overall"][setting] for setting in present})
    metrics.update({name: values["Avg"] for name, values in figures.items() if name != "Overall"})
    return metrics


def setting_report(result: EvalResult, df: pd.DataFrame) -> EvalResult:
    """MMSci's figures from score_mcq's result on df (module docstring)."""
    require_columns(df, ("setting", "subject", "category"), "MMSci settings")
    rows = pd.DataFrame({
        "setting": df["setting"].to_numpy(), "subject": df["subject"].to_numpy(),
        "category": df["category"].to_numpy(), "hit": _hits(result),
    })  # fmt: skip
    in_settings = rows["setting"].isin(MMSCI_SETTINGS)
    kept = rows[in_settings]
    if kept.empty:
        raise ValueError(f"MMSci settings: no row has a `setting` of {', '.join(MMSCI_SETTINGS)}")
    present = [s for s in MMSCI_SETTINGS if s in set(kept["setting"])]
    figures = _setting_figures(kept, present)
    result.table = pd.DataFrame(
        [{"split": column, **{name: values[column] for name, values in figures.items()}} for column in
         [*present, "Avg"]]
    )
    result.metrics = _setting_metrics(figures, present)
    result.primary = "Overall"
    result.interval = stratum_mean_of_means(kept["hit"].to_numpy(dtype=float), kept["setting"].to_numpy(), "Overall",
                                            result.metrics["Overall"])
    if result.vlmevalkit is not None:
        theirs = rows.assign(hit=_hits(result, "vlmevalkit_hit"))[in_settings]
        result.vlmevalkit.metrics = _setting_metrics(_setting_figures(theirs, present), present)
        result.vlmevalkit.primary = "Overall"
    result.scorer = "mmsci"
    result.counts["setting_rows"] = len(kept)
    dropped = len(rows) - len(kept)
    if dropped:
        result.notes.append(
            f"{dropped} row(s) of another `setting` are not in the figures (VLMEvalKit leaves them out)"
        )
    missing = [s for s in MMSCI_SETTINGS if s not in present]
    if missing:
        result.notes.append(f"no row of setting(s) {listed(missing)}: Avg is over the other settings (VLMEvalKit "
                            "stops with a KeyError)")
    return result
