"""vlmkit.perf.jsonl_input.json_objects: a workload file's objects with their line numbers; a bad line is one line
naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlmkit.perf.jsonl_input import json_objects
from vlmkit.perf.options import PerfInputError


def test_objects_come_with_their_line_numbers_blank_lines_and_a_bom_skipped(tmp_path: Path):
    path = tmp_path / "trace.jsonl"
    path.write_bytes('\ufeff{"a": 1}\n\n   \n{"b": "é"}\n'.encode("utf-8"))
    assert list(json_objects(path, "--trace")) == [(1, {"a": 1}), (4, {"b": "é"})]


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": 1}\n{"a": \n', r"trace\.jsonl: line 2: not JSON"),
    ('{"a": 1}\n\n[1, 2]\n', r"trace\.jsonl: line 3: expected a JSON object"),
])
def test_a_bad_line_is_named(tmp_path: Path, text: str, message: str):
    path = tmp_path / "trace.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PerfInputError, match=message):
        list(json_objects(path, "--trace"))


def test_a_missing_file_names_the_flag(tmp_path: Path):
    with pytest.raises(PerfInputError, match=r"^--sessions .*nope\.jsonl: no such file$"):
        list(json_objects(tmp_path / "nope.jsonl", "--sessions"))
