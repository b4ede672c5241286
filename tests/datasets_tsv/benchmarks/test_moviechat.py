"""MovieChat1k from a miniature snapshot in VLMEvalKit's layout (MovieChat1k.tsv, videos/<video>.mp4): prompt, frames,
its judge prompt byte for byte (written as vlmeval/dataset/utils/moviechat1k.py at e8e78f05 writes it) and the figures
worked by hand for vlmkit and for VLMEvalKit's figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.moviechat import MovieChat1k
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge

ROWS = [
    {"index": 0, "video": "m1", "question": "[0] Who drives?", "answer": "the mother", "mode": "global"},
    {"index": 1, "video": "m1", "question": "[1] Where are they?", "answer": "a beach", "mode": "global"},
    {"index": 2, "video": "m2", "question": "[2] What is he holding?", "answer": "a cup", "mode": "breakpoint"},
    {"index": 3, "video": "m2", "question": "[3] What colour is the car?", "answer": "red", "mode": "breakpoint"},
    {"index": 4, "video": "m2", "question": "[4] Is it night?", "answer": "yes", "mode": "breakpoint"},
]
REPLIES: dict[int, Any] = {0: "her mom", 1: "a park", 2: "a cup", 3: None, 4: "yes it is"}
VERDICTS = {0: "{'pred': 'yes', 'score': 4}", 1: '{"pred": "no", "score": 1}',
            2: "```python\n{'pred': 'yes', 'score': 5}\n```", 4: "{'pred': 'Yes', 'score': 4.8}"}


def vlmevalkit_prompt(item: dict[str, Any]) -> str:
    """VLMEvalKit's prepare_score_prompt, as its source writes it."""
    prompt = f"""Please evaluate the following video-based question-answer pair:\n\n
            Question: {item['question']}\n
            Correct Answer: {item['answer']}\n
            Predicted Answer: {item['prediction']}\n\n
            Provide your evaluation only as a yes/no and score where the score is an integer value between 0 and 5, with 5 indicating the highest meaningful match.
            Please generate the response in the form of a Python dictionary string with keys 'pred' and 'score', where value of 'pred' is  a string of 'yes' or 'no' and value of 'score' is in INTEGER, not STRING.
            DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide the Python dictionary string.
                For example, your response should look like this: {{'pred': 'yes', 'score': 4.8}}."""  # noqa: E501
    return prompt


def write_moviechat(root: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    write_tsv(root / "MovieChat1k.tsv", rows)
    for video, frames in (("m1", 50), ("m2", 137)):
        write_indexed_video(root / "videos" / f"{video}.mp4", frames=frames, fps=10.0)
    return root


def row_judge(request) -> str:
    return VERDICTS[int(request.prompt.split("[", 1)[1].split("]", 1)[0])]


@pytest.fixture
def bench(tmp_path: Path) -> MovieChat1k:
    return MovieChat1k("MovieChat1k", data_root=write_moviechat(tmp_path / "snap"), root=tmp_path / "lmu")


def test_prompt_and_frames(bench: MovieChat1k):
    prompt = bench.build_prompt(2)
    assert [p["type"] for p in prompt] == ["video", "text"]
    assert prompt[1]["value"] == "[2] What is he holding?"
    expected = [int(i * 137 / 5) for i in range(1, 5)]  # VLMEvalKit: step 137 / (4 + 1)
    assert [frame_number(f) for f in sample_frames(prompt[0]["value"], nframe=4).frames] == expected


def test_figures_by_hand(bench: MovieChat1k):
    judge = FunctionJudge(row_judge)
    result = bench.evaluate(bench.data.assign(prediction=[REPLIES[i] for i in bench.data["index"]]), judge=judge)
    assert len(judge.asked) == 4 and all(r.system is None and r.temperature == 0.0 for r in judge.asked)
    first = next(r for r in judge.asked if "[0]" in r.prompt)
    assert first.prompt == vlmevalkit_prompt(dict(ROWS[0], prediction="her mom"))
    m = result.metrics
    # correct: 0 yes, 1 no, 2 unread (fenced), 3 no prediction, 4 yes
    assert m["Overall"] == pytest.approx(2 / 5) and m["global"] == 0.5 and m["breakpoint"] == pytest.approx(1 / 3)
    assert m["score/Overall"] == pytest.approx(9.8 / 3) and m["score/global"] == 2.5
    assert m["score/breakpoint"] == pytest.approx(4.8)
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    # VLMEvalKit: accuracy over the three rows with a verdict
    assert result.vlmevalkit.metrics == {"Overall": 0.67, "global": 0.5, "breakpoint": 1.0, "score/Overall": 3.27,
                                         "score/global": 2.5, "score/breakpoint": 4.8}
    assert result.scale_of("score/Overall").out_of == 5.0 and result.scale_of("Overall").kind == "fraction"


def test_subset_and_limit(tmp_path: Path):
    snap = write_moviechat(tmp_path / "snap")
    assert MovieChat1k("MovieChat1k", data_root=snap, root=tmp_path, subset="breakpoint").data["index"].tolist() == \
        [2, 3, 4]
    assert MovieChat1k("MovieChat1k", data_root=snap, root=tmp_path, limit=0.5).data["index"].tolist() == [0, 1]
    with pytest.raises(DatasetError, match="subset must be one of all, global, breakpoint"):
        MovieChat1k("MovieChat1k", data_root=snap, root=tmp_path, subset="local")


def test_no_judge_and_bad_rows_are_one_line(bench: MovieChat1k, tmp_path: Path):
    with pytest.raises(DatasetError, match=r"MovieChat1k is scored by an LLM judge .*--judge MODEL"):
        bench.evaluate(bench.data.assign(prediction="x"))
    snap = write_moviechat(tmp_path / "bad", [dict(ROWS[0], mode="")])
    with pytest.raises(DatasetError, match=r"MovieChat1k\.tsv: row 0, field mode: empty"):
        MovieChat1k("MovieChat1k", data_root=snap, root=tmp_path)
