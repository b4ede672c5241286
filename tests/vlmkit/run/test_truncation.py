"""Replies cut by the token budget, end to end through a local server that ends some replies with finish_reason
"length": every run counts them and scores them apart, names --max-tokens above 5%, and `--retry-truncated N` asks
those rows once more with max_tokens N (journalled apart, asked once), the headline taking the retried answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, chat_requests, row_of, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_body
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.runner import RunOptions, Runner, summary_rows
from vlmkit.run.truncation import Retried, budget_line, cut_positions, reply_states, truncation_summary

ROWS = 10
CUT = (1, 5, 9)  # rows whose reply runs out of tokens unless max_tokens is 64
RETRY = 64


def truth(row: int) -> str:
    return "Yes" if row % 3 else "No"  # write_yorn_tsv's answers


def wrong(answer: str) -> str:
    return "No" if answer == "Yes" else "Yes"


def cuts_some(request: Recorded) -> Reply:
    row = row_of(request)
    if row in CUT and request.body.get("max_tokens") != RETRY:
        body = chat_body("The picture is")
        body["choices"][0]["finish_reason"] = "length"
        return Reply(200, body)
    return Reply(200, chat_body(truth(row) if row % 2 == 0 or row in CUT else wrong(truth(row))))


def _run(lmu: Path, work: Path, server: FaultServer, **options) -> list:
    model_options = ModelOptions(api_base=server.base_url, api_key="sk-test")
    spec = resolve_model("served", model_options)
    return Runner(RunOptions(work_dir=work, root=lmu, progress=False, nproc=2, **options), model_options).run(
        ["MyYN"], [spec])


def test_cut_replies_are_counted_then_retried_once(lmu_root: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=ROWS)
    work = tmp_path / "out"
    results = work / "served" / "MyYN" / "results.json"
    # by hand: the 7 rows that finish are right when even (0 2 4 6 8), wrong otherwise (3 7); the cut ones read nothing
    with FaultServer(chat_only(cuts_some)) as server:
        first = _run(lmu_root, work, server)[0]
        assert len(chat_requests(server.requests)) == ROWS
    said = capsys.readouterr().out
    assert first.evaluation.primary_value == pytest.approx(50.0)
    cut = json.loads(results.read_text())["scoring"]["truncation"]
    assert cut == {"count": 3, "share": 0.3, "replies": 10, "score_finished": pytest.approx(5 / 7),
                   "score_truncated": 0.0, "measure": cut["measure"]}
    warning = [line for line in said.splitlines() if "--max-tokens" in line]
    assert len(warning) == 1 and "3 of 10 replies (30%)" in warning[0]

    with FaultServer(chat_only(cuts_some)) as server:
        outcomes = _run(lmu_root, work, server, retry_truncated=RETRY)
        asked = chat_requests(server.requests)
    assert sorted(row_of(r) for r in asked) == list(CUT) and {r.body["max_tokens"] for r in asked} == {RETRY}
    retried = outcomes[0]
    assert retried.evaluation.primary_value == pytest.approx(80.0)  # the 3 retried rows now right: 8 of 10
    doc = json.loads(results.read_text())
    block = doc["scoring"]["retry_truncated"]
    assert block["max_tokens"] == RETRY and block["cut_before"] == 3 and block["retried"] == 3
    assert block["before"]["value"] == pytest.approx(50.0) and block["after"]["value"] == pytest.approx(80.0)
    assert block["before"]["truncation"]["count"] == 3 and doc["scoring"]["truncation"]["count"] == 0
    journal = [json.loads(line) for line in Path(doc["files"]["retry_journal"]).read_text().splitlines()[1:]]
    assert sorted(r["index"] for r in journal) == list(CUT)
    assert all(r["params"] == {"max_tokens": RETRY} for r in journal)
    lines = (results.parent / "predictions.jsonl").read_text().splitlines()
    predictions = {r["index"]: r for r in map(json.loads, lines)}
    assert all(predictions[r]["prediction"] == truth(r) for r in CUT)  # the files hold the retried answers
    assert "50.00 before, 80.00 after" in summary_rows(outcomes)

    with FaultServer(chat_only(cuts_some)) as server:  # a rerun asks nothing: both journals are complete
        again = _run(lmu_root, work, server, retry_truncated=RETRY)[0]
        assert chat_requests(server.requests) == []
    assert again.evaluation.primary_value == pytest.approx(80.0)


def test_counting_by_hand() -> None:
    """The summary's share is over replies (a failed call is none), a reply cut inside its reasoning counts as cut."""
    records = {
        "0": {"prediction": "a", "error": None, "finish_reason": "stop"},
        "1": {"prediction": "b", "error": None, "finish_reason": "length"},
        "2": {"prediction": "c", "error": None, "extra": {"finish_reason": "length"}},  # an older record
        "3": {"prediction": None, "error": {"kind": "truncated_reasoning"}},
        "4": {"prediction": None, "error": {"kind": "timeout"}},
        "5": {"prediction": "f", "error": None},
    }
    keys = [str(i) for i in range(7)]  # "6": never asked
    assert cut_positions(records, keys) == [1, 2, 3]
    assert list(reply_states(records, keys)) == [1, 2, 2, 2, 0, 1, 0]  # finished, cut, no reply
    summary = truncation_summary(reply_states(records, keys), keys, {"0": 1.0, "1": 1.0, "2": 0.5, "5": 0.0})
    assert (summary["count"], summary["replies"]) == (3, 5) and summary["share"] == pytest.approx(0.6)
    assert summary["score_finished"] == pytest.approx(0.5) and summary["score_truncated"] == pytest.approx(0.5)
    assert budget_line("m x d", summary, 16) is not None and "--max-tokens is 16" in budget_line("m x d", summary, 16)
    one_in_twenty = {str(i): {"prediction": "x", "error": None, "finish_reason": "length" if i == 0 else "stop"}
                     for i in range(20)}
    keys = list(one_in_twenty)
    assert budget_line("m x d", truncation_summary(reply_states(one_in_twenty, keys), keys, None), None) is None  # 5%


class _Journalled(dict):
    def failed(self, key: str) -> bool:
        return self[key].get("error") is not None

    def line(self, key: str) -> str:
        return json.dumps(self[key])


def test_a_failed_retry_keeps_the_first_answer() -> None:
    first = _Journalled({"0": {"prediction": "cut", "error": None}, "1": {"prediction": "cut", "error": None}})
    again = _Journalled({"0": {"prediction": "full", "error": None}, "1": {"prediction": None, "error": {"kind": "x"}}})
    merged = Retried(first, again)
    assert merged["0"]["prediction"] == "full" and merged["1"]["prediction"] == "cut"
    assert merged.was_retried("0") and not merged.was_retried("1") and not merged.failed("1")
    assert sorted(merged) == ["0", "1"] and len(merged) == 2
