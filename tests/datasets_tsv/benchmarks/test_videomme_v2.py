"""Video-MME-v2 from a miniature snapshot in the layout VLMEvalKit leaves (Video-MME-v2.tsv, video/<id>.mp4): its
prompt and frames (worked by hand from vlmeval/dataset/videommev2.py at e8e78f05), the group scores worked by hand
(get_final_rating's relevance and logic maps), VLMEvalKit's figure, and a run end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.benchmarks.videomme_v2 import VideoMMEv2
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Reply, chat_reply
from vlmkit.core.video import read_plan, sample_frames
from vlmkit.judging.base import FunctionJudge

OPTIONS = "A. one\nB. two\nC. three\nD. four\nE. five\nF. six\nG. seven\nH. eight"
INSTRUCTION = ("Select the best answer to the following multiple-choice question based on the video. Respond with "
               "only the letter (A, B, C, D, E, F, G, or H) of the correct option.")


def row(n: int, video: int, answer: str, kind: str, structure: str, level: int, second: str, third: str) -> dict:
    return {"index": n, "video": str(video), "video_path": f"./video/{video:03d}.mp4",
            "subtitle_path": f"./subtitle/{video:03d}.jsonl", "url": "", "group_type": kind,
            "group_structure": structure, "question_id": f"q{n}", "question": f"[{n}] How many?", "options": OPTIONS,
            "answer": answer, "level": level, "second_head": second, "third_head": third}


ROWS = [row(n, 1, a, "relevance", "[1, 2, 3, 4]", 1, "Perception", "Counting") for n, a in enumerate("ABCD")]
ROWS += [row(4 + n, 12, a, "logic", "[1, [2, 3], 4]", 2, "Reasoning", "Causal") for n, a in enumerate("ABGD")]
FRAMES = {1: 50, 12: 30}
# [0] right after "Final Answer:"; [1] right; [2] E for C; [3] empty: nothing; [4] right; [5] C for B; [6] "Best
# option:" removed, G: right; [7] "N/A" reads A (a miss), nan in VLMEvalKit's xlsx (nothing: a miss)
REPLIES = ["Final Answer: A", "The answer is B.", "It is E", "", "A", "Option: C", "Best option: G", "N/A"]
# group 1 (relevance): 2 right -> 100 * 4 / 16 = 25, linear 50; group 2 (logic [1, [2, 3], 4]): right, wrong, right,
# wrong: the first only, and the third right counts for the second -> 2 -> 100 * 4 / 12
EXPECTED = {
    "level_1": 25.0, "level_2": 400 / 12, "level_3": 0.0, "relevance_score": 25.0, "relevance_linear_score": 50.0,
    "logic_score": 400 / 12, "total": (25.0 + 400 / 12) / 2, "second_head: Perception": 25.0,
    "second_head: Reasoning": 400 / 12, "third_head: Counting": 25.0, "third_head: Causal": 400 / 12,
}  # fmt: skip


def write_snapshot(root: Path, rows: list[dict] = ROWS) -> Path:
    (root / "video").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "Video-MME-v2.tsv", sep="\t", index=False)
    for video in {int(r["video"]) for r in rows}:
        write_indexed_video(root / "video" / f"{video:03d}.mp4", FRAMES.get(video, 16), fps=10.0)
    return root


@pytest.fixture
def bench(tmp_path: Path) -> VideoMMEv2:
    return VideoMMEv2("Video-MME-v2", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_vlmevalkits_prompt(bench: VideoMMEv2, tmp_path: Path):
    parts = bench.build_prompt(5)
    assert [p["type"] for p in parts] == ["video", "text", "text"]
    assert parts[1]["value"] == "These are the frames of a video."
    assert parts[2]["value"] == f"Question: [5] How many?\n{OPTIONS}\n{INSTRUCTION}"
    assert Path(parts[0]["value"]).resolve() == (tmp_path / "snap" / "video" / "012.mp4").resolve()
    assert read_plan(parts[0]["value"]).rule == "vlmevalkit" and bench.info()["table_source"] == "Video-MME-v2.tsv"


@pytest.mark.parametrize("setting, row_no, expected", [
    ({"nframe": 4}, 0, [10, 20, 30, 40]),  # int(i * 50 / 5)
    ({"nframe": 4}, 4, [6, 12, 18, 24]),  # int(i * 30 / 5)
    ({"fps": 2.0}, 4, [0, 5, 10, 15, 20, 25]),  # 3 s at 10 fps: int(3 * 2) = 6 frames, int(i * 10 / 2)
])  # fmt: skip
def test_frames_are_vlmevalkits(bench: VideoMMEv2, setting: dict, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_group_scores_by_hand(bench: VideoMMEv2):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, True, False, False, True, False, True, False]
    assert result.metrics == pytest.approx(EXPECTED) and result.primary == "total"
    assert result.vlmevalkit.metrics == pytest.approx(EXPECTED)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(7, "A", None)]


@pytest.mark.parametrize("structure, scores, expected", [
    ("[1, 2, 3, 4]", "TTTF", 900 / 16), ("[1, 2, 3, 4]", "FTTT", 0.0),
    ("[[1, 2], 3, 4]", "FTTF", 10.0),  # a right second counts as 1 when the first is wrong (the chain stops there)
    ("[[1, 2], 3, 4]", "TFTT", 10.0), ("[1, [2, 3], 4]", "TTTT", 100.0),
])  # fmt: skip
def test_logic_chains(tmp_path: Path, structure: str, scores: str, expected: float):
    rows = [row(n, 1, "A", "logic", structure, 3, "R", "C") for n in range(4)]
    bench = VideoMMEv2("Video-MME-v2", data_root=write_snapshot(tmp_path / "s", rows), root=tmp_path)
    result = bench.evaluate(bench.data.assign(prediction=["A" if s == "T" else "H" for s in scores]))
    assert result.metrics["logic_score"] == pytest.approx(expected) == result.metrics["level_3"]


def test_the_judge_gets_the_options_column(bench: VideoMMEv2):
    asked = []

    def answer(request) -> str:
        asked.append(request.prompt)
        return "C"

    replies = list(REPLIES)
    replies[2] = "no idea"  # no capital A-H: unread
    result = bench.evaluate(bench.data.assign(prediction=replies), judge=FunctionJudge(answer))
    assert any("C. three" in p and "H. eight" in p for p in asked)
    assert result.per_sample["hit"].tolist()[2] is True


def test_rows_not_in_groups_of_four_are_one_line(tmp_path: Path):
    with pytest.raises(DatasetError, match=r"Video-MME-v2\.tsv: 3 rows; .* groups of 4 rows"):
        VideoMMEv2("Video-MME-v2", data_root=write_snapshot(tmp_path / "s", ROWS[:3]), root=tmp_path)


def test_a_missing_video_names_the_file(tmp_path: Path):
    root = write_snapshot(tmp_path / "s")
    (root / "video" / "012.mp4").unlink()
    with pytest.raises(DatasetError, match=r"012\.mp4: missing, needed by Video-MME-v2 row 4"):
        VideoMMEv2("Video-MME-v2", data_root=root, root=tmp_path)


ROW = (
    "Video-MME-v2\tvideo\tok\tvideomme_v2\toptional\t\tdatasets_tsv.benchmarks.videomme_v2:VideoMMEv2\t{}\t\t\t"
    "Video-MME-v2 (no subtitles) from a local snapshot of MME-Benchmarks/Video-MME-v2 (--data-root DIR, or the "
    "Hugging Face cache; VLMEvalKit runs it at --nframe 64 or --fps 1)\tno download: the rows are read from a local "
    "snapshot of MME-Benchmarks/Video-MME-v2 (test.parquet, or the Video-MME-v2.tsv VLMEvalKit writes there, MD5 "
    "27826ea282386ee20d4b0054a58608db, not checked)\tVideo-MCQ\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"

    def reply(request) -> Reply:
        text = REPLIES[row_of(request)]
        return Reply(400, {"error": {"message": "bad request"}}) if row_of(request) == 1 else chat_reply(text)

    with FaultServer(chat_only(reply)) as server:
        code = run("--data", "Video-MME-v2", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4", "--retries", "0")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 3  # finished; row 1 failed
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 4 + ["text"] * 2
    assert [p["text"] for p in user["content"][4:]] == ["These are the frames of a video.",
                                                        f"Question: [0] How many?\n{OPTIONS}\n{INSTRUCTION}"]
    assert frames_sent(user["content"]) == [10, 20, 30, 40]
    scoring = json.loads((work / "served" / "Video-MME-v2" / "results.json").read_text())["scoring"]
    # row 1 failed: a miss; group 1 has 1 right -> 100 / 16
    assert scoring["metrics"]["relevance_score"] == pytest.approx(100 / 16)
    assert scoring["metrics"]["total"] == pytest.approx((100 / 16 + 400 / 12) / 2)
    # VLMEvalKit reads its fail message's "F" as option F: still a miss for answer B
    assert scoring["vlmevalkit"]["metrics"]["total"] == pytest.approx((100 / 16 + 400 / 12) / 2)


def write_one_question(folder: Path) -> Path:
    """The smallest Video-MME-v2 snapshot (one group of four), for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, ROWS[:4])
