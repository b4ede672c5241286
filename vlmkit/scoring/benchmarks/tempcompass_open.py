"""TempCompass_Captioning's scorer and the combined TempCompass figures (VLMEvalKit `TempCompass_Captioning.evaluate`,
`TempCompass.evaluate` and utils/tempcompass.py at e8e78f05).

Captioning: the model describes the video; the judge is given VLMEvalKit's captioning instructions with that
description and the row's multi-choice question (`judge_prompt`, byte for byte), and answers it. System text "You
are an AI assistant for question answering.", temperature 1.0, max_tokens 128 (VLMEvalKit also sends top_p 1 and
presence_penalty 1, which vlmkit's judge requests do not carry), asked once. Reading (`parse_llm_output`, as
VLMEvalKit's): the last line holding "Answer" gives the judge's answer (the whole reply when none does); the row is
right (1) when its text before the first ". " equals the gold `mc_answer`'s and exactly one of `A.`..`D.` occurs in
it; an empty reply rates -1. vlmkit counts a -1 as 0; VLMEvalKit adds it to the sums (its figure does). A row without
a prediction is not asked (0; VLMEvalKit sends the text `nan`); a failed judge call is 0 this run and asked again on
the next (VLMEvalKit reads its failure text as a wrong answer and caches it).

Figures are percent: `Overall`, one per `<dim>. <task_type>` (VLMEvalKit's rating keys) and one per dim (`dim: X`).
TempCompass (all three parts): as the parts' figures, plus one per task type (`task: X`); VLMEvalKit's table rounds
each to 2 decimals (its figure does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.tempcompass_mcq import JUDGE_SYSTEM
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["CAPTIONING_INSTRUCTIONS", "judge_prompt", "parse_rating", "score_tempcompass_open", "tempcompass_metrics"]

SCORER = "tempcompass_open"
CAPTIONING_INSTRUCTIONS = """
You will receive a video description and a multi-choice question. Your task is to choose the correct answer and briefly explain the reason why you choose the answer. If none of the choice candidates are correct or the video description lacks enough information to answer the question, just answer "None of the choices are correct". Please organize your response in this format:
```
Reasoning: [Your reason to obtain the answer]
Answer: [Your answer]
```

Here are some examples of video description, multi-choice question and the expected answer:
```
Video Description: A person is palying football.
Multi-Choice Question:
What is the person doing in the video?
A. cooking
B. palying football
C. playing basketball
D. reading book
Reasoning: The video description mentions that the person is playing football.
Answer: B. palying football

Video Description: A bird is flying clockwise.
Multi-Choice Question:
In which direction is the bird flying?
A. backwark
B. counter-clockwise
C. clockwise
D. downward
Reasoning: The video description mentions that the bird is flying clockwise
Answer: C. clockwise

Video Description: An air balloon is inflating.
Multi-Choice Question:
What is happening to the air balloon?
A. exploding
B. getting smaller
C. flying
Reasoning: The video description mentions that the air balloon is inflating, while none of the coices can be explained as inflating.
Answer: None of the choices are correct
```
"""  # noqa: E501
JUDGE_TEMPERATURE, JUDGE_MAX_TOKENS = 1.0, 128


def judge_prompt(prediction: str, mc_question: str) -> str:
    """VLMEvalKit's evaluate_tempcompass_captioning prompt for one row."""
    return f"{CAPTIONING_INSTRUCTIONS}\nVideo Description:{prediction}\nMulti-Choice Question:\n{mc_question}\n"


def parse_rating(reply: str, gold: str) -> int:
    """VLMEvalKit's parse_llm_output rating: 1, 0, or -1 for an empty reply (module docstring)."""
    if reply == "invalid_request_error" or not reply:
        return -1
    answer = None
    for line in reply.split("\n"):
        line = line.strip()
        if "Answer" in line:
            answer = line.replace("Answer:", "").strip()
    if answer is None:
        answer = reply
    count = sum(answer.count(prefix) for prefix in ("A.", "B.", "C.", "D."))
    return 1 if answer.split(". ")[0] == gold.split(". ")[0] and count == 1 else 0


def tempcompass_metrics(scores: Sequence[float], dims: Sequence[str], tasks: Sequence[str], *,
                        by_task: bool = False, digits: int | None = None) -> dict[str, float]:
    """Percent: `Overall` (sum / rows), each `<dim>. <task>`, each `dim: X` (and each `task: X`), VLMEvalKit's sums
    over rows; rounded to `digits` where given."""
    values = np.asarray(scores, dtype=float)
    dims_a, tasks_a = np.asarray(dims, dtype=object), np.asarray(tasks, dtype=object)
    keys = np.array([f"{d}. {t}" for d, t in zip(dims, tasks)], dtype=object)
    groups: list[tuple[str, np.ndarray]] = [("Overall", np.ones(len(values), dtype=bool))]
    groups += [(str(k), keys == k) for k in dict.fromkeys(keys)]
    groups += [(f"dim: {d}", dims_a == d) for d in dict.fromkeys(dims)]
    if by_task:
        groups += [(f"task: {t}", tasks_a == t) for t in dict.fromkeys(tasks)]
    out = {}
    for name, mask in groups:
        value = 100.0 * float(values[mask].sum()) / int(mask.sum())
        out[name] = value if digits is None else round(value, digits)
    return out


def score_tempcompass_open(df: pd.DataFrame, judge: Judge, *, what: str = "TempCompass_Captioning") -> EvalResult:
    """Judge every caption (module docstring). Columns: index, prediction, dim, task_type, mc_question, mc_answer."""
    records, keys = keyed_records(df, ("index", "prediction", "dim", "task_type", "mc_question", "mc_answer"), what)
    golds = [required_text(r, "mc_answer", what) for r in records]
    prompts = {key: judge_prompt(str(r["prediction"]), required_text(r, "mc_question", what))
               for key, r in zip(keys, records) if not failed_call(r["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: reply, temperatures=(JUDGE_TEMPERATURE,),
                            max_tokens=JUDGE_MAX_TOKENS, system=JUDGE_SYSTEM) if prompts else {}
    ratings: list[int | None] = []
    methods: list[str] = []
    replies: list[str | None] = []
    for key, gold in zip(keys, golds):
        outcome = outcomes.get(key)
        if outcome is None or outcome.error is not None:
            ratings.append(None)
            methods.append(INFERENCE_ERROR if outcome is None else JUDGE_ERROR)
            replies.append(None if outcome is None else outcome.last_reply)
            continue
        ratings.append(parse_rating(outcome.value or "", gold))
        methods.append(JUDGE)
        replies.append(outcome.last_reply)
    dims = [required_text(r, "dim", what) for r in records]
    tasks = [required_text(r, "task_type", what) for r in records]
    scores = [float(max(r, 0)) if r is not None else 0.0 for r in ratings]
    metrics = tempcompass_metrics(scores, dims, tasks)
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "score": scores,
                               "rating": pd.Series(ratings, dtype=object), "method": methods,
                               "judge": pd.Series(replies, dtype=object), "dim": dims, "task_type": tasks})
    their = _their_scores(records, ratings)
    per_sample["vlmevalkit_score"] = their
    empty = [r["index"] for r, rating in zip(records, ratings) if rating == -1]
    counts = judged_counts(methods, len(records))
    notes = [f"captions judged by {judge.name} with VLMEvalKit's TempCompass captioning prompt (temperature 1.0, "
             "max_tokens 128; VLMEvalKit's default judge chatgpt-1106 also gets top_p 1 and presence_penalty 1, which "
             "vlmkit does not send)"]
    if empty:
        notes.append(f"{len(empty)} empty judge reply(ies): 0 here, -1 in VLMEvalKit's sums; index {listed(empty)}")
    notes += method_notes(per_sample, {
        JUDGE_ERROR: "the judge call failed: 0 this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: 0 without asking the judge (VLMEvalKit sends the text 'nan')",
    })
    figure = VlmevalkitFigure(
        metrics=tempcompass_metrics(their, dims, tasks, digits=1), primary="Overall",
        differing=[ReadingDifference(r["index"], s, t, s, t) for r, s, t in zip(records, scores, their) if s != t],
        notes=["VLMEvalKit prints TempCompass's figures in percent with 1 decimal; so does this figure"],
    )
    return EvalResult(scorer=SCORER, metrics=metrics, primary="Overall", per_sample=per_sample,
                      table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts,
                      notes=notes, scale=Scale(PERCENT), vlmevalkit=figure)


def _their_scores(records: list[dict[str, Any]], ratings: list[int | None]) -> list[float]:
    """VLMEvalKit's per-row scores: the rating as it is (-1 kept in its sums). A reply its xlsx reads back as NaN
    is sent to its judge as `nan`, whose verdict vlmkit does not have: the verdict vlmkit got is assumed."""
    return [float(r) if r is not None else 0.0 for r in ratings]
