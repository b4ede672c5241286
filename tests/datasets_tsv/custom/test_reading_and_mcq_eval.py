"""datasets_tsv.custom.reading and datasets_tsv.custom.mcq_eval called directly: records and their line numbers
from CSV / JSONL files written here, the one-line errors, and custom MCQ scoring of a hand-made predictions table
(valid, invalid and missing answers, answers given as option text)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.custom.mcq_eval import evaluate_mcq
from datasets_tsv.custom.reading import CustomDataError, read_records, where


def _write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


# --- reading -------------------------------------------------------------------------------------------------------


def test_where_names_file_line_and_field() -> None:
    assert where("d.csv") == "d.csv"
    assert where("d.csv", 3) == "d.csv: line 3"
    assert where("d.csv", 3, "answer") == "d.csv: line 3, field answer"


def test_csv_records_start_on_the_line_a_user_counts(tmp_path: Path) -> None:
    text = '\ufeff question , answer\n"a, b",1\n\n"two\nlines",\nlast,3\n'
    records = read_records(_write(tmp_path / "d.csv", text))
    # line 1 header (BOM and spaces dropped); line 2; line 3 blank; lines 4-5 one quoted value; line 6
    assert [r.line for r in records] == [2, 4, 6]
    assert [r.fields for r in records] == [
        {"question": "a, b", "answer": "1"},
        {"question": "two\nlines", "answer": None},  # an empty cell is missing
        {"question": "last", "answer": "3"},
    ]


def test_jsonl_records_keep_json_types(tmp_path: Path) -> None:
    text = '{"q": "x", "n": 2, " a ": null}\n\n{"q": "y", "opts": [1, 2]}\n'
    records = read_records(_write(tmp_path / "d.JSONL", text))
    assert [(r.line, r.fields) for r in records] == [
        (1, {"q": "x", "n": 2, "a": None}), (3, {"q": "y", "opts": [1, 2]})]


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("d.txt", "x", r"d\.txt: unsupported file type '\.txt'; expected \.csv or \.jsonl$"),
        ("d", "x", r"d: unsupported file type '\(none\)'"),
        ("d.csv", " \n\n", r"d\.csv: empty file$"),
        ("d.csv", "q,a\n", r"d\.csv: no data rows \(only a header\)$"),
        ("d.jsonl", "\n", r"d\.jsonl: empty file$"),
        ("d.csv", "q,a\nx,1\ny\n", r"d\.csv: line 3: 1 field\(s\), but the header \(line 1\) has 2; quote values"),
        ("d.csv", "q,,a\nx,1,2\n", r"d\.csv: line 1: header column 2 has no name$"),
        ("d.csv", "q,a, q\nx,1,2\n", r"d\.csv: line 1, field q: the header names this column twice$"),
        ("d.jsonl", '{"q": 1}\n{"q": \n', r"d\.jsonl: line 2: not valid JSON \(Expecting value at column 7\)$"),
        ("d.jsonl", '{"q": 1}\n[1, 2]\n', r"d\.jsonl: line 2: expected a JSON object, got list$"),
        ("d.csv", b"q,a\nx,1\ny,\xff\n", r"d\.csv: line 3: not UTF-8 text \(invalid start byte at byte 10\)$"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, name: str, data: str | bytes, message: str) -> None:
    path = _write(tmp_path / name, data)
    with pytest.raises(CustomDataError, match=str(tmp_path).replace("\\", "\\\\") + "/" + message) as err:
        read_records(path)
    assert "\n" not in str(err.value)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CustomDataError, match=r"nothere\.csv: no such file$"):
        read_records(tmp_path / "nothere.csv")


# --- MCQ scoring ---------------------------------------------------------------------------------------------------


def _table(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "prediction": p, "answer": a, "A": "cat", "B": "dog", "C": c}
                         for i, p, a, c in rows])


def test_mcq_scores_only_rows_with_a_valid_answer() -> None:
    df = _table([
        (0, "A", "A", "bird"),  # hit
        (1, "The answer is B.", "b", "bird"),  # answer `b` names option B: hit
        (2, "C", "dog", "bird"),  # answer as option text -> B; C read: miss
        (3, "A", "C", None),  # option C empty on this row: C fits no option -> invalid, not scored
        (4, "B", None, "bird"),  # no answer: not scored
        (5, "B", "zebra", "bird"),  # fits no option: invalid
    ])
    res = evaluate_mcq(df, ("A", "B", "C"))
    assert res.metrics["Overall"] == pytest.approx(2 / 3)  # rows 0, 1, 2 scored: 2 hits
    c = res.counts
    assert (c["total"], c["scored"], c["invalid_target"], c["no_target"], c["answer_as_text"]) == (6, 3, 2, 1, 1)
    ps = res.per_sample.set_index("index")
    assert ps.loc[3, "method"] == "invalid_target" and ps.loc[3, "extracted"] == "A" and ps.loc[3, "hit"] is None
    assert ps.loc[4, "method"] == "no_target" and ps.loc[4, "extracted"] == "B"
    assert ps.loc[5, "method"] == "invalid_target"
    assert [bool(ps.loc[i, "hit"]) for i in (0, 1, 2)] == [True, True, False]
    assert "2 row(s) have an answer that fits none of their options and are not scored: index 3, 5" in res.notes
    assert "1 row(s) have no answer and are not scored: index 4" in res.notes
    assert "1 answer(s) were given as an option's text and mapped to its letter" in res.notes


def test_mcq_with_nothing_to_score() -> None:
    res = evaluate_mcq(_table([(0, "A", None, "bird"), (1, None, "zebra", "bird")]), ("A", "B", "C"))
    assert math.isnan(res.metrics["Overall"]) and res.counts["scored"] == 0 and res.counts["hits"] == 0
    assert "no row has an answer that is one of its options: nothing scored" in res.notes
    ps = res.per_sample.set_index("index")
    assert ps.loc[0, "extracted"] == "A" and pd.isna(ps.loc[1, "extracted"])  # a failed inference reads nothing


def test_mcq_needs_its_columns() -> None:
    with pytest.raises(ValueError, match="custom MCQ: the predictions table has no `answer` column"):
        evaluate_mcq(pd.DataFrame({"index": [0], "prediction": ["A"]}), ("A", "B"))
