"""EvalScope's directory layout and its few-shot pool.

A directory holds one or more subsets. For subset S the evaluation file is the first that exists of
`S_val.jsonl`, `S_test.jsonl`, `S.jsonl`, `S_val.csv`, `S_test.csv`, `S.csv` (EvalScope tries .jsonl before .csv,
and `{subset}_{split}` before `{subset}`; general_mcq's split is `val`, general_qa's `test`). The few-shot pool is
`S_dev.jsonl` or `S_dev.csv`, read only when few-shot examples are asked for. A file given directly whose name is
`S_val.*` (or `S_test.*`) takes its pool from `S_dev.*` beside it.

Few-shot examples are the pool's first N rows (EvalScope's default `few_shot_random=False`); when the pool has
fewer, all of them are used and info() says so. An example's answer must be valid (an MCQ letter or option
text; a QA answer present), else it is an error naming the pool file and line. The example layout is described in
datasets_tsv.custom.rows.
"""

from __future__ import annotations

import re
from pathlib import Path

from datasets_tsv.kinds.mcq import mcq_prompt

from datasets_tsv.custom.fields import (
    answer_keys,
    detect_options,
    pick,
    require_question,
    resolve_answer,
    row_options,
    text_value,
)
from datasets_tsv.custom.reading import SUFFIXES, CustomDataError, read_records, where
from datasets_tsv.custom.text_mcq_qa import answer_value

EVAL_SPLITS = ("val", "test")
POOL_SPLIT = "dev"
_SPLIT_RE = re.compile(r"^(?P<subset>.+)_(?P<split>val|test|dev)$")


def list_subsets(directory: str | Path) -> list[str]:
    """The subsets of an EvalScope-style directory, sorted (files `S_val.*`, `S_test.*` or `S.*`; `_dev` files
    are pools, not subsets; `.meta.json` files are ignored)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise CustomDataError(f"{folder}: not a directory")
    names: set[str] = set()
    for entry in folder.iterdir():
        if not entry.is_file() or entry.suffix.lower() not in SUFFIXES:
            continue
        m = _SPLIT_RE.match(entry.stem)
        if m is None:
            names.add(entry.stem)
        elif m.group("split") != POOL_SPLIT:
            names.add(m.group("subset"))
    return sorted(names)


def subset_file(directory: Path, subset: str | None) -> tuple[Path, str]:
    """(evaluation file, subset name). Without a subset, a directory with exactly one subset uses it; with
    several it is an error listing them (loop over list_subsets to run them all)."""
    subsets = list_subsets(directory)
    if not subsets:
        raise CustomDataError(
            f"{directory}: no .jsonl or .csv data files (expected S_val.csv, S_val.jsonl, S.jsonl, ...)"
        )
    if subset is None:
        if len(subsets) > 1:
            raise CustomDataError(f"{directory}: several subsets ({', '.join(subsets)}); name one with subset")
        subset = subsets[0]
    for suffix in SUFFIXES:
        for stem in (*(f"{subset}_{split}" for split in EVAL_SPLITS), subset):
            candidate = directory / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate, subset
    raise CustomDataError(f"{directory}: no subset {subset!r} (available: {', '.join(subsets)})")


def pool_file(data_file: Path) -> Path | None:
    """The few-shot pool beside an evaluation file: `S_dev.jsonl|csv` for `S_val.*`, `S_test.*` or `S.*`."""
    m = _SPLIT_RE.match(data_file.stem)
    subset = m.group("subset") if m and m.group("split") != POOL_SPLIT else data_file.stem
    for suffix in SUFFIXES:
        candidate = data_file.parent / f"{subset}_{POOL_SPLIT}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def few_shot_prefix(pool: Path, n: int, data_type: str) -> tuple[str, int]:
    """(the text put before every question, the number of examples in it)."""
    records = read_records(pool)[:n]
    letters = detect_options(records) if data_type == "mcq" else ()
    shots = []
    for record in records:
        question = require_question(pool, record)
        if data_type == "mcq":
            options = row_options(record.fields, letters)
            _, raw = pick(record.fields, answer_keys(record.fields))
            letter, status = resolve_answer(raw, options)
            if letter is None:
                raise CustomDataError(
                    f"{where(pool, record.line, 'answer')}: a few-shot example needs a valid answer ({status})"
                )
            hint = text_value(record.fields.get("hint"))
            shots.append(mcq_prompt(question, options, hint) + f"Answer: {letter}\n")
        else:
            answer = answer_value(pool, record)
            if answer is None:
                raise CustomDataError(f"{where(pool, record.line, 'answer')}: a few-shot example needs an answer")
            first = answer[0] if isinstance(answer, list) else answer
            shots.append(f"Question: {question}\nAnswer: {first}\n")
    return "".join(shot + "\n" for shot in shots), len(shots)

