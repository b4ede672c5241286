"""The LLaVA-1.5 family (vlm/prompts/llava.py) against VLMEvalKit's `LLaVA` wrapper, written down from its code
(vlmeval/vlm/llava/llava.py: use_custom_prompt / build_prompt): the message it builds for an MCQ row (with a hint,
in Chinese, without options) and MMMU; Y/N and VQA rows keep the dataset's prompt. On a tiny llava-hf model loaded
through from_pretrained: the text the chat template makes of it, and the image size after the processor's resize
and crop, the same for every dataset (the family sets no per-dataset image settings)."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.support.tiny_models import build_tiny_llava
from vlm.presets import model_presets
from vlm.prompts import prompts_for
from vlm.prompts.llava import LLaVAPrompts
from vlmkit.core.contracts import DatasetInfo
from vlmkit.run.resolve import ModelOptions, resolve_model

LLAVA = prompts_for(model_presets()["llava-1.5-7b-hf"].as_kwarg())
IMAGES = ["/data/images/a.jpg", "/data/images/b.jpg"]


def info(name: str, kind: str, images: list[str] | None = None) -> DatasetInfo:
    return DatasetInfo(name=name, kind=kind, images=lambda line: list(images if images is not None else IMAGES[:1]))


def test_mcq_with_a_hint_is_vlmevalkits_message() -> None:
    row = {"question": "What is shown?", "hint": "Look at the sky.", "A": "a cat", "B": "a dog", "C": float("nan")}
    assert LLAVA.build_prompt(row, info("MMBench_DEV_EN", "mcq", IMAGES)) == [
        {"type": "image", "value": "/data/images/a.jpg"},
        {"type": "image", "value": "/data/images/b.jpg"},
        {"type": "text", "value": "Look at the sky.\nWhat is shown?\nA. a cat\nB. a dog\n"
                                  "Answer with the option's letter from the given choices directly."},
    ]


def test_chinese_no_options_and_mmmu() -> None:
    cn = {"question": "图中是什么?", "A": "猫", "B": "狗"}
    assert LLAVA.build_prompt(cn, info("MMBench_DEV_CN", "mcq"))[-1]["value"] == "图中是什么?\nA. 猫\nB. 狗\n请直接回答选项字母。"
    assert LLAVA.build_prompt({"question": "How many?"}, info("X", "mcq"))[-1]["value"] == (
        "How many?\nAnswer the question directly.")
    assert LLAVA.build_prompt({"question": "几个?"}, info("X", "mcq"))[-1]["value"] == "几个?\n请直接回答问题。"
    mmmu = {"question": "<image 1> Which organ?", "A": "heart", "B": "lung", "hint": None}
    assert LLAVA.build_prompt(mmmu, info("MMMU_DEV_VAL", "mcq", IMAGES)) == [
        {"type": "image", "value": IMAGES[0]}, {"type": "image", "value": IMAGES[1]},
        {"type": "text", "value": "<image 1> Which organ?\nA. heart\nB. lung\n"
                                  "Answer with the option's letter from the given choices directly."}]


@pytest.mark.parametrize(("name", "kind", "custom"), [
    ("MMBench_DEV_EN", "mcq", True), ("MMMU_DEV_VAL", "mcq", True), ("LEGO", "mcq", True), ("POPE", "yorn", False),
    ("OCRBench", "vqa", False), ("COCO_VAL", "caption", False),
])
def test_only_multiple_choice_gets_the_models_prompt(name: str, kind: str, custom: bool) -> None:
    assert isinstance(LLAVA, LLaVAPrompts) and LLAVA.use_custom_prompt(info(name, kind)) is custom
    assert LLAVA.processor_kwargs(name) == {}


def test_yorn_has_no_llava_prompt_and_a_blank_question_fails_alone() -> None:
    with pytest.raises(ValueError, match=r"^MMBench_DEV_EN, row index 3, field question: empty$"):
        LLAVA.build_prompt({"index": 3, "question": "  ", "A": "x"}, info("MMBench_DEV_EN", "mcq"))
    with pytest.raises(ValueError, match="no prompt for dataset 'POPE'"):
        LLAVA.build_prompt({"question": "Cat?"}, info("POPE", "yorn"))


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


def test_a_tiny_llava_renders_the_prompt_with_its_template(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = build_tiny_llava(tmp_path_factory.mktemp("tiny_llava_prompts") / "llava")
    model = resolve_model("llava-1.5-7b-hf", ModelOptions(model_path=str(path), max_tokens=2)).build()
    image = tmp_path_factory.mktemp("img") / "wide.png"
    Image.new("RGB", (60, 30), (200, 30, 30)).save(image)
    row = {"question": "Which colour?", "A": "red", "B": "blue"}
    msgs = model.build_prompt(row, info("MyColours", "mcq", [str(image)]))
    assert model.use_custom_prompt(info("MyColours", "mcq")) and not model.use_custom_prompt(info("MyYN", "yorn"))
    conversation = model._conversation(model.prepare(msgs))
    text = model.processor.apply_chat_template(conversation[0], add_generation_prompt=True, tokenize=False)
    assert text == ("USER: <image>\nWhich colour?\nA. red\nB. blue\nAnswer with the option's letter from the given "
                    "choices directly. ASSISTANT:")  # the llava-hf template (VLMEvalKit's llava_v1 one: not applied)
    # CLIP's resize (shortest side) and centre crop, as the checkpoint's processor says (28 px here), for any dataset
    for dataset in ("MyColours", "OCRBench", None):
        assert model.dataset_image_kwargs(dataset) == {}
        inputs = model._model_inputs([conversation], model.dataset_image_kwargs(dataset))
        assert tuple(inputs["pixel_values"].shape) == (1, 3, 28, 28)
    assert model.settings()["prompt_family"] == {"name": "llava", "own_prompts": True}
