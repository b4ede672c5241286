"""MVTamperBench (and its Start/End variants) from a miniature snapshot in its layout (json/<task>.json, the videos
under video/<prefix>): rows in VLMEvalKit's order (an item without its video left out, as its generate_tsv does),
its prompt and frames (worked by hand from vlmeval/dataset/tamperbench.py at e8e78f05), scores worked by hand for
vlmkit and for VLMEvalKit's figure, and a run end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from datasets_tsv.benchmarks.mvtamperbench import TASKS, MVTamperBench, MVTamperBenchEnd
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from vlmkit.core.video import read_plan, sample_frames

SYSTEM = "Carefully watch the video and pay attention to the cause and sequence of events, "
FILES = {"Action Count": ("action_count.json", "video/perception/videos/"),
         "Moving Count": ("moving_count.json", "video/clevrer/video_validation/"),
         "Action Antonym": ("action_antonym.json", "video/ssv2_video/")}


def item(n: int, video: str, tamper: str, answer: str) -> dict:
    return {"video": video, "question": f"[{n}] Is this video tampered?", "candidates": ["Yes", "No"],
            "answer": answer, "tamper_type": tamper}


# the json files in the layout's folders; Moving Count comes after Action Count in VLMEvalKit's task order, and the
# Action Antonym item has no video in the snapshot (left out)
ITEMS = {
    "Moving Count": [item(2, "c.mp4", "masking", "Yes"), item(3, "d.mp4", "original", "No"),
                     item(4, "e.mp4", "dropping", "Yes")],
    "Action Count": [item(0, "a.mp4", "original", "No"), item(1, "b.mp4", "masking", "Yes")],
    "Action Antonym": [item(9, "gone.webm", "original", "No")],
}
FRAMES = {"a.mp4": 40, "b.mp4": 20, "c.mp4": 20, "d.mp4": 20, "e.mp4": 20}
# [0] "(b)" is the target's option: right. [1] "B" is not "(a)"; can_infer reads B: a miss. [2] empty: vlmkit reads
# nothing (a miss); VLMEvalKit's xlsx gives it back as NaN, never scored, counted right in its rating. [3] A for B: a
# miss. [4] right
REPLIES = ["(B) No", "B", "", "A", "(A) Yes"]


def write_snapshot(root: Path, items: dict = ITEMS) -> Path:
    (root / "json").mkdir(parents=True, exist_ok=True)
    for task, file, prefix in TASKS:  # every task's json, as VLMEvalKit opens them all
        given = items.get(task, [])
        (root / "json" / file).write_text(json.dumps(given))
        for entry in given:
            if entry["video"] in FRAMES:
                write_indexed_video(root / prefix / entry["video"], FRAMES[entry["video"]], fps=10.0)
    return root


def segment_frames(n: int, nframe: int) -> list[int]:
    """VLMEvalKit's MVTamperBench get_index with no bound, written here: lo 0, hi n - 1."""
    seg = (n - 1) / nframe
    return [int(seg / 2 + np.round(seg * k)) for k in range(nframe)]


@pytest.fixture
def bench(tmp_path: Path) -> MVTamperBench:
    return MVTamperBench("MVTamperBench", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_rows_in_vlmevalkits_order_without_the_missing_video(bench: MVTamperBench):
    assert [q[:3] for q in bench.data["question"]] == ["[0]", "[1]", "[2]", "[3]", "[4]"]
    assert bench.data["task_tamper_type"].tolist() == [
        "Action Count_original", "Action Count_masking", "Moving Count_masking", "Moving Count_original",
        "Moving Count_dropping"]
    assert bench.info()["left_out"] == 1


def test_vlmevalkits_prompt_question_before_the_video(bench: MVTamperBench, tmp_path: Path):
    system, user, prefill = bench.build_prompt(0)
    assert system == {"role": "system", "content": [{"type": "text", "value": SYSTEM}]}
    assert [p["type"] for p in user["content"]] == ["text", "video", "text"]
    assert user["content"][0]["value"] == "Question: [0] Is this video tampered?\nOptions:\n(A) Yes\n(B) No"
    assert user["content"][2]["value"] == "\nOnly give the best option."
    assert prefill == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    video = user["content"][1]["value"]
    assert read_plan(video).rule == "segments"
    assert Path(video).resolve() == (tmp_path / "snap/video/perception/videos/a.mp4").resolve()


@pytest.mark.parametrize("row, nframe, expected", [(0, 4, [4, 14, 24, 33]), (1, 3, [3, 9, 16])])
def test_frames_are_vlmevalkits(bench: MVTamperBench, row: int, nframe: int, expected: list[int]):
    n = FRAMES["a.mp4" if row == 0 else "b.mp4"]
    # seg 9.75: 4.875 + 0, 10, 20 (19.5 to even), 29; seg 19 / 3: 3.17 + 0, 6, 13
    assert segment_frames(n, nframe) == expected
    video = bench.build_prompt(row)[1]["content"][1]["value"]
    assert [frame_number(f) for f in sample_frames(video, nframe=nframe).frames] == expected


def test_fps_is_refused(bench: MVTamperBench):
    video = bench.build_prompt(0)[1]["content"][1]["value"]
    with pytest.raises(ValueError, match="refuses fps"):
        sample_frames(video, fps=1.0)


DETECTION = {  # dropping: original rows + row 4; masking: original rows + rows 1, 2 (worked in the module's terms)
    "detection accuracy": (2 / 3 + 1 / 4) / 2, "detection precision": (0.5 + 0.0) / 2,
    "detection recall": (1.0 + 0.0) / 2, "detection F1": (2 / 3 + 0.0) / 2,
    "detection F1: dropping": 2 / 3, "detection F1: masking": 0.0,
}


def test_score_by_hand(bench: MVTamperBench):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, False, False, False, True]
    assert result.metrics == pytest.approx({
        "Overall": 40.0, "Action Count": 50.0, "Moving Count": 100 / 3, "tamper_type: original": 50.0,
        "tamper_type: masking": 0.0, "tamper_type: dropping": 100.0, "task_tamper_type: Action Count_original": 100.0,
        "task_tamper_type: Action Count_masking": 0.0, "task_tamper_type: Moving Count_masking": 0.0,
        "task_tamper_type: Moving Count_original": 0.0, "task_tamper_type: Moving Count_dropping": 100.0,
        **DETECTION,
    })  # fmt: skip
    assert result.primary == "Overall" and result.scorer == "mvtamperbench"
    theirs = result.vlmevalkit.metrics
    assert {k: v for k, v in theirs.items() if not k.startswith("detection")} == {
        "Overall": 60.0, "Action Count": 50.0, "Moving Count": 66.67, "tamper_type: original": 50.0,
        "tamper_type: masking": 50.0, "tamper_type: dropping": 100.0, "task_tamper_type: Action Count_original": 100.0,
        "task_tamper_type: Action Count_masking": 0.0, "task_tamper_type: Moving Count_masking": 100.0,
        "task_tamper_type: Moving Count_original": 0.0, "task_tamper_type: Moving Count_dropping": 100.0,
    }  # fmt: skip
    assert {k: v for k, v in theirs.items() if k.startswith("detection")} == pytest.approx(DETECTION)
    assert [d.index for d in result.vlmevalkit.differing] == [2]


def test_variants_read_their_own_repository(tmp_path: Path):
    cache = tmp_path / "hub"
    with pytest.raises(DatasetError, match="no local snapshot of Srikant86/MVTamperBenchEnd"):
        MVTamperBenchEnd("MVTamperBenchEnd", root=tmp_path, hub_cache=cache)


def test_a_snapshot_without_videos_is_one_line(tmp_path: Path):
    root = tmp_path / "snap"
    (root / "json").mkdir(parents=True)
    for task, file, _ in TASKS:
        (root / "json" / file).write_text(json.dumps([item(0, "x.mp4", "original", "No")] if task in FILES else []))
    with pytest.raises(DatasetError, match=r"video: none of the 3 questions' videos is there; unzip"):
        MVTamperBench("MVTamperBench", data_root=root, root=tmp_path)


def test_a_bad_item_names_its_file_and_field(tmp_path: Path):
    bad = {"Action Count": [{k: v for k, v in item(0, "a.mp4", "original", "No").items() if k != "tamper_type"}]}
    with pytest.raises(DatasetError, match=r"action_count\.json: item 0, field tamper_type: missing"):
        MVTamperBench("MVTamperBench", data_root=write_snapshot(tmp_path / "snap", bad), root=tmp_path)


ROW = (
    "MVTamperBench\tvideo\tok\tmvtamperbench\toptional\t\tdatasets_tsv.benchmarks.mvtamperbench:MVTamperBench\t{}\t"
    "\t\tMVTamperBench from a local snapshot of Srikant86/MVTamperBench (--data-root DIR, or the Hugging Face cache; "
    "VLMEvalKit runs it at --nframe 8)\tno download: the rows are read from a local snapshot of "
    "Srikant86/MVTamperBench (json/<task>.json, videos unzipped under video/); VLMEvalKit's MVTamperBench.tsv MD5 "
    "3557260881ba47db8add440c5edb742a is of a TSV vlmkit does not build\tVideo-MCQ\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = run("--data", "MVTamperBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 5
    system, user, prefill = requests[0].body["messages"]
    assert system == {"role": "system", "content": SYSTEM}
    assert [p["type"] for p in user["content"]] == ["text"] + ["image_url"] * 4 + ["text"]
    assert user["content"][0]["text"] == "Question: [0] Is this video tampered?\nOptions:\n(A) Yes\n(B) No"
    assert prefill == {"role": "assistant", "content": "Best option:("}
    assert frames_sent(user["content"]) == segment_frames(40, 4)
    scoring = json.loads((work / "served" / "MVTamperBench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == pytest.approx(40.0)
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == 60.0


def write_one_question(folder: Path) -> Path:
    """The smallest MVTamperBench snapshot (one question), for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, {"Action Count": [item(0, "a.mp4", "original", "No")]})


def test_through_a_local_qwen2_vl_with_native_video(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    from tests.support.tiny_models import build_tiny_qwen2_vl

    with_rows(monkeypatch, ROW)
    model = build_tiny_qwen2_vl(tmp_path / "tiny-qwen2-vl")
    snapshot = write_snapshot(tmp_path / "snap", {"Action Count": ITEMS["Action Count"]})
    work = tmp_path / "out"
    assert run("--data", "MVTamperBench", "--data-root", str(snapshot), "--model", "tiny", "--model-path", str(model),
               "--work-dir", str(work), "--nframe", "2", "--max-tokens", "2", "--batch-size", "2") == 0
    results = json.loads((work / "tiny" / "MVTamperBench" / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == 2
    assert results["model"]["settings"]["video_input"] == "native"
    record = json.loads((work / "tiny" / "MVTamperBench" / "predictions.jsonl").open().readline())
    assert record["prompt"][0] == {"role": "system", "content": [{"type": "text", "value": SYSTEM}]}
    assert record["prompt"][-1] == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    assert isinstance(record["prediction"], str) and record["error"] is None
