"""AV-SpeakerBench from a miniature snapshot in its layout (test.tsv, the clips at the paths it names): VLMEvalKit's
frames-model prompt written here from vlmeval/dataset/av_speakerbench.py at e8e78f05, its frames, scores worked by
hand (vlmkit without VLMEvalKit's fall back to A, and VLMEvalKit's figure with it), and a run through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.benchmarks.av_speakerbench import AVSpeakerBench
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from vlmkit.core.video import sample_frames

SYSTEM = ("Carefully watch and listen to the clip. Based on your observations, select the best option that "
          "accurately addresses the question.")
AUDIO_VISUAL = ("\nSelect the best answer to the following multiple-choice question based on the audiovisual clip.\n"
                "Respond with only the letter (A, B, C, or D) of the correct option.\n")
VISUAL = ("\nSelect the best answer to the following multiple-choice question based on the silent visual clip.\n"
          "Rely on the visuals only and respond with the letter (A, B, C, or D).\n")
CHOICES = "['A. the man', 'B. the woman', 'C. nobody', 'D. both']"


def row(n: int, clip: str, task: int, answer: str) -> dict:
    return {"video": clip, "question": f"[{n}] Who speaks first?", "choices": CHOICES, "answer": answer,
            "task_id": task, "audio_visual_path": f"av/{clip}.mp4", "visual_path": f"visual/{clip}.mp4",
            "audio_path": f"audio/{clip}.wav"}


ROWS = [row(0, "clip1", 1, "B"), row(1, "clip1", 1, "A"), row(2, "clip2", 2, "C"), row(3, "clip2", 2, "D")]
FRAMES = {"clip1": 40, "clip2": 30}
# [0] the <answer> block: B, right; [1] no letter token: a miss (VLMEvalKit reads A: right there); [2] "Based"
# removed, token "c": right; [3] A for D
REPLIES = ["<think>maybe A</think><answer>B</answer>", "I don't know", "Based on the clip, c.", "The answer is A"]


def write_snapshot(root: Path, rows: list[dict] = ROWS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "test.tsv", sep="\t", index=False)
    for clip in {r["video"] for r in rows}:
        write_indexed_video(root / "av" / f"{clip}.mp4", FRAMES.get(clip, 16), fps=10.0)
        write_indexed_video(root / "visual" / f"{clip}.mp4", FRAMES.get(clip, 16), fps=10.0)
    return root


@pytest.fixture
def bench(tmp_path: Path) -> AVSpeakerBench:
    return AVSpeakerBench("AV-SpeakerBench", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_vlmevalkits_prompt_for_a_frames_model(bench: AVSpeakerBench, tmp_path: Path):
    parts = bench.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "video", "text", "text"]
    assert [parts[0]["value"], parts[2]["value"]] == [SYSTEM, AUDIO_VISUAL]
    assert parts[3]["value"] == ("[0] Who speaks first?\nA. the man\nB. the woman\nC. nobody\nD. both\n"
                                 "The best answer is:")
    assert Path(parts[1]["value"]).resolve() == (tmp_path / "snap" / "av" / "clip1.mp4").resolve()


def test_the_visual_variant(tmp_path: Path):
    bench = AVSpeakerBench("AV-SpeakerBench", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path,
                           use_audio=False)
    parts = bench.build_prompt(0)
    assert parts[2]["value"] == VISUAL
    assert Path(parts[1]["value"]).resolve() == (tmp_path / "snap" / "visual" / "clip1.mp4").resolve()


@pytest.mark.parametrize("setting, row_no, expected", [
    ({"nframe": 4}, 0, [8, 16, 24, 32]),  # int(i * 40 / 5)
    ({"fps": 1.0}, 2, [0, 10, 20]),  # 3 s: int(3 * 1) frames, int(i * 10 / 1)
])  # fmt: skip
def test_frames_are_vlmevalkits(bench: AVSpeakerBench, setting: dict, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[1]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(bench: AVSpeakerBench):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["extracted"].tolist() == ["B", None, "C", "A"]
    assert result.metrics == pytest.approx({"Overall": 50.0, "task: 1": 50.0, "task: 2": 50.0})
    assert result.vlmevalkit.metrics == pytest.approx({"Overall": 75.0, "task: 1": 100.0, "task: 2": 50.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(1, None, "A")]


def test_a_missing_clip_names_the_file(tmp_path: Path):
    root = write_snapshot(tmp_path / "snap")
    (root / "av" / "clip2.mp4").unlink()
    with pytest.raises(DatasetError, match=r"av/clip2\.mp4: missing, needed by AV-SpeakerBench row 2"):
        AVSpeakerBench("AV-SpeakerBench", data_root=root, root=tmp_path)


ROW = (
    "AV-SpeakerBench\tvideo\tok\tav_speakerbench\tnone\t\tdatasets_tsv.benchmarks.av_speakerbench:AVSpeakerBench\t{}"
    "\t\t\tAV-SpeakerBench (frames of the audiovisual clips, as VLMEvalKit feeds a frames model) from a local snapshot "
    "of plnguyen2908/AV-SpeakerBench, branch vlm_eval_version (--data-root DIR, or the Hugging Face cache)\t"
    "no download: the rows are read from a local snapshot of plnguyen2908/AV-SpeakerBench (test.tsv, zips unpacked; "
    "VLMEvalKit's MD5 803f732fbff54c0d1891532ffb0c3979 not checked); a reply with no letter is a miss where "
    "VLMEvalKit reads it as A\tVideo-MCQ\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = run("--data", "AV-SpeakerBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 4
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["text"] + ["image_url"] * 4 + ["text", "text"]
    assert user["content"][0]["text"] == SYSTEM and user["content"][5]["text"] == AUDIO_VISUAL
    assert frames_sent(user["content"]) == [8, 16, 24, 32]
    scoring = json.loads((work / "served" / "AV-SpeakerBench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 50.0, "task: 1": 50.0, "task: 2": 50.0})
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == pytest.approx(75.0)


def write_one_question(folder: Path) -> Path:
    """The smallest AV-SpeakerBench snapshot, for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, ROWS[:1])
