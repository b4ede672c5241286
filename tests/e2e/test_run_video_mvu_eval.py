"""`vlmkit run --data MVU-Eval --data-root DIR` end to end on a miniature copy (tests.support.video_snapshots.
write_mvu_eval) through an API model: each video's frames arrive after its "The following is the Video k" line, a
failed call is an error record and a miss, and results.json holds the score worked by hand and VLMEvalKit's figure
(which reads the failed call's text by its first character)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_mvu_eval import ANNOS, FRAMES, REPLIES
from tests.e2e.test_run_video_mlvu import frames_sent, run
from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, Reply, chat_reply
from tests.support.video_snapshots import write_mvu_eval


def question_number(request) -> int:
    texts = [p["text"] for p in request.body["messages"][-1]["content"] if p["type"] == "text"]
    return int(next(t for t in texts if t.startswith("["))[1])


def reply(request) -> Reply:
    text = REPLIES[question_number(request)]
    return Reply(400, {"error": {"message": "bad request"}}) if text is None else chat_reply(text)


def test_mvu_eval_through_an_api_model(lmu_root: Path, tmp_path: Path):
    snapshot = write_mvu_eval(tmp_path / "MVU-Eval", ANNOS, frames=FRAMES)
    work = tmp_path / "out"
    with FaultServer(chat_only(reply)) as server:
        code = run("--data", "MVU-Eval", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4", "--retries", "0")
        requests = [r for r in chat_requests(server.requests) if question_number(r) == 0]
    assert code == 3  # finished, one row failed
    [user] = requests[0].body["messages"]
    content = user["content"]
    assert [p["type"] for p in content] == ["text"] + ["image_url"] * 4 + ["text"] + ["image_url"] * 4 + ["text"] * 3
    assert content[0]["text"] == "The following is the Video 1" and content[5]["text"] == "The following is the Video 2"
    assert frames_sent(content[1:5]) == [10, 20, 30, 40] and frames_sent(content[6:10]) == [27, 54, 82, 109]
    scoring = json.loads((work / "served" / "MVU-Eval" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 0.5, "Comparison": 0.5, "Counting": 0.5})
    assert scoring["vlmevalkit"]["metrics"] == pytest.approx({"Overall": 0.75})
