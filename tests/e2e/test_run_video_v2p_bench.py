"""`vlmkit run --data V2P-Bench --data-root DIR` end to end on a miniature snapshot (tests.support.video_snapshots.
write_v2p_bench) through an API model: VLMEvalKit's prompt (question, the video's frames, the visual-prompt frame)
and frames arrive, a failed call is an error record and a miss, and results.json holds the scores worked by hand and
VLMEvalKit's figure (which reads the failed call as A)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_v2p_bench import FRAMES, REPLIES, ROWS
from tests.e2e.test_run_video_mlvu import frames_sent, run
from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, Reply, chat_reply


def question_number(request) -> int:
    text = request.body["messages"][-1]["content"][0]["text"]
    return int(text.split("[", 1)[1][0])


def reply(request):
    number = question_number(request)
    if REPLIES[number] is None:
        return Reply(400, {"error": {"message": "bad request"}})
    return chat_reply(REPLIES[number])


def test_v2p_bench_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from tests.support.video_snapshots import write_v2p_bench

    snapshot = write_v2p_bench(tmp_path / "V2P-Bench", ROWS, frames=FRAMES)
    work = tmp_path / "out"
    with FaultServer(chat_only(reply)) as server:
        code = run("--data", "V2P-Bench", "--data-root", str(snapshot), "--model", "served", "--api-base", server.base_url,
            "--work-dir", str(work), "--nframe", "4", "--retries", "0")
        requests = sorted(chat_requests(server.requests), key=question_number)
    assert code == 3  # finished, one row failed
    first = [r for r in requests if question_number(r) == 0]
    [user] = first[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["text"] + ["image_url"] * 5
    assert user["content"][0]["text"].endswith("\nGive only your option letter that accurately addresses the "
                                               "question, no other words.")
    assert frames_sent(user["content"][:-1]) == [10, 20, 30, 40]  # int(i * 50 / 5)
    scoring = json.loads((work / "served" / "V2P-Bench" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 0.4, "OA": 0.5, "SR": 0.5, "Short": 0.5, "Medium": 0.0,
                                                "Long": 0.5})
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == pytest.approx(0.6)
