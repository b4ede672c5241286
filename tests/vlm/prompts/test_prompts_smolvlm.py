"""SmolVLM's own prompts (vlm.prompts.smolvlm) against VLMEvalKit's SmolVLM wrapper, written down from its code.

VLMEvalKit (vlmeval/vlm/smolvlm.py) keeps the dataset's prompt and rewrites it by the dataset's exact name into a
raw string `<|im_start|>User:...<end_of_utterance>\\nAssistant:` that it hands to the processor with the images.
The expected strings below are typed out from its build_prompt_* functions; vlmkit's parts, rendered by SmolVLM's
chat template and processed, must give the same input ids and pixel values. VLMEvalKit's ` Answer:` prefill
after `Assistant:` is checked apart (vlmkit cannot prefill; `assistant_prefill` says what it would be).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.tiny_models import build_tiny_smolvlm
from vlm.prompts import smolvlm
from vlm.prompts.smolvlm import SmolVLMPrompts
from vlmkit.formats.transformers_chat import to_hf_conversation
from vlmkit.core.contracts import DatasetInfo

CATALOG = Path(__file__).resolve().parents[3] / "datasets_tsv" / "catalog" / "catalog.tsv"
IMG1, IMG2 = "/data/images/a.jpg", "/data/images/b.jpg"


def catalog_kinds() -> dict[str, str]:
    with CATALOG.open(encoding="utf-8") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        return {row["name"]: row["kind"] for row in rows}


KINDS = catalog_kinds()


def info(name: str, images: tuple[str, ...] = (IMG1,)) -> DatasetInfo:
    return DatasetInfo(name, KINDS[name], lambda line: list(images))


def prompts(name: str, line: dict[str, Any], images: tuple[str, ...] = (IMG1,)) -> list:
    family = SmolVLMPrompts({})
    assert family.use_custom_prompt(info(name, images))
    return family.build_prompt(line, info(name, images))


def text(value: str) -> dict[str, str]:
    return {"type": "text", "value": value}


def image(value: str) -> dict[str, str]:
    return {"type": "image", "value": value}


# ------------------------------------------------------------------------------------------ names: VLMEvalKit's lists

VLMEVAL_LISTS = {  # generate_inner's `dataset in [...]` / `dataset == ...`
    "MMBENCH": ["MMBench_DEV_EN", "MMBench_TEST_EN", "MMBench_DEV_CN", "MMBench_TEST_CN", "MMBench", "MMBench_CN",
                "MMBench_DEV_EN_V11", "MMBench_DEV_CN_V11", "MMBench_TEST_EN_V11", "MMBench_TEST_CN_V11",
                "MMBench_V11", "MMBench_CN_V11", "CCBench"],
    "MMMU": ["MMMU_DEV_VAL", "MMMU_TEST"],
    "MATHVISTA": ["MathVista_MINI"],
    "CHARTQA": ["ChartQA_TEST"],
    "DOCVQA": ["DocVQA_VAL", "DocVQA_TEST"],
    "TEXTVQA": ["TextVQA_VAL", "TextVQA_TEST"],
    "BRIEF": ["MME", "MMVet", "OCRVQA_TEST", "OCRVQA_TESTCORE", "InfoVQA_VAL", "InfoVQA_TEST", "OCRBench"],
    "YES_NO": ["HallusionBench"],
    "PURE_MCQ": ["MMStar", "SEEDBench_IMG", "AI2D_TEST", "ScienceQA_VAL", "ScienceQA_TEST"],
}  # fmt: skip


@pytest.mark.parametrize("attr", sorted(VLMEVAL_LISTS))
def test_name_sets_are_vlmevalkit_names_in_the_catalog(attr: str) -> None:
    listed = getattr(smolvlm, attr)
    assert listed <= set(KINDS), f"not catalog names: {sorted(listed - set(KINDS))}"
    assert listed == set(VLMEVAL_LISTS[attr]) & set(KINDS)


def test_short_answer_prompts_are_the_image_vqa_benchmarks() -> None:
    """The benchmarks whose VLMEvalKit prompt (ImageVQADataset) carries the short-answer line: all vqa-kind."""
    assert smolvlm.SHORT_ANSWER_PROMPT <= smolvlm.CUSTOM
    assert {KINDS[n] for n in smolvlm.SHORT_ANSWER_PROMPT} == {"vqa"}


def test_other_benchmarks_keep_the_dataset_prompt() -> None:
    assert not SmolVLMPrompts({}).use_custom_prompt(info("POPE"))
    assert not SmolVLMPrompts({}).use_custom_prompt(info("MMBench_DEV_KO"))
    assert not SmolVLMPrompts({}, own_prompts=False).use_custom_prompt(info("MMBench_DEV_EN"))


# -------------------------------------------------------------------------------------- the prompts, MCQ/YN/VQA/MMMU

MCQ_LINE = {"index": 1, "question": "What animal is shown?", "hint": "It is a pet.", "A": "cat", "B": "dog"}
# VLMEvalKit's raw strings, without the ` Answer:` it appends after `Assistant:` where noted.
CASES = {
    "mmbench": ("MMBench_DEV_EN", MCQ_LINE, (IMG1,),
                ("<|im_start|>User:<image>Question: What animal is shown?\nHint: It is a pet.\nChoices:\nA. cat\n"
                "B. dog\nAnswer with a letter.<end_of_utterance>\nAssistant:"), " Answer:"),
    "pure_mcq": ("MMStar", MCQ_LINE, (IMG1,),
                 ("<|im_start|>User:<image>Hint: It is a pet.\nQuestion: What animal is shown?\nChoices:\nA. cat\n"
                 "B. dog\nAnswer with the letter.<end_of_utterance>\nAssistant:"), " Answer:"),
    "yes_no": ("HallusionBench", {"index": 2, "question": "Is there a dog?  "}, (IMG1,),
               "<|im_start|>User:<image>Is there a dog?\nAnswer yes or no.<end_of_utterance>\nAssistant:", ""),
    "brief_yn": ("MME", {"index": 3, "question": "Is there a dog? Please answer yes or no."}, (IMG1,),
                 ("<|im_start|>User:<image>Is there a dog? Please answer yes or no.\nGive a very brief answer."
                 "<end_of_utterance>\nAssistant:"), ""),
    "brief_vqa": ("InfoVQA_VAL", {"index": 4, "question": "Which year?"}, (IMG1,),
                  ("<|im_start|>User:<image>Which year?\nAnswer the question using a single word or phrase.\n"
                  "Give a very brief answer.<end_of_utterance>\nAssistant:"), ""),
    "ocrbench": ("OCRBench", {"index": 5, "question": "What is written?"}, (IMG1,),
                 ("<|im_start|>User:<image>What is written?\nGive a very brief answer.<end_of_utterance>\n"
                  "Assistant:"), ""),
    "docvqa": ("DocVQA_VAL", {"index": 6, "question": "What is the date?"}, (IMG1,),
               ("<|im_start|>User:<image>Give a short and terse answer to the following question. Do not paraphrase "
               "or reformat the text you see in the image. Do not include any full stops. Just give the answer "
               "without additional explanation. Question: What is the date?\nAnswer the question using a single "
               "word or phrase.<end_of_utterance>\nAssistant:"), ""),
    "chartqa": ("ChartQA_TEST", {"index": 7, "question": "Peak value?"}, (IMG1,),
                ("<|im_start|>User:<image>For the question below, follow the following instructions:\n"
                "-The answer should contain as few words as possible.\n"
                "-Don’t paraphrase or reformat the text you see in the image.\n"
                "-Answer a binary question with Yes or No.\n"
                "-When asked to give a numerical value, provide a number like 2 instead of Two.\n"
                "-If the final answer has two or more items, provide it in the list format like [1, 2].\n"
                "-When asked to give a ratio, give out the decimal value like 0.25 instead of 1:4.\n"
                "-When asked to give a percentage, give out the whole value like 17 instead of decimal like 0.17%.\n"
                "-Don’t include any units in the answer.\n"
                "-Do not include any full stops at the end of the answer.\n"
                "-Try to include the full label from the graph when asked about an entity.\n"
                "Question: Peak value?\nAnswer the question using a single word or phrase.<end_of_utterance>\n"
                "Assistant:"), ""),
    "textvqa": ("TextVQA_VAL", {"index": 8, "question": "What brand?"}, (IMG1,),
                ("<|im_start|>User:<image>Answer the following question about the image using as few words as "
                "possible. Follow these additional instructions:\n-Always answer a binary question with Yes or No.\n"
                "-When asked what time it is, reply with the time seen in the image.\n"
                "-Do not put any full stops at the end of the answer.\n"
                "-Do not put quotation marks around the answer.\n"
                "-An answer with one or two words is favorable.\n"
                "-Do not apply common sense knowledge. The answer can be found in the image.\n"
                "Question: What brand?\nAnswer the question using a single word or phrase.<end_of_utterance>\n"
                "Assistant:"), ""),
    "mathvista": ("MathVista_MINI", {"index": 9, "question": "Hint: Answer with a letter.\nQuestion: Which is larger?"
                                                            "\nChoices:\n(A) 3\n(B) 5"}, (IMG1,),
                  ("<|im_start|>User:<image>Answer with a letter.\nQuestion: Which is larger?\nChoices:\nA. 3\nB. 5"
                  "<end_of_utterance>\nAssistant:"), " Answer:"),
    "mmmu": ("MMMU_DEV_VAL", {"index": 10, "question": "Compare <image 1> and <image 2>.", "A": "same",
                              "B": "different"}, (IMG1, IMG2),
             ("<|im_start|>User: Question: <image 1>:<image>\n<image 2>:<image>\nCompare <image 1> and <image 2> .\n"
             "Choices:\nA. same\nB. different\nAnswer with the letter.<end_of_utterance>\nAssistant:"), " Answer:"),
    "mmmu_open": ("MMMU_DEV_VAL", {"index": 11, "question": "How many cells in <image 1>?"}, (IMG1,),
                  ("<|im_start|>User: Question: <image 1>:<image>\nHow many cells in <image 1> ?"
                  "<end_of_utterance>\nAssistant:"), ""),
}  # fmt: skip


def test_literal_parts_mcq_yn_vqa_mmmu() -> None:
    assert prompts(*CASES["mmbench"][:3]) == [
        image(IMG1),
        text("Question: What animal is shown?\nHint: It is a pet.\nChoices:\nA. cat\nB. dog\nAnswer with a letter."),
    ]
    assert prompts(*CASES["yes_no"][:3]) == [image(IMG1), text("Is there a dog?\nAnswer yes or no.")]
    assert prompts(*CASES["ocrbench"][:3]) == [image(IMG1), text("What is written?\nGive a very brief answer.")]
    assert prompts(*CASES["mmmu"][:3]) == [
        text("Question: <image 1>:"), image(IMG1), text("\n<image 2>:"), image(IMG2),
        text("\nCompare <image 1> and <image 2> .\nChoices:\nA. same\nB. different\nAnswer with the letter."),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def processor(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from vlm.local.processors import load_processor

    return load_processor(str(build_tiny_smolvlm(tmp_path_factory.mktemp("tiny_smolvlm") / "smolvlm")))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("smol_images")
    out = {}
    for name, size, colour in [(IMG1, (90, 50), (200, 30, 30)), (IMG2, (40, 70), (20, 30, 200))]:
        path = root / Path(name).name
        Image.new("RGB", size, colour).save(path)
        out[name] = str(path)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_processor_inputs_equal_vlmevalkit(case: str, processor: Any, files: dict[str, str]) -> None:
    name, line, images, vlmeval, prefill = CASES[case]
    paths = tuple(files[i] for i in images)
    parts = prompts(name, line, paths)
    conversation = to_hf_conversation(parts)
    rendered = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
    assert rendered == vlmeval
    ours = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True, return_dict=True,
                                         return_tensors="pt")  # fmt: skip
    pil = [Image.open(p).convert("RGB") for p in paths]
    theirs = processor(text=vlmeval, images=pil, return_tensors="pt")
    assert ours["input_ids"].tolist() == theirs["input_ids"].tolist()
    assert tuple(ours["pixel_values"].shape) == tuple(theirs["pixel_values"].shape)  # same image sizes after resizing
    assert bool((ours["pixel_values"] == theirs["pixel_values"]).all())
    assert SmolVLMPrompts({}).assistant_prefill(parts, info(name, paths)) == prefill


def test_mmmu_reference_to_a_missing_image_fails_naming_the_row() -> None:
    with pytest.raises(ValueError, match=r"MMMU_DEV_VAL, index 3: <image 2> but the row has 1 image"):
        prompts("MMMU_DEV_VAL", {"index": 3, "question": "See <image 2>.", "A": "x", "B": "y"})
