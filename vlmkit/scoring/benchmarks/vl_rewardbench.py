"""VL-RewardBench graded as VLMEvalKit grades it (vlmeval/dataset/vl_rewardbench.py at e8e78f05).

The model under test is the reward model: it reads two responses (`response`, a list of two) and writes a judgement.
The LLM judge is asked, per row, `LLM_PARSE_ANSWER_PROMPT` with that judgement (no image, no system turn,
temperature 0, at most 128 tokens) and names the better one: `answer 1` in its reply (any case) reads 1, else
`answer 2` reads 2, else nothing (wrong). The right answer (`right_answer`): the responses were shown reversed when
the sum of their lengths is odd (`shown_reversed`); `answer` ranks the two as listed (e.g. `[0, 1]`, 0 = better);
the right one is 1 + the position of rank 0 (shown in order) or of rank 1 (shown reversed).
Figures, fractions: one per `category`, `Macro Accuracy` (their mean) and `Overall Consistency` (right / rows), the
headline.
Where vlmkit differs: a failed call is wrong and is not sent to the judge (VLMEvalKit sends its failure message); a
failed judge call is a judge error, the row wrong.
"""

from __future__ import annotations

import ast
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

LLM_PARSE_ANSWER_PROMPT = (
    "\nYou are given a pairwise judgement for two responses. Please return the better response according to the "
    "judgement.\nReturn the Answer X ONLY. e.g., Answer 1 or Answer 2.\n\nJudgement: {judgement}\n"
)
JUDGE_MAX_TOKENS = 128


def responses(cell: Any, where: str = "VL-RewardBench") -> list[str]:
    """The two responses of a `response` cell (a list literal), as strings."""
    text = str(cell)
    try:
        values = ast.literal_eval(text) if text.startswith("[") and text.endswith("]") else None
    except (ValueError, SyntaxError):
        values = None
    if not isinstance(values, (list, tuple)) or len(values) < 2:
        raise ValueError(f"{where}, field response: expected a list of two responses, got {text[:80]!r}")
    return [str(v) for v in values]


def shown_reversed(pair: list[str]) -> bool:
    """VLMEvalKit's `random_number`: the responses are shown reversed when their total length is odd."""
    return sum(len(r) for r in pair) % 2 == 1


def right_answer(ranking: Any, reversed_: bool, where: str = "VL-RewardBench") -> int:
    try:
        ranks = list(ast.literal_eval(str(ranking)))
        return ranks.index(1 if reversed_ else 0) + 1
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"{where}, field answer: expected a ranking like [0, 1], got {str(ranking)[:40]!r}") from None


def read_choice(reply: str) -> int | None:
    low = reply.lower()
    return 1 if "answer 1" in low else 2 if "answer 2" in low else None


def figures(categories: list[str], hits: list[bool]) -> dict[str, float]:
    out: dict[str, float] = {}
    for category in dict.fromkeys(categories):
        picked = [h for c, h in zip(categories, hits) if c == category]
        out[category] = sum(picked) / len(picked)
    out["Macro Accuracy"] = sum(out.values()) / len(out)
    out["Overall Consistency"] = sum(hits) / len(hits)
    return out


def score_vl_rewardbench(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Grade VL-RewardBench judgements. Columns: `index`, `prediction` (None/NaN = a failed call), `response`,
    `answer` (the ranking), `category`."""
    require_columns(df, ("index", "prediction", "response", "answer", "category"), "VL-RewardBench scoring")
    if len(df) == 0:
        raise ValueError("VL-RewardBench scoring: the predictions table has no rows")
    records: list[dict[str, Any]] = df.to_dict("records")
    rights = []
    for r in records:
        where = f"VL-RewardBench scoring: row index {r['index']}"
        rights.append(right_answer(r["answer"], shown_reversed(responses(r["response"], where)), where))
    prompts = {str(pos): LLM_PARSE_ANSWER_PROMPT.format(judgement=str(r["prediction"]))
               for pos, r in enumerate(records) if not failed_call(r["prediction"])}  # fmt: skip
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: reply, max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    hits, methods, choices = [], [], []
    for pos, right in enumerate(rights):
        outcome = outcomes.get(str(pos))
        if outcome is None or outcome.error is not None:
            hits.append(False), choices.append(None)
            methods.append("inference_error" if outcome is None else "judge_error")
            continue
        choice = read_choice(outcome.value or "")
        hits.append(choice == right), choices.append(choice), methods.append("judge")
    categories = [str(r["category"]) for r in records]
    metrics = figures(categories, hits)
    errors = [r["index"] for r, m in zip(records, methods) if m == "inference_error"]
    notes = [f"{len(errors)} failed call(s) are wrong (not sent to the judge): index {listed(errors)}"] \
        if errors else []  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "by_rule": 0, "by_judge": methods.count("judge"),
              "unread": sum(c is None for c, m in zip(choices, methods) if m == "judge"),
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "right": rights,
                               "judged": pd.Series(choices, dtype=object), "method": methods, "hit": hits})
    return EvalResult(
        scorer="vl_rewardbench", metrics=metrics, primary="Overall Consistency", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(dict(metrics), "Overall Consistency"),
    )  # fmt: skip
