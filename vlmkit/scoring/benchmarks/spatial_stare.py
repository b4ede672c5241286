"""STARE's figures on top of the spatial_bench MCQ accuracy (VLMEvalKit's StareBench.evaluate).

A row's category is its `category_agg` (else `category`) cell, stripped and lower-cased. Per category present:
`{category}_accuracy` (percent). The yes/no categories (cube nets and tangram puzzles, with and without visual
simulation) also get `{category}_f1`: the question text maps option letters to yes/no (`A. yes  B. no`), the answer
cell and the read letter are mapped through it (rows where either cannot be are left out) and F1 is taken with `yes`
as the positive label (0 when nothing is a true positive). `macro` averages six terms: the mean of 2d_trans and
2d_trans_vsim, of 3d_trans and 3d_trans_vsim, of the two folding_nets and of the two tangram_puzzle categories
(F1 for these), temporal and perspective (accuracy), each term over the categories that have a figure.

Where vlmkit differs on purpose: VLMEvalKit gives a multiple-choice category with no rows an accuracy of 0 and
averages that 0 into `macro` (and reports it as `{category}_accuracy`); vlmkit leaves absent categories out, so a
subset of STARE is not pulled down by the categories it does not have. `stare_metrics(..., vlmevalkit=True)` gives
VLMEvalKit's figures (with its hits and letters, for the MCQ scorer's VlmevalkitFigure).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing

MCQ_CATEGORIES = ("2d_trans", "2d_trans_vsim", "3d_trans", "3d_trans_vsim", "temporal", "perspective")
BINARY_CATEGORIES = ("folding_nets", "folding_nets_vsim", "tangram_puzzle", "tangram_puzzle_vsim")
MACRO_TERMS = (
    ("2d_trans", "2d_trans_vsim"), ("3d_trans", "3d_trans_vsim"), ("folding_nets", "folding_nets_vsim"),
    ("tangram_puzzle", "tangram_puzzle_vsim"), ("temporal",), ("perspective",),
)  # fmt: skip
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\ufeff]")
_YES_NO = re.compile(r"([A-F])\s*[.:：)）]?\s*(yes|no)", re.IGNORECASE)


def yes_no_letters(question: Any) -> dict[str, str]:
    """{'a': 'yes', 'b': 'no'} from a question text naming `A. yes  B. no`."""
    if not isinstance(question, str):
        return {}
    return {k.lower(): v.lower() for k, v in _YES_NO.findall(_ZERO_WIDTH.sub("", question))}


def yes_f1(truth: Sequence[str], guess: Sequence[str]) -> float:
    tp = sum(t == "yes" and g == "yes" for t, g in zip(truth, guess))
    fp = sum(t != "yes" and g == "yes" for t, g in zip(truth, guess))
    fn = sum(t == "yes" and g != "yes" for t, g in zip(truth, guess))
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def _category(df: pd.DataFrame) -> pd.Series:
    column = "category_agg" if "category_agg" in df.columns else "category" if "category" in df.columns else None
    if column is None:
        return pd.Series(["all"] * len(df))
    return df[column].map(lambda v: str(v).strip().lower()).reset_index(drop=True)


def stare_metrics(df: pd.DataFrame, hits: Sequence[bool], extracted: Sequence[str | None], *,
                  vlmevalkit: bool = False) -> dict[str, float]:
    """STARE's per-category accuracy and F1 and its macro (module docstring), in percent. `vlmevalkit=True`: as
    VLMEvalKit's StareBench.evaluate reports them (for its figure, fed its own hits and letters): every one of the
    ten categories gets `{category}_accuracy`, 0 when it has no rows, and a multiple-choice category without rows
    puts that 0 into `macro` (an absent yes/no category has no F1 and stays out, as in vlmkit)."""
    categories = _category(df)
    hit = pd.Series(list(hits), dtype=bool)
    questions = df["question"].tolist() if "question" in df.columns else [None] * len(df)
    answers = df["answer"].tolist()
    out: dict[str, float] = {}
    scores: dict[str, float] = {}
    for category in (*MCQ_CATEGORIES, *BINARY_CATEGORIES):
        rows = [i for i, c in enumerate(categories) if c == category]
        if not rows:
            if vlmevalkit:
                out[f"{category}_accuracy"] = 0.0
                if category in MCQ_CATEGORIES:
                    scores[category] = 0.0
            continue
        acc = float(hit[rows].mean())
        out[f"{category}_accuracy"] = 100.0 * acc
        if category in MCQ_CATEGORIES:
            scores[category] = acc
            continue
        truth, guess = [], []
        for i in rows:
            mapping = yes_no_letters(questions[i])
            answer = None if is_missing(answers[i]) else str(answers[i]).lower()
            letter = None if extracted[i] is None else extracted[i].lower()
            if answer in mapping and letter in mapping:
                truth.append(mapping[answer])
                guess.append(mapping[letter])
        if truth:
            scores[category] = yes_f1(truth, guess)
            out[f"{category}_f1"] = 100.0 * scores[category]
    terms = []
    for names in MACRO_TERMS:
        have = [scores[n] for n in names if n in scores]
        if have:
            terms.append(sum(have) / len(have))
    if terms:
        out["macro"] = 100.0 * sum(terms) / len(terms)
    return out
