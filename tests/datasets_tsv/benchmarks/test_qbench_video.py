"""QBench_Video_MCQ from a miniature snapshot in its layout (qbenchvideo_single_MCQ.tsv, video/): VLMEvalKit's prompt
texts written here from vlmeval/dataset/qbench_video.py at e8e78f05, its frames, scores worked by hand with its
check_ans_mcq, and a run end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.benchmarks.qbench_video import QBenchVideoMCQ
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Reply, chat_reply
from vlmkit.core.video import sample_frames

FRAMES_8 = ("\nYou will receive 8 distinct frames that have been uniformly sampled from a video sequence, arranged in "
            "the same temporal order as they appear in the video.\nPlease analyze these frames and answer the "
            "question based on your observations.\n")
POST = ("\nPlease answer the question in the following format: the uppercase letter of the correct answer option "
        "itself.\nPlease do not add any other answers beyond this.\n")
ROWS = [
    {"video": "v1", "video_path": "./video/v1.mp4", "question": "[0] How clear is it?\nA. Good\nB. Poor",
     "answer": "A. Good", "dimensions": "['Technical, Blur', 'Other']"},
    {"video": "v1", "video_path": "./video/v1.mp4", "question": "[1] Is it framed well?\nA. Yes\nB. Poor",
     "answer": "B. Poor", "dimensions": "['Aesthetic, Composition']"},
    {"video": "v2", "video_path": "./video/v2.mp4", "question": "[2] How bright?\nC. Medium\nD. Dark",
     "answer": "C. Medium", "dimensions": "['Technical']"},
    {"video": "v2", "video_path": "./video/v2.mp4", "question": "[3] How noisy?\nC. Some\nD. Dark",
     "answer": "D. Dark", "dimensions": "['Technical, Noise']"},
]
FRAMES = {"v1": 50, "v2": 30}
# [0] the choice itself; [1] holds "B."; [2] a line that is "C"; [3] "N/A" holds none (VLMEvalKit's xlsx gives it back
# as NaN, on which its evaluate stops)
REPLIES = ["A", "The answer is B. Poor", "C\nbecause it is", "N/A"]


def write_snapshot(root: Path, rows: list[dict] = ROWS) -> Path:
    (root / "video").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "qbenchvideo_single_MCQ.tsv", sep="\t", index=False)
    for video in {r["video"] for r in rows}:
        write_indexed_video(root / "video" / f"{video}.mp4", FRAMES.get(video, 16), fps=10.0)
    return root


@pytest.fixture
def bench(tmp_path: Path) -> QBenchVideoMCQ:
    return QBenchVideoMCQ("QBench_Video_MCQ", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_vlmevalkits_prompt(bench: QBenchVideoMCQ, tmp_path: Path):
    parts = bench.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "text", "video", "text"]
    assert [parts[0]["value"], parts[1]["value"], parts[3]["value"]] == [
        FRAMES_8, "[0] How clear is it?\nA. Good\nB. Poor", POST]
    assert Path(parts[2]["value"]).resolve() == (tmp_path / "snap" / "video" / "v1.mp4").resolve()
    assert bench.data["index"].tolist() == [0, 1, 2, 3]  # no index column: 0..n-1 as VLMEvalKit numbers them


def test_the_video_models_text_without_a_frame_count(tmp_path: Path):
    bench = QBenchVideoMCQ("QBench_Video_MCQ", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path, nframe=None)
    assert bench.build_prompt(0)[0]["value"] == FRAMES_8.replace("8 distinct", "several distinct")


@pytest.mark.parametrize("setting, row_no, expected", [
    ({"nframe": 4}, 0, [10, 20, 30, 40]),  # int(i * 50 / 5)
    ({"fps": 1.0}, 2, [0, 10, 20]),  # 3 s: int(3 * 1) frames, int(i * 10 / 1)
])  # fmt: skip
def test_frames_are_vlmevalkits(bench: QBenchVideoMCQ, setting: dict, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[2]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(bench: QBenchVideoMCQ):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, True, True, False]
    assert result.metrics == pytest.approx({"Overall": 0.75, "Technical": 2 / 3, "Aesthetic": 1.0})
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)
    assert any("TypeError" in note and "rows 3" in note for note in result.vlmevalkit.notes)


@pytest.mark.parametrize("reply, right", [("A.", True), ("Good", True), ("good", False), (" A", False),
                                          ("B\nA", True), ("I pick A", False)])
def test_check_ans_mcq_cases(bench: QBenchVideoMCQ, reply: str, right: bool):
    result = bench.evaluate(bench.data.assign(prediction=[reply, "x", "x", "x"]))
    assert bool(result.per_sample["hit"].iloc[0]) is right


def test_an_answer_without_its_letter_is_one_line(tmp_path: Path):
    rows = [dict(ROWS[0], answer="Good")]
    with pytest.raises(DatasetError, match=r"qbenchvideo_single_MCQ\.tsv: row 0, field answer: 'Good' is not"):
        QBenchVideoMCQ("QBench_Video_MCQ", data_root=write_snapshot(tmp_path / "s", rows), root=tmp_path)


ROW = (
    "QBench_Video_MCQ\tvideo\tok\tqbench_video\tnone\t\tdatasets_tsv.benchmarks.qbench_video:QBenchVideoMCQ\t{}\t\t\t"
    "QBench_Video_MCQ from a local snapshot of zhangzicheng/Q-Bench-Video (--data-root DIR, or the Hugging Face "
    "cache; its prompt names 8 frames: run the model with --nframe 8)\tno download: the rows are read from a local "
    "snapshot of zhangzicheng/Q-Bench-Video (qbenchvideo_single_MCQ.tsv, MD5 9d6760d75fa80aa9fd5e5cf1ea274ace, not "
    "checked; video.zip unpacked)\tVideo-MCQ\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"

    def reply(request) -> Reply:
        n = row_of(request)
        return Reply(400, {"error": {"message": "bad request"}}) if n == 3 else chat_reply(REPLIES[n])

    with FaultServer(chat_only(reply)) as server:
        code = run("--data", "QBench_Video_MCQ", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "8", "--retries", "0")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 3  # finished; row 3 failed
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["text", "text"] + ["image_url"] * 8 + ["text"]
    assert user["content"][0]["text"] == FRAMES_8 and user["content"][-1]["text"] == POST
    assert frames_sent(user["content"]) == [int(i * 50 / 9) for i in range(1, 9)]
    scoring = json.loads((work / "served" / "QBench_Video_MCQ" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 0.75, "Technical": 2 / 3, "Aesthetic": 1.0})
    # VLMEvalKit scores the failed call -1: Technical (1 + 1 - 1) / 3, overall (3 - 1) / 4
    assert scoring["vlmevalkit"]["metrics"] == pytest.approx({"Overall": 0.5, "Technical": 1 / 3, "Aesthetic": 1.0})


def write_one_question(folder: Path) -> Path:
    """The smallest QBench_Video_MCQ snapshot, for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, ROWS[:1])
