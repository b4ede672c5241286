"""Several servers behind one model (`--api-base A,B`, vlm.api.replicas): requests spread by least-in-flight, a replica
that dies is failed over without spending a row's retries, a failing one is set aside, the counts add up with what
the servers themselves saw, and `vlmkit run` over two servers predicts what it predicts over one."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, chat_requests, run_served, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply, models_reply
from tests.vlm.api.raw_server import RawConnection, RawRequest, RawServer, chat_json, http_response
from vlm.api.openai_compat import OpenAICompatModel, api_base_list, chat_completions_url, replica_urls
from vlm.api.replicas import SET_ASIDE_AFTER, SET_ASIDE_S, ReplicaSet
from vlmkit.core.errors import ConfigError
from vlmkit.core.model_calls import ModelCallError
from vlmkit.run.inference import Task, run_api
from vlmkit.run.journal import Journal

ROWS = 40


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)


def own_answer(conn: RawConnection, request: RawRequest) -> None:
    conn.send(http_response(200, chat_json(f"answer to {request.question}")))


def ask_rows(model: OpenAICompatModel, tmp_path: Path, rows: int = ROWS, nproc: int = 4) -> dict[int, dict]:
    """run_api over q0..q{rows-1}; the journalled records by index."""
    tasks = [Task(i, [f"q{i}"]) for i in range(rows)]
    journal = Journal(tmp_path / "journal.jsonl", {"test": "replicas"})
    journal.open()
    try:
        run_api(model, tasks, journal, dataset=None, nproc=nproc, desc="test", progress=False)
    finally:
        journal.close()
        model.close()
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()[1:]
    return {r["index"]: r for r in map(json.loads, lines)}


# ------------------------------------------------------------------------------------------------ the choice


class Clock:
    """A clock the test moves by hand (time.monotonic's place in ReplicaSet)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_go_to_the_replica_with_the_fewest_in_flight() -> None:
    servers = ReplicaSet([("a", "a/c"), ("b", "b/c"), ("c", "c/c")])
    held = [servers.pick() for _ in range(6)]  # none finishes: in flight 2, 2, 2
    assert sorted(r.base_url for r in held) == ["a", "a", "b", "b", "c", "c"]
    for replica in held:
        if replica.base_url != "c":
            servers.succeeded(replica)
    assert {servers.pick().base_url for _ in range(4)} == {"a", "b"}  # c still holds 2; a and b take 2 each
    assert servers.pick(tried=[servers.replicas[0], servers.replicas[1], servers.replicas[2]]) is None


def test_a_replica_failing_in_a_row_is_set_aside_then_tried_again_after_a_while() -> None:
    clock = Clock()
    servers = ReplicaSet([("a", "a/c"), ("b", "b/c")], clock=clock)
    a, b = servers.replicas
    for _ in range(SET_ASIDE_AFTER):
        servers.failed(a, unreachable=True, moved=True)  # as if picked each time: balance the in-flight count
        a.in_flight += 1
    a.in_flight = 0
    assert [servers.pick().base_url for _ in range(5)] == ["b"] * 5  # a is set aside, whatever b's load
    assert servers.pick(tried=[b]).base_url == "a"  # b already failed this attempt: the set-aside one is tried
    clock.now += SET_ASIDE_S + 1
    b.in_flight = 5
    assert servers.pick().base_url == "a"  # its time is up: tried again
    assert servers.counts()["a"] == {"requests": 2, "errors": SET_ASIDE_AFTER, "failovers": SET_ASIDE_AFTER,
                                     "set_aside": 1}


def test_http_errors_count_as_errors_but_never_set_a_replica_aside() -> None:
    servers = ReplicaSet([("a", "a/c"), ("b", "b/c")])
    a = servers.replicas[0]
    for _ in range(SET_ASIDE_AFTER + 2):
        servers.failed(a, unreachable=False, moved=False)
    assert a.aside_until == 0.0 and servers.counts()["a"]["errors"] == SET_ASIDE_AFTER + 2


# ------------------------------------------------------------------------------------------ naming servers


def test_api_base_takes_commas_or_a_file_of_urls(tmp_path: Path) -> None:
    assert api_base_list("http://a:1/v1, http://b:2/v1,,http://a:1/v1") == ["http://a:1/v1", "http://b:2/v1"]
    listed = tmp_path / "servers.txt"
    listed.write_text("# the replicas\nhttp://a:1/v1\n\n  http://b:2/v1/chat/completions  \n")
    assert replica_urls(str(listed)) == [("http://a:1/v1", "http://a:1/v1/chat/completions"),
                                         ("http://b:2/v1", "http://b:2/v1/chat/completions")]
    assert chat_completions_url("http://a:1/v1,http://b:2/v1") == ("http://a:1/v1", "http://a:1/v1/chat/completions")


def test_a_bad_server_in_a_list_is_named_by_its_line(tmp_path: Path) -> None:
    listed = tmp_path / "servers.txt"
    listed.write_text("http://a:1/v1\nb:2/v1\n")
    with pytest.raises(ConfigError, match=r"servers.txt, line 2: .*'b:2/v1' is not an http\(s\) URL"):
        api_base_list(str(listed))
    with pytest.raises(ConfigError, match=r"'127.0.0.1:9' is not an http\(s\) URL"):
        api_base_list("http://a:1/v1,127.0.0.1:9")
    (tmp_path / "empty.txt").write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="names no server"):
        api_base_list(str(tmp_path / "empty.txt"))
    with pytest.raises(ConfigError, match="must not hold credentials") as caught:
        api_base_list("http://a:1/v1,http://user:sk-secret@b:2/v1")
    assert "sk-secret" not in str(caught.value)


def test_settings_name_every_server_and_a_single_one_stays_as_it_was() -> None:
    assert "servers" not in OpenAICompatModel("m", api_base="http://a:1/v1").settings()
    settings = OpenAICompatModel("m", api_base="http://a:1/v1,http://b:2/v1").settings()
    assert settings["base_url"] == "http://a:1/v1" and settings["servers"] == ["http://a:1/v1", "http://b:2/v1"]


# ------------------------------------------------------------------------------------------- real servers


def test_rows_are_spread_over_both_servers_and_the_counts_match_what_they_saw(tmp_path: Path) -> None:
    with RawServer(own_answer) as a, RawServer(own_answer) as b:
        model = OpenAICompatModel("m", api_base=f"{a.base_url},{b.base_url}", retries=0, timeout=10)
        records = ask_rows(model, tmp_path)
        counts = model.server_counts()
        seen = {a.base_url: len(a.requests), b.base_url: len(b.requests)}
    assert {i: r["prediction"] for i, r in records.items()} == {i: f"answer to q{i}" for i in range(ROWS)}
    assert {url: c["requests"] for url, c in counts.items()} == seen
    assert min(seen.values()) >= ROWS // 4  # both took a real share (least-in-flight with 4 at once)
    assert all(c["errors"] == c["failovers"] == 0 for c in counts.values())


def test_a_server_killed_midway_loses_no_row_and_spends_no_retry(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """retries=0: a row whose failed connection spent an attempt would be an error record. Server A closes the
    connections of its 6th request on without answering, then stops listening (connection refused)."""
    killed = threading.Event()

    def dies_at_the_sixth(conn: RawConnection, request: RawRequest) -> bool | None:
        if request.number >= 5:
            killed.set()
            return False  # closed without an answer
        return own_answer(conn, request)

    caplog.set_level("WARNING", logger="vlm.api.replicas")
    with RawServer(own_answer) as b:
        a = RawServer(dies_at_the_sixth).__enter__()
        a_url = a.base_url
        killer = threading.Thread(target=lambda: killed.wait(30) and a.__exit__(None, None, None), daemon=True)
        killer.start()
        try:
            model = OpenAICompatModel("m", api_base=f"{a_url},{b.base_url}", retries=0, timeout=10)
            records = ask_rows(model, tmp_path)
            counts = model.server_counts()
        finally:
            killed.set()
            killer.join(10)
        b_url = b.base_url
        answered_by_a = len([r for r in a.requests if r.number < 5])
        cut_by_a = len(a.requests) - answered_by_a
    assert {i: r["prediction"] for i, r in records.items()} == {i: f"answer to q{i}" for i in range(ROWS)}
    assert all(r["error"] is None for r in records.values())
    ca, cb = counts[a_url], counts[b_url]
    assert ca["failovers"] >= 1 and ca["errors"] == ca["failovers"]  # each failure on A went on to B
    assert ca["requests"] >= len(a.requests)  # + the ones refused before A's listener saw them
    assert ca["requests"] - ca["errors"] == answered_by_a and cut_by_a <= ca["errors"]
    assert cb["errors"] == 0 and cb["requests"] == len(b.requests)
    assert ca["requests"] + cb["requests"] == ROWS + ca["failovers"]  # every row once, plus each move
    assert ca["set_aside"] >= 1  # it kept failing: set aside, not asked for every row
    said = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert said and all(line.startswith(f"{a_url}: ") and "\n" not in line for line in said)


def test_every_server_down_is_an_error_of_the_attempt_then_retried_with_backoff(tmp_path: Path) -> None:
    with RawServer(own_answer) as a, RawServer(own_answer) as b:
        urls = f"{a.base_url},{b.base_url}"
    model = OpenAICompatModel("m", api_base=urls, retries=1, backoff=0.01, timeout=5)
    with pytest.raises(ModelCallError) as caught:
        model.generate_full(["q"])
    model.close()
    assert caught.value.kind == "connection" and "after 2 attempts" in str(caught.value)
    counts = model.server_counts()
    assert sum(c["requests"] for c in counts.values()) == 4  # 2 attempts, each on both servers
    assert sum(c["failovers"] for c in counts.values()) == 2  # the first server of each attempt moved on


def test_the_probe_checks_every_server_and_sets_aside_the_ones_down(tmp_path: Path) -> None:
    def serves(request: Recorded) -> Reply:
        if request.method == "GET":
            return models_reply("m")
        return chat_reply(f"from {request.body['messages'][-1]['content']}")

    with FaultServer(serves) as up:
        with RawServer(own_answer) as gone:
            down_url = gone.base_url
        model = OpenAICompatModel("m", api_base=f"{down_url},{up.base_url}", retries=0, timeout=5, api_key="sk-key-9")
        info = model.probe()
        answers = [model.generate([f"q{i}"]) for i in range(4)]
        counts = model.server_counts()
        model.close()
    assert info["models"] == ["m"] and info["servers"][up.base_url] == "ok"
    assert info["servers"][down_url] == "connection refused"
    assert info["warning"].startswith("1 of 2 servers do not answer and are set aside: " + down_url)
    assert "\n" not in info["warning"] and "sk-key-9" not in json.dumps(info)
    assert answers == [f"from q{i}" for i in range(4)]
    assert counts[down_url]["requests"] == 0  # set aside by the probe: no row waited on it


def test_the_probe_with_every_server_down_says_so_in_one_line() -> None:
    with RawServer(own_answer) as a, RawServer(own_answer) as b:
        urls = [a.base_url, b.base_url]
    model = OpenAICompatModel("m", api_base=",".join(urls), timeout=5)
    with pytest.raises(ModelCallError) as caught:
        model.probe()
    text = str(caught.value)
    assert caught.value.kind == "connection" and "\n" not in text
    assert text.startswith("none of the 2 servers answers") and all(u in text for u in urls)


def test_a_refused_key_on_any_server_stops_the_probe() -> None:
    def refuses(request: Recorded) -> Reply:
        return Reply(401, {"error": {"message": "bad key"}})

    with FaultServer(lambda r: models_reply("m")) as good, FaultServer(refuses) as bad:
        model = OpenAICompatModel("m", api_base=f"{good.base_url},{bad.base_url}", api_key="sk-x")
        with pytest.raises(ModelCallError, match="HTTP 401.*check --api-key") as caught:
            model.probe()
        model.close()
    assert caught.value.kind == "http_4xx"


def test_vlmkit_run_over_two_servers_predicts_what_one_server_predicts(tmp_path: Path, lmu_root: Path) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=12)

    def answer(request: Recorded) -> Reply:  # a deterministic answer from the question alone
        content = request.body["messages"][-1]["content"]
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        return chat_reply("Yes" if "red" in text else "No")

    with FaultServer(chat_only(answer)) as one:
        single = run_served(one.base_url, tmp_path / "one", lmu_root, "--nproc", "4")
    with FaultServer(chat_only(answer)) as a, FaultServer(chat_only(answer)) as b:
        double = run_served(f"{a.base_url},{b.base_url}", tmp_path / "two", lmu_root, "--nproc", "4")
        asked = (len(chat_requests(a.requests)), len(chat_requests(b.requests)))
    assert single.returncode == 0, single.stderr
    assert double.returncode == 0, double.stderr

    def predictions(work: Path) -> dict[int, str]:
        lines = next(work.rglob("predictions.jsonl")).read_text().splitlines()
        return {r["index"]: r["prediction"] for r in map(json.loads, lines) if "index" in r}

    assert predictions(tmp_path / "two") == predictions(tmp_path / "one")
    assert len(predictions(tmp_path / "one")) == 12
    assert sum(asked) == 12 and min(asked) >= 1
