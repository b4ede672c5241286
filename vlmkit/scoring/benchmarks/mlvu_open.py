"""MLVU's open-ended tasks (sub_scene, summary) scored by an LLM judge, as VLMEvalKit scores them
(vlmeval/dataset/mlvu.py `MLVU_OpenEnded.evaluate`, `MLVU.evaluate` and utils/mlvu.py at e8e78f05).

Judge: one ask per row at temperature 0, with the task's system text (`SYSTEM_SUB_SCENE`, `SYSTEM_SUMMARY`,
verbatim) and VLMEvalKit's user text (`judge_prompt`): sub_scene gives the question, the scoring points and the
answer; summary the standard answer and the answer.

Reading (VLMEvalKit's `extract_scores_sub_scene` / `extract_scores_summary`, reproduced as they are): for each of the
task's two keys (score_accuracy and score_relevance; score_completeness and score_reliability) found in the reply,
the number between two characters after the next `:` and the next `,` (the text's last character excluded when no
`,` follows); the row's score is the sum of those found (0 when neither key is found, as in VLMEvalKit). A number
that does not parse stops VLMEvalKit's scorer; vlmkit scores the row 0 and says so (`judge_unread`). A row without
a prediction is not asked and scores 0 (VLMEvalKit sends the text `nan` to its judge). The rating truncates each
row's score to a whole number (`int`), as VLMEvalKit's does.

Figures: one per task, the mean of the (truncated) scores (points out of 10), and `G-Avg`: their sum over all
open-ended rows divided by the row count (VLMEvalKit's MLVU table rounds it to 2 decimals; so does its figure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["OPEN_TASKS", "SYSTEM_SUB_SCENE", "SYSTEM_SUMMARY", "judge_prompt", "read_scores", "score_mlvu_open"]

SCORER = "mlvu_open"
OPEN_TASKS = ("sub_scene", "summary")
SYSTEM_SUB_SCENE = """
##TASK DESCRIPTION:
You are required to evaluate a respondent's answer based on a provided question, some scoring points, and the respondent's answer. You should provide two scores. The first is the accuracy score, which should range from 1 to 5. The second is the relevance score, which should also range from 1 to 5. Below are the criteria for each scoring category.
##ACCURACY Scoring Criteria:
Evaluate the respondent's answer against specific scoring points as follows:
Score 1: The response completely misses the scoring point.
Score 3: The response mentions content related to the scoring point but is not entirely correct.
Score 5: The response accurately addresses the scoring point.
Calculate the average score across all scoring points to determine the final accuracy score.
##RELEVANCE Scoring Criteria:
Assess how the respondent's answer relates to the original question:
Score 1: The response is completely off-topic from the question.
Score 2: The response is partially related to the question but contains a significant amount of irrelevant content.
Score 3: The response primarily addresses the question, but the respondent seems uncertain about their own answer.
Score 4: The response mostly addresses the question and the respondent appears confident in their answer.
Score 5: The response is fully focused on addressing the question with no irrelevant content and demonstrates complete certainty.
----
##INSTRUCTION:
1. Evaluate Accuracy: First, assess and score each scoring point based on the respondent's answer. Calculate the average of these scores to establish the final accuracy score. Provide a detailed rationale before assigning your score.
2. Evaluate RELEVANCE: Assess the relevance of the respondent’s answer to the question. Note that when evaluating relevance, the correctness of the answer is not considered; focus solely on how relevant the answer is to the question. Provide a comprehensive rationale before assigning your score.
3. Output Scores in JSON Format: Present the scores in JSON format as follows:
{'score_accuracy': score_acc, 'score_relevance': score_rele, 'total_score': score_acc + score_rele}
"""  # noqa: E501

SYSTEM_SUMMARY = """
##TASK DESCRIPTION:
You are required to evaluate the performance of the respondent in the video summarization task based on the standard answer and the respondent's answer. You should provide two scores. The first is the COMPLETENESS score, which should range from 1 to 5. The second is the RELIABILITY score, which should also range from 1 to 5. Below are the criteria for each scoring category:
##COMPLETENESS Scoring Criteria:
The completeness score focuses on whether the summary covers all key points and main information from the video.
Score 1: The summary hardly covers any of the main content or key points of the video.
Score 2: The summary covers some of the main content and key points but misses many.
Score 3: The summary covers most of the main content and key points.
Score 4: The summary is very comprehensive, covering most to nearly all of the main content and key points.
Score 5: The summary completely covers all the main content and key points of the video.
##RELIABILITY Scoring Criteria:
The reliability score evaluates the correctness and clarity of the video summary. It checks for factual errors, misleading statements, and contradictions with the video content. If the respondent's answer includes details that are not present in the standard answer, as long as these details do not conflict with the correct answer and are reasonable, points should not be deducted.
Score 1: Contains multiple factual errors and contradictions; presentation is confusing.
Score 2: Includes several errors and some contradictions; needs clearer presentation.
Score 3: Generally accurate with minor errors; minimal contradictions; reasonably clear presentation.
Score 4: Very accurate with negligible inaccuracies; no contradictions; clear and fluent presentation.
Score 5: Completely accurate with no errors or contradictions; presentation is clear and easy to understand.
----
##INSTRUCTION:
1. Evaluate COMPLETENESS: First, analyze the respondent's answer according to the scoring criteria, then provide an integer score between 1 and 5 based on sufficient evidence.
2. Evaluate RELIABILITY: First, analyze the respondent's answer according to the scoring criteria, then provide an integer score between 1 and 5 based on sufficient evidence.
3. Output Scores in JSON Format: Present the scores in JSON format as follows:
{'score_completeness': score_comp, 'score_reliability': score_reli, 'total_score': score_comp + score_reli}
"""  # noqa: E501
KEYS = {"sub_scene": ("score_accuracy", "score_relevance"), "summary": ("score_completeness", "score_reliability")}
SYSTEMS = {"sub_scene": SYSTEM_SUB_SCENE, "summary": SYSTEM_SUMMARY}


def judge_prompt(task: str, question: str, answer: str, scoring_points: str, prediction: str) -> str:
    """VLMEvalKit's user text for one row (MLVU_OpenEnded_generate)."""
    head = ("Please score the respondent's answer according to the steps in the Instructions. "
            "You must end with a JSON dict to store the scores.\n")
    if task == "summary":
        return head + f"Standard Answer: {answer}\nRespondent's Answer: {prediction}\n"
    return head + f"Question: {question}\nScoring Points: {scoring_points}\nRespondent's Answer: {prediction}\n"


def read_scores(task: str, reply: str) -> list[float] | None:
    """The numbers VLMEvalKit's extract_scores_<task> takes from a reply (module docstring); None where one does not
    parse (VLMEvalKit's scorer stops there)."""
    scores = []
    for key in KEYS[task]:
        start = reply.find(key)
        if start == -1:
            continue
        number = reply.find(":", start) + 2
        end = reply.find(",", number)
        try:
            scores.append(float(reply[number:end]))
        except ValueError:
            return None
    return scores


def open_rating(tasks: Sequence[str], scores: Sequence[float]) -> dict[str, list[int]]:
    """VLMEvalKit's get_dimension_rating: task -> [sum of int(score), rows], tasks in first-seen order."""
    out: dict[str, list[int]] = {}
    for task, score in zip(tasks, scores):
        entry = out.setdefault(task, [0, 0])
        entry[0] += int(score)
        entry[1] += 1
    return out


def open_metrics(rating: dict[str, list[int]], digits: int | None = None) -> dict[str, float]:
    """`G-Avg` (sum / rows; VLMEvalKit's MLVU table rounds it to 2 `digits`) and each task's mean score."""
    total, rows = sum(v[0] for v in rating.values()), sum(v[1] for v in rating.values())
    metrics = {"G-Avg": total / rows if digits is None else round(total / rows, digits)}
    metrics.update({task: s / n for task, (s, n) in rating.items()})
    return metrics


def score_mlvu_open(df: pd.DataFrame, judge: Judge, *, what: str = "MLVU_OpenEnded") -> EvalResult:
    """Judge every open-ended answer (module docstring). Columns: index, task_type, question, answer,
    scoring_points, prediction."""
    records, keys = keyed_records(df, ("index", "task_type", "question", "answer", "scoring_points", "prediction"),
                                  what)
    tasks = []
    for row in records:
        task = required_text(row, "task_type", what)
        if task not in OPEN_TASKS:
            raise ValueError(f"{what}: row index {row['index']}, field `task_type`: {task!r} is not an MLVU "
                             f"open-ended task ({', '.join(OPEN_TASKS)})")
        tasks.append(task)
    scores = [0.0] * len(records)
    methods = [INFERENCE_ERROR] * len(records)
    replies: list[str | None] = [None] * len(records)
    for task in OPEN_TASKS:
        prompts = {
            key: judge_prompt(task, str(row["question"]), required_text(row, "answer", what),
                              "" if failed_call(row["scoring_points"]) else str(row["scoring_points"]),
                              str(row["prediction"]))
            for key, row, t in zip(keys, records, tasks) if t == task and not failed_call(row["prediction"])
        }
        if not prompts:
            continue
        outcomes = judge_rounds(judge, prompts, lambda _k, reply, task=task: reply, system=SYSTEMS[task])
        for i, key in enumerate(keys):
            outcome = outcomes.get(key)
            if outcome is None:
                continue
            replies[i] = outcome.last_reply
            if outcome.error is not None:
                methods[i] = JUDGE_ERROR
                continue
            found = read_scores(task, outcome.value or "")
            methods[i] = JUDGE if found else UNREAD
            scores[i] = float(sum(found)) if found else 0.0
    rating = open_rating(tasks, scores)
    metrics = open_metrics(rating)
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "task_type": tasks, "score": scores,
                               "method": methods, "judge": pd.Series(replies, dtype=object)})
    counts = judged_counts(methods, len(records), count_unread=True)
    notes = [f"scored 2-10 by {judge.name} with VLMEvalKit's MLVU open-ended prompts (VLMEvalKit forces gpt-4-0125, "
             "gpt-4-0125-preview); each row's score truncated to a whole number, as VLMEvalKit's rating does"]
    notes += method_notes(per_sample, {
        UNREAD: ("the judge's reply names neither score key (0, as in VLMEvalKit) or a number that does not parse "
                 "(0; VLMEvalKit's scorer stops there)"),
        JUDGE_ERROR: "the judge call failed: 0 this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: 0 without asking the judge (VLMEvalKit sends the text 'nan')",
    })
    table = pd.DataFrame([{"task": t, "success": s, "overall": n, "acc": s / n} for t, (s, n) in rating.items()])
    figure = _figure(records, tasks, methods, scores, replies)
    return EvalResult(scorer=SCORER, metrics=metrics, primary="G-Avg", per_sample=per_sample, table=table,
                      table_suffix="score", counts=counts, notes=notes, scale=Scale(POINTS, out_of=10.0),
                      vlmevalkit=figure)


def _figure(records: list[dict[str, Any]], tasks: list[str], methods: list[str], scores: list[float],
            replies: list[str | None]) -> VlmevalkitFigure | None:
    """VLMEvalKit's figures on the same replies; they differ only where it stops (an unparsable number)."""
    stops = [r["index"] for r, t, m, reply in zip(records, tasks, methods, replies)
             if m == UNREAD and reply is not None and read_scores(t, reply) is None]
    notes = []
    if stops:
        notes.append(f"{len(stops)} judge reply(ies) hold a score key followed by text float() cannot read: "
                     f"VLMEvalKit's scorer stops with a ValueError there (vlmkit scores them 0); index {listed(stops)}")
    return VlmevalkitFigure(metrics=open_metrics(open_rating(tasks, scores), 2), primary="G-Avg", notes=notes)
