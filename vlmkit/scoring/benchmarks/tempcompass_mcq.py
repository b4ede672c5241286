"""TempCompass_MCQ's scorer, and the scoring TempCompass_YorN shares with it (`score_tempcompass_rows`); VLMEvalKit's
`TempCompass_MCQ.evaluate` and utils/tempcompass.py at e8e78f05.

Each row is a `multi-choice` or a `caption_matching` question, read by that task's word-matching rule on the reply
as it is (not stripped):
- multi-choice (`eval_rule_multi_choice`): the reply equal to the answer (`A. text`), or a bare `A`-`D`, or a reply
  starting `L.` or `L)`: right when that letter is the answer's first character;
- caption matching (`eval_rule_caption_matching`): the reply equal to a whole option (`Sentence A: text`), to an
  option's sentence (also after `) `), or to an option's tag (`Sentence A`, `A`, dots removed); the last match
  counts, and it is right when it is the answer, the answer's tag, sentence or letter.
A reply neither rule reads goes to the judge when there is one (VLMEvalKit's TempCompass prompt, its system text
"You are an AI assistant for question answering.", temperature 1.0, 128 tokens, asked once): "Correct" / "Incorrect"
read as `llm_output_to_rating` (neither word: 0). The judge sees the question's first line without its options, as
VLMEvalKit's does. Without a judge it is a miss, as VLMEvalKit's default
`exact_matching`.
Figures are percent: `Overall` (right over all rows), one per `<dim>. <task_type>` (VLMEvalKit's
get_dimension_rating keys; its TempCompass table gives round(sum / rows * 100, 1)) and one per dim. vlmkit reads the
replies as VLMEvalKit does; the one difference: a reply VLMEvalKit's xlsx gives back as NaN (an empty reply, "N/A",
...) stops its rules with an AttributeError; VLMEvalKit's figure (`EvalResult.vlmevalkit`, 1 decimal) counts it as a
miss and says so. A failed inference is a miss in both (the rules read VLMEvalKit's failure text as nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_missing
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, candidate_list, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = [
    "JUDGE_SYSTEM", "caption_matching_rule", "judge_rating", "multi_choice_rule", "score_tempcompass_mcq",
    "score_tempcompass_rows",
]

JUDGE_SYSTEM = "You are an AI assistant for question answering."
_MULTI_CHOICE_JUDGE = (
    "You will receive a multi-choice question, the ground-truth answer and the prediction from a question answering "
    "(QA) model. Your task is to determine whether QA model prediction is correct, based on the question and "
    "ground-truth answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\"."
)
_CAPTION_MATCHING_JUDGE = _MULTI_CHOICE_JUDGE.replace("a multi-choice question", "a caption matching question")
JUDGE_PROMPTS = {
    "multi-choice": "{}\nMulti-Choice Question:\n{}\nGround-Truth Answer: {}\nModel Prediction: {}",
    "caption_matching": "{}\nCaption Matching Question:\n{}\nGround-Truth Answer: {}\nModel Prediction: {}",
}
_JUDGE_BASE = {"multi-choice": _MULTI_CHOICE_JUDGE, "caption_matching": _CAPTION_MATCHING_JUDGE}
NOTE_NAN = ("reply(ies) read back from VLMEvalKit's xlsx as NaN, where its TempCompass rules stop with an "
            "AttributeError; counted as misses in its figure")


def multi_choice_rule(prediction: str, answer: str) -> int | None:
    """VLMEvalKit's `eval_rule_multi_choice`: 1 or 0, None where it says "fail"."""
    if prediction == answer:
        return 1
    if prediction in ("A", "B", "C", "D"):
        return int(prediction == answer[:1])
    if prediction.startswith(("A.", "B.", "C.", "D.")):
        return int(prediction.split(".")[0] == answer[:1])
    if prediction.startswith(("A)", "B)", "C)", "D)")):
        return int(prediction.split(")")[0] == answer[:1])
    return None


def _part(text: str, sep: str, at: int) -> str | None:
    parts = text.split(sep)
    return parts[at] if len(parts) > at else None


def caption_matching_rule(prediction: str, answer: str, options: list[str]) -> int | None:
    """VLMEvalKit's `eval_rule_caption_matching`: 1 or 0, None where it says "fail" (an option or answer without
    the parts it splits off matches nothing there, where VLMEvalKit stops with an IndexError)."""
    sentences = [s for s in (_part(o, ": ", 1) for o in options) if s is not None]
    tags = [o.split(": ")[0] for o in options]
    tags += [t.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "") for t in tags]
    picked = None
    for option in options:
        if option == prediction:
            picked = option
    after = _part(prediction, ") ", 1)
    for sentence in sentences:
        if sentence == prediction or (after is not None and sentence == after):
            picked = sentence
    for tag in tags:
        if tag == prediction or tag == prediction.replace(".", ""):
            picked = tag
    if picked is None:
        return None
    head = answer.split(": ")[0].split()
    return int(picked in (answer, answer.split(":")[0], _part(answer, ": ", 1), head[1] if len(head) > 1 else None))


def judge_rating(reply: str) -> int:
    """VLMEvalKit's `llm_output_to_rating`: 1 for "Correct", 0 for "Incorrect" (or neither word)."""
    if "Correct" not in reply and "Incorrect" not in reply:
        return 0
    if reply.startswith("Correct"):
        return 1
    if reply.startswith("Incorrect"):
        return 0
    return int("Incorrect" not in reply)


def _rule(row: dict[str, Any], options: list[str], prediction: str) -> int | None:
    if str(row["task_type"]) == "caption_matching":
        return caption_matching_rule(prediction, str(row["answer"]), options)
    return multi_choice_rule(prediction, str(row["answer"]))


def score_tempcompass_mcq(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """TempCompass_MCQ predictions -> EvalResult (module docstring). Columns: index, prediction, answer, question
    (its first line), candidates (a list of option lines), task_type (multi-choice, caption_matching), dim."""
    what = "TempCompass_MCQ"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates", "task_type", "dim"),
                               what)
    options = [candidate_list(r["candidates"], f"{what}: row index {r['index']}, field `candidates`") for r in records]
    for row in records:
        if str(row["task_type"]) not in JUDGE_PROMPTS:
            raise ValueError(f"{what}: row index {row['index']}, field `task_type`: {row['task_type']!r} is not "
                             "multi-choice or caption_matching")

    def rule(i: int, reply: str) -> int | None:
        return _rule(records[i], options[i], reply)

    def prompt(i: int) -> str:
        # VLMEvalKit's judge sees the stored question: its first line, without the options
        row, task = records[i], str(records[i]["task_type"])
        return JUDGE_PROMPTS[task].format(_JUDGE_BASE[task], row["question"], row["answer"], row["prediction"])

    return score_tempcompass_rows(records, rule, prompt, judge, "tempcompass_mcq")


def score_tempcompass_rows(records: list[dict[str, Any]], rule: Callable[[int, str], int | None],
                           prompt: Callable[[int], str], judge: Judge | None, scorer: str) -> EvalResult:
    """The TempCompass scoring shared by MCQ and Y/N (module docstring): `rule(row position, reply)` is 1, 0 or None
    (no rule reads it); `prompt(row position)` the judge's prompt for a row no rule reads."""
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    scores = np.zeros(n)
    replies: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if is_missing(row["prediction"]):
            continue
        got = rule(i, str(row["prediction"]))
        methods[i] = UNPARSED if got is None else RULE
        scores[i] = float(got or 0)
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        prompts = {f"{index_key(records[i]['index'])}#{i}": prompt(i) for i in ask}
        outcomes = judge_rounds(judge, prompts, lambda key, reply: judge_rating(reply), temperatures=(1.0,),
                                max_tokens=128, system=JUDGE_SYSTEM)
        for key, outcome in outcomes.items():
            i = int(key.rsplit("#", 1)[1])
            replies[i] = outcome.last_reply
            if outcome.error is not None:
                methods[i] = "judge_error"
            else:
                methods[i], scores[i] = "judge", float(outcome.value or 0)
    keys = np.array([f"{r['dim']}. {r['task_type']}" for r in records], dtype=object)
    dims = np.array([str(r["dim"]) for r in records], dtype=object)
    metrics = _metrics(scores, keys, dims)
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    their_scores = np.zeros(n)
    nan_rows: list[Any] = []
    for i, cell in enumerate(back):
        if failed[i]:
            continue
        if is_nan_cell(cell):
            nan_rows.append(records[i]["index"])
            continue
        got = rule(i, str(cell))
        their_scores[i] = scores[i] if got is None else float(got)  # unread: the same judge verdict (or a miss)
    figure_notes = ["VLMEvalKit prints TempCompass's figures in percent with 1 decimal; so does this figure"]
    notes: list[str] = []
    counts = method_counts(methods, n)
    counts["by_judge"] = sum(m == "judge" for m in methods)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        text = f"{len(nan_rows)} {NOTE_NAN} (index {', '.join(str(r) for r in nan_rows[:5])})"
        figure_notes.append(text)
        notes.append(text)
    unread = methods.count(UNPARSED)
    if unread and judge is None:
        notes.append(f"rules only (no --judge): {unread} answers no rule could read count as misses")
    figure = VlmevalkitFigure(
        metrics={k: round(v, 1) for k, v in _metrics(their_scores, keys, dims).items()}, primary="Overall",
        differing=[ReadingDifference(r["index"], None, None, float(s), float(t))
                   for r, s, t, f in zip(records, scores, their_scores, failed) if not f and s != t],
        notes=figure_notes,
    )  # fmt: skip
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "score": scores, "hit": scores > 0, "method": methods,
        "judge": replies, "vlmevalkit_score": their_scores,
    })  # fmt: skip
    return EvalResult(
        scorer=scorer, metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts, notes=notes,
        scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _metrics(scores: np.ndarray, keys: np.ndarray, dims: np.ndarray) -> dict[str, float]:
    metrics = {"Overall": 100.0 * float(scores.mean())}
    for key in dict.fromkeys(keys):
        metrics[str(key)] = 100.0 * float(scores[keys == key].mean())
    for dim in dict.fromkeys(dims):
        metrics[f"dim: {dim}"] = 100.0 * float(scores[dims == dim].mean())
    return metrics
