"""CRPE (CRPE_EXIST, CRPE_RELATION) as VLMEvalKit scores it (vlmeval/dataset/image_vqa.py CRPE.evaluate with
utils/crpe.is_correct, at vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT).

A reply is right (`crpe_hit`) when: it is one character and equals the answer's first character (`letter`); or it
starts with A-D and that letter equals the answer's first character (`leading_letter`); otherwise when the answer
without its first four characters (the `(A) ` of `(A) text`), lower-cased, is part of the lower-cased reply
(`option_text`). Kept as VLMEvalKit has it so figures compare: an answer of four characters or fewer leaves nothing
to look for in the last case, so every reply that does not start with A-D counts as right there; such rows are
counted (`empty_text_target`) and named in a note.

Groups of 4 (the headline). CRPE ("Circular-based Relation Probing Evaluation") asks each question once per choice
with the choices and the answer circularly shifted (4 consecutive rows of the TSV), and its authors' CircularEval
counts a question right only when every shift is answered right (huggingface.co/datasets/OpenGVLab/CRPE README).
VLMEvalKit does the same since 2025-09-01 (commit 28278915, "fix CRPE eval": every 4 consecutive rows of its
prediction file are one group, right when all 4 are right). Published CRPE figures follow that convention, so
vlmkit's `exist`, `subject`, `predicate`, `object` and `total` (primary) are over groups too, with the same names as
VLMEvalKit's; the per-row accuracies
(what VLMEvalKit reported before the fix) are kept as `rows/<category>` and `rows/total`. Groups are the rows in the
order given (the TSV's). A group is filed under its first row's category; a group whose rows disagree on the
category is named in a note (VLMEvalKit files it under the last row it looked at: the first wrong one, or the 4th).

Where vlmkit differs: a failed call (no prediction) is a miss (`inference_errors`); an empty reply is a miss. A
category other than the four is reported under its own name (VLMEvalKit fails on it). A trailing group of fewer than
4 rows (a subset run) counts as a group, right when all its rows are (VLMEvalKit refuses a row count that is not a
multiple of 4: its figure is then not computed).

VLMEvalKit's figure (EvalResult.vlmevalkit): its group scoring on the replies as it reads them back from its xlsx
(vlmkit.scoring.common.vlmevalkit_replies: an empty reply, `None`, `N/A`... are the text `nan`, which its rule
reads as text; a failed call is a miss on both sides), each group filed under VLMEvalKit's category; the rows whose
verdict differs are listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.vlmevalkit_replies import changed_replies, failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

INFERENCE_ERROR = "inference_error"
CATEGORIES = ("exist", "subject", "predicate", "object")
GROUP_SIZE = 4
ROWS = "rows/"


def crpe_hit(prediction: str, answer: str) -> tuple[bool, str]:
    """(right, how it was decided) for one reply and its answer, by VLMEvalKit's is_correct."""
    if not prediction:
        return False, "empty"
    if len(prediction) == 1:
        return bool(answer) and prediction[0] == answer[0], "letter"
    if prediction[0] in "ABCD":
        return bool(answer) and prediction[0] == answer[0], "leading_letter"
    return answer[4:].lower() in prediction.lower(), "option_text"


def group_starts(n_rows: int) -> range:
    """The first row of each group of 4 consecutive rows (the last group may be shorter)."""
    return range(0, n_rows, GROUP_SIZE)


def accuracies(hits: Sequence[bool], categories: Sequence[str]) -> dict[str, float]:
    """Accuracy per category (the four first, in order, then any other sorted) and `total`, as fractions."""
    by_category = pd.Series(list(hits), dtype=float).groupby(list(categories)).mean()
    order = [c for c in CATEGORIES if c in by_category.index]
    order += sorted(c for c in by_category.index if c not in CATEGORIES)
    out = {c: float(by_category[c]) for c in order}
    out["total"] = float(sum(hits) / len(hits))
    return out


def vlmkit_groups(hits: Sequence[bool], categories: Sequence[str]) -> tuple[list[bool], list[str], list[int]]:
    """(group right, group category, first rows of groups whose categories disagree): right when all rows are."""
    right, cats, mixed = [], [], []
    for start in group_starts(len(hits)):
        right.append(all(hits[start:start + GROUP_SIZE]))
        cats.append(categories[start])
        if len(set(categories[start:start + GROUP_SIZE])) > 1:
            mixed.append(start)
    return right, cats, mixed


def vlmevalkit_groups(hits: Sequence[bool], categories: Sequence[str]) -> tuple[list[bool], list[str]]:
    """VLMEvalKit's loop: a group stops at its first wrong row and is filed under the last row looked at."""
    right, cats = [], []
    for start in group_starts(len(hits)):
        last = start
        for pos in range(start, start + GROUP_SIZE):
            last = pos
            if not hits[pos]:
                break
        right.append(all(hits[start:start + GROUP_SIZE]))
        cats.append(categories[last])
    return right, cats


def score_crpe(df: pd.DataFrame) -> EvalResult:
    """Score CRPE predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `category`;
    rows in the TSV's order (its groups of 4 are consecutive rows)."""
    what = "CRPE scoring"
    require_columns(df, ("index", "prediction", "answer", "category"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    indexes = df["index"].tolist()
    targets = [cell_text(answer) or "" for answer in df["answer"].tolist()]
    predictions = df["prediction"].tolist()
    categories = [cell_text(v) or "" for v in df["category"].tolist()]
    hits: list[bool] = []
    methods: list[str] = []
    empty_text: list[Any] = []
    for index, pred, target in zip(indexes, predictions, targets):
        if failed_call(pred):
            hit, method = False, INFERENCE_ERROR
        else:
            hit, method = crpe_hit(str(pred), target)
            if method == "option_text" and not target[4:]:
                empty_text.append(index)
        hits.append(hit)
        methods.append(method)

    group_right, group_cats, mixed = vlmkit_groups(hits, categories)
    metrics = accuracies(group_right, group_cats)
    metrics.update({ROWS + name: value for name, value in accuracies(hits, categories).items()})
    tally = Counter(methods)
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits)), "groups": len(group_right),
              "groups_right": int(sum(group_right))}
    counts.update({m: tally[m] for m in ("letter", "leading_letter", "option_text", "empty")})
    counts.update({"inference_errors": tally[INFERENCE_ERROR], "empty_text_target": len(empty_text),
                   "by_rule": len(df) - tally[INFERENCE_ERROR], "by_judge": 0, "unread": 0, "judge_errors": 0})
    notes = [
        f"scored in groups of {GROUP_SIZE} consecutive rows (a question right only when all of its circular shifts "
        f"are, CRPE's CircularEval, as VLMEvalKit since 2025-09): {counts['groups_right']} of {len(group_right)} "
        f"groups right; per-row accuracy under rows/ ({ROWS}total {metrics[ROWS + 'total']:.4f})"
    ]
    if empty_text:
        notes.append(
            f"{len(empty_text)} row(s) have an answer of 4 characters or fewer and a reply not starting with A-D: "
            f"VLMEvalKit's rule (answer[4:] in reply) counts them right, and so does vlmkit: index {listed(empty_text)}"
        )
    if len(df) % GROUP_SIZE:
        notes.append(f"{len(df)} rows is not a multiple of {GROUP_SIZE}: the last group has {len(df) % GROUP_SIZE} "
                     "row(s) and counts as a group (VLMEvalKit refuses such a file)")
    if mixed:
        notes.append(f"{len(mixed)} group(s) mix categories, filed under their first row's: index "
                     f"{listed([indexes[p] for p in mixed])}")
    unknown = [c for c in metrics if "/" not in c and c != "total" and c not in CATEGORIES]
    if unknown:
        notes.append(f"categories outside exist/subject/predicate/object reported as they are: {', '.join(unknown)}")
    # group_hit: the row's group right (the unit of `total`, so its interval is over groups, not rows)
    per_sample = pd.DataFrame({"index": indexes, "method": methods, "hit": hits,
                               "group": [pos // GROUP_SIZE for pos in range(len(df))],
                               "group_hit": [bool(group_right[pos // GROUP_SIZE]) for pos in range(len(df))]})
    return EvalResult(
        scorer="crpe", metrics=metrics, primary="total", per_sample=per_sample,
        table=pd.DataFrame([{k: v for k, v in metrics.items() if not k.startswith(ROWS)}]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=crpe_vlmevalkit_figure(indexes, predictions, targets, categories, hits),
    )  # fmt: skip


def crpe_vlmevalkit_figure(indexes: Sequence[Any], predictions: Sequence[Any], targets: Sequence[str],
                           categories: Sequence[str], vlmkit_hits: Sequence[bool]) -> VlmevalkitFigure | None:
    """VLMEvalKit's group figure on the replies as it reads them; None when it would refuse the file (a row count
    that is not a multiple of 4)."""
    if len(predictions) % GROUP_SIZE:
        return None
    hits: list[bool] = []
    differing: list[ReadingDifference] = []
    quirks: list[Any] = []
    texts = vlmevalkit_replies(predictions)
    for index, pred, text, changed, target, mine in zip(indexes, predictions, texts, changed_replies(predictions),
                                                        targets, vlmkit_hits):
        # is_correct's answer[0] on an empty answer fails in VLMEvalKit; vlmkit's crpe_hit reads it as a miss.
        hit = False if text is None else crpe_hit(text, target)[0]
        hits.append(hit)
        if changed:
            quirks.append(index)
        if hit != mine:
            differing.append(ReadingDifference(index, None if pred is None else str(pred), text,
                                               float(mine), float(hit)))
    group_right, group_cats = vlmevalkit_groups(hits, categories)
    metrics = accuracies(group_right, group_cats)
    metrics.update({ROWS + name: value for name, value in accuracies(hits, categories).items()})
    notes = ["groups of 4 consecutive rows, right when all 4 are; a group is filed under the category of the first "
             "wrong row, else the 4th (VLMEvalKit's loop)"]
    if quirks:
        notes.append(f"{len(quirks)} reply(ies) read back from VLMEvalKit's xlsx as another text (empty, 'None', "
                     f"'N/A'... as 'nan'; numbers as numbers): index {listed(quirks)}")
    return VlmevalkitFigure(metrics=metrics, primary="total", differing=differing, notes=notes)
