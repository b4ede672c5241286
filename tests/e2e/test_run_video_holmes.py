"""`vlmkit run --data Video_Holmes --data-root DIR` end to end on a miniature snapshot (tests.support.video_snapshots.
write_video_holmes) through an API model: VLMEvalKit's prompt text and frames arrive, replies with <think> and
<answer> blocks are scored as worked by hand, and results.json holds VLMEvalKit's figure.

The catalog row is the one proposed for datasets_tsv/catalog/catalog.tsv (`ROW`); the test adds it for the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_video_holmes import FRAMES, ITEMS, PROMPT_0, REPLIES
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.run_helpers import chat_only, chat_requests
from tests.support.servers import FaultServer, chat_reply
from tests.support.video_snapshots import write_video_holmes

ROW = (
    "Video_Holmes\tvideo\tok\tvideo_holmes\tnone\t\tdatasets_tsv.benchmarks.video_holmes:VideoHolmes\t{}\t\t\t"
    "Video_Holmes from a local snapshot of TencentARC/Video-Holmes (--data-root DIR, or the Hugging Face cache; "
    "VLMEvalKit runs it at --nframe 32 or 64)\tno download: the rows are read from a local snapshot of "
    "TencentARC/Video-Holmes (test_Video-Holmes.json); VLMEvalKit's Video_Holmes MD5 is Video-MME's (copied), not "
    "checked\tVideo-MCQ\twrapper\n"
)


def question_number(request) -> int:
    text = request.body["messages"][-1]["content"][-1]["text"]
    return int(text.split("The question is: [")[1][0])


def test_video_holmes_through_an_api_model(monkeypatch: pytest.MonkeyPatch, lmu_root: Path, tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_video_holmes(tmp_path / "Video-Holmes", ITEMS, frames=FRAMES)
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[question_number(request)]))) as server:
        code = run("--data", "Video_Holmes", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=question_number)
    assert code == 0 and len(requests) == 4
    [user] = requests[0].body["messages"]
    assert [p["type"] for p in user["content"]] == ["image_url"] * 4 + ["text"]
    assert user["content"][-1]["text"] == PROMPT_0
    assert frames_sent(user["content"]) == [10, 20, 30, 40]  # int(i * 50 / 5)
    scoring = json.loads((work / "served" / "Video_Holmes" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 0.5, "SR": 0.5, "TA": 1.0, "TCI": 0.0})
    assert scoring["vlmevalkit"]["metrics"] == pytest.approx(scoring["metrics"])
