"""OMTGBench from a miniature snapshot in its layout (OMTGBench.tsv, videos/<video>.mp4): its prompt and frames,
segment reading and one-to-many metrics worked by hand from vlmeval/dataset/omtgbench.py at e8e78f05 (including its
in-place merge that lengthens a segment before matching), the matching checked against a brute force, and a run end
to end through an API model."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from datasets_tsv.benchmarks.omtgbench import OMTGBench
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from vlmkit.core.video import sample_frames
from vlmkit.scoring.benchmarks.omtgbench import best_matching, time_segments

ROWS = [
    {"video": "v1", "question": "[0] When does the dog bark?", "answer": "At 2 - 4 seconds and 6 - 8 seconds."},
    {"video": "v1", "question": "[1] When does the door open?", "answer": "[10, 20]"},
    {"video": "v2", "question": "[2] When does it rain?", "answer": "0 - 5 seconds"},
    {"video": "v2", "question": "[3] When do they talk?", "answer": "[0, 4] and [10, 12]"},
]
FRAMES = {"v1": 40, "v2": 30}
REPLIES = [
    "<time>2 - 4 seconds</time> <time>6.5 - 8 seconds</time>",  # IoU 1 and 0.75: all F1 1, tIoU 3.5 / 4
    "From 12 to 18.",  # IoU 0.6: F1 1, 1, 0 -> EtF1 2/3
    "I cannot tell.",  # no segment: all 0
    "[0, 3], [2, 9]",  # matched IoU 0.75 and 0: F1 0.5 at every threshold; VLMEvalKit matches [0, 9]: 4/9
]
TIOU = [3.5 / 4, 0.6, 0.0, 4 / 11]


def write_snapshot(root: Path, rows: list[dict] = ROWS) -> Path:
    (root / "videos").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "OMTGBench.tsv", sep="\t", index=False)
    for video in {r["video"] for r in rows}:
        write_indexed_video(root / "videos" / f"{video}.mp4", FRAMES.get(video, 16), fps=10.0)
    return root


@pytest.fixture
def bench(tmp_path: Path) -> OMTGBench:
    return OMTGBench("OMTGBench", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_prompt_is_the_video_then_the_question(bench: OMTGBench, tmp_path: Path):
    parts = bench.build_prompt(1)
    assert [p["type"] for p in parts] == ["video", "text"] and parts[1]["value"] == "[1] When does the door open?"
    assert Path(parts[0]["value"]).resolve() == (tmp_path / "snap" / "videos" / "v1.mp4").resolve()


@pytest.mark.parametrize("setting, row_no, expected", [
    ({"fps": 2.0}, 2, [0, 5, 10, 15, 20, 25]),  # VLMEvalKit's 2 fps: 3 s -> int(3 * 2) frames, int(i * 10 / 2)
    ({"nframe": 4}, 0, [8, 16, 24, 32]),  # int(i * 40 / 5)
])  # fmt: skip
def test_frames_are_vlmevalkits(bench: OMTGBench, setting: dict, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


@pytest.mark.parametrize("text, segments", [
    ("<time>1:05 - 1:10 seconds</time> and 3 - 4 seconds", [[65.0, 70.0]]),  # tags win
    ("2 - 4 seconds, then 9-3 seconds", [[2.0, 4.0]]),  # an end before its start is dropped
    ("from 3.5 to 7, [10, 12] and 3.5 - 7", [[3.5, 7.0], [10.0, 12.0]]),  # the rest together, repeats dropped
    ("The start is at 0:02 and the end is at 5 seconds", [[2.0, 5.0]]),
    # VLMEvalKit's lazy end group takes one character (its tail is optional): "1" < 12, dropped (kept as it reads)
    ("It starts at 12 and ends at 18", []),
    ("nothing here", []),
])  # fmt: skip
def test_segments_read(text: str, segments: list):
    assert time_segments(text) == segments


def test_matching_is_the_best_sum():
    rng = np.random.default_rng(7)
    for rows, cols in [(3, 3), (2, 4), (4, 2), (5, 3), (1, 3)]:
        for _ in range(20):
            weights = rng.random((rows, cols)).round(2)
            pairs = best_matching(weights.tolist())
            assert len(pairs) == min(rows, cols) and len({r for r, _ in pairs}) == len({c for _, c in pairs})
            best = max(sum(weights[r, c] for r, c in zip(perm, range(cols))) for perm in
                       itertools.permutations(range(rows), min(rows, cols))) if rows >= cols else \
                max(sum(weights[r, c] for r, c in zip(range(rows), perm)) for perm in
                    itertools.permutations(range(cols), rows))
            assert sum(weights[r, c] for r, c in pairs) == pytest.approx(best)


def test_score_by_hand(bench: OMTGBench):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["EtF1"].tolist() == pytest.approx([1.0, 2 / 3, 0.0, 0.5])
    expected = {
        "tIoU": 100 * np.mean(TIOU), "C-Acc": 75.0, "EtF1": 100 * (1 + 2 / 3 + 0 + 0.5) / 4,
        "tF1@0.3": 100 * 2.5 / 4, "tP@0.3": 100 * 2.5 / 4, "tR@0.3": 100 * 2.5 / 4,
        "tF1@0.5": 100 * 2.5 / 4, "tP@0.5": 100 * 2.5 / 4, "tR@0.5": 100 * 2.5 / 4,
        "tF1@0.7": 100 * 1.5 / 4, "tP@0.7": 100 * 1.5 / 4, "tR@0.7": 100 * 1.5 / 4,
    }  # fmt: skip
    assert result.metrics == pytest.approx(expected) and result.primary == "EtF1"
    # VLMEvalKit: row 3 matches [0, 9] (IoU 4/9) and [2, 9]: F1 0.5, 0, 0 -> EtF1 1/6
    assert result.vlmevalkit.metrics["EtF1"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 1 / 6) / 4)
    assert result.vlmevalkit.metrics["tF1@0.5"] == pytest.approx(100 * 2 / 4)
    assert [d.index for d in result.vlmevalkit.differing] == [3]


def test_a_missing_column_is_one_line(tmp_path: Path):
    rows = [{k: v for k, v in r.items() if k != "answer"} for r in ROWS]
    with pytest.raises(DatasetError, match=r"OMTGBench\.tsv: missing column `answer`"):
        OMTGBench("OMTGBench", data_root=write_snapshot(tmp_path / "s", rows), root=tmp_path)


ROW = (
    "OMTGBench\tvideo\tok\tomtgbench\tnone\t\tdatasets_tsv.benchmarks.omtgbench:OMTGBench\t{}\t\t\tOMTGBench "
    "(temporal grounding, EtF1 headline) from a local snapshot of insomnia7/omtg_bench (--data-root DIR, or the "
    "Hugging Face cache; VLMEvalKit samples it at --fps 2)\tno download: the rows are read from a local snapshot of "
    "insomnia7/omtg_bench (OMTGBench.tsv, videos.zip unpacked); vlmkit matches the segments as read where "
    "VLMEvalKit's merge lengthens one in place first\tVideo-Temporal-Grounding\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = run("--data", "OMTGBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--fps", "2")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 4
    [user] = requests[2].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 6 + ["text"]
    assert frames_sent(user["content"]) == [0, 5, 10, 15, 20, 25]
    scoring = json.loads((work / "served" / "OMTGBench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["EtF1"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 0.5) / 4)
    assert scoring["vlmevalkit"]["metrics"]["EtF1"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 1 / 6) / 4)


def write_one_question(folder: Path) -> Path:
    """The smallest OMTGBench snapshot, for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, ROWS[:1])
