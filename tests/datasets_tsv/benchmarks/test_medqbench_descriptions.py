"""MedQ-Bench descriptions (MedqbenchCaption_*, MedqbenchPairedDescription_*): VLMEvalKit's prompts, its judge prompts
byte for byte, its grade reading, and the four means worked out by hand from its code, end to end through a judge on
a local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.medqbench import MedqbenchDescriptionDataset
from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.kinds.base import DatasetError
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.judging import FunctionJudge
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.medqbench import read_grade

KEY = "sk-medq-judge-51a9"
RED, BLUE = b64(image_bytes("red")), b64(image_bytes("blue"))

# VLMEvalKit's texts, copied from vlmeval/dataset/medqbench_caption.py at e8e78f05 (one literal each)
CAPTION_INSTRUCTION = ('As a medical image quality assessment expert, provide a concise description focusing on '
                       'low-level appearance of the image in details. Conclude with "Overall, the quality of this '
                       'image is [good/usable/reject]". Please provide a comprehensive but concise assessment in '
                       '3-5 sentences.')
COMPLETENESS_FOR = ('#System: You are a helpful assistant.\n#User: Evaluate whether the description [{p}] completely '
                    'includes the low-level visual information in the reference description [{d}]. Please rate score 2 '
                    'for completely or almost completely including reference information, 0 for not including at '
                    'all, 1 for including part of the information or similar description. Please only provide the '
                    'result in the following format: Score:')
PAIRED_QUALITY_FOR = ('#System: You are a helpful assistant.\n#User: Evaluate the accuracy of the final quality '
                      'comparison judgment in [{p}] compared to the reference [{d}]. The comparison should correctly '
                      'identify which image has higher quality based on the described visual characteristics. Please '
                      'rate score 2 for exactly matching the reference quality comparison, and 0 for completely '
                      'incorrect quality comparison (opposite conclusion) or unreasonable assessment. Please only '
                      'provide the result in the following format: Score:')

# which dimension a judge prompt asks about: a phrase only that template has
DIMENSION_OF = (("completely includes", "completeness"), ("The precision metric", "preciseness"),
                ("internal consistency", "consistency"), ("accuracy of the final quality", "quality_accuracy"))


def dimension(prompt: str) -> str:
    return next(name for phrase, name in DIMENSION_OF if phrase in prompt)


def sent_text(request: Recorded) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def judge_on(server: FaultServer, journal: Path) -> JournalledJudge:
    model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
    return JournalledJudge(model, journal, nproc=2, secrets=(KEY,))


def caption_rows() -> list[dict]:
    return [
        {"index": 1, "image": RED, "description": "Sharp, no noise. Overall good."},
        {"index": 2, "image": RED, "description": "Motion blur. Overall usable."},
        {"index": 3, "image": RED, "description": "Heavy noise. Overall reject."},
    ]


# replies per (prediction, dimension), in the order asked (the last repeats); the grades VLMEvalKit reads are worked
# out by hand from parse_score_from_response
REPLIES = {
    ("good image", "completeness"): ["Score: 2"],
    ("good image", "preciseness"): ["Score：1"],  # full-width colon
    ("good image", "consistency"): ["2"],  # a bare number
    ("good image", "quality_accuracy"): ['{"score": 1}'],  # JSON
    ("blurred image", "completeness"): ["<think>Score: 0 at first sight</think>Score: 2"],  # vlmkit 2, VLMEvalKit 0
    ("blurred image", "preciseness"): ["I cannot grade this."],  # 3 asks, never read: left out of the mean
    ("blurred image", "consistency"): ["Score: 1.5"],
    ("blurred image", "quality_accuracy"): ["Score: 0"],
}


def respond_text(prompt: str) -> str:
    prediction = "good image" if "[good image]" in prompt else "blurred image"
    return REPLIES[(prediction, dimension(prompt))][0]


def respond(request: Recorded) -> Reply:
    return chat_reply(respond_text(sent_text(request)))


def test_caption_prompt_is_vlmevalkits_and_the_means_are_worked_by_hand(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MedqbenchCaption_dev.tsv", caption_rows())
    row = catalog_rows()["MedqbenchCaption_dev"]
    ds = MedqbenchDescriptionDataset("MedqbenchCaption_dev", root=lmu_root, progress=False, **row.kwargs)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"] and parts[1]["value"] == CAPTION_INSTRUCTION
    table = ds.data.assign(prediction=["good image", "blurred image", None])

    with FaultServer(respond) as server:
        result = ds.evaluate(table, judge=judge_on(server, tmp_path / "judge.jsonl"))
        posts = [r for r in server.requests if r.method == "POST"]
    sent = [sent_text(r) for r in posts]
    # row 1: 4 asks; row 2: 4 + 2 more for the unread preciseness; row 3 (no prediction): none
    assert len(posts) == 10
    assert COMPLETENESS_FOR.format(p="good image", d="Sharp, no noise. Overall good.") in sent
    assert all(r.body["temperature"] == 0.0 and r.body["max_tokens"] == 2048 for r in posts)
    assert all(r.body["messages"][0]["role"] == "user" and len(r.body["messages"]) == 1 for r in posts)

    # completeness (2 + 2 + 0) / 3; preciseness row 2 left out: (1 + 0) / 2; consistency (2 + 1.5 + 0) / 3;
    # quality_accuracy (1 + 0 + 0) / 3 (row 3, no prediction, is 0 everywhere)
    assert result.metrics["completeness"] == pytest.approx(4 / 3)
    assert result.metrics["preciseness"] == pytest.approx(0.5)
    assert result.metrics["consistency"] == pytest.approx(3.5 / 3)
    assert result.metrics["quality_accuracy"] == pytest.approx(1 / 3)
    assert result.primary == "completeness" and result.scale is not None and result.scale.out_of == 2.0
    per = result.per_sample.set_index("index")
    assert per["method"].tolist() == ["judge", "judge_unread", "inference_error"]
    assert per.loc[1, "score"] == pytest.approx((2 + 1 + 2 + 1) / 4 / 2)
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    assert result.vlmevalkit is None and any("not computed" in n for n in result.notes)
    assert KEY not in (tmp_path / "judge.jsonl").read_text()


def test_vlmevalkit_figure_reads_the_think_block_whole(lmu_root: Path):
    write_tsv(lmu_root / "MedqbenchCaption_test.tsv", caption_rows()[:2])
    ds = MedqbenchDescriptionDataset("MedqbenchCaption_test", root=lmu_root, progress=False)
    table = ds.data.assign(prediction=["good image", "blurred image"])
    # a judge whose text keeps its think block (an OpenAI-compatible judge hands vlmkit the answer part only)
    judge = FunctionJudge(lambda request: respond_text(request.prompt))
    result = ds.evaluate(table, judge=judge)
    figure = result.vlmevalkit
    assert figure is not None
    assert result.metrics["completeness"] == pytest.approx(2.0)  # (2 + 2) / 2
    assert figure.metrics["completeness"] == pytest.approx(1.0)  # (2 + 0) / 2: the first `Score:` is in the block
    assert figure.metrics["preciseness"] == pytest.approx(1.0)  # row 2 unread on both sides
    assert [d.index for d in figure.differing] == [2]


def test_paired_prompt_has_both_images_and_its_own_judge_prompt(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MedqbenchPairedDescription_dev.tsv", [
        {"index": "p1", "image": json.dumps([RED, BLUE]), "question": "Which image is better?",
         "description": "The first is sharper. Image A has higher quality."}])
    row = catalog_rows()["MedqbenchPairedDescription_dev"]
    ds = MedqbenchDescriptionDataset("MedqbenchPairedDescription_dev", root=lmu_root, progress=False, **row.kwargs)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "image", "text"]
    assert parts[0]["value"] != parts[1]["value"] and parts[2]["value"] == "Which image is better?"
    seen: list[str] = []

    def respond(request: Recorded) -> Reply:
        seen.append(sent_text(request))
        return Reply(500, {"error": {"message": "overloaded"}}) if len(seen) == 1 else chat_reply("Score: 2")

    table = ds.data.assign(prediction=["A is better"])
    with FaultServer(respond) as server:
        first = ds.evaluate(table, judge=judge_on(server, tmp_path / "judge.jsonl"))
        assert first.per_sample["method"].tolist() == ["judge_error"] and first.counts["judge_errors"] == 1
        again = ds.evaluate(table, judge=judge_on(server, tmp_path / "judge.jsonl"))
    assert PAIRED_QUALITY_FOR.format(p="A is better", d="The first is sharper. Image A has higher quality.") in seen
    assert len(seen) == 5  # 4 asks, then only the failed one again
    assert again.per_sample["method"].tolist() == ["judge"]
    assert all(again.metrics[m] == 2.0 for m in ("completeness", "preciseness", "consistency", "quality_accuracy"))


def test_image_a_b_columns_are_refused_in_one_line(lmu_root: Path):
    write_tsv(lmu_root / "MedqbenchPairedDescription_test.tsv", [
        {"index": 1, "image_a": RED, "image_b": BLUE, "description": "d"}])
    with pytest.raises(DatasetError, match=r"MedqbenchPairedDescription_test\.tsv: images in `image_a`/`image_b`"):
        MedqbenchDescriptionDataset("MedqbenchPairedDescription_test", root=lmu_root, progress=False, paired=True)


def test_without_a_judge_it_is_refused(lmu_root: Path):
    write_tsv(lmu_root / "MedqbenchCaption_dev.tsv", caption_rows())
    ds = MedqbenchDescriptionDataset("MedqbenchCaption_dev", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match="--judge"):
        ds.evaluate(ds.data.assign(prediction=["a", "b", "c"]))


@pytest.mark.parametrize("reply, grade", [
    ("Score: 2", 2.0), ("Score:1.5 because", 1.5), ("score: 2", None),  # the regular expression is case-sensitive
    ("Score: 10", 1.0),  # VLMEvalKit's [0-2] reads the first digit
    ("2", 2.0), (" 0.5 ", 0.5), ("3", None), ('{"Score": 2}', 2.0), ('{"score": 5}', None), ("true", 1.0),
    ("The score is 2", None),
])
def test_grade_reading_follows_vlmevalkit(reply: str, grade: float | None):
    assert read_grade(reply) == grade
