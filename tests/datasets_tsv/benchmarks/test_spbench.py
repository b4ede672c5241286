"""SPBench as VLMEvalKit's SPBench builds and scores it (spbench.py with VsiBench.evaluate/_aggregate and the
spatial_bench rule path at e8e78f05): the prompts byte for byte, images from the snapshot folder, the option letters
and numbers read, MRA and the per-type figures worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.spbench import SPBenchDataset
from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.kinds.base import DatasetError
from tests.support.tsvs import image_bytes, write_tsv

OPTS = "['A. left', 'B. right']"
ROWS = [
    # (question_type, candidates, answer, reply)
    ("object_rel_direction", OPTS, "B", "B"),  # hit
    ("object_rel_direction", OPTS, "A", "<think>hmm</think><answer>B</answer>"),  # reads B: miss
    ("object_rel_distance", "['A. x', 'B. y', 'C. z']", "C", "The answer is C."),  # hit
    ("object_counting", "None", "10", "There are 8.7 things."),  # error 0.13: t <= 0.85, 8 of 10
    ("object_abs_distance", "None", "2.0", "<answer>2</answer>"),  # exact: 1
    ("object_size_estimation", "None", "100", None),  # a failed call: 0
]


def write(lmu_root: Path, name: str, rows=ROWS, *, with_paths: bool = False) -> Path:
    out = []
    for i, (qtype, cands, answer, _) in enumerate(rows):
        row = {"index": i, "question": f"Q{i}?", "question_type": qtype, "candidates": cands, "answer": answer}
        row["image_path"] = f"['scenes/{i}a.png', 'scenes/{i}b.png']" if with_paths else f"{i}.png"
        out.append(row)
    return write_tsv(lmu_root / f"{name}.tsv", out)


def snapshot(tmp_path: Path, n: int = len(ROWS)) -> Path:
    root = tmp_path / "SPBench"
    (root / "scenes").mkdir(parents=True)
    for i in range(n):
        for side, colour in (("a", "red"), ("b", "blue")):
            (root / "scenes" / f"{i}{side}.png").write_bytes(image_bytes(colour, "PNG"))
    return root


def test_prompts_are_vlmevalkits(lmu_root, tmp_path):
    write(lmu_root, "SPBench-MV", with_paths=True)
    root = snapshot(tmp_path)
    ds = build_dataset("SPBench-MV", root=lmu_root, progress=False, keep_local_tsv=True, data_root=root)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "image", "text"]
    assert msgs[0]["value"] == str((root / "scenes" / "0a.png").resolve())
    assert msgs[2]["value"] == ("Question: Q0?\nOptions:\nA. left\nB. right\n\nPlease answer with the option's letter "
                                "from the given choices (e.g., A, B, etc.) directly.")  # fmt: skip
    assert ds.build_prompt(3)[-1]["value"] == ("Question: Q3?\n\nPlease answer the question using a numerical value "
                                               "(e.g., 42 or 3.1) directly.")  # fmt: skip

    write(lmu_root, "SPBench-MV_CoT", with_paths=True)
    cot = build_dataset("SPBench-MV_CoT", root=lmu_root, progress=False, keep_local_tsv=True, data_root=root)
    assert cot.build_prompt(3)[-1]["value"] == (
        "Question: Q3?\nPlease think about this question as if you were a human pondering deeply. Engage in an "
        "internal dialogue using expressions such as 'let me think', 'wait', 'Hmm', 'oh, I see', 'let's break it "
        "down', etc, or other natural language thought expressions It's encouraged to include self-reflection or "
        "verification in the reasoning process. \n\nPlease provide your detailed reasoning between the <think> "
        "</think> tags, and then answer the question with a numerical value (e.g., 42 or 3.1) within the <answer> "
        "</answer> tags.")


def test_scored_by_hand(lmu_root, tmp_path):
    write(lmu_root, "SPBench-SI", with_paths=True)
    ds = build_dataset("SPBench-SI", root=lmu_root, progress=False, keep_local_tsv=True, data_root=snapshot(tmp_path))
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    m = result.metrics
    assert m["object_rel_direction_accuracy"] == pytest.approx(50.0)
    assert m["object_rel_distance_accuracy"] == pytest.approx(100.0)
    assert m["object_counting_MRA:.5:.95:.05"] == pytest.approx(80.0)
    assert m["object_abs_distance_MRA:.5:.95:.05"] == pytest.approx(100.0)
    assert m["object_size_estimation_MRA:.5:.95:.05"] == pytest.approx(0.0)
    assert m["overall"] == pytest.approx((50 + 100 + 80 + 100 + 0) / 5)
    assert result.primary == "overall" and result.counts["inference_errors"] == 1
    assert result.per_sample["read"].tolist()[:5] == ["B", "B", "C", 8.7, 2.0]
    assert result.vlmevalkit.metrics == pytest.approx(m) and not result.vlmevalkit.differing


def test_two_unread_letters_are_a_hit_only_in_vlmevalkits_figure(lmu_root):
    rows = [("object_rel_direction", OPTS, "yes", "no idea"), ("object_rel_direction", OPTS, "A", "A")]
    write(lmu_root, "SPBench-SI", rows)
    ds = SPBenchDataset("SPBench-SI", root=lmu_root, progress=False)
    result = ds.evaluate(ds.data.assign(prediction=["no idea", "A"]))
    assert result.metrics["overall"] == pytest.approx(50.0)
    assert result.vlmevalkit.metrics["overall"] == pytest.approx(100.0)
    assert [d.index for d in result.vlmevalkit.differing] == [0]


def test_an_unknown_question_type_is_one_line(lmu_root):
    write(lmu_root, "SPBench-SI", [("room_size_estimation", "None", "3", "3")])
    ds = SPBenchDataset("SPBench-SI", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field question_type: unknown question type"):
        ds.prompt_text(ds.line(0))
    with pytest.raises(DatasetError, match=r"SPBench-SI.tsv: .*row index 0, field question_type"):
        ds.evaluate(ds.data.assign(prediction=["3"]))
