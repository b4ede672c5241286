"""MedQ-Bench descriptions (MedqbenchCaption_dev/_test, MedqbenchPairedDescription_dev/_test): the model's quality
description graded 0-2 on four dimensions by an LLM judge against the reference description, as VLMEvalKit grades it
(vlmeval/dataset/medqbench_caption.py, medqbench_paired_description.py).

Judge prompts: VLMEvalKit's `PROMPT_TEMPLATES` (captions) and `PAIRED_PROMPT_TEMPLATES` (pairs: completeness and
preciseness shared, consistency and quality_accuracy their own), character for character, with VLMEvalKit's two
replacements in its order: the text `MLLM DESC` becomes the reply, then `GOLDEN DESC` becomes the reference (TSV
`description`), so the brackets around them stay (`[the reply]`). One user turn, no system turn (the `#System:` line
is part of the text, as VLMEvalKit sends it), temperature 0, max_tokens 2048 (VLMEvalKit's judge defaults).

Asking and reading (VLMEvalKit's ask_judge and parse_score_from_response): for each row and dimension up to 3 asks
of the same prompt; a reply is read as the first `Score: x` / `Score：x` (x a digit 0-2 with optional decimals;
`Score: 10` reads 1, as its regular expression does), else the whole reply as JSON (a number within 0..2, or an
object whose `score`/`Score` is one), else the whole reply as a bare number 0-2. After 3 unread replies the
dimension has no score for that row and is left out of its mean (as VLMEvalKit's None). vlmkit reads the reply after
any `<think>...</think>` block still in its text (VLMEvalKit reads the block too, so a `Score:` inside the thinking
counts there; an OpenAI-compatible judge hands vlmkit the answer part only).

Figures (VLMEvalKit's `_score.json`): `completeness`, `preciseness`, `consistency`, `quality_accuracy`, each the
mean over the rows that have a score (0.0 when none has), on the judge's 0-2 scale (points out of 2). VLMEvalKit
reports the four with no headline; vlmkit's headline is the first it reports, `completeness`. The table
(`_score.csv`) is one row of the four.

Per row (EvalResult.per_sample): `index`, one column per dimension (its grade; None when unread, failed or not
asked), `score` (the mean of the row's grades / 2, the 0..1 figure the report reads; None without any), `method`
(`judge`: all four read; `judge_unread`: some unread after 3 asks; `judge_error`: a judge call failed, asked again on
the next run; `inference_error`: no prediction) and `judge` (the judge's last replies, one line per dimension).

Where vlmkit differs from VLMEvalKit (deliberately): a row without a prediction is not sent to the judge (VLMEvalKit
grades its failure text) and counts 0 in every dimension; a failed judge call leaves the dimension out this run and
is asked again on the next (VLMEvalKit keeps it as None for good); a think block is dropped before reading.

VLMEvalKit's figure (EvalResult.vlmevalkit): the four means from the same judge replies read whole (think block
included). Not computed (None, a note says why) where it needs a grade vlmkit does not have: a row without a
prediction (its judge would grade the failure text), a reply VLMEvalKit reads back from its xlsx as another text, or a
failed judge call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts
from vlmkit.scoring.common.vlmevalkit_replies import changed_replies, failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

SCORER = "medqbench"
METRICS = ("completeness", "preciseness", "consistency", "quality_accuracy")
MAX_GRADE = 2.0
JUDGE_TEMPERATURES = (0.0, 0.0, 0.0)  # VLMEvalKit's ask_judge: 3 tries of the same call (judge temperature 0)
JUDGE_MAX_TOKENS = 2048

# VLMEvalKit's PROMPT_TEMPLATES (vlmeval/dataset/medqbench_caption.py)
PROMPT_TEMPLATES: Mapping[str, str] = {
    "completeness": (
        "#System: You are a helpful assistant.\n"
        "#User: Evaluate whether the description [MLLM DESC] completely includes "
        "the low-level visual information in the reference description [GOLDEN DESC]. "
        "Please rate score 2 for completely or almost completely including reference information, "
        "0 for not including at all, 1 for including part of the information or similar description. "
        "Please only provide the result in the following format: Score:"
    ),
    "preciseness": (
        "#System: You are a helpful assistant.\n"
        "#User: The precision metric evaluates whether the low-level description is consistent "
        "with the reference and reasonably aligned with the final quality judgment. "
        "Minor wording differences or small omissions that do not change the overall meaning "
        "should still be considered consistent. "
        "Only penalize clear contradictions with the reference, such as describing blur for clear, "
        "noisy for clean, motion-free for motion artifacts, noise-free for low-dose noise, etc. "
        "Evaluate whether output [MLLM DESC] reasonably reflects reference [GOLDEN DESC]. "
        "Please rate score 2 for overall consistency and no major contradictions with the quality conclusion, "
        "1 for partial consistency or very few minor contradictions, and 0 for obvious contradictions "
        "or misalignment with the quality conclusion. "
        "Please only provide the result in the following format: Score:"
    ),
    "consistency": (
        "#System: You are a helpful assistant.\n"
        "#User: Evaluate the internal consistency between the reasoning path (description of image problems) "
        "and the final quality judgment in [MLLM DESC]. "
        "The reasoning should logically support the final quality conclusion. For example, if many serious "
        'problems are described, the final quality should be "reject"; '
        'if minor problems are described, it should be "usable"; if no or very few problems are described, '
        'it should be "good". '
        "Compare with the reference [GOLDEN DESC] to understand the expected reasoning-conclusion relationship. "
        "Please rate score 2 for highly consistent reasoning and conclusion, "
        "1 for partially consistent with minor logical gaps, "
        "and 0 for major inconsistency between described problems and quality judgment. "
        "Please only provide the result in the following format: Score:"
    ),
    "quality_accuracy": (
        "#System: You are a helpful assistant.\n"
        "#User: Evaluate the accuracy of the final quality judgment in [MLLM DESC] "
        "compared to the reference [GOLDEN DESC]. "
        "The quality levels have a progressive relationship: reject < usable < good. "
        "Consider the distance between predicted and reference quality: "
        "Please rate score 2 for exactly matching the reference quality level, "
        "1 for adjacent level difference (e.g., usable vs good, or reject vs usable), "
        "and 0 for distant level difference (reject vs good) or completely incorrect quality assessment. "
        "Please only provide the result in the following format: Score:"
    ),
}

# VLMEvalKit's PAIRED_PROMPT_TEMPLATES (vlmeval/dataset/medqbench_paired_description.py)
PAIRED_PROMPT_TEMPLATES: Mapping[str, str] = {
    "completeness": PROMPT_TEMPLATES["completeness"],
    "preciseness": PROMPT_TEMPLATES["preciseness"],
    "consistency": (
        "#System: You are a helpful assistant.\n"
        "#User: Evaluate the internal consistency between the reasoning path (comparative description of "
        "image problems) and the final quality comparison judgment in [MLLM DESC]. "
        "The reasoning should logically support the final comparison conclusion. "
        "Compare with the reference [GOLDEN DESC] to understand the expected reasoning-conclusion relationship "
        "for image comparison. "
        "Please rate score 2 for highly consistent reasoning and comparison conclusion, "
        "1 for partially consistent with minor logical gaps, "
        "and 0 for major inconsistency between described comparative problems and quality comparison judgment. "
        "Please only provide the result in the following format: Score:"
    ),
    "quality_accuracy": (
        "#System: You are a helpful assistant.\n"
        "#User: Evaluate the accuracy of the final quality comparison judgment in [MLLM DESC] "
        "compared to the reference [GOLDEN DESC]. "
        "The comparison should correctly identify which image has higher quality based on the described visual "
        "characteristics. "
        "Please rate score 2 for exactly matching the reference quality comparison, "
        "and 0 for completely incorrect quality comparison (opposite conclusion) or unreasonable assessment. "
        "Please only provide the result in the following format: Score:"
    ),
}

_SCORE = re.compile(r"Score\s*[:：]\s*([0-2](?:\.\d+)?)")
_BARE = re.compile(r"\s*([0-2](?:\.\d+)?)\s*")


def judge_prompt(template: str, prediction: str, description: str) -> str:
    """VLMEvalKit's build_prompt: `MLLM DESC` -> the reply, then `GOLDEN DESC` -> the reference (in that order)."""
    return template.replace("MLLM DESC", prediction).replace("GOLDEN DESC", description)


def read_grade(reply: str) -> float | None:
    """VLMEvalKit's parse_score_from_response on a reply text (module docstring); None when nothing is read."""
    text = reply.strip()
    found = _SCORE.search(text)
    if found:
        return float(found.group(1))
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = None
    try:
        if isinstance(value, (int, float)) and 0 <= float(value) <= 2:
            return float(value)
        if isinstance(value, dict):
            for key in ("score", "Score"):
                if key in value and 0 <= float(value[key]) <= 2:
                    return float(value[key])
    except (TypeError, ValueError, OverflowError):  # VLMEvalKit's bare except: go on to the last reading
        pass
    bare = _BARE.fullmatch(text)
    return float(bare.group(1)) if bare else None


def score_medqbench_caption(df: pd.DataFrame, judge: Judge, *, what: str = "MedqbenchCaption") -> EvalResult:
    """MedqbenchCaption_*: `score_medqbench` with VLMEvalKit's caption prompts."""
    return score_medqbench(df, judge, PROMPT_TEMPLATES, what=what)


def score_medqbench_paired(df: pd.DataFrame, judge: Judge, *, what: str = "MedqbenchPairedDescription") -> EvalResult:
    """MedqbenchPairedDescription_*: `score_medqbench` with VLMEvalKit's paired prompts."""
    return score_medqbench(df, judge, PAIRED_PROMPT_TEMPLATES, what=what)


def score_medqbench(
    df: pd.DataFrame, judge: Judge, templates: Mapping[str, str], *, what: str = "MedQ-Bench",
) -> EvalResult:
    """Grade every prediction on the four dimensions (module docstring). Columns: `index`, `description`,
    `prediction` (None/NaN = inference error). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "description", "prediction"), what)
    prompts: dict[str, str] = {}
    for key, row in zip(keys, records):
        description = required_text(row, "description", what)
        if failed_call(row["prediction"]):
            continue
        for metric in METRICS:
            prompts[f"{key}\t{metric}"] = judge_prompt(templates[metric], str(row["prediction"]), description)
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: read_grade(answer_part(reply)),
                            temperatures=JUDGE_TEMPERATURES, max_tokens=JUDGE_MAX_TOKENS) if prompts else {}

    grades: dict[str, list[float | None]] = {metric: [] for metric in METRICS}
    methods: list[str] = []
    replies: list[str | None] = []
    for key, row in zip(keys, records):
        if failed_call(row["prediction"]):
            for metric in METRICS:
                grades[metric].append(0.0)
            methods.append(INFERENCE_ERROR)
            replies.append(None)
            continue
        row_outcomes = [outcomes[f"{key}\t{metric}"] for metric in METRICS]
        for metric, outcome in zip(METRICS, row_outcomes):
            grades[metric].append(None if outcome.error is not None else outcome.value)
        methods.append(_row_method(row_outcomes))
        replies.append("\n".join(f"{m}: {o.last_reply}" for m, o in zip(METRICS, row_outcomes)))

    metrics = {metric: _mean(values) for metric, values in grades.items()}
    per_sample = pd.DataFrame({"index": [row["index"] for row in records]})
    for metric in METRICS:
        per_sample[metric] = pd.Series(grades[metric], dtype=object)
    per_sample["score"] = pd.Series([_row_score([grades[m][i] for m in METRICS]) for i in range(len(records))],
                                    dtype=object)
    per_sample["method"] = methods
    per_sample["judge"] = pd.Series(replies, dtype=object)
    figure, why_not = _vlmevalkit_figure(records, keys, outcomes, grades)
    counts = judged_counts(methods, len(records), count_unread=True)
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary=METRICS[0],
        per_sample=per_sample,
        table=pd.DataFrame([metrics], columns=list(METRICS)),
        table_suffix="score",
        counts=counts,
        notes=_notes(per_sample, judge) + ([why_not] if why_not else []),
        scale=Scale(POINTS, out_of=MAX_GRADE),
        vlmevalkit=figure,
    )


def _row_method(outcomes: Sequence[JudgeOutcome[float]]) -> str:
    if any(o.error is not None for o in outcomes):
        return JUDGE_ERROR
    if any(o.value is None for o in outcomes):
        return UNREAD
    return JUDGE


def _mean(values: Sequence[float | None]) -> float:
    """VLMEvalKit's metric_avgs: the mean of the grades there are; 0.0 when there is none."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else 0.0


def _row_score(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) / MAX_GRADE if known else None


def vlmevalkit_grade(replies: Sequence[str]) -> tuple[float | None, bool]:
    """(grade, known) as VLMEvalKit's ask_judge reads the replies in order (whole, think block included): the first
    it reads; None after 3 unread. Not known when the replies run out before that."""
    for reply in replies[:len(JUDGE_TEMPERATURES)]:
        value = read_grade(reply)
        if value is not None:
            return value, True
    return None, len(replies) >= len(JUDGE_TEMPERATURES)


def _vlmevalkit_figure(
    records: Sequence[dict], keys: Sequence[str], outcomes: Mapping[str, JudgeOutcome[float]],
    grades: Mapping[str, Sequence[float | None]],
) -> tuple[VlmevalkitFigure | None, str | None]:
    theirs: dict[str, list[float | None]] = {metric: [] for metric in METRICS}
    missing: list[Any] = []
    differing: list[ReadingDifference] = []
    changed = changed_replies([row["prediction"] for row in records])
    for pos, (row, key, other_text) in enumerate(zip(records, keys, changed)):
        if other_text or failed_call(row["prediction"]):
            missing.append(row["index"])
            continue
        read: list[float | None] = []
        for metric in METRICS:
            outcome = outcomes[f"{key}\t{metric}"]
            grade, known = vlmevalkit_grade(outcome.replies) if outcome.error is None else (None, False)
            if not known:
                break
            read.append(grade)
        if len(read) < len(METRICS):
            missing.append(row["index"])
            continue
        mine = [grades[metric][pos] for metric in METRICS]
        for metric, value in zip(METRICS, read):
            theirs[metric].append(value)
        if read != mine:
            differing.append(ReadingDifference(row["index"], mine, read, _row_score(mine), _row_score(read)))
    if missing:
        return None, (f"VLMEvalKit's figure not computed: {len(missing)} row(s) need a grade vlmkit does not have "
                      "(no prediction, so VLMEvalKit's judge would grade its failure text; a reply VLMEvalKit reads "
                      f"back from its xlsx as another text; or a failed judge call); index {listed(missing)}")
    metrics = {metric: _mean(values) for metric, values in theirs.items()}
    return VlmevalkitFigure(metrics=metrics, primary=METRICS[0], differing=differing), None


def _notes(per_sample: pd.DataFrame, judge: Judge) -> list[str]:
    notes = [f"graded 0-2 on {', '.join(METRICS)} by {judge.name} with VLMEvalKit's MedQ-Bench prompts (up to 3 asks "
             "each); each figure is the mean grade over the rows graded on it; VLMEvalKit reports the four with no "
             "headline, vlmkit's is completeness"]
    explained = (
        (UNREAD, "the judge gave no readable grade in 3 asks on some dimension: left out of that mean, as in "
                 "VLMEvalKit"),
        (JUDGE_ERROR, "a judge call failed: that dimension is left out this run and asked again on the next run"),
        (INFERENCE_ERROR, "no prediction: not sent to the judge, 0 on every dimension (VLMEvalKit grades its "
                          "failure text)"),
    )
    for method, text in explained:
        rows = per_sample.loc[per_sample["method"] == method, "index"].tolist()
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {text}; index {listed(rows)}")
    return notes
