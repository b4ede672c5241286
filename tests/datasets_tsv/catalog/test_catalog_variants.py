"""The catalog's variant classes, each on a small TSV of its benchmark's shape: VLMEvalKit's prompt text, and a
score worked out by hand (MUIRBench, CV-Bench, HR-Bench, VizWiz)."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_row

from tests.support.tsvs import b64, image_bytes, write_tsv

RED, BLUE = b64(image_bytes("red")), b64(image_bytes("blue"))


def build(name: str, root, rows: list[dict]):
    """The catalog's own row for name, over a local TSV of that name (the catalog's MD5 is the real file's)."""
    write_tsv(root / f"{name}.tsv", rows)
    return build_row(catalog_rows()[name], root=root, progress=False, keep_local_tsv=True)


def predictions(ds, replies: list[str]):
    return ds.data.assign(prediction=replies)


def test_muirbench_prompt_and_image_places(lmu_root):
    ds = build("MUIRBench", lmu_root, [
        {"index": 0, "image": f"['{RED}', '{BLUE}']", "question": "Which shows red? <image> or <image>",
         "A": "the first", "B": "the second", "answer": "A", "task": "colour"},
        {"index": 1, "image": f"['{RED}', '{BLUE}']", "question": "No placeholder here", "A": "x", "B": "y",
         "answer": "B", "task": "colour"},
    ])
    first, second = ds.image_paths(0)
    parts = ds.build_prompt(0)
    assert parts == [
        {"type": "text", "value": "Which shows red? "},
        {"type": "image", "value": first},
        {"type": "text", "value": " or "},
        {"type": "image", "value": second},
        {"type": "text", "value": "\nA. the first\nB. the second\nAnswer with the option's letter from the given "
                                  "choices directly."},
    ]  # fmt: skip
    assert [p["type"] for p in ds.build_prompt(1)] == ["image", "image", "text"]  # vlmkit: images first
    result = ds.evaluate(predictions(ds, ["A", "A"]))
    assert result.metrics["Overall"] == pytest.approx(0.5)


def test_cv_bench_2d_prompt_column_and_overall_as_the_mean_over_sources(lmu_root):
    rows = [
        {"index": i, "image": RED, "question": "q", "A": "yes", "B": "no", "answer": "A", "prompt": f"Prompt {i}",
         "source": src, "split": "2D"}
        for i, src in enumerate(["ADE20K", "ADE20K", "ADE20K", "COCO"])
    ]
    ds = build("CV-Bench-2D", lmu_root, rows)
    assert ds.build_prompt(2)[-1] == {"type": "text", "value": "Prompt 2"}
    result = ds.evaluate(predictions(ds, ["A", "B", "A", "(A)"]))  # ADE20K 2/3, COCO 1/1
    assert result.metrics["Overall"] == pytest.approx((2 / 3 + 1) / 2)
    assert result.metrics["ADE20K"] == pytest.approx(2 / 3) and result.metrics["COCO"] == 1.0
    assert result.metrics["Overall (rows)"] == pytest.approx(0.75)
    assert result.table.loc[0, "Overall"] == pytest.approx((2 / 3 + 1) / 2)


def test_cv_bench_3d_is_the_mean_over_rows(lmu_root):
    rows = [{"index": i, "image": RED, "question": "q", "A": "yes", "B": "no", "answer": "A", "prompt": "P",
             "source": src} for i, src in enumerate(["Omni3D", "Omni3D", "Other"])]
    ds = build("CV-Bench-3D", lmu_root, rows)
    assert ds.evaluate(predictions(ds, ["A", "B", "A"])).metrics["Overall"] == pytest.approx(2 / 3)


def test_hrbench_overall_is_the_mean_over_cycles(lmu_root):
    rows = [
        {"index": i, "image": RED, "question": "Colour?", "A": "red", "B": "blue", "answer": "A",
         "cycle_category": cyc, "category": "single"}
        for i, cyc in enumerate(["c1", "c1", "c2"])
    ]
    ds = build("HRBench4K", lmu_root, rows)
    assert ds.build_prompt(0)[-1]["value"] == (
        "Question: Colour?\nOptions:\nA. red\nB. blue\nPlease select the correct answer from the options above. \n"
    )
    result = ds.evaluate(predictions(ds, ["A", "B", "B"]))  # c1: 1/2, c2: 0/1
    assert result.metrics["Overall"] == pytest.approx(0.25) and result.metrics["Overall (rows)"] == pytest.approx(1 / 3)


def test_vizwiz_asks_the_question_alone_and_scores_the_answers_list(lmu_root):
    ds = build("VizWiz", lmu_root, [
        {"index": 0, "image": RED, "question": "What colour is this?", "answers": "['red', 'red', 'red', 'crimson']"},
        {"index": 1, "image": BLUE, "question": "Is it blue?", "answers": "['yes', 'yes', 'yes', 'yes']"},
    ])
    assert ds.build_prompt(0)[-1]["value"] == "What colour is this?"
    result = ds.evaluate(predictions(ds, ["Red.", "no"]))
    # row 0: three `red` GTs each see 2 other matches (2/3), `crimson` sees 3 (1): (3 * 2/3 + 1) / 4 = 0.75
    assert result.metrics["Overall"] == pytest.approx(37.5)
