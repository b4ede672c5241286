"""STI-Bench, DSRBench and SiteBenchVideo from miniature snapshots in their layouts: VLMEvalKit's prompts (written out
literally from vlmeval/dataset/{stibench,dsrbench,sitebench}.py at e8e78f05), its linspace frames, the scores worked
by hand; DSRBench and STI-Bench end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from datasets_tsv.benchmarks.dsr_bench import DSRBench
from datasets_tsv.benchmarks.sitebench_video import SiteBenchVideo
from datasets_tsv.benchmarks.sti_bench import STIBench, pandas_texts
from datasets_tsv.io.tsv_read import DatasetError
from tests.datasets_tsv.benchmarks.test_vsi_bench import frames_sent
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames

DSR_URL = "https://huggingface.co/datasets/lmms-lab-si/EASI-Leaderboard-Data/resolve/main/DSRBench.tsv"


def linspace_indices(n: int, nframe: int) -> list[int]:
    """VLMEvalKit's nframe rule in these classes, as written there."""
    return np.linspace(0, n - 1, nframe, dtype=int).tolist()


# -- STI-Bench ------------------------------------------------------------------------------------------------------
STI_ROWS = [
    {"index": 0, "video": "videos/s.mp4", "question": "[0] How far did the car move?", "time_start": "0",
     "time_end": "3", "options": "['1 m', '2 m', '3 m']", "answer": "B", "task_type": "Displacement & Path Length"},
    {"index": 1, "video": "videos/s.mp4", "question": "[1] Where is the cup?", "time_start": "1.5", "time_end": "4",
     "options": "['left', 'right', 'behind']", "answer": "C", "task_type": "Spatial Relation"},
]
STI_REPLIES = {0: "B", 1: "A"}  # right, wrong


def write_sti(lmu: Path, snapshot: Path) -> Path:
    write_tsv(lmu / "STI-Bench.tsv", STI_ROWS)
    write_indexed_video(snapshot / "videos" / "s.mp4", frames=60, fps=10.0)
    return snapshot


def test_sti_prompt_frames_and_score(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    snapshot = write_sti(lmu, tmp_path / "snap")
    ds = STIBench("STI-Bench", data_root=snapshot, root=lmu, nframe=4)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text"]
    # 4 frames over 60 frames at 10 fps (6 s): 0.67 FPS; time_start is a float column (1.5), time_end whole numbers
    assert parts[1]["value"] == ("Answer the question below based on the frames provided, which are sampled at about "
                                 "0.67 FPS.\nQuestion: From 0.0 seconds to 3 seconds. [0] How far did the car move?\n"
                                 "A 1 m\nB 2 m\nC 3 m\nPlease output only the option you choose!")
    assert [frame_number(f) for f in sample_frames(parts[0]["value"], nframe=4).frames] == linspace_indices(60, 4)
    assert STIBench("STI-Bench", data_root=snapshot, root=lmu).build_prompt(1)[1]["value"].startswith(
        "Answer the question below based on the frames provided, which are sampled at about 5.00 FPS.\n"
        "Question: From 1.5 seconds to 4 seconds.")  # the default 30 frames over 6 s
    at_fps = STIBench("STI-Bench", data_root=snapshot, root=lmu, fps=1.0)
    assert "sampled at about 1.00 FPS.\n" in at_fps.build_prompt(0)[1]["value"]
    result = ds.evaluate(ds.data.assign(prediction=[STI_REPLIES[i] for i in range(2)]))
    assert result.metrics == {"Overall": 50.0, "Spatial Relation_accuracy": 0.0,
                              "Displacement & Path Length_accuracy": 100.0}
    assert list(result.metrics) == ["Overall", "Spatial Relation_accuracy", "Displacement & Path Length_accuracy"]


def test_pandas_texts_of_a_numeric_column():
    assert pandas_texts(["0", "3"]) == ["0", "3"]
    assert pandas_texts(["0", "1.5"]) == ["0.0", "1.5"]
    assert pandas_texts(["0", "x"]) == ["0", "x"]


def test_sti_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from vlmkit.cli.main import main

    snapshot = write_sti(lmu_root, tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(STI_REPLIES[row_of(request)]))) as server:
        code = main(["run", "--data", "STI-Bench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                     server.base_url, "--work-dir", str(work), "--nframe", "30", "--keep-local-tsv"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0
    [user] = requests[0].body["messages"]
    assert frames_sent(user["content"]) == linspace_indices(60, 30)
    assert "sampled at about 5.00 FPS." in user["content"][-1]["text"]
    scoring = json.loads((work / "served" / "STI-Bench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == 50.0


# -- DSRBench -------------------------------------------------------------------------------------------------------
DSR_ROWS = [
    {"index": 0, "video": "clips/d.mp4", "question": "[0] Which way does the dog run?",
     "options": '["A. north", "B. south"]', "answer": "A", "task_type": "abs_dir"},
    {"index": 1, "video": "clips/d.mp4", "question": "[1] Which way, seen from the cat?",
     "options": "['A. left', 'B. right']", "answer": "A", "task_type": "rel_dir"},
]
DSR_REPLIES = {0: "A", 1: "(B)"}  # right, wrong
FRAMES_TEXT = ("\nThese are the frames of a video. Select the best answer to the following multiple-choice question "
               "based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\n")


def write_dsr(snapshot: Path) -> Path:
    write_tsv(snapshot / "DSRBench.tsv", DSR_ROWS)  # the EASI snapshot holds the TSV too
    write_indexed_video(snapshot / "raw_data" / "dsr-bench" / "clips" / "d.mp4", frames=30, fps=10.0)
    return snapshot


def test_dsr_prompt_frames_and_score(tmp_path: Path):
    ds = DSRBench("DSRBench", data_root=write_dsr(tmp_path / "EASI"), root=tmp_path / "LMUData", url=DSR_URL)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "video", "text"]
    assert parts[0]["value"] == FRAMES_TEXT
    assert parts[2]["value"] == "Question: [0] Which way does the dog run?\nA. north\nB. south\nAnswer: "
    assert [frame_number(f) for f in sample_frames(parts[1]["value"], nframe=8).frames] == linspace_indices(30, 8)
    result = ds.evaluate(ds.data.assign(prediction=[DSR_REPLIES[i] for i in range(2)]))
    assert result.metrics == {"Overall": 50.0, "abs_dir_accuracy": 100.0, "rel_dir_accuracy": 0.0}


def test_dsr_without_a_tsv_or_videos_says_so_in_one_line(tmp_path: Path):
    snapshot = write_dsr(tmp_path / "EASI")
    (snapshot / "raw_data" / "dsr-bench" / "clips" / "d.mp4").unlink()
    with pytest.raises(DatasetError, match=r"d\.mp4: missing, needed by DSRBench row 0 .*raw_data/dsr-bench\.zip"):
        DSRBench("DSRBench", data_root=snapshot, root=tmp_path / "LMUData", url=DSR_URL)
    with pytest.raises(DatasetError, match=r"STI-Bench\.tsv: not found, and STI-Bench has no download URL"):
        STIBench("STI-Bench", data_root=snapshot, root=tmp_path / "LMUData")


def test_dsr_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from vlmkit.cli.main import main

    snapshot = write_dsr(tmp_path / "EASI")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(DSR_REPLIES[row_of(request)]))) as server:
        code = main(["run", "--data", "DSRBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                     server.base_url, "--work-dir", str(work), "--nframe", "4", "--keep-local-tsv"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0
    [user] = requests[1].body["messages"]
    assert user["content"][0]["text"] == FRAMES_TEXT
    assert frames_sent(user["content"]) == [0, 9, 19, 29]  # np.linspace(0, 29, 4, dtype=int)
    assert user["content"][-1]["text"] == "Question: [1] Which way, seen from the cat?\nA. left\nB. right\nAnswer: "
    scoring = json.loads((work / "served" / "DSRBench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == {"Overall": 50.0, "abs_dir_accuracy": 100.0, "rel_dir_accuracy": 0.0}


# -- SiteBenchVideo -------------------------------------------------------------------------------------------------
SITE_ROWS = [
    {"index": 0, "video_path": "/videos/v.mp4", "question": "[0] How many cups?", "candidates": "['1', '2', '3']",
     "answer": "A", "category": "counting & existence"},
    {"index": 1, "video_path": "/videos/v.mp4", "question": "[1] Is there a dog?", "candidates": "['yes', 'no', 'two']",
     "answer": "B", "category": "counting & existence"},
    {"index": 2, "video_path": "videos/v.mp4", "question": "[2] What is left of the cup?",
     "candidates": "['red', 'blue', 'green']", "answer": "C", "category": "spatial relationship reasoning"},
]


def test_sitebench_video_prompt_frames_and_score(tmp_path: Path):
    lmu = tmp_path / "LMUData"
    write_tsv(lmu / "SiteBenchVideo.tsv", SITE_ROWS)
    write_indexed_video(tmp_path / "SITE" / "videos" / "v.mp4", frames=25, fps=10.0)
    ds = SiteBenchVideo("SiteBenchVideo", data_root=tmp_path / "SITE", root=lmu)
    parts = ds.build_prompt(2)
    assert parts[1]["value"] == ("Select the best answer to the following multiple-choice question based on the video. "
                                 "Respond with only the letter of the correct option.\nQuestion: [2] What is left of "
                                 "the cup?\nOptions:\nA: red\nB: blue\nC: green\nGive me the answer letter directly. "
                                 "The best answer is:")
    assert [frame_number(f) for f in sample_frames(parts[0]["value"], nframe=6).frames] == linspace_indices(25, 6)
    # [0] right, [1] A for B, [2] right. CAA with 3 options a row: overall (2 - 1) / (3 - 1); counting
    # (1 - 2/3) / (2 - 2/3) = 1/4; spatial (1 - 1/3) / (1 - 1/3) = 1
    result = ds.evaluate(ds.data.assign(prediction=["A", "A", "C"]))
    assert result.metrics == pytest.approx({
        "Overall": 200 / 3, "overall_caa": 50.0, "counting & existence_accuracy": 50.0,
        "spatial relationship reasoning_accuracy": 100.0, "counting & existence_caa": 25.0,
        "spatial relationship reasoning_caa": 100.0})  # fmt: skip
    assert list(result.metrics)[:2] == ["Overall", "overall_caa"]
