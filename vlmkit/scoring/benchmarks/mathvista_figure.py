"""VLMEvalKit's own MathVista figure (vlmeval/dataset/utils/mathvista.py at
vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT) for the replies vlmkit scored, beside vlmkit's careful one.

Per row, as MathVista_auxeval and MathVista_acc do, on the replies as its xlsx round trip gives them back
(vlmkit.scoring.common.vlmevalkit_cells: an empty reply, `None`, `N/A`... are the text `nan`):
- prefetch (`post_check(prefetch=True)`): a multi_choice reply its `can_infer` reads over the `choices` list; a
  free-form reply `int(...)` / `float(...)` of which equals the answer; never a text or list answer;
- otherwise the judge, with the same extraction prompt (the reply pasted as `str(prediction)`) at temperatures 0,
  0.5, ... 2.0: the first reply that is not a failure is the extraction, even an empty one (vlmkit's own reading asks
  again on an empty reply; a prompt vlmkit asked already is not asked again: its first non-empty reply is used, and
  a call that failed there leaves an empty extraction, as VLMEvalKit's five failed tries do);
- the extractions go through the xlsx round trip too, then `post_check(prefetch=False)`: multi_choice: can_infer's
  letter equals `answer_option`; integer / float: `int(...)` / `float(...)` equal the answer's, exactly (no
  `precision`); text and list answers are never right there (it compares the text `None` with the answer).
A failed call is a miss on both sides and never a difference. Figures: acc (x100) over Overall, each task and
skill, the names vlmkit's metrics use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.choice_judge import row_keys
from vlmkit.scoring.common.choice_reading import vlmevalkit_read
from vlmkit.scoring.common.math_answers import choice_list
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

PREFETCHED = "prefetch"


def _choices(row: dict[str, Any]) -> dict[str, str]:
    """`list_to_dict(eval(line['choices']))`, the list read as vlmkit reads it (never evaluated as code; score_mathvista
    has already refused a cell that is no list)."""
    items = choice_list(row.get("choices"), "choices")
    return {chr(65 + i): str(v) for i, v in enumerate(items or [])}


def _number(value: Any, kind: str) -> Any:
    """`int(value)` / `float(value)` as Python gives them; None where that raises ValueError (or TypeError)."""
    try:
        return int(value) if kind == "integer" else float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _post_check(row: dict[str, Any], response: Any, choices: dict[str, str], prefetch: bool) -> Any:
    """VLMEvalKit's post_check: with prefetch, the value read (falsy when none); else whether it is right."""
    qtype, atype = cell_text(row.get("question_type")), cell_text(row.get("answer_type"))
    if qtype == "multi_choice":
        read = vlmevalkit_read(str(response), choices) if choices else None
        if prefetch:
            return read
        return read is not None and read == cell_text(row.get("answer_option"))
    answer = row.get("answer")
    if atype in ("integer", "float"):
        res, ans = _number(response, atype), _number(answer, atype)
        ok = res is not None and ans is not None and res == ans
    else:
        ok = str(answer) == "None"  # str(None) against the answer's text
        res = "None"
    if prefetch:
        return res if ok else None
    return ok


def shown(value: Any) -> str | None:
    """A reading as a difference shows it: its text, None for nothing read (missing, empty or blank)."""
    if value is None or is_missing(value) or not str(value).strip():
        return None
    return str(value)


def vlmevalkit_mathvista(
    records: Sequence[dict[str, Any]],
    labels: Sequence[set[str]],
    order: Sequence[str],
    ours: Sequence[tuple[Any, bool, bool]],
    judge: Judge,
    asked: dict[str, JudgeOutcome[str]],
    prompt: Any,
    temperatures: Sequence[float],
    max_tokens: int,
) -> tuple[VlmevalkitFigure, list[Any], list[Any]]:
    """(the figure, VLMEvalKit's value per row, the indices of `nan` replies). `ours`: vlmkit's (value read, hit,
    failed call) per row; `labels`/`order`: each row's figure names and their order (Overall, tasks, skills);
    `asked`: vlmkit's judge outcomes by prompt; `prompt(question, prediction)`: the extraction prompt."""
    failed = [f for _, _, f in ours]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    choices = [_choices(r) if cell_text(r.get("question_type")) == "multi_choice" else {} for r in records]
    res: list[Any] = [None] * len(records)
    nan_rows: list[Any] = []
    prompts: dict[str, str] = {}
    keys = row_keys([r["index"] for r in records])
    position = {key: i for i, key in enumerate(keys)}
    for i, (row, cell) in enumerate(zip(records, back)):
        if failed[i]:
            continue
        if is_nan_cell(cell) and str(row["prediction"]) != "nan":
            nan_rows.append(row["index"])
        fetched = _post_check(row, cell, choices[i], prefetch=True)
        if fetched:
            res[i] = fetched
            continue
        prompts[keys[i]] = prompt(cell_text(row.get("question")) or "", str(cell))
    known = {key: asked[text] for key, text in prompts.items() if text in asked}  # a failed call too: not again
    new = {key: text for key, text in prompts.items() if key not in known}
    outcomes = judge_rounds(judge, new, lambda _key, reply: reply, temperatures=temperatures,
                            max_tokens=max_tokens) if new else {}
    for key in prompts:
        i = position[key]
        outcome = known.get(key) or outcomes.get(key)
        res[i] = outcome.value if outcome is not None and outcome.error is None and outcome.value is not None else ""
    back_res = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r for r, f in zip(res, failed)])
    hits = [not f and bool(_post_check(row, value, c, prefetch=False))
            for row, value, c, f in zip(records, back_res, choices, failed)]
    metrics = {}
    for name in order:
        rows = [h for h, names in zip(hits, labels) if name in names]
        if rows:
            metrics[name] = 100.0 * sum(rows) / len(rows)
    differing = []
    for row, value, hit, (mine, my_hit, fail) in zip(records, res, hits, ours):
        mine, value = shown(mine), shown(value)
        if fail or (mine == value and my_hit == hit):
            continue
        differing.append(ReadingDifference(row["index"], mine, value, float(my_hit), float(hit)))
    notes = ["text and list answers are never right in VLMEvalKit's figure (it compares the text `None`), and its "
             "numbers are compared exactly (no `precision`)"]
    if nan_rows:
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes), res, nan_rows
