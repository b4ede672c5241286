"""`.meta.json`: request_count padding/truncation, sampling modes under a seed, output_config max_tokens, and
every kind of bad meta file (a clear error naming the file and the field)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset

from tests.datasets_tsv.custom.conftest import FIXTURES

AIS = FIXTURES / "aisbench"


@pytest.fixture
def mcq(tmp_path: Path) -> Path:
    path = tmp_path / "test_mcq.jsonl"
    shutil.copy(AIS / "test_mcq.jsonl", path)
    return path


def with_meta(data: Path, meta: dict | str) -> Path:
    text = meta if isinstance(meta, str) else json.dumps(meta)
    Path(str(data) + ".meta.json").write_text(text, encoding="utf-8")
    return data


def sources(ds) -> list[int]:
    return ds.data["source_index"].tolist()


def test_meta_beside_the_file_pads_cyclically(mcq):
    plain = build_custom_dataset(mcq)
    ds = build_custom_dataset(with_meta(mcq, {"request_count": 10}))
    assert len(ds) == 10 and sources(ds) == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert ds.data["index"].tolist() == list(range(10))  # copies get fresh indices after the last one
    assert ds.build_prompt(4) == ds.build_prompt(0) and ds.line(9)["answer"] == "A"
    assert ds.file_md5 != plain.file_md5 and ds.info()["meta"]["request_count"] == 10
    assert "seed" not in ds.info()  # default sampling uses no randomness


def test_truncation_keeps_the_first_rows(mcq):
    ds = build_custom_dataset(with_meta(mcq, {"request_count": "2", "sampling_mode": "default"}))
    assert ds.data["index"].tolist() == [0, 1] and sources(ds) == [0, 1]


def test_text_indices_get_suffixed_copies(tmp_path):
    path = tmp_path / "ids.jsonl"
    path.write_text('{"id": "a", "question": "q1", "answer": "x"}\n{"id": "b", "question": "q2", "answer": "y"}\n')
    ds = build_custom_dataset(with_meta(path, {"request_count": 5}))
    assert ds.data["index"].tolist() == ["a", "b", "a#1", "b#1", "a#2"]
    assert sources(ds) == ["a", "b", "a", "b", "a"]


def test_shuffle_is_reproducible_under_a_seed(mcq):
    with_meta(mcq, {"request_count": 10, "sampling_mode": "shuffle"})
    first, again, other = (build_custom_dataset(mcq, seed=s) for s in (7, 7, 8))
    assert sources(first) == sources(again) and sources(first) != sources(other)
    assert Counter(sources(first)) == Counter([0, 1, 2, 3, 0, 1, 2, 3, 0, 1])  # the same rows, reordered
    assert first.info()["seed"] == 7 and first.info()["meta"]["sampling_mode"] == "shuffle"
    assert first.file_md5 != other.file_md5  # the seed is part of what the journal fingerprints
    assert len(set(first.data["index"].map(str))) == 10
    plain = build_custom_dataset(AIS / "test_mcq.jsonl")  # a shuffled row is its source row
    for pos, src in enumerate(sources(first)):
        assert first.build_prompt(pos) == plain.build_prompt(src)


def test_shuffle_truncated_takes_the_first_rows_in_some_order(mcq):
    ds = build_custom_dataset(with_meta(mcq, {"request_count": 3, "sampling_mode": "shuffle"}), seed=3)
    assert sorted(sources(ds)) == [0, 1, 2]


def test_random_draws_without_replacement(mcq):
    with_meta(mcq, {"request_count": 3, "sampling_mode": "random"})
    runs = {tuple(sources(build_custom_dataset(mcq, seed=s))) for s in range(12)}
    assert all(len(set(r)) == 3 for r in runs)  # no row twice
    assert any(3 in r for r in runs)  # unlike shuffle, any row may be picked
    assert sources(build_custom_dataset(mcq, seed=5)) == sources(build_custom_dataset(mcq, seed=5))
    padded = build_custom_dataset(with_meta(mcq, {"request_count": 9, "sampling_mode": "random"}), seed=1)
    assert Counter(sources(padded)) == Counter([0, 1, 2, 3, 0, 1, 2, 3, 0])


def test_seed_example_percentage(mcq):
    shutil.copy(AIS / "percentage.meta.json", str(mcq) + ".meta.json")
    ds = build_custom_dataset(mcq, seed=0)
    assert len(ds) == 10
    expected = [100] * 5 + [200] * 3 + [400] * 2  # in request order, as AISBench assigns blocks
    assert ds.data["max_tokens"].tolist() == expected
    assert [ds.generation_params(i) for i in range(10)] == [{"max_tokens": v} for v in expected]


def test_percentage_remainder_goes_to_the_last_value(mcq):
    meta = {"request_count": 7, "output_config": {"method": "percentage", "params": {"percentage_distribute": [[100, 0.5], [200, "0.5"]]}}}
    ds = build_custom_dataset(with_meta(mcq, meta))
    assert ds.data["max_tokens"].tolist() == [100, 100, 100, 200, 200, 200, 200]
    exact = {"request_count": 100, "output_config": {"method": "percentage", "params": {"percentage_distribute": [[5, 0.29], [6, 0.71]]}}}
    counts = Counter(build_custom_dataset(with_meta(mcq, exact)).data["max_tokens"])
    assert counts == {5: 29, 6: 71}  # decimal arithmetic: 0.29 * 100 is 29, not 28


def test_seed_example_uniform_overrides_row_max_tokens(tmp_path):
    data = tmp_path / "test_mcq_max_tokens.jsonl"
    shutil.copy(AIS / "test_mcq_max_tokens.jsonl", data)
    shutil.copy(AIS / "uniform.meta.json", str(data) + ".meta.json")
    ds = build_custom_dataset(data, seed=0)
    values = ds.data["max_tokens"].tolist()
    assert all(100 <= v <= 200 for v in values) and values != [512, 1024, 2048, 256]
    assert [ds.generation_params(i)["max_tokens"] for i in range(4)] == values
    assert build_custom_dataset(data, seed=0).data["max_tokens"].tolist() == values
    assert ds.info()["seed"] == 0 and ds.info()["meta"]["output_config"] == {"method": "uniform", "min_value": 100, "max_value": 200}


def test_uniform_covers_its_range(mcq):
    meta = {"request_count": 400, "output_config": {"method": "uniform", "params": {"min_value": "10", "max_value": 12}}}
    values = build_custom_dataset(with_meta(mcq, meta), seed=2).data["max_tokens"].tolist()
    assert set(values) == {10, 11, 12} and min(Counter(values).values()) > 80
    other = build_custom_dataset(mcq, seed=3).data["max_tokens"].tolist()
    assert other != values


def test_meta_path_flag(mcq, tmp_path):
    meta = tmp_path / "elsewhere.json"
    meta.write_text(json.dumps({"request_count": 6}))
    assert len(build_custom_dataset(mcq, meta_path=meta)) == 6
    with pytest.raises(CustomDataError, match=r"nothere\.json: meta file not found"):
        build_custom_dataset(mcq, meta_path=tmp_path / "nothere.json")


@pytest.mark.parametrize(
    ("meta", "pattern"),
    [
        ({"request_count": 3, "abbr": "x"}, r"field abbr: unknown key"),
        ({"output_config": {"method": "uniform", "params": {"min_value": 1, "max_value": 2, "mean": 3}}}, r"field output_config\.params\.mean: unknown key"),
        ({"output_config": {"method": "uniform", "params": {"min": 1}}}, r"field output_config\.params\.min: unknown key"),
        ({"output_config": {"method": "uniform", "kind": 1, "params": {}}}, r"field output_config\.kind: unknown key"),
        ({"request_count": -1}, r"field request_count: -1 is not a non-negative integer"),
        ({"request_count": "ten"}, r"field request_count: 'ten' is not a non-negative integer"),
        ({"request_count": True}, r"field request_count: True is not"),
        ({"sampling_mode": "sorted"}, r"field sampling_mode: 'sorted' is not one of default, shuffle, random"),
        ({"output_config": {"method": "uniform", "params": {"min_value": 200, "max_value": 100}}}, r"field output_config\.params: min_value 200 is greater than max_value 100"),
        ({"output_config": {"method": "uniform", "params": {"min_value": 0, "max_value": 100}}}, r"field output_config\.params\.min_value: 0 is not a positive integer"),
        ({"output_config": {"method": "uniform", "params": {"max_value": 100}}}, r"field output_config\.params\.min_value: missing"),
        ({"output_config": {"method": "gauss", "params": {}}}, r"field output_config\.method: 'gauss' is not one of uniform, percentage"),
        ({"output_config": {"method": "uniform", "params": [1, 2]}}, r"field output_config\.params: must be an object"),
        ({"output_config": "uniform"}, r"field output_config: must be an object"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": [[100, 0.5], [200, 0.3]]}}}, r"percentage_distribute: the ratios sum to 0\.8, not 1"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": [[100, 1.5]]}}}, r"percentage_distribute\[0\]\[1\]: ratio 1\.5 must be in \(0, 1\]"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": [[0, 1.0]]}}}, r"percentage_distribute\[0\]\[0\]: 0 is not a positive integer"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": [100, 1.0]}}}, r"percentage_distribute\[0\]: must be a \[max_tokens, ratio\] pair"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": []}}}, r"percentage_distribute: must be a non-empty list"),
        ({"output_config": {"method": "percentage", "params": {"percentage_distribute": [[10, "half"]]}}}, r"percentage_distribute\[0\]\[1\]: 'half' is not a number"),
        ([1, 2], r"a meta file holds a JSON object, got list"),
        ("", r"empty meta file"),
        ('{"request_count": 3,}', r"meta\.json: line 1: not valid JSON"),
    ],
)
def test_bad_meta_is_a_clear_error(mcq, meta, pattern):
    with_meta(mcq, meta)
    with pytest.raises(CustomDataError, match=pattern) as info:
        build_custom_dataset(mcq)
    assert str(mcq) + ".meta.json" in str(info.value) and "\n" not in str(info.value)
