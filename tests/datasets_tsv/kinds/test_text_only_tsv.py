"""A TSV without an `image` (or `image_path`) column is text: each prompt is its text alone, scored as its kind says
(issue 24). A problem of the whole dataset is found once, before any row: a column scoring needs is refused before
any request, and a failed image pass is said again for later rows without another pass over the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.io.tsv_read import DatasetError

from tests.support.run_helpers import chat_only, chat_requests, question_of, row_of, stderr_lines
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv

LETTERS = "ABCD"
N_ROWS = 200


def _quiz_rows(n: int, *, with_answer: bool = True) -> list[dict]:
    rows = []
    for i in range(n):
        row = {"index": i, "question": f"[{i}] Which colour is listed first?", "A": "red", "B": "green",
               "C": "blue", "D": "black"}
        if with_answer:
            row["answer"] = LETTERS[i % 4]
        rows.append(row)
    return rows


def _vlmkit_run(lmu: Path, work: Path, api_base: str, *extra: str) -> subprocess.CompletedProcess:
    """`python -m vlmkit run --data MyTextQuiz --model served --api-base URL` with $LMUData at lmu."""
    return subprocess.run(
        [sys.executable, "-m", "vlmkit", "run", "--data", "MyTextQuiz", "--model", "served", "--api-base", api_base,
         "--work-dir", str(work), *extra],
        capture_output=True, text=True, env={**os.environ, "LMUData": str(lmu)}, timeout=300,
    )


def _answer(request: Recorded) -> Reply:
    """The right letter for rows whose index is not a multiple of 5, the next letter (wrong) for the others."""
    i = row_of(request)
    return chat_reply(LETTERS[i % 4] if i % 5 else LETTERS[(i + 1) % 4])


def _media_parts(request: Recorded) -> list[dict]:
    parts = []
    for message in request.body["messages"]:
        content = message["content"]
        if isinstance(content, list):
            parts += [p for p in content if p.get("type") != "text"]
    return parts


def test_a_text_mcq_tsv_runs_every_row_as_text_and_scores_it(tmp_path):
    lmu, work = tmp_path / "lmu", tmp_path / "work"
    write_tsv(lmu / "MyTextQuiz.tsv", _quiz_rows(N_ROWS))
    with FaultServer(chat_only(_answer)) as server:
        result = _vlmkit_run(lmu, work, server.base_url)
        asked = chat_requests(server.requests)
    assert result.returncode == 0, result.stderr
    assert sorted(row_of(r) for r in asked) == list(range(N_ROWS))  # every row asked, once
    assert all(_media_parts(r) == [] for r in asked)  # no image part in any request
    seven = next(r for r in asked if row_of(r) == 7)
    assert question_of(seven) == (  # VLMEvalKit's MCQ prompt, written out by hand
        "Question: [7] Which colour is listed first?\nOptions:\nA. red\nB. green\nC. blue\nD. black\n"
        "Please select the correct answer from the options above. \n"
    )
    results = json.loads((work / "served" / "MyTextQuiz" / "results.json").read_text())
    assert results["status"] == "success"
    assert results["counts"]["completed"] == N_ROWS and results["counts"]["inference_errors"] == 0
    scoring = results["scoring"]
    assert scoring["scorer"] == "mcq"
    # 40 of the 200 indices are multiples of 5 and were answered wrong: 160 hits
    assert (scoring["counts"]["scored"], scoring["counts"]["hits"]) == (N_ROWS, 160)
    assert scoring["metrics"]["Overall"] == pytest.approx(0.8)
    assert not (lmu / "images").exists()  # no image pass was made


def test_an_mcq_tsv_without_answers_is_refused_once_before_any_request(tmp_path):
    lmu, work = tmp_path / "lmu", tmp_path / "work"
    tsv = write_tsv(lmu / "MyTextQuiz.tsv", _quiz_rows(N_ROWS, with_answer=False))
    with FaultServer(chat_only(_answer)) as server:
        refused = _vlmkit_run(lmu, work, server.base_url)
        asked_when_refused = chat_requests(server.requests)
        inferred = _vlmkit_run(lmu, work, server.base_url, "--mode", "infer", "--limit", "3")
        asked_for_inference = chat_requests(server.requests)
    assert refused.returncode == 2, refused.stderr
    (line,) = stderr_lines(refused)  # one line, no traceback
    assert f"{tsv}: missing column `answer`, needed to score MyTextQuiz" in line and "--mode infer" in line
    assert asked_when_refused == []
    assert inferred.returncode == 0, inferred.stderr  # answers can still be collected
    assert sorted(row_of(r) for r in asked_for_inference) == [0, 1, 2]


@pytest.mark.parametrize(
    "rows, kind, text",
    [
        ([{"index": 0, "question": "Is water wet?", "answer": "Yes"}, {"index": 1, "question": "Q?", "answer": "No"}],
         "yorn", "Is water wet?"),
        ([{"index": 0, "question": "How many legs has a cat?", "answer": "4"}], "vqa",
         "How many legs has a cat?\nAnswer the question using a single word or phrase."),  # VLMEvalKit's VQA suffix
    ],
)
def test_yorn_and_vqa_tsvs_without_images_are_text(tmp_path, rows, kind, text):
    write_tsv(tmp_path / "Plain.tsv", rows)
    dataset = build_dataset("Plain", root=tmp_path, progress=False)
    assert dataset.kind == kind
    assert dataset.build_prompt(0) == [{"type": "text", "value": text}]
    assert dataset.image_paths(0) == []
    assert dataset.scoring_problem() is None
    assert not (tmp_path / "images").exists()


def test_a_failed_image_pass_is_said_again_without_reading_the_file_again(tmp_path):
    rows = [{"index": 0, "image": b64(image_bytes("red")), "question": "Red?", "answer": "Yes"},
            {"index": 1, "image": "7", "question": "Blue?", "answer": "No"}]  # 7: no such row to share with
    tsv = write_tsv(tmp_path / "Broken.tsv", rows)
    dataset = build_dataset("Broken", root=tmp_path, progress=False)
    with pytest.raises(DatasetError) as first:
        dataset.build_prompt(0)
    assert "Broken.tsv: row 1 (index 1), field image" in str(first.value)
    tsv.unlink()  # a second pass would now fail differently (no such file)
    for pos in (0, 1):
        with pytest.raises(DatasetError) as again:
            dataset.build_prompt(pos)
        assert str(again.value) == str(first.value)
