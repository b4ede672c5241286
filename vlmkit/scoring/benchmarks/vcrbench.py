"""VCR-Bench's scorer (VLMEvalKit `VCRBench.evaluate` and utils/vcrbench/ at e8e78f05): answer accuracy and the
precision and recall of the model's reasoning steps, all judged by an LLM.

Four judge stages, each asked once per row at temperature 0 with VLMEvalKit's system text (sent as VLMEvalKit sends
it: its `{{`/`}}` stay doubled, its raw backslashes stay) and user text:
1. extraction (`EXTRACTION_SYSTEM`; `Question: <q>\\nAnswer: <reply>\\nYour output:`): the final answer;
2. scoring (`SCORING_SYSTEM`; `Question: <q>\\n[Model Answer]: <extracted>\\n[Standard Answer]: <answer>\\nYour
   output:`): right when the reply is `1` (surrounding white space ignored);
3. precision (`PRECISION_SYSTEM`; `[Problem]:<q>\\n[Solution]:<reply>\\n[Ground Truth Information]:<reasoning>`): the
   judge's steps, each with a step_type and a judgment Matched / Wrong / Redundant;
4. recall (`RECALL_SYSTEM`; `[Problem]:<q>\\n[Answer]:<answer>\\n[Solution]:<reply>\\n[Ground Truth
   Information]:<reasoning>`): the reference steps judged Matched / Unmatched.
Steps 3 and 4 are read as VLMEvalKit reads them: the whole reply must be a JSON array (no code fence), every entry's
step_type one of the three and judgment one of the stage's; otherwise (or an empty array for precision) the row has
no precision (recall) at all. Per row: precision of Video Description Steps (`Perception`), Logical Inference Steps
(`Reasoning`) and both (`Overall`) = Matched / (Matched + Wrong); recall the same with Unmatched; none where the
denominator is 0.

Figures (fractions): `Accuracy` (headline: right / all rows), `accuracy/<dimension>`, `accuracy/<duration bucket>`
(0-60, 60-300, 300+ seconds); `<Perception|Reasoning|Overall>/precision`, `/recall` (means over the rows that have
one) and `/f1` (of those two means).

Where vlmkit differs: VLMEvalKit's means skip a row whose precision or recall is 0 (`if precision and ...` treats
0.0 as missing), which lifts its figures; vlmkit counts those zeros (its figure does not). A row without a prediction
is not asked: it is wrong and has no precision or recall (VLMEvalKit asks the scoring, precision and recall stages
with `-1` or `nan` in place of the reply). A failed judge call is left out this run and asked again on the next.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE_ERROR
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["EXTRACTION_SYSTEM", "PRECISION_SYSTEM", "RECALL_SYSTEM", "SCORING_SYSTEM", "score_vcrbench",
           "step_shares"]

SCORER = "vcrbench"
RECALL_SYSTEM = (
    "You are an expert system for verifying solutions to video-based problems. Your task is to match the ground truth middle steps with the provided solution.\n"  # noqa: E501
    "\n"
    "INPUT FORMAT:\n"
    "1. Problem: The original question/task\n"
    "2. A Solution of a model\n"
    "3. Ground Truth: Essential steps required for a correct answer\n"
    "\n"
    "MATCHING PROCESS:\n"
    "\n"
    "You need to match each ground truth middle step with the solution:\n"
    "\n"
    "Match Criteria:\n"
    "- The middle step should exactly match in the content or is directly entailed by a certain content in the solution\n"  # noqa: E501
    "- All the details must be matched, including the specific value and content\n"
    "- You should judge all the middle steps for whethere there is a match in the solution\n"
    "\n"
    "Step Types:\n"
    "1. Logical Inference Steps\n"
    "   - Contains exactly one logical deduction\n"
    "   - Must produce a new derived conclusion\n"
    "   - Cannot be just a summary or observation\n"
    "\n"
    "2. Video Description Steps\n"
    "   - Pure visual observations\n"
    "   - Only includes directly visible elements\n"
    "   - No inferences or assumptions\n"
    "   - Contains event time\n"
    "\n"
    "3. Background Review Steps:\n"
    "   - Repetition or review of the problem\n"
    "   - Not directly related to solving the problem.\n"
    "\n"
    "OUTPUT FORMAT:\n"
    "JSON array of judgments:\n"
    "[\n"
    "  {{\n"
    "    \"step\": ground truth middle step,\n"
    "    \"step_type\": \"Video Description Steps|Logical Inference Steps|Background Review Steps\",\n"
    "    \"judgment\": \"Matched\" | \"Unmatched\",\n"
    "  }}\n"
    "]\n"
    "\n"
    "ADDITIONAL RULES:\n"
    "1. Only output the json array with no additional information.\n"
    "2. Judge each ground truth middle step in order without omitting any step.\n"
    "\n"
    "Here is the problem, answer, solution, and the ground truth middle steps:\n"
)
PRECISION_SYSTEM = (
    "\n"
    "# Task Overview\n"
    "Given a solution with multiple reasoning steps for an video-based problem, reformat it into well-structured steps and evaluate their correctness.\n"  # noqa: E501
    "\n"
    "# Step 1: Reformatting the Solution\n"
    "Convert the unstructured solution into distinct reasoning steps while:\n"
    "- Preserving all original content and order\n"
    "- Not adding new interpretations\n"
    "- Not omitting any steps\n"
    "\n"
    "## Step Types\n"
    "1. Logical Inference Steps\n"
    "   - Contains exactly one logical deduction\n"
    "   - Must produce a new derived conclusion\n"
    "   - Cannot be just a summary or observation\n"
    "\n"
    "2. Video Description Steps\n"
    "   - Pure visual observations\n"
    "   - Only includes directly visible elements\n"
    "   - No inferences or assumptions\n"
    "   - Contains event time\n"
    "\n"
    "3. Background Review Steps:\n"
    "   - Repetition or review of the problem\n"
    "   - Not directly related to solving the problem.\n"
    "\n"
    "## Step Requirements\n"
    "- Each step must be atomic (one conclusion per step)\n"
    "- No content duplication across steps\n"
    "- Initial analysis counts as background information\n"
    "- Final answer determination counts as logical inference\n"
    "\n"
    "# Step 2: Evaluating Correctness\n"
    "Evaluate each step against:\n"
    "\n"
    "## Ground Truth Matching\n"
    "For video descriptions:\n"
    "- Key elements must match ground truth descriptions\n"
    "\n"
    "For logical inferences:\n"
    "- Conclusion must EXACTLY match or be DIRECTLY entailed by ground truth\n"
    "\n"
    "For Background review:\n"
    "-  Without special circumstances are deemed to be redundant\n"
    "\n"
    "## Reasonableness Check (if no direct match)\n"
    "If Step:\n"
    "- Premises must not contradict any ground truth or correct answer\n"
    "- Logic is valid\n"
    "- Conclusion must not contradict any ground truth\n"
    "- Conclusion must support or be neutral to correct answer\n"
    "- Helpful in solving the problem, non-redundant steps\n"
    "this Step be viewed as matched.\n"
    "\n"
    "## Judgement Categories\n"
    "- \"Match\": Aligns with ground truth\n"
    "- \"Wrong\": Contradictory with ground truth\n"
    "- \"Redundant\": Redundant steps that do not help solve the problem\n"
    "\n"
    "# Output Requirements\n"
    "1. The output format MUST be in valid JSON format without ANY other content.\n"
    "2. For highly repetitive patterns, output it as a single step.\n"
    "3. Output maximum 35 steps. Always include the final step that contains the answer.\n"
    "\n"
    "Here is the json output format:\n"
    "## Output Format\n"
    "[\n"
    "  {{\n"
    "    \"step\": \"reformatted the solution step\",\n"
    "    \"step_type\": \"Video Description Steps|Logical Inference Steps|Background Review Steps\",\n"
    "    \"reasons_for_judgment\": \"The reason for judging the matching result of the step in the solution based on Ground Truth Information. Sufficient evidence needs to be found in Ground Truth Information to determine the correctness of the reformatted the solution step. The video event description time error is no more than 3 seconds and is considered correct. If the solution step does not specify the time, it is considered wrong.\",\n"  # noqa: E501
    "    \"judgment\": \"Matched|Wrong|Redundant\",\n"
    "  }}\n"
    "]\n"
    "\n"
    "Here is the problem, and the solution that needs to be reformatted to steps:\n"
    "\n"
)
EXTRACTION_SYSTEM = (
    "You are an AI assistant who will help me to extract an answer of a question. You are provided with a question and a response, and you need to find the final answer of the question.\n"  # noqa: E501
    "\n"
    "Extract Rule:\n"
    "[Multiple choice question]\n"
    "1. The answer could be answering the option letter or the value. You should directly output the choice letter of the answer.\n"  # noqa: E501
    "2. You should output a single uppercase character in A, B, C, D, E, F, G, H, I (if they are valid options), and Z.\n"  # noqa: E501
    "3. If the meaning of all options are significantly different from the final answer, output Z.\n"
    "[Non Multiple choice question]\n"
    "1. Output the final value of the answer. It could be hidden inside the last step of calculation or inference. Pay attention to what the question is asking for to extract the value of the answer.\n"  # noqa: E501
    "2. The final answer could also be a short phrase or sentence.\n"
    "3. If the answer is about a certain time period, such as from 1 minute 30 seconds to 2 minutes 30 seconds, it should be given in the format [90, 150].\n"  # noqa: E501
    "4. If the response doesn't give a final answer, output Z.\n"
    "\n"
    "Output Format:\n"
    "Directly output the extracted answer of the response\n"
    "\n"
    "Example 1:\n"
    "Question: What is the main object in image?\n"
    "Options: A. teddy bear B. rabbit C. cat D. dog\n"
    "Response: a cute teddy bear\n"
    "Your output: A\n"
    "Example 2:\n"
    "Question: What is the main object in image?\n"
    "Options: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\n"
    "Your output: Z\n"
    "Example 3:\n"
    "Question: On a flat playground, choose a Cartesian Oxy coordinate system (in unit of meters). A child running at a constant velocity $V=1 \\mathrm{~m} / \\mathrm{s}$ around a heart-shaped path satisfies the following order- 6 algebraic equation:\n"  # noqa: E501
    "$$\n"
    "\\left(x^{2}+y^{2}-L^{2}\\right)^{3}-L x^{2} y^{3}=0, L=10 \\text {. }\n"
    "$$\n"
    "When the child is at the position $(x, y)=(L, 0)$, what is the magnitude of their acceleration?\n"
    "\n"
    "<image>\n"
    "Response: fore, \\(r \\approx 10 \\, \\text{m}\\).\n"
    "\n"
    "7. **Calculating Acceleration**: Using the radius of curvature:\n"
    "   \\[\n"
    "   a_c = \\frac{V^2}{r} = \\frac{(1 \\, \\text{m/s})^2}{10 \\, \\text{m}} = 0.1 \\, \\text{m/s}^2\n"
    "   \\]\n"
    "\n"
    "8. **Magnitude of Acceleration**: The magnitude of the acceleration is the sum of the tangential and centripetal accelerations. Since the tangential acceleration is zero, the magnitude of the acceleration is purely centripetal:\n"  # noqa: E501
    "   \\[\n"
    "   \\text{Magnitude of acceleration} = a_c = 0.1 \\, \\text{m/s}^2\n"
    "   \\]\n"
    "\n"
    "Answer: \\boxed{0.1 \\, \\text{m/s}^2}\n"
    "Your output: 0.1 text{m/s}^2\n"
    "Example 4:\n"
    "Question: In the diagram, $O A=15, O P=9$ and $P B=4$. Determine the equation of the line through $A$ and $B$. Explain how you got your answer.\n"  # noqa: E501
    "\n"
    "<image>\n"
    "Response: The equation of the line through $A$ and $B$ is $y = -\frac{1}{3}x + 12$.\n"
    "\n"
    "To find the equation of the line through $A$ and $B$, we first need to find the slope of the line. The slope of a line passing through two points $(x_1, y_1)$ and $(x_2, y_2)$ is given by the formula:\n"  # noqa: E501
    "\n"
    "$$\text{Slope} = \frac{y_2 - y_1}{x_2 - x_1}$$\n"
    "\n"
    "Using the coordinates of points $A(0, 15)$ and $B(4, 0)$, we can calculate the slope as follows:\n"
    "\n"
    "$$\text{Slope} = \frac{0 - 15}{4 - 0} = \frac{-15}{4} = -\frac{15}{4}$$\n"
    "\n"
    "Now that we have the slope, we can use the point-slope form of a linear equation to find the equation of the line. The point-slope form is given by:\n"  # noqa: E501
    "\n"
    "$$y - y_1 = m(x - x_1)$$\n"
    "\n"
    "where $(x_1, y_1)$ is a point on the line and $m$ is the slope. In this case, we can use point $A(0, 15)$ and the slope $-\frac{15}{4}$:\n"  # noqa: E501
    "\n"
    "$$y - 15 = -\frac{15}{4}(x - 0)$$\n"
    "\n"
    "Simplifying the equation, we get:\n"
    "\n"
    "$$y - 15 = -\frac{15}{4}x$$\n"
    "\n"
    "$$y = -\frac{15}{4}x + 15$$\n"
    "\n"
    "Therefore, the equation of the line through $A$ and $B$ is $y = -\frac{15}{4}x + 15$.\n"
    "Your output: $y = -\frac{15}{4}x + 15$\n"
    "Example 5:\n"
    "Question: <image> <image> <image> <image> <image> <image> <image> <image> <image>In the paper 'An Object is Worth 64x64 Pixels: Generating 3D Object via Image Diffusion', what aspect of the proposed method does this figure aim to demonstrate?\n"  # noqa: E501
    "Response: the potential of this 3D generation paradigm to generate objects with PBR materials\n"
    "Your output: the potential of this 3D generation paradigm to generate objects with PBR materials\n"
    "Example 6:\n"
    "Question: Please specify the start and end time of the event 'An intro screen appears with a gray background and the red and white words that say PRO TRAINING.'\n"  # noqa: E501
    "Response: The start and end time of the event 'An intro screen appears with a gray background and the red and white words that say PRO TRAINING.' are as follows:\n"  # noqa: E501
    "\n"
    "**Step 1: Identify the start time of the event.**\n"
    "The video starts at 00:00. The intro screen is visible from the very beginning.\n"
    "\n"
    "**Start time:** 00:00\n"
    "\n"
    "**Step 2: Identify the end time of the event.**\n"
    "The intro screen starts to disappear and transition to the next scene at 00:11. By 00:12, the intro screen is completely gone. So, the intro screen is visible until 00:11.\n"  # noqa: E501
    "\n"
    "**End time:** 00:11\n"
    "\n"
    "Therefore, the event 'An intro screen appears with a gray background and the red and white words that say PRO TRAINING' starts at **00:00** and ends at **00:11**.\n"  # noqa: E501
    "\n"
    "**Answer:**\n"
    "Start time: 00:00\n"
    "End time: 00:11\n"
    "Your output: [0,11]\n"
    "\n"
)
SCORING_SYSTEM = (
    "You are an AI assistant who will help me to judge whether two answers are consistent.\n"
    "\n"
    "Input Illustration:\n"
    "[Standard Answer] is the standard answer to the question\n"
    "[Model Answer] is the answer extracted from a model's output to this question.\n"
    "\n"
    "Task Illustration:\n"
    "Determine whether [Standard Answer] and [Model Answer] are consistent.\n"
    "Consistent Criteria:\n"
    "[Multiple-Choice questions]\n"
    "1. If the [Model Answer] is the option letter, then it must completely matches the [Standard Answer].\n"
    "2. If the [Model Answer] is not an option letter, then the [Model Answer] must completely match the option content of [Standard Answer].\n"  # noqa: E501
    "[Nan-Multiple-Choice questions]\n"
    "1. The [Model Answer] and [Standard Answer] should exactly match.\n"
    "2. If the meaning is expressed in the same way, it is also considered consistent, for example, 0.5m and 50cm.\n"
    "\n"
    "Output Format:\n"
    "1. If they are consistent, output 1; if they are different, output 0.\n"
    "2. DIRECTLY output 1 or 0 without any other content.\n"
    "\n"
    "Example 1:\n"
    "Question: What is the main object in image?\\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "[Model Answer]: a cute teddy bear\n"
    "[Standard Answer]: A\n"
    "Your output: 1\n"
    "\n"
    "Example 2:\n"
    "Question: Find the value of AB. Choices: A.1;B.5;C.9;D.10\n"
    "[Model Answer]: \\\\boxed{5}\n"
    "[Standard Answer]: B\n"
    "Your output: 1\n"
    "\n"
    "Example 3:\n"
    "Question: Three of the following four slides are from the same presentation, but one is from a different one. Please identify the outlier: \\n\\n<image> <image> <image> <image>\\nA. the forth image\\nB. the second image\\nC. the third image\\nD. None of the choices provided\n"  # noqa: E501
    "[Model Answer]: \\\\boxed{B}\n"
    "[Standard Answer]: A\n"
    "Your output: 0\n"
    "\n"
    "\n"
)
STEP_TYPES = {"Video Description Steps": "Perception", "Logical Inference Steps": "Reasoning",
              "Background Review Steps": None}
PRECISION_JUDGMENTS = ("Matched", "Wrong", "Redundant")
RECALL_JUDGMENTS = ("Matched", "Unmatched")
GROUPS = ("Perception", "Reasoning", "Overall")


def duration_bucket(seconds: float) -> str:
    return "0-60" if seconds <= 60 else "60-300" if seconds <= 300 else "300+"


def step_shares(reply: str, judgments: Sequence[str]) -> dict[str, float | None] | None:
    """Per group, Matched / (Matched + the stage's miss judgment: Wrong or Unmatched), None where that is 0/0; None
    for a reply VLMEvalKit cannot use (module docstring)."""
    try:
        steps = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(steps, list) or (judgments == PRECISION_JUDGMENTS and not steps):
        return None
    miss = judgments[1]
    counts = {t: dict.fromkeys(judgments, 0) for t in STEP_TYPES}
    for step in steps:
        if not isinstance(step, dict) or step.get("step_type") not in counts or step.get("judgment") not in judgments:
            return None
        counts[step["step_type"]][step["judgment"]] += 1
    out: dict[str, float | None] = {}
    for step_type, group in STEP_TYPES.items():
        if group is not None:
            c = counts[step_type]
            out[group] = c["Matched"] / (c["Matched"] + c[miss]) if c["Matched"] + c[miss] else None
    matched = sum(counts[t]["Matched"] for t, g in STEP_TYPES.items() if g)
    total = matched + sum(counts[t][miss] for t, g in STEP_TYPES.items() if g)
    out["Overall"] = matched / total if total else None
    return out


def _ask(judge: Judge, prompts: dict[str, str], system: str) -> dict[str, Any]:
    return judge_rounds(judge, prompts, lambda _k, reply: reply, system=system) if prompts else {}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def cot_figures(precisions: Sequence[dict | None], recalls: Sequence[dict | None], *,
                skip_zero: bool) -> dict[str, float]:
    """`<group>/precision`, `/recall`, `/f1` (module docstring); `skip_zero`: VLMEvalKit's means, which skip 0."""
    out = {}
    for group in GROUPS:
        p = [d[group] for d in precisions if d is not None and d[group] is not None and not (skip_zero and
                                                                                           d[group] == 0)]
        r = [d[group] for d in recalls if d is not None and d[group] is not None and not (skip_zero and d[group] == 0)]
        mp, mr = _mean(p), _mean(r)
        out.update({f"{group}/precision": mp, f"{group}/recall": mr,
                    f"{group}/f1": 2 * mp * mr / (mp + mr) if mp + mr > 0 else 0.0})
    return out


def score_vcrbench(df: pd.DataFrame, judge: Judge, *, what: str = "VCR-Bench") -> EvalResult:
    """The four judge stages over every row (module docstring). Columns: index, prediction, question, answer,
    reasoning, dimension, duration."""
    records, keys = keyed_records(df, ("index", "prediction", "question", "answer", "reasoning", "dimension",
                                       "duration"), what)
    live = [(k, r) for k, r in zip(keys, records) if not is_missing(r["prediction"])]
    q = {k: required_text(r, "question", what) for k, r in zip(keys, records)}
    extracted = _ask(judge, {k: f"Question: {q[k]}\nAnswer: {r['prediction']}\nYour output:" for k, r in live},
                     EXTRACTION_SYSTEM)
    scoring = _ask(judge, {
        k: f"Question: {q[k]}\n[Model Answer]: {extracted[k].value}\n[Standard Answer]: {r['answer']}\nYour output:"
        for k, r in live if extracted[k].error is None}, SCORING_SYSTEM)
    precision = _ask(judge, {k: f"[Problem]:{q[k]}\n[Solution]:{r['prediction']}\n[Ground Truth Information]:"
                                f"{r['reasoning']}" for k, r in live}, PRECISION_SYSTEM)
    recall = _ask(judge, {k: f"[Problem]:{q[k]}\n[Answer]:{r['answer']}\n[Solution]:{r['prediction']}\n"
                             f"[Ground Truth Information]:{r['reasoning']}" for k, r in live}, RECALL_SYSTEM)
    right, methods, precisions, recalls = [], [], [], []
    for key in keys:
        if key not in extracted:
            right.append(False)
            methods.append(INFERENCE_ERROR)
            precisions.append(None)
            recalls.append(None)
            continue
        failed = [s for s in (extracted, scoring, precision, recall) if key in s and s[key].error is not None]
        methods.append(JUDGE_ERROR if failed or key not in scoring else "judge")
        right.append(key in scoring and scoring[key].error is None and (scoring[key].value or "").strip() == "1")
        precisions.append(step_shares(precision[key].value or "", PRECISION_JUDGMENTS)
                          if precision[key].error is None else None)
        recalls.append(step_shares(recall[key].value or "", RECALL_JUDGMENTS) if recall[key].error is None else None)
    dimensions = [str(r["dimension"]) for r in records]
    buckets = [duration_bucket(float(r["duration"])) for r in records]
    metrics = {"Accuracy": _mean([float(x) for x in right])}
    for name, labels in (("accuracy", dimensions), ("accuracy", buckets)):
        for label in dict.fromkeys(labels):
            metrics[f"{name}/{label}"] = _mean([float(x) for x, lab in zip(right, labels) if lab == label])
    metrics.update(cot_figures(precisions, recalls, skip_zero=False))
    theirs = {k: v for k, v in metrics.items() if not k.split("/")[-1] in ("precision", "recall", "f1")}
    theirs.update(cot_figures(precisions, recalls, skip_zero=True))
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "hit": right, "method": methods,
        "extracted": [extracted[k].value if k in extracted else None for k in keys],
        **{f"{g}/precision": [None if p is None else p[g] for p in precisions] for g in GROUPS},
        **{f"{g}/recall": [None if r is None else r[g] for r in recalls] for g in GROUPS},
    })  # fmt: skip
    counts = {"total": len(records), "scored": len(records), "judge_errors": methods.count(JUDGE_ERROR),
              "inference_errors": methods.count(INFERENCE_ERROR),
              "no_precision": sum(p is None for p in precisions), "no_recall": sum(r is None for r in recalls)}
    notes = [f"judged by {judge.name} with VLMEvalKit's VCR-Bench texts (its default judge gpt-4o-0806), four asks a "
             "row; the reasoning figures count a row's 0 precision or recall, which VLMEvalKit's means skip (its "
             "figure)"]
    for method, text in ((INFERENCE_ERROR, "no prediction: wrong, no precision or recall, not asked"),
                         (JUDGE_ERROR, "a judge call failed: that stage is left out this run, asked again next run")):
        rows = [r["index"] for r, m in zip(records, methods) if m == method]
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {text}; index {listed(rows)}")
    figure = VlmevalkitFigure(metrics={k: round(v, 3) for k, v in theirs.items()}, primary="Accuracy",
                              notes=["VLMEvalKit writes its VCR-Bench figures with 3 decimals to text files; its "
                                     "precision and recall means skip rows whose value is 0"])
    return EvalResult(scorer=SCORER, metrics=metrics, primary="Accuracy", per_sample=per_sample,
                      table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="score", counts=counts,
                      notes=notes, scale=Scale(FRACTION), vlmevalkit=figure)
