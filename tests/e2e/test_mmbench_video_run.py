"""`vlmkit run --data MMBench-Video --data-root DIR` end to end on a miniature snapshot, through an API model and an
API judge (two in-test OpenAI-compatible servers): VLMEvalKit's frames prompt and frames reach the model, VLMEvalKit's
judge texts reach the judge, results.json holds the hand-worked ratings and VLMEvalKit's figure; without --judge the
run is refused in one line, and `--mode infer` collects the answers without one. MovieChat1k runs the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_mmbench_video import FRAMES_TMPL_NOPACK, RATINGS, REPLIES, SYSTEM
from tests.datasets_tsv.benchmarks.test_mmbench_video import write_mmbench_video
from tests.datasets_tsv.benchmarks.test_moviechat import REPLIES as MOVIECHAT_REPLIES
from tests.datasets_tsv.benchmarks.test_moviechat import VERDICTS, vlmevalkit_prompt, write_moviechat
from tests.e2e.test_run_video_mlvu import frames_sent, run
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Reply, chat_reply
from vlmkit.cli.exit_codes import SAMPLES_FAILED


def model_reply(replies: dict):
    def answer(request) -> Reply:
        reply = replies[row_of(request)]
        return Reply(500, {"error": {"message": "boom"}}) if reply is None else chat_reply(reply)

    return answer


def judge_by_row(table: dict):
    def answer(request) -> Reply:
        text = request.body["messages"][-1]["content"]
        return chat_reply(table[int(text.split("[", 1)[1].split("]", 1)[0])])

    return answer


def test_mmbench_video_through_an_api_model_and_judge(lmu_root: Path, tmp_path: Path):
    snapshot = write_mmbench_video(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(model_reply(REPLIES))) as model, \
            FaultServer(chat_only(judge_by_row(RATINGS))) as judge:
        code = run("--data", "MMBench-Video", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   model.base_url, "--work-dir", str(work), "--nframe", "8", "--retries", "0", "--judge", "judge-m",
                   "--judge-api-base", judge.base_url)
        requests = sorted(chat_requests(model.requests), key=row_of)
        asked = chat_requests(judge.requests)
    assert code == SAMPLES_FAILED  # one row's call failed (HTTP 500): an error record, never a prediction
    first = next(r for r in requests if row_of(r) == 0).body["messages"]
    [user] = first
    assert [p["type"] for p in user["content"]] == ["text"] + ["image_url"] * 8 + ["text"]
    assert user["content"][0]["text"] == FRAMES_TMPL_NOPACK.format(8)
    assert user["content"][-1]["text"] == "Question: [0] What is the topic?\nAnswer: "
    assert frames_sent(user["content"]) == [int(i * 50 / 9) for i in range(1, 9)]
    assert len(asked) == 4  # the failed row is not judged
    one = next(r for r in asked if "[0]" in r.body["messages"][-1]["content"]).body["messages"]
    assert one[0] == {"role": "system", "content": SYSTEM}
    assert one[-1]["content"] == ("Question: [0] What is the topic?\nGroundtruth answer: cooking\n"
                                  "Candidate answer: cooking pasta\nYour response: ")
    scoring = json.loads((work / "served" / "MMBench-Video" / "results.json").read_text())["scoring"]
    assert scoring["primary_metric"]["value"] == pytest.approx(6 / 5)
    assert scoring["primary_metric"]["out_of"] == 3.0
    assert scoring["metrics"]["valid/Overall"] == pytest.approx(2.0)
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == 2.2 and scoring["vlmevalkit"]["differing_rows"] == 1


def test_without_a_judge_it_is_refused_and_infer_runs(lmu_root: Path, tmp_path: Path, capsys):
    snapshot = write_mmbench_video(tmp_path / "snap")
    with FaultServer(chat_only(model_reply(REPLIES))) as model:
        refused = run("--data", "MMBench-Video", "--data-root", str(snapshot), "--model", "served", "--api-base",
                      model.base_url, "--work-dir", str(tmp_path / "a"))
        err = capsys.readouterr().err
        inferred = run("--data", "MMBench-Video", "--data-root", str(snapshot), "--model", "served", "--api-base",
                       model.base_url, "--work-dir", str(tmp_path / "b"), "--mode", "infer", "--retries", "0")
    assert refused != 0 and "MMBench-Video is scored by an LLM judge" in err and "--judge MODEL" in err
    assert inferred == SAMPLES_FAILED
    records = [json.loads(line) for line in (tmp_path / "b" / "served" / "MMBench-Video" / "predictions.jsonl").open()]
    assert len(records) == 5


def test_moviechat1k_through_an_api_model_and_judge(lmu_root: Path, tmp_path: Path):
    snapshot = write_moviechat(tmp_path / "snap")
    work = tmp_path / "out"
    with FaultServer(chat_only(model_reply(MOVIECHAT_REPLIES))) as model, \
            FaultServer(chat_only(judge_by_row(VERDICTS))) as judge:
        code = run("--data", "MovieChat1k", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   model.base_url, "--work-dir", str(work), "--nframe", "4", "--retries", "0", "--judge", "judge-m",
                   "--judge-api-base", judge.base_url)
        requests = sorted(chat_requests(model.requests), key=row_of)
        asked = chat_requests(judge.requests)
    assert code == SAMPLES_FAILED  # one row's call failed (HTTP 500): an error record, never a prediction
    [user] = next(r for r in requests if row_of(r) == 2).body["messages"]
    assert frames_sent(user["content"]) == [int(i * 137 / 5) for i in range(1, 5)]
    assert user["content"][-1]["text"] == "[2] What is he holding?"
    prompt = next(r for r in asked if "[0]" in r.body["messages"][-1]["content"]).body["messages"]
    assert prompt == [{"role": "user", "content": vlmevalkit_prompt({"question": "[0] Who drives?",
                                                                      "answer": "the mother",
                                                                      "prediction": "her mom"})}]
    scoring = json.loads((work / "served" / "MovieChat1k" / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == pytest.approx(2 / 5)
    assert scoring["vlmevalkit"]["metrics"]["Overall"] == 0.67
