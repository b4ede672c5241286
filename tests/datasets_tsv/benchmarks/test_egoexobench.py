"""EgoExoBench_MCQ from a miniature copy in its layout (EgoExoBench_MCQ.tsv; media under videos/EgoExoBench): the
prompt split at its <video>/<image> marks with each medium in place, a video's frames at its own nframes by MVBench's
segment rule over its bound (written here from vlmeval/dataset/EgoExoBench/egoexobench.py at e8e78f05), scores worked
by hand, and a run end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from datasets_tsv.benchmarks.egoexobench import EgoExoBenchMCQ
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, chat_reply

ROWS = [
    {"index": 0, "question": "[0] The ego clip: <video> Which view matches it?", "options": "A. <image>\nB. <image>",
     "response_format": "Answer with the letter.", "answer": "A", "subtask_type": "Ego-Exo Relation",
     "medias": repr([{"type": "video", "video_path": "LEMMA/v1.mp4", "video_start": 1.0, "video_end": 3.0,
                      "nframes": 4},
                     {"type": "image", "image_paths": ["LEMMA/a.jpg"]},
                     {"type": "image", "image_paths": ["LEMMA/b.jpg"]}])},
    {"index": 1, "question": "[1] <video> What happens next?", "options": "A. x\nB. y\nC. z\nD. w",
     "response_format": "Answer with the letter.", "answer": "C", "subtask_type": "Ego-Exo Temporal",
     "medias": repr([{"type": "video", "video_path": "EgoMe/v2.mp4", "video_start": None, "video_end": None,
                      "nframes": 3}])},
    {"index": 2, "question": "[2] <video> Who is it?", "options": "A. me\nB. you",
     "response_format": "Answer with the letter.", "answer": "A", "subtask_type": "Ego-Exo Relation",
     "medias": repr([{"type": "frames", "image_paths": ["TF2023/f/00001.jpg", "TF2023/f/00002.jpg"]}])},
]
FRAMES = {"LEMMA/v1.mp4": 50, "EgoMe/v2.mp4": 30}
# [0] "Best answer:" removed by vlmkit: A, right; VLMEvalKit keeps it and reads the B of "Best": a miss. [1] right.
# [2] no capital A-D: a miss in both
REPLIES = ["Best answer: A", "C", "I don't know"]


def segments(lo: int, hi: int, n: int) -> list[int]:
    """MVBench's get_index, written here."""
    seg = (hi - lo) / n
    return [int(lo + seg / 2 + np.round(seg * k)) for k in range(n)]


def write_copy(root: Path, rows: list[dict] = ROWS) -> tuple[Path, Path]:
    """(the MCQ snapshot, the LMUData root holding videos/EgoExoBench)."""
    snapshot, lmu = root / "mcq", root / "LMUData"
    snapshot.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(snapshot / "EgoExoBench_MCQ.tsv", sep="\t", index=False)
    media = lmu / "videos" / "EgoExoBench"
    for video, n in FRAMES.items():
        write_indexed_video(media / video, n, fps=10.0)
    for name, colour in (("LEMMA/a.jpg", (250, 0, 0)), ("LEMMA/b.jpg", (0, 250, 0)), ("TF2023/f/00001.jpg", (0, 0, 250)),
                         ("TF2023/f/00002.jpg", (250, 250, 0))):
        (media / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), colour).save(media / name)
    return snapshot, lmu


@pytest.fixture
def bench(tmp_path: Path) -> EgoExoBenchMCQ:
    snapshot, lmu = write_copy(tmp_path)
    return EgoExoBenchMCQ("EgoExoBench_MCQ", data_root=snapshot, root=lmu)


def test_the_prompt_places_each_medium_at_its_mark(bench: EgoExoBenchMCQ, tmp_path: Path):
    parts = bench.build_prompt(0)
    assert [p["type"] for p in parts] == ["text"] + ["image"] * 4 + ["text", "image", "text", "image", "text"]
    assert [p["value"] for p in parts if p["type"] == "text"] == [
        "[0] The ego clip:", "Which view matches it?\nOptions:\nA.", "B.", "Answer with the letter."]
    media = tmp_path / "LMUData" / "videos" / "EgoExoBench"
    assert [parts[6]["value"], parts[8]["value"]] == [str(media / "LEMMA/a.jpg"), str(media / "LEMMA/b.jpg")]
    frames = [p["value"] for p in parts[1:5]]
    # seconds 1..3 at 10 fps: lo 10, hi 30, seg 5: frames 12 17 22 27
    assert [frame_number(Image.open(f)) for f in frames] == segments(10, 30, 4) == [12, 17, 22, 27]
    assert bench.build_prompt(2)[1:3] == [{"type": "image", "value": str(media / "TF2023/f/00001.jpg")},
                                          {"type": "image", "value": str(media / "TF2023/f/00002.jpg")}]


def test_an_unbounded_video_takes_its_own_frame_count(bench: EgoExoBenchMCQ):
    frames = [p["value"] for p in bench.build_prompt(1) if p["type"] == "image"]
    assert [frame_number(Image.open(f)) for f in frames] == segments(0, 29, 3) == [4, 14, 23]
    assert frames == [p["value"] for p in bench.build_prompt(1) if p["type"] == "image"]  # decoded once, reused


def test_score_by_hand(bench: EgoExoBenchMCQ):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, True, False]
    assert result.metrics == pytest.approx({"Ego-Exo Relation": 50.0, "Ego-Exo Temporal": 100.0,
                                            "Overall": 200 / 3})
    assert result.vlmevalkit.metrics == {"Ego-Exo Relation": 0.0, "Ego-Exo Temporal": 100.0, "Overall": 33.33}


def test_marks_and_media_must_agree(tmp_path: Path):
    rows = [dict(ROWS[1], question="[1] What happens next?")]
    snapshot, lmu = write_copy(tmp_path, rows)
    with pytest.raises(DatasetError, match=r"EgoExoBench_MCQ\.tsv: row 0, field medias: 1 media for 0 <video>"):
        EgoExoBenchMCQ("EgoExoBench_MCQ", data_root=snapshot, root=lmu)


def test_a_missing_medium_names_the_file(tmp_path: Path):
    snapshot, lmu = write_copy(tmp_path)
    (lmu / "videos" / "EgoExoBench" / "LEMMA" / "b.jpg").unlink()
    with pytest.raises(DatasetError, match=r"LEMMA/b\.jpg: missing, needed by EgoExoBench_MCQ row 0"):
        EgoExoBenchMCQ("EgoExoBench_MCQ", data_root=snapshot, root=lmu)


ROW = (
    "EgoExoBench_MCQ\tvideo\tok\tegoexobench\toptional\t\tdatasets_tsv.benchmarks.egoexobench:EgoExoBenchMCQ\t{}\t\t"
    "\tEgoExoBench_MCQ from a local snapshot of Heleun/EgoExoBench_MCQ, media under $LMUData/videos/EgoExoBench "
    "(--data-root DIR, or the Hugging Face cache; each video at its own frame count)\tno download: the questions are "
    "read from a local snapshot of Heleun/EgoExoBench_MCQ (EgoExoBench_MCQ.tsv, VLMEvalKit's MD5 "
    "9c0aa8da235d766d02dd7e9a19182719 not checked) and the media from $LMUData/videos/EgoExoBench as VLMEvalKit "
    "unpacks them; every model gets the frames as images\tVideo-MCQ\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot, lmu = write_copy(tmp_path)
    monkeypatch.setenv("LMUData", str(lmu))
    work = tmp_path / "out"

    def number(request) -> int:
        first = request.body["messages"][-1]["content"][0]["text"]
        return int(first[1])

    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[number(request)]))) as server:
        code = run("--data", "EgoExoBench_MCQ", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "8")
        requests = sorted(chat_requests(server.requests), key=number)
    assert code == 0 and len(requests) == 3
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["text"] + ["image_url"] * 4 + ["text", "image_url"] * 2 + ["text"]
    assert frames_sent(user["content"][1:5]) == [12, 17, 22, 27]  # the medium's 4 frames, not the model's 8
    scoring = json.loads((work / "served" / "EgoExoBench_MCQ" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == pytest.approx(200 / 3)
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == 33.33


def write_one_question(folder: Path) -> Path:
    """The smallest EgoExoBench_MCQ snapshot (one question without media, so no media folder is needed), for tests
    that build every catalog row (tests.support.video_snapshots.minimal_snapshot)."""
    folder.mkdir(parents=True, exist_ok=True)
    row = dict(ROWS[1], question="[1] What happens next?", medias="[]")
    pd.DataFrame([row]).to_csv(folder / "EgoExoBench_MCQ.tsv", sep="\t", index=False)
    return folder
