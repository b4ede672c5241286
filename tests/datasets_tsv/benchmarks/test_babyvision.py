"""BabyVision: the table VLMEvalKit builds from the official meta_data.jsonl (written from --data-root), its forced
prompt, its judge prompt byte for byte, its boxed-answer reading and its figures worked out by hand, end to end
through a judge on a local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.babyvision import BabyVisionDataset
from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_row
from datasets_tsv.kinds.base import DatasetError
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import image_bytes
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.babyvision import boxed_answer, judged_right

KEY = "sk-baby-judge-93f0"
# VLMEvalKit's judge prompt at e8e78f05 for task t1 (copied, not built by vlmkit's code)
JUDGE_T1 = (
    'You are a careful and strict evaluator. You will be given:\n\n1. **Question**\n2. **Ground Truth Answer** (correct answer)\n3. **Model Output** (answer from another model)\n\n**Your goal:** Determine if the Model Output **accurately matches** the Ground Truth Answer in meaning.\n\n* Matching means: the facts, entities, and key details are equivalent, even if phrasing differs.\n* Not matching means: the Model Output is wrong, incomplete, contains extra incorrect facts, or changes the meaning.\n\n**Process (internal reasoning):**\n\n1. Read and understand the Question, Ground Truth Answer, and Model Output.\n2. Ignore small wording differences, formatting, or synonyms.\n3. If all factual content matches, conclude `1`. Otherwise, conclude `0`.\n\n**Important:**\n\n* Think through your decision step-by-step **internally** before responding.\n* In your final output, return **only** True or False, with no extra text or explanation.\n\n**Output format:**\n\nTrue\n\nor\n\nFalse\n\n**Input:**\n\nQuestion: Which shape is different?\nChoices:\n(A) circle\n(B) square\n(C) triangle\nThink about the question and give your final answer in \\boxed{Answer} format.,\nGround Truth Answer: B,\nModel Output: B\n'
)
QUESTION_T1 = ("Which shape is different?\nChoices:\n(A) circle\n(B) square\n(C) triangle\nThink about the question "
               "and give your final answer in \\boxed{Answer} format.")

TASKS = [
    {"taskId": "t1", "question": "Which shape is different?", "ansType": "choice",
     "options": ["circle", "square", "triangle"], "choiceAns": 1, "blankAns": None,
     "type": "Fine-grained Discrimination", "subtype": "Find the different", "image": "images/t1.png"},
    {"taskId": "t2", "question": "How many dots?", "ansType": "blank", "blankAns": "7", "options": [],
     "type": "Visual Tracking", "subtype": "Count paths", "image": "images/t2.png"},
    {"taskId": "t3", "question": "Which one matches?", "ansType": "blank", "blankAns": "3", "choiceAns": "null",
     "type": "Fine-grained Discrimination", "subtype": "Find the same", "image": "images/t3.png"},
    {"taskId": "t4", "question": "Which view?", "ansType": "choice", "options": ["left", "right"], "choiceAns": 0,
     "type": "Spatial Perception", "subtype": "3D", "image": "images/t4.png"},
    {"taskId": "t5", "question": "Which view now?", "ansType": "choice", "options": ["left", "right"],
     "choiceAns": 1, "type": "Spatial Perception", "subtype": "3D", "image": "images/t5.png"},
]
PREDICTIONS = ["Reasoning... \\boxed{B}", "\\boxed{\\text{8}}", "<|begin_of_box|> 3 <|end_of_box|>", None, "I think A"]
REPLIES = {"B": "True", "\\text{8}": "False", "3": "It is TRUE.", "None": "False"}


def unzipped(tmp_path: Path) -> Path:
    folder = tmp_path / "download" / "babyvision_data"
    (folder / "images").mkdir(parents=True)
    for task in TASKS:
        (folder / task["image"]).write_bytes(image_bytes("blue", "PNG"))
    (folder / "meta_data.jsonl").write_text("\n".join(json.dumps(t) for t in TASKS) + "\n", encoding="utf-8")
    return folder


def test_table_and_prompt_from_the_official_jsonl(lmu_root: Path, tmp_path: Path):
    folder = unzipped(tmp_path)
    ds = build_row(catalog_rows()["BabyVision"], root=lmu_root, progress=False, inference_only=True,
                   data_root=folder.parent)
    assert ds.data["index"].tolist() == ["t1", "t2", "t3", "t4", "t5"]
    assert ds.data["answer"].tolist() == ["B", "7", "3", "A", "B"]
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"] and parts[1]["value"] == QUESTION_T1
    assert Path(parts[0]["value"]).read_bytes() == (folder / "images" / "t1.png").read_bytes()
    assert ds.build_prompt(1)[1]["value"] == ("How many dots?\nThink about the question and give your final answer "
                                              "in \\boxed{Answer} format.")
    again = BabyVisionDataset("BabyVision", root=lmu_root, progress=False)  # the written TSV, without --data-root
    assert again.data["question"].tolist() == ds.data["question"].tolist()


def test_figures_end_to_end(lmu_root: Path, tmp_path: Path):
    ds = BabyVisionDataset("BabyVision", root=lmu_root, progress=False, data_root=unzipped(tmp_path))
    sent: list[str] = []

    def respond(request: Recorded) -> Reply:
        content = request.body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        sent.append(prompt)
        assert request.body["max_tokens"] == 16 and request.body["temperature"] == 0.0
        return chat_reply(REPLIES[prompt.rsplit("Model Output: ", 1)[1].rstrip("\n")])

    with FaultServer(respond) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
        judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2, secrets=(KEY,))
        result = ds.evaluate(ds.data.assign(prediction=PREDICTIONS), judge=judge)
    assert JUDGE_T1 in sent and len(sent) == 4  # t4 has no prediction: not asked
    # right: t1 (True), t3 (TRUE); wrong: t2, t4 (no prediction), t5 (no boxed answer: `None`)
    assert result.metrics["Overall"] == 40.0 and result.primary == "Overall"
    assert result.metrics["Type/Fine-grained Discrimination"] == 100.0
    assert result.metrics["Type/Spatial Perception"] == 0.0 and result.metrics["Type/Visual Tracking"] == 0.0
    assert result.metrics["Subtype/1Fine-grained Discrimination/Find the same"] == 100.0
    assert result.metrics["Subtype/3Spatial Perception/3D"] == 0.0
    assert result.per_sample["extracted"].tolist() == ["B", "\\text{8}", "3", None, None]
    assert result.per_sample["method"].tolist() == ["judge", "judge", "judge", "inference_error", "judge"]


def test_without_the_data_it_says_where_to_get_it(lmu_root: Path):
    with pytest.raises(DatasetError, match=r"BabyVision\.tsv: not found; pass --data-root"):
        BabyVisionDataset("BabyVision", root=lmu_root, progress=False)


def test_a_bad_task_line_is_named(lmu_root: Path, tmp_path: Path):
    folder = unzipped(tmp_path)
    (folder / "meta_data.jsonl").write_text(json.dumps(TASKS[0]) + "\n{\"taskId\": \"x\"}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"meta_data\.jsonl: line 2: not a BabyVision task"):
        BabyVisionDataset("BabyVision", root=lmu_root, progress=False, data_root=folder)


@pytest.mark.parametrize("text, answer", [
    ("\\boxed{A} then \\boxed{C}", "C"), ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"), ("no box", None),
    ("<|begin_of_box|>x<|end_of_box|> and <|begin_of_box|> y <|end_of_box|>", "y"),
])
def test_boxed_answer(text: str, answer: str | None):
    assert boxed_answer(text) == answer


def test_judge_reading_is_a_substring_test():
    assert judged_right("TRUE") and judged_right("untrue")  # VLMEvalKit's `'true' in reply`
    assert not judged_right("False") and not judged_right("yes")
