"""GUI grounding reads each model's click in its family's coordinate convention: the preset says it (vlm/presets.tsv
`coords`), `--coords` overrides it, `auto` (VLMEvalKit's rule) is left; `abs` is pixels of the image as the model's
processor resized it, by the preset's pixel limits for a local model. One run with three served models reads each
model's replies in its own convention, and results.json says which and where it came from.

The screenshot is 2000x1000 and every row's target box is (1200, 600)..(1400, 800) (ScreenSpot's [x, y, w, h] =
[1200, 600, 201, 201]), i.e. 0.6..0.7 of the width and 0.6..0.8 of the height. Worked by hand (Qwen2-VL's resize:
sides rounded to multiples of 28, then scaled into [min_pixels, max_pixels]):
- defaults 3136..1003520: 1008x2016 rounded is 2,003,904 pixels, too many: beta = sqrt(2,000,000 / 1,003,520) =
  1.41173, height floor(1000 / beta / 28) * 28 = 700, width floor(2000 / beta / 28) * 28 = 1400: a 1400x700 image;
- Qwen2.5-VL's preset 1003520..12845056: 1000 -> 36 * 28 = 1008, 2000 -> 71 * 28 = 1988: a 1988x1008 image.
Replies, one a row, and where each convention puts them (hit = inside 0.6..0.7 x 0.6..0.8):
- row 0 `x=910, y=490`: abs on 1400x700 (0.65, 0.70) hit; norm1000 (0.91, 0.49); auto (0.455, 0.49); abs on
  1988x1008 (0.458, 0.486);
- row 1 `x=650, y=700`: norm1000 (0.65, 0.70) hit; auto (0.325, 0.70); abs 1400x700 (0.464, 1.0); 1988x1008 (0.327, ..);
- row 2 `x=1395, y=602`: auto (0.6975, 0.602) hit; abs on 1988x1008 (0.7017, 0.597) miss; the others above 1;
- row 3 `x=1292, y=706`: abs on 1988x1008 (0.6499, 0.7004) hit; auto (0.646, 0.706) hit; 1400x700 (0.923, 1.009);
  norm1000 above 1.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from datasets_tsv.benchmarks.gui_grounding import GuiGroundingDataset
from datasets_tsv.catalog.registry import build_dataset
from tests.support.run_helpers import chat_only, chat_requests, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, write_tsv
from vlmkit.run.inputs import dataset_for_model, model_facts
from vlmkit.run.resolve import ModelOptions, resolve_model

REPLIES = ["pyautogui.click(x=910, y=490)", "pyautogui.click(x=650, y=700)", "pyautogui.click(x=1395, y=602)",
           "pyautogui.click(x=1292, y=706)"]  # fmt: skip
HITS = {
    "abs, 1400x700": [True, False, False, False],
    "norm1000": [False, True, False, False],
    "auto": [False, False, True, True],
    "abs, 1988x1008": [False, False, False, True],
}
QWEN_LIMITS = {"min_pixels": 1280 * 28 * 28, "max_pixels": 16384 * 28 * 28}


def rows() -> list[dict]:
    out = io.BytesIO()
    Image.new("RGB", (2000, 1000), "white").save(out, format="PNG")
    shot = b64(out.getvalue())
    return [{"index": i, "image": shot if i == 0 else "0", "image_path": "shot.png", "question": f"[{i}] press it",
             "bbox": "[1200, 600, 201, 201]", "data_type": "text" if i % 2 else "icon", "data_source": "web"}
            for i in range(4)]  # fmt: skip


@pytest.fixture
def screenspot(lmu_root: Path):
    write_tsv(lmu_root / "ScreenSpot_v2_Web.tsv", rows())
    def build(**options):
        if set(options) <= {"coords"}:  # what a run can say (--coords), through the catalog
            return build_dataset("ScreenSpot_v2_Web", root=lmu_root, progress=False, keep_local_tsv=True, **options)
        return GuiGroundingDataset("ScreenSpot_v2_Web", layout="screenspot", root=lmu_root, progress=False,
                                   keep_local_tsv=True, **options)  # fmt: skip

    return build


def hits(dataset) -> list[bool]:
    return dataset.evaluate(dataset.data.assign(prediction=REPLIES)).per_sample["hit"].tolist()


def served(name: str):
    return resolve_model(name, ModelOptions(api_base="http://127.0.0.1:9/v1"))


def test_model_facts_come_from_the_preset() -> None:
    local = resolve_model("Qwen2.5-VL-7B-Instruct", scoring_only=True)  # no weights are loaded
    qwen = "Qwen2.5-VL-7B-Instruct"
    assert model_facts(local) == {"model": qwen, "coords": "abs", "preset": qwen, **QWEN_LIMITS, "pixels_preset": qwen}
    assert model_facts(resolve_model("internvl", scoring_only=True)) == {
        "model": "internvl", "coords": "norm1000", "preset": "InternVL3-8B-hf"}  # an alias: its checkpoint's preset
    assert model_facts(resolve_model("gemma-3-4b-it", scoring_only=True)) == {"model": "gemma-3-4b-it"}  # none known
    # a served model: the preset named by its served id's last part, for the convention only (the server resizes)
    assert model_facts(served("Qwen/Qwen2-VL-7B-Instruct")) == {
        "model": "Qwen/Qwen2-VL-7B-Instruct", "coords": "norm1000", "preset": "Qwen2-VL-7B-Instruct"}
    assert model_facts(served("Qwen2.5-VL-72B-Instruct")) == {
        "model": "Qwen2.5-VL-72B-Instruct", "coords": "abs", "preset": "Qwen2.5-VL-72B-Instruct"}
    assert model_facts(served("my-model")) == {"model": "my-model"}


def test_each_model_is_read_in_its_convention(screenspot) -> None:
    base = screenspot()
    assert hits(base) == HITS["auto"]  # no model told: VLMEvalKit's rule
    def preset(name: str) -> dict:
        return {"coords_from": "preset", "coords_preset": name}

    for spec, expected, origin in [
        (served("Qwen2.5-VL-7B-Instruct"), "abs, 1400x700", preset("Qwen2.5-VL-7B-Instruct")),
        (served("Qwen2-VL-2B-Instruct"), "norm1000", preset("Qwen2-VL-2B-Instruct")),
        (served("my-model"), "auto", {"coords_from": "auto"}),
        (resolve_model("Qwen2.5-VL-3B-Instruct", scoring_only=True), "abs, 1988x1008", preset("Qwen2.5-VL-3B-Instruct")),
    ]:  # fmt: skip
        ds = dataset_for_model(base, spec)
        assert ds is not base and ds.data is base.data  # a copy sharing the rows
        assert hits(ds) == HITS[expected], spec.name
        scorer = ds.info()["scorer"]
        assert {k: v for k, v in scorer.items() if k.startswith("coords_") and k != "coords_meaning"} == origin
    assert hits(base) == HITS["auto"]  # the dataset itself is left as it was
    local = dataset_for_model(base, resolve_model("Qwen2.5-VL-3B-Instruct", scoring_only=True))
    scorer = local.info()["scorer"]
    assert (scorer["min_pixels"], scorer["max_pixels"]) == (1003520, 12845056)
    assert scorer["pixels_from"] == "the preset Qwen2.5-VL-3B-Instruct"
    note = local.evaluate(local.data.assign(prediction=REPLIES)).notes[0]
    assert "coords abs" in note and note.endswith("convention from the preset Qwen2.5-VL-3B-Instruct")


def test_coords_given_to_the_dataset_win_over_the_preset(screenspot) -> None:
    for coords, expected in [("norm1000", "norm1000"), ("auto", "auto")]:
        ds = dataset_for_model(screenspot(coords=coords), served("Qwen2.5-VL-7B-Instruct"))
        assert hits(ds) == HITS[expected]
        assert ds.info()["scorer"]["coords"] == coords and ds.info()["scorer"]["coords_from"] == "--coords"
    # abs given, with the model's pixel limits (the preset's) unless the dataset's options set them
    local = resolve_model("Qwen2.5-VL-7B-Instruct", scoring_only=True)
    assert hits(dataset_for_model(screenspot(coords="abs"), local)) == HITS["abs, 1988x1008"]
    mine = dataset_for_model(screenspot(coords="abs", min_pixels=3136, max_pixels=1003520), local)
    assert hits(mine) == HITS["abs, 1400x700"] and mine.info()["scorer"]["pixels_from"] == "the dataset's options"
    with pytest.raises(ValueError, match="min_pixels and max_pixels go together"):
        screenspot(min_pixels=3136)


def test_other_datasets_are_left_as_they_are(lmu_root: Path) -> None:
    write_tsv(lmu_root / "MyVQA.tsv", [{"index": 0, "question": "q", "answer": "a"}])
    ds = build_dataset("MyVQA", root=lmu_root, progress=False, kind="vqa")
    assert dataset_for_model(ds, served("Qwen2.5-VL-7B-Instruct")) is ds


# ------------------------------------------------------------------------------------------- a run, three models
MODELS = {"Qwen2.5-VL-7B-Instruct": REPLIES[0], "Qwen2-VL-7B-Instruct": REPLIES[1], "served": REPLIES[2]}


def answer_as_the_family_does(request: Recorded) -> Reply:
    """Each model clicks the target's centre-ish in its own numbers (module docstring), on every row."""
    return chat_reply(MODELS[request.body["model"]])


def needs_the_runner_hook() -> None:
    from vlmkit.run import runner

    if not hasattr(runner, "dataset_for_model"):
        pytest.skip("the runner does not yet ask vlmkit.run.inputs.dataset_for_model per (model, dataset) pair")


def test_one_run_reads_each_model_in_its_convention(lmu_root: Path, tmp_path: Path) -> None:
    needs_the_runner_hook()
    write_tsv(lmu_root / "ScreenSpot_v2_Web.tsv", rows())
    work = tmp_path / "work"

    def run(*extra: str):
        return vlmkit_cli("run", "--data", "ScreenSpot_v2_Web", "--model", *MODELS, "--api-base", server.base_url,
                          "--work-dir", str(work), "--keep-local-tsv", *extra, env={"LMUData": str(lmu_root)})

    def results(model: str) -> dict:
        return json.loads((work / model / "ScreenSpot_v2_Web" / "results.json").read_text())

    expected = {"Qwen2.5-VL-7B-Instruct": ("abs", "preset", 0.0), "Qwen2-VL-7B-Instruct": ("norm1000", "preset", 0.0),
                "served": ("auto", "auto", 100.0)}  # fmt: skip
    with FaultServer(chat_only(answer_as_the_family_does)) as server:
        first = run()
        assert first.returncode == 0, first.stderr
        asked = len(chat_requests(server.requests))
        for model, (coords, origin, vlmevalkit) in expected.items():
            doc = results(model)
            scorer = doc["dataset"]["scorer"]
            assert (scorer["coords"], scorer["coords_from"]) == (coords, origin), model
            assert scorer.get("coords_preset") == (model if origin == "preset" else None)
            # every model clicked inside the target in its own numbers: all four rows right for each
            assert doc["scoring"]["metrics"]["Overall_Accuracy"] == 100.0, model
            assert doc["scoring"]["vlmevalkit"]["metrics"]["Overall_Accuracy"] == vlmevalkit, model  # its rule
            assert f"coords {coords}" in doc["scoring"]["notes"][0]
        again = run("--coords", "auto")  # one convention for all: scored again, nothing asked again
        assert again.returncode == 0, again.stderr
        asked_again = len(chat_requests(server.requests)) - asked
    assert asked == 12 and asked_again == 0
    for model, (_, _, by_auto) in expected.items():
        doc = results(model)
        assert doc["dataset"]["scorer"]["coords"] == "auto" and doc["dataset"]["scorer"]["coords_from"] == "--coords"
        assert doc["scoring"]["metrics"]["Overall_Accuracy"] == by_auto, model
