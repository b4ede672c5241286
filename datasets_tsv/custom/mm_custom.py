"""AISBench's multimodal `mm_custom` jsonl: `{"type": "image"|"video"|"audio", "path": [files], "question": ...,
"answer": ...}`; also the common image jsonl `{"image": file or [files], "question": ..., "answer": ...}` (a row
with `image` and no `type` is an image row whose `path` is its `image`), so a folder of images plus such a jsonl
is a dataset as it stands.

- One media type per row, one or more files per row (a single string is taken as a one-file list); rows of a file
  may mix types. Relative paths resolve against the jsonl's folder; `http(s)://` and `data:` URLs are kept as
  given. Every local file must exist, and a file whose extension names another media type than the row's `type`
  (a `.wav` in an image row) is an error naming the line and `path[k]`. Decoding video and audio is the models'
  business; rows only carry paths.
- `build_prompt`: the media parts in order, then the text (the question; VLMEvalKit's MCQ text when the file has
  option columns A, B, ...).
- Scoring: AISBench scores mm_custom as accuracy 1 always (it is a load-test format); vlmkit scores free-text
  answers like text QA (exact match, contains, ...) and option answers like text MCQ. The seed examples'
  placeholder answers (`xxx`) therefore score 0; that is the data's doing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlmkit.core.message import MEDIA_TYPES, is_url, media_type_of

from datasets_tsv.custom.reading import CustomDataError, Record, where
from datasets_tsv.custom.text_mcq_qa import Built, finish_answers, row_params, text_row


def media_paths(path: Path, record: Record) -> tuple[str, list[str]]:
    """(type, resolved paths) of an mm_custom row."""
    fields = record.fields
    kind, key = fields.get("type"), "path"
    if kind is None and "image" in fields and "path" not in fields:
        kind, key = "image", "image"
    if kind is None:
        raise CustomDataError(f"{where(path, record.line, 'type')}: missing (mm_custom rows need type and path)")
    if kind not in MEDIA_TYPES:
        expected = ", ".join(MEDIA_TYPES)
        raise CustomDataError(f"{where(path, record.line, 'type')}: unknown type {kind!r}; expected one of {expected}")
    raw = fields.get(key)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise CustomDataError(f"{where(path, record.line, key)}: must be a non-empty list of file paths")
    resolved = []
    for pos, item in enumerate(raw):
        field = f"{key}[{pos}]"
        if not isinstance(item, str) or not item.strip():
            raise CustomDataError(f"{where(path, record.line, field)}: must be a non-empty string, got {item!r}")
        value = item.strip()
        if value.startswith("data:") or is_url(value):
            resolved.append(value)
            continue
        local = Path(value).expanduser()
        if not local.is_absolute():
            local = path.parent / local
        if not local.is_file():
            raise CustomDataError(f"{where(path, record.line, field)}: {value} does not exist (looked for {local})")
        found = media_type_of(str(local))
        if found is not None and found != kind:
            raise CustomDataError(
                f"{where(path, record.line, field)}: {value} is a {found} file, but the row's type is {kind}"
            )
        resolved.append(str(local.resolve()))
    return kind, resolved


def build_mm_custom(path: Path, records: list[Record], data_type: str, letters: tuple[str, ...]) -> Built:
    built = Built([], [], [], "mm_custom", data_type, letters, records=records)
    types: dict[str, int] = {}
    for record in records:
        kind, paths = media_paths(path, record)
        types[kind] = types.get(kind, 0) + 1
        row: dict[str, Any] = {"type": kind, "path": paths}
        for key, value in text_row(path, record, data_type, letters).items():
            if key not in row and not (key == "image" and "type" not in record.fields):
                row[key] = value
        built.rows.append(row)
        built.lines.append(record.line)
        built.params.append(row_params(path, record, built))
    built.details["media_types"] = dict(sorted(types.items()))
    finish_answers(path, built)
    return built
