"""`vlmkit run --data TempCompass_MCQ --data-root DIR` end to end on a miniature snapshot
(tests.support.video_snapshots.write_tempcompass) through an API model, and with an API judge for the replies no
rule reads: VLMEvalKit's texts and frames arrive, the judge gets VLMEvalKit's prompt and system text, and
results.json holds the hand-worked scores.

The catalog row is the one proposed for datasets_tsv/catalog/catalog.tsv (`ROW`); the test adds it for the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_tempcompass import FRAMES, ITEMS, JUDGE_PROMPT_2, REPLIES
from tests.e2e.test_run_video_mlvu import frames_sent, run, with_rows
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from tests.support.video_snapshots import write_tempcompass

ROW = (
    "TempCompass_MCQ\tvideo\tok\ttempcompass_mcq\toptional\t\tdatasets_tsv.benchmarks.tempcompass:TempCompassMCQ\t{}"
    "\t\t\tTempCompass_MCQ from a local snapshot of lmms-lab/TempCompass (--data-root DIR, or the Hugging Face cache)"
    "\tno download: the rows are read from a local snapshot of lmms-lab/TempCompass (multi-choice.json and "
    "caption_matching.json, or their parquets); VLMEvalKit's TempCompass_MCQ.tsv MD5 7efbb9e6d9dabacd22daf274852691dd "
    "is of a TSV vlmkit does not build\tVideo-MCQ\twrapper\n"
)


def test_tempcompass_mcq_through_an_api_model_and_judge(monkeypatch: pytest.MonkeyPatch, lmu_root: Path,
                                                        tmp_path: Path):
    with_rows(monkeypatch, ROW)
    snapshot = write_tempcompass(tmp_path / "TempCompass", ITEMS, frames=FRAMES)
    work = tmp_path / "out"

    def judge(request):
        text = request.body["messages"][-1]["content"]
        return chat_reply("Correct" if "[2]" in text else "Incorrect")

    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as model, \
            FaultServer(chat_only(judge)) as judge_server:
        code = run("--data", "TempCompass_MCQ", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   model.base_url, "--work-dir", str(work), "--nframe", "2", "--judge", "judge-m",
                   "--judge-api-base", judge_server.base_url)
        requests = sorted(chat_requests(model.requests), key=row_of)
        asked = chat_requests(judge_server.requests)
    assert code == 0 and len(requests) == 7
    for request in requests:
        [user] = request.body["messages"]  # no system turn
        assert [p["type"] for p in user["content"]] == ["image_url"] * 2 + ["text", "text"]
        assert user["content"][-1]["text"] == "\nPlease directly give the best option:"
    # [2] asks about vB (137 frames): int(i * 137 / 3), i = 1, 2: frames 45 and 91
    assert frames_sent(requests[2].body["messages"][0]["content"]) == [45, 91]
    assert len(asked) == 2  # [2] and [6], the replies no rule reads
    prompts = sorted(r.body["messages"][-1]["content"] for r in asked)
    assert prompts[0] == JUDGE_PROMPT_2
    assert asked[0].body["messages"][0] == {"role": "system",
                                            "content": "You are an AI assistant for question answering."}
    scoring = json.loads((work / "served" / "TempCompass_MCQ" / "results.json").read_text())["scoring"]
    assert scoring["primary_metric"]["value"] == pytest.approx(400 / 7)
    assert scoring["metrics"]["dim: order"] == pytest.approx(100.0)
    assert scoring["counts"]["by_judge"] == 2
