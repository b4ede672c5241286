"""MRareBench T1 Diagnosis (MRareBench_Diagnosis, _FD, _TO): VLMEvalKit's prompts per input condition, its ranked-list
reading and hit rule, recall@k / MRR / MR worked out by hand from its code, and its five-dimension judge (prompt byte
for byte) through a judge on a local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.mrarebench import MRareBenchDiagnosisDataset
from datasets_tsv.catalog.entries import catalog_rows
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.mrarebench_diagnosis import is_hit, judge_dimensions, ranked_list

KEY = "sk-mrare-judge-4d21"
JPEG = b64(image_bytes("yellow"))

# VLMEvalKit's texts at e8e78f05 (copied, not built by vlmkit's code)
INSTRUCTION_IMAGES = ('You are an expert physician. Based on the clinical presentation and the medical images, list '
                      'the 10 most likely diagnoses, ranked from MOST likely (1) to LEAST likely (10). Output ONLY a '
                      'numbered list, one standard clinical disease name per line (e.g. "1. Disease name"). Do not '
                      'include explanations, reasoning, or extra text.')
INSTRUCTION_TEXT = ('You are an expert physician. Based on the clinical presentation, list the 10 most likely '
                    'diagnoses, ranked from MOST likely (1) to LEAST likely (10). Output ONLY a numbered list, one '
                    'standard clinical disease name per line (e.g. "1. Disease name"). Do not include explanations, '
                    'reasoning, or extra text.')
JUDGE_ROW1 = (
    'You are an extremely strict attending-physician evaluator. For YES/NO items, default to NO and answer YES only when a criterion is completely and explicitly satisfied.\n\nCorrect diagnosis (gold): Fabry disease\nAccepted synonyms/abbreviations: Anderson-Fabry disease; AFD\n\nThe model produced this ranked differential (1 = most likely):\n1. Gaucher disease\n2. Fabry disease\n3. Pompe disease\n\nScore each of the following, one answer per line, in order:\n1. PRESENCE: Does the list contain the correct diagnosis or an accepted synonym anywhere? (YES/NO)\n2. TOP1: Is the #1 (most likely) item the correct diagnosis or an accepted synonym? (YES/NO)\n3. TYPE_MATCH: Judge the disease-type proximity between the BEST item in the list and the gold diagnosis, on a 0-3 scale:\n   3 = the gold itself, an accepted synonym, or an explicit subtype of it;\n   2 = a different subtype of the same disease, or its direct parent entity (highly related disease type);\n   1 = the same disease family or same underlying mechanism (related but not specific);\n   0 = unrelated.\n4. SPECIFICITY: Are the listed items specific disease entities rather than vague terms like "infection", "tumor", or "autoimmune disease"? (YES/NO)\n5. COHERENCE: Is the differential clinically plausible for this presentation and ordered reasonably (more likely diseases ranked higher)? (YES/NO)\n\nReply with ONLY five lines, one answer per line, in this exact order: YES/NO, YES/NO, 0-3 integer, YES/NO, YES/NO.'
)


def rows() -> list[dict]:
    base = {"image": JPEG, "context": "", "question": "What is the diagnosis?", "answer_aliases": "",
            "image findings": ""}
    return [
        {**base, "index": 1, "context": "A 30-year-old man with acroparesthesia.", "answer": "Fabry disease",
         "answer_aliases": json.dumps(["Anderson-Fabry disease", "AFD"]),
         "image findings": json.dumps([{"markdown": "### Skin\nAngiokeratomas."}, {"title": "Eye", "body": "Cornea."},
                                       {"markdown": "### Skin\nAngiokeratomas."}])},
        {**base, "index": 2, "answer": "Wilson disease"},
        {**base, "index": 3, "answer": "Pompe disease"},
        {**base, "index": 4, "answer": "Menkes disease"},
        {**base, "index": 5, "answer": "Niemann-Pick disease"},
    ]


PREDICTIONS = [
    "1. Gaucher disease\n2. Fabry disease\n3. Pompe disease",  # first hit at rank 2
    "<think>1. Wilson? 2. maybe</think>Wilson disease; Menkes disease",  # one item containing the answer: rank 1
    "I am not sure.",  # one item, no hit
    None,  # no prediction
    "-",  # nothing read: a parse failure
]


def from_catalog(name: str, root: Path) -> MRareBenchDiagnosisDataset:
    row = catalog_rows()[name]
    assert row.cls == "datasets_tsv.benchmarks.mrarebench:MRareBenchDiagnosisDataset" and row.status == "ok"
    return MRareBenchDiagnosisDataset(name, root=root, progress=False, **row.kwargs)


def test_prompts_per_condition(lmu_root: Path):
    for name in ("MRareBench_Diagnosis", "MRareBench_Diagnosis_FD", "MRareBench_Diagnosis_TO"):
        write_tsv(lmu_root / f"{name}.tsv", rows())
    base = from_catalog("MRareBench_Diagnosis", lmu_root).build_prompt(0)
    assert [p["type"] for p in base] == ["image", "text"]
    assert base[-1]["value"] == ("A 30-year-old man with acroparesthesia.\n\nQuestion: What is the diagnosis?\n\n"
                                 + INSTRUCTION_IMAGES)
    disclosed = from_catalog("MRareBench_Diagnosis_FD", lmu_root).build_prompt(0)
    assert disclosed[-1]["value"] == ("A 30-year-old man with acroparesthesia.\n\n### Skin\nAngiokeratomas.\n\n"
                                      "### Eye\nCornea.\n\nQuestion: What is the diagnosis?\n\n" + INSTRUCTION_IMAGES)
    text_only = from_catalog("MRareBench_Diagnosis_TO", lmu_root).build_prompt(1)
    assert text_only == [{"type": "text", "value": "Question: What is the diagnosis?\n\n" + INSTRUCTION_TEXT}]


def test_recall_by_rule_without_a_judge(lmu_root: Path):
    write_tsv(lmu_root / "MRareBench_Diagnosis.tsv", rows())
    ds = from_catalog("MRareBench_Diagnosis", lmu_root)
    result = ds.evaluate(ds.data.assign(prediction=PREDICTIONS))
    # first hit ranks 2, 1, -, -, -: recall@1 1/5, recall@3 2/5, MRR (1/2 + 1) / 5, MR (2 + 1) / 2
    assert result.primary == "recall@1" and result.metrics["recall@1"] == pytest.approx(0.2)
    assert result.metrics["recall@3"] == result.metrics["recall@10"] == pytest.approx(0.4)
    assert result.metrics["MRR"] == pytest.approx(0.3) and result.metrics["MR"] == pytest.approx(1.5)
    assert result.metrics["hit_rate"] == pytest.approx(0.4) and result.metrics["parse_fail_rate"] == pytest.approx(0.2)
    per = result.per_sample
    assert per["first_hit_rank"].tolist() == [2, 1, -1, -1, -1]
    assert json.loads(per["ranked_list"][1]) == ["Wilson disease; Menkes disease"]
    assert per["method"].tolist() == ["rule", "rule", "rule", "inference_error", "rule"]
    assert "judge_avg_score" not in result.metrics


def test_the_judge_adds_its_five_dimensions(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MRareBench_Diagnosis.tsv", rows())
    ds = from_catalog("MRareBench_Diagnosis", lmu_root)
    replies = {"Fabry disease": "YES\nNO\n3. 3\nYES\nYES", "Wilson disease": "1. YES\n2. YES\n3. 3\n4. YES\n5. NO",
               "Pompe disease": None, "Niemann-Pick disease": "NO\nNO\n0\nNO\nNO"}
    sent: list[str] = []

    def respond(request: Recorded) -> Reply:
        content = request.body["messages"][-1]["content"]
        prompt = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        sent.append(prompt)
        gold = prompt.split("Correct diagnosis (gold): ", 1)[1].split("\n", 1)[0]
        reply = replies[gold]
        return Reply(500, {"error": {"message": "down"}}) if reply is None else chat_reply(reply)

    with FaultServer(respond) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
        judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2, secrets=(KEY,))
        result = ds.evaluate(ds.data.assign(prediction=PREDICTIONS), judge=judge)
    assert JUDGE_ROW1 in sent and len(sent) == 4  # the row without a prediction is not asked
    # row scores 0.8, 0.8, (failed: left out), 0 (no prediction), 0 -> 1.6 / 4
    assert result.metrics["judge_avg_score"] == pytest.approx(0.4)
    assert result.metrics["judge_dim_typematch"] == pytest.approx(1.5)  # (3 + 3 + 0 + 0) / 4
    assert result.metrics["judge_dim_presence"] == pytest.approx(0.5)
    assert result.metrics["recall@1"] == pytest.approx(0.2)  # the rule figures stay
    assert result.per_sample["judge_method"].tolist() == ["judge", "judge", "judge_error", "inference_error", "judge"]
    assert result.counts["judge_errors"] == 1
    assert KEY not in (tmp_path / "judge.jsonl").read_text()


@pytest.mark.parametrize("reply, ranked", [
    ("1. A\n2) B\n3.C", ["A", "B", "C"]),
    ("1. A\n2. a\n\n3. B", ["A", "B"]),  # repeats dropped, case-blind
    ("A; B\nC", ["A", "B", "C"]),
    ("<think>x</think>1. A 2. B 3. C", ["A", "B", "C"]),  # a reasoning reply on one line
    ("1. A 2. B", ["A 2. B"]),  # no think block: one numbered line
    ("\n".join(f"{i}. D{i}" for i in range(1, 13)), [f"D{i}" for i in range(1, 11)]),
])
def test_ranked_list_reading(reply: str, ranked: list[str]):
    assert ranked_list(reply) == ranked


@pytest.mark.parametrize("candidate, hit", [
    ("Fabry", True),  # contained in the answer
    ("Classic Fabry disease (type 1)", True),  # contains it
    ("Gaucher disease", False),  # token-set F1 0.5
    ("disease Fabry", True),  # token-set F1 1.0
    ("", False),
])
def test_hit_rule(candidate: str, hit: bool):
    assert is_hit(candidate, ["Fabry disease", "AFD"]) is hit


def test_judge_dimensions_read_line_by_line():
    assert judge_dimensions("YES\nNO\n2\nNO\nYES") == [1, 0, 2, 0, 1]
    assert judge_dimensions("yes\n\nyes") == [1, 1, 0, 0, 0]  # missing lines are 0
    assert judge_dimensions("YES\nYES\nType 5, so 1\nYES\nYES") == [1, 1, 1, 1, 1]  # first digit 0-3
