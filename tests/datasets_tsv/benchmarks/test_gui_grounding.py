"""GUI grounding by catalog name (ScreenSpot, ScreenSpot_v2, ScreenSpot_Pro, OSWorld_G): VLMEvalKit's prompt byte for
byte, the screenshot's size read from the decoded image, the coordinate convention settable and recorded, and one
`vlmkit run` against a local server with replies in several families' formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from datasets_tsv.benchmarks.gui_grounding import GuiGroundingDataset
from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_dataset
from tests.support.run_helpers import chat_only, chat_requests, question_of, run_served
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, write_tsv

# vlmeval/dataset/GUI/screenspot.py (and screenspot_pro.py, osworld_g.py) at e8e78f05, copied from the source
VLMEVALKIT_SYSTEM = (
    """You are a GUI agent. You are given a task and a screenshot of the screen. You need to perform pyautogui """
    """click/moveTo action to complete the task. The answer format is `pyautogui.click(x=?, y=?), x and y is """
    """necessary`"""
)
VLMEVALKIT_USER = """Please complete the following tasks by clicking using `pyautogui.click`:\n{instruction}"""
GUI_NAMES = {
    "ScreenSpot_Mobile", "ScreenSpot_Desktop", "ScreenSpot_Web", "ScreenSpot_v2_Mobile", "ScreenSpot_v2_Desktop",
    "ScreenSpot_v2_Web", "ScreenSpot_Pro_Development", "ScreenSpot_Pro_Creative", "ScreenSpot_Pro_CAD",
    "ScreenSpot_Pro_Scientific", "ScreenSpot_Pro_Office", "ScreenSpot_Pro_OS", "OSWorld_G",
}  # fmt: skip


def screenshot(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return b64(out.getvalue())


def screenspot_rows(size=(1000, 500)) -> list[dict]:
    """ScreenSpot's columns (index, image, image_path, question, bbox as x, y, w, h, data_type, data_source)."""
    shot = screenshot(*size)
    return [
        {"index": 0, "image": shot, "image_path": "mobile_0.png", "question": "[0] open the menu",
         "bbox": "[100, 50, 201, 101]", "data_type": "text", "data_source": "ios"},
        {"index": 1, "image": "0", "image_path": "mobile_0.png", "question": "[1] close the dialog",
         "bbox": "[600, 300, 100, 100]", "data_type": "icon", "data_source": "ios"},
        {"index": 2, "image": "0", "image_path": "mobile_0.png", "question": "[2] go back",
         "bbox": "[0, 400, 100, 100]", "data_type": "icon", "data_source": "android"},
        {"index": 3, "image": "0", "image_path": "mobile_0.png", "question": "[3] search",
         "bbox": "[800, 0, 200, 100]", "data_type": "text", "data_source": "android"},
    ]  # fmt: skip


def test_every_gui_name_is_scorable_with_its_layout():
    rows = catalog_rows()
    for name in GUI_NAMES:
        row = rows[name]
        assert row.status == "ok" and row.scorer == "gui_grounding" and row.vlmevalkit_type == "GUI", name
        expected = "osworld_g" if name == "OSWorld_G" else "screenspot_pro" if "_Pro_" in name else "screenspot"
        assert row.kwargs == {"layout": expected}, name
        assert row.url.startswith("https://opencompass.openxlab.space/") and len(row.md5) == 32, name


def test_the_prompt_is_vlmevalkits_with_a_system_turn(lmu_root: Path):
    write_tsv(lmu_root / "ScreenSpot_v2_Mobile.tsv", screenspot_rows())
    ds = build_dataset("ScreenSpot_v2_Mobile", root=lmu_root, progress=False, keep_local_tsv=True)
    assert isinstance(ds, GuiGroundingDataset)
    system, user = ds.build_prompt(1)
    assert system == {"role": "system", "content": [{"type": "text", "value": VLMEVALKIT_SYSTEM}]}
    assert user["role"] == "user" and [p["type"] for p in user["content"]] == ["image", "text"]
    assert user["content"][1]["value"] == VLMEVALKIT_USER.format(instruction="[1] close the dialog")
    assert Image.open(user["content"][0]["value"]).size == (1000, 500)  # the shared screenshot of row 0


def test_scoring_reads_the_screenshot_size_and_the_convention(lmu_root: Path):
    write_tsv(lmu_root / "ScreenSpot_Mobile.tsv", screenspot_rows())
    # boxes on 1000x500 (x, y, x+w-1, y+h-1): 0 (0.1, 0.1, 0.3, 0.3); 1 (0.6, 0.6, 0.699, 0.798);
    # 2 (0, 0.8, 0.099, 0.998); 3 (0.8, 0, 0.999, 0.198)
    replies = ["pyautogui.click(x=200, y=100)",  # auto: pixels -> (0.2, 0.2): in; norm1000 -> (0.2, 0.1): in
               "pyautogui.click(x=650, y=700)",  # auto: pixels -> (0.65, 1.4): out; norm1000 -> (0.65, 0.7): in
               "pyautogui.click(x=0.05, y=0.9)",  # 0-1 -> in (auto); norm1000 -> (0.00005, 0.0009): out
               "nothing here"]  # fmt: skip
    for coords, hits in [("auto", [True, False, True, False]), ("norm1000", [True, True, False, False])]:
        ds = build_dataset("ScreenSpot_Mobile", root=lmu_root, progress=False, keep_local_tsv=True, coords=coords)
        result = ds.evaluate(ds.data.assign(prediction=replies))
        assert result.per_sample["hit"].tolist() == hits, coords
        assert ds.info()["scorer"]["coords"] == coords and f"coords {coords}" in result.notes[0]
    # Text: rows 0, 3 -> 1 of 2; Icon: rows 1, 2 -> 1 of 2 (auto); source ios rows 0, 1 -> 1 of 2
    assert result.metrics["Overall_Accuracy"] == 50.0 and result.metrics["source:android"] == 0.0


def test_a_bad_coords_value_is_one_clear_line(lmu_root: Path):
    write_tsv(lmu_root / "ScreenSpot_Web.tsv", screenspot_rows())
    with pytest.raises(ValueError, match="ScreenSpot_Web: coords 'pixels'; choose one of abs, norm1000, norm1, auto"):
        build_dataset("ScreenSpot_Web", root=lmu_root, progress=False, keep_local_tsv=True, coords="pixels")


def test_coords_leaves_other_datasets_alone(lmu_root: Path):
    write_tsv(lmu_root / "MyVQA.tsv", [{"index": 0, "question": "q", "answer": "a"}])
    ds = build_dataset("MyVQA", root=lmu_root, progress=False, kind="vqa", coords="abs")
    assert "coords" not in ds.info()["scorer"]


def answer_in_formats(request: Recorded) -> Reply:
    """Row 0: VLMEvalKit's format in pixels; row 1: a Qwen2-VL box in 0-1000 (read as pixels by auto: a miss);
    row 2: a point in 0-1; row 3: no point."""
    row = int(question_of(request).split("[", 1)[1].split("]", 1)[0])
    return chat_reply(["pyautogui.click(x=200, y=100)", "<|box_start|>(600,600),(700,800)<|box_end|>",
                       '{"point_2d": [0.05, 0.9]}', "I cannot see it"][row])  # fmt: skip


def test_vlmkit_run_scores_a_screenspot_tsv_against_a_server(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "ScreenSpot_v2_Mobile.tsv", screenspot_rows())
    with FaultServer(chat_only(answer_in_formats)) as server:
        run = run_served(server.base_url, tmp_path / "work", lmu_root, "--keep-local-tsv", data="ScreenSpot_v2_Mobile")
        sent = chat_requests(server.requests)
    assert run.returncode == 0, run.stderr
    assert len(sent) == 4
    (first,) = [r for r in sent if "[0] open the menu" in question_of(r)]  # requests arrive in any order
    messages = first.body["messages"]
    assert messages[0] == {"role": "system", "content": VLMEVALKIT_SYSTEM}  # system turns are text strings
    assert messages[1]["role"] == "user" and messages[1]["content"][-1] == {
        "type": "text", "text": VLMEVALKIT_USER.format(instruction="[0] open the menu")}
    results = json.loads((tmp_path / "work" / "served" / "ScreenSpot_v2_Mobile" / "results.json").read_text())
    scoring = results["scoring"]
    # rows 0 and 2 in: 2 of 4; row 1's box centre (650, 700) as pixels is (0.65, 1.4): out; row 3 reads no point
    assert scoring["metrics"]["Overall_Accuracy"] == 50.0
    assert scoring["metrics"]["Format_Err_Rate"] == 25.0
    assert scoring["vlmevalkit"]["metrics"]["Overall_Accuracy"] == 25.0  # VLMEvalKit reads x=, y= only
    assert scoring["vlmevalkit"]["differing_rows"] == 1 and scoring["vlmevalkit"]["rows"][0]["index"] == 2
    assert results["dataset"]["scorer"]["coords"] == "auto"
    assert any("coords auto" in note for note in scoring["notes"])


def test_coords_flag_reaches_the_scorer_and_results(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "ScreenSpot_v2_Mobile.tsv", screenspot_rows())
    with FaultServer(chat_only(answer_in_formats)) as server:
        run = run_served(server.base_url, tmp_path / "work", lmu_root, "--keep-local-tsv", "--coords", "norm1000",
                         data="ScreenSpot_v2_Mobile")
    assert run.returncode == 0, run.stderr
    results = json.loads((tmp_path / "work" / "served" / "ScreenSpot_v2_Mobile" / "results.json").read_text())
    assert results["dataset"]["scorer"]["coords"] == "norm1000"
    assert any("coords norm1000" in note for note in results["scoring"]["notes"])
