"""A custom dataset through the existing runner against an in-test OpenAI-compatible server: per-row Ark
parameters reach the request body, conversations arrive as turns, and the result files hold the conversation,
the response, usage and the score."""

from __future__ import annotations

import json
from pathlib import Path

from datasets_tsv.custom import build_custom_dataset
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.runner import Runner, RunOptions

from tests.datasets_tsv.custom.conftest import FIXTURES

SUMS = {"1+1": "2", "2+1": "3", "3+2": "5", "0+1": "1", "0+2": "3"}  # 0+2 answered wrongly on purpose


def answer(request: Recorded) -> Reply:
    if request.method != "POST":  # the runner's probe of GET /models: a server without a model list
        return Reply(404, {"error": {"message": "no model list here"}})
    last = request.body["messages"][-1]["content"]
    text = last if isinstance(last, str) else "".join(p.get("text", "") for p in last if p.get("type") == "text")
    return chat_reply(SUMS.get(text.strip(), "B"))


def chat_bodies(server: FaultServer) -> list[dict]:
    return [r.body for r in server.requests if r.method == "POST"]


def run(dataset, tmp_path: Path, server: FaultServer):
    spec = resolve_model("served", ModelOptions(api_base=server.base_url, api_key="sk-test"))
    runner = Runner(RunOptions(work_dir=tmp_path / "out", nproc=2, progress=False))
    return runner.run_one(spec, dataset)


def records(outcome) -> list[dict]:
    return [json.loads(line) for line in Path(outcome.files["predictions"]).read_text().splitlines()]


def test_ark_multi_turn_through_the_runner(tmp_path):
    ds = build_custom_dataset(FIXTURES / "ark" / "multi_turn.jsonl")
    with FaultServer(answer) as server:
        outcome = run(ds, tmp_path, server)
        bodies = sorted(chat_bodies(server), key=lambda b: len(b["messages"]))
    assert outcome.status == "success" and outcome.evaluation.metrics["exact_match"] == 100.0
    last = bodies[-1]
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "user"]
    assert (last["temperature"], last["top_p"], last["max_tokens"], last["frequency_penalty"]) == (1.0, 0.7, 4096, 0.0)
    assert "logprobs" not in last and "top_logprobs" not in last
    rec = {r["index"]: r for r in records(outcome)}
    assert rec[2]["prediction"] == "5" and rec[2]["params"]["max_tokens"] == 4096 and rec[2]["usage"]["output_tokens"] == 3
    assert rec[2]["metadata"]["messages"][-1] == {"role": "user", "content": "3+2"} and rec[2]["exact_match"] == 1.0
    assert rec[2]["target"] == "5" and [t["role"] for t in rec[2]["prompt"]] == ["system", "user", "assistant", "user"]
    results = json.loads(Path(outcome.files["results"]).read_text())
    assert results["dataset"]["format"] == "conversation" and results["scoring"]["primary_metric"]["name"] == "exact_match"


def test_text_mcq_with_row_max_tokens_through_the_runner(tmp_path):
    ds = build_custom_dataset(FIXTURES / "aisbench" / "test_mcq_max_tokens.csv")  # answers B, B, C, B
    with FaultServer(answer) as server:
        outcome = run(ds, tmp_path, server)
        limits = sorted(b["max_tokens"] for b in chat_bodies(server))
    assert limits == [256, 512, 1024, 2048]
    assert outcome.evaluation.primary_value == 0.75 and outcome.evaluation.counts["scored"] == 4


def test_inference_only_file_reports_no_target(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text('{"question": "1+1"}\n{"question": "3+2"}\n')
    with FaultServer(answer) as server:
        outcome = run(build_custom_dataset(path), tmp_path, server)
    assert outcome.status == "no_target" and outcome.evaluation is None
    assert [r["prediction"] for r in records(outcome)] == ["2", "5"]
