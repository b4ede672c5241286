"""The Qwen2-VL family (vlm/prompts/qwen2_vl.py) against VLMEvalKit's Qwen2VLChat, written down from its code
(vlmeval/vlm/qwen2_vl/prompt.py, model.py): the message lists it builds for MCQ (with a hint), Y/N, VQA and MMMU
rows, which datasets get them, the OCRBench image resolution on a tiny Qwen2-VL loaded through from_pretrained, and
a `vlmkit run` whose predictions carry the model's prompt, or the dataset's under `--prompt-style dataset`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from datasets_tsv.catalog.entries import catalog_rows
from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.support.run_helpers import vlmkit_cli
from tests.support.tiny_models import build_tiny_qwen2_vl
from vlm.presets import model_presets
from vlm.prompts import prompts_for
from vlm.prompts.qwen2_vl import (
    LEGO_DATASETS,
    MMMU_DATASETS,
    VQA_EXCLUDED,
    YORN_DATASETS,
    Qwen2VLPrompts,
)
from vlmkit.core.contracts import DatasetInfo
from vlmkit.run.resolve import ModelOptions, resolve_model

IMAGES = ["/data/images/a.jpg", "/data/images/b.jpg"]
QWEN2 = prompts_for(model_presets()["Qwen2-VL-7B-Instruct"].as_kwarg())
QWEN25 = prompts_for(model_presets()["Qwen2.5-VL-7B-Instruct"].as_kwarg())


def info(name: str, kind: str, images: list[str] | None = None) -> DatasetInfo:
    return DatasetInfo(name=name, kind=kind, images=lambda line: list(images if images is not None else IMAGES[:1]))


MCQ_ROW = {"index": 1, "question": "What is shown?", "hint": "Look at the sky.", "A": "a cat", "B": "a dog",
           "C": float("nan"), "answer": "A"}


def test_mcq_with_a_hint_is_vlmevalkits_message() -> None:
    assert QWEN2.build_prompt(MCQ_ROW, info("MMBench_DEV_EN", "mcq", IMAGES)) == [
        {"type": "image", "value": "/data/images/a.jpg"},
        {"type": "image", "value": "/data/images/b.jpg"},
        {"type": "text", "value": "Hint: Look at the sky.\nQuestion: What is shown?\nOptions:\nA. a cat\nB. a dog\n"
                                  "Please select the correct answer from the options above."},
    ]


def test_mcq_chinese_and_without_options_or_hint() -> None:
    row = {"question": "图中是什么?", "hint": None, "A": "猫", "B": "狗"}
    assert QWEN2.build_prompt(row, info("MMBench_DEV_CN", "mcq"))[-1]["value"] == (
        "Question: 图中是什么?\nOptions:\nA. 猫\nB. 狗\n请直接回答选项字母。")
    assert QWEN2.build_prompt({"question": "How many? "}, info("X", "mcq"))[-1]["value"] == "Question: How many?"


def test_yorn_vqa_and_mmmu_are_vlmevalkits_messages() -> None:
    image = {"type": "image", "value": IMAGES[0]}
    row = {"question": "Is there a cat in the image?", "answer": "Yes"}
    assert QWEN2.build_prompt(row, info("POPE", "yorn")) == [
        image, {"type": "text", "value": "Is there a cat in the image? Please answer yes or no."}]
    vqa = {"question": "What is written on the sign?", "answer": "STOP"}
    assert QWEN2.build_prompt(vqa, info("TextVQA_VAL", "vqa")) == [
        image, {"type": "text", "value": "What is written on the sign?\n"
                                         "Please try to answer the question with short words or phrases if possible."}]
    mmmu = {"question": "<image 1> Which organ is shown?", "A": "heart", "B": "lung", "hint": float("nan")}
    assert QWEN2.build_prompt(mmmu, info("MMMU_DEV_VAL", "mcq", IMAGES)) == [
        {"type": "image", "value": IMAGES[0]}, {"type": "image", "value": IMAGES[1]},
        {"type": "text", "value": "Question: <image 1> Which organ is shown?\nOptions:\nA. heart\nB. lung\n"
                                  "Please select the correct answer from the options above."}]
    # MMMU never switches to the Chinese instruction, as VLMEvalKit's _build_mmmu_prompt
    cn = {"question": "哪个?", "A": "甲", "B": "乙"}
    assert QWEN2.build_prompt(cn, info("MMMU_TEST", "mcq"))[-1]["value"].endswith("Please select the correct answer "
                                                                                   "from the options above.")


@pytest.mark.parametrize(
    ("name", "kind", "custom"),
    [
        ("MMBench_DEV_EN", "mcq", True), ("MyOwnMCQ", "mcq", True), ("LEGO", "mcq", False),
        ("LEGO_circular", "mcq", False), ("MMMU_DEV_VAL", "mcq", True), ("MMMU_TEST", "mcq", True),
        ("HallusionBench", "yorn", True), ("POPE", "yorn", True), ("MME", "yorn", False), ("MyYN", "yorn", False),
        ("OCRBench", "vqa", True), ("MathVista_MINI", "vqa", True), ("MMVet", "vqa", False),
        ("ChartMuseum", "vqa", False), ("COCO_VAL", "caption", False), ("hle", "shortqa", False),
        ("MVBench", "video", False),
    ],
)
def test_which_datasets_get_the_models_prompt(name: str, kind: str, custom: bool) -> None:
    assert QWEN2.use_custom_prompt(info(name, kind)) is custom
    assert QWEN25.use_custom_prompt(info(name, kind)) is False  # config.py: Qwen2.5-VL use_custom_prompt=False


def test_names_written_out_are_catalog_names_and_cover_the_substring() -> None:
    catalog = set(catalog_rows())
    for name in (*LEGO_DATASETS, *MMMU_DATASETS, *YORN_DATASETS, "MMVet", "OCRBench"):
        assert name in catalog, name
    # VLMEvalKit tests `'LEGO' in dataset`: every catalog name it would match is written out
    assert {name for name in catalog if "LEGO" in name} == LEGO_DATASETS
    # VLMEvalKit's exact names (prompt.py: `dataset not in {...}`), catalog names or not
    assert VQA_EXCLUDED == {"MMVet", "ChartQAPro", "ChartQAPro_CoT", "ChartQAPro_PoT", "ChartMuseum"}


def test_the_family_is_built_from_the_preset_and_names_ocrbench_only() -> None:
    assert isinstance(QWEN2, Qwen2VLPrompts) and QWEN2.own_prompts and not QWEN25.own_prompts
    assert QWEN2.processor_kwargs("OCRBench") == {"min_pixels": 78400} == QWEN25.processor_kwargs("OCRBench")
    assert QWEN2.processor_kwargs("OCRBench_MINI") == {} and QWEN2.processor_kwargs(None) == {}
    assert prompts_for(model_presets()["gemma-3-4b-it"].as_kwarg()) is None
    with pytest.raises(ValueError, match="no prompt for dataset 'COCO_VAL'"):
        QWEN2.build_prompt({"question": "?"}, info("COCO_VAL", "caption"))
    # a row with no question fails alone, in one line naming dataset, row and field (the runner records it)
    with pytest.raises(ValueError, match=r"^POPE, row index 7, field question: empty$"):
        QWEN2.build_prompt({"index": 7, "question": float("nan")}, info("POPE", "yorn"))


# ------------------------------------------------------------------------------------------ a loaded model


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny_prompts") / "qwen2_vl")


def _grid(model: Any, dataset: str | None, image: Path) -> list[int]:
    conversation = model._conversation(model.prepare([str(image), "Read the text."]))
    return model._model_inputs([conversation], model.dataset_image_kwargs(dataset))["image_grid_thw"][0].tolist()


def test_ocrbench_images_get_vlmevalkits_min_pixels_for_that_call_only(tiny_qwen: Path, tmp_path: Path) -> None:
    model = resolve_model("Qwen2-VL-2B-Instruct", ModelOptions(model_path=str(tiny_qwen), max_tokens=2)).build()
    image = tmp_path / "small.png"
    Image.new("RGB", (40, 30), (20, 20, 200)).save(image)
    # OCRBench: min_pixels 10*10*28*28 = 78400 (max_pixels the preset's): 40x30 scaled by sqrt(78400 / 1200),
    # each side rounded up to a multiple of 28: 336 x 252 px = 24 x 18 patches of 14 px.
    assert model.dataset_image_kwargs("OCRBench") == {"size": {"shortest_edge": 78400, "longest_edge": 12845056}}
    assert _grid(model, "OCRBench", image) == [1, 18, 24]
    # any other dataset, and the call after OCRBench: the preset's min_pixels 1280*28*28 (1176 x 868 px)
    assert model.dataset_image_kwargs("MMBench_DEV_EN") == {}
    assert _grid(model, "MMBench_DEV_EN", image) == [1, 62, 84] == _grid(model, None, image)
    assert model.pixel_limits == {"min_pixels": 1003520, "max_pixels": 12845056}
    # the whole generate path: OCRBench's prompt is shorter by the image tokens (18*24/4 vs 62*84/4 merged tokens)
    on_ocr = model.generate_full([str(image), "Read the text."], dataset="OCRBench").usage.input_tokens
    elsewhere = model.generate_full([str(image), "Read the text."], dataset="TextVQA_VAL").usage.input_tokens
    assert elsewhere - on_ocr == 62 * 84 // 4 - 18 * 24 // 4
    settings = model.settings()
    assert settings["preset"]["prompt_style"] == "qwen2vl"
    assert settings["prompt_family"] == {"name": "qwen2vl", "own_prompts": True,
                                         "dataset_image_settings": {"OCRBench": {"min_pixels": 78400}}}
    json.dumps(settings)
    # Python users ask the model itself, with a DatasetInfo (or a dataset object), never a bare name
    assert model.use_custom_prompt(info("POPE", "yorn")) and not model.use_custom_prompt(info("MME", "yorn"))
    assert model.build_prompt({"question": "Cat?"}, info("POPE", "yorn"))[-1]["value"] == "Cat? Please answer yes or no."
    with pytest.raises(TypeError, match="DatasetInfo"):
        model.use_custom_prompt("POPE")


# ------------------------------------------------------------------------------------------ vlmkit run


def _mcq_tsv(path: Path) -> Path:
    rows = [{"index": i, "image": b64(image_bytes(colour)), "question": f"[{i}] Which colour is the picture?",
             "hint": "It is one colour.", "A": "red", "B": "blue", "answer": "A" if colour == "red" else "B"}
            for i, colour in enumerate(("red", "blue"))]
    return write_tsv(path, rows)


def test_vlmkit_run_sends_the_models_prompt_and_dataset_style_the_datasets(
    lmu_root: Path, tmp_path: Path, tiny_qwen: Path
) -> None:
    _mcq_tsv(lmu_root / "MyColours.tsv")
    prompts: dict[str, list[str]] = {}
    for style in ("model", "dataset"):
        work = tmp_path / style
        result = vlmkit_cli("run", "--data", "MyColours", "--model", "Qwen2-VL-2B-Instruct", "--model-path",
                            str(tiny_qwen), "--max-tokens", "2", "--prompt-style", style, "--work-dir", str(work),
                            env={"LMUData": str(lmu_root), "OMP_NUM_THREADS": "1"})
        assert result.returncode == 0, result.stderr
        out = work / "Qwen2-VL-2B-Instruct" / "MyColours"
        records = [json.loads(line) for line in (out / "predictions.jsonl").open()]
        assert [r["error"] for r in records] == [None, None]
        content = records[0]["prompt"][0]["content"]
        assert content[0]["type"] == "image" and Path(content[0]["value"]).is_file()
        prompts[style] = [part["value"] for r in records for part in r["prompt"][0]["content"] if part["type"] == "text"]
        results = json.loads((out / "results.json").read_text())
        assert results["model"]["settings"]["preset"]["prompt_style"] == "qwen2vl"
        assert results["model"]["settings"]["prompt_family"]["name"] == "qwen2vl"
        assert results["run"]["prompt_style"] == style
        assert results["run"]["prompts_from"] == ("model (Qwen2VLPrompts)" if style == "model" else "dataset")
    assert prompts["model"][0] == ("Hint: It is one colour.\nQuestion: [0] Which colour is the picture?\nOptions:\n"
                                   "A. red\nB. blue\nPlease select the correct answer from the options above.")
    # the dataset's prompt: VLMEvalKit's ImageMCQDataset text, which keeps its trailing " \n"
    assert prompts["dataset"][0] == ("Hint: It is one colour.\nQuestion: [0] Which colour is the picture?\nOptions:\n"
                                     "A. red\nB. blue\nPlease select the correct answer from the options above. \n")
