"""VLMEvalKit's presets as data (vlm/presets.tsv): the file is valid, the registry attaches each preset to its name
and aliases, and the generic transformers path applies one: the processor's image resolution limits, the
generation defaults under `--max-tokens`, and a record of both in settings() (results.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from tests.support.tiny_models import build_tiny_llava, build_tiny_qwen2_5_vl, build_tiny_qwen2_vl
from vlm.local.generic import HFVisionModel
from vlm.presets import COLUMNS, PROMPT_STYLES, PresetError, model_presets, parse_presets
from vlm.prompts import FAMILIES, prompts_for
from vlm.registry import is_local, model_registry
from vlmkit.run.resolve import ModelOptions, resolve_model

TSV = Path(__file__).resolve().parents[2] / "vlm" / "presets.tsv"
QWEN_LIMITS = {"min_pixels": 1280 * 28 * 28, "max_pixels": 16384 * 28 * 28}  # as vlmeval/config.py writes them
TYPES = {"min_pixels": int, "max_pixels": int, "max_new_tokens": int, "repetition_penalty": float, "system_prompt": str}


def test_every_preset_names_a_local_registry_model_with_known_typed_values() -> None:
    presets = model_presets()
    registry = model_registry()
    header = next(line for line in TSV.read_text().splitlines() if line and not line.startswith("#"))
    assert tuple(header.split("\t")) == COLUMNS
    assert len(presets) == 24
    for name, preset in presets.items():
        assert name in registry and is_local(registry.get(name)), name
        assert set(preset.values) <= set(TYPES), name
        for key, value in preset.values.items():
            assert type(value) is TYPES[key], (name, key, value)
        assert preset.prompt_style in PROMPT_STYLES and preset.vlmeval_prompt in ("dataset", "model")
        family = prompts_for(preset.as_kwarg())  # every family a preset names can be built without weights
        assert (family is None) == (preset.prompt_style == "dataset"), name
        if family is not None:
            assert family.own_prompts == (preset.vlmeval_prompt == "model"), name
        assert isinstance(preset.vlmeval, str) and preset.vlmeval, name
        assert "max_new_tokens" in preset.values, name  # every VLMEvalKit wrapper passes one
    for size in ("2B", "7B", "72B"):
        assert presets[f"Qwen2-VL-{size}-Instruct"].values == {**QWEN_LIMITS, "max_new_tokens": 2048, "repetition_penalty": 1.0}
    for size in ("3B", "7B", "32B", "72B"):
        preset = presets[f"Qwen2.5-VL-{size}-Instruct"]
        assert preset.values == {**QWEN_LIMITS, "max_new_tokens": 2048, "repetition_penalty": 1.0}
        assert preset.vlmeval_prompt == "dataset"  # config.py: use_custom_prompt=False
        assert preset.prompt_style == "qwen2vl"  # Qwen2VLChat: no own prompts, its OCRBench image setting
    for size in ("2B", "7B", "72B"):  # Qwen2VLPromptMixin's own prompts
        assert presets[f"Qwen2-VL-{size}-Instruct"].vlmeval_prompt == "model"
        assert presets[f"Qwen2-VL-{size}-Instruct"].prompt_style == "qwen2vl"
    assert presets["llava-1.5-7b-hf"].prompt_style == presets["llava-1.5-13b-hf"].prompt_style == "llava"
    assert PROMPT_STYLES == ("dataset", *FAMILIES) and {"qwen2vl", "llava"} <= set(FAMILIES)
    assert not any("not in vlmkit yet" in p.notes for p in presets.values() if p.prompt_style != "dataset")
    assert presets["gemma-3-4b-it"].values["system_prompt"] == "You are a helpful assistant. "
    assert presets["llava-1.5-7b-hf"].vlmeval == "llava_v1.5_7b" and presets["llava-1.5-7b-hf"].values["max_new_tokens"] == 512


def test_each_family_says_its_coordinate_convention() -> None:
    """Qwen2-VL answers boxes in 0-1000, Qwen2.5-VL in pixels of its resized image, InternVL in 0-1000 (VLMEvalKit's
    InternVLChat divides by 1000), LLaVA-1.5 in 0-1; the other families say none. The convention changes no answer,
    so it is not part of the kwarg a model (and the run fingerprint) gets."""
    presets = model_presets()
    expected = {"Qwen2-VL-": "norm1000", "Qwen2.5-VL-": "abs", "InternVL3-": "norm1000", "llava-1.5-": "norm1"}
    for name, preset in presets.items():
        want = next((v for prefix, v in expected.items() if name.startswith(prefix)), None)
        assert preset.coords == want, name
        assert "coords" not in preset.as_kwarg() and "coords" not in preset.values, name
    one = parse_presets(_tsv("m\tv\tdataset\tdataset\t\t\t8\t\t\tnorm1\t"))["m"]
    assert one.coords == "norm1"
    assert parse_presets(_tsv("m\tv\tdataset\tdataset\t\t\t8\t\t\t\t"))["m"].coords is None


def test_the_registry_carries_each_preset_to_its_name_and_aliases() -> None:
    registry = model_registry()
    presets = model_presets()
    for entry in registry:
        if not is_local(entry) or entry.name == "vlmkit-tiny":
            continue
        expected = presets.get(entry.kwargs["model_path"].split("/", 1)[1])
        assert entry.kwargs.get("preset") == (expected.as_kwarg() if expected else None), entry.name
    assert registry.get("qwen-vl").kwargs["preset"]["name"] == "Qwen2.5-VL-7B-Instruct"
    assert registry.get("qwen2.5-omni").kwargs["preset"]["name"] == "Qwen2.5-Omni-7B"
    without = sorted(e.name for e in registry if is_local(e) and "preset" not in e.kwargs)
    assert without == ["Qwen2-Audio-7B-Instruct", "Qwen2.5-Omni-3B", "llava-onevision-qwen2-72b-ov-hf", "qwen2-audio",
                       "vlmkit-tiny"]


def _tsv(*rows: str) -> str:
    return "# a comment\n" + "\t".join(COLUMNS) + "\n" + "".join(r + "\n" for r in rows)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("m\tv\tdataset\tdataset\t10\t20\t2048\t1.0\t\t\t", None),
        ("m\tv\tdataset\tdataset\tten\t20\t2048\t1.0\t\t\t", r"line 3, column min_pixels: expected a whole number, got 'ten'"),
        ("m\tv\tdataset\tdataset\t30\t20\t2048\t1.0\t\t\t", r"line 3: min_pixels 30 is above max_pixels 20"),
        ("m\tv\tdataset\tdataset\t10\t\t2048\t1.0\t\t\t", r"min_pixels and max_pixels go together"),
        ("m\tv\tdataset\tdataset\t\t\t0\t\t\t\t", r"column max_new_tokens: expected a whole number of 1 or more"),
        ("m\tv\tdataset\tdataset\t\t\t8\tx\t\t\t", r"column repetition_penalty: expected a number"),
        ("m\tv\tdataset\tmodel\t\t\t8\t\t\t\t", r"column prompt_style: expected one of dataset, qwen2vl, .*got 'model'"),
        ("m\tv\tcustom\tdataset\t\t\t8\t\t\t\t", r"column vlmeval_prompt: expected one of dataset, model"),
        ("m\tv\tdataset\tdataset\t\t\t8\t\tBe brief.\t\t", r"column system_prompt: expected a JSON string"),
        ("m\tv\tdataset\tdataset\t\t\t8\t\t\tpixels\t", r"column coords: expected one of abs, norm1000, norm1, got"),
        ("m\tv\tdataset\tdataset\t\t\t8\t\t\tauto\t", r"column coords: .* got 'auto'"),  # auto: an empty cell
        ("m\tv\tdataset\tdataset\t\t\t8\t\t\t\t\textra", r"line 3: 12 cells, expected 11"),
    ],
)
def test_a_bad_row_is_one_line_naming_line_and_column(row: str, message: str | None) -> None:
    if message is None:
        assert parse_presets(_tsv(row), "p.tsv")["m"].values == {"min_pixels": 10, "max_pixels": 20,
                                                                 "max_new_tokens": 2048, "repetition_penalty": 1.0}
        return
    with pytest.raises(PresetError, match=message) as info:
        parse_presets(_tsv(row), "p.tsv")
    assert str(info.value).startswith("p.tsv") and "\n" not in str(info.value)


def test_duplicates_and_unknown_columns_are_refused() -> None:
    row = "m\tv\tdataset\tdataset\t\t\t8\t\t\t\t"
    with pytest.raises(PresetError, match="'m' is listed twice"):
        parse_presets(_tsv(row, row))
    with pytest.raises(PresetError, match="the columns must be"):
        parse_presets("name\tvlmeval\ttemperature\n")


# ------------------------------------------------------------------------------------------------- applied


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_presets")
    return {"qwen2_vl": build_tiny_qwen2_vl(root / "qwen2_vl"), "qwen2_5_vl": build_tiny_qwen2_5_vl(root / "qwen2_5_vl"),
            "llava": build_tiny_llava(root / "llava")}


def _grid(model: HFVisionModel, width: int, height: int, tmp_path: Path) -> list[int]:
    """image_grid_thw of one image of that size, as the model's processor makes it (patches of 14 px)."""
    path = tmp_path / f"{width}x{height}.png"
    Image.new("RGB", (width, height), (200, 30, 30)).save(path)
    inputs = model._model_inputs([model._conversation(model.prepare([str(path), "What colour?"]))])
    return inputs["image_grid_thw"][0].tolist()


def test_a_qwen2_vl_built_from_a_config_gets_the_presets_resolution(tiny: dict[str, Path], tmp_path: Path) -> None:
    spec = resolve_model("Qwen2-VL-7B-Instruct", ModelOptions(model_path=str(tiny["qwen2_vl"])))
    model = spec.build()
    assert model.pixel_limits == QWEN_LIMITS and model.settings()["image_pixel_limits"] == QWEN_LIMITS
    # 40x30 = 1200 px is below min_pixels (1003520): scaled up by sqrt(1003520 / 1200) and rounded up to multiples
    # of 28: 1176 x 868 px = 84 x 62 patches (qwen_vl_utils.smart_resize, which VLMEvalKit runs).
    assert _grid(model, 40, 30, tmp_path) == [1, 62, 84]
    # 1200x900 lies between the limits: each side rounded to the nearest multiple of 28 (1204 x 896).
    assert _grid(model, 1200, 900, tmp_path) == [1, 64, 86]
    # without the preset the checkpoint's own limits apply (this tiny one: 56*56 .. 112*112 pixels)
    plain = HFVisionModel(str(tiny["qwen2_vl"]), max_new_tokens=2)
    assert plain.pixel_limits == {"min_pixels": 56 * 56, "max_pixels": 112 * 112}
    assert _grid(plain, 40, 30, tmp_path) == [1, 4, 6] and _grid(plain, 1200, 900, tmp_path) == [1, 6, 8]


def test_preset_generation_settings_and_the_users_max_tokens(tiny: dict[str, Path]) -> None:
    model = resolve_model("qwen2.5-vl", ModelOptions(model_path=str(tiny["qwen2_5_vl"]))).build()
    settings = model.settings()
    assert settings["max_new_tokens"] == 2048 and settings["generation"]["max_new_tokens_source"] == "preset"
    assert settings["generation"]["passed"]["repetition_penalty"] == 1.0  # passed explicitly, as VLMEvalKit does
    assert settings["generation"]["passed"]["do_sample"] is False
    assert settings["preset"] == {**model_presets()["Qwen2.5-VL-7B-Instruct"].as_kwarg(), "overridden": []}
    json.dumps(settings)  # what results.json records
    mine = resolve_model("qwen2.5-vl", ModelOptions(model_path=str(tiny["qwen2_5_vl"]), max_tokens=3)).build()
    assert mine.max_new_tokens == 3 and mine.settings()["generation"]["max_new_tokens_source"] == "user"
    assert mine.settings()["preset"]["overridden"] == ["max_new_tokens"]
    assert mine.generate_full(["Describe a square."]).usage.output_tokens <= 3
    plain = resolve_model("mine", ModelOptions(model_path=str(tiny["qwen2_5_vl"]))).build()
    assert plain.settings()["preset"] is None and "repetition_penalty" not in plain.settings()["generate_kwargs"]


def test_limits_a_processor_cannot_take_fail_loudly(tiny: dict[str, Path]) -> None:
    preset = model_presets()["Qwen2-VL-7B-Instruct"].as_kwarg()
    with pytest.raises(ValueError, match=r"preset Qwen2-VL-7B-Instruct.*min_pixels.*keeps no pixel limits"):
        HFVisionModel(str(tiny["llava"]), preset=preset)
