"""Prompts of the standard kinds: VLMEvalKit's exact strings, images first, MMMU interleaving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.vqa import ImageVQADataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.benchmarks.mmmu import MMMUDataset

from tests.support.tsvs import b64, image_bytes, write_tsv

CLOSING = "Please select the correct answer from the options above. \n"
JPEG = b64(image_bytes("red"))
LETTERS = "ABCDEFGH"


def mcq(root: Path, rows: list[dict], **kwargs) -> ImageMCQDataset:
    write_tsv(root / "T.tsv", rows)
    return ImageMCQDataset("T", root=root, progress=False, **kwargs)


def text_of(parts: list[dict]) -> str:
    assert parts[-1]["type"] == "text" and all(p["type"] == "image" for p in parts[:-1])
    return parts[-1]["value"]


def test_mcq_with_hint(lmu_root):
    ds = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": "What colour?", "hint": "Look closely.",
                         "A": "red", "B": "blue", "answer": "A"}])
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["value"] == (
        "Hint: Look closely.\nQuestion: What colour?\nOptions:\nA. red\nB. blue\n" + CLOSING
    )
    assert ds.build_prompt(ds.line(0)) == parts  # a line dict gives the same prompt as its position


def test_mcq_without_hint_column_or_with_empty_hint(lmu_root):
    with_empty = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": "Q?", "hint": "", "A": "x", "B": "y"}])
    assert text_of(with_empty.build_prompt(0)) == "Question: Q?\nOptions:\nA. x\nB. y\n" + CLOSING
    no_column = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": "Q?", "A": "x", "B": "y"}])
    assert text_of(no_column.build_prompt(0)) == "Question: Q?\nOptions:\nA. x\nB. y\n" + CLOSING


@pytest.mark.parametrize("n", range(2, 9))
def test_mcq_with_n_options(lmu_root, n):
    rows = [
        {"index": 0, "image": JPEG, "question": "Pick one.", **{L: f"opt {L}" for L in LETTERS[:n]}},
        {"index": 1, "image": JPEG, "question": "Pick two.", **{L: f"opt {L}" for L in LETTERS}},  # widens the table
    ]
    ds = mcq(lmu_root, rows)
    expected = "Question: Pick one.\nOptions:\n" + "".join(f"{L}. opt {L}\n" for L in LETTERS[:n]) + CLOSING
    assert text_of(ds.build_prompt(0)) == expected


def test_mcq_row_missing_an_option_skips_its_letter(lmu_root):
    ds = mcq(lmu_root, [{"index": 7, "image": JPEG, "question": "Q", "A": "a", "B": "b", "C": "", "D": "d"}])
    assert text_of(ds.build_prompt(0)) == "Question: Q\nOptions:\nA. a\nB. b\nD. d\n" + CLOSING


def test_mcq_without_options_has_no_options_block(lmu_root):
    ds = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": "Q", "A": "", "B": ""},
                        {"index": 1, "image": JPEG, "question": "R", "A": "1", "B": "2"}])
    assert text_of(ds.build_prompt(0)) == "Question: Q\n"


def test_mcq_option_texts_are_shown_as_written(lmu_root):
    # A numeric column with a blank would be floats in pandas (3.0); a literal "None" would be NaN in VLMEvalKit.
    ds = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": "Q", "A": "3", "B": "None", "C": "4"},
                        {"index": 1, "image": JPEG, "question": "R", "A": "5", "B": "6", "C": ""}])
    assert text_of(ds.build_prompt(0)) == "Question: Q\nOptions:\nA. 3\nB. None\nC. 4\n" + CLOSING


def test_mcq_multiline_question_survives_quoting(lmu_root):
    question = 'Line one\twith a tab,\nline "two".'
    ds = mcq(lmu_root, [{"index": 0, "image": JPEG, "question": question, "A": "x", "B": "y"}])
    assert text_of(ds.build_prompt(0)).startswith(f"Question: {question}\nOptions:\n")


def test_mcq_empty_question_is_a_clear_error(lmu_root):
    ds = mcq(lmu_root, [{"index": 5, "image": JPEG, "question": "", "A": "x", "B": "y"}])
    with pytest.raises(DatasetError, match=r"T\.tsv: row 0 \(index 5\), field question"):
        ds.build_prompt(0)


def test_yorn_prompt_is_the_question_alone(lmu_root):
    write_tsv(lmu_root / "YN.tsv", [{"index": 0, "image": JPEG, "question": "Is it red? Please answer yes or no.",
                                     "answer": "Yes"}])
    parts = ImageYORNDataset("YN", root=lmu_root, progress=False).build_prompt(0)
    assert parts[0]["type"] == "image" and parts[1] == {"type": "text", "value": "Is it red? Please answer yes or no."}


def test_vqa_prompt_asks_for_a_short_answer(lmu_root):
    write_tsv(lmu_root / "V.tsv", [{"index": 0, "image": JPEG, "question": "What is written?", "answer": "stop"}])
    parts = ImageVQADataset("V", root=lmu_root, progress=False).build_prompt(0)
    assert text_of(parts) == "What is written?\nAnswer the question using a single word or phrase."
    plain = ImageVQADataset("V", root=lmu_root, progress=False, metric="ocrbench", short_answer=False)
    assert text_of(plain.build_prompt(0)) == "What is written?"


# -- MMMU --------------------------------------------------------------------------------------------------------

COLOURS = ["red", "green", "blue", "yellow", "white", "black", "orange", "purple", "pink", "gray", "brown"]


def mmmu(root: Path, question: str, n_images: int, **options: str) -> MMMUDataset:
    images = [b64(image_bytes(c, "PNG")) for c in COLOURS[:n_images]]
    names = [f"q0_{c}.png" for c in COLOURS[:n_images]]
    write_tsv(root / "MM.tsv", [{"index": 0, "image": json.dumps(images), "image_path": json.dumps(names),
                                 "question": question, **options, "answer": "A"}])
    return MMMUDataset("MM", root=root, progress=False)


def colour_of(path: str) -> tuple[int, int, int]:
    return Image.open(path).convert("RGB").getpixel((0, 0))


def test_mmmu_places_images_where_the_text_says(lmu_root):
    ds = mmmu(lmu_root, "Compare <image 1> with <image 2>.", 3, A="<image 3>", B="none of them")
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "image", "text", "image", "text", "image", "text"]
    assert parts[0]["value"] == "Question: Compare "
    assert parts[2]["value"] == " with "
    assert parts[4]["value"] == ".\nOptions:\nA. "
    assert parts[6]["value"] == "\nB. none of them\n" + CLOSING
    assert [Path(parts[i]["value"]).name for i in (1, 3, 5)] == ["q0_red.png", "q0_green.png", "q0_blue.png"]


def test_mmmu_handles_image_10_and_repeats(lmu_root):
    ds = mmmu(lmu_root, "See <image 10>, then <image 1>, again <image 10>.", 11, A="x", B="y")
    images = [p["value"] for p in ds.build_prompt(0) if p["type"] == "image"]
    assert [Path(p).name for p in images] == ["q0_gray.png", "q0_red.png", "q0_gray.png"]
    assert colour_of(images[0]) == (128, 128, 128)  # the tenth image, not the first followed by "0>"


def test_mmmu_drops_unreferenced_images_when_placeholders_exist(lmu_root):
    ds = mmmu(lmu_root, "Only <image 2> matters.", 3, A="x", B="y")
    images = [Path(p["value"]).name for p in ds.build_prompt(0) if p["type"] == "image"]
    assert images == ["q0_green.png"]


def test_mmmu_without_placeholders_puts_images_first(lmu_root):
    ds = mmmu(lmu_root, "Which is brightest?", 2, A="x", B="y")
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "image", "text"]
    assert parts[2]["value"] == "Question: Which is brightest?\nOptions:\nA. x\nB. y\n" + CLOSING


def test_mmmu_adjacent_placeholders_leave_no_empty_text(lmu_root):
    ds = mmmu(lmu_root, "<image 1><image 2>", 2, A="x", B="y")
    parts = ds.build_prompt(0)
    assert all(p["value"] for p in parts)
    assert [p["type"] for p in parts] == ["text", "image", "image", "text"]


def test_mmmu_placeholder_beyond_the_images_names_the_row(lmu_root):
    ds = mmmu(lmu_root, "See <image 4>.", 2, A="x", B="y")
    with pytest.raises(DatasetError, match=r"MM\.tsv: row 0 \(index 0\).*<image 4>.*2 image"):
        ds.build_prompt(0)
