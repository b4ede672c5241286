"""Ark's output records (vlmkit.outputs.ark) for custom conversation datasets, checked against Ark's own examples.

fixtures/ark/*_output.jsonl are the output lines of Volcengine Ark's evaluation-format page (seed 003), copied
verbatim: a run of vlmkit over the same inputs, with the same replies, usage and judgements, must write them line
for line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.custom import build_custom_dataset
from vlmkit.outputs.ark import ark_records, ark_usage, write_ark_output
from vlmkit.core.cells import index_key
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.fence import unfence
from vlmkit.core.secrets import MASK

from tests.datasets_tsv.custom.conftest import FIXTURES


def _journal_from(expected: list[dict], ds) -> dict[str, dict]:
    """The journal records a run would have: each row's reply, usage and sent parameters as Ark's output shows."""
    out = {}
    for pos, record in enumerate(expected):
        response = record["messages"][-1]["responses"][0]
        usage = response["usage"]
        key = index_key(ds.data["index"][pos])
        out[key] = {"index": ds.data["index"][pos], "prediction": response["content"], "error": None,
                    "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                              "reasoning_tokens": 0},
                    "params": ds.generation_params(pos)}
    return out


def _judge_from(expected: list[dict]) -> FunctionJudge:
    """A judge answering with Ark's score and analysis, keyed by the reply it is shown."""
    by_reply = {}
    for record in expected:
        response = record["messages"][-1]["responses"][0]
        by_reply[response["content"]] = json.dumps({"analysis": response["analysis"], "score": response["score"]},
                                                   ensure_ascii=False)

    def answer(request: JudgeRequest) -> str:
        reply = unfence(request.prompt)
        return by_reply[reply]

    return FunctionJudge(answer, "ark-key")


@pytest.mark.parametrize("name", ["single_turn", "multi_turn"])
def test_records_equal_arks_example_output_line_for_line(tmp_path: Path, name):
    ds = build_custom_dataset(FIXTURES / "ark" / f"{name}.jsonl")
    assert ds.output_format == "ark"
    seed_lines = (FIXTURES / "ark" / f"{name}_output.jsonl").read_text(encoding="utf-8").splitlines()
    expected = [json.loads(line) for line in seed_lines]
    records = _journal_from(expected, ds)
    table = ds.data.copy()
    table["prediction"] = [records[index_key(i)]["prediction"] for i in table["index"]]
    evaluation = ds.evaluate(table, judge=_judge_from(expected))
    assert evaluation.counts["by_judge"] == len(expected)

    out = tmp_path / "ark_output.jsonl"
    assert write_ark_output(out, ds.data, records, evaluation.per_sample) == len(expected)
    written = out.read_text(encoding="utf-8").splitlines()
    for ours, theirs in zip(written, seed_lines):
        assert json.loads(ours) == json.loads(theirs)
        assert ours == theirs  # same keys in the same order, same numbers (2.0), the same text
    assert len(written) == len(seed_lines)


def test_a_session_of_several_csv_rows_written_by_hand(tmp_path: Path):
    """Ark's Excel layout (as csv): a two-row session, a failed inference, no judge; the records written out in full."""
    data = tmp_path / "sessions.csv"
    data.write_text(
        "session_id,system_prompt,query,reference_response,parameters,response\n"
        '7,You are terse.,Hi,,,"Hello."\n'
        "7,You are terse.,2+2?,4,\"{'temperature': 1.0, 'top_p': 0.7, 'max_tokens': 64, 'stop': []}\",\n"
        "9,,Capital of France?,Paris,,\n",
        encoding="utf-8",
    )
    ds = build_custom_dataset(data)
    assert ds.output_format == "ark" and ds.data["index"].tolist() == [7, 9]
    assert ds.line(0)["parameters"] == {"temperature": 1.0, "top_p": 0.7, "max_tokens": 64, "stop": []}
    records = {
        "7": {"index": 7, "prediction": "4", "error": None, "params": ds.generation_params(0),
              "usage": {"input_tokens": 30, "output_tokens": 12, "reasoning_tokens": 10}, "reasoning": "2+2 is 4"},
        "9": {"index": 9, "prediction": None, "error": {"kind": "http_5xx", "message": "server error 503"},
              "usage": None, "params": None},
    }
    got = ark_records(ds.data, records, None, defaults={"temperature": 0.0, "max_tokens": 16, "api_key": "sk-x",
                                                         "model": "m"})
    assert got == [
        {
            "session_id": 7,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "2+2?"},
                {
                    "role": "assistant",
                    "reference_response": "4",
                    "responses": [
                        {
                            # run defaults, then the row's parameters as given, then what was sent
                            "parameters": {"temperature": 1.0, "max_tokens": 64, "top_p": 0.7, "stop": []},
                            "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42,
                                      "completion_tokens_details": {"reasoning_tokens": 10}},
                            "content": "4",
                            "score": None,  # no judge: null
                            "analysis": None,
                        }
                    ],
                },
            ],
        },
        {
            "session_id": 9,
            "messages": [
                {"role": "user", "content": "Capital of France?"},
                {
                    "role": "assistant",
                    "reference_response": "Paris",
                    "responses": [
                        {
                            "parameters": {"temperature": 0.0, "max_tokens": 16},
                            "usage": None,
                            "content": None,
                            "score": None,
                            "analysis": None,
                            "error": "http_5xx: server error 503",
                        }
                    ],
                },
            ],
        },
    ]


def test_unread_judgement_and_rows_without_reference_or_reply(tmp_path: Path):
    data = tmp_path / "conv.jsonl"
    rows = [
        {"system": "Be brief.", "prompt": "Sky colour?", "answer": "blue"},
        {"prompt": "Grass colour?", "answer": "green"},
        {"prompt": "Tell a joke."},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ds = build_custom_dataset(data)
    table = ds.data.copy()
    table["prediction"] = ["Blue.", "Green.", "Knock knock."]
    judge = FunctionJudge(lambda r: '{"analysis": "ok", "score": 9}' if "Blue." in r.prompt else "no idea", "k")
    evaluation = ds.evaluate(table, judge=judge)
    records = {index_key(i): {"index": i, "prediction": p, "error": None, "usage": None}
               for i, p in zip(table["index"], table["prediction"])}
    del records["1"]  # never asked (a killed run)
    got = ark_records(ds.data, records, evaluation.per_sample)
    first, second, third = (r["messages"][-1] for r in got)
    assert [r["session_id"] for r in got] == [0, 1, 2]
    assert got[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (first["responses"][0]["score"], first["responses"][0]["analysis"]) == (9.0, "ok")
    assert second["responses"][0] == {"parameters": {}, "usage": None, "content": None, "score": None,
                                      "analysis": None, "error": "not_run: the row was not asked"}
    assert third["reference_response"] is None  # inference only for this row
    assert (third["responses"][0]["content"], third["responses"][0]["score"]) == ("Knock knock.", None)
    assert "error" not in third["responses"][0]


def test_unread_judgement_is_null_never_a_guess():
    rows = pd.DataFrame({"index": [0], "question": ["q"], "answer": ["a"], "messages": [None]}, dtype=object)
    per_sample = pd.DataFrame({"index": [0], "points": [None], "score": [None], "analysis": [None],
                               "method": ["judge_unread"], "judge": ["unsure"]}, dtype=object)
    got = ark_records(rows, {"0": {"index": 0, "prediction": "b", "error": None}}, per_sample)
    response = got[0]["messages"][-1]["responses"][0]
    assert (response["score"], response["analysis"], response["content"]) == (None, None, "b")
    assert got[0]["messages"][0] == {"role": "user", "content": "q"}


def test_session_ids_fall_back_to_the_index_when_they_repeat():
    rows = pd.DataFrame({"index": [0, 1, 2], "question": ["a", "b", "c"], "session_id": ["5", "5", "6"]},
                        dtype=object)
    assert [r["session_id"] for r in ark_records(rows, {})] == [0, 1, 2]
    rows["session_id"] = ["s-1", "s-2", "3"]
    assert [r["session_id"] for r in ark_records(rows, {})] == ["s-1", "s-2", 3]


def test_usage_names_and_secrets(tmp_path: Path):
    assert ark_usage({"input_tokens": 3, "output_tokens": 4, "reasoning_tokens": 0}) == {
        "prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert ark_usage(None) is None
    rows = pd.DataFrame({"index": [0], "question": ["key?"], "answer": ["none"]}, dtype=object)
    out = tmp_path / "run" / "ark_output.jsonl"
    write_ark_output(out, rows, {"0": {"index": 0, "prediction": "it is sk-secret-123", "error": None}},
                     secrets=["sk-secret-123", None])
    text = out.read_text(encoding="utf-8")
    assert "sk-secret-123" not in text
    assert json.loads(text)["messages"][-1]["responses"][0]["content"] == f"it is {MASK}"


def test_only_conversation_files_ask_for_ark_records(tmp_path: Path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "q", "answer": "a"}\n', encoding="utf-8")
    mcq = tmp_path / "mcq.csv"
    mcq.write_text("question,A,B,answer\nq,x,y,A\n", encoding="utf-8")
    assert build_custom_dataset(qa).output_format is None
    assert build_custom_dataset(mcq).output_format is None
    assert build_custom_dataset(FIXTURES / "ark" / "excel_multi_turn.csv").output_format == "ark"


def test_a_real_run_journal_gives_arks_example_output(tmp_path: Path):
    """The seed's multi-turn file through the runner against an in-test server that answers with Ark's replies and
    usage; the run's own journal records, judged, make Ark's example output line for line - but for the white space
    around each reply, which vlmkit's API client strips from every answer."""
    from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
    from vlmkit.run.journal import Journal
    from vlmkit.run.resolve import ModelOptions, resolve_model
    from vlmkit.run.runner import Runner, RunOptions

    seed_lines = (FIXTURES / "ark" / "multi_turn_output.jsonl").read_text(encoding="utf-8").splitlines()
    expected = [json.loads(line) for line in seed_lines]
    by_question = {}
    for record in expected:
        response = record["messages"][-1]["responses"][0]
        by_question[record["messages"][-2]["content"]] = (response["content"], response["usage"])

    def answer(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no model list here"}})
        content, usage = by_question[request.body["messages"][-1]["content"]]
        return chat_reply(content, usage=usage)

    ds = build_custom_dataset(FIXTURES / "ark" / "multi_turn.jsonl")
    with FaultServer(answer) as server:
        spec = resolve_model("served", ModelOptions(api_base=server.base_url, api_key="sk-test"))
        outcome = Runner(RunOptions(work_dir=tmp_path / "out", nproc=2, progress=False)).run_one(spec, ds)
    assert outcome.status == "success"
    records = Journal(Path(outcome.files["journal"]), {}).load()
    for record in expected:  # what vlmkit keeps of each reply
        response = record["messages"][-1]["responses"][0]
        response["content"] = response["content"].strip()
    table = ds.data.copy()
    table["prediction"] = [records[index_key(i)]["prediction"] for i in table["index"]]
    evaluation = ds.evaluate(table, judge=_judge_from(expected))
    out = tmp_path / "ark_output.jsonl"
    write_ark_output(out, ds.data, records, evaluation.per_sample, defaults=spec.kwargs, secrets=["sk-test"])
    assert out.read_text(encoding="utf-8").splitlines() == [json.dumps(r, ensure_ascii=False) for r in expected]
