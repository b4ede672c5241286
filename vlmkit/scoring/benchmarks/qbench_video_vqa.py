"""QBench_Video_VQA's scorer: each open answer rated 0-2 by an LLM judge, as VLMEvalKit rates it
(vlmeval/dataset/qbench_video.py `QBench_Video_VQA.evaluate` and utils/qbench_video.py at e8e78f05).

Judge: VLMEvalKit's system text (`SYSTEM_PROMPT`) and user text (`judge_prompt`: question, response, correct answer,
in that order, ending `Score:'` and a newline), asked once per row at temperature 0.
Reading: VLMEvalKit takes `int(reply.strip().replace('Score:', '').strip())`. vlmkit reads the same text (after any
think block) and keeps it when it is 0, 1 or 2; anything else is unread and scores 0. VLMEvalKit keeps any whole
number (a `3` adds 3) and stops with a ValueError on anything else (its figure counts such a row 0 and says so). A
row without a prediction is not asked and scores 0 (VLMEvalKit sends the text `nan`); a failed judge call is 0 this
run and asked again on the next (VLMEvalKit's failure text stops its scorer).

Figures (VLMEvalKit's `get_dimension_rating`: [sum of scores, rows] per question type, the first comma-separated
part of the first `dimensions` entry): the mean score per question type and `Overall` (points out of 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.qbench_video import question_type
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["SYSTEM_PROMPT", "judge_prompt", "read_score", "score_qbench_video_vqa", "vqa_figures"]

SCORER = "qbench_video_vqa"
SYSTEM_PROMPT = (
    "\nYou are a helpful assistant that grades answers related to visual video quality.\n"
    "There are a lot of special terms or keywords related to video processing and photography.\n"
    "You will pay attention to the context of `quality evaluation' when grading.\n"
)
USER_PROMPT = (
    "\nGiven the question {}, evaluate whether the response {} completely matches the correct answer {}.\n"
    "First, check the response and please rate score 0 if the response is not a valid answer.\n"
    "Please rate score 2 if the response completely or almost completely matches the correct answer on "
    "completeness, accuracy, and relevance.\n"
    "Please rate score 1 if the response partly matches the correct answer on completeness, accuracy, and "
    "relevance.\n"
    "Please rate score 0 if the response doesn't match the correct answer on completeness, accuracy, and relevance "
    "at all.\n"
    "Please only provide the result in the following format: Score:'\n"
)


def judge_prompt(question: str, prediction: str, answer: str) -> str:
    return USER_PROMPT.format(question, prediction, answer)


def _score_text(reply: str) -> str:
    return reply.strip().replace("Score:", "").strip()


def read_score(reply: str) -> int | None:
    """vlmkit's reading: 0, 1 or 2 (module docstring), else None."""
    text = _score_text(answer_part(reply))
    return int(text) if text in ("0", "1", "2") else None


def vlmevalkit_score(reply: str) -> int | None:
    """VLMEvalKit's int() of the reply; None where it raises (its scorer stops)."""
    try:
        return int(_score_text(reply))
    except ValueError:
        return None


def vqa_figures(scores: Sequence[float], types: Sequence[str]) -> dict[str, float]:
    """`Overall` and each question type: the mean score."""
    values, kinds = np.asarray(scores, dtype=float), np.asarray(types, dtype=object)
    metrics = {"Overall": float(values.mean())}
    for kind in dict.fromkeys(types):
        metrics[str(kind)] = float(values[kinds == kind].mean())
    return metrics


def score_qbench_video_vqa(df: pd.DataFrame, judge: Judge, *, what: str = "QBench_Video_VQA") -> EvalResult:
    """Rate every answer (module docstring). Columns: index, question, answer, dimensions, prediction."""
    records, keys = keyed_records(df, ("index", "question", "answer", "dimensions", "prediction"), what)
    types = [question_type(r["dimensions"], f"{what}: row index {r['index']}") for r in records]
    prompts = {key: judge_prompt(required_text(r, "question", what), str(r["prediction"]),
                                 required_text(r, "answer", what))
               for key, r in zip(keys, records) if not failed_call(r["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_score(reply),
                            system=SYSTEM_PROMPT) if prompts else {}
    scores, methods, replies, theirs = [], [], [], []
    stops: list[Any] = []
    for key, row in zip(keys, records):
        outcome = outcomes.get(key)
        reply = outcome.last_reply if outcome is not None else None
        replies.append(reply)
        if outcome is None or outcome.error is not None:
            methods.append(INFERENCE_ERROR if outcome is None else JUDGE_ERROR)
            scores.append(0.0)
            theirs.append(0.0)
            continue
        methods.append(JUDGE if outcome.value is not None else UNREAD)
        scores.append(float(outcome.value or 0))
        their = vlmevalkit_score(reply or "")
        if their is None:
            stops.append(row["index"])
        theirs.append(float(their or 0))
    metrics = vqa_figures(scores, types)
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "score": scores, "method": methods,
                               "question_type": types, "judge": pd.Series(replies, dtype=object),
                               "vlmevalkit_score": theirs})
    counts = judged_counts(methods, len(records), count_unread=True)
    notes = [f"rated 0-2 by {judge.name} with VLMEvalKit's QBench_Video_VQA prompt (VLMEvalKit's default judge "
             "gpt-4o-0806)"]
    notes += method_notes(per_sample, {
        UNREAD: "the judge's reply is not a score 0, 1 or 2: 0",
        JUDGE_ERROR: "the judge call failed: 0 this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: 0 without asking the judge (VLMEvalKit sends the text 'nan')",
    })
    figure_notes = ["VLMEvalKit prints [sum of scores, rows] per question type and no overall"]
    if stops:
        figure_notes.append(f"{len(stops)} judge reply(ies) are no whole number: VLMEvalKit's scorer stops with a "
                            f"ValueError there (0 in this figure); index {listed(stops)}")
    figure = VlmevalkitFigure(
        metrics=vqa_figures(theirs, types), primary="Overall", notes=figure_notes,
        differing=[ReadingDifference(r["index"], s, t, s, t) for r, s, t in zip(records, scores, theirs) if s != t],
    )
    return EvalResult(scorer=SCORER, metrics=metrics, primary="Overall", per_sample=per_sample,
                      table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="score", counts=counts,
                      notes=notes, scale=Scale(POINTS, out_of=2.0), vlmevalkit=figure)
