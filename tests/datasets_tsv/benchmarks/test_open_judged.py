"""The open-answer judged datasets: VLMEvalKit's prompts from real TSVs, evaluate through the judge, a one-line
refusal without one, and bad rows named with their file."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.benchmarks.open_judged import (
    SHORTQA_SUFFIX,
    EMMADataset,
    LLaVABenchDataset,
    MMVetDataset,
    ShortQADataset,
)
from vlmkit.judging import FunctionJudge

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def mmvet_rows() -> list[dict]:
    return [
        {"index": 0, "image": JPEG, "question": "What is x?", "answer": "-1<AND>-5", "category": "rec,math"},
        {"index": 1, "image": JPEG, "question": "Read the sign.", "answer": "STOP", "category": "ocr"},
    ]


def test_mmvet_prompt_is_the_question_alone_and_scores_through_the_judge(lmu_root):
    write_tsv(lmu_root / "MMVet.tsv", mmvet_rows())
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"] and parts[-1]["value"] == "What is x?"
    predictions = ds.data.assign(prediction=["x = -1", "STOP"])
    judge = FunctionJudge(lambda request: "0.5" if request.prompt.endswith("| x = -1 | ") else "1.0")
    result = ds.evaluate(predictions, judge=judge)
    # (0.5 + 1.0) / 2 x 100
    assert result.primary_value == pytest.approx(75.0) and result.scorer == "mmvet"
    assert "prediction" not in ds.data.columns


def test_without_a_judge_evaluation_is_refused_in_one_line(lmu_root):
    write_tsv(lmu_root / "MMVet.tsv", mmvet_rows())
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    with pytest.raises(DatasetError) as caught:
        ds.evaluate(ds.data.assign(prediction=["a", "b"]))
    message = str(caught.value)
    assert "\n" not in message and "--judge" in message and "MMVet" in message


def test_a_bad_row_is_named_with_its_file(lmu_root):
    rows = mmvet_rows()
    rows[1]["category"] = ""
    write_tsv(lmu_root / "MMVet.tsv", rows)
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"MMVet\.tsv: row index 1, field `category`: missing"):
        ds.evaluate(ds.data.assign(prediction=["a", "b"]), judge=FunctionJudge(lambda request: "1.0"))


def test_llavabench_reviews_against_the_reference(lmu_root):
    rows = [{"index": i, "image": JPEG, "question": f"Q{i}", "caption": "A bus.", "gpt4_ans": f"Ref {i}",
             "category": cat} for i, cat in enumerate(["conv", "detail"])]
    write_tsv(lmu_root / "LLaVABench.tsv", rows)
    ds = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False)
    assert ds.build_prompt(1)[-1]["value"] == "Q1"
    judge = FunctionJudge(lambda request: "8 6\nok" if "[Assistant 1]\nRef 0\n" in request.prompt else "10 10\nok")
    result = ds.evaluate(ds.data.assign(prediction=["P0", "P1"]), judge=judge)
    # model (6 + 10) / 2 = 8, reference (8 + 10) / 2 = 9 -> 8 / 9 x 100
    assert result.primary_value == pytest.approx(800 / 9)
    assert judge.asked[0].prompt.startswith("[Context]\nA bus.\n\n[Question]\nQ0\n")
    korean = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False, language="ko")
    korean.evaluate(korean.data.assign(prediction=["P0", "P1"]), judge=judge)
    assert judge.asked[-1].prompt.startswith("[설명]\nA bus.\n\n[질문]\nQ1\n")
    assert korean.scorer_params()["language"] == "ko"
    with pytest.raises(ValueError, match="review language"):
        LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False, language="fr")


def test_shortqa_prompt_has_vlmevalkits_suffix(lmu_root):
    rows = [{"index": 0, "image": JPEG, "question": "Who is this?", "answer": "Franklin D. Roosevelt"},
            {"index": 1, "image": JPEG, "question": "Which?", "answer": "A", "A": "cat", "B": "dog"}]
    write_tsv(lmu_root / "hle.tsv", rows)
    ds = ShortQADataset("hle", root=lmu_root, progress=False)
    assert ds.build_prompt(0)[-1]["value"] == "Who is this?\nPlease directly provide a short answer to the question. "
    assert SHORTQA_SUFFIX == "\nPlease directly provide a short answer to the question. "
    # the catalog's explicit kwargs give the same prompt
    same = ShortQADataset("hle", root=lmu_root, progress=False, kind="shortqa", suffix=SHORTQA_SUFFIX)
    assert same.build_prompt(0) == ds.build_prompt(0)
    judge = FunctionJudge(lambda request: "[Begin Correctness]yes[End Correctness]")
    result = ds.evaluate(ds.data.assign(prediction=["Roosevelt", "B"]), judge=judge)
    # row 0 judged right; row 1 is a choice row read by rule: B != A
    assert result.per_sample["hit"].tolist() == [True, False] and result.primary_value == pytest.approx(0.5)
    assert len(judge.asked) == 1


def test_emma_prompts(lmu_root):
    rows = [
        {"index": 0, "image": f"['{JPEG}', '{JPEG}']", "context": "Two shapes.", "question": "Which <image 2> is red?",
         "type": "MCQ", "A": "left", "B": "right", "answer": "A"},
        {"index": 1, "image": JPEG, "question": "How many sides?", "type": "Open", "answer": "4"},
    ]
    write_tsv(lmu_root / "EMMA.tsv", rows)
    direct = EMMADataset("EMMA", root=lmu_root, progress=False)
    assert direct.prompt_text(direct.line(0)) == (
        "Two shapes.\n\nWhich <image 2> is red?\n\nA: left\nB: right\n\n\n"
        "Answer with the option's letter from the given choices. Please ensure that your output only contains the "
        "final answer without any additional content (such as intermediate reasoning steps).")
    parts = direct.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "image", "text"]  # image 2 where the text names it
    assert parts[0]["value"] == "Two shapes.\n\nWhich "
    cot = EMMADataset("EMMA", root=lmu_root, progress=False, cot=True)
    assert cot.prompt_text(cot.line(1)) == (
        "How many sides?\n\nAnswer the question using a single word or phrase. Please solve the problem step by step. ")
    assert [p["type"] for p in cot.build_prompt(1)] == ["image", "text"]


def test_mmesci_prompts_are_vlmevalkits(lmu_root):
    """MME-SCI: question (+ the options text of an MCQ row) + the language's instruction; `<image_k>` marks place
    the images; OnlyTxt rows go without images; VisionOnly sends the images and the instruction alone."""
    from datasets_tsv.catalog.registry import build_dataset

    rows = [
        {"index": 0, "image": JPEG, "question": "Look: <image_1> How many atoms?", "options": "A. 1\nB. 2",
         "type": "ImgTxt-MCQ", "answer": "B"},
        {"index": 1, "image": JPEG, "question": "What is 2+2?", "options": "", "type": "OnlyTxt-Open",
         "answer": "4"},
    ]
    write_tsv(lmu_root / "MMESCI_EN.tsv", rows)
    en = build_dataset("MMESCI_EN", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    first = en.build_prompt(0)
    assert [p["type"] for p in first] == ["text", "image", "text"]
    assert first[0]["value"] == "Look:"
    assert first[2]["value"] == "How many atoms?\nA. 1\nB. 2\nPlease write the final answer concisely after " \
                                "'Final Answer: '."
    assert en.build_prompt(1) == [{"type": "text", "value": "What is 2+2?\nPlease write the final answer "
                                                             "concisely after 'Final Answer: '."}]
    write_tsv(lmu_root / "MMESCI_VisionOnly.tsv", rows[:1])
    vision = build_dataset("MMESCI_VisionOnly", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    parts = vision.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["value"] == "请解答图像中给定的问题，并且在 '最终答案: ' 之后简洁地写出你的答案。"
    with pytest.raises(DatasetError, match="MMESCI_EN is scored by an LLM judge"):
        en.evaluate(en.data.assign(prediction="2"))
