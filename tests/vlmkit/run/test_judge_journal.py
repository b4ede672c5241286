"""The journalled judge against a real HTTP server: replies in order, every call journalled, a resumed judge asks
nothing twice, a failed call is an error reply that is asked again later, a dead judge stops in one line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.judging import JudgeRequest, JudgeStopped, judge_rounds
from vlmkit.run.judge_journal import JournalledJudge

KEY = "sk-judge-secret-4f1c9a"


def echo_upper(request: Recorded) -> Reply:
    """Answers the prompt in upper case; `fail` prompts get HTTP 500; the key is echoed back in an error."""
    if request.method == "GET":
        return Reply(404, {"error": {"message": "no models route"}})
    prompt = request.body["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
    if "fail" in prompt:
        return Reply(500, {"error": {"message": f"boom for {request.headers.get('Authorization')}"}})
    return chat_reply(prompt.upper(), usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7})


def judge_at(server: FaultServer, journal: Path, **kwargs) -> JournalledJudge:
    model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
    return JournalledJudge(model, journal, nproc=3, secrets=(KEY,), **kwargs)


def posts(server: FaultServer) -> list[Recorded]:
    return [r for r in server.requests if r.method == "POST"]


def test_replies_in_order_journalled_and_never_asked_twice(tmp_path: Path):
    journal = tmp_path / "judge.jsonl"
    requests = [JudgeRequest(f"row {i}", system="be brief", temperature=0.5, max_tokens=16, row=str(i))
                for i in range(7)]
    with FaultServer(echo_upper) as server:
        judge = judge_at(server, journal)
        replies = judge.ask(requests)
        assert [r.text for r in replies] == [f"ROW {i}" for i in range(7)]
        assert not any(r.cached for r in replies)
        body = posts(server)[0].body
        assert body["temperature"] == 0.5 and body["max_tokens"] == 16 and body["model"] == "judge-m"
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert len(posts(server)) == 7

        again = judge_at(server, journal)  # a resumed run: a new judge over the same journal
        replies = again.ask(requests + [JudgeRequest("row 7")])
        assert [r.text for r in replies] == [f"ROW {i}" for i in range(8)]
        assert [r.cached for r in replies] == [True] * 7 + [False]
        assert len(posts(server)) == 8  # only the new request was asked

        # the same prompt at another attempt is another request (VLMEvalKit re-asks at temperature 0)
        again.ask([JudgeRequest("row 7", attempt=1)])
        assert len(posts(server)) == 9
    stats = again.stats()
    assert stats["name"] == "judge-m" and stats["asked_this_run"] == 2 and stats["from_journal"] == 7
    assert stats["usage"]["input_tokens"] == 5 * 9 and stats["errors"] == 0
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert lines[0] == {"__journal__": {"journal": "judge"}}
    assert len(lines) == 1 + 9 and all(rec["error"] is None for rec in lines[1:])


def test_a_failed_call_is_an_error_reply_asked_again_next_time(tmp_path: Path):
    journal = tmp_path / "judge.jsonl"
    requests = [JudgeRequest("fine"), JudgeRequest("fail please")] + [JudgeRequest(f"ok {i}") for i in range(8)]
    with FaultServer(echo_upper) as server:
        replies = judge_at(server, journal).ask(requests)
        assert replies[0].text == "FINE" and replies[1].text is None and not replies[1].ok
        assert replies[1].error["status"] == 500
        before = len(posts(server))
        replies = judge_at(server, journal).ask(requests)
        assert len(posts(server)) == before + 1  # only the failed one again
        assert replies[1].error is not None
    assert KEY not in journal.read_text()  # the server echoed the key in its error: scrubbed


def test_rounds_ask_only_the_rows_still_unread(tmp_path: Path):
    with FaultServer(echo_upper) as server:
        judge = judge_at(server, tmp_path / "judge.jsonl")
        outcomes = judge_rounds(judge, {"a": "say b", "b": "say x"},
                                lambda key, reply: reply[-1] if reply[-1] in "AB" else None,
                                temperatures=(0.0, 0.5, 1.0))
        temps = [r.body["temperature"] for r in posts(server)]
    assert outcomes["a"].value == "B" and outcomes["a"].replies == ["SAY B"]
    assert outcomes["b"].value is None and outcomes["b"].replies == ["SAY X"] * 3
    assert sorted(temps) == [0.0, 0.0, 0.5, 1.0]


def test_an_unreachable_judge_stops_in_one_line(tmp_path: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAICompatModel("judge-m", api_base=f"http://127.0.0.1:{port}/v1", retries=0, timeout=5)
    judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2)
    with pytest.raises(JudgeStopped) as info:
        judge.ask([JudgeRequest(f"q{i}") for i in range(10)])
    message = str(info.value)
    assert "\n" not in message and message.startswith("judge judge-m: stopped")
    assert "--judge-api-base" in message and "--api-base right" not in message


@pytest.mark.parametrize(("options", "flag"), [({"timeout": 0}, "--judge-timeout"), ({"retries": -1}, "--judge-retries"),
                                               ({"nproc": 0}, "--judge-nproc"),
                                               ({"api_base": "127.0.0.1:9/v1"}, "--judge-api-base")])
def test_a_bad_judge_setting_names_the_judge_flag(options, flag):
    from vlmkit.core.errors import ConfigError
    from vlmkit.run.judge import JudgeOptions

    with pytest.raises(ConfigError) as info:
        JudgeOptions(name="judge-m", **options).check()
    assert flag in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).replace(flag, "").count("--timeout") == 0  # never the evaluated model's flag
