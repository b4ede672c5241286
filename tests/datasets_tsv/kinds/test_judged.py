"""JudgedDataset with its scorer named by the catalog row (MathVista_MINI, MathVerse, MathVision): the catalog's
prompts, the refusal without a judge, a bad row named by file, row and field, a scorer without its module refused,
and MathVista scored through a real HTTP judge (an in-test OpenAI-compatible server answering from a key,
journalled): the prompts that travel equal the scorer's, a failed call is a judge error, and a resumed run asks the
judge only for what failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.kinds.judged import JudgedDataset
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.errors import DataError
from vlmkit.judging import FunctionJudge
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.mathvista import extract_prompt

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())
KEY = "sk-math-judge-7d2e"


def from_catalog(name: str, root: Path) -> JudgedDataset:
    """The catalog row's class with its options (its URL and MD5 left out: the TSV is the test's)."""
    row = catalog_rows()[name]
    assert row.cls == "datasets_tsv.kinds.judged:JudgedDataset"
    return JudgedDataset(name, root=root, progress=False, **row.kwargs)


def vista_rows() -> list[dict]:
    base = {"image": JPEG, "precision": "", "unit": "", "context": "", "grade": "", "source": "x"}
    return [
        {**base, "index": 1, "question": "Hint: pick one.\nQuestion: Which?\nChoices:\n(A) 3\n(B) 4",
         "answer": "4", "choices": "['3', '4']", "question_type": "multi_choice", "answer_type": "integer",
         "task": "figure question answering", "skills": "['arithmetic reasoning']"},
        {**base, "index": 2, "question": "Hint: an integer.\nQuestion: How many?", "answer": "7", "choices": "",
         "question_type": "free_form", "answer_type": "integer", "task": "math word problem",
         "skills": "['arithmetic reasoning']"},
        {**base, "index": 3, "question": "Hint: a float.\nQuestion: What fraction?", "answer": "0.6",
         "choices": "", "question_type": "free_form", "answer_type": "float", "precision": 1,
         "task": "figure question answering", "skills": "['statistical reasoning']"},
        {**base, "index": 4, "question": "Hint: an integer.\nQuestion: How old?", "answer": "30", "choices": "",
         "question_type": "free_form", "answer_type": "integer", "task": "math word problem",
         "skills": "['arithmetic reasoning']"},
        {**base, "index": 5, "question": "Hint: an integer.\nQuestion: How tall?", "answer": "12", "choices": "",
         "question_type": "free_form", "answer_type": "integer", "task": "math word problem",
         "skills": "['numeric commonsense']"},
    ]


PREDICTIONS = ["The answer is B.", "Seven apples remain.", "About 0.61.", "He is 31 years old.", "12 meters, or so."]
EXTRACTIONS = {"Seven apples remain.": "7", "About 0.61.": "0.61", "He is 31 years old.": "31",
               "12 meters, or so.": "12"}


def vista(root: Path) -> JudgedDataset:
    write_tsv(root / "MathVista_MINI.tsv", vista_rows())
    return from_catalog("MathVista_MINI", root)


def test_mathvista_prompt_is_the_question_after_the_images(lmu_root: Path):
    ds = vista(lmu_root)
    assert [p["type"] for p in ds.build_prompt(0)] == ["image", "text"]
    assert ds.build_prompt(1)[1]["value"] == "Hint: an integer.\nQuestion: How many?"
    assert ds.scorer_params()["scorer"] == "mathvista"


def test_without_a_judge_the_refusal_is_one_line(lmu_root: Path):
    ds = vista(lmu_root)
    with pytest.raises(DataError) as info:
        ds.evaluate(ds.data.assign(prediction="x"))
    message = str(info.value)
    assert message.startswith("MathVista_MINI is scored by an LLM judge (mathvista): pass --judge MODEL")
    assert "\n" not in message


def test_a_bad_row_is_named_by_file_row_and_field(lmu_root: Path):
    rows = vista_rows()
    rows[3]["answer_type"] = "fraction"
    write_tsv(lmu_root / "MathVista_MINI.tsv", rows)
    ds = from_catalog("MathVista_MINI", lmu_root)
    with pytest.raises(DataError) as info:
        ds.evaluate(ds.data.assign(prediction=PREDICTIONS), judge=FunctionJudge(lambda r: "1"))
    assert str(info.value).startswith(f"{ds.tsv_path}: row 3 (index 4), field answer_type: 'fraction'")


def test_mathvista_through_a_real_http_judge_journalled_and_resumed(lmu_root: Path, tmp_path: Path):
    ds = vista(lmu_root)
    table = ds.data.assign(prediction=PREDICTIONS)
    broken = {"He is 31 years old."}  # the judge fails (HTTP 500) on this prediction until the flag is cleared

    def respond(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no such route"}})
        prompt = request.body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        prediction = prompt.split("\nModel respone: ", 1)[1].removesuffix("Extracted answer:")
        if prediction in broken:
            return Reply(500, {"error": {"message": "overloaded"}})
        return chat_reply(EXTRACTIONS[prediction])

    def judge_on(server: FaultServer) -> JournalledJudge:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
        return JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2, secrets=(KEY,))

    with FaultServer(respond) as server:
        result = ds.evaluate(table, judge=judge_on(server))
        posts = [r for r in server.requests if r.method == "POST"]
        # row 1 is read by rule (B = 4); rows 2-5 go to the judge once each at temperature 0
        assert len(posts) == 4
        sent = {}
        for request in posts:
            body = request.body
            content = body["messages"][-1]["content"]
            sent["".join(p.get("text", "") for p in content) if isinstance(content, list) else content] = body
            assert body["model"] == "judge-m" and body["temperature"] == 0.0 and body["max_tokens"] == 128
        expected = {extract_prompt(q, p) for q, p in zip(table["question"][1:], PREDICTIONS[1:])}
        assert set(sent) == expected
        per = result.per_sample.set_index("index")
        assert per["method"].tolist() == ["rule", "judge", "judge", "judge_error", "judge"]
        # hits: row 1 (B), row 2 (7), row 3 (0.61 rounds to 0.6), row 5 (12); row 4 failed: 4 of 5
        assert per["hit"].tolist() == [True, True, True, False, True]
        assert result.metrics["Overall"] == pytest.approx(80.0) and result.counts["judge_errors"] == 1

        broken.clear()  # the next run: only the failed row is asked again, the rest come from the journal
        again = ds.evaluate(table, judge=judge_on(server))
        posts_after = [r for r in server.requests if r.method == "POST"]
        assert len(posts_after) == 5
        assert posts_after[-1].body["messages"][-1]["content"] in (extract_prompt(table["question"][3], PREDICTIONS[3]),
                                                                    [{"type": "text", "text": extract_prompt(
                                                                        table["question"][3], PREDICTIONS[3])}])
    per = again.per_sample.set_index("index")
    assert per["method"].tolist() == ["rule", "judge", "judge", "judge", "judge"]
    assert per["hit"].tolist() == [True, True, True, False, True]  # 31 != 30
    assert again.metrics["Overall"] == pytest.approx(80.0) and again.counts["judge_errors"] == 0
    assert again.metrics["math word problem"] == pytest.approx(200 / 3)  # rows 2, 4, 5: 2 hits
    assert KEY not in (tmp_path / "judge.jsonl").read_text()


def test_mathverse_cot_asks_query_cot(lmu_root: Path):
    write_tsv(lmu_root / "MathVerse_MINI_Vision_Only_cot.tsv", [
        {"index": 7, "image": JPEG, "question": "plain", "query_cot": "Think, then answer.", "answer": "3",
         "question_for_eval": "Q", "metadata": "{}"}])
    verse = from_catalog("MathVerse_MINI_Vision_Only_cot", lmu_root)
    assert verse.build_prompt(0)[1]["value"] == "Think, then answer."
    assert verse.scorer_params()["scorer"] == "mathverse"


def test_a_missing_mathverse_column_is_named(lmu_root: Path):
    write_tsv(lmu_root / "MathVerse_MINI.tsv", [{"index": 1, "image": JPEG, "question": "q", "answer": "3"}])
    verse = from_catalog("MathVerse_MINI", lmu_root)
    with pytest.raises(DataError, match="missing column `question_for_eval`, needed to evaluate MathVerse_MINI"):
        verse.evaluate(verse.data.assign(prediction="3"), judge=FunctionJudge(lambda r: "3"))


def test_mathvision_prompt_and_judged_score(lmu_root: Path):
    write_tsv(lmu_root / "MathVision_MINI.tsv", [
        {"index": 1, "image": JPEG, "question": "How many?", "answer": "2", "choices": "[]", "category": "x"},
        {"index": 2, "image": JPEG, "question": "How far?", "answer": "5", "choices": "[]", "category": "y"}])
    vision = from_catalog("MathVision_MINI", lmu_root)
    assert vision.build_prompt(0)[1]["value"] == "How many?"
    assert vision.scorer_params()["scorer"] == "mathvision"
    # the judge extracts 2 for both answers: row 1 right (2), row 2 wrong (5)
    result = vision.evaluate(vision.data.assign(prediction=["two", "two"]), judge=FunctionJudge(lambda r: "2"))
    assert result.scorer == "mathvision" and result.primary_value == pytest.approx(50.0)


def test_a_scorer_without_its_module_is_refused(lmu_root: Path):
    write_tsv(lmu_root / "X.tsv", [{"index": 1, "image": JPEG, "question": "q", "answer": "3"}])
    with pytest.raises(ValueError, match="X: scorer 'mathvistas': no module .*mathvistas.py defining score_mathvistas"):
        JudgedDataset("X", root=lmu_root, progress=False, scorer="mathvistas")
    plain = JudgedDataset("X", root=lmu_root, progress=False)  # no scorer: a subclass would name how it scores
    with pytest.raises(NotImplementedError, match="JudgedDataset has no judge scorer"):
        plain.evaluate(plain.data.assign(prediction="3"), judge=FunctionJudge(lambda r: "3"))
