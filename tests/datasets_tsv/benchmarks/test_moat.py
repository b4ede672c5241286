"""MOAT: VLMEvalKit's prompt (its JSON instruction, the choices as a fresh VLMEvalKit run shuffles them, images and
the outside-knowledge hint from the unzipped image folder), its judge prompt byte for byte, its answer and verdict
reading and its figures worked out by hand, end to end through a judge on a local OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.moat import MOATDataset
from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.kinds.base import DatasetError
from tests.support.servers import FaultServer, Recorded, chat_reply
from tests.support.tsvs import image_bytes, write_tsv
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.moat import extracted_answer, verdict

KEY = "sk-moat-judge-6b2a"
# VLMEvalKit's texts at e8e78f05 (copied, not built by vlmkit's code); the choices' order is what Python's random,
# seeded with 0, gives VLMEvalKit's shuffles of rows 1 and 3 in row order: ['cat', 'bird', 'dog'], ['blue', 'red']
PROMPT_ROW1 = (
    '{"task": "Answer the question presented to you truthfully.", "requirements": ["Analyze the image(s) first, then answer the question. If you are given a list of possible answers, you must choose from it.", "You must answer in the following json format: {\\"analysis\\": \\"(write your analysis here)\\", \\"answer\\": \\"(your answer)\\"}"]}\nWhat animal?\nThe choices are: [\'cat\', \'bird\', \'dog\']'
)
JUDGE_ROW1 = (
    '{"task": "Evaluate whether the answer to a question is correct.", "requirements": ["Compare an answer to a question with the ground truth answer. Determine whether it is correct.", "You must ignore any analysis of the problem if present. You must focus only on the final answer.", "You must answer in the following json format: {\\"verdict\\": \\"(1 for correct, 0 for incorrect)\\"}"]}\nThe answer to evaluate is cat\nThe ground truth answer is cat'
)

ROWS = [
    {"index": 1, "question": "What animal?", "choices": "['cat', 'dog', 'bird']", "images": "['a.png']",
     "outside_knowledge_text": "Cats meow.", "outside_knowledge_images": "['hint.png']", "answer": "cat",
     "capability": "['rec', 'ocr']"},
    {"index": 2, "question": "How many?", "choices": "[]", "images": "['b.png', 'c.png']",
     "outside_knowledge_text": "", "outside_knowledge_images": "[]", "answer": "3", "capability": "['cnt']"},
    {"index": 3, "question": "Which color?", "choices": "['red', 'blue']", "images": "['a.png']",
     "outside_knowledge_text": "", "outside_knowledge_images": "[]", "answer": "red", "capability": "['rec']"},
    {"index": 4, "question": "Q4", "choices": "[]", "images": "['a.png']", "outside_knowledge_text": "",
     "outside_knowledge_images": "[]", "answer": "x", "capability": "['rec']"},
]
PREDICTIONS = ['{"analysis": "It meows.", "answer": "cat"}', '```json\n{"analysis": "x", "answer": 4}\n```',
               "Blue, I think.", None]
VERDICTS = {"cat": '{"verdict": "1"}', "4": '```json\n{"verdict": 0}\n```', "None": "I think it is wrong."}


def images(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, colour in (("a.png", "red"), ("b.png", "blue"), ("c.png", "green"), ("hint.png", "white")):
        (folder / name).write_bytes(image_bytes(colour, "PNG"))
    return folder


def dataset(lmu_root: Path, folder: Path) -> MOATDataset:
    write_tsv(lmu_root / "MOAT.tsv", ROWS)
    row = catalog_rows()["MOAT"]
    assert row.cls == "datasets_tsv.benchmarks.moat:MOATDataset" and row.status == "judge"
    return MOATDataset("MOAT", root=lmu_root, progress=False, data_root=folder)


def test_prompt_is_vlmevalkits_in_any_order_asked(lmu_root: Path, tmp_path: Path):
    ds = dataset(lmu_root, images(tmp_path / "MOAT_images"))
    third = ds.build_prompt(2)  # asked first: the shuffles still follow row order
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "image", "text", "image"]
    assert parts[0]["value"] == PROMPT_ROW1 and parts[2]["value"] == "Hint:\nCats meow."
    assert Path(parts[3]["value"]).name == "hint.png"
    assert third[0]["value"].endswith("Which color?\nThe choices are: ['blue', 'red']")
    assert ds.build_prompt(1)[0]["value"].endswith("\nHow many?")  # no choices, no hint
    assert [p["type"] for p in ds.build_prompt(1)] == ["text", "image", "image"]


def test_a_missing_image_is_named(lmu_root: Path, tmp_path: Path):
    ds = dataset(lmu_root, tmp_path / "empty")
    with pytest.raises(DatasetError, match=r"MOAT\.tsv: row 0 \(index 1\), field images: .*a\.png not found"):
        ds.build_prompt(0)


def test_figures_end_to_end(lmu_root: Path, tmp_path: Path):
    ds = dataset(lmu_root, images(tmp_path / "MOAT_images"))
    sent: list[str] = []

    def respond(request: Recorded):
        content = request.body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        sent.append(prompt)
        return chat_reply(VERDICTS[prompt.split("The answer to evaluate is ", 1)[1].split("\n", 1)[0]])

    with FaultServer(respond) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
        judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2, secrets=(KEY,))
        result = ds.evaluate(ds.data.assign(prediction=PREDICTIONS), judge=judge)
    assert JUDGE_ROW1 in sent and len(sent) == 3
    # verdicts 1, 0, unread (left out), 0 (no prediction): overall 1/3; rec rows 1, 4; ocr row 1; cnt row 2
    assert result.metrics["overall_acc"] == pytest.approx(1 / 3) and result.primary == "overall_acc"
    assert result.metrics["capability_acc/rec"] == pytest.approx(0.5)
    assert result.metrics["capability_acc/ocr"] == 1.0 and result.metrics["capability_acc/cnt"] == 0.0
    assert result.per_sample["method"].tolist() == ["judge", "judge", "judge_unread", "inference_error"]
    assert result.per_sample["extracted"].tolist() == ["cat", "4", None, None]


@pytest.mark.parametrize("reply, answer", [
    ('{"answer": "A"}', "A"), ('```json\n{"answer": "B"}\n```', "B"), ("```json\nnot json\n```",
                                                                        "```json\nnot json\n```"),
    ("plain text", None), ('{"analysis": "no answer"}', None),
])
def test_answer_extraction(reply: str, answer):
    assert extracted_answer(reply) == answer


@pytest.mark.parametrize("reply, value", [
    ('{"verdict": "1"}', 1.0), ('{"verdict": 0}', 0.0), ('```json\n{"verdict": "1"}\n```', 1.0), ("1", None),
    ('{"verdict": "correct"}', None),
])
def test_verdict(reply: str, value):
    assert verdict(reply) == value
