"""Bad input: each a clear one-line error naming the file, the line (header = line 1 in CSV) and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset
from vlmkit.core.errors import DataError

from tests.datasets_tsv.custom.conftest import FIXTURES, write


def fails(path: Path | str, pattern: str, **kwargs) -> str:
    with pytest.raises(CustomDataError, match=pattern) as info:
        build_custom_dataset(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message and isinstance(info.value, DataError)
    return message


def test_malformed_json_line(tmp_path):
    path = write(tmp_path / "x.jsonl", '{"question": "a"}\n\n{"question": "b", }\n')
    assert fails(path, r"x\.jsonl: line 3: not valid JSON \(Expecting property name enclosed in double quotes at column 19\)").startswith(str(path))
    fails(write(tmp_path / "y.jsonl", '{"question": "a"}\n["question"]\n'), r"y\.jsonl: line 2: expected a JSON object, got list")


def test_csv_row_with_the_wrong_number_of_fields(tmp_path):
    path = write(tmp_path / "x.csv", 'question,A,B,answer\n"two\nlines",1,2,A\nq,1,2,3,A\n')
    fails(path, r"x\.csv: line 4: 5 field\(s\), but the header \(line 1\) has 4")
    fails(write(tmp_path / "short.csv", "question,A,B,answer\nq,1,2\n"), r"short\.csv: line 2: 3 field\(s\)")


def test_missing_question(tmp_path):
    fails(write(tmp_path / "q.jsonl", '{"question": "a", "answer": "x"}\n{"answer": "y"}\n'), r"q\.jsonl: line 2, field question: missing or empty")
    fails(write(tmp_path / "q.csv", "question,answer\na,x\n ,y\n"), r"q\.csv: line 3, field question: missing or empty")
    fails(write(tmp_path / "nq.csv", "prompt_text,answer\na,x\n"), r"nq\.csv: line 2, field question: missing or empty")
    fails(write(tmp_path / "obj.jsonl", '{"question": {"text": "a"}}\n'), r"obj\.jsonl: line 1, field question: must be text, got dict")


def test_empty_files(tmp_path):
    fails(write(tmp_path / "e.jsonl", ""), r"e\.jsonl: empty file")
    fails(write(tmp_path / "e.csv", "\ufeff \n\n"), r"e\.csv: empty file")
    fails(write(tmp_path / "h.csv", "question,answer\n"), r"h\.csv: no data rows \(only a header\)")


def test_unreadable_or_unknown_files(tmp_path):
    fails(write(tmp_path / "latin.csv", "question,answer\ncaf\xe9,x\n", encoding="latin-1"), r"latin\.csv: line 2: not UTF-8 text")
    fails(write(tmp_path / "x.json", "[]"), r"x\.json: unsupported file type '\.json'; expected \.csv or \.jsonl")
    fails(tmp_path / "nothere.csv", r"nothere\.csv: no such file or directory")
    fails(write(tmp_path / "dup.csv", "question,A,A,answer\nq,1,2,A\n"), r"dup\.csv: line 1, field A: the header names this column twice")
    fails(write(tmp_path / "blank.csv", "question,,answer\nq,1,A\n"), r"blank\.csv: line 1: header column 2 has no name")


def test_bad_field_values(tmp_path):
    fails(write(tmp_path / "m.csv", "question,answer,max_tokens\nq,a,512\nq,a,lots\n"), r"m\.csv: line 3, field max_tokens: 'lots' is not a positive integer")
    fails(write(tmp_path / "z.jsonl", '{"question": "q", "max_tokens": 0}\n'), r"z\.jsonl: line 1, field max_tokens: 0 is not a positive integer")
    fails(write(tmp_path / "i.csv", "index,question\n1,a\n1,b\n"), r"i\.csv: line 3, field index: 1 repeats line 2")
    fails(write(tmp_path / "l.jsonl", '{"question": "q", "answer": [{"a": 1}]}\n'), r"l\.jsonl: line 1, field answer: a list answer must hold strings")


def test_bad_options_of_the_call(tmp_path):
    fails(FIXTURES / "aisbench" / "test_mcq.csv", r"few_shot must be a non-negative integer", few_shot=-1)
    fails(FIXTURES / "aisbench" / "test_mcq.csv", r"seed must be a non-negative integer", seed=-5)
    fails(FIXTURES / "aisbench" / "test_mcq.csv", r"unknown infer_method 'll'", infer_method="ll")
    fails(FIXTURES / "aisbench" / "test_qa.csv", r"unknown QA metric\(s\) \['meteor'\]", qa_metrics=("em", "meteor"))
    fails(FIXTURES / "aisbench" / "test_mcq.csv", r"test_mcq\.csv: few_shot=2 needs a few-shot pool beside it", few_shot=2)
    fails(FIXTURES / "ark" / "single_turn.jsonl", r"few-shot examples are supported for text mcq/qa files only, not conversation", few_shot=1)
    fails(FIXTURES / "ark" / "multi_turn.jsonl", r"data_type mcq, but conversation rows", data_type="mcq")


def test_bad_few_shot_pool(tmp_path):
    write(tmp_path / "s_val.csv", "question,A,B,answer\nq,x,y,A\n")
    write(tmp_path / "s_dev.csv", "question,A,B,answer\nd,x,y,Q\n")
    fails(tmp_path / "s_val.csv", r"s_dev\.csv: line 2, field answer: a few-shot example needs a valid answer \(invalid\)", few_shot=1)


def test_bad_directories(tmp_path):
    (tmp_path / "empty").mkdir()
    fails(tmp_path / "empty", r"empty: no \.jsonl or \.csv data files")
