"""VideoMMMU from a miniature snapshot as VLMEvalKit leaves it (VideoMMMU.tsv, images/, videos/): its prompts
written here from vlmeval/dataset/videommmu.py at e8e78f05, its frames, MMMU's answer reading on worked cases, the
scores by hand (vlmkit counting an empty answer as a miss, VLMEvalKit's figure leaving it out), and a run end to end
through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from datasets_tsv.benchmarks.videommmu import VideoMMMU
from datasets_tsv.io.tsv_read import DatasetError
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from vlmkit.core.video import sample_frames
from vlmkit.scoring.benchmarks.videommmu_answers import NOT_FOUND, choice_of, open_answers, open_right

ANSWER_LINE = "\nAdd `Answer: {Your final answer}` at the end of your reply."
ADAPT = ("You should watch and learn the video content. Then apply what you learned to answer the following "
         "{} question. The image for this question is at the end of the video.\n")


def row(n: int, category: str, kind: str, options: list, answer: str, video: str, image: str = "") -> dict:
    return {"index": n, "id": f"{category.lower()}_{n}", "category": category, "question": f"[{n}] Which one?",
            "options": json.dumps(options), "answer": answer, "question_type": kind,
            "video": f"videos/{category}/{video}.mp4", "image": image}


ROWS = [
    row(0, "Perception", "multiple-choice", ["red", "blue", "green"], "B", "p1"),
    row(1, "Comprehension", "multiple-choice", ["A. 1", "B. 2", "C. 3"], "C", "c1"),
    row(2, "Adaptation", "multiple-choice", ["x=1", "x=2"], "A", "a1", "images/a1.png"),
    row(3, "Adaptation", "open", [], "12", "a1", "images/a2.png"),
    row(4, "Comprehension", "open", [], "photosynthesis", "c1"),
]
FRAMES = {"p1": 40, "c1": 30, "a1": 20}
# [0] "(B)" after the last "Answer:": right. [1] "C." and "A." both: the later one, A: a miss. [2] "A " as a word:
# right. [3] 12 read as a number: right. [4] nothing after "Answer:": a miss (VLMEvalKit leaves the row out)
REPLIES = ["I think it is blue. Answer: (B)", "C. 3 because A. is wrong", "Answer: A", "The total is 12. Answer: 12",
           "Answer:"]


def write_snapshot(root: Path, rows: list[dict] = ROWS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "VideoMMMU.tsv", sep="\t", index=False)
    for r in rows:
        write_indexed_video(root / r["video"], FRAMES[Path(r["video"]).stem], fps=10.0)
        if r["image"]:
            (root / r["image"]).parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (8, 8), (200, 10, 10)).save(root / r["image"])
    return root


@pytest.fixture
def bench(tmp_path: Path) -> VideoMMMU:
    return VideoMMMU("VideoMMMU", data_root=write_snapshot(tmp_path / "snap"), root=tmp_path)


def test_vlmevalkits_prompts(bench: VideoMMMU, tmp_path: Path):
    parts = bench.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text"]
    assert parts[1]["value"] == ("[0] Which one?\nA. red\nB. blue\nC. green\nPlease ignore the Quiz question in last "
                                 "frame of the video." + ANSWER_LINE)
    assert bench.build_prompt(1)[1]["value"].startswith("[1] Which one?\nA. 1\nB. 2\nC. 3\n")  # already lettered
    parts = bench.build_prompt(2)
    assert [p["type"] for p in parts] == ["video", "image", "text"]
    assert Path(parts[1]["value"]) == tmp_path / "snap" / "images" / "a1.png"
    assert parts[2]["value"] == ADAPT.format("multi-choice") + "[2] Which one?\nA. x=1\nB. x=2" + ANSWER_LINE
    assert bench.build_prompt(3)[2]["value"] == ADAPT.format("open-ended") + "[3] Which one?" + ANSWER_LINE


@pytest.mark.parametrize("setting, row_no, expected", [
    ({"nframe": 4}, 0, [8, 16, 24, 32]),  # int(i * 40 / 5)
    ({"fps": 0.5}, 1, [0]),  # 3 s: int(3 * 0.5) = 1 frame
])  # fmt: skip
def test_frames_are_vlmevalkits(bench: VideoMMMU, setting: dict, row_no: int, expected: list[int]):
    video = bench.build_prompt(row_no)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


@pytest.mark.parametrize("reply, letter", [
    ("The answer is A", "A"), ("a", NOT_FOUND), ("B: blue, or maybe C. Fine", "C"),  # "C." and "B:": the period rule
    ("I believe the right one is the green option here", "C"),  # more than 5 words: an option's text
    ("(A) or (B)", "B"),
])  # fmt: skip
def test_choices_read(reply: str, letter: str):
    assert choice_of(reply, ["red", "blue", "green"]) == letter


@pytest.mark.parametrize("gold, reply, right", [
    ("1234", "The total is 1,234.", True), ("photosynthesis", "it is photosynthesis", True),
    ("a", "banana", False),  # a one-character answer needs a space beside it
    ("3.14", "so the value is 3.141", True),  # rounded to 2 decimals
    ("7", "there are 8", False),
])  # fmt: skip
def test_open_answers_read(gold: str, reply: str, right: bool):
    assert open_right(gold, open_answers(reply)) is right


def test_score_by_hand(bench: VideoMMMU):
    result = bench.evaluate(bench.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, False, True, True, False]
    assert result.metrics == pytest.approx({"Perception": 100.0, "Comprehension": 0.0, "Adaptation": 100.0,
                                            "Overall": 60.0})
    assert result.vlmevalkit.metrics == pytest.approx({"Perception": 100.0, "Comprehension": 0.0,
                                                       "Adaptation": 100.0, "Overall": 75.0})


def test_a_missing_image_names_the_file(tmp_path: Path):
    root = write_snapshot(tmp_path / "snap")
    (root / "images" / "a2.png").unlink()
    with pytest.raises(DatasetError, match=r"images/a2\.png: missing, needed by VideoMMMU row 3"):
        VideoMMMU("VideoMMMU", data_root=root, root=tmp_path)


def test_without_vlmevalkits_table_the_error_says_so(tmp_path: Path):
    (tmp_path / "snap").mkdir()
    with pytest.raises(DatasetError, match=r"VideoMMMU\.tsv: not found; vlmkit reads the VideoMMMU\.tsv VLMEvalKit"):
        VideoMMMU("VideoMMMU", data_root=tmp_path / "snap", root=tmp_path)


ROW = (
    "VideoMMMU\tvideo\tok\tvideommmu\tnone\t\tdatasets_tsv.benchmarks.videommmu:VideoMMMU\t{}\t\t\tVideoMMMU from "
    "a local snapshot of lmms-lab/VideoMMMU with the VideoMMMU.tsv and images/ VLMEvalKit writes there (--data-root "
    "DIR, or the Hugging Face cache)\tno download: the rows are read from the VideoMMMU.tsv VLMEvalKit builds in the "
    "lmms-lab/VideoMMMU snapshot (no MD5 there); an empty answer is a miss where VLMEvalKit leaves the row out\t"
    "VideoMMMU\twrapper\n"
)


def test_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_snapshot(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = run("--data", "VideoMMMU", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 5
    [user] = requests[2].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 5 + ["text"]  # 4 frames, then the image
    assert frames_sent(user["content"][:4]) == [4, 8, 12, 16]  # int(i * 20 / 5)
    scoring = json.loads((work / "served" / "VideoMMMU" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == pytest.approx(60.0)
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == pytest.approx(75.0)


def write_one_question(folder: Path) -> Path:
    """The smallest VideoMMMU snapshot, for tests that build every catalog row
    (tests.support.video_snapshots.minimal_snapshot)."""
    return write_snapshot(folder, ROWS[:1])
