"""RuleScoredDataset: a benchmark made of a catalog row and a scorer module only. Checked against a second
implementation of the same benchmark (CRPE's own class: the same prompts and the same figures), and through the
catalog with a scorer the scorer-id table does not name (registered by its module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.crpe import CRPEDataset
from datasets_tsv.catalog.entries import parse_rows
from datasets_tsv.catalog.registry import build_row, scorer_id
from datasets_tsv.kinds.rule_scored import RuleScoredDataset
from vlmkit.judging import FunctionJudge
from vlmkit.scoring import ids

from tests.datasets_tsv.kinds.test_bespoke_mcq import CRPE
from tests.support.tsvs import b64, image_bytes, write_tsv

RED = b64(image_bytes("red"))
QUESTION = "What is the man doing with the cup?\nA. holding\nB. drinking\nAnswer with the option's letter."
CRPE_OPTIONS = {"scorer": "crpe", "kind": "vqa", "answer_columns": ["answer", "category"]}


def crpe_tsv(root: Path, name: str) -> None:
    write_tsv(root / f"{name}.tsv", [
        {"index": i, "image": RED, "question": QUESTION, "answer": a, "category": c}
        for i, (c, a, _, _) in enumerate(CRPE)
    ])  # fmt: skip


def test_the_same_prompts_and_figures_as_the_benchmarks_own_class(lmu_root: Path) -> None:
    crpe_tsv(lmu_root, "CRPE_X")
    own = CRPEDataset("CRPE_X", root=lmu_root, progress=False)
    ruled = RuleScoredDataset("CRPE_X", root=lmu_root, progress=False, **CRPE_OPTIONS)
    assert ruled.kind == own.kind == "vqa"
    assert [ruled.build_prompt(i) for i in range(len(CRPE))] == [own.build_prompt(i) for i in range(len(CRPE))]
    replies = [reply for _, _, reply, _ in CRPE]
    mine, theirs = (ds.evaluate(ds.data.assign(prediction=replies)) for ds in (ruled, own))
    assert mine.scorer == theirs.scorer == "crpe" and mine.metrics == theirs.metrics
    # the hits worked by hand in test_bespoke_mcq, row by row (CRPE's headline counts groups of 4: H2b's scorer)
    assert mine.metrics["rows/total"] == pytest.approx(4 / 6)
    assert mine.per_sample["hit"].tolist() == [hit for *_, hit in CRPE]
    assert ruled.scorer_params() == {"scorer": "crpe"} and scorer_id(ruled) == "crpe"
    judged = ruled.evaluate(ruled.data.assign(prediction=replies), judge=FunctionJudge(lambda r: "A"))
    assert judged.metrics == mine.metrics and "CRPE_X is scored by its rule only" in judged.notes[-1]


def test_a_suffix_and_scorer_options(lmu_root: Path) -> None:
    crpe_tsv(lmu_root, "CRPE_Y")
    ds = RuleScoredDataset("CRPE_Y", root=lmu_root, progress=False, suffix="\nAnswer briefly.", **CRPE_OPTIONS)
    assert ds.build_prompt(0)[-1]["value"] == QUESTION + "\nAnswer briefly."
    with pytest.raises(TypeError, match="unexpected keyword argument 'strict'"):  # options go to score_crpe as given
        bad = RuleScoredDataset("CRPE_Y", root=lmu_root, progress=False, scorer_options={"strict": True},
                                **CRPE_OPTIONS)
        bad.evaluate(bad.data.assign(prediction="A"))


def test_a_scorer_without_its_module_or_a_kind_outside_the_rules_is_refused(lmu_root: Path) -> None:
    crpe_tsv(lmu_root, "CRPE_Z")
    with pytest.raises(ValueError, match="CRPE_Z: scorer 'vcr_tokens': no module .*vcr_tokens.py defining score_vcr_tokens"):
        RuleScoredDataset("CRPE_Z", root=lmu_root, progress=False, scorer="vcr_tokens")
    with pytest.raises(ValueError, match="CRPE_Z: unknown kind 'video'"):
        RuleScoredDataset("CRPE_Z", root=lmu_root, progress=False, scorer="crpe", kind="video")


ROW = ("name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"
       "CRPE_NEW\tvqa\tok\tcrpe\tnone\t\tdatasets_tsv.kinds.rule_scored:RuleScoredDataset\t"
       '{"scorer": "crpe", "kind": "vqa", "answer_columns": ["answer", "category"]}\t\t\ta new benchmark\t\n')


def test_a_catalog_row_and_a_scorer_module_make_a_benchmark(lmu_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as if crpe were a new scorer: no row of the scorer-id table names it, its module registers it
    monkeypatch.delitem(ids.catalog_kinds(), "crpe")
    monkeypatch.delitem(ids.by_id(), "crpe")
    monkeypatch.delitem(ids.by_catalog(), "crpe")
    [row] = parse_rows(ROW)
    crpe_tsv(lmu_root, "CRPE_NEW")
    ds = build_row(row, root=lmu_root, progress=False)
    assert (ds.name, ds.kind, scorer_id(ds)) == (row.name, row.kind, row.scorer)
    result = ds.evaluate(ds.data.assign(prediction=[reply for _, _, reply, _ in CRPE]))
    assert result.scorer == "crpe" and result.scale is not None and result.scale.kind == "fraction"
