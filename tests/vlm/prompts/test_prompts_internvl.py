"""InternVL3's own prompts and tiles (vlm.prompts.internvl) against VLMEvalKit's InternVLChat, as its code builds them.

VLMEvalKit (vlmeval/vlm/internvl/internvl_chat.py + utils.py, version V2.0 as config.py runs InternVL3): build_prompt
writes one text part then the images; generate_v2 turns that into `<image>\\n{text}` (one image) or
`Image-1: <image>\\nImage-2: <image>\\n{text}` (several) and tiles each image with load_image(max_num=set_max_num).
The expected texts below are VLMEvalKit's strings typed out by hand; the tile counts come from its
dynamic_preprocess, transcribed in `vlmeval_tiles`.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.tiny_models import build_tiny_internvl
from tests.vlm.prompts.catalog_infos import catalog_info
from vlm.prompts import internvl
from vlm.prompts.internvl import InternVLPrompts
from vlmkit.formats.transformers_chat import to_hf_conversation
from vlmkit.core.contracts import DatasetInfo

CATALOG = Path(__file__).resolve().parents[3] / "datasets_tsv" / "catalog" / "catalog.tsv"
IMG1, IMG2 = "/data/images/a.jpg", "/data/images/b.jpg"


def catalog_column(column: str) -> dict[str, str]:
    with CATALOG.open(encoding="utf-8") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        return {row["name"]: row[column] for row in rows}


KINDS = catalog_column("kind")
TYPES = catalog_column("vlmevalkit_type")  # VLMEvalKit's TYPE of each catalog benchmark


def info(name: str, kind: str | None = None, images: tuple[str, ...] = (IMG1,)) -> DatasetInfo:
    """A catalog benchmark's DatasetInfo as a run makes it (its VLMEvalKit TYPE included); with a kind, a dataset
    outside the catalog (typed by that kind)."""
    if kind is None:
        return catalog_info(name, images)
    return DatasetInfo(name, kind, lambda line: list(images))


def prompts(name: str, line: dict[str, Any], images: tuple[str, ...] = (IMG1,), kind: str | None = None) -> list:
    family = InternVLPrompts({})
    ds = info(name, kind, images)
    assert family.use_custom_prompt(ds)
    return family.build_prompt(line, ds)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "value": value}


def image(value: str) -> dict[str, str]:
    return {"type": "image", "value": value}


# ------------------------------------------------------------------------------------------- the data is VLMEvalKit's


def listinstr(words: list[str], name: str) -> bool:
    return any(w in name for w in words)


def vqa_typed(name: str, kind: str) -> bool:
    return TYPES[name] == "VQA"


SHORT_LIST = ["OCRVQA", "TextVQA", "ChartQA", "DocVQA", "InfoVQA", "OCRBench", "DUDE", "SLIDEVQA", "GQA",
              "MMLongBench_DOC"]  # fmt: skip
PLAIN_LIST = ["MathVista", "MathVision", "VCR", "MTVQA", "MMVet", "MMDU", "CRPE", "MIA-Bench", "MM-Math", "DynaMath",
              "QSpatial", "WeMath", "LogicVista", "MM-IFEval", "ChartMimic", "MMReason"]  # fmt: skip
RES_12 = ["ChartQA_TEST", "MMMU_DEV_VAL", "MMMU_TEST", "MME-RealWorld", "VCR_EN", "VCR_ZH", "OCRVQA", "BMMR"]
RES_18 = ["DocVQA_VAL", "DocVQA_TEST", "DUDE", "MMLongBench_DOC", "SLIDEVQA"]
RES_24 = ["InfoVQA_VAL", "InfoVQA_TEST", "OCRBench", "HRBench4K", "HRBench8K"]
EXPECTED_SETS = {
    "DATASET_PROMPT": lambda n, k: n in {"atomic_dataset", "electro_dataset", "mechanics_dataset", "optics_dataset",
                                         "quantum_dataset", "statistics_dataset"}
    or listinstr(["MMDU", "MME-RealWorld", "MME-RealWorld-CN", "WeMath_COT", "MMAlignBench", "ChartQAPro",
                  "ChartMuseum", "MMSIVideo_U50", "MMSIVideo_SC"], n)
    or (k == "mcq" and "LEGO" in n),
    "YORN_SHORT": lambda n, k: k == "yorn" and listinstr(["MME"], n),
    "YORN_YES_NO": lambda n, k: k == "yorn" and not listinstr(["MME"], n) and listinstr(["HallusionBench", "AMBER"], n),
    "VQA_DETAIL": lambda n, k: vqa_typed(n, k) and listinstr(["LLaVABench", "WildVision"], n),
    "VQA_MATHVERSE": lambda n, k: vqa_typed(n, k) and not listinstr(["LLaVABench", "WildVision", *SHORT_LIST], n)
    and listinstr(["MathVerse"], n),
    "VQA_PLAIN": lambda n, k: vqa_typed(n, k)
    and not listinstr(["LLaVABench", "WildVision", *SHORT_LIST, "MathVerse"], n) and listinstr(PLAIN_LIST, n),
    "MUIRBENCH": lambda n, k: listinstr(["MUIRBench"], n),
    "TILES_12": lambda n, k: k != "video" and listinstr(RES_12, n),
    "TILES_18": lambda n, k: k != "video" and not listinstr(RES_12, n) and listinstr(RES_18, n),
    "TILES_24": lambda n, k: k != "video" and not listinstr(RES_12 + RES_18, n) and listinstr(RES_24, n),
}  # fmt: skip


@pytest.mark.parametrize("attr", sorted(EXPECTED_SETS))
def test_name_sets_are_the_catalog_names_vlmevalkit_matches(attr: str) -> None:
    listed = getattr(internvl, attr)
    assert listed <= set(KINDS), f"not catalog names: {sorted(listed - set(KINDS))}"
    expected = {name for name, kind in KINDS.items() if EXPECTED_SETS[attr](name, kind)}
    assert listed == expected


# VLMEvalKit's class TYPE for catalog rows whose vlmkit kind differs (its dataset classes' TYPE attributes, read from
# its code by hand): the catalog's column says the same, and the family prompts by it.
VLMEVAL_TYPES = {
    "LogicVista": "VQA", "CRPE_EXIST": "VQA", "CRPE_RELATION": "VQA", "ERQA": "VQA", "MMESCI_EN": "VQA",
    "MMESCI_ZH": "VQA", "MMESCI_FR": "VQA", "MMESCI_ES": "VQA", "MMESCI_JA": "VQA", "MMESCI_VisionOnly": "VQA",
    "VLMBlind": "MCQ", "BMMR": "BMMR", "BMMR_mini": "BMMR", "OlympiadBench": "VQA_ex_prompt",
    "OlympiadBench_EN": "VQA_ex_prompt", "OlympiadBench_CN": "VQA_ex_prompt", "MMMU_Pro_10c": "MCQ_MMMU_Pro",
    "MMMU_Pro_10c_COT": "MCQ_MMMU_Pro", "MMMU_Pro_V": "MCQ_MMMU_Pro", "MMMU_Pro_V_COT": "MCQ_MMMU_Pro",
    "MME-RealWorld": "MMERealWorld", "MME-RealWorld-Lite": "MMERealWorld", "RefSpatial": "VQA",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VLMEVAL_TYPES))
def test_the_type_is_vlmevalkits(name: str) -> None:
    assert TYPES[name] == VLMEVAL_TYPES[name]
    line = {"index": 1, "question": "Which one?", "A": "x", "B": "y"}
    family = InternVLPrompts({})
    if not family.use_custom_prompt(info(name)):
        assert name.startswith(("MME-RealWorld", "MMESCI"))  # the dataset's prompt (listed / forced)
        return
    text = family.build_prompt(line, info(name))[-1]["value"]
    if VLMEVAL_TYPES[name] == "MCQ":
        assert text == "Which one?\nA. x\nB. y\nAnswer with the option's letter from the given choices directly."
    elif VLMEVAL_TYPES[name] == "VQA":
        assert text in ("Which one?", "Which one?\nAnswer the question using a single word or phrase.")
    else:  # BMMR, VQA_ex_prompt, MCQ_MMMU_Pro: none of InternVL's types, the question alone
        assert text == "Which one?"


# ----------------------------------------------------------------------------------------------------- the prompts


def test_mcq_with_hint() -> None:
    line = {"index": 1, "question": "What animal is shown?", "hint": "It is a pet.", "A": "cat", "B": "dog", "C": None}
    assert prompts("MMBench_DEV_EN", line) == [
        image(IMG1),
        text("It is a pet.\nWhat animal is shown?\nA. cat\nB. dog\n"
             "Answer with the option's letter from the given choices directly."),
    ]  # fmt: skip


def test_mcq_chinese_and_without_options() -> None:
    line = {"index": 2, "question": "图中是什么动物？", "hint": float("nan"), "A": "猫", "B": "狗"}
    assert prompts("MMBench_DEV_CN", line)[-1] == text("图中是什么动物？\nA. 猫\nB. 狗\n请直接回答选项字母。")
    no_options = prompts("MMStar", {"index": 3, "question": "How many?"})
    assert no_options[-1] == text("How many?\nAnswer the question directly.")


@pytest.mark.parametrize("name, expected", [
    ("MME", "Is there a dog? Answer the question using a single word or phrase."),
    ("HallusionBench", "Is there a dog? Please answer yes or no. Answer the question using a single word or phrase."),
    ("AMBER", "Is there a dog? Please answer yes or no. Answer the question using a single word or phrase."),
    ("POPE", "Is there a dog?"),
])  # fmt: skip
def test_yes_no(name: str, expected: str) -> None:
    assert prompts(name, {"index": 1, "question": "Is there a dog?"}) == [image(IMG1), text(expected)]


@pytest.mark.parametrize("name, expected", [
    ("ChartQA_TEST", "What is the peak?\nAnswer the question using a single word or phrase."),
    ("TextVQA_VAL", "What is the peak?\nAnswer the question using a single word or phrase."),
    ("MathVista_MINI", "What is the peak?"),
    ("MMVet", "What is the peak?"),
    ("LogicVista", "What is the peak?"),  # VLMEvalKit's TYPE is VQA though the catalog's kind is mcq
    ("LLaVABench", "What is the peak?\nAnswer this question in detail."),
    ("BMMR", "What is the peak?"),  # TYPE 'BMMR': the question alone
    ("MMMU_Pro_10c", "What is the peak?"),  # TYPE 'MCQ_MMMU_Pro': the question alone, options not shown
    ("ERQA", "What is the peak?\nAnswer the question using a single word or phrase."),  # TYPE 'VQA', kind mcq
])  # fmt: skip
def test_vqa(name: str, expected: str) -> None:
    assert prompts(name, {"index": 1, "question": "What is the peak?", "A": "x"}) == [image(IMG1), text(expected)]


def test_mathverse_softens_its_instruction() -> None:
    question = "Look at the figure, please directly answer the question and provide the final value."
    assert prompts("MathVerse_MINI", {"index": 1, "question": question})[-1] == text(
        "Look at the figure, please provide the final value."
    )


def test_mmmu_images_numbered_before_the_text() -> None:
    line = {"index": 7, "question": "Compare <image 1> and <image 2>.", "A": "same", "B": "different"}
    assert prompts("MMMU_DEV_VAL", line, images=(IMG1, IMG2)) == [
        text("Image-1: "), image(IMG1), text("Image-2: "), image(IMG2),
        text("Compare <image 1> and <image 2>.\nA. same\nB. different\n"
             "Answer with the option's letter from the given choices directly."),
    ]  # fmt: skip


def test_muirbench_image_tags_become_numbered() -> None:
    line = {"index": 1, "question": "Which is older? <image> <image>", "A": "left", "B": "right"}
    got = prompts("MUIRBench", line, images=(IMG1, IMG2))
    assert got == [
        text("Image-1: "), image(IMG1), text("Image-2: "), image(IMG2),
        text("Which is older? \nA. left\nB. right\nAnswer with the option's letter from the given choices directly."),
    ]  # fmt: skip
    line = {"index": 2, "question": "Is <image> like <image>?", "A": "yes", "B": "no"}
    assert prompts("MUIRBench", line, images=(IMG1, IMG2))[-1]["value"].startswith("Is <Image-1> like <Image-2>?\n")


def test_no_image_and_other_kinds() -> None:
    assert prompts("MMStar", {"index": 1, "question": "Q?", "A": "a"}, images=()) == [
        text("Q?\nA. a\nAnswer with the option's letter from the given choices directly.")
    ]
    assert prompts("COCO_VAL", {"index": 1, "question": "Describe."}) == [image(IMG1), text("Describe.")]


@pytest.mark.parametrize("name", ["MMDU", "MME-RealWorld-Lite", "WeMath_COT", "LEGO", "atomic_dataset", "Video-MME",
                                  "MMESCI_EN", "VSI-Bench"])
def test_benchmarks_that_keep_the_dataset_prompt(name: str) -> None:
    assert not InternVLPrompts({}).use_custom_prompt(info(name))
    assert not InternVLPrompts({}, own_prompts=False).use_custom_prompt(info("MMBench_DEV_EN"))
    assert not InternVLPrompts({}).use_custom_prompt(info("SSI_Bench", "mcq"))  # `dataset in ["SSI_Bench"]`


def test_empty_question_fails_naming_the_row() -> None:
    with pytest.raises(ValueError, match=r"MME, index 9: field 'question' is empty"):
        prompts("MME", {"index": 9, "question": "  "})


@pytest.mark.parametrize("name, tiles", [
    ("MMBench_DEV_EN", 6), (None, 6), ("ChartQA_TEST", 12), ("MMMU_DEV_VAL", 12), ("VCR_ZH_HARD_100", 12),
    ("DocVQA_VAL", 18), ("OCRBench", 24), ("InfoVQA_TEST", 24), ("HRBench8K", 24),
])  # fmt: skip
def test_processor_kwargs(name: str | None, tiles: int) -> None:
    assert InternVLPrompts({}).processor_kwargs(name) == {"crop_to_patches": True, "min_patches": 1,
                                                           "max_patches": tiles}  # fmt: skip


# ------------------------------------------------------------------------------------ processor inputs (tiny model)


def vlmeval_tiles(width: int, height: int, max_num: int, image_size: int) -> int:
    """VLMEvalKit's dynamic_preprocess(min_num=1, use_thumbnail=True): the number of tiles load_image returns."""
    ratios = sorted(
        {(i, j) for n in range(1, max_num + 1) for i in range(1, n + 1) for j in range(1, n + 1)
         if 1 <= i * j <= max_num},
        key=lambda r: r[0] * r[1],
    )
    aspect, best, best_diff = width / height, (1, 1), float("inf")
    for ratio in ratios:
        diff = abs(aspect - ratio[0] / ratio[1])
        if diff < best_diff:
            best, best_diff = ratio, diff
        elif diff == best_diff and width * height > 0.5 * image_size * image_size * ratio[0] * ratio[1]:
            best = ratio
    blocks = best[0] * best[1]
    return blocks + (1 if blocks != 1 else 0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_internvl(tmp_path_factory.mktemp("tiny_internvl") / "internvl")


@pytest.fixture(scope="module")
def processor(tiny: Path) -> Any:
    from vlm.local.processors import load_processor

    return load_processor(str(tiny))


def test_template_renders_vlmevalkit_text(processor: Any) -> None:
    """The -hf template renders an image part as `<IMG_CONTEXT>\\n`: the parts give InternVLChat's question text."""
    line = {"index": 7, "question": "Compare <image 1> and <image 2>.", "A": "same", "B": "different"}
    parts = prompts("MMMU_DEV_VAL", line, images=(IMG1, IMG2))
    rendered = processor.apply_chat_template(to_hf_conversation(parts, load_images=False), add_generation_prompt=True,
                                             tokenize=False)  # fmt: skip
    vlmeval = ("Image-1: <image>\nImage-2: <image>\nCompare <image 1> and <image 2>.\nA. same\nB. different\n"
               "Answer with the option's letter from the given choices directly.")  # fmt: skip
    expected = vlmeval.replace("<image>", "<IMG_CONTEXT>")
    assert rendered == f"<|im_start|>user\n{expected}<|im_end|>\n<|im_start|>assistant\n"
    one = processor.apply_chat_template(
        to_hf_conversation(prompts("MME", {"index": 1, "question": "Dog?"}), load_images=False),
        add_generation_prompt=True, tokenize=False,
    )
    assert one == ("<|im_start|>user\n<IMG_CONTEXT>\nDog? Answer the question using a single word or phrase."
                   "<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("size", [(1120, 56), (100, 80), (56, 300)])
@pytest.mark.parametrize("dataset", ["MMBench_DEV_EN", "ChartQA_TEST", "DocVQA_VAL", "OCRBench"])
def test_tiles_match_dynamic_preprocess(processor: Any, size: tuple[int, int], dataset: str) -> None:
    kwargs = InternVLPrompts({}).processor_kwargs(dataset)
    out = processor(text=["<IMG_CONTEXT>\nQ"], images=[Image.new("RGB", size, (10, 200, 30))], return_tensors="pt",
                    **kwargs)  # fmt: skip
    tiles = vlmeval_tiles(*size, max_num=kwargs["max_patches"], image_size=56)
    assert tuple(out["pixel_values"].shape) == (tiles, 3, 56, 56)  # every tile resized to the tower's 56x56
    context = processor.tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>")
    assert int((out["input_ids"] == context).sum()) == 4 * tiles  # 4 tokens per tile (image_seq_length)


def test_tiles_through_from_pretrained(tiny: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """HFVisionModel with an InternVL3 preset hands each dataset's tile count to the processor for that call only."""
    import vlm.prompts
    from vlm.local.generic import HFVisionModel

    monkeypatch.setitem(vlm.prompts.FAMILIES, "internvl", "vlm.prompts.internvl:InternVLPrompts")
    preset = {"name": "InternVL3-1B-hf", "vlmeval": "InternVL3-1B", "vlmeval_prompt": "model",
              "prompt_style": "internvl", "values": {}}  # fmt: skip
    model = HFVisionModel(str(tiny), preset=preset, max_new_tokens=1)
    wide = tmp_path / "wide.png"
    Image.new("RGB", (1120, 56), (200, 30, 30)).save(wide)
    msgs = prompts("MME", {"index": 1, "question": "Red?"}, images=(str(wide),))
    base = len(model.processor.tokenizer(
        "<|im_start|>user\n<img></img>\nRed? Answer the question using a single word or phrase.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )["input_ids"])  # fmt: skip
    try:
        for dataset, max_num in [("MME", 6), ("ChartQA_TEST", 12), ("DocVQA_VAL", 18), ("OCRBench", 24), ("MME", 6)]:
            tiles = vlmeval_tiles(1120, 56, max_num=max_num, image_size=56)
            generation = model.generate_full(msgs, dataset=dataset)
            assert generation.usage.input_tokens == base + 4 * tiles, dataset
    finally:
        model.close()
