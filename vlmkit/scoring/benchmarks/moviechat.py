"""MovieChat1k's scorer: each answer judged yes/no with a 0-5 score by an LLM judge, as VLMEvalKit judges it
(vlmeval/dataset/moviechat1k.py `MovieChat1k.evaluate` and utils/moviechat1k.py at e8e78f05).

Judge prompt: VLMEvalKit's `prepare_score_prompt` text (an f-string whose continuation lines keep the source's
indentation; `judge_prompt` renders it byte for byte), no system text, asked once per row at temperature 0.

Reading: the reply as a dict with `pred` (a text) and `score` (a number): JSON first, then a Python literal
(VLMEvalKit calls eval() on the judge's text; vlmkit reads literals only and never runs it). Anything else is
unread. A row without a prediction is not asked.

Figures (VLMEvalKit's `get_dimension_rating`, by `mode`: global, breakpoint, and overall):
- `Overall`, `global`, `breakpoint` (headline `Overall`): the share of rows judged `yes` (a fraction). VLMEvalKit
  averages over the rows with a readable verdict only; vlmkit counts every row, a row without a verdict (no
  prediction, an unread reply, a failed judge call) as not correct. VLMEvalKit's figure is its own.
- `score/Overall`, `score/global`, `score/breakpoint`: the mean judge score over rows that have one (VLMEvalKit's
  coarse_valid), points out of 5.
A row whose mode is neither global nor breakpoint counts in no figure (as in VLMEvalKit). VLMEvalKit prints the
figures with 2 decimals; its figure here is rounded so.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, reads_as_nan
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["judge_prompt", "read_verdict", "score_moviechat", "verdict_columns", "verdict_figures", "verdict_result"]

SCORER = "moviechat"
MODES = ("global", "breakpoint")
_INDENT = " " * 12


def judge_prompt(question: str, answer: str, prediction: str) -> str:
    """VLMEvalKit's prepare_score_prompt for one row, byte for byte."""
    return (
        "Please evaluate the following video-based question-answer pair:\n\n\n"
        f"{_INDENT}Question: {question}\n\n"
        f"{_INDENT}Correct Answer: {answer}\n\n"
        f"{_INDENT}Predicted Answer: {prediction}\n\n\n"
        f"{_INDENT}Provide your evaluation only as a yes/no and score where the score is an integer value between 0 "
        "and 5, with 5 indicating the highest meaningful match.\n"
        f"{_INDENT}Please generate the response in the form of a Python dictionary string with keys 'pred' and "
        "'score', where value of 'pred' is  a string of 'yes' or 'no' and value of 'score' is in INTEGER, not "
        "STRING.\n"
        f"{_INDENT}DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide the Python dictionary string.\n"
        f"{_INDENT}    For example, your response should look like this: {{'pred': 'yes', 'score': 4.8}}."
    )


def read_verdict(reply: str) -> tuple[bool, float] | None:
    """(judged yes, score) from the judge's reply (module docstring), or None when it is not such a dict."""
    text = answer_part(reply).strip()
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    if not isinstance(value, dict) or "pred" not in value or "score" not in value:
        return None
    pred, score = value["pred"], value["score"]
    if not isinstance(pred, str) or isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    return pred.lower() == "yes", float(score)


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def verdict_figures(groups: Sequence[str], verdicts: Sequence[tuple[bool, float] | None], names: Sequence[str], *,
                    every_row: bool) -> dict[str, float]:
    """Accuracy (`Overall`, and one per group of `names`) and mean score (`score/...`) from yes/score verdicts, as
    VLMEvalKit's MovieChat1k / VDC / Video-MMLU ratings: a row of a group outside `names` counts in none;
    `every_row`: a row without a verdict counts as not correct (vlmkit), else it is left out of the accuracy
    (VLMEvalKit, '0.00' when none is left). The score is the mean over rows with a score >= 0."""
    out: dict[str, float] = {}
    for name, wanted in (("Overall", tuple(names)), *((m, (m,)) for m in names)):
        picked = [v for group, v in zip(groups, verdicts) if group in wanted]
        if every_row:
            out[name] = _mean([float(v is not None and v[0]) for v in picked])
        else:
            judged = [float(v[0]) for v in picked if v is not None]
            out[name] = _mean(judged) if judged else 0.0
        out[f"score/{name}"] = _mean([v[1] for v in picked if v is not None and v[1] >= 0])
    return out


def verdict_columns(verdicts: Sequence[tuple[bool, float] | None]) -> dict[str, list[Any]]:
    """The per-sample `correct` and `score` of yes/score verdicts (None where a row has no verdict)."""
    return {"correct": [None if v is None else bool(v[0]) for v in verdicts],
            "score": [None if v is None else v[1] for v in verdicts]}


def verdict_result(scorer: str, *, per_sample: pd.DataFrame, group_column: str, names: Sequence[str],
                   metrics: dict[str, float], counts: dict[str, int], notes: list[str],
                   vlmevalkit: VlmevalkitFigure | None = None) -> EvalResult:
    """The EvalResult of yes/score verdicts (`verdict_figures`): accuracy a fraction, `score/...` points out of 5,
    and a table of accuracy and score for `Overall` and each of `names` (its first column `group_column`)."""
    table = pd.DataFrame([{group_column: n, "accuracy": metrics[n], "score": metrics[f"score/{n}"]}
                          for n in ("Overall", *names)])
    points = Scale(POINTS, out_of=5.0)
    return EvalResult(
        scorer=scorer, metrics=metrics, primary="Overall", per_sample=per_sample, table=table, table_suffix="score",
        counts=counts, notes=notes, scale=Scale(FRACTION),
        metric_scales={k: points for k in metrics if k.startswith("score/")}, vlmevalkit=vlmevalkit,
    )  # fmt: skip


def moviechat_figures(modes: Sequence[str], verdicts: Sequence[tuple[bool, float] | None], *,
                      every_row: bool) -> dict[str, float]:
    """`verdict_figures` over MovieChat1k's modes (global, breakpoint)."""
    return verdict_figures(modes, verdicts, MODES, every_row=every_row)


def score_moviechat(df: pd.DataFrame, judge: Judge, *, what: str = "MovieChat1k") -> EvalResult:
    """Judge every prediction (module docstring). Columns: index, question, answer, mode, prediction."""
    records, keys = keyed_records(df, ("index", "question", "answer", "mode", "prediction"), what)
    modes = [required_text(r, "mode", what).lower() for r in records]
    prompts = {key: judge_prompt(required_text(r, "question", what), required_text(r, "answer", what),
                                 str(r["prediction"]))
               for key, r in zip(keys, records) if not failed_call(r["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_verdict(reply)) if prompts else {}
    verdicts: list[tuple[bool, float] | None] = []
    methods: list[str] = []
    for key in keys:
        outcome: JudgeOutcome | None = outcomes.get(key)
        verdicts.append(outcome.value if outcome is not None else None)
        methods.append(INFERENCE_ERROR if outcome is None else JUDGE_ERROR if outcome.error is not None
                       else UNREAD if outcome.value is None else JUDGE)
    metrics = moviechat_figures(modes, verdicts, every_row=True)
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "mode": modes, **verdict_columns(verdicts), "method": methods,
        "judge": pd.Series([o.last_reply if (o := outcomes.get(k)) else None for k in keys], dtype=object),
    })
    counts = judged_counts(methods, len(records), count_unread=True)
    notes = [f"judged yes/no and 0-5 by {judge.name} with VLMEvalKit's MovieChat1k prompt (VLMEvalKit accepts only "
             "chatgpt-0125, gpt-3.5-turbo-0125, as its judge); `Overall` counts a row without a verdict as not "
             "correct, where VLMEvalKit leaves it out (its figure)"]
    others = sorted({m for m in modes if m not in MODES})
    if others:
        notes.append(f"rows of mode {', '.join(others)} count in no figure (as in VLMEvalKit)")
    notes += method_notes(per_sample, {
        UNREAD: "the judge's reply is not a dict with pred and score: no verdict",
        JUDGE_ERROR: "the judge call failed: no verdict this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: not asked, no verdict",
    })
    return verdict_result(SCORER, per_sample=per_sample, group_column="mode", names=MODES, metrics=metrics,
                          counts=counts, notes=notes, vlmevalkit=_figure(records, modes, verdicts))


def _figure(records: list[dict[str, Any]], modes: list[str],
            verdicts: list[tuple[bool, float] | None]) -> VlmevalkitFigure:
    """VLMEvalKit's figures on the same verdicts: accuracy over judged rows only; a reply its xlsx gives back as NaN
    is never sent to its judge."""
    nan = reads_as_nan([r["prediction"] for r in records])
    theirs = [None if is_nan else v for v, is_nan in zip(verdicts, nan)]
    nan_rows = [r["index"] for r, is_nan in zip(records, nan) if is_nan]
    metrics = {k: round(v, 2) for k, v in moviechat_figures(modes, theirs, every_row=False).items()}
    notes = ["VLMEvalKit leaves a row without a verdict out of the accuracy; figures rounded to 2 decimals as it "
             "prints them"]
    if nan_rows:
        notes.append(f"{len(nan_rows)} reply(ies) read back from VLMEvalKit's xlsx as NaN are not sent to its judge; "
                     f"index {listed(nan_rows)}")
    differing = [ReadingDifference(r["index"], None if v is None else bool(v[0]), None) for r, v, is_nan
                 in zip(records, verdicts, nan) if is_nan and v is not None]
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes)
