"""vlmkit.perf.source with real files: a custom .jsonl/.csv file, a TSV path, and the one-line errors of a missing
file, a bad custom file and --meta given to a TSV."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tsvs import write_tsv
from vlmkit.perf.options import PerfInputError
from vlmkit.perf.source import load_dataset


def test_a_custom_file_is_read_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"question": "Say hi", "answer": "hi"}\n{"question": "Say bye", "answer": "bye"}\n')
    dataset = load_dataset(str(path), root=tmp_path)
    assert len(dataset) == 2


def test_a_tsv_path_is_read(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "Mine.tsv", [{"index": 0, "question": "What?", "answer": "x"}])
    assert len(load_dataset(str(tsv), root=tmp_path)) == 1


def test_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(PerfInputError, match=r"^--data .*missing\.csv: no such file$"):
        load_dataset(str(tmp_path / "missing.csv"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok"}\n[1, 2]\n')
    with pytest.raises(PerfInputError, match=r"bad\.jsonl: line 2: expected a JSON object, got list"):
        load_dataset(str(bad))
    tsv = write_tsv(tmp_path / "T.tsv", [{"index": 0, "question": "q", "answer": "a"}])
    with pytest.raises(PerfInputError, match=r"^--meta applies to custom \.jsonl/\.csv datasets; a TSV dataset takes "
                                             r"none$"):
        load_dataset(str(tsv), meta=str(tmp_path / "x.meta.json"))
