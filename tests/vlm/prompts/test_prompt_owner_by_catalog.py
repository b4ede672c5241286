"""Who writes the prompt, for every catalog benchmark and every model family, is who VLMEvalKit's code picks
(vlmeval/inference.py at e8e78f05: the dataset's prompt when its class sets `force_use_dataset_prompt`, else the
model's when `model.use_custom_prompt(dataset_name)` says so; the video loop in inference_video.py).

VLMEvalKit's rules are written down here again from its code, independently of vlm/prompts, and read the catalog's
`vlmevalkit_type` / `vlmevalkit_prompt` columns (VLMEvalKit's TYPE of the class serving the rows; whether that class
forces its own prompt) and its `kind` (video = DATASET_MODALITY VIDEO):
- Qwen2VLPromptMixin.use_custom_prompt (vlmeval/vlm/qwen2_vl/prompt.py), LLaVA.use_custom_prompt
  (vlmeval/vlm/llava/llava.py), InternVLChat.use_custom_prompt (vlmeval/vlm/internvl/internvl_chat.py), and
  SmolVLM.generate_inner's exact names (vlmeval/vlm/smolvlm.py: it rewrites the prompt of those benchmarks).
- a video benchmark gets the dataset's prompt: InternVL says so by modality; Qwen2-VL's and LLaVA's wrappers may say
  yes by TYPE (the EASI video classes are typed MCQ/VQA), but the video loop then calls
  `build_prompt(line, dataset=<dataset object>, video_llm=...)`, which their build_prompt cannot take (TypeError):
  VLMEvalKit cannot run them with the wrapper's prompt at all.

The issue's 48 names are the catalog names where Qwen2VLPromptMixin.use_custom_prompt, called with the name alone,
disagreed with vlmkit's old kind-only rule (ISSUE_48, reproduced at e8e78f05 with VLMEvalKit's own functions). Of
them, vlmkit's owner changed for 15 (QWEN_CHANGED); the other 33 are settled as VLMEvalKit's inference settles them
(see SETTLED_OTHERWISE).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_dataset
from tests.support.run_helpers import vlmkit_cli
from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.vlm.prompts.catalog_infos import catalog_info
from vlm.presets import model_presets
from vlm.prompts import prompts_for
from vlmkit.core.contracts import DatasetInfo, dataset_info

ROWS = catalog_rows()


def listinstr(words: list[str], name: str) -> bool:
    return any(word in name for word in words)


# ----------------------------------------------------------------------------- VLMEvalKit's rules, from its code
def qwen2vl_asks(name: str, vtype: str) -> bool:
    if name in {"MMMU_DEV_VAL", "MMMU_TEST"}:
        return True
    if vtype == "MCQ":
        return "LEGO" not in name
    if vtype == "Y/N":
        return name in {"HallusionBench", "POPE"}
    if vtype == "VQA":
        return name not in {"MMVet", "ChartQAPro", "ChartQAPro_CoT", "ChartQAPro_PoT", "ChartMuseum"}
    return False


def internvl_asks(name: str, vtype: str, video: bool) -> bool:
    physics = ["atomic_dataset", "electro_dataset", "mechanics_dataset", "optics_dataset", "quantum_dataset",
               "statistics_dataset"]  # fmt: skip
    if name in physics or name == "SSI_Bench":
        return False
    if listinstr(["MMDU", "MME-RealWorld", "MME-RealWorld-CN", "WeMath_COT", "MMAlignBench", "ChartQAPro",
                  "ChartMuseum", "MMSIVideo_U50", "MMSIVideo_SC"], name):
        return False
    if vtype == "MCQ" and "LEGO" in name:
        return False
    return not video


def llava_asks(name: str, vtype: str) -> bool:
    return vtype == "MCQ"


SMOLVLM_NAMES = {
    "MMBench_DEV_EN", "MMBench_TEST_EN", "MMBench_DEV_CN", "MMBench_TEST_CN", "MMBench", "MMBench_CN",
    "MMBench_DEV_EN_V11", "MMBench_DEV_CN_V11", "MMBench_TEST_EN_V11", "MMBench_TEST_CN_V11", "MMBench_V11",
    "MMBench_CN_V11", "CCBench", "MMMU_DEV_VAL", "MMMU_TEST", "MathVista_MINI", "ChartQA_TEST", "DocVQA_VAL",
    "DocVQA_TEST", "TextVQA_VAL", "TextVQA_TEST", "MME", "MMVet", "OCRVQA_TEST", "OCRVQA_TESTCORE", "InfoVQA_VAL",
    "InfoVQA_TEST", "OCRBench", "HallusionBench", "MMStar", "SEEDBench_IMG", "AI2D_TEST", "ScienceQA_VAL",
    "ScienceQA_TEST",
}  # fmt: skip


def vlmevalkit_owner(family: str, name: str) -> str:
    """'model' or 'dataset': who writes the prompt of this catalog benchmark in VLMEvalKit."""
    row = ROWS[name]
    vtype, video = row.vlmevalkit_type or "", row.kind == "video"
    if family == "smolvlm":  # rewrites by exact name in generate_inner, whatever built the message
        return "model" if name in SMOLVLM_NAMES else "dataset"
    if row.vlmevalkit_prompt == "dataset" or (video and family != "internvl"):
        return "dataset"
    asks = {
        "qwen2vl": lambda: qwen2vl_asks(name, vtype),
        "internvl": lambda: internvl_asks(name, vtype, video),
        "llava": lambda: llava_asks(name, vtype),
    }[family]()
    return "model" if asks else "dataset"


# a preset of each family whose VLMEvalKit wrapper writes its own prompts
FAMILIES = {"qwen2vl": "Qwen2-VL-7B-Instruct", "internvl": "InternVL3-8B-hf", "llava": "llava-1.5-7b-hf",
            "smolvlm": "SmolVLM-Instruct"}


def family(style: str):
    preset = model_presets()[FAMILIES[style]].as_kwarg()
    assert preset["prompt_style"] == style and preset.get("vlmeval_prompt") != "dataset"
    return prompts_for(preset)


def vlmkit_owner(prompts, info: DatasetInfo) -> str:
    return "model" if prompts.use_custom_prompt(info) else "dataset"


def kind_only_owner(prompts, name: str) -> str:
    """vlmkit's owner before the catalog carried VLMEvalKit's TYPE: the dataset's kind stood for it."""
    row = ROWS[name]
    return vlmkit_owner(prompts, DatasetInfo(row.name, row.kind, lambda line: []))


# ------------------------------------------------------------------------------------------------- the walks
@pytest.mark.parametrize("style", sorted(FAMILIES))
def test_every_catalog_name_has_vlmevalkits_prompt_owner(style: str) -> None:
    prompts = family(style)
    wrong = {name: (vlmkit_owner(prompts, catalog_info(name)), vlmevalkit_owner(style, name)) for name in ROWS}
    wrong = {name: pair for name, pair in wrong.items() if pair[0] != pair[1]}
    assert wrong == {}, f"{style}: vlmkit's owner, VLMEvalKit's owner: {wrong}"


ISSUE_48 = {
    "MMMU_Pro_10c", "MMMU_Pro_10c_COT", "MMMU_Pro_V", "MMMU_Pro_V_COT",
    *(f"GMAI_mm_bench_TEST_part_{k}" for k in range(1, 12)),
    "MME-RealWorld", "MME-RealWorld-CN", "MME-RealWorld-Lite", "OlympiadBench", "OlympiadBench_EN",
    "OlympiadBench_CN", "BMMR", "BMMR_mini", "RefSpatial", "RefSpatial_wo_unseen", "RoboSpatialHome",
    "MMESCI_VisionOnly", "MMESCI_ZH", "MMESCI_EN", "MMESCI_FR", "MMESCI_ES", "MMESCI_JA",
    "VSI-Bench", "VSI-Bench-Debiased", "VsiSuperRecall_10mins", "VsiSuperRecall_30mins", "VsiSuperRecall_60mins",
    "VsiSuperRecall_120mins", "VsiSuperRecall_240mins", "VsiSuperCount_10mins", "VsiSuperCount_30mins",
    "VsiSuperCount_60mins", "VsiSuperCount_120mins", "MMSIVideoBench", "STI-Bench", "DSRBench",
    "vlmkit_demo_mcq", "vlmkit_demo_vqa",
}  # fmt: skip
QWEN_CHANGED = {  # now the dataset's prompt (their TYPE is none the mixin handles) / now the model's (TYPE VQA)
    "MMMU_Pro_10c": "dataset", "MMMU_Pro_10c_COT": "dataset", "MMMU_Pro_V": "dataset", "MMMU_Pro_V_COT": "dataset",
    "MME-RealWorld": "dataset", "MME-RealWorld-CN": "dataset", "MME-RealWorld-Lite": "dataset",
    "OlympiadBench": "dataset", "OlympiadBench_EN": "dataset", "OlympiadBench_CN": "dataset", "BMMR": "dataset",
    "BMMR_mini": "dataset", "RefSpatial": "model", "RefSpatial_wo_unseen": "model", "RoboSpatialHome": "model",
}  # fmt: skip
# names added with the rest of VLMEvalKit's catalog (issue 30), after the issue's count of 48: their TYPE is none the
# mixin handles, or their class forces its own prompt, so the dataset's prompt stays where the kind alone said "model"
QWEN_CHANGED_LATER = {name: "dataset" for name in (
    "BabyVision", "FoxBench", "MATBench", "OceanOCRBench", "OmniDocBench", "PerceptionBench", "olmOCRBench",
    "wildprobe_multiimg_reasoning",
)}  # fmt: skip
SETTLED_OTHERWISE = {
    # force_use_dataset_prompt: VLMEvalKit's inference never asks the mixin (vlmkit already sent the dataset's)
    "forced": {n for n in ISSUE_48 if n.startswith("MMESCI")},
    # video: the mixin says MCQ/VQA yes, the video loop's build_prompt call then fails; the dataset's prompt stays
    "video": {n for n in ISSUE_48 if ROWS[n].kind == "video"},
    # names VLMEvalKit does not know (DATASET_TYPE -> None): it runs the GMAI parts only as GMAI-MMBench_TEST
    # (TYPE MCQ: the mixin's prompt, kept); the demos are vlmkit's own, typed as their kind's VLMEvalKit class
    "not VLMEvalKit names": {n for n in ISSUE_48 if n.startswith(("GMAI_mm_bench_TEST_part", "vlmkit_demo"))},
}


def test_the_issues_48_names_and_the_15_whose_owner_changed_for_qwen2vl() -> None:
    assert len(ISSUE_48) == 48 and ISSUE_48 <= set(ROWS)
    prompts = family("qwen2vl")
    changed = {name: vlmkit_owner(prompts, catalog_info(name)) for name in ROWS
               if vlmkit_owner(prompts, catalog_info(name)) != kind_only_owner(prompts, name)}
    assert changed == QWEN_CHANGED | QWEN_CHANGED_LATER
    assert set(changed) - set(QWEN_CHANGED_LATER) <= ISSUE_48
    assert [len(s) for s in SETTLED_OTHERWISE.values()] == [6, 14, 13]
    assert set().union(*SETTLED_OTHERWISE.values()) | set(QWEN_CHANGED) == ISSUE_48


@pytest.mark.parametrize(("style", "changed"), [
    ("llava", {"MMMU_Pro_10c", "MMMU_Pro_10c_COT", "MMMU_Pro_V", "MMMU_Pro_V_COT", "MME-RealWorld",
               "MME-RealWorld-CN", "MME-RealWorld-Lite", "LogicVista", "CoreCognition", "ERQA"}),
    ("internvl", {"MMESCI_VisionOnly", "MMESCI_ZH", "MMESCI_EN", "MMESCI_FR", "MMESCI_ES", "MMESCI_JA",
                  "BabyVision", "PerceptionBench", "SUPERChem", "SUPERChem_text", "wildprobe_multiimg_reasoning"}),
    ("smolvlm", set()),
])  # fmt: skip
def test_names_whose_owner_changed_in_the_other_families(style: str, changed: set[str]) -> None:
    prompts = family(style)
    found = {name for name in ROWS if vlmkit_owner(prompts, catalog_info(name)) != kind_only_owner(prompts, name)}
    assert found == changed
    assert all(vlmkit_owner(prompts, catalog_info(name)) == "dataset" for name in changed)


def test_a_family_run_with_the_datasets_prompts_never_owns_one() -> None:
    qwen25 = prompts_for(model_presets()["Qwen2.5-VL-7B-Instruct"].as_kwarg())  # use_custom_prompt=False
    assert not any(qwen25.use_custom_prompt(catalog_info(name)) for name in ROWS)


# ------------------------------------------------------------------------------------------------- MMMU_Pro_V
VISION_PROMPT = ("Answer the following multiple-choice question in the image. Answer directly with the option letter "
                 "from the given choices. ")  # MMMUProDataset.build_prompt, vision setting, not COT


def _vision_tsv(lmu_root: Path) -> None:
    write_tsv(lmu_root / "MMMU_Pro_V.tsv", [
        {"index": i, "image": b64(image_bytes(colour)), "question": f"Which colour is {colour}?", "A": "red",
         "B": "blue", "C": "green", "D": "white", "answer": "A" if colour == "red" else "B"}
        for i, colour in enumerate(("red", "blue"))
    ])  # fmt: skip


def test_mmmu_pro_v_keeps_its_own_prompt_with_the_qwen2vl_family(lmu_root: Path) -> None:
    _vision_tsv(lmu_root)
    ds = build_dataset("MMMU_Pro_V", root=lmu_root, progress=False, keep_local_tsv=True)
    assert (ds.vlmevalkit_type, ds.vlmevalkit_prompt) == ("MCQ_MMMU_Pro", "wrapper")  # carried from the catalog
    qwen = family("qwen2vl")
    assert not qwen.use_custom_prompt(catalog_info("MMMU_Pro_V"))
    # what is sent: the image alone, then the instruction; neither the question nor the options as text
    assert ds.build_prompt(0) == [{"type": "image", "value": ds.image_paths(0)[0]},
                                  {"type": "text", "value": VISION_PROMPT}]
    # MMMU (not Pro) keeps the family's prompt
    assert qwen.use_custom_prompt(catalog_info("MMMU_DEV_VAL"))


def test_vlmkit_run_sends_mmmu_pro_vs_own_prompt_to_a_qwen2vl(lmu_root: Path, tmp_path: Path) -> None:
    from tests.support.tiny_models import build_tiny_qwen2_vl

    _vision_tsv(lmu_root)
    ds = build_dataset("MMMU_Pro_V", root=lmu_root, progress=False, keep_local_tsv=True)
    assert dataset_info(ds).vlmevalkit_type == "MCQ_MMMU_Pro"  # type: ignore[attr-defined]
    tiny = build_tiny_qwen2_vl(tmp_path / "qwen2_vl")
    work = tmp_path / "work"
    result = vlmkit_cli("run", "--data", "MMMU_Pro_V", "--model", "Qwen2-VL-2B-Instruct", "--model-path", str(tiny),
                        "--max-tokens", "2", "--keep-local-tsv", "--work-dir", str(work),
                        env={"LMUData": str(lmu_root), "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    import json

    out = work / "Qwen2-VL-2B-Instruct" / "MMMU_Pro_V"
    records = [json.loads(line) for line in (out / "predictions.jsonl").open()]
    for record in records:
        content = record["prompt"][0]["content"]
        assert [part["type"] for part in content] == ["image", "text"]
        assert content[1]["value"] == VISION_PROMPT
    assert json.loads((out / "results.json").read_text())["run"]["prompts_from"] == "dataset"
