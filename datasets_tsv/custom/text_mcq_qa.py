"""Text MCQ and QA rows (AISBench / OpenCompass / EvalScope csv and jsonl) and the detection of a file's format.

Detection, over all rows of the file (not only the first, unlike OpenCompass):
1. mm_custom - some row has both `type` and `path`, or `image` (an image jsonl; see mm_custom.py);
2. conversation - some row has `messages`;
3. text MCQ - option columns A and B (consecutive letters from A), unless data_type says "qa";
4. conversation - some row has an Ark / EvalScope key (`prompt`, `system`, `system_prompt`, `parameters`,
   `query`, `response`, `reference_response`, `session_id`);
5. text QA otherwise.
`data_type` ("mcq" | "qa", AISBench's --custom-dataset-data-type) overrides steps 3-5: "mcq" needs option
columns, "qa" never makes an MCQ.

An MCQ row's answer is normalised at load: a letter (`A`, `(b)`, `C.`) stays a letter; an answer equal to exactly
one option's text becomes that letter (`answer_status` = `option_text`, counted); an answer that fits no option
keeps its text (`answer_status` = `invalid`: reported, never scored); no answer: `missing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core.cells import is_blank, listed

from datasets_tsv.custom.fields import (
    ANSWER_KEYS,
    QUESTION_KEYS,
    SYSTEM_KEYS,
    answer_keys,
    check_option_columns,
    detect_options,
    parse_max_tokens,
    parse_parameters,
    pick,
    require_question,
    resolve_answer,
    row_options,
    text_value,
)
from datasets_tsv.custom.reading import CustomDataError, Record, where

CONVERSATION_KEYS = frozenset(
    {"prompt", "system", "system_prompt", "parameters", "query", "response", "reference_response", "session_id"}
)
INPUT_KEYS = frozenset({*QUESTION_KEYS, *SYSTEM_KEYS, "max_tokens"})
_ANSWER_KEY_SETS = {keys: frozenset(keys) for keys in (ANSWER_KEYS, ANSWER_KEYS[:2])}  # what answer_keys gives


@dataclass
class Built:
    """Rows of one file in the canonical shape, plus what the loader needs to make the dataset."""

    rows: list[dict[str, Any]]
    lines: list[int]
    params: list[dict[str, Any]]
    data_format: str  # text | conversation | mm_custom
    data_type: str  # mcq | qa
    option_letters: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)  # the records the rows came from (sessions merged)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def detect_format(
    path: Path, records: list[Record], data_type: str | None, *, check_options: bool = True
) -> tuple[str, str, tuple[str, ...]]:
    """(format, data type, option letters) of a file's rows (see the module docstring). check_options: capital-
    letter columns that are not a run of options are an error (see fields.check_option_columns)."""
    keys: set[str] = set()
    for record in records:
        keys.update(record.fields)
    letters = detect_options(records)
    if check_options and data_type != "qa" and "messages" not in keys:
        check_option_columns(path, records, letters)
    if any(("type" in r.fields and "path" in r.fields) or "image" in r.fields for r in records):
        return "mm_custom", _data_type(path, letters, data_type), letters if data_type != "qa" else ()
    if "messages" in keys:
        if data_type == "mcq":
            raise CustomDataError(
                f"{path}: data_type mcq, but conversation rows (`messages`) cannot be multiple choice"
            )
        return "conversation", "qa", ()
    if letters and data_type != "qa":
        return "text", "mcq", letters
    if data_type == "mcq":
        raise CustomDataError(f"{path}: data_type mcq, but the file has no option columns A and B")
    return ("conversation" if keys & CONVERSATION_KEYS else "text"), "qa", ()


def _data_type(path: Path, letters: tuple[str, ...], given: str | None) -> str:
    if given == "mcq" and not letters:
        raise CustomDataError(f"{path}: data_type mcq, but the file has no option columns A and B")
    if given == "qa":
        return "qa"
    return "mcq" if letters else "qa"


def text_row(path: Path, record: Record, data_type: str, letters: tuple[str, ...]) -> dict[str, Any]:
    """The canonical question / options / answer / answer_status / system / max_tokens of a row, then its other
    fields (alias keys consumed)."""
    fields = record.fields
    row: dict[str, Any] = {"question": require_question(path, record)}
    consumed = INPUT_KEYS | _ANSWER_KEY_SETS[answer_keys(fields)]
    if data_type == "mcq":
        for letter in letters:
            row[letter] = text_value(fields.get(letter))
        consumed = consumed | frozenset(letters)
        _, raw = pick(fields, answer_keys(fields))
        letter, status = resolve_answer(raw, row_options(fields, letters))
        row["answer"] = letter if letter is not None else (None if status == "missing" else text_value(raw))
        row["answer_status"] = status
    else:
        row["answer"] = answer_value(path, record)
    _, system = pick(fields, SYSTEM_KEYS)
    if system is not None:
        row["system"] = _text(path, record, "system", system)
    max_tokens = parse_max_tokens(path, record)
    if max_tokens is not None:
        row["max_tokens"] = max_tokens
    for key, value in fields.items():
        if key not in consumed and key not in row:
            row[key] = value
    return row


def answer_value(path: Path, record: Record) -> Any:
    """A free-text answer: a string, or a list of acceptable strings; None when missing."""
    key, raw = pick(record.fields, answer_keys(record.fields))
    if key is None:
        return None
    if isinstance(raw, list):
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in raw):
            raise CustomDataError(f"{where(path, record.line, key)}: a list answer must hold strings")
        return [str(v) for v in raw]
    return _text(path, record, key, raw)


def _text(path: Path, record: Record, key: str, value: Any) -> str:
    text = text_value(value)
    if text is None:
        raise CustomDataError(f"{where(path, record.line, key)}: must be text, got {type(value).__name__}")
    return text


def build_text(path: Path, records: list[Record], data_type: str, letters: tuple[str, ...]) -> Built:
    """Text MCQ / QA rows of a file."""
    built = Built([], [], [], "text", data_type, letters, records=records)
    for record in records:
        built.rows.append(text_row(path, record, data_type, letters))
        built.lines.append(record.line)
        built.params.append(row_params(path, record, built))
    finish_answers(path, built)
    return built


def row_params(path: Path, record: Record, built: Built) -> dict[str, Any]:
    """A row's generation parameters: its Ark `parameters`, then its own `max_tokens` (which wins)."""
    params, dropped = parse_parameters(path, record)
    for key in dropped:
        built.counts[f"dropped_parameter_{key}"] = built.counts.get(f"dropped_parameter_{key}", 0) + 1
    max_tokens = parse_max_tokens(path, record)
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    return params


def finish_answers(path: Path, built: Built) -> None:
    """Count answer statuses, note the MCQ rows with unusable answers, and drop the answer columns of a file
    that has no answers at all (an inference-only dataset: the runner then reports `no_target`)."""
    prefix = "dropped_parameter_"
    dropped = {k[len(prefix):]: v for k, v in built.counts.items() if k.startswith(prefix)}
    if dropped:
        built.notes.append(
            "parameters not sent (vlmkit records no log-probabilities; an empty stop list means no stop): "
            + ", ".join(f"{key} in {n} row(s)" for key, n in sorted(dropped.items()))
        )
    if not any(not is_blank(row.get("answer")) for row in built.rows):
        for row in built.rows:
            row.pop("answer", None)
            row.pop("answer_status", None)
        built.counts["no_target"] = len(built.rows)
        built.notes.append("no row has an answer: inference only (predictions are written, nothing is scored)")
        return
    missing = [line for line, row in zip(built.lines, built.rows) if is_blank(row.get("answer"))]
    built.counts["no_target"] = len(missing)
    if missing:
        built.notes.append(f"{len(missing)} row(s) have no answer and are not scored: line {listed(missing)}")
    if built.data_type != "mcq":
        return
    statuses = [row.get("answer_status") for row in built.rows]
    as_text = [line for line, s in zip(built.lines, statuses) if s == "option_text"]
    invalid = [line for line, s in zip(built.lines, statuses) if s == "invalid"]
    built.counts["answer_as_text"] = len(as_text)
    built.counts["invalid_target"] = len(invalid)
    if as_text:
        built.notes.append(
            f"{len(as_text)} answer(s) given as an option's text were mapped to its letter: line {listed(as_text)}"
        )
    if invalid:
        built.notes.append(
            f"{len(invalid)} row(s) have an answer that fits none of their options (not scored): "
            f"line {listed(invalid)}"
        )
