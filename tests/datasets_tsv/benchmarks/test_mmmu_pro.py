"""MMMU-Pro: VLMEvalKit's prompts for the four variants (strings written from its MMMUProDataset) and MCQ scores of
small TSVs worked out by hand, the chain-of-thought answer line included, the judge passed through."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.benchmarks.mmmu_pro import MMMUProDataset, answer_line
from vlmkit.judging import FunctionJudge

from tests.support.tsvs import b64, image_bytes, write_tsv

LETTERS = "ABCDEFGHIJ"
QUESTION = "Which graph <image 1> shows growth? Compare with <image 2>."
OPTIONS_BLOCK = "Options:\n" + "".join(f"{L}. choice {L.lower()}\n" for L in LETTERS)
DIRECT = "Answer directly with the option letter from the given choices. "
COT = (
    "Answer the following multiple-choice question. The last line of your response should be of the following "
    "format: 'Answer: $LETTER' (without quotes) where LETTER is one of the options. Think step by step before "
    "answering. "
)
VISION_DIRECT = (
    "Answer the following multiple-choice question in the image. "
    "Answer directly with the option letter from the given choices. "
)
VISION_COT = (
    "Answer the following multiple-choice question in the image. The last line of your response should be of the "
    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of the options. Think step by step "
    "before answering. "
)


def standard_rows() -> list[dict]:
    """MMMU_Pro_10c's shape: two images in a list, ten options, a letter answer, subject."""
    images = "[" + ", ".join(f'"{b64(image_bytes(c))}"' for c in ("red", "blue")) + "]"
    row = {"index": 0, "image": images, "question": QUESTION, **{L: f"choice {L.lower()}" for L in LETTERS},
           "answer": "B", "subject": "Economics"}
    return [row]


def vision_rows(answers: list[str], n_options: int = 4) -> list[dict]:
    """MMMU_Pro_V's shape: one image holding question and options, option columns, no question column."""
    return [
        {"index": i, "image": b64(image_bytes(colour)),
         **{L: f"option {L.lower()}" for L in LETTERS[:n_options]}, "answer": answer}
        for i, (colour, answer) in enumerate(zip(["red", "blue", "green", "white", "black"], answers))
    ]  # fmt: skip


def build(lmu_root, name: str, rows: list[dict], **options) -> MMMUProDataset:
    write_tsv(lmu_root / f"{name}.tsv", rows)
    return MMMUProDataset(name, root=lmu_root, progress=False, **options)


def test_standard_prompt_is_interleaved_with_the_direct_instruction(lmu_root):
    ds = build(lmu_root, "MMMU_Pro_10c", standard_rows())
    text = "Question: " + QUESTION + "\n" + OPTIONS_BLOCK + DIRECT
    assert ds.prompt_text(ds.line(0)) == text
    msgs = ds.build_prompt(0)
    images = ds.image_paths(0)
    assert msgs == [
        {"type": "text", "value": "Question: Which graph "},
        {"type": "image", "value": images[0]},
        {"type": "text", "value": " shows growth? Compare with "},
        {"type": "image", "value": images[1]},
        {"type": "text", "value": ".\n" + OPTIONS_BLOCK + DIRECT},
    ]


def test_standard_cot_prompt(lmu_root):
    ds = build(lmu_root, "MMMU_Pro_10c_COT", standard_rows(), cot=True)
    assert ds.build_prompt(0)[-1]["value"] == ".\n" + OPTIONS_BLOCK + COT
    assert ds.scorer_params()["cot"] is True and ds.scorer_params()["scorer"] == "mmmu-pro"


def test_standard_row_without_options_has_no_instruction(lmu_root):
    rows = standard_rows()
    for L in LETTERS:
        rows[0][L] = ""
    rows[0]["question"] = "How many?"
    ds = build(lmu_root, "P", rows)
    assert ds.prompt_text(ds.line(0)) == "Question: How many?\n"


@pytest.mark.parametrize(("cot", "text"), [(False, VISION_DIRECT), (True, VISION_COT)])
def test_vision_prompt_is_the_image_alone_with_its_instruction(lmu_root, cot, text):
    ds = build(lmu_root, "MMMU_Pro_V", vision_rows(["A"]), setting="vision", cot=cot)
    assert ds.build_prompt(0) == [{"type": "image", "value": ds.image_paths(0)[0]}, {"type": "text", "value": text}]
    assert ds.scorer_params()["setting"] == "vision"


def test_vision_row_with_two_images_is_an_error_naming_the_row(lmu_root):
    rows = vision_rows(["A"])
    rows[0]["image"] = "[" + ", ".join(f'"{b64(image_bytes(c))}"' for c in ("red", "blue")) + "]"
    ds = build(lmu_root, "MMMU_Pro_V", rows, setting="vision")
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image: a vision row has one image"):
        ds.build_prompt(0)


def test_options_are_checked(lmu_root):
    with pytest.raises(ValueError, match="setting 'video'"):
        build(lmu_root, "P", standard_rows(), setting="video")
    with pytest.raises(ValueError, match="never circular"):
        build(lmu_root, "P", standard_rows(), circular=True)


def test_direct_scores(lmu_root):
    rows = vision_rows(["B", "C", "J", "A"], n_options=10)
    rows[3].update({L: "" for L in LETTERS})
    rows[3]["answer"] = "42"  # an open question: A = 42, B = Other Answers, answer A (MMMU's rule)
    ds = build(lmu_root, "MMMU_Pro_V", rows, setting="vision")
    result = ds.evaluate(ds.data.assign(prediction=["B", "C. option c", "A", "42"]))
    assert result.metrics["Overall"] == pytest.approx(3 / 4)
    assert result.scale.kind == "fraction"


def test_cot_reads_the_answer_line(lmu_root):
    rows = vision_rows(["B", "A", "C", "D", "A"])
    rows[2]["C"] = "none of these"
    ds = build(lmu_root, "MMMU_Pro_V_COT", rows, setting="vision", cot=True)
    predictions = [
        "The slope is positive.\nAnswer: B",  # the text after Answer: holds one capital, B: "B", hit
        "Step 1.\n  Answer: A  ",  # the line's only capital is A: "A", hit
        "Hmm.\nAnswer: none of these",  # no capital: its text, option C, hit (VLMEvalKit at e8e78f05 too)
        "I think A.\nAnswer: C",  # "C": a miss
        None,  # inference failed: a miss
    ]
    result = ds.evaluate(ds.data.assign(prediction=predictions))
    assert result.metrics["Overall"] == pytest.approx(3 / 5)
    assert list(result.per_sample["answer_read"])[:4] == ["B", "A", " none of these", "C"]
    # VLMEvalKit reads the same cut replies: can_infer reads B, A, C (the one option text inside) and C
    assert result.vlmevalkit.metrics["Overall"] == pytest.approx(3 / 5)
    assert result.per_sample["vlmevalkit"].tolist() == ["B", "A", "C", "C", None]


def test_answer_line_follows_cot_postproc():
    # VLMEvalKit's cot_postproc at e8e78f05: the last `Answer:` line, its tail; one distinct capital there: that letter
    assert answer_line("x\nAnswer: B\nmore") == "B"
    assert answer_line("Answer: A. Apple") == "A"
    assert answer_line("Answer: B\nAnswer: C") == "C"  # the last one
    assert answer_line("no answer line") == "no answer line"
    assert answer_line("Answer: 3") == " 3"  # no capital: the text (before June 2026 VLMEvalKit read A here)
    assert answer_line("Answer: B or C") == " B or C"  # two capitals: the text, read by the MCQ rules


def test_judge_is_passed_through_and_sees_the_vision_placeholder(lmu_root):
    ds = build(lmu_root, "MMMU_Pro_V", vision_rows(["B", "A"]), setting="vision")
    judge = FunctionJudge(lambda request: "B", "key")
    result = ds.evaluate(ds.data.assign(prediction=["the second one, clearly", "A"]), judge=judge)
    assert result.metrics["Overall"] == pytest.approx(1.0)
    assert len(judge.asked) == 1 and "Question: placeholder?" in judge.asked[0].prompt
    assert result.per_sample.set_index("index").loc[0, "method"] == "judge"
