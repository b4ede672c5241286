"""Fields shared by every custom format: names and their aliases, options, answers, per-row generation settings,
and the row index.

Aliases (first present, non-empty one wins; the table keeps the canonical name):
question <- `question` | `query` (EvalScope, Ark Excel) | `prompt` (Ark jsonl);
answer <- `answer` | `reference_response` (Ark Excel) | `response` (EvalScope qa) - `response` only in rows with
neither `answer` nor `reference_response` key, because in Ark files `response` is a model reply;
system <- `system` | `system_prompt` (Ark Excel).

Options: the letters A, B, C, ... that are columns (a key of any row), consecutive from A, at least A and B (as
OpenCompass/AISBench, but judged over the whole file, not its first row). Per row, an empty option is ignored.
Single capital-letter columns that do not form such a run (`A, C`; `A, B, D`; `A` alone; `B, C`) are an error
naming them (OpenCompass would silently treat the file as QA, or drop D), unless the data type is given as qa.
"""

from __future__ import annotations

import ast
import json
import re
import string
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from vlmkit.core.cells import is_blank, whole_number
from vlmkit.core.model_calls import check_params
from vlmkit.scoring.common.text_norm import cell_text

from datasets_tsv.custom.reading import CustomDataError, Record, where

QUESTION_KEYS = ("question", "query", "prompt")
ANSWER_KEYS = ("answer", "reference_response", "response")
SYSTEM_KEYS = ("system", "system_prompt")
LETTERS = tuple(string.ascii_uppercase)
_LETTER_RE = re.compile(r"[(\[（]?\s*([A-Za-z])\s*[)\]）]?\s*[.:：。]?")


def pick(fields: dict[str, Any], keys: Sequence[str]) -> tuple[str | None, Any]:
    """(key, value) of the first alias present with a value; (None, None) when none is."""
    for key in keys:
        if key in fields and not is_blank(fields[key]):
            return key, fields[key]
    return None, None


def answer_keys(fields: dict[str, Any]) -> tuple[str, ...]:
    """The keys that may hold a row's reference answer (see the module docstring)."""
    return ANSWER_KEYS[:2] if {"answer", "reference_response"} & fields.keys() else ANSWER_KEYS


def text_value(value: Any) -> str | None:
    """A cell as text (integral floats without `.0`), None when blank. Lists/dicts are not text."""
    if is_blank(value) or isinstance(value, (list, dict)):
        return None
    return cell_text(value)


def require_question(path: Path, record: Record) -> str:
    key, value = pick(record.fields, QUESTION_KEYS)
    if key is None:
        raise CustomDataError(f"{where(path, record.line, 'question')}: missing or empty")
    text = text_value(value)
    if text is None:
        raise CustomDataError(f"{where(path, record.line, key)}: must be text, got {type(value).__name__}")
    return text


def detect_options(records: Iterable[Record]) -> tuple[str, ...]:
    """The option letters of a file: consecutive from A among the keys of all rows; () when fewer than two."""
    keys: set[str] = set()
    for record in records:
        keys.update(record.fields)
    letters: list[str] = []
    for letter in LETTERS:
        if letter not in keys:
            break
        letters.append(letter)
    return tuple(letters) if len(letters) >= 2 else ()


def check_option_columns(path: Path, records: Iterable[Record], letters: Sequence[str]) -> None:
    """An error naming the capital-letter columns of a file when they are not exactly its options `letters`."""
    keys: set[str] = set()
    for record in records:
        keys.update(record.fields)
    found = [letter for letter in LETTERS if letter in keys]
    if found == list(letters):
        return
    if "A" not in keys:
        why = "option columns start at A and there is no column A"
    elif len(found) == 1:
        why = "a multiple-choice file needs at least options A and B"
    else:
        gap = next(letter for letter in LETTERS if letter not in keys)
        after = [letter for letter in found if letter > gap]
        cannot = f"{after[0]} cannot be an option" if len(after) == 1 else f"{', '.join(after)} cannot be options"
        why = f"option columns run A, B, C, ... without a gap; {gap} is missing, so {cannot}"
    columns = f"columns {', '.join(found)}, which look like options" if len(found) > 1 else (
        f"column {found[0]}, which looks like an option")
    raise CustomDataError(
        f"{path}: found {columns}, but {why}. Name option columns with consecutive letters from A (an empty cell "
        "is an absent option), or give the data type qa (--custom-dataset-data-type qa) to keep them as plain fields"
    )


def row_options(fields: dict[str, Any], letters: Sequence[str]) -> list[tuple[str, str]]:
    """(letter, text) of the row's non-empty options, in letter order."""
    out = []
    for letter in letters:
        text = text_value(fields.get(letter))
        if text is not None:
            out.append((letter, text))
    return out


def resolve_answer(value: Any, options: Sequence[tuple[str, str]]) -> tuple[str | None, str]:
    """(letter, status) for an MCQ answer. status: `letter` (given as A / (a) / B. ...), `option_text` (equal to
    exactly one option's text, case and surrounding spaces ignored), `invalid` (fits no option), `missing`."""
    text = text_value(value)
    if text is None:
        return None, "missing"
    by_letter = dict(options)
    stripped = text.strip()
    m = _LETTER_RE.fullmatch(stripped)
    if m and m.group(1).upper() in by_letter:
        return m.group(1).upper(), "letter"
    folded = stripped.casefold()
    same = [letter for letter, option in options if option.strip().casefold() == folded]
    if len(same) == 1:
        return same[0], "option_text"
    return None, "invalid"


def positive_int(value: Any, *, allow_zero: bool = False) -> int | None:
    """A whole number (vlmkit.core.cells.whole_number: an int, an integral float or a digit string) that is >= 1
    (>= 0 with allow_zero), as int; None for anything else."""
    number = whole_number(value)
    return number if number is not None and number >= (0 if allow_zero else 1) else None


def parse_max_tokens(path: Path, record: Record, key: str = "max_tokens") -> int | None:
    """A row's own `max_tokens` (AISBench's per-request output limit); None when the cell is empty."""
    value = record.fields.get(key)
    if is_blank(value):
        return None
    number = positive_int(value)
    if number is None:
        raise CustomDataError(f"{where(path, record.line, key)}: {value!r} is not a positive integer")
    return number


def parse_parameters(path: Path, record: Record) -> tuple[dict[str, Any], list[str]]:
    """A row's Ark `parameters` as generation parameters, and the keys dropped on the way.

    A string cell (CSV/Excel) is read as JSON or as a Python dict literal (`{'temperature': 1.0}`). Ark files
    routinely carry `logprobs: false`, `top_logprobs` and `stop: []`; vlmkit records no log-probabilities, so
    `logprobs: false`, `top_logprobs` (meaningless without logprobs) and an empty `stop` are dropped (noted in
    info()); `logprobs: true` is an error. Any other key must be in vlmkit.core.model_calls.GENERATION_PARAMS.
    """
    value = record.fields.get("parameters")
    if is_blank(value):
        return {}, []
    here = where(path, record.line, "parameters")
    if isinstance(value, str):
        value = literal_dict(value, here)
    if not isinstance(value, dict):
        raise CustomDataError(f"{here}: must be an object of generation parameters, got {type(value).__name__}")
    params = dict(value)
    dropped: list[str] = []
    if params.get("logprobs"):
        raise CustomDataError(f"{here}.logprobs: true is not supported (vlmkit records no log-probabilities)")
    for key in ("logprobs", "top_logprobs"):
        if key in params:
            params.pop(key)
            dropped.append(key)
    if "stop" in params and not params["stop"]:
        params.pop("stop")
        dropped.append("stop")
    try:
        params = check_params(params, here)
    except ValueError as exc:
        raise CustomDataError(str(exc)) from None
    if "max_tokens" in params:
        number = positive_int(params["max_tokens"])
        if number is None:
            raise CustomDataError(f"{here}.max_tokens: {params['max_tokens']!r} is not a positive integer")
        params["max_tokens"] = number
    return params, dropped


def literal_dict(text: str, here: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise CustomDataError(f"{here}: neither JSON nor a Python dict literal") from None


def _index_value(value: Any) -> Any:
    """Integral values (and digit strings without leading zeros) as int, other values as stripped strings."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = str(value).strip()
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    return text


def assign_index(path: Path, records: Sequence[Record]) -> tuple[list[Any], str | None, str | None]:
    """(indices, the column they came from, a note). An `index` column must be unique and complete; else `id`,
    then `session_id`, when present in every row and unique; else 0..n-1 (with a note when an id was unusable)."""
    values = [r.fields.get("index") for r in records]
    if any(not is_blank(v) for v in values):
        return _unique(path, records, "index", strict=True), "index", None
    note = None
    for key in ("id", "session_id"):
        values = [r.fields.get(key) for r in records]
        if all(is_blank(v) for v in values):
            continue
        indices = _unique(path, records, key, strict=False)
        if indices is not None:
            return indices, key, None
        note = f"`{key}` is missing in some rows or repeats: rows are indexed 0..{len(records) - 1} instead"
        break
    return list(range(len(records))), None, note


def _unique(path: Path, records: Sequence[Record], key: str, *, strict: bool) -> Any:
    seen: dict[str, int] = {}
    out = []
    for record in records:
        value = record.fields.get(key)
        if is_blank(value) or isinstance(value, (list, dict)):
            if strict:
                raise CustomDataError(f"{where(path, record.line, key)}: missing or not a scalar")
            return None
        index = _index_value(value)
        if str(index) in seen:
            if strict:
                raise CustomDataError(f"{where(path, record.line, key)}: {index!r} repeats line {seen[str(index)]}")
            return None
        seen[str(index)] = record.line
        out.append(index)
    return out

