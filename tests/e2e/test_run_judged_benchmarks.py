"""Judge-only catalog benchmarks through `vlmkit run` by name: refused in one line without --judge, scored with one
(a model and a judge, each an in-test OpenAI-compatible server answering from a key) to the value worked out by
hand, with the catalog's prompt sent to the model and the scorer's prompt to the judge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.datasets_tsv.kinds.test_judged import EXTRACTIONS, PREDICTIONS, vista_rows
from tests.support.tsvs import write_tsv
from tests.support.run_helpers import chat_only, chat_requests, question_of, stderr_lines, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply


def model_from_questions(answers: dict[str, str]):
    """A model server answering by the question it is asked (the key is a substring of the question)."""

    def answer(request: Recorded) -> Reply:
        question = question_of(request)
        return chat_reply(next(a for key, a in answers.items() if key in question))

    return chat_only(answer)


def judge_from_key(replies: dict[str, str]):
    """A judge server answering by the model response quoted in its prompt."""

    def answer(request: Recorded) -> Reply:
        if request.method == "GET":
            return Reply(404, {"error": {"message": "no models route"}})
        prompt = question_of(request)
        return chat_reply(next(r for key, r in replies.items() if key in prompt))

    return answer


def run(data: str, model_base: str, work: Path, lmu: Path, *extra: str):
    return vlmkit_cli("run", "--data", data, "--model", "served", "--api-base", model_base, "--work-dir", str(work),
                      "--keep-local-tsv", *extra, env={"LMUData": str(lmu)})


def test_a_judge_only_benchmark_without_judge_is_refused_before_anything_runs(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MathVista_MINI.tsv", vista_rows())
    with FaultServer(model_from_questions({"": "7"})) as model:
        result = run("MathVista_MINI", model.base_url, tmp_path / "out", lmu_root)
        asked = chat_requests(model.requests)
    assert result.returncode == 2
    [line] = stderr_lines(result)
    assert line.startswith("vlmkit: error: MathVista_MINI is scored by an LLM judge") and "--judge MODEL" in line
    assert asked == []


def test_mathvista_by_name_with_a_judge(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MathVista_MINI.tsv", vista_rows())
    questions = {"Which?": PREDICTIONS[0], "How many?": PREDICTIONS[1], "What fraction?": PREDICTIONS[2],
                 "How old?": PREDICTIONS[3], "How tall?": PREDICTIONS[4]}
    work = tmp_path / "out"
    with FaultServer(model_from_questions(questions)) as model, FaultServer(judge_from_key(EXTRACTIONS)) as judge:
        result = run("MathVista_MINI", model.base_url, work, lmu_root, "--judge", "judge-m", "--judge-api-base",
                     judge.base_url)
        model_prompts = [question_of(r) for r in chat_requests(model.requests)]
        judge_bodies = [r.body for r in chat_requests(judge.requests)]
    assert result.returncode == 0, result.stderr
    # the model gets the TSV question alone (VLMEvalKit's MathVista prompt)
    assert sorted(model_prompts) == sorted(row["question"] for row in vista_rows())
    # the judge is asked for the four replies no rule reads, at max_tokens 128, VLMEvalKit's extraction prompt
    assert len(judge_bodies) == 4 and {b["max_tokens"] for b in judge_bodies} == {128}
    assert all("Please read the following example." in b["messages"][-1]["content"] for b in judge_bodies)
    results = json.loads((work / "served" / "MathVista_MINI" / "results.json").read_text())
    # by hand: row 1 B = 4 right (rule), 7 right, 0.61 at precision 1 = 0.6 right, 31 != 30 wrong, 12 right: 4 of 5
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(80.0)
    assert results["scoring"]["counts"]["by_judge"] == 4 and results["judge"]["asked_this_run"] == 4
    assert (work / "served" / "served_MathVista_MINI_score.csv").is_file()
    assert re.search(r"MathVista_MINI\s+Overall\s+80", result.stdout)
