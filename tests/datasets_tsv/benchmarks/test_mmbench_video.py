"""MMBench-Video from a miniature snapshot in VLMEvalKit's layout (MMBench-Video.tsv, video/<video>.mp4): its frames
prompt, its frames (worked from vlmeval/dataset/video_base.py at e8e78f05), its judge texts byte for byte, and the
ratings worked by hand for vlmkit and for VLMEvalKit's figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.mmbench_video import MMBenchVideo
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.tsvs import write_tsv
from vlmkit.core.video import read_plan, sample_frames
from vlmkit.judging import FunctionJudge

# VLMEvalKit's texts, as its source writes them (a backslash at a line's end joins the next line)
SYSTEM = """
As an AI assistant, your task is to evaluate a candidate answer in comparison to a given correct answer.
The question itself, the correct 'groundtruth' answer, and the candidate answer will be provided to you.
Your assessment should range from 0 to 3, \
based solely on the semantic similarity between the groundtruth and the candidate answer, \
disregarding any grammatical differences.
A rating of 0 suggests no similarity, implying the candidate answer is entirely incorrect.
A rating of 1 suggests low similarity, meaning the candidate answer is largely incorrect.
A rating of 2 suggests high similarity, meaning the candidate answer is largely correct.
Lastly, a rating of 3 indicates complete similarity, which means the candidate answer is entirely correct.
Your response should be a single integer from 0, 1, 2, or 3.
"""
FRAMES_TMPL_NOPACK = """
You will be provided with {} separate frames uniformly sampled from a video, \
the frames are provided in chronological order of the video.
Please analyze these images and provide the answer to the question about the video content.
Please directly reply with your response to the only question.
"""
ROWS = [
    {"index": 0, "video": "vA", "video_path": "video_pkl/vA", "question": "[0] What is the topic?",
     "answer": "cooking", "dimensions": "['Video Topic']"},
    {"index": 1, "video": "vA", "video_path": "video_pkl/vA", "question": "[1] What is written?",
     "answer": "two signs", "dimensions": "['OCR', 'Counting']"},
    {"index": 2, "video": "vB", "video_path": "video_pkl/vB", "question": "[2] Why did it fall?",
     "answer": "the wind", "dimensions": "['Causal Reasoning']"},
    {"index": 3, "video": "vB", "video_path": "video_pkl/vB", "question": "[3] Is there a cat?",
     "answer": "no", "dimensions": "['Hallucination']"},
    {"index": 4, "video": "vB", "video_path": "video_pkl/vB", "question": "[4] Is it safe?",
     "answer": "no", "dimensions": "['Common Sense Reasoning']"},
]  # fmt: skip
FRAMES = {"vA": 50, "vB": 137}
# the model's replies by row ([3] failed), and the judge's ratings by row
REPLIES: dict[int, Any] = {0: "cooking pasta", 1: "two", 2: "it was windy", 3: None, 4: "maybe"}
RATINGS = {0: "3", 1: "2", 2: "5", 4: " 1\n"}


def write_mmbench_video(root: Path, rows: list[dict[str, Any]] = ROWS, frames: dict[str, int] = FRAMES) -> Path:
    """opencompass/MMBench-Video as VLMEvalKit leaves it: the TSV and video/<video>.mp4 (indexed videos)."""
    write_tsv(root / "MMBench-Video.tsv", rows)
    for video in {r["video"] for r in rows}:
        write_indexed_video(root / "video" / f"{video}.mp4", frames=frames.get(video, 50), fps=10.0)
    return root


def rating_judge(request) -> str:
    row = int(request.prompt.split("[", 1)[1].split("]", 1)[0])
    return RATINGS[row]


@pytest.fixture
def bench(tmp_path: Path) -> MMBenchVideo:
    return MMBenchVideo("MMBench-Video", data_root=write_mmbench_video(tmp_path / "snap"), root=tmp_path / "lmu")


def test_vlmevalkits_frames_prompt(bench: MMBenchVideo, tmp_path: Path):
    prompt = bench.build_prompt(1)
    assert [p["type"] for p in prompt] == ["text", "video", "text"]
    assert prompt[0]["value"] == FRAMES_TMPL_NOPACK.format(8)
    assert prompt[2]["value"] == "Question: [1] What is written?\nAnswer: "
    video = Path(prompt[1]["value"])
    assert video.resolve() == (tmp_path / "snap" / "video" / "vA.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"


def test_frames_are_vlmevalkits(bench: MMBenchVideo):
    video = bench.build_prompt(2)[1]["value"]
    # VLMEvalKit: step = 137 / 9; int(i * step), i = 1..8
    expected = [int(i * 137 / 9) for i in range(1, 9)]
    assert [frame_number(f) for f in sample_frames(video, nframe=8).frames] == expected


def test_the_prompt_states_the_fps_frame_count(tmp_path: Path):
    bench = MMBenchVideo("MMBench-Video", data_root=write_mmbench_video(tmp_path / "snap"), root=tmp_path, fps=1.0)
    # vB: 137 frames at 10 fps = 13.7 s: int(13.7 * 1) = 13 frames
    assert bench.build_prompt(2)[0]["value"] == FRAMES_TMPL_NOPACK.format(13)
    assert bench.scorer_params() == {"scorer": "mmbench_video", "prompt_frames": {"fps": 1.0}}


def test_ratings_by_hand(bench: MMBenchVideo):
    table = bench.data.assign(prediction=[REPLIES[i] for i in bench.data["index"]])
    judge = FunctionJudge(rating_judge, name="j")
    result = bench.evaluate(table, judge=judge)
    assert len(judge.asked) == 4  # the failed row is not asked
    first = next(r for r in judge.asked if "[0]" in r.prompt)
    assert first.system == SYSTEM
    assert first.prompt == ("Question: [0] What is the topic?\nGroundtruth answer: cooking\n"
                            "Candidate answer: cooking pasta\nYour response: ")
    assert first.temperature == 0.0
    # vlmkit: 3, 2, -1 (a 5 is not a rating), -1 (no prediction), 1
    assert result.per_sample["score"].tolist() == [3.0, 2.0, -1.0, -1.0, 1.0]
    m = result.metrics
    assert result.primary == "Overall" and m["Overall"] == pytest.approx(6 / 5)
    assert m["valid/Overall"] == pytest.approx(2.0)
    assert m["Perception"] == pytest.approx(5 / 3) and m["valid/Perception"] == pytest.approx(2.5)
    assert m["Reasoning"] == pytest.approx(0.5) and m["valid/Reasoning"] == pytest.approx(1.0)
    assert m["fine/OCR"] == m["fine/Counting"] == 2.0 and m["HL"] == 0.0
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    # VLMEvalKit keeps the 5: Overall (3 + 2 + 5 + 0 + 1) / 5, Reasoning (5 + 1) / 2
    fig = result.vlmevalkit
    assert fig.metrics["Overall"] == 2.2 and fig.metrics["Reasoning"] == 3.0 and fig.metrics["TR"] == 5.0
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in fig.differing] == [(2, -1.0, 5.0)]


def test_without_a_judge_it_is_refused_in_one_line(bench: MMBenchVideo):
    with pytest.raises(DatasetError, match=r"MMBench-Video is scored by an LLM judge .*--judge MODEL"):
        bench.evaluate(bench.data.assign(prediction="x"))


def test_bad_snapshot_is_one_line(tmp_path: Path):
    snap = write_mmbench_video(tmp_path / "a")
    (snap / "video" / "vB.mp4").unlink()
    with pytest.raises(DatasetError, match=r"vB\.mp4: missing, needed by MMBench-Video row 2 .*video_pkl"):
        MMBenchVideo("MMBench-Video", data_root=snap, root=tmp_path)
    bad = write_mmbench_video(tmp_path / "b", [dict(ROWS[0], dimensions="['Nonsense']")])
    ds = MMBenchVideo("MMBench-Video", data_root=bad, root=tmp_path)
    with pytest.raises(DatasetError, match=r"row index 0, field `dimensions`: 'Nonsense' is not one of"):
        ds.evaluate(ds.data.assign(prediction="x"), judge=FunctionJudge(lambda r: "3"))


# --- the catalog rows of the judge-scored video benchmarks -------------------------------------------------------
JUDGED_VIDEO_MODULES = (
    "datasets_tsv.benchmarks.mmbench_video", "datasets_tsv.benchmarks.moviechat", "datasets_tsv.benchmarks.mlvu_open",
    "datasets_tsv.benchmarks.tempcompass_open", "datasets_tsv.benchmarks.qbench_video_vqa",
    "datasets_tsv.benchmarks.vdc", "datasets_tsv.benchmarks.video_mmlu", "datasets_tsv.benchmarks.dream1k",
    "datasets_tsv.benchmarks.vcrbench",
)


def minimal_judged_snapshot(target: str, folder: Path) -> Path | None:
    """The smallest snapshot the judge-scored video class `target` ("module:Class") builds from (for tests that
    build every catalog row, as tests.support.video_snapshots.minimal_snapshot does for the others); None for
    another class."""
    module, name = target.rsplit(":", 1)
    if module not in JUDGED_VIDEO_MODULES:
        return None
    one = {"index": 0, "video": "one", "question": "What happens?", "answer": "a run"}
    write = {
        "MMBenchVideo": lambda: write_mmbench_video(folder, [dict(one, dimensions="['Video Topic']")], {}),
        "MovieChat1k": lambda: _tsv_snapshot(folder, "MovieChat1k.tsv", [dict(one, mode="global")], "videos"),
        "VDC": lambda: _tsv_snapshot(folder, "VDC.tsv", [dict(one, video="one.mp4", caption_type="short",
                                                               question=str([{"question": "q", "answer": "a"}]))],
                                     "videos"),
        "VideoMMLUCap": lambda: _tsv_snapshot(folder, "Video_MMLU_CAP.tsv", [dict(
            one, video="one.mp4", discipline="Math", question=str([{"question": "q", "answer": "a"}]))],
                                              "youtube_videos"),
        "VideoMMLUQA": lambda: _tsv_snapshot(folder, "Video_MMLU_QA.tsv", [dict(one, video="one.mp4",
                                                                                discipline="Math")], "youtube_videos"),
        "DREAM1K": lambda: _tsv_snapshot(folder, "DREAM-1K.tsv", [dict(one, video="video/one", events="")], "video"),
    }
    if name in write:
        return write[name]()
    if name in ("MLVU", "MLVUOpenEnded"):
        from tests.datasets_tsv.benchmarks.test_mlvu_open import write_mlvu_open

        return write_mlvu_open(folder)
    if name in ("TempCompass", "TempCompassCaptioning"):
        from tests.datasets_tsv.benchmarks.test_tempcompass_open import write_snapshot

        return write_snapshot(folder)
    if name == "VCRBench":
        from tests.datasets_tsv.benchmarks.test_vcrbench import write_vcr

        return write_vcr(folder)
    if name in ("QBenchVideo", "QBenchVideoVQA"):
        from tests.datasets_tsv.benchmarks.test_qbench_video_vqa import write_qbench

        return write_qbench(folder)
    raise AssertionError(f"no minimal snapshot for {target}")


def _tsv_snapshot(folder: Path, tsv: str, rows: list[dict[str, Any]], videos: str) -> Path:
    write_tsv(folder / tsv, rows)
    name = str(rows[0]["video"]).replace("video/", "")
    write_indexed_video(folder / videos / (name if name.endswith(".mp4") else f"{name}.mp4"), frames=20, fps=10.0)
    return folder


def test_every_judged_video_row_builds_and_needs_a_judge(tmp_path: Path):
    from datasets_tsv.catalog.entries import catalog_rows
    from datasets_tsv.catalog.registry import build_row, scorer_id

    rows = [r for r in catalog_rows().values() if r.cls.split(":")[0] in JUDGED_VIDEO_MODULES]
    assert {r.name for r in rows} >= {"MMBench-Video", "MovieChat1k", "MLVU", "MLVU_OpenEnded", "TempCompass",
                                      "TempCompass_Captioning", "QBench_Video", "QBench_Video_VQA", "VDC",
                                      "Video_MMLU_CAP", "Video_MMLU_QA", "DREAM-1K", "VCR-Bench"}
    for row in rows:
        assert row.status == "judge" and row.kind == "video", row.name
        folder = minimal_judged_snapshot(row.cls, tmp_path / row.name)
        ds = build_row(row, root=tmp_path / "lmu", progress=False, inference_only=True, data_root=folder)
        assert (ds.name, ds.kind, scorer_id(ds)) == (row.name, row.kind, row.scorer)
        assert set(row.notes) <= set(ds.info()["notes"])
        with pytest.raises(DatasetError, match=f"{row.name} is scored by an LLM judge .*--judge MODEL"):
            ds.evaluate(ds.data.assign(prediction="x"))
        prompt = ds.build_prompt(0)
        turn = prompt[-1]["content"] if "role" in prompt[-1] else prompt
        assert any(part["type"] == "video" for part in turn), row.name
