"""WorldVQA graded as VLMEvalKit grades it (vlmeval/dataset/worldvqa.py at e8e78f05).

The judge is asked, per row, `JUDGE_WORLDQA_PROMPT_EN` (VLMEvalKit's text) with the question, the reply (its
`<think>...</think>` and `<thinking>...</thinking>` blocks removed, stripped) and the `answer` (no image, no system
turn, temperature 0, at most 2048 tokens; VLMEvalKit also sends seed 42 and top_p 1, which vlmkit's judge requests do
not carry). Its reply, `*` removed, is read for `Label: Correct|Incorrect|Unattempted` (any case); a reply without a
label is asked again, up to 10 times in all, then the row is unread (neither attempted nor correct).
Figures, fractions, `Overall` then per `difficulty` and per `category` (`category_<c>`): `<group> Accuracy` (correct
/ rows; the headline is `Overall Accuracy`), `<group> CGA` (correct / attempted, attempted = correct or incorrect),
`<group> AttemptRate` (attempted / rows) and `<group> F-score` (harmonic mean of Accuracy and CGA).
Where vlmkit differs: a failed call is not sent to the judge and counts as unattempted (VLMEvalKit judges its failure
message); a failed judge call leaves the row unread, as VLMEvalKit's does after its retries.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

# VLMEvalKit's judge prompt, verbatim
JUDGE_WORLDQA_PROMPT_EN = (
    "### Role\n"
    "You are an expert judge specialized in evaluating the correctness of answers. "
    "Your task is to assess whether a model-generated answer is correct based on a given "
    "question, the model's response, and the ground truth answer.\n\n"

    "### Task: Evaluate Answer Correctness\n"
    "Please classify the model's response into one of the following three categories. "
    "Ignore differences in formatting, punctuation, language (Chinese vs. English), "
    "or abbreviations/full names. Focus strictly on the **core semantics** and the "
    "**level of detail (granularity)**:\n\n"

    "1. **Correct**:\n"
    "   - The model answer contains the core information of the ground truth.\n"
    "   - The model answer is semantically consistent with the ground truth and contains no contradictions.\n"
    "   - **The granularity of the model answer is equal to or finer than the ground truth.**\n"
    "   - Extra irrelevant information is allowed as long as it does not conflict with the ground truth.\n\n"

    "2. **Incorrect**:\n"
    "   - The model answer provides information that contradicts the ground truth.\n"
    "   - The model answer provides the wrong specific entity, value, or description.\n"
    "   - **The granularity of the model answer is coarser than the ground truth**, "
    "leading to incomplete or insufficiently specific information.\n"
    "   - Even if the model expresses uncertainty but follows up with a wrong answer, "
    "(e.g., \"I'm not sure, maybe it's B\" when the truth is A), it is considered Incorrect.\n\n"

    "3. **Unattempted**:\n"
    "   - The model explicitly states it does not know the answer"
    " (e.g., \"I don't know," "I cannot answer this question\").\n"
    "   - The model suggests the user search elsewhere"
    " (e.g., \"Please search the internet\").\n"
    "   - The model answer contains no information from the ground truth"
    " and provides no incorrect or contradictory information.\n\n"

    "### Output Format\n"
    "Please strictly follow this two-line format for your output:\n"
    "1. **Evaluation**: [A brief explanation of your reasoning]\n"
    "2. **Label**: [Final classification: \"Correct\", \"Incorrect\", or \"Unattempted\"]\n\n"

    "---\n"
    "### Examples\n\n"

    "**Example 1 (Incorrect - Granularity Mismatch/Too Coarse)**\n"
    "Input:\n"
    "'''\n"
    "Question: 图片中属于什么类型的田地？\n"
    "Model Answer: 图片中展示的是梯田。梯田是在山坡地上开垦并修筑的阶梯状农田。\n"
    "Ground Truth Answer: 龙脊梯田\n"
    "'''\n"
    "Evaluation: 标准答案特指“龙脊梯田”，模型只回答了通用的“梯田”。"
    "模型答案层级比答案层级更粗略，未能提供标准答案所需的特指信息，属于层级不一致导致的回答错误。\n"
    "Label: Incorrect\n\n"

    "**Example 2 (Correct - Finer Granularity)**\n"
    "Input:\n"
    "'''\n"
    "Question: What weather phenomenon is in the image?\n"
    "Model Answer: Based on the visual evidence, it is a severe storm with extremely high winds, "
    "most likely a tornado or a very powerful hurricane/typhoon.\n"
    "Ground Truth Answer: High winds\n"
    "'''\n"
    "Evaluation: The ground truth is \"high winds\" and a tornado is a more specific type of high wind. "
    "The semantics are correct and the detail is finer.\n"
    "Label: Correct\n\n"

    "**Example 3 (Correct)**\n"
    "Input:\n"
    "'''\n"
    "Question: 图中内容是什么品牌的logo？\n"
    "Model Answer: via浏览器\n"
    "Ground Truth Answer: via\n"
    "'''\n"
    "Evaluation: 模型答案“via浏览器”包含标准答案“via”，语义一致，且“via浏览器”是更具体的描述，层级匹配。\n"
    "Label: Correct\n\n"

    "**Example 4 (Unattempted)**\n"
    "Input:\n"
    "'''\n"
    "Question: Which athlete is in the image?\n"
    "Model Answer: I cannot answer this question as I do not have relevant sports data.\n"
    "Ground Truth Answer: Wout Weghorst\n"
    "'''\n"
    "Evaluation: The model explicitly states inability and provides no incorrect information.\n"
    "Label: Unattempted\n\n"

    "**Example 5 (Incorrect)**\n"
    "Input:\n"
    "'''\n"
    "Question: 图片中展示的是什么苹果品种？\n"
    "Model Answer: 我觉得可能是阿克苏苹果。\n"
    "Ground Truth Answer: 烟台苹果\n"
    "'''\n"
    "Evaluation: 尽管模型使用了“可能”等词汇，但给出的“阿克苏苹果”与标准答案不符，"
    "因此提供了错误信息。\n"
    "Label: Incorrect\n\n"

    "**Example 6 (Unattempted)**\n"
    "Input:\n"
    "'''\n"
    "Question: What is the name of the insect in this image?\n"
    "Model Answer: This is a photo of an insect."
    " To find the species, consult an entomologist or use recognition software.\n"
    "Ground Truth Answer: Japanese rhinoceros beetle\n"
    "'''\n"
    "Evaluation: The model does not attempt to name the insect and suggests searching elsewhere.\n"
    "Label: Unattempted\n\n"

    "---\n"
    "### Current Task\n"
    "Input:\n"
    "'''\n"
    "Question: {question}\n"
    "Model Answer: {model_answer}\n"
    "Ground Truth Answer: {ground_truth_answer}\n"
    "'''\n\n"
    "Evaluation:\n"
)


JUDGE_MAX_TOKENS = 2048
JUDGE_TRIES = 10
_LABEL = re.compile(r"Label:\s*(Correct|Incorrect|Unattempted)", re.IGNORECASE)


def strip_think(reply: str) -> str:
    text = re.sub(r"<think>.*?</think>", "", reply, flags=re.S)
    return re.sub(r"<thinking>.*?</thinking>", "", text, flags=re.S).strip()


def read_label(verdict: str) -> str | None:
    """`correct`, `incorrect` or `unattempted`; None when the judge's reply holds no label."""
    found = _LABEL.search(verdict.strip().replace("*", ""))
    return found.group(1).lower() if found else None


def judge_prompt(question: str, reply: str, answer: str) -> str:
    return JUDGE_WORLDQA_PROMPT_EN.format(question=question, model_answer=strip_think(reply),
                                          ground_truth_answer=answer)  # fmt: skip


def group_figures(name: str, labels: list[str | None]) -> dict[str, float]:
    total = len(labels)
    correct = labels.count("correct")
    attempted = correct + labels.count("incorrect")
    acc = correct / total if total else 0.0
    cga = correct / attempted if attempted else 0.0
    return {f"{name} Accuracy": acc, f"{name} CGA": cga, f"{name} AttemptRate": attempted / total if total else 0.0,
            f"{name} F-score": 2 * cga * acc / (cga + acc) if cga + acc else 0.0}


def figures(rows: list[dict[str, Any]], labels: list[str | None]) -> dict[str, float]:
    out = group_figures("Overall", labels)
    for column, prefix in (("difficulty", ""), ("category", "category_")):
        if rows and column in rows[0]:
            values = [str(r[column]) for r in rows]
            for value in sorted(set(values)):
                out.update(group_figures(prefix + value, [lb for v, lb in zip(values, labels) if v == value]))
    return out


def score_worldvqa(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Grade WorldVQA replies. Columns: `index`, `prediction` (None/NaN = a failed call), `question`, `answer`;
    optional `difficulty`, `category`."""
    require_columns(df, ("index", "prediction", "question", "answer"), "WorldVQA scoring")
    if len(df) == 0:
        raise ValueError("WorldVQA scoring: the predictions table has no rows")
    rows: list[dict[str, Any]] = df.to_dict("records")
    prompts = {str(pos): judge_prompt(str(r["question"]), str(r["prediction"]), str(r["answer"]))
               for pos, r in enumerate(rows) if not failed_call(r["prediction"])}  # fmt: skip
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_label(reply), temperatures=(0.0,) * JUDGE_TRIES,
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}  # fmt: skip
    labels: list[str | None] = []
    methods: list[str] = []
    for pos in range(len(rows)):
        outcome = outcomes.get(str(pos))
        if outcome is None:
            labels.append("unattempted"), methods.append("inference_error")
        elif outcome.error is not None:
            labels.append(None), methods.append("judge_error")
        else:
            labels.append(outcome.value), methods.append("judge")
    metrics = figures(rows, labels)
    errors = [r["index"] for r, m in zip(rows, methods) if m == "inference_error"]
    notes = [f"{len(errors)} failed call(s) count as unattempted (not sent to the judge): index {listed(errors)}"] \
        if errors else []  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": labels.count("correct"), "inference_errors": len(errors),
              "by_rule": 0, "by_judge": methods.count("judge"),
              "unread": sum(lb is None for lb, m in zip(labels, methods) if m == "judge"),
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "label": pd.Series(labels, dtype=object),
                               "method": methods, "hit": [lb == "correct" for lb in labels]})  # fmt: skip
    return EvalResult(
        scorer="worldvqa", metrics=metrics, primary="Overall Accuracy", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(dict(metrics), "Overall Accuracy"),
    )  # fmt: skip
