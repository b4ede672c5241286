"""MMOral_OPG_OPEN graded by an LLM judge as VLMEvalKit grades it (vlmeval/dataset/mmoral_opg_open.py and
utils/mmoral_opg.py `build_mmoral_opg_gpt4_prompt`, `MMOral_opg_auxeval`, `MMOral_opg_acc` at e8e78f05).

The judge prompt (`judge_prompt`) is VLMEvalKit's table of graded examples followed by the row: `question | answer |
reply | ` (the answer with ` <AND> ` / ` <OR> ` spaced out). It is asked up to 5 times, at temperatures 0, 0.5, 1.0,
1.5, 2.0 (VLMEvalKit's max_tokens 16384), until the judge's reply reads as a number (Python's `float` of the whole
reply) from 0 to 1; that number is the row's score, 0 when no attempt gives one.
Figures, in percent (sum of scores / rows): `Overall`, one per main category (`Teeth`, `Patho`, `HisT`, `Jaw`,
`SumRec`, `Report`: the rows whose `category` contains it) and `category: <category with , as _>`.

Where vlmkit differs: a failed call scores 0 and is not sent to the judge (VLMEvalKit grades its failure message); a
failed judge call is a judge error, the row 0 (VLMEvalKit asks again); a judge reply `nan` is not a score (VLMEvalKit
takes it, which makes its figures NaN); a main category without rows is left out (VLMEvalKit divides by zero there).
"""

from __future__ import annotations

import math

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

MAIN_CATEGORIES = ("Teeth", "Patho", "HisT", "Jaw", "SumRec", "Report")
TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)
MAX_TOKENS = 16384
JUDGE_EXAMPLES = (
    "\n"
    "Given the question, compare the ground truth and prediction from AI\n"
    "models, to generate a correctness score for the prediction.\n"
    "The correctness score is 0.0 (totally wrong), 0.1, 0.2, 0.3, 0.4, 0.5,\n"
    "0.6, 0.7, 0.8, 0.9, or 1.0 (totally right).\n"
    "Just complete the last space of the correctness score.\n"
    "\n"
    "Question | Ground truth | Prediction | Correctness\n"
    "--- | --- | --- | ---\n"
    "How many teeth are visualized in the radiograph? | 30 teeth are visualized with clear anatomical\n"
    "definition. | 30 | 1.0\n"
    "How many teeth are visualized in the radiograph? | 30 teeth are visualized with clear anatomical\n"
    "definition. | 29 teeth are visualized with clear anatomical definition. | 0.0\n"
    "What is the status of the wisdom teeth in the radiograph? | Three\n"
    "wisdom teeth are detected, all of which are impacted: #18, #28, and #48.\n"
    "| #18: impacted, #28: impacted, #48: erupted | 0.7\n"
    "What is the condition of the teeth #26 and #14? | Teeth #26 and #14\n"
    "show signs of periapical abscesses. | Teeth #26 and #23 show signs\n"
    "of periapical abscesses. | 0.5\n"
    "What is the condition of the bone architecture and visible structures in\n"
    "the jaw? | No apparent bone loss is observed. Bilateral mandibular\n"
    "canals and maxillary sinuses are clearly visible. | Bilateral\n"
    "mandibular canals and maxillary sinuses are clearly visible. | 0.5\n"
    "What is the clinical priority concern regarding the periapical lesions?\n"
    "| Periapical cysts at #11 and #12, and granuloma at #46 require\n"
    "endodontic evaluation. | Periapical lesions at #11, #12, and #46\n"
    "require endodontic evaluation. | 0.8\n"
    "What radiographic features are visible in tooth #31 on the panoramic X-ray? | [\n"
    "\n"
    '{"Teeth position": {"point_2d": [1242, 726]}},\n'
    "\n"
    '{"Crown": {"box_2d": [1220, 637, 1266, 741]}}\n'
    "\n"
    "] | Crown | 0.8\n"
    "What radiographic features are visible in tooth #31 on the panoramic X-ray? | [\n"
    "\n"
    '{"Teeth position": {"point_2d": [1242, 726]}},\n'
    "\n"
    '{"Crown": {"box_2d": [1220, 637, 1266, 741]}}\n'
    "\n"
    "] | Crown at position: [1230, 627, 1276, 750] | 0.9\n"
    "What radiographic features are visible in tooth #31 on the panoramic X-ray? | [\n"
    "\n"
    '{"Teeth position": {"point_2d": [1242, 726]}},\n'
    "\n"
    '{"Crown": {"box_2d": [1220, 637, 1266, 741]}}\n'
    "\n"
    '] | Teeth at position: {"point_2d": [1242, 726]}},\n'
    "\n"
    '{Crown at position: {"box_2d": [1230, 627, 1276, 750]}} | 1.0\n'
    ""
)  # fmt: skip


def judge_prompt(question: str, answer: str, reply: str) -> str:
    row = " | ".join([question, answer.replace("<AND>", " <AND> ").replace("<OR>", " <OR> "), reply, ""])
    return JUDGE_EXAMPLES + "\n" + row


def read_score(text: str) -> float | None:
    """The judge's reply as a score from 0 to 1 (Python's float of the whole reply), else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value <= 1 and not math.isnan(value) else None


def figures(categories: list[str], scores: list[float]) -> dict[str, float]:
    out = {"Overall": 100 * sum(scores) / len(scores)}
    for main in MAIN_CATEGORIES:
        picked = [s for c, s in zip(categories, scores) if main in c]
        if picked:
            out[main] = 100 * sum(picked) / len(picked)
    for category in dict.fromkeys(c.replace(",", "_") for c in categories):
        picked = [s for c, s in zip(categories, scores) if c.replace(",", "_") == category]
        out[f"category: {category}"] = 100 * sum(picked) / len(picked)
    return out


def score_mmoral_opg_open(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Grade MMOral_OPG_OPEN replies. Columns: `index`, `prediction` (None/NaN = a failed call), `question`,
    `answer`, `category`."""
    require_columns(df, ("index", "prediction", "question", "answer", "category"), "MMOral-OPG open scoring")
    if len(df) == 0:
        raise ValueError("MMOral-OPG open scoring: the predictions table has no rows")
    records = df.to_dict("records")
    prompts = {str(pos): judge_prompt(str(r["question"]), str(r["answer"]), str(r["prediction"]))
               for pos, r in enumerate(records) if not failed_call(r["prediction"])}  # fmt: skip
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_score(reply), temperatures=TEMPERATURES,
                            max_tokens=MAX_TOKENS) if prompts else {}  # fmt: skip
    scores, methods = [], []
    for pos in range(len(records)):
        outcome = outcomes.get(str(pos))
        if outcome is None:
            scores.append(0.0), methods.append("inference_error")
        elif outcome.error is not None:
            scores.append(0.0), methods.append("judge_error")
        else:
            scores.append(outcome.value if outcome.value is not None else 0.0)
            methods.append("judge" if outcome.value is not None else "unread")
    categories = [str(c) for c in df["category"]]
    metrics = figures(categories, scores)
    errors = [r["index"] for r, m in zip(records, methods) if m == "inference_error"]
    notes = [f"{len(errors)} failed call(s) score 0 (not sent to the judge): index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": 0,
              "by_judge": methods.count("judge"), "unread": methods.count("unread"),
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    return EvalResult(
        scorer="mmoral_opg_open", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "score": scores, "method": methods}),
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(dict(metrics), "Overall"),
    )  # fmt: skip
