"""ReVSI from a miniature snapshot in its layout (the <frames>.tsv VLMEvalKit writes into the snapshot, video.zip
unpacked into revsi_videos/<frames>/): VLMEvalKit's prompt (written out literally from vlmeval/dataset/revsi.py at
e8e78f05), its frames (the Video-MME rule, fps refused) and ReVSI's own score worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.revsi import ReVSI
from datasets_tsv.io.tsv_read import DatasetError
from tests.datasets_tsv.benchmarks.test_vsi_bench import frames_sent
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from tests.support.tsvs import write_tsv
from vlmkit.core.video import VideoError, sample_frames
from vlmkit.scoring.benchmarks.spatial_video import revsi_mra, revsi_word

OPTIONS = "['A. left', 'B. right']"
ROWS = [  # question_type, ground_truth, options
    ("object_counting_single", "4", ""), ("object_counting_multiple", "10", ""),
    ("room_size_estimation_single", "20", ""), ("object_rel_direction_forward_easy", "A", OPTIONS),
    ("object_rel_direction_backward_hard", "B", OPTIONS), ("route_planning", "A", OPTIONS),
    ("object_abs_distance", "0", ""),
]
# [0] "4." reads 4: MRA 1. [1] 12 for 10: 0.6. [2] first word "About": 0. [3] "a" equals "A": right. [4] right.
# [5] "N/A" is not "A": wrong (VLMEvalKit reads "nan": wrong too). [6] answer 0: ReVSI divides by it: 0.
REPLIES = ["4.", "12 chairs", "About 20", "a. left", "B", "N/A", "0"]
# counting (1 + 0.6) / 2, room size 0 (single only), rel direction (1 + 1) / 2, route 0, abs distance 0
METRICS = {"overall_accuracy": (0.8 + 0.0 + 1.0 + 0.0 + 0.0) / 5, "object_abs_distance_accuracy": 0.0,
           "route_planning_accuracy": 0.0, "object_rel_direction_accuracy": 1.0, "object_counting_accuracy": 0.8,
           "room_size_estimation_accuracy": 0.0}


def write_revsi(snapshot: Path, subset: str = "16_frame") -> Path:
    write_tsv(snapshot / f"{subset}.tsv", [
        {"scene_id": f"scene{i % 2}", "question": f"[{i}] What about the room?", "question_type": kind,
         "ground_truth": truth, "options": options, "video": f"scene{i % 2}.mp4"}
        for i, (kind, truth, options) in enumerate(ROWS)
    ])  # fmt: skip
    for scene, frames in (("scene0", 40), ("scene1", 33)):
        write_indexed_video(snapshot / "revsi_videos" / subset / f"{scene}.mp4", frames=frames, fps=10.0)
    return snapshot


@pytest.fixture
def revsi(tmp_path: Path) -> ReVSI:
    return ReVSI("ReVSI", frames=16, data_root=write_revsi(tmp_path / "ReVSI"), root=tmp_path / "LMUData")


def test_prompt_frames_and_refused_fps(revsi: ReVSI):
    assert revsi.data["index"].tolist() == list(range(7))
    assert revsi.build_prompt(0)[1]["value"] == ("These are frames of a video.\n[0] What about the room?\n"
                                                 "Answer the question using a single integer or decimal number.")
    parts = revsi.build_prompt(3)
    assert parts[1]["value"] == ("These are frames of a video.\n[3] What about the room?\nOptions:\nA. left\nB. right\n"
                                 "Answer with the option's letter from the given choices directly.")
    frames = sample_frames(parts[0]["value"], nframe=4).frames  # scene1: 33 frames, int(i * 33 / 5)
    assert [frame_number(f) for f in frames] == [int(i * 33 / 5) for i in range(1, 5)] == [6, 13, 19, 26]
    with pytest.raises(VideoError, match="ReVSI samples by nframe only"):
        sample_frames(parts[0]["value"], fps=1.0)
    assert any("--nframe 16" in note for note in revsi.notes)


def test_score_by_hand(revsi: ReVSI):
    result = revsi.evaluate(revsi.data.assign(prediction=REPLIES))
    assert result.per_sample["score"].tolist() == pytest.approx([1.0, 0.6, 0.0, 1.0, 1.0, 0.0, 0.0])
    assert result.metrics == pytest.approx(METRICS) and result.primary == "overall_accuracy"
    assert result.vlmevalkit.metrics == pytest.approx(METRICS)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(5, "N/A", "nan")]


def test_revsi_reading_rules():
    assert revsi_word("  12.5 meters.") == "12.5" and revsi_word("C.") == "C" and revsi_word("") == ""
    assert revsi_mra("12", "10") == pytest.approx(0.6) and revsi_mra("x", "10") == 0.0 and revsi_mra("1", "0") == 0.0


def test_bad_rows_and_missing_tables_are_one_line(tmp_path: Path):
    with pytest.raises(DatasetError, match=r"no 16_frame table"):
        ReVSI("ReVSI", frames=16, data_root=tmp_path, root=tmp_path / "LMUData")
    with pytest.raises(DatasetError, match=r"frames must be 16, 32, 64 or all"):
        ReVSI("ReVSI", frames=8, data_root=tmp_path, root=tmp_path / "LMUData")
    snapshot = write_revsi(tmp_path / "s", subset="all_frame")
    (snapshot / "revsi_videos" / "all_frame" / "scene1.mp4").unlink()
    with pytest.raises(DatasetError, match=r"scene1\.mp4: missing, needed by ReVSI row 1 .*video\.zip"):
        ReVSI("ReVSI", data_root=snapshot, root=tmp_path / "LMUData")


def test_revsi_through_an_api_model(lmu_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from vlmkit.cli.main import main

    snapshot = write_revsi(tmp_path / "ReVSI", subset="all_frame")  # the catalog row's default subset
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = main(["run", "--data", "ReVSI", "--data-root", str(snapshot), "--model", "served", "--api-base",
                     server.base_url, "--work-dir", str(work), "--nframe", "4"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0
    [user] = requests[0].body["messages"]
    assert frames_sent(user["content"]) == [8, 16, 24, 32]  # int(i * 40 / 5)
    scoring = json.loads((work / "served" / "ReVSI" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx(METRICS)
