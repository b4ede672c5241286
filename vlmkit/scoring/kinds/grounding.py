"""Box grounding scored as VLMEvalKit scores TDBench grounding (vlmeval/dataset/image_vqa.py TDBenchGrounding.evaluate
with utils/tdbench.py): one box `[x1, y1, x2, y2]` (relative coordinates) is read from the reply and from the
`answer`, and the row scores 1/0 by `centroid` containment (the reply box's centre lies inside the answer box, edges
included) or its IoU by `iou`; the figure is the mean over rows, as a fraction: `Average Centroid Containment` or
`Average IoU`.

Reading (`read_box`): line breaks removed, then the four numbers of the pattern VLMEvalKit uses (each a single digit
with an optional decimal part, `0`, `0.25`, `1`, `.5`, separated by a comma and at most one space) must occur exactly
once; anything else reads no box (the row scores 0, `unread`). A box of zero union area scores 0 by IoU.

Where vlmkit differs: VLMEvalKit selects the method through `--judge` (centroid unless `--judge iou`); vlmkit takes it
from the catalog option `method`. A failed call scores 0 (`inference_errors`). VLMEvalKit's rotational evaluation,
which merges the result files of the four rotated copies of the benchmark, is not done (each copy is scored alone).
VLMEvalKit's figure (`EvalResult.vlmevalkit`) applies the same rule to the texts its xlsx round trip leaves; the two
agree unless a cell changes there (an all-number answer column, say).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_cells_of
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

METHODS = {"centroid": "Average Centroid Containment", "iou": "Average IoU"}
_NUM = r"(\d?(?:\.\d+)?)"
_BOX = re.compile(r",\s?".join([_NUM] * 4))
Box = tuple[float, float, float, float]


def read_box(text: str) -> Box | None:
    found = _BOX.findall(text.replace("\n", ""))
    if len(found) != 1:
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in found[0])
    except ValueError:  # an empty number: `,,,`
        return None
    return x0, y0, x1, y1


def centroid_containment(pred: Box, gold: Box) -> float:
    cx, cy = (pred[0] + pred[2]) / 2, (pred[1] + pred[3]) / 2
    return float(gold[0] <= cx <= gold[2] and gold[1] <= cy <= gold[3])


def box_iou(pred: Box, gold: Box) -> float:
    x0, y0 = max(pred[0], gold[0]), max(pred[1], gold[1])
    x1, y1 = min(pred[2], gold[2]), min(pred[3], gold[3])
    if x1 < x0 or y1 < y0:
        return 0.0
    inter = (x1 - x0) * (y1 - y0)
    union = (pred[2] - pred[0]) * (pred[3] - pred[1]) + (gold[2] - gold[0]) * (gold[3] - gold[1]) - inter
    return inter / union if union else 0.0


def score_grounding(df: pd.DataFrame, method: str = "centroid") -> EvalResult:
    """Score box predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (the box)."""
    if method not in METHODS:
        raise ValueError(f"grounding scoring: method {method!r}; choose one of {', '.join(METHODS)}")
    what = "grounding scoring"
    require_columns(df, ("index", "prediction", "answer"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    measure = centroid_containment if method == "centroid" else box_iou
    scores: list[float] = []
    reads: list[str] = []
    for pred, answer in zip(df["prediction"].tolist(), df["answer"].tolist(), strict=True):
        gold = read_box(cell_text(answer) or "")
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            scores.append(0.0)
            reads.append("inference_error")
            continue
        box = read_box(str(pred))
        if gold is None:
            reads.append("invalid_target")
        elif box is None:
            reads.append("unread")
        else:
            reads.append("box")
        scores.append(measure(box, gold) if box is not None and gold is not None else 0.0)
    name = METHODS[method]
    tally = Counter(reads)
    counts = {"total": len(df), "scored": len(df), "boxes": tally["box"], "unread": tally["unread"],
              "inference_errors": tally["inference_error"], "invalid_target": tally["invalid_target"],
              "by_rule": tally["box"], "by_judge": 0, "judge_errors": 0}  # fmt: skip
    notes = ["VLMEvalKit's rotational evaluation across the four rotated copies is not done: each is scored alone"]
    if tally["unread"]:
        notes.append(f"{tally['unread']} reply(ies) hold no single [x1, y1, x2, y2] box (scored 0, as in VLMEvalKit)")
    if tally["invalid_target"]:
        notes.append(f"{tally['invalid_target']} row(s) have an answer that is not one box (scored 0)")
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "read": reads, "score": scores})
    metrics = {name: sum(scores) / len(scores)}
    return EvalResult(
        scorer="grounding", metrics=metrics, primary=name, per_sample=per_sample,
        table=pd.DataFrame({"Metric": [name, "Total Samples"], "Score": [metrics[name], len(scores)]}),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, name, measure, scores),
    )  # fmt: skip


def _vlmevalkit_figure(
    df: pd.DataFrame, name: str, measure: Callable[[Box, Box], float], scores: list[float]
) -> VlmevalkitFigure:
    """The same rule on the texts VLMEvalKit's xlsx round trip leaves (`str()` of reply and answer; an empty reply
    is `nan`, which holds no box either): rows whose score differs are listed; a failed call is 0 on both sides."""
    theirs: list[float] = []
    differing: list[ReadingDifference] = []
    cells = vlmevalkit_cells_of(df["prediction"].tolist())
    answers = vlmevalkit_texts(df["answer"].tolist())
    preds = df["prediction"].tolist()
    for index, pred, cell, answer, mine in zip(df["index"].tolist(), preds, cells, answers, scores, strict=True):
        box, gold = (None, None) if cell is None else (read_box(str(cell)), read_box(answer))
        score = measure(box, gold) if box is not None and gold is not None else 0.0
        theirs.append(score)
        if score != mine:
            differing.append(ReadingDifference(index, str(pred), str(cell), mine, score))
    return VlmevalkitFigure({name: sum(theirs) / len(theirs)}, name, differing)
