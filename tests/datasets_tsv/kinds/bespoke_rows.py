"""The catalog rows of the benchmarks whose VLMEvalKit scorer is bespoke (VMCBench, CRPE, NaturalBench,
TableVQA-Bench, VLMBlind, TDBench grounding), built over small local TSVs of their shape."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import CatalogRow, catalog_rows
from datasets_tsv.catalog.registry import build_row

from tests.support.tsvs import write_tsv

NAMES = (
    "VMCBench_DEV", "VMCBench_TEST", "CRPE_EXIST", "CRPE_RELATION", "NaturalBenchDataset", "TableVQABench", "VLMBlind",
    *(f"tdbench_grounding_rot{rot}" for rot in (0, 90, 180, 270)),
)  # fmt: skip
# VLMEvalKit's rule per VLMBlind task (vlmeval/dataset/utils/vlm_blind.py), as the catalog row must give them.
VLMBLIND_RULES = {
    "Subway Connections": "braces", "Nested Squares": "braces", "Line Plot Intersections": "braces",
    "Touching Circles": "substring_nocase", "Counting Grid - Word Grids": "rows_columns",
    "Counting Grid - Blank Grids": "rows_columns", "Olympic Counting - Pentagons": "substring",
    "Olympic Counting - Circles": "substring", "Circled Letter": "braces",
}  # fmt: skip


def proposed_rows(monkeypatch: pytest.MonkeyPatch | None = None) -> dict[str, CatalogRow]:
    """The catalog's rows of these benchmarks, by name (monkeypatch: unused, kept for the fixtures' signature)."""
    rows = catalog_rows()
    return {name: rows[name] for name in NAMES}


def build(rows: dict[str, CatalogRow], name: str, lmu_root: Path, tsv_rows: list[dict]):
    """The catalog row built over a local TSV of tsv_rows (its MD5 is not the catalog's: none checked)."""
    write_tsv(lmu_root / f"{name}.tsv", tsv_rows)
    return build_row(dataclasses.replace(rows[name], md5=""), root=lmu_root, progress=False)
