"""MME-SCI's `<image_k>` placement (split_image_marks) and prompt texts, worked by hand."""

from __future__ import annotations

import pytest

from datasets_tsv.benchmarks.mmesci import split_image_marks
from datasets_tsv.kinds.base import DatasetError

from tests.support.tsvs import b64, image_bytes, write_tsv


def test_no_mark_puts_every_image_before_the_whole_text():
    assert split_image_marks("  plain text ", ["a.jpg", "b.jpg"], "here") == [
        {"type": "image", "value": "a.jpg"},
        {"type": "image", "value": "b.jpg"},
        {"type": "text", "value": "  plain text "},
    ]


def test_marks_place_their_image_in_any_order_and_may_repeat():
    text = "Compare <image_2> with\n<image_1>  <image_2>and say."
    assert split_image_marks(text, ["one", "two"], "here") == [
        {"type": "text", "value": "Compare"},
        {"type": "image", "value": "two"},
        {"type": "text", "value": "with"},
        {"type": "image", "value": "one"},
        {"type": "image", "value": "two"},
        {"type": "text", "value": "and say."},
    ]


def test_a_mark_at_the_edges_leaves_no_blank_text():
    assert split_image_marks("<image_1>", ["one"], "here") == [{"type": "image", "value": "one"}]
    assert split_image_marks("<image_10>x", [str(i) for i in range(1, 11)], "w")[0] == {"type": "image", "value": "10"}


@pytest.mark.parametrize("mark", ["<image_0>", "<image_3>"])
def test_a_mark_past_the_images_is_one_clear_error(mark):
    with pytest.raises(DatasetError) as err:
        split_image_marks(f"see {mark}", ["one", "two"], "MMESCI_EN.tsv row 7, field question")
    assert str(err.value) == f"MMESCI_EN.tsv row 7, field question: {mark} but the row has 2 image(s)"


def test_not_quite_marks_stay_text():
    assert split_image_marks("a <image_x> b <Image_1>", ["one"], "w") == [
        {"type": "image", "value": "one"}, {"type": "text", "value": "a <image_x> b <Image_1>"},
    ]


def test_mcq_rows_carry_their_options_and_other_rows_do_not(lmu_root):
    from datasets_tsv.catalog.registry import build_dataset

    jpeg = b64(image_bytes())
    rows = [
        {"index": 0, "image": jpeg, "question": "Pick <image_1>", "options": "A. x\nB. y", "type": "ImgTxt-MCQ",
         "answer": "A"},
        {"index": 1, "image": jpeg, "question": "Name it", "options": "A. x", "type": "ImgTxt-Open", "answer": "z"},
    ]
    write_tsv(lmu_root / "MMESCI_EN.tsv", rows)
    ds = build_dataset("MMESCI_EN", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    assert ds.prompt_text(ds.line(0)) == f"Pick <image_1>\nA. x\nB. y\n{ds.instruction}"
    assert ds.prompt_text(ds.line(1)) == f"Name it\n{ds.instruction}"
    second = ds.build_prompt(1)  # no mark: the image first
    assert [p["type"] for p in second] == ["image", "text"]
    assert ds.scorer_params()["vision_only"] is False and ds.scorer_params()["prompt"] == "MME-SCI"
