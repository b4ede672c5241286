"""TableVQA-Bench as VLMEvalKit scores it (vlmeval/dataset/image_vqa.py TableVQABench.evaluate with
utils/tablevqabench.py, itself from naver-ai/tablevqabench and allennlp-semparse): a leading `Answer: ` is removed
from each reply, then each `split` has its rule, and accuracy x100 is reported per split.

- `vtabfact` (true/false statements): the reply lower-cased; it holds both `true` and `false`: a miss (VLMEvalKit
  leaves it for a manual check and counts it wrong); `true` with answer `1`, or `false` with answer `0`: a hit.
- `vwtq`, `vwtq_syn` (WikiTableQuestions denotations): reply (`||` read as `|`) and answer are split on `|` (with the
  TSV escapes `\\n`, `\\p`, `\\\\` undone) into sets of values (a number, a date `y-m-d` with `xx` placeholders, or a
  normalised string); right when both sets have the same size and every answer value matches a reply value (same
  normalised text, numbers within 1e-6, dates with the same y/m/d).
- `fintabnetqa`: both sides normalised (diacritics, quotes, dashes, citations, trailing parentheses and `.`, case),
  `$ ( ) ,` and unit words removed, thousand/million/billion/% turned into exponents; `fintabnetqa` (VLMEvalKit's
  first figure, "relieved") is right when any of (with units, without units) of the reply equals any of the answer's,
  as numbers when both parse, else as text; `fintabnetqa (exact)` when the two with-units forms are equal.

`Overall` (vlmkit's, not VLMEvalKit's, which reports the splits only) is the mean of the four split figures present.
Where vlmkit differs: a failed call is a miss (`inference_errors`; VLMEvalKit fails on it outside vtabfact); a
number written `nan`/`inf` is read as text (VLMEvalKit fails on it); a split other than the four is refused in one
line; a split absent from the predictions is left out (VLMEvalKit fails).

VLMEvalKit's figure (EvalResult.vlmevalkit): its rules are the ones above, so on the same replies its split figures
are vlmkit's, computed its way (round((right + 1e-9) / (rows + 1e-9), 8) x 100); `Overall` there is vlmkit's mean
of the four (VLMEvalKit prints none). It is not computed (None, and a note says why) where VLMEvalKit stops: a reply
its xlsx round trip turns into NaN or a number (an empty reply, `None`, `N/A`...; a column of numbers: no split's
rule takes a float), a split absent
from the predictions (KeyError), or a vwtq value that float() reads as nan/inf (its NumberValue asserts).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, not_text
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

SPLITS = ("fintabnetqa", "vtabfact", "vwtq", "vwtq_syn")
INFERENCE_ERROR = "inference_error"

# -- normalisation (allennlp-semparse's WTQ evaluator) -------------------------------------------------------------
_CITATIONS = re.compile(r"((?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$")
_PARENS = re.compile(r"(?<!^)( \([^)]*\))*$")
_QUOTED = re.compile(r'^"([^"]*)"$')


def wtq_normalise(text: str) -> str:
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn")
    text = re.sub(r"[‘’´`]", "'", text)
    text = re.sub(r"[“”]", '"', text)
    text = re.sub(r"[‐‑‒–—−]", "-", text)
    while True:
        old = text
        text = _CITATIONS.sub("", text.strip())
        text = _PARENS.sub("", text.strip())
        text = _QUOTED.sub(r"\1", text.strip())
        if text == old:
            break
    if text and text[-1] == ".":
        text = text[:-1]
    return re.sub(r"\s+", " ", text, flags=re.UNICODE).lower().strip()


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        try:
            amount = float(text)
        except ValueError:
            return None
        return None if math.isnan(amount) or math.isinf(amount) else amount


def _date(text: str) -> tuple[int, int, int] | None:
    parts = text.lower().split("-")
    if len(parts) != 3:
        return None
    try:
        year = -1 if parts[0] in ("xx", "xxxx") else int(parts[0])
        month = -1 if parts[1] == "xx" else int(parts[1])
        day = -1 if parts[2] == "xx" else int(parts[2])
    except ValueError:
        return None
    if year == month == day == -1 or not (month == -1 or 1 <= month <= 12) or not (day == -1 or 1 <= day <= 31):
        return None
    return year, month, day


# A value: (kind, key, normalised text); kind "n" (key: the amount), "d" (key: y, m, d) or "s" (key: the text).
Value = tuple[str, Any, str]


def _amount(number: float) -> int | float:
    return int(number) if abs(number - round(number)) < 1e-6 else float(number)


def to_value(text: str) -> Value:
    norm = wtq_normalise(text)
    number = _number(text)
    if number is not None:
        return "n", _amount(number), norm
    ymd = _date(text)
    if ymd is not None:
        if ymd[1] == ymd[2] == -1:
            return "n", ymd[0], norm
        return "d", ymd, norm
    return "s", norm, norm


def to_values(texts: list[str]) -> list[Value]:
    """The distinct values of a list (equal numbers, dates or texts are one value; the first is kept)."""
    seen: dict[tuple[str, Any], Value] = {}
    for text in texts:
        value = to_value(text)
        seen.setdefault((value[0], value[1]), value)
    return list(seen.values())


def _match(target: Value, pred: Value) -> bool:
    if target[2] == pred[2]:
        return True
    if target[0] == "n" and pred[0] == "n":
        return abs(target[1] - pred[1]) < 1e-6
    return target[0] == "d" and pred[0] == "d" and target[1] == pred[1]


def _unescape_list(text: str) -> list[str]:
    return [y.replace(r"\n", "\n").replace(r"\p", "|").replace("\\\\", "\\") for y in text.split("|")]


def wtq_hit(prediction: str, answer: str) -> bool:
    targets = to_values(_unescape_list(answer))
    preds = to_values(_unescape_list(prediction.replace("||", "|")))
    return len(targets) == len(preds) and all(any(_match(t, p) for p in preds) for t in targets)


def tabfact_hit(prediction: str, answer: str) -> tuple[bool, bool]:
    """(right, ambiguous: both true and false in the reply)."""
    pred = prediction.lower()
    if "true" in pred and "false" in pred:
        return False, True
    return ("true" in pred and answer == "1") or ("false" in pred and answer == "0"), False


_UNIT_WORDS = ("dollar", "gallons", "square feet", "shares", "mbtu", "mbpd", "mbbls", "mmbtu", "unit", "gwh", "year",
               "mmcf", "mile", "mboe")  # fmt: skip
_UNITS = re.compile(r"\b(" + "|".join(_UNIT_WORDS) + r")s?\b", re.IGNORECASE)
_CONVERSIONS = ((r" \bthousand\b", "e3"), (r" \bmillion\b", "e6"), (r" \bbillion\b", "e9"), (r"\bthousand\b", "e3"),
                (r"\bmillion\b", "e6"), (r"\bbillion\b", "e9"), (r" ?%", "e-2"))  # fmt: skip


def fintabnet_forms(text: str) -> tuple[Any, list[Any]]:
    """(the with-units form, [with units, without units]): floats when both parse, else texts."""
    s = _UNITS.sub("", re.sub(r"[\$\(\),]", "", wtq_normalise(text)))
    unit_free = s
    for pattern, value in _CONVERSIONS:
        s = re.sub(pattern, value, s)
        unit_free = re.sub(pattern, "", unit_free)
    try:
        return float(s), [float(s), float(unit_free)]
    except ValueError:
        return s, [s, unit_free]


def fintabnet_hits(prediction: str, answer: str) -> tuple[bool, bool]:
    """(relieved: any form equal, exact: the with-units forms equal)."""
    pred, preds = fintabnet_forms(prediction)
    gold, golds = fintabnet_forms(answer)
    return any(p == g for p in preds for g in golds), pred == gold


def score_tablevqa(df: pd.DataFrame) -> EvalResult:
    """Score TableVQA-Bench predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `split`."""
    what = "TableVQA-Bench scoring"
    require_columns(df, ("index", "prediction", "answer", "split"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    hits: list[bool] = []
    exact: list[bool | None] = []
    methods: list[str] = []
    ambiguous = 0
    for row in df.to_dict("records"):
        split = cell_text(row["split"]) or ""
        if split not in SPLITS:
            raise ValueError(f"{what}: row index {row['index']}, field `split`: {split!r} is not one of "
                             f"{', '.join(SPLITS)}")
        pred, answer = row["prediction"], cell_text(row["answer"]) or ""
        if failed_call(pred):
            hits.append(False)
            exact.append(False if split == "fintabnetqa" else None)
            methods.append(INFERENCE_ERROR)
            continue
        reply = re.sub("^Answer: ", "", str(pred))
        methods.append(split)
        if split == "vtabfact":
            hit, unsure = tabfact_hit(reply, answer)
            ambiguous += unsure
            hits.append(hit)
            exact.append(None)
        elif split == "fintabnetqa":
            relieved, same = fintabnet_hits(reply, answer)
            hits.append(relieved)
            exact.append(same)
        else:
            hits.append(wtq_hit(reply, answer))
            exact.append(None)
    splits = df["split"].map(lambda v: cell_text(v) or "").to_numpy()
    per_split = pd.Series(hits, dtype=float).groupby(splits).mean() * 100
    metrics: dict[str, float] = {}
    figures = {s: float(per_split[s]) for s in SPLITS if s in per_split.index}
    metrics["Overall"] = sum(figures.values()) / len(figures)
    for split, value in figures.items():
        metrics[split] = value
        if split == "fintabnetqa":
            rows = splits == "fintabnetqa"
            metrics["fintabnetqa (exact)"] = float(pd.Series([bool(e) for e, r in zip(exact, rows) if r]).mean() * 100)
    errors = methods.count(INFERENCE_ERROR)
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits)), "inference_errors": errors,
              "vtabfact_ambiguous": ambiguous, "by_rule": len(df) - errors, "by_judge": 0, "unread": 0,
              "judge_errors": 0}  # fmt: skip
    notes = ["Overall is vlmkit's mean of the split figures (VLMEvalKit reports the splits only)"]
    if ambiguous:
        notes.append(f"{ambiguous} vtabfact reply(ies) say both true and false: misses (VLMEvalKit: manual check)")
    missing = [s for s in SPLITS if s not in figures]
    if missing:
        notes.append(f"split(s) absent from the predictions: {', '.join(missing)}")
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "method": methods, "hit": hits,
                               "exact": pd.Series(exact, dtype=object)})  # fmt: skip
    table = pd.DataFrame({"split": list(figures), "average_scores": list(figures.values())})
    figure, why_not = tablevqa_vlmevalkit_figure(df, hits, exact)
    if why_not:
        notes.append(why_not)
    return EvalResult(
        scorer="tablevqa", metrics=metrics, primary="Overall", per_sample=per_sample, table=table,
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def vlmevalkit_accuracy(right: int, rows: int) -> float:
    """VLMEvalKit's tablevqabench accuracy: round((right + 1e-9) / (rows + 1e-9), 8) x 100."""
    return round((right + 1e-9) / (rows + 1e-9), 8) * 100


def _stops_wtq(text: str) -> bool:
    """VLMEvalKit's NumberValue.parse asserts on a value that int() refuses and float() reads as nan or inf."""
    for piece in _unescape_list(text.replace("||", "|")):
        try:
            int(piece)
        except ValueError:
            try:
                amount = float(piece)
            except ValueError:
                continue
            if math.isnan(amount) or math.isinf(amount):
                return True
    return False


def tablevqa_vlmevalkit_figure(df: pd.DataFrame, hits: list[bool],
                               exact: list[bool | None]) -> tuple[VlmevalkitFigure | None, str | None]:
    """(VLMEvalKit's figure, None), or (None, why it stops) (module docstring)."""
    splits = [cell_text(v) or "" for v in df["split"]]
    absent = [s for s in SPLITS if s not in splits]
    if absent:
        return None, f"VLMEvalKit's figure not computed: it stops on a missing split ({', '.join(absent)})"
    stops = []
    predictions = df["prediction"].tolist()
    for index, pred, answer, split, stop in zip(df["index"], predictions, df["answer"], splits, not_text(predictions)):
        if stop:
            stops.append(index)
        elif split in ("vwtq", "vwtq_syn"):
            reply = None if failed_call(pred) else re.sub("^Answer: ", "", str(pred))
            if _stops_wtq(cell_text(answer) or "") or (reply is not None and _stops_wtq(reply)):
                stops.append(index)
    if stops:
        return None, (f"VLMEvalKit's figure not computed: it stops on {len(stops)} row(s) (a reply read back from "
                      f"its xlsx as NaN or a number, or a vwtq value float() reads as nan/inf); index {listed(stops)}")
    metrics: dict[str, float] = {}
    for split in SPLITS:
        rows = [pos for pos, s in enumerate(splits) if s == split]
        metrics[split] = vlmevalkit_accuracy(sum(hits[p] for p in rows), len(rows))
        if split == "fintabnetqa":
            metrics["fintabnetqa (exact)"] = vlmevalkit_accuracy(sum(bool(exact[p]) for p in rows), len(rows))
    metrics["Overall"] = sum(metrics[s] for s in SPLITS) / len(SPLITS)
    return VlmevalkitFigure(metrics=metrics, primary="Overall", notes=[
        "VLMEvalKit's rules are vlmkit's: the same split figures; it prints no Overall (here: the mean of the four)"
    ]), None
