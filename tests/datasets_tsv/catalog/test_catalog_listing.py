"""`vlmkit list datasets` (vlmkit.cli.listing): kind, scorer, judge need and size per benchmark; --kind, --search and
--scorable filters; no dataset class, pandas or torch imported to list."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from vlmkit.core.errors import ConfigError
from vlmkit.cli.listing import add_list_parser, dataset_lines, filter_rows


def run_list(argv: list[str], capsys) -> str:
    parser = argparse.ArgumentParser(prog="vlmkit")
    add_list_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["list", *argv, "--wide"])  # whole lines: the cells are compared whole
    assert args.func(args) == 0
    return capsys.readouterr().out


def body(lines: list[str]) -> list[list[str]]:
    """The benchmark lines, split on runs of two spaces (the header and the two closing lines left out)."""
    return [[cell for cell in line.split("  ") if cell] for line in lines[1:-2]]


def test_every_benchmark_with_kind_scorer_judge_and_size(capsys):
    out = run_list(["datasets"], capsys)
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "SCORER", "JUDGE", "ROWS", "DESCRIPTION"]
    rows = {cells[0].strip(): [c.strip() for c in cells] for cells in body(lines)}
    assert len(rows) == len(catalog_rows())
    assert sum(cells[1] != "video" for cells in rows.values()) >= 150
    assert rows["MME"][1:5] == ["yorn", "mme", "optional", "2374"]
    assert rows["MMBench_DEV_EN_V11"][1:5] == ["mcq", "mcq-circular", "optional", "-"]
    assert rows["VCR_EN_EASY_100"][2:5] == ["vcr", "none", "100"]
    assert rows["OCRBench_v2"][2:5] == ["not yet: OCRBench v2 task metrics", "none", "10000"]
    assert rows["MathVista_MINI"][3] == "required" and "MathVista" in rows["MathVista_MINI"][2]
    n_ok = sum(r.status == "ok" for r in catalog_rows().values())
    n_judge = sum(r.status == "judge" for r in catalog_rows().values())
    assert lines[-2].startswith(f"{len(catalog_rows())} benchmark(s): {n_ok} scored by rules, {n_judge} scored with "
                                "--judge, ")


def test_kind_filter(capsys):
    rows = body(run_list(["datasets", "--kind", "yorn"], capsys).splitlines())
    assert {cells[1].strip() for cells in rows} == {"yorn"}
    assert {"MME", "POPE", "HallusionBench"} <= {cells[0].strip() for cells in rows}
    with pytest.raises(ConfigError, match=r"--kind quiz: no such kind in the catalog; kinds: caption, mcq"):
        dataset_lines(kind="quiz")


def test_search_is_case_insensitive_over_name_and_description():
    names = [r.name for r in filter_rows(catalog_rows().values(), search="ocr")]
    assert {"OCRBench", "OCRVQA_TEST", "TextVQA_VAL"} <= set(names)  # TextVQA by its description
    assert [r.name for r in filter_rows(catalog_rows().values(), search="CHARTQA")] == [
        "ChartQA_TEST", "ChartQAPro", "ChartQAPro_CoT", "ChartQAPro_PoT"]
    assert filter_rows(catalog_rows().values(), search="no such benchmark anywhere") == []


def test_filters_combine(capsys):
    out = run_list(["datasets", "--kind", "vqa", "--search", "docvqa", "--scorable"], capsys)
    assert [cells[0].strip() for cells in body(out.splitlines())] == ["DocVQA_VAL", "DocVQA_TEST"]
    assert out.splitlines()[-2].startswith("2 benchmark(s): 2 scored by rules, 0 scored with --judge, 0 not")


def test_models_take_search_but_not_dataset_filters(capsys):
    out = run_list(["models", "--search", "QWEN-VL"], capsys)
    assert out.splitlines() and all("qwen" in line.lower() for line in out.splitlines())
    with pytest.raises(ConfigError, match="--kind and --scorable apply to `vlmkit list datasets`"):
        run_list(["models", "--kind", "mcq"], capsys)


def test_listing_imports_no_dataset_class_pandas_or_torch():
    code = (
        "import sys\n"
        "from vlmkit.cli.listing import dataset_lines\n"
        "assert len(dataset_lines(kind='mcq', search='bench')) > 10\n"
        "print(sorted(m for m in ('pandas', 'torch', 'datasets_tsv.kinds.base', 'PIL') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
