"""The text-only benchmarks' table (datasets_tsv/catalog/text_benchmarks.tsv): well formed, apart from VLMEvalKit's
catalog, every class and scorer real, built by name by the registry and listed by `vlmkit list datasets --kind text`."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog.entries import CatalogError, catalog_rows, known_rows, parse_rows, text_rows
from datasets_tsv.catalog.registry import unknown_message
from vlmkit.cli.listing import dataset_lines
from vlmkit.core.registry import import_target
from vlmkit.scoring.ids import module_scorer

NAMES = ["MMLU", "MMLU-Pro", "C-Eval", "GSM8K", "BBH", "HellaSwag", "ARC-Challenge", "ARC-Easy", "BoolQ",
         "WinoGrande"]


def test_the_table_holds_the_issue_s_benchmarks_apart_from_the_catalog() -> None:
    rows = text_rows()
    assert list(rows) == NAMES
    assert not set(rows) & set(catalog_rows())  # VLMEvalKit's names stay VLMEvalKit's
    assert set(known_rows()) == set(catalog_rows()) | set(rows)
    for row in rows.values():
        assert (row.kind, row.status, row.judge) == ("text", "ok", "none"), row.name
        assert row.rows and row.description and not row.url and not row.md5, row.name


def test_every_class_and_scorer_is_real() -> None:
    for row in text_rows().values():
        cls = import_target(row.cls, what=row.name)
        assert cls.takes_data_root and cls.kind in ("mcq", "yorn", "vqa"), row.name
        assert cls.rule_scorer == row.scorer and module_scorer(row.scorer), row.name
        assert cls.repo_id.count("/") == 1, row.name


def test_the_likelihood_shaped_ones_are_mcq_or_yorn() -> None:
    kinds = {name: import_target(row.cls, what=name).kind for name, row in text_rows().items()}
    assert {n for n, k in kinds.items() if k == "vqa"} == {"GSM8K", "BBH"}
    assert kinds["BoolQ"] == "yorn"


def test_listed_by_kind_text_only() -> None:
    listed = [line.split()[0] for line in dataset_lines(kind="text", width=None)[1:len(NAMES) + 1]]
    assert listed == NAMES
    everything = {line.split()[0] for line in dataset_lines(width=None)[1:-2]}
    assert not everything & set(NAMES)


def test_a_misspelt_name_suggests_the_text_benchmark() -> None:
    assert "HellaSwag" in unknown_message("Hellaswag")


def test_a_malformed_row_names_the_table_line_and_field() -> None:
    header = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"
    bad = "X\ttext\tok\tno_such_scorer\tnone\t\tm:C\t\t\t\td\t\n"
    with pytest.raises(CatalogError, match=r"text_benchmarks\.tsv: line 2, field scorer"):
        parse_rows(header + bad, "text_benchmarks.tsv")


def test_like_a_text_benchmark_is_refused_in_one_line(tmp_path) -> None:
    from datasets_tsv.catalog.registry import build_dataset
    from vlmkit.core.errors import ConfigError

    tsv = tmp_path / "mine.tsv"
    tsv.write_text("index\tquestion\tA\tB\tanswer\n0\tq\ta\tb\tA\n")
    with pytest.raises(ConfigError, match="like=MMLU: MMLU is a text-only benchmark read from its snapshot folder"):
        build_dataset(str(tsv), like="MMLU", root=tmp_path, progress=False)
