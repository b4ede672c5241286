"""datasets_tsv.custom.evalscope and the loader's naming helpers called directly, on folders written here: which
files are subsets and which are few-shot pools, which file a subset reads, the few-shot text, safe names and the
fresh indices of repeated rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom.evalscope import few_shot_prefix, list_subsets, pool_file, subset_file
from datasets_tsv.custom.loader import _fresh_indices, safe_name
from datasets_tsv.custom.reading import CustomDataError


def _touch(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("question,answer\nq,a\n")


def test_subsets_are_eval_files_and_pools_are_not(tmp_path: Path) -> None:
    _touch(tmp_path, "math_val.csv", "math_dev.csv", "chem_test.jsonl", "bio.jsonl", "notes.txt", "x.meta.json")
    assert list_subsets(tmp_path) == ["bio", "chem", "math"]  # sorted; _dev, .txt and .meta.json are not subsets
    with pytest.raises(CustomDataError, match=r"not a directory$"):
        list_subsets(tmp_path / "math_val.csv")


def test_a_subsets_file_prefers_jsonl_then_split_names(tmp_path: Path) -> None:
    _touch(tmp_path, "s_val.csv", "s.jsonl", "s_test.jsonl")
    # .jsonl before .csv; within .jsonl, `s_val`, then `s_test`, then `s`
    assert subset_file(tmp_path, "s") == (tmp_path / "s_test.jsonl", "s")
    _touch(tmp_path, "s_val.jsonl")
    assert subset_file(tmp_path, None) == (tmp_path / "s_val.jsonl", "s")  # one subset: no name needed
    with pytest.raises(CustomDataError, match=r"no subset 'zz' \(available: s\)$"):
        subset_file(tmp_path, "zz")
    _touch(tmp_path, "t.csv")
    with pytest.raises(CustomDataError, match=r"several subsets \(s, t\); name one with subset$"):
        subset_file(tmp_path, None)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CustomDataError, match=r"empty: no \.jsonl or \.csv data files"):
        subset_file(tmp_path / "empty", None)


def test_the_pool_beside_an_evaluation_file(tmp_path: Path) -> None:
    _touch(tmp_path, "s_val.jsonl", "s_dev.csv", "other.csv")
    assert pool_file(tmp_path / "s_val.jsonl") == tmp_path / "s_dev.csv"
    assert pool_file(tmp_path / "s_test.csv") == tmp_path / "s_dev.csv"
    assert pool_file(tmp_path / "s.csv") == tmp_path / "s_dev.csv"
    assert pool_file(tmp_path / "other.csv") is None
    _touch(tmp_path, "s_dev.jsonl")
    assert pool_file(tmp_path / "s_val.jsonl") == tmp_path / "s_dev.jsonl"  # .jsonl first


def test_few_shot_text_for_qa_and_mcq(tmp_path: Path) -> None:
    qa = tmp_path / "q_dev.jsonl"
    qa.write_text('{"question": "1+1?", "answer": ["2", "two"]}\n{"question": "2+2?", "answer": "4"}\n'
                  '{"question": "3+3?", "answer": "6"}\n')
    assert few_shot_prefix(qa, 2, "qa") == ("Question: 1+1?\nAnswer: 2\n\nQuestion: 2+2?\nAnswer: 4\n\n", 2)
    assert few_shot_prefix(qa, 10, "qa")[1] == 3  # a smaller pool: all of it
    mcq = tmp_path / "m_dev.csv"
    mcq.write_text("question,A,B,answer\nPick one,cat,dog,dog\n")
    text, n = few_shot_prefix(mcq, 1, "mcq")
    assert n == 1 and text.endswith("Answer: B\n\n") and "A. cat\nB. dog\n" in text
    bad = tmp_path / "b_dev.csv"
    bad.write_text("question,A,B,answer\nPick one,cat,dog,zebra\n")
    with pytest.raises(CustomDataError, match=r"b_dev\.csv: line 2, field answer: a few-shot example needs a valid "
                                              r"answer \(invalid\)$"):
        few_shot_prefix(bad, 1, "mcq")
    no_answer = tmp_path / "n_dev.jsonl"
    no_answer.write_text('{"question": "x"}\n')
    with pytest.raises(CustomDataError, match=r"n_dev\.jsonl: line 1, field answer: a few-shot example needs an "
                                              r"answer$"):
        few_shot_prefix(no_answer, 1, "qa")


@pytest.mark.parametrize(
    "name, expected",
    [("my data", "my_data"), ("a/b\\c", "a_b_c"), ("..hidden", "hidden"), ("数据-集.v2", "数据-集.v2"),
     ("///", "custom"), ("", "custom"), ("ok_name", "ok_name")],
)
def test_safe_name(name: str, expected: str) -> None:
    assert safe_name(name) == expected


def test_fresh_indices_never_collide() -> None:
    fresh = _fresh_indices([3, 1, 7])
    assert [fresh(1, 1), fresh(3, 1), fresh(1, 2)] == [8, 9, 10]  # integers: counting on from the largest
    fresh = _fresh_indices(["a", "a#1", "b"])
    assert fresh("a", 1) == "a#2"  # a#1 is taken
    assert fresh("a", 2) == "a#3"  # a#2 was just given
    assert fresh("b", 1) == "b#1"
