"""datasets_tsv.catalog.detect on small TSV files written here: which kind an unknown TSV is from its columns and
values, the reason given, circular groups, and an empty file."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.detect import detect, detect_with_reason, is_circular
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.tsvs import write_tsv


def _tsv(tmp_path: Path, rows: list[dict]) -> Path:
    return write_tsv(tmp_path / "unknown.tsv", rows)


def test_option_columns_make_a_multiple_choice_table(tmp_path: Path) -> None:
    rows = [{"index": i, "question": "q", "A": "x", "B": "y", "answer": "A"} for i in (0, 1)]
    kind, options, why = detect_with_reason(_tsv(tmp_path, rows))
    assert (kind, options) == ("mcq", {"circular": False})
    assert why == "option columns A and B: multiple choice; no circular groups in the indices"


def test_circular_copies_are_detected(tmp_path: Path) -> None:
    rows = [{"index": i, "question": "q", "A": "x", "B": "y", "answer": "A"} for i in (0, 1, 1_000_000, 2_000_001)]
    kind, options, why = detect_with_reason(_tsv(tmp_path, rows))
    assert (kind, options) == ("mcq", {"circular": True})
    assert why.endswith("indices form circular groups (copies at index + k * 1,000,000)")
    # a copy whose main row is missing: no circular groups
    rows = [{"index": i, "question": "q", "A": "x", "B": "y", "answer": "A"} for i in (0, 1_000_001)]
    assert detect(_tsv(tmp_path, rows)) == ("mcq", {"circular": False})


def test_only_a_without_b_is_not_multiple_choice(tmp_path: Path) -> None:
    rows = [{"index": 0, "question": "q", "A": "x", "answer": "yes"}]
    assert detect(_tsv(tmp_path, rows))[0] == "yorn"


def test_answers_without_a_question_column_are_captions(tmp_path: Path) -> None:
    rows = [{"index": 0, "answer": "['a dog on grass']"}, {"index": 1, "answer": "yes"}]
    kind, options, why = detect_with_reason(_tsv(tmp_path, rows))
    assert (kind, options) == ("caption", {})
    assert why == "answers but no question column: captions, asked VLMEvalKit's caption question"


def test_yes_no_answers_in_any_case_and_spacing(tmp_path: Path) -> None:
    rows = [{"index": i, "question": "q", "answer": a} for i, a in enumerate(["Yes", " no ", "YES", "nO"])]
    kind, options, why = detect_with_reason(_tsv(tmp_path, rows))
    assert (kind, options, why) == ("yorn", {}, "every answer is yes or no")


def test_anything_else_is_open_questions(tmp_path: Path) -> None:
    rows = [{"index": 0, "question": "q", "answer": "yes"}, {"index": 1, "question": "q", "answer": "maybe"}]
    assert detect_with_reason(_tsv(tmp_path, rows)) == (
        "vqa", {}, "no option columns A/B and answers that are not all yes/no: open questions")
    no_answers = [{"index": 0, "question": "What is it?"}]
    assert detect_with_reason(_tsv(tmp_path, no_answers)) == (
        "vqa", {}, "no option columns A/B and no answers: open questions")
    # an answer column whose cells are all empty holds no answers
    empty = [{"index": 0, "question": "q", "answer": ""}, {"index": 1, "question": "q", "answer": ""}]
    assert detect_with_reason(_tsv(tmp_path, empty))[2].endswith("no answers: open questions")


def test_an_empty_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_bytes(b"")
    with pytest.raises(DatasetError, match=r"empty\.tsv: empty file \(no header\)"):
        detect(path)


@pytest.mark.parametrize(
    "indices, expected",
    [
        (["0", "1", "1000000", "1000001"], True),
        (["0", "2000000", "3000000"], True),  # several copies of one main row
        (["0", "1"], False),  # no copies
        (["5", "1000004"], False),  # a copy of a row that is not there
        (["1000000"], False),  # copies only
        (["0", "999999", "1999999"], True),  # the last main index below the stride
        (["0", "a", "1000000"], False),  # not integers
        ([], False),
    ],
)
def test_is_circular(indices: list[str], expected: bool) -> None:
    assert is_circular(indices) is expected
