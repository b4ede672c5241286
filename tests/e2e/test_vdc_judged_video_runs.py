"""The other judge-scored video benchmarks (TempCompass, QBench_Video, VDC, Video_MMLU_QA, DREAM-1K, VCR-Bench) end to
end through `vlmkit run` on their miniature snapshots, with an API model and an API judge (in-test OpenAI-compatible
servers answering VLMEvalKit-shaped judge replies): each run finishes and results.json holds the headline worked by
hand in the dataset tests (tests/datasets_tsv/benchmarks/test_<family>.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.datasets_tsv.benchmarks import test_dream1k, test_qbench_video_vqa, test_tempcompass_open, test_vcrbench
from tests.datasets_tsv.benchmarks import test_vdc
from tests.e2e.test_mmbench_video_run import model_reply
from tests.e2e.test_run_video_mlvu import run
from tests.support.run_helpers import chat_only
from tests.support.servers import FaultServer, chat_reply
from vlmkit.cli.exit_codes import OK, SAMPLES_FAILED
from vlmkit.judging import JudgeRequest


def as_request(body: dict[str, Any]) -> JudgeRequest:
    """The judge's chat body as the JudgeRequest the dataset tests' judge functions read."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else None
    return JudgeRequest(messages[-1]["content"], system=system)


def judge_server(fn: Callable[[JudgeRequest], str]):
    return chat_only(lambda request: chat_reply(fn(as_request(request.body))))


def row_in(text: str) -> int:
    return int(re.search(r"\[(\d+)\]", text).group(1))


VDC_ANSWERS = {**test_vdc.ANSWERS, "q2": "yes"}
VDC_VERDICTS = {**test_vdc.VERDICTS, "q2": "{'pred': 'yes', 'score': 3}"}


def vdc_judge(request: JudgeRequest) -> str:
    key = test_vdc.question_key(request.prompt)
    return VDC_ANSWERS[key] if request.system == test_vdc.vdc_scorer.SYSTEM_ANSWER else VDC_VERDICTS[key]


MMLU_QA = [{"index": 0, "video": "a.mp4", "discipline": "Math", "question": "[0] What is 2+2?", "answer": "4"},
           {"index": 1, "video": "b.mp4", "discipline": "physics", "question": "[1] What falls?", "answer": "apple"}]

CASES = {
    # name: (write snapshot, model reply by row or a constant, judge, code, headline)
    "TempCompass": (test_tempcompass_open.write_snapshot, test_tempcompass_open.REPLIES,
                    test_tempcompass_open.judge_reply, SAMPLES_FAILED, 50.0),
    "QBench_Video": (test_qbench_video_vqa.write_qbench, test_qbench_video_vqa.REPLIES,
                     lambda r: test_qbench_video_vqa.SCORES[row_in(r.prompt)], SAMPLES_FAILED, 250 / 6),
    # every caption is "A brown dog runs.": q0 yes, q1 no, q2 yes, q3 unread
    "VDC": (test_vdc.write_vdc, "A brown dog runs.", vdc_judge, OK, 0.5),
    "Video_MMLU_QA": (lambda root: test_vdc.write_vdc(root, MMLU_QA, name="Video_MMLU_QA", folder="youtube_videos"),
                      {0: "4", 1: "a stone"},
                      lambda r: "{'pred': 'yes', 'score': 5}" if "[0]" in r.prompt else '{"pred": "no", "score": 1}',
                      OK, 0.5),
    "DREAM-1K": (test_dream1k.write_dream, test_dream1k.PREDICTIONS, lambda r: test_dream1k.REPLIES[r.prompt],
                 SAMPLES_FAILED, 0.5),
    "VCR-Bench": (test_vcrbench.write_vcr, test_vcrbench.PREDICTIONS, test_vcrbench.judge_reply, SAMPLES_FAILED,
                  1 / 3),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_runs_to_the_hand_worked_headline(name: str, lmu_root: Path, tmp_path: Path):
    write, replies, judge, expected_code, headline = CASES[name]
    snapshot = write(tmp_path / "snap")
    model = chat_only(lambda request: chat_reply(replies)) if isinstance(replies, str) else \
        chat_only(model_reply(replies))
    work = tmp_path / "out"
    with FaultServer(model) as served, FaultServer(judge_server(judge)) as judged:
        code = run("--data", name, "--data-root", str(snapshot), "--model", "served", "--api-base", served.base_url,
                   "--work-dir", str(work), "--nframe", "8", "--retries", "0", "--judge", "judge-m",
                   "--judge-api-base", judged.base_url)
    assert code == expected_code
    results = json.loads((work / "served" / name / "results.json").read_text())
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(headline), name
    assert results["dataset"]["kind"] == "video"
