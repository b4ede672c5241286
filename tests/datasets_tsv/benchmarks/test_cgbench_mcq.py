"""CG-Bench_MCQ_Grounding(_Mini) from a miniature snapshot in its layout (cgbench_mini.json, cg_videos_720p/,
cg_clue_videos/): rows three to a question, VLMEvalKit's instructions written here from vlmeval/dataset/cgbench.py at
e8e78f05, frames, scores worked by hand with its post_process (json result, letter and number fall backs), its
rating (long_acc, clue_acc, miou, CRR, acc@iou, rec@iou), and a run end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.cgbench_mcq import CGBenchMCQGrounding, CGBenchMCQGroundingMini
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, chat_reply
from vlmkit.core.video import sample_frames
from vlmkit.scoring.benchmarks.cgbench_mcq import cgbench_score

MCQ = ("You will be provided with sampled frames from a video, along with a multiple-choice question that includes a "
       "question and several answer options.\nYour task is to analyze the provided frames, infer the most plausible "
       "answer based on the visual information.\nIf the video does not provide enough information, infer the answer "
       "based on the options available and still provide a result. Therefore, In all cases, an answer must be "
       "given.\nOnly output the answer in the following format:\n\n```json\n{\"result\": \"option\"}\n```\n\n"
       "The \"option\" is the uppercase letter corresponding to your answer.\n\n")
MIOU = ("You will be provided with uniformly sampled frames from a video, along with a multiple-choice question that "
        "includes a question and several answer options.\nYour task is to determine in which intervals the 'clue "
        "intervals' exist that contain visual information needed to answer the question.\nOnly output the answer in "
        "the following format:\n\n```json\n{\"result\": [[start1, end1], [start2, end2], ...]}\n```\n\nIn this "
        "output format, each \"start\" and \"end\" represents the start and end of the video where the relevant clue "
        "can be found in the form of a floating point number between 0 and 1, where 0 represents the start time of "
        "the video and 1 represents the end time of the video.\nYou must provide at least one interval and at most "
        "five intervals. Intervals exceeding five will NOT be considered valid.\n")
ITEMS = [
    {"qid": "q1", "video_uid": "vid1", "duration": 600, "domain": "News", "sub_category": "Time Cognition",
     "question": "[q1] What runs?", "choices": ["cat", "dog", "bird"], "right_answer": "B",
     "clue_intervals": [[100, 200]]},
    {"qid": "q2", "video_uid": "vid2", "duration": 1500, "domain": "GUI", "sub_category": "Text Perception",
     "question": "[q2] What is written?", "choices": ["a", "b", "c", "d"], "right_answer": "D",
     "clue_intervals": [[0, 50], [40, 100]]},
]
# rows: q1 long, q2 long, q1 clue, q2 clue, q1 miou, q2 miou
REPLIES = {
    ("q1", "long_acc"): '```json\n{"result": B}\n```',  # the bare B is quoted: right
    ("q2", "long_acc"): "I think A or D",  # no block: any standalone A-H that is the answer: right
    ("q1", "clue_acc"): '```json\n{"result": "B"}\n```',  # right
    ("q2", "clue_acc"): "no idea",  # nothing read: 0 (VLMEvalKit leaves the row out)
    ("q1", "miou"): '```json\n{"result": [0.2, 0.3]}\n```',  # fractions of 600 s: [120, 180] vs [100, 200]: 0.6
    ("q2", "miou"): "From 0 to 50 and 80 to 120 seconds",  # pairs [0, 50], [80, 120] vs merged [0, 100]: 70 / 120
}
SCORES = [1.0, 1.0, 1.0, 0.0, 0.6, 70 / 120]


def write_snapshot(root: Path, items: list[dict] = ITEMS, name: str = "cgbench_mini.json") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(json.dumps(items))
    for item in items:  # whole videos of 250 s at 1 frame a second: the clue intervals' seconds are frame numbers
        write_indexed_video(root / "cg_videos_720p" / f"{item['video_uid']}.mp4", 250, fps=1.0)
        write_indexed_video(root / "cg_clue_videos" / f"{item['qid']}.mp4", 20, fps=10.0)
    return root


@pytest.fixture
def bench(tmp_path: Path) -> CGBenchMCQGroundingMini:
    return CGBenchMCQGroundingMini("CG-Bench_MCQ_Grounding_Mini", data_root=write_snapshot(tmp_path / "snap"),
                                   root=tmp_path)


def replies_for(data) -> list[str]:
    return [REPLIES[(q, m)] for q, m in zip(data["qid"], data["task_mode"])]


def test_three_rows_a_question_and_vlmevalkits_prompts(bench: CGBenchMCQGroundingMini, tmp_path: Path):
    assert list(zip(bench.data["qid"], bench.data["task_mode"])) == [
        ("q1", "long_acc"), ("q2", "long_acc"), ("q1", "clue_acc"), ("q2", "clue_acc"), ("q1", "miou"), ("q2", "miou")]
    parts = bench.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text"]
    assert parts[1]["value"] == MCQ + "Question: [q1] What runs?\n\nA:cat\nB:dog\nC:bird\n\n"
    assert bench.build_prompt(2)[1]["value"] == MCQ.replace('The "option"', "The 'option'") + (
        "Question: [q1] What runs?\n\nA:cat\nB:dog\nC:bird\n\n")
    assert bench.build_prompt(5)[1]["value"] == MIOU + "Question: [q2] What is written?\n\nA:a\nB:b\nC:c\nD:d\n\n"
    snap = tmp_path / "snap"
    assert Path(bench.build_prompt(0)[0]["value"]).resolve() == (snap / "cg_videos_720p" / "vid1.mp4").resolve()
    assert Path(bench.build_prompt(2)[0]["value"]).resolve() == (snap / "cg_clue_videos" / "q1.mp4").resolve()


@pytest.mark.parametrize("row_no, expected", [
    (0, [50, 100, 150, 200]),  # long_acc: int(i * 250 / 5) of the whole video
    (4, [50, 100, 150, 200]),  # miou: the same
    # clue_acc, VLMEvalKit's sample_frames_clue_average over the whole video: q1 [100, 200] s -> frames [100, 200),
    # 4 frames, seg 25: int(100 + 12.5 + 25 k); q2 [0, 50] and [40, 100] merge into [0, 100): int(12.5 + 25 k)
    (2, [112, 137, 162, 187]), (3, [12, 37, 62, 87]),
])  # fmt: skip
def test_frames(bench: CGBenchMCQGroundingMini, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, nframe=4).frames] == expected


def test_clue_frames_by_fps_and_above_32(bench: CGBenchMCQGroundingMini):
    video = bench.build_prompt(2)[0]["value"]  # q1: [100, 200) at 1 frame a second
    by_fps = sample_frames(video, fps=0.5)  # every 2nd frame: 50 frames, at least 32
    assert [frame_number(f) for f in by_fps.frames] == list(range(100, 200, 2))
    sparse = sample_frames(video, fps=0.25)  # 25 frames: fewer than 32, so 32 spread: int(100 + 1.5625 + 3.125 k)
    assert [frame_number(f) for f in sparse.frames] == [int(100 + 1.5625 + 3.125 * k) for k in range(32)]
    capped = sample_frames(video, nframe=64)  # VLMEvalKit lowers N to 32 for clue_acc rows
    assert [frame_number(f) for f in capped.frames] == [frame_number(f) for f in sparse.frames]
    assert len(sample_frames(bench.build_prompt(0)[0]["value"], nframe=64).frames) == 64  # long_acc: not capped


@pytest.mark.parametrize("reply, mode, answer, score", [
    ('```json\n{"result": "A"}\n```', "long_acc", "A", 1.0), ("The answer is C.", "long_acc", "B", 0.0),
    ("", "long_acc", "B", -1.0), ('```json\n{"result": 3}\n```', "miou", "[[0, 10]]", -1.0),  # not a list: unscored
    ("0.5", "miou", "[[0, 10]]", -1.0),  # one number
    ("1 2 3", "miou", "[[0, 2]]", 0.5),  # odd last number dropped: [1, 2] vs [0, 2]
])  # fmt: skip
def test_post_process_cases(reply: str, mode: str, answer: str, score: float):
    assert cgbench_score(reply, answer, mode, 100.0) == pytest.approx(score)


def test_score_by_hand(bench: CGBenchMCQGroundingMini):
    result = bench.evaluate(bench.data.assign(prediction=replies_for(bench.data)))
    assert result.per_sample["score"].tolist() == pytest.approx(SCORES)
    miou = (0.6 + 70 / 120) / 2
    assert {k: v for k, v in result.metrics.items() if ":" not in k} == pytest.approx({
        "long_acc": 1.0, "clue_acc": 0.5, "miou": miou, "CRR": 1.0, "acc@iou": 1.0, "rec@iou": 1.0})
    assert result.metrics["miou: duration 0 ~ 10"] == pytest.approx(0.6)  # 600 s = 10 min, right edge included
    assert result.metrics["miou: duration 20 ~ 30"] == pytest.approx(70 / 120)
    assert result.metrics["clue_acc: domain GUI"] == 0.0 and result.primary == "long_acc"
    theirs = result.vlmevalkit.metrics
    assert theirs["clue_acc"] == 1.0 and "clue_acc: domain GUI" not in theirs  # q2's clue row left out
    assert theirs["miou"] == round(miou, 4) and theirs["CRR"] == 1.0


def test_acc_at_iou_counts_questions_right_above_each_threshold(bench: CGBenchMCQGroundingMini):
    replies = replies_for(bench.data)
    replies[4] = '```json\n{"result": [[150, 200]]}\n```'  # q1 miou 0.5: above 0.1 .. 0.4, not 0.5
    result = bench.evaluate(bench.data.assign(prediction=replies))
    assert result.metrics["acc@iou"] == pytest.approx((1 + 1 + 1 + 1 + 0.5) / 5)
    assert result.metrics["rec@iou"] == pytest.approx((1 + 1 + 1 + 1 + 0.5) / 5)


def test_the_full_set_reads_cgbench_json(tmp_path: Path):
    root = write_snapshot(tmp_path / "snap", name="cgbench.json")
    assert len(CGBenchMCQGrounding("CG-Bench_MCQ_Grounding", data_root=root, root=tmp_path)) == 6


def test_a_missing_clue_video_names_the_file(tmp_path: Path):
    root = write_snapshot(tmp_path / "snap")
    (root / "cg_clue_videos" / "q2.mp4").unlink()
    with pytest.raises(DatasetError, match=r"cg_clue_videos/q2\.mp4: missing, needed by CG-Bench_MCQ_Grounding_Mini"):
        CGBenchMCQGroundingMini("CG-Bench_MCQ_Grounding_Mini", data_root=root, root=tmp_path)


def test_bad_clue_intervals_are_one_line(tmp_path: Path):
    bad = [{**ITEMS[0], "clue_intervals": [[100]]}]
    with pytest.raises(DatasetError, match=r"cgbench_mini\.json: item 0, field clue_intervals: '\[\[100\]\]' is not a "
                                           r"list of \[start, end\] seconds"):
        CGBenchMCQGroundingMini("CG-Bench_MCQ_Grounding_Mini", data_root=write_snapshot(tmp_path / "s", bad),
                                root=tmp_path)


def test_a_bad_item_is_one_line(tmp_path: Path):
    bad = [{k: v for k, v in ITEMS[0].items() if k != "right_answer"}]
    with pytest.raises(DatasetError, match=r"cgbench_mini\.json: item 0, field right_answer: missing"):
        CGBenchMCQGroundingMini("CG-Bench_MCQ_Grounding_Mini", data_root=write_snapshot(tmp_path / "s", bad),
                                root=tmp_path)


ROW = (
    "CG-Bench_MCQ_Grounding_Mini\tvideo\tok\tcgbench_mcq\tnone\t\tdatasets_tsv.benchmarks.cgbench_mcq:"
    "CGBenchMCQGroundingMini\t{}\t\t\tCG-Bench MCQ with temporal grounding (long_acc, clue_acc, miou, CRR, acc@iou, "
    "rec@iou), mini set, from a local snapshot of CG-Bench/CG-Bench (--data-root DIR, or the Hugging Face cache)\tno "
    "download: the rows are read from a local snapshot of CG-Bench/CG-Bench (cgbench_mini.json, videos unzipped); "
    "clue_acc frames spread over the clue intervals of the whole video as VLMEvalKit's frames path does; an unread "
    "reply scores 0 where VLMEvalKit leaves it out\tVideo-MCQ-Grounding\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"

    def key(request) -> tuple[str, str]:
        text = request.body["messages"][-1]["content"][-1]["text"]
        mode = "miou" if text.startswith(MIOU[:60]) else "clue_acc" if "The 'option'" in text else "long_acc"
        return text.split("Question: [")[1][:2], mode

    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[key(request)]))) as server:
        code = run("--data", "CG-Bench_MCQ_Grounding_Mini", "--data-root", str(snapshot), "--model", "served",
                   "--api-base", server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = {key(r): r for r in chat_requests(server.requests)}
    assert code == 0 and len(requests) == 6
    [user] = requests[("q1", "clue_acc")].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 4 + ["text"]
    assert frames_sent(user["content"]) == [112, 137, 162, 187]  # the whole video's frames in the clue interval
    scoring = json.loads((work / "served" / "CG-Bench_MCQ_Grounding_Mini" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["long_acc"] == 1.0 and scoring["metrics"]["clue_acc"] == pytest.approx(0.5)
    assert scoring["vlmevalkit"]["metrics"]["clue_acc"] == 1.0


def write_one_question(folder: Path, name: str = "cgbench_mini.json") -> Path:
    """The smallest CG-Bench snapshot (one question, three rows), for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot); name: cgbench.json for the full set."""
    return write_snapshot(folder, ITEMS[:1], name)
