"""MathVista (MathVista_MINI) scored as VLMEvalKit scores it: read the answer by rule where it can, else ask the judge
to extract it (VLMEvalKit's prompt and in-context examples, verbatim below), then compare by answer type.
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Per row (columns `index`, `prediction`, `question`, `answer`, `question_type`, `answer_type`, `choices`,
`precision`, optional `answer_option`, `task`, `skills`):
1. Rule ("prefetch"): a `multi_choice` row is read with vlmkit's MCQ reading (`vlmkit.scoring.kinds.mcq.extract_choice`
   over the `choices` list as A, B, ...); any letter read counts, right or wrong. A free-form row whose whole
   reply is a value of its answer type (a number for integer/float, a bracketed list for list) is read as that
   value; a text answer is read when the reply is that very text.
2. Otherwise the judge extracts the answer: up to 5 asks at temperature 0, 0.5, 1.0, 1.5, 2.0 (max_tokens 128); the
   first non-empty reply (stripped) is the extracted answer.
3. Comparison: multi_choice: the letter read from the extraction against `answer_option` (or the letter of the
   choice equal to `answer`); integer: as numbers; float: both rounded to the row's `precision` when it has one;
   text: normalised text; list: element by element (numbers as numbers).

VLMEvalKit's own figure (`EvalResult.vlmevalkit`, vlmkit.scoring.benchmarks.mathvista_figure): its prefetch, its judge
extraction where that fails (the judge asked for those rows too, vlmkit's asks reused), its exact comparisons.

Breakdown as VLMEvalKit's `_score.csv` (`Task&Skill`: Overall, each task, each skill; tot, prefetch, hit,
prefetch_rate, acc in percent); metrics: Overall plus each task and skill (percent).

Where vlmkit deliberately differs from VLMEvalKit (each also written into EvalResult.notes):
- text and list answers: VLMEvalKit compares the string 'None' with the answer, so they can never be right; vlmkit
  compares normalised text and lists.
- `precision`: VLMEvalKit ignores it and needs exact float equality; vlmkit rounds both sides to the row's
  precision (as MathVista's own evaluation does). A number written `14.0` or `1,000` counts as 14 / 1000.
- prefetch: vlmkit's MCQ reading (answer markers first) rather than VLMEvalKit's can_infer, and a free-form reply
  that is a bare value of the answer type is read by rule even when wrong (VLMEvalKit sends a wrong bare number to
  the judge, which extracts the same number): the `prefetch` column counts those rows too.
- a failed judge call is that row's `judge_error` (a miss this run, asked again on the next run), never cached as
  an empty extraction; a row whose five replies were all empty is `judge_unread`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key, is_blank, is_missing, listed, whole_number
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.math_answers import (
    BadRow,
    Tally,
    casefold_trim,
    choice_list,
    letters_for,
    read_list,
    target_letter,
    to_number,
    where,
)
from vlmkit.scoring.kinds.mcq import extract_choice, vlmevalkit_choice
from vlmkit.scoring.benchmarks.mathvista_figure import shown, vlmevalkit_mathvista
from vlmkit.scoring.common.vlmevalkit_cells import nan_note
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.common.text_norm import (
    VLMEVALKIT_FAIL_MARKER,
    cell_text,
    parse_answer_list,
)

SCORER = "mathvista"
TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)
MAX_TOKENS = 128
ANSWER_TYPES = ("integer", "float", "text", "list")
QUESTION_TYPES = ("multi_choice", "free_form")

# VLMEvalKit's task description and five in-context examples (vlmeval/dataset/utils/mathvista.py), verbatim.
PROMPT_HEAD = """
Please read the following example.
Then extract the answer from the model response and type it at the end of the prompt.


Hint: Please answer the question requiring an integer answer and provide the final value,
e.g., 1, 2, 3, at the end.

Question: Which number is missing?

Model response: The number missing in the sequence is 14.

Extracted answer: 14


Hint: Please answer the question requiring a floating-point number with one decimal place and provide the final value,
e.g., 1.2, 1.3, 1.4, at the end.

Question: What is the fraction of females facing the camera?

Model response: The fraction of females facing the camera is 0.6,
which means that six out of ten females in the group are facing the camera.

Extracted answer: 0.6


Hint: Please answer the question requiring a floating-point number with two decimal places and provide the final value,
e.g., 1.23, 1.34, 1.45, at the end.

Question: How much money does Luca need to buy a sour apple candy and a butter-scotch candy? (Unit: $)

Model response: Luca needs $1.45 to buy a sour apple candy and a butterscotch candy.

Extracted answer: 1.45


Hint: Please answer the question requiring a Python list as an answer and provide the final list,
e.g., [1, 2, 3], [1.2, 1.3, 1.4], at the end.

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
    "MathVista: text and list answers are compared as normalised text / element by element (VLMEvalKit compares "
    "the string 'None' with them, so they are never right)",
    "MathVista: float answers are compared after rounding both sides to the row's `precision` (VLMEvalKit ignores "
    "the column and needs exact equality); `14.0` and `1,000` read as numbers",
    "MathVista: rule reading uses vlmkit's MCQ reading and reads a bare free-form value of the answer type even when "
    "wrong (VLMEvalKit prefetches only right ones), so `prefetch` counts may differ from VLMEvalKit's",
    "MathVista: a failed judge call is a judge_error for that row, asked again on the next run (VLMEvalKit caches an "
    "empty extraction as the result)",
)


@dataclass
class _Item:
    index: Any
    question_type: str
    answer_type: str
    answer: str | None
    options: dict[str, str] = field(default_factory=dict)
    target: str | None = None  # the option letter of a multi_choice row
    precision: int | None = None


def _item(row: dict[str, Any], pos: int) -> _Item:
    index = row["index"]
    qtype = (cell_text(row.get("question_type")) or "").strip()
    if qtype not in QUESTION_TYPES:
        raise BadRow(f"{where(pos, index, 'question_type')}: {qtype!r} (expected one of {', '.join(QUESTION_TYPES)})")
    atype = (cell_text(row.get("answer_type")) or "").strip()
    if atype not in ANSWER_TYPES:
        raise BadRow(f"{where(pos, index, 'answer_type')}: {atype!r} (expected one of {', '.join(ANSWER_TYPES)})")
    precision = None
    if not is_missing(row.get("precision")):
        precision = whole_number(row.get("precision"))
        if precision is None or precision < 0:
            raise BadRow(f"{where(pos, index, 'precision')}: {row.get('precision')!r} is not a number of decimals")
    item = _Item(index, qtype, atype, cell_text(row.get("answer")), precision=precision)
    if qtype == "multi_choice":
        choices = choice_list(row.get("choices"), where(pos, index, "choices"))
        if not choices:
            raise BadRow(f"{where(pos, index, 'choices')}: a multi_choice row needs its list of choices")
        item.options = letters_for(choices)
        option = row.get("answer_option")
        item.target = target_letter(option, item.options) if not is_blank(option) else None
        if item.target is None:
            item.target = target_letter(item.answer, item.options, text_first=True)
    return item


def _usable(item: _Item) -> bool:
    """Whether the row's answer can ever be matched (else it counts as a miss and is listed in the notes)."""
    if item.question_type == "multi_choice":
        return item.target is not None
    if item.answer is None:
        return False
    if item.answer_type in ("integer", "float"):
        return to_number(item.answer) is not None
    return item.answer_type != "list" or read_list(item.answer) is not None


def _number_equal(value: float, answer: float, precision: int | None) -> bool:
    if precision is not None:
        return round(value, precision) == round(answer, precision)
    return value == answer


def _same_element(value: str, answer: str, precision: int | None) -> bool:
    a, b = to_number(value), to_number(answer)
    if a is not None and b is not None:
        return _number_equal(a, b, precision)
    return casefold_trim(value) == casefold_trim(answer)


def compare(item: _Item, text: str) -> tuple[Any, bool]:
    """(what was read from `text`, whether it is right) for a free-form item."""
    answer = item.answer
    if item.answer_type in ("integer", "float"):
        value, target = to_number(text), to_number(answer)
        if value is None:
            return None, False
        if target is None:
            return value, False
        if item.answer_type == "integer":
            return value, value.is_integer() and value == target
        return value, _number_equal(value, target, item.precision)
    if item.answer_type == "list":
        got, want = read_list(text), read_list(answer)
        if got is None:
            return None, False
        ok = want is not None and len(got) == len(want) and all(
            _same_element(g, w, item.precision) for g, w in zip(got, want)
        )
        return got, ok
    return text.strip(), answer is not None and casefold_trim(text) == casefold_trim(answer)


def _rule(item: _Item, prediction: str) -> tuple[Any, bool] | None:
    """(read, hit) when the rule reads the reply; None: ask the judge."""
    if item.question_type == "multi_choice":
        letter, _ = extract_choice(prediction, item.options)
        return (letter, item.target is not None and letter == item.target) if letter is not None else None
    if item.answer_type in ("integer", "float"):
        return compare(item, prediction) if to_number(prediction) is not None else None
    if item.answer_type == "list":
        return compare(item, prediction) if read_list(prediction) is not None else None
    read, hit = compare(item, prediction)
    return (read, hit) if hit else None


def _judged(item: _Item, reply: str) -> tuple[Any, bool]:
    if item.question_type == "multi_choice":
        letter, _ = extract_choice(reply, item.options)
        return letter, letter is not None and letter == item.target
    return compare(item, reply)


def _labels(row: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The row's task and skills (VLMEvalKit: eval(skills), else the cell as one skill)."""
    task = cell_text(row.get("task"))
    skills = [s for s in parse_answer_list(row.get("skills")) or [] if s.strip()]
    return (task if task is not None and task.strip() else None), skills


def score_mathvista(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Score MathVista predictions with `judge` for the replies the rules cannot read (see the module docstring)."""
    require_columns(df, ("index", "prediction", "question", "answer", "question_type", "answer_type"), "MathVista")
    if len(df) == 0:
        raise ValueError("MathVista: the predictions table has no rows")
    records = df.to_dict(orient="records")
    tally = Tally([r["index"] for r in records])
    prompts: dict[str, str] = {}
    pending: dict[str, tuple[int, _Item]] = {}
    invalid: list[Any] = []
    differs = 0
    for pos, row in enumerate(records):
        item = _item(row, pos)
        if not _usable(item):
            invalid.append(item.index)
        prediction = row["prediction"]
        if is_missing(prediction) or VLMEVALKIT_FAIL_MARKER in str(prediction):
            tally.set(pos, "inference_error")
            continue
        prediction = str(prediction)
        multi = item.question_type == "multi_choice"
        theirs = vlmevalkit_choice(prediction, item.options) if multi else None
        if multi and extract_choice(prediction, item.options)[0] != (None if theirs == "Z" else theirs):
            differs += 1
        read = _rule(item, prediction)
        if read is not None:
            tally.set(pos, "rule", *read)
            tally.prefetch[pos] = True
            continue
        key = index_key(item.index)
        if key in pending:
            raise BadRow(f"{where(pos, item.index, 'index')}: repeats row {pending[key][0]}")
        question = cell_text(row.get("question"))
        if question is None:
            raise BadRow(f"{where(pos, item.index, 'question')}: empty (the judge prompt needs it)")
        prompts[key] = extract_prompt(question, prediction)
        pending[key] = (pos, item)

    outcomes = judge_rounds(judge, prompts, lambda _key, reply: reply.strip() or None,
                            temperatures=TEMPERATURES, max_tokens=MAX_TOKENS)
    for key, (pos, item) in pending.items():
        outcome = outcomes[key]
        if outcome.error is not None:
            tally.set(pos, "judge_error", reply=outcome.last_reply)
        elif outcome.value is None:
            tally.set(pos, "judge_unread", reply=outcome.last_reply)
        else:
            tally.set(pos, "judge", *_judged(item, outcome.value), reply=outcome.last_reply)

    parts = [_labels(row) for row in records]
    tasks = sorted({task for task, _ in parts if task is not None})
    skills = sorted({s for _, row_skills in parts for s in row_skills} - set(tasks))
    labels = [{"Overall", *([task] if task else []), *row_skills} for task, row_skills in parts]
    table = tally.table(labels, ["Overall", *tasks, *skills], "Task&Skill")
    metrics = {str(r["Task&Skill"]): float(r["acc"]) for r in table.to_dict(orient="records")}
    counts = tally.counts()
    counts["invalid_target"] = len(invalid)
    counts["differs_from_vlmevalkit"] = differs
    notes = list(NOTES)
    if invalid:
        notes.append(f"{len(invalid)} row(s) have no usable answer (empty, not one of their choices, or not of their "
                     f"answer type) and count as misses: index {listed(invalid)}")
    ours = [(tally.extracted[i], tally.hits[i], tally.methods[i] == "inference_error") for i in range(len(records))]
    asked = {prompts[key]: outcomes[key] for key in pending}
    figure, theirs, nan_rows = vlmevalkit_mathvista(records, labels, ["Overall", *tasks, *skills], ours, judge, asked,
                                                    extract_prompt, TEMPERATURES, MAX_TOKENS)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    result = tally.result(SCORER, metrics, table, counts, notes)
    result.per_sample["vlmevalkit"] = pd.Series([shown(v) for v in theirs], dtype=object)
    result.vlmevalkit = figure
    return result
