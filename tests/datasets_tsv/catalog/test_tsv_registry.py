"""The catalog, build_dataset, kind detection of local TSVs, and errors for unknown names and missing columns."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.vqa import ImageVQADataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.catalog.registry import build_dataset, dataset_registry
from vlmkit.core.registry import RegistryError

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())
CIRCULAR = {"MMBench_DEV_EN", "MMBench_TEST_EN", "MMBench_DEV_CN", "MMBench_TEST_CN", "CCBench"}
METRICS = {
    "MME": "mme", "POPE": "pope", "HallusionBench": "hallusion", "TextVQA_VAL": "vqa_score", "DocVQA_VAL": "anls",
    "ChartQA_TEST": "relaxed", "OCRVQA_TEST": "exact", "OCRVQA_TESTCORE": "exact", "OCRBench": "ocrbench",
}
MCQ = {"SEEDBench_IMG", "AI2D_TEST", "ScienceQA_VAL", "ScienceQA_TEST", "MMStar", "RealWorldQA", "MMMU_DEV_VAL"}
DEMOS = {"vlmkit_demo_mcq": "mcq", "vlmkit_demo_yorn": "yorn", "vlmkit_demo_vqa": "vqa"}


def test_catalog_holds_the_supported_benchmarks_with_their_options():
    registry = dataset_registry()
    assert registry is dataset_registry()  # read once
    assert CIRCULAR | set(METRICS) | MCQ | set(DEMOS) <= set(registry.names())
    for name in sorted(CIRCULAR | set(METRICS) | MCQ | set(DEMOS)):
        entry = registry.get(name)
        cls = registry.load_class(entry.name)
        assert entry.description
        if entry.name in DEMOS:
            assert cls.kind == DEMOS[entry.name] and "url" not in entry.kwargs
            assert entry.kwargs["bundled"] == f"data/{entry.name}.tsv"
            continue
        assert entry.kwargs["url"].startswith("https://") and re.fullmatch(r"[0-9a-f]{32}", entry.kwargs["md5"])
        assert entry.kwargs.get("circular", False) == (entry.name in CIRCULAR)
        if entry.name in METRICS:
            assert entry.kwargs["metric"] == METRICS[entry.name]
            assert cls.kind == ("yorn" if METRICS[entry.name] in ("mme", "pope", "hallusion") else "vqa")
        else:
            assert cls.kind == "mcq"
    assert registry.get("MMBench_DEV_CN").kwargs["image_folder"] == "MMBench"
    assert registry.get("MMMU_DEV_VAL").target == "datasets_tsv.benchmarks.mmmu:MMMUDataset"
    assert registry.get("OCRBench").kwargs["short_answer"] is False


def test_unknown_name_suggests_catalog_names(lmu_root):
    with pytest.raises(RegistryError, match=r"Did you mean: MMBench_DEV_EN") as info:
        build_dataset("MMBench_DEV_EM", root=lmu_root)
    assert str(lmu_root / "MMBench_DEV_EM.tsv") in str(info.value)


def mcq_rows(indices: list[int]) -> list[dict]:
    return [{"index": i, "image": JPEG if i < 1_000_000 else str(i % 1_000_000), "question": f"Q{i}",
             "A": "x", "B": "y", "answer": "A"} for i in indices]


def test_local_mcq_tsv_by_name(lmu_root):
    write_tsv(lmu_root / "MyQuiz.tsv", mcq_rows([0, 1, 2]))
    ds = build_dataset("MyQuiz", root=lmu_root, progress=False)
    assert type(ds) is ImageMCQDataset and not ds.circular
    assert ds.info()["source"] == str(lmu_root / "MyQuiz.tsv")


def test_local_mcq_tsv_with_circular_groups(lmu_root):
    write_tsv(lmu_root / "Rotations.tsv", mcq_rows([0, 1, 1_000_000, 1_000_001, 2_000_000]))
    ds = build_dataset("Rotations", root=lmu_root, progress=False)
    assert type(ds) is ImageMCQDataset and ds.circular
    assert ds.image_paths(4) == ds.image_paths(0)


def test_indices_above_a_million_without_main_rows_are_not_circular(lmu_root):
    write_tsv(lmu_root / "BigIds.tsv", mcq_rows([0, 1_000_007]))
    assert not build_dataset("BigIds", root=lmu_root, progress=False).circular


def test_local_yorn_tsv(lmu_root):
    rows = [{"index": i, "image": JPEG, "question": "Red?", "answer": a} for i, a in enumerate(["Yes", "no ", "YES"])]
    write_tsv(lmu_root / "YesNo.tsv", rows)
    ds = build_dataset("YesNo", root=lmu_root, progress=False)
    assert type(ds) is ImageYORNDataset and ds.metric == "acc"


def test_local_vqa_tsv_by_path_outside_lmudata(lmu_root, tmp_path):
    rows = [{"index": i, "image": JPEG, "question": "Word?", "answer": a} for i, a in enumerate(["yes", "stop"])]
    path = write_tsv(tmp_path / "elsewhere" / "Words.tsv", rows)
    ds = build_dataset(str(path), root=lmu_root, progress=False)
    assert type(ds) is ImageVQADataset and ds.name == "Words" and ds.tsv_path == path
    assert ds.image_paths(0)[0].startswith(str((lmu_root / "images" / "Words").resolve()))


def test_missing_prompt_column_names_column_and_file(lmu_root):
    write_tsv(lmu_root / "NoQ.tsv", [{"index": 0, "image": JPEG, "A": "x", "B": "y", "answer": "A"}])
    with pytest.raises(DatasetError, match=r"NoQ\.tsv: missing column `question`"):
        build_dataset("NoQ", root=lmu_root, progress=False)


def test_missing_index_column_names_file(lmu_root):
    write_tsv(lmu_root / "NoIdx.tsv", [{"image": JPEG, "question": "q", "answer": "x"}])
    with pytest.raises(DatasetError, match=r"NoIdx\.tsv: missing column `index`"):
        ImageVQADataset("NoIdx", root=lmu_root, progress=False)


def test_evaluate_without_answers_names_column_and_file(lmu_root):
    write_tsv(lmu_root / "TestSplit.tsv", [{"index": 0, "image": JPEG, "question": "q", "A": "x", "B": "y"}])
    ds = build_dataset("TestSplit", root=lmu_root, progress=False)
    predictions = ds.data.assign(prediction=["A"])
    with pytest.raises(DatasetError, match=r"TestSplit\.tsv: missing column `answer`, needed to evaluate"):
        ds.evaluate(predictions)
    with pytest.raises(DatasetError, match=r"missing column `prediction`"):
        ds.evaluate(ds.data)


def test_unknown_options_and_metrics_are_refused(lmu_root):
    write_tsv(lmu_root / "V.tsv", [{"index": 0, "image": JPEG, "question": "q", "answer": "x"}])
    with pytest.raises(TypeError, match="colour"):
        ImageVQADataset("V", root=lmu_root, colour="blue")
    with pytest.raises(ValueError, match="unknown VQA metric 'bleu'"):
        ImageVQADataset("V", root=lmu_root, metric="bleu")
    with pytest.raises(ValueError, match="unknown yes/no metric"):
        ImageYORNDataset("V", root=lmu_root, metric="anls")


def test_table_keeps_types_as_read(lmu_root):
    rows = [{"index": 3, "image": JPEG, "question": "q", "answer": "12", "score": 0.5, "category": "c"},
            {"index": 4, "image": JPEG, "question": "r", "answer": "", "score": "", "category": "d"}]
    write_tsv(lmu_root / "Types.tsv", rows)
    ds = ImageVQADataset("Types", root=lmu_root, progress=False)
    assert ds.data["index"].tolist() == [3, 4] and pd.api.types.is_integer_dtype(ds.data["index"])
    assert ds.line(0)["answer"] == "12" and pd.isna(ds.line(1)["answer"])
    assert ds.line(0)["score"] == 0.5 and pd.isna(ds.line(1)["score"])
    assert list(ds.data.columns) == ["index", "question", "answer", "score", "category"]
