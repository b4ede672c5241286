"""VSI-Bench from a miniature snapshot in its real layout (the EASI TSV in $LMUData, the scene videos under the
snapshot's dataset folders): VLMEvalKit's prompt (written out literally from vlmeval/dataset/vsibench.py at e8e78f05),
its frames (uniform_tail), and the score worked by hand, through the dataset and end to end through an API model."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from datasets_tsv.benchmarks.vsi_bench import VsiBench
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Reply, chat_reply
from tests.support.tsvs import write_tsv
from vlmkit.core.video import read_plan, sample_frames

OPTIONS = "['A. left', 'B. right', 'C. behind', 'D. front']"
ROWS = [  # index, video, question_type, answer, candidates
    (0, "arkitscenes/a.mp4", "object_counting", "4", ""),
    (1, "arkitscenes/a.mp4", "object_counting", "10", ""),
    (2, "scannet/b.mp4", "object_abs_distance", "2.0", ""),
    (3, "scannet/b.mp4", "room_size_estimation", "20", ""),
    (4, "arkitscenes/a.mp4", "object_rel_direction_easy", "A", OPTIONS),
    (5, "arkitscenes/a.mp4", "object_rel_direction_medium", "B", OPTIONS),
    (6, "scannet/b.mp4", "object_rel_direction_hard", "C", OPTIONS),
    (7, "scannet/b.mp4", "route_planning", "A", OPTIONS),
    (8, "arkitscenes/a.mp4", "obj_appearance_order", "D", OPTIONS),
]
FRAMES = {"arkitscenes/a.mp4": 50, "scannet/b.mp4": 37}
# [0] 4 for 4: MRA 1. [1] 12 for 10: error 0.2, 6 of 10 thresholds: 0.6. [2] 3 for 2 (tagged): error 0.5: 0.1.
# [3] empty: 0. [4] A: right. [5] reads A for B: wrong. [6] right. [7] "N/A" reads A (right); VLMEvalKit's xlsx
# gives it back as NaN, "nan", no letter: a miss there. [8] the call fails: a miss.
REPLIES = ["There are 4 chairs.", "12", "<answer>3</answer> meters", "", "A", "The answer is A.", "C", "N/A", None]
# per type: counting (1 + 0.6) / 2 = 0.8, abs distance 0.1, room size 0, rel direction (1 + 0 + 1) / 3, route 1,
# appearance order 0; Overall = their mean
OURS = {"object_counting_MRA:.5:.95:.05": 80.0, "object_abs_distance_MRA:.5:.95:.05": 10.0,
        "room_size_estimation_MRA:.5:.95:.05": 0.0, "object_rel_direction_accuracy": 200 / 3,
        "route_planning_accuracy": 100.0, "obj_appearance_order_accuracy": 0.0}
OURS_OVERALL = (0.8 + 0.1 + 0.0 + 2 / 3 + 1.0 + 0.0) / 6 * 100
THEIR_OVERALL = (0.8 + 0.1 + 0.0 + 2 / 3 + 0.0 + 0.0) / 6 * 100


def question(i: int) -> str:
    return f"[{i}] What is it?"


def write_vsi(lmu: Path, snapshot: Path, name: str = "VSI-Bench", rows=ROWS) -> Path:
    write_tsv(lmu / f"{name}.tsv", [
        {"index": i, "video": video, "question": question(i), "question_type": kind, "answer": answer,
         "candidates": candidates, "dataset": video.split("/")[0]}
        for i, video, kind, answer, candidates in rows
    ])  # fmt: skip
    for video, frames in FRAMES.items():
        write_indexed_video(snapshot / video, frames=frames, fps=10.0)
    return snapshot


@pytest.fixture
def vsi(tmp_path: Path) -> VsiBench:
    lmu = tmp_path / "LMUData"
    return VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "VSI-Bench"), root=lmu)


def test_vlmevalkits_prompt(vsi: VsiBench, tmp_path: Path):
    parts = vsi.build_prompt(4)
    assert [p["type"] for p in parts] == ["video", "text"]
    assert parts[1]["value"] == ("These are frames of a video.\n[4] What is it?\nA. left\nB. right\nC. behind\n"
                                 "D. front\nAnswer with the option's letter from the given choices directly.")
    assert vsi.build_prompt(2)[1]["value"] == ("These are frames of a video.\n[2] What is it?\n"
                                               "Answer briefly and directly in one float number.")
    video = parts[0]["value"]
    assert Path(read_plan(video).source) == (tmp_path / "VSI-Bench" / "arkitscenes" / "a.mp4").resolve()
    assert read_plan(video).rule == "linspace_tail"


def vsibench_indices(n: int, v: float, nframe: int = 0, fps: float = -1) -> list[int]:
    """VLMEvalKit's VsiBench.save_video_frames (uniform_tail), as written there."""
    if nframe > 0:
        indices = np.linspace(0, n - 1, nframe, dtype=int).tolist()
    else:
        indices = [int(i * (v / fps)) for i in range(int(n / v * fps))]
    if (n - 1) != indices[-1]:
        indices.append(n - 1)
    return indices


@pytest.mark.parametrize("row, setting, frames", [
    (0, {"nframe": 4}, 50), (0, {"nframe": 1}, 50), (2, {"nframe": 8}, 37), (2, {"fps": 1.0}, 37),
    (0, {"fps": 0.5}, 50),
])  # fmt: skip
def test_vlmevalkits_frames(vsi: VsiBench, row: int, setting: dict, frames: int):
    video = vsi.build_prompt(row)[0]["value"]
    expected = vsibench_indices(frames, 10.0, **setting)
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected
    if setting == {"fps": 1.0}:
        assert expected == [0, 10, 20, 36]  # 3.7 s at 1 fps: 3 frames, then the last frame


def test_score_by_hand(vsi: VsiBench):
    result = vsi.evaluate(vsi.data.assign(prediction=REPLIES))
    assert result.primary == "Overall" and result.scorer == "spatial_video"
    assert result.metrics == pytest.approx({"Overall": OURS_OVERALL, **OURS})
    assert list(result.metrics) == ["Overall", "object_counting_MRA:.5:.95:.05", "object_abs_distance_MRA:.5:.95:.05",
                                    "room_size_estimation_MRA:.5:.95:.05", "object_rel_direction_accuracy",
                                    "route_planning_accuracy", "obj_appearance_order_accuracy"]  # VLMEvalKit's order
    assert result.per_sample["score"].tolist() == pytest.approx([1.0, 0.6, 0.1, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    assert result.vlmevalkit.metrics["Overall"] == pytest.approx(THEIR_OVERALL)
    assert result.vlmevalkit.metrics["route_planning_accuracy"] == 0.0
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(7, "A", None)]
    assert result.counts["inference_errors"] == 1 and result.counts["numeric"] == 4


def test_a_missing_relative_direction_keeps_the_others_apart(tmp_path: Path):
    rows = [r for r in ROWS if r[2] != "object_rel_direction_hard"]
    lmu = tmp_path / "LMUData"
    ds = VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "s", rows=rows), root=lmu)
    replies = [r for r, row in zip(REPLIES, ROWS) if row[2] != "object_rel_direction_hard"]
    metrics = ds.evaluate(ds.data.assign(prediction=replies)).metrics
    # VLMEvalKit merges only when all three are there; then easy (1) and medium (0) count as two types of seven
    assert metrics["Overall"] == pytest.approx((0.8 + 0.1 + 0.0 + 1.0 + 0.0 + 1.0 + 0.0) / 7 * 100)
    assert metrics["object_rel_direction_easy_accuracy"] == 100.0


def test_bad_rows_are_one_line(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    bad = [(0, "arkitscenes/a.mp4", "object_weight", "4", "")]
    with pytest.raises(DatasetError, match=r"VSI-Bench\.tsv: row 0, field question_type: unknown question type"):
        VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "s", rows=bad), root=lmu)
    bad = [(0, "arkitscenes/a.mp4", "route_planning", "A", "A. left")]
    with pytest.raises(DatasetError, match=r"VSI-Bench\.tsv: row 0, field candidates: not a list of options"):
        VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "s", rows=bad), root=lmu)
    bad = [(0, "../a.mp4", "route_planning", "A", OPTIONS)]
    with pytest.raises(DatasetError, match=r"row 0, field video: '\.\./a\.mp4' is not a path inside"):
        VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "s", rows=bad), root=lmu)
    bad = [(0, "scannetpp/c.mp4", "route_planning", "A", OPTIONS)]
    with pytest.raises(DatasetError, match=r"c\.mp4: missing, needed by VSI-Bench row 0"):
        VsiBench("VSI-Bench", data_root=write_vsi(lmu, tmp_path / "s", rows=bad), root=lmu)


def test_a_tsv_that_is_not_the_catalogs_needs_keep_local_tsv(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    snapshot = write_vsi(lmu, tmp_path / "s")
    with pytest.raises(DatasetError, match=r"MD5 [0-9a-f]{32} differs from the catalog's 34544fd8"):
        VsiBench("VSI-Bench", data_root=snapshot, root=lmu, md5="34544fd83241391d83eff087a1be7d83")
    ds = VsiBench("VSI-Bench", data_root=snapshot, root=lmu, md5="34544fd83241391d83eff087a1be7d83",
                  keep_local_tsv=True)
    assert ds.info()["md5_mismatch_accepted"] is True


def frames_sent(content: list[dict]) -> list[int]:
    """The numbers of the frames a chat request carries, in order."""
    images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content if p["type"] == "image_url"]
    return [frame_number(Image.open(io.BytesIO(data)).convert("RGB")) for data in images]


def test_vsi_bench_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from vlmkit.cli.main import main

    snapshot = write_vsi(lmu_root, tmp_path / "VSI-Bench")

    def reply(request):
        text = REPLIES[row_of(request)]
        return Reply(400, {"error": {"message": "bad request"}}) if text is None else chat_reply(text)

    work = tmp_path / "out"
    with FaultServer(chat_only(reply)) as server:
        code = main(["run", "--data", "VSI-Bench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                     server.base_url, "--work-dir", str(work), "--nframe", "4", "--retries", "0", "--keep-local-tsv"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 3  # finished, one row failed
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 4 + ["text"]
    assert frames_sent(user["content"]) == [0, 16, 32, 49]  # np.linspace(0, 49, 4, dtype=int)
    assert user["content"][-1]["text"] == ("These are frames of a video.\n[0] What is it?\n"
                                           "Answer briefly and directly in one float number.")
    scoring = json.loads((work / "served" / "VSI-Bench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": OURS_OVERALL, **OURS})
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == pytest.approx(THEIR_OVERALL)
