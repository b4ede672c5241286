"""DREAM-1K from local copies in VLMEvalKit's layout (DREAM-1K.tsv, video/<id>.mp4): prompt, frames, the AutoDQ judge
texts as vlmeval/dataset/dream.py writes them at e8e78f05, its reply reading, and recall/precision/F1 by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.dream1k import DREAM1K
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.dream1k import parse_json

EXTRACTION_PROMPT = (
    "Bellow is a description of a video clip:\n"
    "Video Description: {caption}\n\n"
    "Extract at most 10 key events from the above video description paragraph. Requirements\n:"
    "- An event must include an action, motion or movement (NOT STATIC INFORMATION). DON'T repeat same events.\n"
    "- Every event is represented by a brief sentence within 10 words, with a subject, "
    " a predicate and optionally an object, avoid unnecessary appearance descriptions.\n"
    "- Every event must be atomic, meaning that it cannot be further split into multiple events.\n"
    "- Scene cuts and camera motions are NOT events.\n"
    "- Substitute pronouns by the nouns they refer to.\n\n"
    "Please generate the response in the form of a Python dictionary string with keys \"events\"."
    "The value of \"events\" is a List(str), of which each item is an event. "
    "DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide the Python dictionary string. "
    "For example, your response should look like this: {{\"events\": [event1, event2, ...]}}"
)
RELATIONSHIP_PROMPT = (
    "Given a video description and a list of events. For each event, "
    "classify the relationship between the video description and the event into three classes:"
    " entailment, neutral, contradiction.\n"
    "- \"entailment\" means that the video description entails the event.\n"
    "- \"contradiction\" means that some detail in the video description contradicts with the event.\n"
    "- \"neutral\" means that the relationship is neither \"entailment\" or \"contradiction\".\n\n"
    "Video Description:\n{prediction}\n\n"
    "Events: {events}\n"
    "Output a JSON formed as:\n"
    "{{\n"
    "  \"events\": [\n"
    "{{\"event\":\"copy an event here\",\"relationship\":\"put class name here\","
    "\"reason\":\"give your reason here\"}},\n"
    "    ...\n"
    "  ]\n"
    "}}\n\n"
    "DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only output the JSON. Output:"
)
ROWS = [
    {"index": 0, "video": "video/d0", "question": "[0] Describe the video.",
     "answer": "A man opens a door. He walks in.", "events": json.dumps(["man opens door", "man walks in"])},
    {"index": 1, "video": "video/d1", "question": "[1] Describe the video.", "answer": "A dog runs.", "events": ""},
    {"index": 2, "video": "video/d1", "question": "[2] Describe the video.", "answer": "A dog sleeps.", "events": ""},
]  # fmt: skip
PREDICTIONS: dict[int, Any] = {0: "A man opens a door and sits.", 1: "A dog runs fast.", 2: None}
REPLIES = {
    EXTRACTION_PROMPT.format(caption="A man opens a door and sits."):
        '```json\n{"events": ["man opens door", "man sits"]}\n```',
    EXTRACTION_PROMPT.format(caption="A dog runs."): '{"events": ["dog runs"]}',
    EXTRACTION_PROMPT.format(caption="A dog runs fast."): '{"events": ["dog runs"]}',
    RELATIONSHIP_PROMPT.format(prediction="A man opens a door and sits.",
                               events=str(["man opens door", "man walks in"])):
        '{"events": [{"event": "man opens door", "relationship": "entailment"}, '
        '{"event": "man walks in", "relationship": "neutral"}]}',
    RELATIONSHIP_PROMPT.format(prediction="A man opens a door. He walks in.",
                               events=str(["man opens door", "man sits"])):
        "{'events': [{'event': 'man opens door', 'relationship': 'Entailment'}, "
        "{'event': 'man sits', 'relationship': 'contradiction'}]}",
    RELATIONSHIP_PROMPT.format(prediction="A dog runs fast.", events=str(["dog runs"])):
        '{"events": [{"event": "dog runs", "relationship": "entailment"}]}',
    RELATIONSHIP_PROMPT.format(prediction="A dog runs.", events=str(["dog runs"])):
        'Here: {"events": [{"event": "dog runs", "relationship": "entailment", "reason": "True"}]}',
}  # fmt: skip


def write_dream(root: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    write_tsv(root / "DREAM-1K.tsv", rows)
    write_indexed_video(root / "video" / "d0.mp4", frames=50, fps=10.0)
    write_indexed_video(root / "video" / "d1.mp4", frames=137, fps=10.0)
    return root


@pytest.fixture
def dream(tmp_path: Path) -> DREAM1K:
    return DREAM1K("DREAM-1K", data_root=write_dream(tmp_path / "dream"), root=tmp_path / "lmu")


def test_prompt_and_frames(dream: DREAM1K):
    prompt = dream.build_prompt(1)
    assert [p["type"] for p in prompt] == ["video", "text"] and prompt[1]["value"] == "[1] Describe the video."
    frames = sample_frames(prompt[0]["value"], nframe=8).frames
    assert [frame_number(f) for f in frames] == [int(i * 137 / 9) for i in range(1, 9)]


def test_autodq_by_hand(dream: DREAM1K):
    judge = FunctionJudge(lambda request: REPLIES[request.prompt])
    result = dream.evaluate(dream.data.assign(prediction=[PREDICTIONS[i] for i in dream.data["index"]]), judge=judge)
    assert all(r.system is None and r.temperature == 0.0 for r in judge.asked)
    assert len(judge.asked) == 7  # row 0's events are given; row 2 has no prediction
    # row 0: recall 1/2, precision 1/2; row 1: 1, 1; row 2 (no prediction): 0, 0 here
    assert result.per_sample["recall"].tolist()[:2] == [0.5, 1.0]
    assert result.metrics == pytest.approx({"F1": 0.5, "Recall": 0.5, "Precision": 0.5})
    # VLMEvalKit leaves row 2 out: R = P = 0.75
    assert result.vlmevalkit.metrics == {"F1": 0.75, "Recall": 0.75, "Precision": 0.75}
    assert result.counts["inference_errors"] == 1


def test_reply_reading_is_vlmevalkits():
    assert parse_json('```python\n{"a": True}\n```') == {"a": True}
    assert parse_json("noise {'events': []} tail") == {"events": []}
    assert parse_json("no json here") is None


def test_missing_video_and_judge_are_one_line(tmp_path: Path):
    snap = write_dream(tmp_path / "d")
    (snap / "video" / "d1.mp4").unlink()
    with pytest.raises(DatasetError, match=r"d1\.mp4: missing, needed by DREAM-1K row 1 .*video\.zip"):
        DREAM1K("DREAM-1K", data_root=snap, root=tmp_path)
    ok = DREAM1K("DREAM-1K", data_root=write_dream(tmp_path / "e"), root=tmp_path)
    with pytest.raises(DatasetError, match="DREAM-1K is scored by an LLM judge"):
        ok.evaluate(ok.data.assign(prediction="x"))
