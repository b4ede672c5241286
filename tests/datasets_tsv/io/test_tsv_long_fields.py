"""A cell longer than the csv module's default limit (128 KiB) reads on every path: kind detection, the table, a
stamp's table, a quoted cell, a custom CSV. One reader (`tsv_read.csv_reader`) sets the limit where it is made;
importing the package sets nothing (issue 22)."""

from __future__ import annotations

import csv
import subprocess
import sys
import time

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.custom.reading import read_records
from datasets_tsv.io.tsv_stamp import SETTLE_NS

from tests.support.tsvs import write_tsv

CSV_DEFAULT_LIMIT = 128 * 1024  # the csv module's documented default
LONG = "why " * 50_000  # 200,000 characters, well past the default


@pytest.fixture()
def default_csv_limit():
    """The process-wide csv limit at its default while the test runs (an earlier test may have raised it)."""
    before = csv.field_size_limit(CSV_DEFAULT_LIMIT)
    yield
    csv.field_size_limit(before)


@pytest.mark.parametrize("quoted", [False, True])
def test_a_long_question_is_read_when_its_kind_is_detected(tmp_path, default_csv_limit, quoted):
    question = LONG + ('with a "quote"' if quoted else "")  # a `"` sends the line through the csv module
    write_tsv(tmp_path / "Long.tsv", [{"index": 0, "question": question, "answer": "yes"},
                                      {"index": 1, "question": "short", "answer": "no"}])
    time.sleep(SETTLE_NS / 1e9 + 0.1)  # the file settles, so that the first load stamps it (tsv_stamp.settled)
    dataset = build_dataset("Long", root=tmp_path, progress=False)
    assert dataset.kind == "yorn"
    assert dataset.line(0)["question"] == question
    csv.field_size_limit(CSV_DEFAULT_LIMIT)
    again = build_dataset("Long", root=tmp_path, progress=False)  # now from the file's stamp
    assert again.md5_source == "stamp" and again.line(0)["question"] == question


def test_a_long_custom_csv_cell_is_read(tmp_path, default_csv_limit):
    path = tmp_path / "qa.csv"
    path.write_text(f'question,answer\n"{LONG}",yes\n', encoding="utf-8")
    (record,) = read_records(path)
    assert record.fields["question"] == LONG


def test_importing_the_readers_leaves_the_csv_limit_alone():
    code = ("import csv; import datasets_tsv.io.tsv_read, datasets_tsv.io.tsv_stamp, datasets_tsv.catalog.registry, "
            "datasets_tsv.custom.reading, datasets_tsv.kinds.base; print(csv.field_size_limit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == str(CSV_DEFAULT_LIMIT)
