"""VLRMBench as VLMEvalKit scores it (vlmeval/dataset/vlrmbench.py at e8e78f05); every value worked by hand from
its code (sklearn's binary F1 with zero_division=0 written out as precision/recall)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError
from vlmkit.scoring.benchmarks.vlrmbench import pair_scores, score_vlrmbench, step_labels


@pytest.mark.parametrize(("reply", "length", "labels"), [
    ("1, 1, 1", 3, [1, 1, 1]), ("Step 1: 0\nStep 2: 5", 2, [1, 0]), ("0", 2, [0, 0]), ("[0, 7, 1, 0]", 3, [0, 1, 1]),
    ("none", 2, [0, 0]),
])  # fmt: skip
def test_step_labels_are_the_digit_runs_fitted_to_the_answer(reply, length, labels):
    assert step_labels(reply, length) == labels


@pytest.mark.parametrize(("reply", "scores"), [
    ("Score 1: 7, Score 2: 8", [2, 8]),  # the labels' own digits count (VLMEvalKit's docstring expects 7, 8)
    ("[9, 3]", [9, 3]), ("10", [10, 0]), ("", [0, 0]), ("1 2 3", [2, 3]),
])  # fmt: skip
def test_pair_scores_are_the_last_two_numbers(reply, scores):
    assert pair_scores(reply) == scores


def _steps() -> pd.DataFrame:
    return pd.DataFrame([
        {"index": 1, "category": "step_correctness", "answer": "[1, 0, 1]", "prediction": "1, 1, 1"},
        {"index": 2, "category": "step_correctness", "answer": "[0, 0]", "prediction": "Step 1: 0\nStep 2: 5"},
        {"index": 3, "category": "redundant_det", "answer": "[1, 1]", "prediction": "0"},
        {"index": 4, "category": "redundant_det", "answer": "[0, 1]", "prediction": None},  # a failed call
    ])  # fmt: skip


def test_step_based_f1_per_category_and_overall():
    result = score_vlrmbench(_steps())
    # step_correctness: gold 1 0 1 0 0, read 1 1 1 1 0: F1_pos 2/3, F1_neg 1/2, weighted (3 x 2/3 + 2 x 1/2) / 5
    assert result.metrics["step_correctness_F1_pos"] == pytest.approx(2 / 3)
    assert result.metrics["step_correctness_F1_neg"] == pytest.approx(0.5)
    assert result.metrics["step_correctness_F1_weighted"] == pytest.approx(0.6)
    # redundant_det: gold 1 1 0 1, read 0 0 and (failed: every label wrong) 1 0: no true positive of either label
    assert result.metrics["redundant_det_F1_weighted"] == 0.0
    # overall: gold 1 0 1 0 0 1 1 0 1, read 1 1 1 1 0 0 0 1 0: F1_pos 4/10, F1_neg 2/8, weighted (4 x .4 + 5 x .25) / 9
    assert result.metrics["Overall_F1_pos"] == pytest.approx(0.4)
    assert result.metrics["Overall_F1_weighted"] == pytest.approx(2.85 / 9)
    assert result.primary == "Overall_F1_weighted" and result.scale.kind == "fraction"
    assert result.per_sample["score"].tolist() == pytest.approx([2 / 3, 0.5, 0.0, 0.0])
    assert result.counts["step_correctness_count"] == 2 and result.counts["inference_errors"] == 1
    # VLMEvalKit reads its failure message: no digits, labels 0 0 -> redundant_det F1_neg 2/5, weighted 3 x .4 / 4;
    # overall read 1 1 1 1 0 0 0 0 0: F1_pos = F1_neg = 4/9
    theirs = result.vlmevalkit
    assert theirs.metrics["redundant_det_F1_weighted"] == pytest.approx(0.3)
    assert theirs.metrics["Overall_F1_weighted"] == pytest.approx(4 / 9)
    assert [d.index for d in theirs.differing] == [4]


def test_multi_solution_pairs():
    df = pd.DataFrame([
        {"index": 10, "category": "multi_solution", "order": "front", "prediction": "Score 1: 7, Score 2: 8"},
        {"index": 11, "category": "multi_solution", "order": "back", "prediction": "[9, 3]"},  # 2+3 > 8+9: no
        {"index": 13, "category": "multi_solution", "order": "back", "prediction": "A: 3 B: 9"},
        {"index": 12, "category": "multi_solution", "order": "front", "prediction": "[8, 2]"},  # 8+9 > 2+3: yes
        {"index": 14, "category": "multi_solution", "order": "front", "prediction": "[1, 1]"},  # no partner: skipped
    ])  # fmt: skip
    result = score_vlrmbench(df)
    assert result.metrics == {"multi_solution_accuracy": 0.5} and result.primary == "multi_solution_accuracy"
    assert result.counts["multi_solution_count"] == 2 and result.counts["multi_solution_skipped"] == 1
    swapped = df.assign(order=["back", "front", "back", "front", "front"])  # pair (10, 11) out of order: skipped
    result = score_vlrmbench(swapped)
    assert result.metrics == {"multi_solution_accuracy": 1.0}  # (12, 13) still front, back: the one pair scored
    assert result.counts["multi_solution_skipped"] == 2


def test_foresight_words_and_vlmevalkit_identity_test():
    df = pd.DataFrame([
        {"index": 20, "category": "foresight", "task_gt": True, "prediction": "Yes, it will."},
        {"index": 21, "category": "foresight", "task_gt": False, "prediction": "I think not, no."},
        {"index": 22, "category": "foresight", "task_gt": True, "prediction": "nope"},
        {"index": 23, "category": "foresight", "task_gt": False, "prediction": ""},
    ])  # fmt: skip
    result = score_vlrmbench(df)
    assert result.metrics == {"foresight_accuracy": 0.5}
    # VLMEvalKit: `task_gt is True` fails for the numpy booleans pandas hands it; the empty reply comes back NaN and
    # is skipped: 0 right of 3
    assert result.vlmevalkit.metrics == {"foresight_accuracy": 0.0}
    assert any("is True" in n for n in result.vlmevalkit.notes)


def test_a_bad_answer_cell_is_named():
    df = _steps().assign(answer=["[1, 0, 1]", "oops", "[1]", "[0]"])
    with pytest.raises(ValueError, match=r"row index 2, field answer: 'oops'"):
        score_vlrmbench(df)


def test_by_catalog_name(lmu_root: Path):
    for name in ("VLRMBench", "VLRMBench_Foresight", "VLRMBench_MultiSolution"):
        write_tsv(lmu_root / f"{name}.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "Step 1 ...?",
                                              "category": "step_correctness", "answer": "[1, 0]"}])  # fmt: skip
        ds = build_dataset(name, root=lmu_root, progress=False, keep_local_tsv=True)
        prompt = ds.build_prompt(0)
        assert [p["type"] for p in prompt] == ["image", "text"] and prompt[-1]["value"] == "Step 1 ...?"
        assert ds.evaluate(ds.data.assign(prediction=["1 0"])).metrics["Overall_F1_weighted"] == 1.0
    with pytest.raises(DataError, match=r"VLRMBench_MultiSolution.tsv: VLRMBench scoring: row index 0, field answer"):
        ds.evaluate(ds.data.assign(answer="x", prediction=["1"]))
