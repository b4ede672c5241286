"""build_custom_dataset: any custom file (or EvalScope directory) -> a CustomDataset.

Decisions (where the reference kits are silent or disagree):
- name: the file's stem (`test_mcq.csv` -> `test_mcq`), or `<directory>_<subset>` for a directory; characters
  other than letters, digits, `_`, `-`, `.` become `_`, so the name is one safe path component.
- index: the row's `index` (must be unique), else `id`, else `session_id` when present in every row and unique,
  else 0..n-1. Rows a .meta.json repeats keep their first copy's index; later copies get new ones (integer
  indices: max + 1, + 2, ...; text indices: `<index>#<k>` for the k-th copy) and every row gets `source_index`.
- file_md5: the data file's MD5 alone when nothing else shapes the rows; otherwise the MD5 of a JSON object of
  the parts (data file, meta file, few-shot pool and count, a data_type override that differs from detection, the
  seed when the meta uses randomness), listed in info()["md5_parts"]. A run journalled under other settings is
  therefore never resumed as if it were the same dataset.
- generation parameters per row: Ark `parameters`, then the row's `max_tokens` (which wins), then the meta's
  output_config max_tokens (which wins over both, as in AISBench).
- few_shot: only text MCQ/QA; the pool is `S_dev.*` (see evalscope.py); no pool is an error.
- QA metrics: `qa_metrics` (default exact match + contains; "bleu", "rouge" on request) and `segmenter` for
  BLEU/ROUGE tokens ("auto": jieba when installed, else one token per CJK character).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlmkit.core.files import md5_of
from vlmkit.scoring.kinds.text_qa import QA_METRICS, SEGMENTERS

from datasets_tsv.custom.conversation import build_conversation
from datasets_tsv.custom.evalscope import few_shot_prefix, pool_file, subset_file
from datasets_tsv.custom.fields import assign_index
from datasets_tsv.custom.meta import MetaConfig, find_meta, max_tokens_plan, plan_rows
from datasets_tsv.custom.mm_custom import build_mm_custom
from datasets_tsv.custom.reading import CustomDataError, read_records
from datasets_tsv.custom.rows import CustomDataset
from datasets_tsv.custom.text_mcq_qa import Built, build_text, detect_format

DATA_TYPES = ("mcq", "qa")
INFER_METHODS = ("gen",)


def build_custom_dataset(
    path: str | Path,
    *,
    meta_path: str | Path | None = None,
    data_type: str | None = None,
    infer_method: str = "gen",
    few_shot: int = 0,
    subset: str | None = None,
    seed: int = 0,
    qa_metrics: Sequence[str] = ("em", "contains"),
    segmenter: str = "auto",
) -> CustomDataset:
    """A custom dataset from a .csv/.jsonl file or an EvalScope directory (see the module docstring)."""
    _check_options(data_type, infer_method, few_shot, seed, qa_metrics, segmenter)
    given = Path(path).expanduser()
    if given.is_dir():
        data_file, subset = subset_file(given, subset)
        name = f"{given.resolve().name}_{subset}"
    elif given.exists():
        data_file, name = given, given.stem
    else:
        raise CustomDataError(f"{given}: no such file or directory")
    records = read_records(data_file)
    data_format, kind, letters = detect_format(data_file, records, data_type)
    if data_format == "mm_custom":
        built = build_mm_custom(data_file, records, kind, letters)
    elif data_format == "conversation":
        built = build_conversation(data_file, records)
    else:
        built = build_text(data_file, records, kind, letters)

    parts: dict[str, Any] = {"data": md5_of(data_file)}
    details: dict[str, Any] = {
        "data_type_detected": detect_format(data_file, records, None, check_options=False)[1],
        "infer_method": infer_method,
        "options": list(letters),
        "n_file_rows": len(records),
    }
    if subset is not None:
        details["subset"] = subset
    if data_type is not None and data_type != details["data_type_detected"]:
        parts["data_type"] = data_type
    prefix = ""
    if few_shot:
        prefix, used = _few_shot(data_file, built, few_shot)
        pool = pool_file(data_file)
        parts.update(dev=md5_of(pool), few_shot=few_shot)  # type: ignore[arg-type]
        details["few_shot"] = {"requested": few_shot, "used": used, "pool": str(pool)}

    indices, index_from, index_note = assign_index(data_file, built.records)
    if index_note:
        built.notes.append(index_note)
    details["index_from"] = index_from
    meta = find_meta(data_file, meta_path)
    rows, params = _apply_meta(built, indices, meta, seed)
    if meta is not None:
        parts["meta"] = meta.md5
        details["meta"] = meta.to_dict()
        if meta.uses_seed:
            parts["seed"] = seed
            details["seed"] = seed
    details["counts"] = dict(built.counts)
    details.update(built.details)
    details["md5_parts"] = parts
    file_md5 = parts["data"] if len(parts) == 1 else hashlib.md5(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return CustomDataset(
        safe_name(name),
        rows,
        source=data_file,
        file_md5=file_md5,
        data_format=built.data_format,
        data_type=built.data_type,
        option_letters=built.option_letters,
        params=params,
        few_shot_prefix=prefix,
        qa_metrics=tuple(qa_metrics),
        segmenter=segmenter,
        details=details,
        notes=built.notes,
    )


def safe_name(name: str) -> str:
    """One safe path component: letters, digits (any script), `_`, `-`, `.`; never empty, never dot-led."""
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "custom"


def _check_options(
    data_type: str | None, infer_method: str, few_shot: int, seed: int, qa_metrics: Sequence[str], segmenter: str
) -> None:
    if infer_method == "ppl":
        raise CustomDataError("infer_method ppl is not supported: for the likelihood of each option of an MCQ file "
                              "run with --mcq-mode continuation (or logits), for the perplexity of QA answers "
                              "--mcq-mode ppl")
    if infer_method not in INFER_METHODS:
        raise CustomDataError(f"unknown infer_method {infer_method!r}; only 'gen' is supported")
    if data_type is not None and data_type not in DATA_TYPES:
        raise CustomDataError(f"unknown data_type {data_type!r}; expected mcq or qa")
    if isinstance(few_shot, bool) or not isinstance(few_shot, int) or few_shot < 0:
        raise CustomDataError(f"few_shot must be a non-negative integer, got {few_shot!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CustomDataError(f"seed must be a non-negative integer, got {seed!r}")
    unknown = [m for m in qa_metrics if m not in QA_METRICS]
    if unknown or not qa_metrics:
        raise CustomDataError(f"unknown QA metric(s) {unknown or '(none)'}; choose from {', '.join(QA_METRICS)}")
    if segmenter not in SEGMENTERS:
        raise CustomDataError(f"unknown segmenter {segmenter!r}; choose one of {', '.join(SEGMENTERS)}")


def _few_shot(data_file: Path, built: Built, n: int) -> tuple[str, int]:
    if built.data_format != "text":
        raise CustomDataError(
            f"{data_file}: few-shot examples are supported for text mcq/qa files only, not {built.data_format}"
        )
    pool = pool_file(data_file)
    if pool is None:
        raise CustomDataError(
            f"{data_file}: few_shot={n} needs a few-shot pool beside it "
            f"({data_file.parent}/<subset>_dev.jsonl or .csv, EvalScope's layout)"
        )
    return few_shot_prefix(pool, n, built.data_type)


def _apply_meta(
    built: Built, indices: list[Any], meta: MetaConfig | None, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows in request order with their indices, and each request's generation parameters."""
    n = len(built.rows)
    plan = plan_rows(n, meta, seed) if meta is not None else list(range(n))
    reshaped = plan != list(range(n))
    fresh = _fresh_indices(indices)
    seen: dict[int, int] = {}
    rows, params = [], []
    for pos in plan:
        copy = seen.get(pos, 0)
        seen[pos] = copy + 1
        index = indices[pos] if copy == 0 else fresh(indices[pos], copy)
        row = {"index": index, **built.rows[pos]}
        if reshaped:
            row["source_index"] = indices[pos]
        rows.append(row)
        params.append(dict(built.params[pos]))
    if meta is not None and meta.output_config is not None:
        for row, request, value in zip(rows, params, max_tokens_plan(len(rows), meta.output_config, seed)):
            row["max_tokens"] = value
            request["max_tokens"] = value
    return rows, params


def _fresh_indices(indices: list[Any]) -> Any:
    """A function giving copy k of a row a new index that no other row has."""
    taken = {str(i) for i in indices}
    integers = all(isinstance(i, int) for i in indices)
    counter = [max(indices) + 1 if integers and indices else 0]

    def fresh(original: Any, copy: int) -> Any:
        if integers:
            value = counter[0]
            counter[0] += 1
            taken.add(str(value))
            return value
        value, bump = f"{original}#{copy}", copy
        while value in taken:
            bump += 1
            value = f"{original}#{bump}"
        taken.add(value)
        return value

    return fresh
