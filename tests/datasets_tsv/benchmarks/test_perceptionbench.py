"""PerceptionBench: the table VLMEvalKit reads from PerceptionBench.jsonl (written from --data-root), its interleaved
prompt, its judge prompt (checked against the MD5 of the text VLMEvalKit builds), its verdict reading and its
figures worked out by hand, end to end through a judge on a local OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.perceptionbench import PerceptionBenchDataset
from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_row
from datasets_tsv.kinds.base import DatasetError
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.perceptionbench import escaped_text, judged_right

KEY = "sk-perception-judge-1c5e"
# VLMEvalKit's judge prompt at e8e78f05 for the first question (its template filled by its _build_judge_prompt):
# 7735 characters with this MD5 and this ending
JUDGE_Q1_MD5, JUDGE_Q1_LENGTH = "fb3e3e63aff4aed715a5a84b6e2d9af4", 7735
JUDGE_Q1_TAIL = ("Now you may begin grading.\n========== [Question] ==========\nCompare <|image_2|> with <|image_1|>. "
                 "Which is larger?\n========== [Student Answer] ==========\nThe answer is B\n========== [Reference "
                 "Answer] ==========\nB\n========== [Your Judgment] ==========\n")
RED, BLUE, GREEN = (image_bytes(c, "PNG") for c in ("red", "blue", "green"))


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + b64(data)


LINES = [
    {"index": 101, "problem": "Compare <|image_2|> with <|image_1|>. Which is larger?",
     "image": [data_url(RED), data_url(BLUE), data_url(GREEN)], "answer": {"answer": "B"},
     "error_category": "counting"},
    {"problem": "What is shown? <|image_3|>", "image": [data_url(RED)], "answer": "a cat", "error_category": ""},
    {"index": 7, "problem": "Read the value.", "image": [], "answer": "12.5", "error_category": "counting"},
]


def jsonl(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "download" / "PerceptionBench.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_table_and_interleaved_prompt(lmu_root: Path, tmp_path: Path):
    ds = build_row(catalog_rows()["PerceptionBench"], root=lmu_root, progress=False, inference_only=True,
                   data_root=jsonl(tmp_path, LINES).parent)
    assert ds.data["index"].tolist() == [101, 1, 7] and ds.data["answer"].tolist() == ["B", "a cat", "12.5"]
    parts = ds.build_prompt(0)
    shown = [(p["type"], p["value"] if p["type"] == "text" else Path(p["value"]).read_bytes()) for p in parts]
    assert shown == [("text", "Compare "), ("image", BLUE), ("text", " with "), ("image", RED),
                     ("text", ". Which is larger?"), ("image", GREEN)]
    second = ds.build_prompt(1)  # no third image: the placeholder stays in the text
    assert [p["type"] for p in second] == ["text", "image"] and second[0]["value"] == "What is shown? <|image_3|>"
    assert ds.build_prompt(2) == [{"type": "text", "value": "Read the value."}]


def test_figures_end_to_end(lmu_root: Path, tmp_path: Path):
    ds = PerceptionBenchDataset("PerceptionBench", root=lmu_root, progress=False, data_root=jsonl(tmp_path, LINES))
    sent: list[str] = []
    replies = {"The answer is B": "[reason]\nIt matches.\n[judge]\nTrue", "12.50": "[judge] True"}

    def respond(request: Recorded) -> Reply:
        content = request.body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        sent.append(prompt)
        assert request.body["temperature"] == 0.3
        answer = prompt.split("[Student Answer] ==========\n", 1)[1].split("\n", 1)[0]
        return chat_reply(replies[answer])

    with FaultServer(respond) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
        judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2, secrets=(KEY,))
        result = ds.evaluate(ds.data.assign(prediction=["The answer is B", "[error] timeout", "12.50"]), judge=judge)
    assert len(sent) == 2  # the `[error]` reply is not sent
    first = sent[0] if "Compare" in sent[0] else sent[1]
    assert hashlib.md5(first.encode()).hexdigest() == JUDGE_Q1_MD5 and len(first) == JUDGE_Q1_LENGTH
    assert first.endswith(JUDGE_Q1_TAIL)
    # right: question 101; wrong: 1 (unusable reply), 7 (no [reason] in the verdict)
    assert result.metrics["overall"] == pytest.approx(1 / 3) and result.primary == "overall"
    assert result.metrics["per_category/counting"] == pytest.approx(0.5)
    assert result.metrics["per_category/?"] == 0.0
    assert result.per_sample["method"].tolist() == ["judge", "inference_error", "judge"]


def test_an_image_that_is_no_data_url_is_named(lmu_root: Path, tmp_path: Path):
    bad = [{**LINES[2]}, {"problem": "x", "image": ["/some/file.png"], "answer": "y"}]
    with pytest.raises(DatasetError, match=r"PerceptionBench\.jsonl: line 2: image '/some/file\.png' is not a base64"):
        PerceptionBenchDataset("PerceptionBench", root=lmu_root, progress=False, data_root=jsonl(tmp_path, bad))


def test_without_the_data_it_says_where_to_get_it(lmu_root: Path):
    with pytest.raises(DatasetError, match=r"PerceptionBench\.tsv: not found; pass --data-root"):
        PerceptionBenchDataset("PerceptionBench", root=lmu_root, progress=False)


@pytest.mark.parametrize("text, escaped", [
    ("a\\nb", "a\nb"), ("\\\\frac", "\\frac"), ("x\\ y", "x\\\\ y"), ("x\\1", "x\\\\ "), ("plain", "plain"),
])
def test_escape_normalisation(text: str, escaped: str):
    assert escaped_text(text) == escaped


@pytest.mark.parametrize("reply, right", [
    ("[reason] ok [judge] True", True), ("[reason] ok [judge] false", False), ("[judge] True", False),
    ("[reason] true [judge] False", False), ("[reason] x [judge] maybe [judge] TRUE!", True),
])
def test_verdict_reading(reply: str, right: bool):
    assert judged_right(reply) is right
