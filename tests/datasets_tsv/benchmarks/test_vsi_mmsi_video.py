"""MMSI-Video-Bench from a miniature snapshot in its layout (the EASI TSV in $LMUData, frames.zip and ref_images.zip
unpacked): VLMEvalKit's prompt assembly and its sampling over the segments' frame files (written out from
vlmeval/dataset/mmsibench.py at e8e78f05), and the score worked by hand, also end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from datasets_tsv.benchmarks.mmsi_video import MMSIVideoBench, sampled_frames
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import write_indexed_folder
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from tests.support.tsvs import write_tsv

FRAMES = "[['frames/a/00001.jpg', 'frames/a/00002.jpg', 'frames/a/00003.jpg', 'frames/a/00004.jpg', " \
         "'frames/a/00005.jpg', 'frames/a/00006.jpg'], ['frames/b/00001.jpg', 'frames/b/00002.jpg', " \
         "'frames/b/00003.jpg', 'frames/b/00004.jpg']]"
TAGS = [  # task_type, sub_task_type, Easy2hard, Robot, answer
    ("Motion Understanding", "Camera Motion", "level_1", "", "A"),
    ("Spatial Construction", "Instance/Scene Attribute", "level_2", "Navigation", "B"),
    ("Motion Understanding", "Instance Motion", "level_1", "nan", "C"),
]
REPLIES = {0: "A", 1: "C", 2: "<answer>C</answer>"}  # right, wrong, right
METRICS = {
    "Overall": 200 / 3, "task_type.Spatial Construction_accuracy": 0.0,
    "task_type.Motion Understanding_accuracy": 100.0, "sub_task_type.Instance/Scene Attribute_accuracy": 0.0,
    "sub_task_type.Camera Motion_accuracy": 100.0, "sub_task_type.Instance Motion_accuracy": 100.0,
    "(Easy2hard)Avg": 200 / 3, "(Easy2hard)level_1": 100.0, "(Easy2hard)level_2": 0.0, "(Robot)Avg": 0.0,
    "(Robot)Navigation": 0.0,
}


def write_mmsi(lmu: Path, snapshot: Path) -> Path:
    write_tsv(lmu / "MMSIVideoBench.tsv", [
        {"index": i, "system_prompt": "You are an expert.", "task_prompt": "Watch the videos. ",
         "user_prompt": f"[{i}] Video 1: <video> Video 2: <video> Reference: <image> Which camera moved?",
         "format_prompt": "\nAnswer with the letter.", "image_path": FRAMES, "video_fps": 5.0,
         "ref_images": "['ref/r.png']", "answer": answer, "task_type": task, "sub_task_type": sub,
         "Easy2hard": level, "Robot": robot}
        for i, (task, sub, level, robot, answer) in enumerate(TAGS)
    ])  # fmt: skip
    write_indexed_folder(snapshot / "frames" / "a", 6)
    write_indexed_folder(snapshot / "frames" / "b", 4)
    (snapshot / "ref").mkdir(parents=True)
    Image.new("RGB", (8, 8), "red").save(snapshot / "ref" / "r.png")
    return snapshot


def vlmevalkit_global_picks(total: int, nframe: int = 0, fps: float = -1, video_fps: float = 0.0) -> list[int]:
    """MMSIVideoBench.save_video_frames' indices_global, as written there."""
    if nframe > 0:
        n = min(nframe, total)
        picks = list(range(total)) if n == total else np.linspace(0, total - 1, n, dtype=int).tolist()
    else:
        picks = [min(int(i * (video_fps / fps)), total - 1) for i in range(max(int(total / video_fps * fps), 1))]
    return list(dict.fromkeys(picks))


def test_prompt_and_frames(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    snapshot = write_mmsi(lmu, tmp_path / "MMSI")
    ds = MMSIVideoBench("MMSIVideoBench", data_root=snapshot, root=lmu, nframe=4)
    parts = ds.build_prompt(0)
    shown = [p["value"] if p["type"] == "text" else str(Path(p["value"]).relative_to(snapshot)) for p in parts]
    # picks 0, 3, 6, 9 of the 10 frames: a[0], a[3], then b[0], b[3]
    assert vlmevalkit_global_picks(10, nframe=4) == [0, 3, 6, 9]
    assert shown == ["You are an expert.\nWatch the videos. [0] Video 1: ", "frames/a/00001.jpg", "frames/a/00004.jpg",
                     " Video 2: ", "frames/b/00001.jpg", "frames/b/00004.jpg", " Reference: ", "ref/r.png",
                     " Which camera moved?\nAnswer with the letter."]
    segments = [[f"a{k}" for k in range(6)], [f"b{k}" for k in range(4)]]
    flat = segments[0] + segments[1]
    for setting, fps in (({"nframe": 30}, 0.0), ({"nframe": 7}, 0.0), ({"fps": 1.0}, 5.0), ({"fps": 2.0}, 5.0)):
        taken = sampled_frames(segments, setting, fps)
        assert taken[0] + taken[1] == [flat[i] for i in vlmevalkit_global_picks(10, video_fps=fps, **setting)]
    assert sampled_frames(segments, {"fps": 1.0}, 5.0) == [["a0", "a5"], []]  # 2 s at 1 fps: frames 0 and 5


def test_score_by_hand(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    ds = MMSIVideoBench("MMSIVideoBench", data_root=write_mmsi(lmu, tmp_path / "MMSI"), root=lmu)
    result = ds.evaluate(ds.data.assign(prediction=[REPLIES[i] for i in range(3)]))
    assert result.metrics == pytest.approx(METRICS)
    assert list(result.metrics)[:3] == ["Overall", "task_type.Spatial Construction_accuracy",
                                        "task_type.Motion Understanding_accuracy"]  # VLMEvalKit's order
    assert result.vlmevalkit.metrics == pytest.approx(METRICS)


def test_missing_frames_and_bad_marks_are_one_line(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    snapshot = write_mmsi(lmu, tmp_path / "MMSI")
    (snapshot / "frames" / "b" / "00001.jpg").unlink()
    with pytest.raises(DatasetError, match=r"b/00001\.jpg: missing, needed by MMSIVideoBench row 0 .*frames\.zip"):
        MMSIVideoBench("MMSIVideoBench", data_root=snapshot, root=lmu)
    text = (lmu / "MMSIVideoBench.tsv").read_text().replace("Reference: <image> ", "")
    (lmu / "MMSIVideoBench.tsv").write_text(text)
    with pytest.raises(DatasetError, match=r"row 0: the prompt has 2 <video> and 0 <image> marks for 2 segments and 1"):
        MMSIVideoBench("MMSIVideoBench", data_root=snapshot, root=lmu)


def test_mmsi_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from vlmkit.cli.main import main

    snapshot = write_mmsi(lmu_root, tmp_path / "MMSI")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = main(["run", "--data", "MMSIVideoBench", "--data-root", str(snapshot), "--model", "served",
                     "--api-base", server.base_url, "--work-dir", str(work), "--keep-local-tsv"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0
    [user] = requests[0].body["messages"]
    # the default 50 frames take all 10 frame files, and the reference image
    assert [p["type"] for p in user["content"]].count("image_url") == 11
    scoring = json.loads((work / "served" / "MMSIVideoBench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx(METRICS)
