"""CC-OCR's text-reading tracks (multi_lan_ocr, multi_scene_ocr) as VLMEvalKit scores them
(vlmeval/dataset/image_ccocr.py with utils/ccocr_evaluator/ocr_evaluator.py at e8e78f05).

A row's reply and answer become token lists: tabs and line breaks to spaces, `###` and `***` removed, runs of
white space to one space, then split on spaces (word level) or into characters with the spaces removed (character
level), each token lower-cased, and (scene OCR at word level) cut to its ASCII letters and digits; empty tokens are
dropped. Character level is VLMEvalKit's rule on the row's `split` cell: `Arabic`, `Japanese`, `Korean`, or a split
containing `zh`. A row scores the F1 of the tokens both lists share (counted with multiplicity):
recall = right / (answer tokens + 1e-9), precision = right / (reply tokens + 1e-9), F1 = 2RP / (R + P + 1e-9).
A sub-dataset (`category`_`l2-category`_`split`) scores the mean F1 of its rows (`macro_f1_score`, sum / (n + 1e-9))
and the F1 of its summed counts (`mirco_f1_score`, VLMEvalKit's spelling). Figures, fractions: `lan_ocr` /
`scene_ocr` = the mean macro F1 of the sub-datasets of that track, `total` = the mean of the tracks; vlmkit adds
`<split>: macro_f1_score` and `<split>: mirco_f1_score` per sub-dataset.

Where vlmkit differs: a failed call has no reply and scores 0, as VLMEvalKit's (it leaves the row's reply out,
which reads as empty); VLMEvalKit keys the rows of a sub-dataset by `image_name`, so of two rows with the same name
only the last counts: vlmkit counts every row (VLMEvalKit's figure does as VLMEvalKit, and says so).
The key information extraction track (category `kie`) is scored as vlmkit.scoring.benchmarks.ccocr_kie says: per
sub-dataset `<split>: f1_score`, `<split>: acc`, `<split>: response_success_ratio`, and the track's figure `kie` (the
mean `acc`), a row's per-sample score its tree accuracy.
The document-parsing track (category `doc_parsing`) is scored as vlmkit.scoring.benchmarks.ccocr_parsing says for
its `doc`, `formula` and `molecular` sub-datasets and as vlmkit.scoring.benchmarks.ccocr_tables says for its tables
(TEDS, `l2-category` `table`; needs the optional lxml and apted): `<split>: score` per sub-dataset, the track's
figure `doc_parsing`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.benchmarks.ccocr_kie import KieRow, kie_row, kie_summary
from vlmkit.scoring.benchmarks.ccocr_parsing import OPS, parsing_score
from vlmkit.scoring.benchmarks.ccocr_tables import TABLE_OP, missing_library, table_score
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

TRACKS = {"multi_lan_ocr": "lan_ocr", "multi_scene_ocr": "scene_ocr", "kie": "kie", "doc_parsing": "doc_parsing"}
KIE, PARSING = "kie", "doc_parsing"  # (TRACKS: category -> its figure)
CHARACTER_LEVEL_SPLITS = ("Arabic", "Japanese", "Korean")  # and any split containing "zh"
_EPS = 1e-9


def character_level(split: str) -> bool:
    return split in CHARACTER_LEVEL_SPLITS or "zh" in split


def tokens(text: str, *, word_level: bool, alphanum_only: bool) -> list[str]:
    text = text.replace("\t", " ").replace("\n", " ").replace("###", "").replace("***", "")
    text = re.sub(r"\s+", " ", text)
    parts = text.split(" ") if word_level else list(text.replace(" ", ""))
    out = [t.lower() for t in parts]
    if alphanum_only:
        out = [re.sub("[^A-Za-z0-9]+", "", t) for t in out]
    return [t for t in out if t]


def shared(answer: Sequence[str], reply: Sequence[str]) -> int:
    mine = Counter(reply)
    return sum(min(n, mine.get(token, 0)) for token, n in Counter(answer).items())


def row_counts(reply: str, answer: str, category: str, split: str) -> tuple[int, int, int]:
    """(right, answer tokens, reply tokens) of one row."""
    word_level = not character_level(split)
    alnum = category == "multi_scene_ocr" and word_level
    gold = tokens(answer.strip(), word_level=word_level, alphanum_only=alnum)
    pred = tokens(reply.strip(), word_level=word_level, alphanum_only=alnum)
    return shared(gold, pred), len(gold), len(pred)


def f1(right: int, n_gold: int, n_pred: int) -> float:
    recall, precision = right / (n_gold + _EPS), right / (n_pred + _EPS)
    return 2 * recall * precision / (recall + precision + _EPS)


# a text-reading row's (right, answer tokens, reply tokens), a KIE row, or a document-parsing row's score
Row = tuple[int, int, int] | KieRow | float


def row_score(row: Row) -> float:
    """A row's own score: its token F1 (text reading), tree accuracy (KIE) or edit-distance score (parsing)."""
    if isinstance(row, KieRow):
        return row.acc
    return float(row) if isinstance(row, float) else f1(*row)


def figures(groups: dict[tuple[str, str, str], list[Row]]) -> dict[str, float]:
    """VLMEvalKit's figures (and the per-split ones) from each sub-dataset's rows' counts."""
    out: dict[str, float] = {}
    by_track: dict[str, list[float]] = {}
    for (category, _, split), counts in groups.items():
        if category == KIE:
            summary = kie_summary(counts)  # type: ignore[arg-type]
            out.update({f"{split}: {name}": value for name, value in summary.items()})
            by_track.setdefault(TRACKS[category], []).append(summary["acc"])
            continue
        if category == PARSING:
            out[f"{split}: score"] = sum(counts) / len(counts)  # type: ignore[arg-type]
            by_track.setdefault(TRACKS[category], []).append(out[f"{split}: score"])
            continue
        macro = sum(f1(*c) for c in counts) / (len(counts) + _EPS)
        right, gold, pred = (sum(c[i] for c in counts) for i in range(3))
        out[f"{split}: macro_f1_score"] = macro
        out[f"{split}: mirco_f1_score"] = f1(right, gold, pred)
        by_track.setdefault(TRACKS[category], []).append(macro)
    tracks = {track: sum(v) / len(v) for track, v in by_track.items()}
    return {**tracks, "total": sum(tracks.values()) / len(tracks), **out}


def score_ccocr(df: pd.DataFrame) -> EvalResult:
    """Score CC-OCR text-reading replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`,
    `category` (multi_lan_ocr or multi_scene_ocr), `l2-category`, `split`, `image_name`."""
    what = "CC-OCR scoring"
    require_columns(df, ("index", "prediction", "answer", "category", "l2-category", "split", "image_name"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    records = df.to_dict("records")
    other = sorted({str(r["category"]) for r in records} - set(TRACKS))
    if other:
        raise ValueError(f"{what}: categories {', '.join(other)} are not CC-OCR's; it scores {', '.join(TRACKS)}")
    parsing_ops = {str(r["l2-category"]) for r in records if r["category"] == PARSING}
    ops = sorted(parsing_ops - {*OPS, TABLE_OP})
    if ops:
        raise ValueError(f"{what}: document parsing of {', '.join(ops)} is not CC-OCR's; it scores "
                         f"{', '.join((*OPS, TABLE_OP))}")  # fmt: skip
    if TABLE_OP in parsing_ops and missing_library():
        raise ValueError(f"{what}: {missing_library()}")
    groups: dict[tuple[str, str, str], list[Row]] = {}
    per_row: list[float] = []
    errors = []
    for r in records:
        key = (str(r["category"]), str(r["l2-category"]), str(r["split"]))
        if failed_call(r["prediction"]):
            errors.append(r["index"])
        counts = _row(r, None if failed_call(r["prediction"]) else str(r["prediction"]), key)
        groups.setdefault(key, []).append(counts)
        per_row.append(row_score(counts))
    metrics = figures(groups)
    notes = []
    if errors:
        notes.append(f"{len(errors)} failed call(s) score 0, as in VLMEvalKit: index {listed(errors)}")
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "f1": per_row})
    return EvalResult(
        scorer="ccocr", metrics=metrics, primary="total", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(records, vlmevalkit_replies(df["prediction"].tolist()), per_row),
    )  # fmt: skip


def _row(r: dict[str, Any], reply: str | None, key: tuple[str, str, str]) -> Row:
    """A row's counts; `reply` None for a failed call (text reading: an empty reply; KIE: no prediction)."""
    if key[0] == KIE:
        return kie_row(reply, r["answer"], f"CC-OCR scoring: row index {r['index']}, field answer")
    if key[0] == PARSING and key[1] == TABLE_OP:
        return table_score(reply, str(r["answer"]))
    if key[0] == PARSING:
        return parsing_score(reply, str(r["answer"]), key[1])
    return row_counts(reply or "", str(r["answer"]), key[0], key[2])


def _vlmevalkit_figure(records: list[dict[str, Any]], replies: list[str | None], mine: list[float]
                       ) -> VlmevalkitFigure:  # fmt: skip
    """VLMEvalKit's reading: the reply its xlsx round trip leaves (a failed call left out: empty), the rows of a
    sub-dataset keyed by image_name (the last of a repeated name counts)."""
    keyed: dict[tuple[str, str, str], dict[str, Row]] = {}
    differing = []
    for r, reply, my_score in zip(records, replies, mine, strict=True):
        key = (str(r["category"]), str(r["l2-category"]), str(r["split"]))
        counts = _row(r, reply, key)
        keyed.setdefault(key, {})[str(r["image_name"])] = counts
        if reply is not None and row_score(counts) != my_score:
            differing.append(ReadingDifference(r["index"], str(r["prediction"]), reply, my_score, row_score(counts)))
    groups = {key: list(rows.values()) for key, rows in keyed.items()}
    notes = []
    dropped = len(records) - sum(len(v) for v in groups.values())
    if dropped:
        notes.append(f"{dropped} row(s) repeat an image_name of their sub-dataset: VLMEvalKit counts only the last")
    return VlmevalkitFigure(figures(groups), "total", differing, notes)
