"""MathVision (MathVision, MathVision_MINI) scored as VLMEvalKit scores it: MathVista's flow with MathVision's own
prompt (verbatim below) and its `is_equal` comparison.
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Per row (columns `index`, `prediction`, `question`, `answer`, optional `choices`, `category`):
1. Rule ("prefetch"): the reply's last `\\boxed{...}` if it has one, else the reply. With a non-empty `choices` list
   (options A, B, ...): any letter vlmkit's MCQ reading (`vlmkit.scoring.kinds.mcq.extract_choice`) finds counts, right or
   wrong. Without: the reply counts only when it equals the answer (`math_equal`).
2. Otherwise the judge extracts the answer: up to 5 asks at temperature 0, 0.5, 1.0, 1.5, 2.0 (max_tokens 128); the
   first non-empty reply (stripped) is the extracted answer, read as in 1 (boxed, then letter or `math_equal`).
3. A multiple-choice row is right when the letter read is the answer's letter; a free-form row when `math_equal`
   holds: equal lower-cased texts, else equal values within 1e-6 (arithmetic or LaTeX, see
   vlmkit.scoring.common.math_answers), else equal normalised LaTeX texts.

Breakdown as VLMEvalKit's `_score.csv` (`Subject`: Overall then each `category`; tot, prefetch, hit,
prefetch_rate, acc in percent); metrics: Overall plus each category (percent).

Where vlmkit deliberately differs from VLMEvalKit (each also written into EvalResult.notes):
- no eval() of model or judge output (VLMEvalKit evaluates both as Python: code execution) and no latex2sympy:
  vlmkit's own arithmetic / LaTeX reader; a symbolic answer matches only when written the same way.
- the last `\\boxed{}` with balanced braces (VLMEvalKit takes the first and cuts at the first `}`).
- vlmkit's MCQ reading rather than VLMEvalKit's can_infer for letters.
- a failed judge call is that row's `judge_error` (a miss this run, asked again on the next run), never cached as an
  empty extraction; a row whose five replies were all empty is `judge_unread`.

VLMEvalKit's figure (EvalResult.vlmevalkit) is not computed for MathVision (None, and a note says why): its reading
evaluates the model's reply and the judge's extraction as Python (`eval`) and through latex2sympy, which vlmkit
never runs on model output, and it decides which rows go to the judge with that reading (the whole reply, not the
last `\boxed{}`), so the judge replies it would need are not the ones vlmkit asked for.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key, is_missing, listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.math_answers import (
    BadRow,
    Tally,
    choice_list,
    last_boxed,
    letters_for,
    math_equal,
    target_letter,
    where,
)
from vlmkit.scoring.kinds.mcq import extract_choice
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

SCORER = "mathvision"
TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)
MAX_TOKENS = 128

# VLMEvalKit's task description and five in-context examples (vlmeval/dataset/utils/mathv.py), verbatim.
PROMPT_HEAD = """
Please read the following example.
Then extract the answer from the model response and type it at the end of the prompt.


Hint: Please answer the question and provide the final answer at the end.

Question: Which number is missing?

Model response: The number missing in the sequence is 14.

Extracted answer: 14


Hint: Please answer the question and provide the final answer at the end.

Question: What is the fraction of females facing the camera?

Model response: The fraction of females facing the camera is 0.6,
which means that six out of ten females in the group are facing the camera.

Extracted answer: 0.6


Hint: Please answer the question and provide the final answer at the end.

Question: How much money does Luca need to buy a sour apple candy and a butter-scotch candy? (Unit: $)

Model response: Luca needs $1.45 to buy a sour apple candy and a butterscotch candy.

Extracted answer: 1.45


Hint: Please answer the question and provide the final answer at the end.

Question: Between which two years does the line graph saw its maximum peak?

Model response: The line graph saw its maximum peak between 2007 and 2008.

Extracted answer: [2007, 2008]


Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.

Question: What fraction of the shape is blue?

Choices: (A) 3/11 (B) 8/11 (C) 6/11 (D) 3/5

Model response: The correct answer is (B) 8/11.

Extracted answer: B

"""


def extract_prompt(question: str, prediction: str) -> str:
    """The judge's extraction prompt for one row (VLMEvalKit's typo `Model respone` and missing newline kept)."""
    return f"{PROMPT_HEAD}{question}\nModel respone: {prediction}Extracted answer:"


NOTES = (
    "MathVision: answers are compared without eval() and without latex2sympy (VLMEvalKit evaluates model and judge "
    "output as Python): numbers, arithmetic and common LaTeX are read by vlmkit; other symbolic answers must match "
    "as normalised text",
    "MathVision: the last \\boxed{} with balanced braces is read (VLMEvalKit: the first, cut at the first '}')",
    "MathVision: letters are read with vlmkit's MCQ reading (answer markers first), not VLMEvalKit's can_infer",
    "MathVision: a failed judge call is a judge_error for that row, asked again on the next run (VLMEvalKit caches an "
    "empty extraction as the result)",
    "MathVision: VLMEvalKit's figure is not computed: its reading runs model and judge output through Python's eval() "
    "and latex2sympy, which vlmkit does not execute, and sends other rows to the judge than vlmkit does",
)


def boxed_or_whole(text: str) -> str:
    """The last `\\boxed{...}` content of a reply, else the reply."""
    boxed = last_boxed(text)
    return boxed if boxed is not None else text


def _read(text: str, options: dict[str, str], target: str | None, answer: str | None) -> tuple[Any, bool]:
    """(what was read, right) for a reply or an extraction; (None, False) when nothing could be read."""
    part = boxed_or_whole(text)
    if options:
        letter, _ = extract_choice(part, options)
        return letter, letter is not None and letter == target
    hit = answer is not None and math_equal(part, answer)
    return part.strip(), hit


def score_mathvision(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Score MathVision predictions with `judge` for the replies the rules cannot read (see the module docstring)."""
    require_columns(df, ("index", "prediction", "question", "answer"), "MathVision")
    if len(df) == 0:
        raise ValueError("MathVision: the predictions table has no rows")
    records = df.to_dict(orient="records")
    tally = Tally([r["index"] for r in records])
    prompts: dict[str, str] = {}
    pending: dict[str, tuple[int, dict[str, str], str | None, str | None]] = {}
    invalid: list[Any] = []
    for pos, row in enumerate(records):
        index = row["index"]
        choices = choice_list(row.get("choices"), where(pos, index, "choices"))
        options = letters_for(choices) if choices else {}
        answer = cell_text(row.get("answer"))
        target = target_letter(answer, options) if options else None
        if answer is None or (options and target is None):
            invalid.append(index)
        prediction = row["prediction"]
        if is_missing(prediction) or VLMEVALKIT_FAIL_MARKER in str(prediction):
            tally.set(pos, "inference_error")
            continue
        prediction = str(prediction)
        read, hit = _read(prediction, options, target, answer)
        if (options and read is not None) or (not options and hit):
            tally.set(pos, "rule", read, hit)
            tally.prefetch[pos] = True
            continue
        key = index_key(index)
        if key in pending:
            raise BadRow(f"{where(pos, index, 'index')}: repeats row {pending[key][0]}")
        question = cell_text(row.get("question"))
        if question is None:
            raise BadRow(f"{where(pos, index, 'question')}: empty (the judge prompt needs it)")
        prompts[key] = extract_prompt(question, prediction)
        pending[key] = (pos, options, target, answer)

    outcomes = judge_rounds(judge, prompts, lambda _key, reply: reply.strip() or None,
                            temperatures=TEMPERATURES, max_tokens=MAX_TOKENS)
    for key, (pos, options, target, answer) in pending.items():
        outcome = outcomes[key]
        if outcome.error is not None:
            tally.set(pos, "judge_error", reply=outcome.last_reply)
        elif outcome.value is None:
            tally.set(pos, "judge_unread", reply=outcome.last_reply)
        else:
            tally.set(pos, "judge", *_read(outcome.value, options, target, answer), reply=outcome.last_reply)

    categories = [cell_text(r.get("category")) for r in records]
    labels = [{"Overall", *([c] if c and c.strip() else [])} for c in categories]
    order = ["Overall", *sorted({c for c in categories if c and c.strip()} - {"Overall"})]
    table = tally.table(labels, order, "Subject")
    metrics = {str(r["Subject"]): float(r["acc"]) for r in table.to_dict(orient="records")}
    counts = tally.counts()
    counts["invalid_target"] = len(invalid)
    notes = list(NOTES)
    if invalid:
        notes.append(f"{len(invalid)} row(s) have no usable answer (empty, or not one of their choices) and count "
                     f"as misses: index {listed(invalid)}")
    return tally.result(SCORER, metrics, table, counts, notes)
