"""`vlmkit perf --score`: each level's answers scored by the dataset's own scorer, misses counted by hand.

The mock answers the prompt's `[answer:X]` (tools/mock_openai_server.py --answer-from-prompt) and, with
--wrong-above 2, answers wrong any stream that arrives while two or more are already being answered. With a first
token 0.5 s away, the 8 requests of level c=8 all arrive before any is answered: the streams meet 0..6 running ones
(the 8th request is an HTTP 500 and is never counted), so exactly 2 are right. At c=1 every stream meets none.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf.accuracy import MISSES_NOTE, level_answers, score_refusal
from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfOptions

LETTERS = "ABCDABCD"


@pytest.fixture
def mcq_tsv(tmp_path: Path) -> tuple[Path, Path]:
    """(LMUData root, an 8-row image MCQ whose questions carry their answer for the mock; row 7 fails with HTTP 500)."""
    root = tmp_path / "LMUData"
    rows = []
    for i, letter in enumerate(LETTERS):
        fault = " [mock:http500]" if i == 7 else ""
        rows.append({"index": i, "image": b64(image_bytes("red")), "question": f"Pick [answer:{letter}]{fault} #{i}",
                     "A": "one", "B": "two", "C": "three", "D": "four", "answer": letter})
    return root, write_tsv(root / "pickme.tsv", rows)


def _fraction(block: dict) -> float:
    """The headline on a 0..1 scale, whatever scale the scorer reports it on."""
    return block["value"] / (100.0 if block["scale"]["scale"] == "percent" else 1.0)


@pytest.mark.parametrize("workers", [1, 2])
def test_accuracy_per_level_counts_wrong_answers_and_errors_as_misses(mcq_tsv, mock_server, tmp_path: Path,
                                                                      capsys, workers: int) -> None:
    root, path = mcq_tsv
    mock = mock_server("--ttft-ms", "500", "--answer-from-prompt", "--wrong-above", "2", "--faults")
    out = tmp_path / "out"
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--data", str(path), "--lmudata", str(root),
                 "--out", str(out), "--concurrency", "1", "8", "--score", "--timeout", "30", "--workers", str(workers)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = json.loads((out / "perf_summary.json").read_text())
    by_level = {level["label"]: level["accuracy"] for level in summary["levels"]}
    low, high = by_level["c=1"], by_level["c=8"]
    # worked by hand: c=1 rows 0-6 right, row 7 an error -> 7/8; c=8: 2 right of 8
    assert _fraction(low) == pytest.approx(7 / 8)
    assert _fraction(high) == pytest.approx(2 / 8)
    for block in (low, high):
        assert block["rows_scored"] == 8 and block["requests"] == 8
        assert block["answered"] == 7 and block["errors"] == {"http_500": 1} and block["cut_off"] == 0
        assert block["misses_without_answer"] == 1 and block["note"] == MISSES_NOTE
        assert block["metric"] is not None
    # the answers are on disk, one line per request, and they are what the mock sent
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    replies = {(line["level"], line["row"]): line["reply"] for line in lines}
    assert all(replies[("c=1", r)] == LETTERS[r] for r in range(7))
    assert replies[("c=1", 7)] == "" and replies[("c=8", 7)] == ""  # the error: no text
    right = sum(replies[("c=8", r)] == LETTERS[r] for r in range(7))
    assert right == 2
    assert "score" in (out / "perf_summary.csv").read_text().splitlines()[0]
    assert (out / "plots" / "accuracy.png").stat().st_size > 0
    assert "c=8: score" in printed and "1 errors" in printed


def _write(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_level_answers_reads_one_level_first_answer_per_row(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    earlier = [{"level": "c=2", "n": 0, "row": 0, "warmup": False, "error": None, "reply": "Z", "cut_off": False}]
    _write(path, earlier)
    offset = path.stat().st_size
    level = [
        {"level": "c=2", "n": 0, "row": 0, "warmup": True, "error": None, "reply": "W", "cut_off": False},
        {"level": "c=2", "n": 3, "row": 1, "warmup": False, "error": None, "reply": "late", "cut_off": False},
        {"level": "c=2", "n": 1, "row": 1, "warmup": False, "error": None, "reply": "B", "cut_off": False},
        {"level": "c=2", "n": 2, "row": 2, "warmup": False, "error": None, "reply": "C is", "cut_off": True},
        {"level": "c=2", "n": 4, "row": 3, "warmup": False, "error": "timeout", "reply": "par", "cut_off": False},
        {"level": "c=2", "n": 5, "row": 0, "warmup": False, "error": "cancelled", "reply": "", "cut_off": False},
        {"level": "c=2", "n": 6, "row": 4, "warmup": False, "error": None, "reply": "", "cut_off": False},
        {"level": "c=2", "n": 7, "row": 5, "warmup": False, "error": None, "reply": "<think>x</think> D",
         "cut_off": False},
        {"level": "c=2", "n": 8, "row": 6, "warmup": False, "error": None, "reply": "<think>still", "cut_off": False},
        {"level": "c=3", "n": 9, "row": 7, "warmup": False, "error": None, "reply": "A", "cut_off": False},
    ]
    with open(path, "a") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in level))
    found = level_answers(path, offset, "c=2")
    # row 0: only a warm-up and a cancelled request -> not scored; row 1: n=1 wins over n=3; cut off and timeout miss;
    # row 5: the answer after </think>; row 6: thinking never closed = cut off; row 7: another level; the line
    # before the offset (level c=1) is not read
    assert found.predictions == {1: "B", 2: None, 3: None, 4: "", 5: "D", 6: None}
    assert (found.requests, found.answered, found.cut_off, found.errors) == (7, 4, 2, {"timeout": 1})


def _options(**kw) -> PerfOptions:
    return PerfOptions(model="m", api_base="http://127.0.0.1:1/v1", score=True, **kw)


def test_sources_without_answers_are_refused_in_one_line(tmp_path: Path) -> None:
    listed = ListDataset(["a", "b"])
    assert "without answers" in score_refusal(listed, _options())
    sessions = ListDataset(["a"])
    sessions.turn_rows = [[0]]
    assert "--sessions" in score_refusal(sessions, _options())
    assert "--trace" in score_refusal(listed, _options(trace_speed=[1.0]))
    assert "--prefix-share" in score_refusal(listed, _options(prefix_share=0.5, prefix_tokens=8))


def test_a_tsv_without_answers_is_refused_before_any_request(tmp_path: Path, mock_server, capsys) -> None:
    root = tmp_path / "LMUData"
    rows = [{"index": i, "image": b64(image_bytes("red")), "question": "q", "A": "x", "B": "y"} for i in range(2)]
    path = write_tsv(root / "noanswer.tsv", rows)
    mock = mock_server()
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--data", str(path), "--lmudata", str(root),
                 "--out", str(tmp_path / "out"), "--score", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    error_lines = [line for line in err.splitlines() if line.startswith("vlmkit perf: error: --score")]
    assert len(error_lines) == 1, err
    assert "answer" in error_lines[0]
    assert mock.bodies() == []  # refused before the probe


def test_synthetic_load_is_refused(tmp_path: Path, mock_server, capsys) -> None:
    mock = mock_server()
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--synthetic-image", "8x8", "--num-requests",
                 "2", "--out", str(tmp_path / "out"), "--score", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "--score" in err and "without answers" in err
    assert mock.bodies() == []


def test_refusal_for_a_dataset_with_no_scorer() -> None:
    class Unscored(ListDataset):
        def evaluate(self, predictions):  # pragma: no cover - never reached
            raise AssertionError

        def scorer_params(self):
            return {}

    data = Unscored(["a"])
    data.data["answer"] = ["A"]
    assert "no scorer" in score_refusal(data, _options())
    assert score_refusal(SimpleNamespace(), _options(prefix_share=0.1, prefix_tokens=4)).startswith("--score")


@pytest.mark.parametrize("name", ["MathVista_MINI", "LogicVista"])
def test_a_benchmark_vlmkit_scores_only_with_a_judge_or_not_at_all_is_refused(name: str, tmp_path: Path) -> None:
    from vlmkit.perf.options import PerfInputError
    from vlmkit.perf.source import load_dataset

    with pytest.raises(PerfInputError) as caught:
        load_dataset(name, root=tmp_path, score=True)
    text = str(caught.value)
    assert text.startswith(f"--score: {name}") and "\n" not in text and "--mode infer" not in text
