"""`vlmkit run --data MLVU` (MLVU_MCQ's rows then MLVU_OpenEnded's) end to end on a miniature MLVU/MVLU snapshot through
an API model and an API judge: each row gets its part's prompt and VLMEvalKit's frames, the open rows' judge gets
VLMEvalKit's system texts, and results.json holds M-Avg and G-Avg worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_mlvu_open import JUDGED, REPLIES, SYS, write_mlvu_open
from tests.e2e.test_mmbench_video_run import model_reply
from tests.e2e.test_run_video_mlvu import frames_sent, run
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from vlmkit.cli.exit_codes import SAMPLES_FAILED
from vlmkit.scoring.benchmarks.mlvu_open import SYSTEM_SUB_SCENE, SYSTEM_SUMMARY


def judge(request):
    text = request.body["messages"][-1]["content"]
    for row, reply in JUDGED.items():
        if f"[{row}]" in text:
            return chat_reply(reply)
    if "Standard Answer: A man cooks." in text:
        return chat_reply(JUDGED[2])
    return chat_reply(JUDGED[3])


def test_mlvu_through_an_api_model_and_judge(lmu_root: Path, tmp_path: Path):
    snapshot = write_mlvu_open(tmp_path / "MLVU")
    work = tmp_path / "out"
    with FaultServer(chat_only(model_reply(REPLIES))) as model, FaultServer(chat_only(judge)) as judge_server:
        code = run("--data", "MLVU", "--data-root", str(snapshot), "--model", "served", "--api-base", model.base_url,
                   "--work-dir", str(work), "--nframe", "4", "--retries", "0", "--judge", "judge-m",
                   "--judge-api-base", judge_server.base_url)
        requests = {row_of(r): r for r in chat_requests(model.requests)}
        asked = chat_requests(judge_server.requests)
    assert code == SAMPLES_FAILED  # row [1]'s call fails: an error record
    summary = requests[2].body["messages"]
    assert summary[0] == {"role": "system", "content": SYS}
    assert summary[1]["content"][-1]["text"] == "[2] Summarize the video."
    assert frames_sent(summary[1]["content"]) == [int(i * 137 / 5) for i in range(1, 5)]
    assert requests[4].body["messages"][1]["content"][-2]["text"].startswith("Question: [4] Who leaves?")
    systems = sorted(r.body["messages"][0]["content"] for r in asked)
    assert systems == sorted([SYSTEM_SUB_SCENE, SYSTEM_SUMMARY, SYSTEM_SUMMARY])
    scoring = json.loads((work / "served" / "MLVU" / "results.json").read_text())["scoring"]
    assert scoring["primary_metric"]["name"] == "M-Avg" and scoring["primary_metric"]["value"] == 100.0
    assert scoring["metrics"]["G-Avg"] == pytest.approx(3.25)
    assert scoring["metric_scales"]["G-Avg"] == {"scale": "points", "higher_is_better": True, "out_of": 10.0}
