"""MATBench as VLMEvalKit scores it (vlmeval/dataset/matbench.py `mat_evaluate` at e8e78f05, whose figures go to
MATBench_eval_summary.csv: its evaluate returns nothing).

A reply and an answer are normalised: lower-cased, ASCII and Chinese punctuation removed; then, when the text holds a
CJK character (U+4E00-U+9FFF), every space removed, else the articles a/an/the removed and runs of white space made
one space. EM: the normalised texts are equal. F1: tokens are characters when either normalised text holds a CJK
character, else words; the tokens both share are counted once each (a set), precision = shared / reply tokens,
recall = shared / answer tokens; 0 when none is shared; an exact match has F1 1.
Rows are grouped by `category` (code, search) and `split` (simple, hard): figures, fractions, `<category>_<split>_f1`
and `_em` (0 for an empty group), `code_f1_avg`, `code_em_avg`, `search_f1_avg`, `search_em_avg`, and the headline
`overall_f1_avg` with `overall_em_avg`, each the mean over the rows (not over the groups).

Where vlmkit differs: VLMEvalKit leaves out of every figure a row it cannot read as text (its `try` skips it): an
empty reply (NaN in its xlsx), a reply or answer its xlsx round trip turns into a number, and a row of another
category or split. vlmkit reads numbers as their text, scores an empty reply 0 and refuses another category or split
in one line; VLMEvalKit's figure (`EvalResult.vlmevalkit`) leaves those rows out as it does. A failed call scores 0
on both sides. VLMEvalKit prints the file's row 300 first, which fails on a file of fewer than 301 rows.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_cells
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_cells_of
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

CATEGORIES = ("code", "search")
SPLITS = ("simple", "hard")
CHINESE_PUNCTUATION = "！？｡＂＃＄％＆＇（）＊＋，－．／：；＜＝＞＠［＼］＾＿｀｛｜｝～“”‘’、。：《》【】"
_EXCLUDE = set(string.punctuation + CHINESE_PUNCTUATION)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _EXCLUDE)
    if has_chinese(text):
        return text.replace(" ", "")
    return " ".join(_ARTICLES.sub(" ", text).split())


def f1_and_em(reply: str, answer: str) -> tuple[float, int]:
    """(F1, EM) of a reply against the answer (module docstring)."""
    mine, gold = normalize(reply), normalize(answer)
    em = int(mine == gold)
    if em:
        return 1.0, 1
    if has_chinese(mine) or has_chinese(gold):
        mine_tokens, gold_tokens = list(mine), list(gold)
    else:
        mine_tokens, gold_tokens = mine.split(), gold.split()
    shared = len(set(mine_tokens) & set(gold_tokens))
    if shared == 0:
        return 0.0, 0
    precision, recall = shared / len(mine_tokens), shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall), 0


def figures(groups: Sequence[str], f1s: Sequence[float], ems: Sequence[int]) -> dict[str, float]:
    """VLMEvalKit's summary from each scored row's group (`<category>_<split>`), F1 and EM."""
    out: dict[str, float] = {}
    for category in CATEGORIES:
        for split in SPLITS:
            key = f"{category}_{split}"
            rows = [i for i, g in enumerate(groups) if g == key]
            out[f"{key}_f1"] = sum(f1s[i] for i in rows) / len(rows) if rows else 0.0
            out[f"{key}_em"] = sum(ems[i] for i in rows) / len(rows) if rows else 0.0

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    for category in CATEGORIES:
        rows = [i for i, g in enumerate(groups) if g.startswith(f"{category}_")]
        out[f"{category}_f1_avg"] = mean([f1s[i] for i in rows])
        out[f"{category}_em_avg"] = mean([float(ems[i]) for i in rows])
    out["overall_f1_avg"] = mean(list(f1s))
    out["overall_em_avg"] = mean([float(e) for e in ems])
    return out


def _answer_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def score_matbench(df: pd.DataFrame) -> EvalResult:
    """Score MATBench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `category`,
    `split`."""
    what = "MATBench scoring"
    require_columns(df, ("index", "prediction", "answer", "category", "split"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    groups = []
    for index, category, split in zip(df["index"], df["category"], df["split"]):
        if str(category) not in CATEGORIES or str(split) not in SPLITS:
            raise ValueError(f"{what}: row index {index}, field category/split: {category!r}/{split!r} (MATBench has "
                             f"categories {', '.join(CATEGORIES)} and splits {', '.join(SPLITS)})")  # fmt: skip
        groups.append(f"{category}_{split}")
    f1s, ems, errors = [], [], []
    for index, pred, answer in zip(df["index"], df["prediction"], df["answer"]):
        if failed_call(pred):
            errors.append(index)
            f1s.append(0.0)
            ems.append(0)
            continue
        f1, em = f1_and_em(str(pred), _answer_text(answer))
        f1s.append(f1)
        ems.append(em)
    metrics = figures(groups, f1s, ems)
    notes = [f"{len(errors)} failed call(s) score 0: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "group": groups, "f1": f1s, "em": ems})
    return EvalResult(
        scorer="matbench", metrics=metrics, primary="overall_f1_avg", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, groups, f1s),
    )  # fmt: skip


def _vlmevalkit_figure(df: pd.DataFrame, groups: list[str], mine: list[float]) -> VlmevalkitFigure:
    """VLMEvalKit's reading: the cells its xlsx round trip leaves; a row whose reply or answer is not a text then is
    left out."""
    replies = vlmevalkit_cells_of(df["prediction"].tolist())
    answers = vlmevalkit_cells(df["answer"].tolist())
    kept_groups, f1s, ems, dropped, differing = [], [], [], [], []
    for index, pred, reply, answer, group, my_f1 in zip(df["index"], df["prediction"], replies, answers, groups, mine,
                                                        strict=True):  # fmt: skip
        if reply is None:  # a failed call: a miss on both sides
            kept_groups.append(group)
            f1s.append(0.0)
            ems.append(0)
            continue
        if not isinstance(reply, str) or not isinstance(answer, str):
            dropped.append(index)
            continue
        f1, em = f1_and_em(reply, answer)
        kept_groups.append(group)
        f1s.append(f1)
        ems.append(em)
        if f1 != my_f1:
            differing.append(ReadingDifference(index, str(pred), reply, my_f1, f1))
    notes = []
    if dropped:
        notes.append(f"{len(dropped)} row(s) whose reply or answer VLMEvalKit's xlsx round trip leaves as no text are "
                     f"left out of its figures: index {listed(dropped)}")  # fmt: skip
    return VlmevalkitFigure(figures(kept_groups, f1s, ems), "overall_f1_avg", differing, notes)
