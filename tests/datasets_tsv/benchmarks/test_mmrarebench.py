"""MMRarebench (four tracks): VLMEvalKit's prompts (figure labels, context, instruction), its judge prompts byte for
byte, its grade readings, and the means worked out by hand from its code, end to end through a judge on a local
OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.mmrarebench import MMRarebenchDataset
from datasets_tsv.catalog.entries import catalog_rows
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.mmrarebench import read_grade, token_f1

KEY = "sk-mmrare-judge-0b8e"
JPEG = b64(image_bytes("white"))

# VLMEvalKit's judge prompts at e8e78f05 for the rows below (copied, not built by vlmkit's code)
DIAGNOSIS_ROW1 = (
    'You are an extremely strict medical expert evaluator. You are evaluating whether a model correctly identified a diagnosis from clinical presentation and medical images. The model was asked to output ONLY the disease name. Apply the STRICTEST possible interpretation. Answer YES ONLY when the criterion is COMPLETELY satisfied.\n\nReference diagnosis: Granulomatosis with polyangiitis\nAcceptable synonyms/abbreviations: GPA; Wegener granulomatosis\n\nModel response: Granulomatosis with polyangiitis (GPA)\n\nIMPORTANT CALIBRATION: Only models that name the EXACT correct diagnosis (or an accepted synonym) should receive YES on question 1. Naming a related but different disease, a broader category, or a partial match is NO.\n\nAnswer each question with YES or NO only:\n1. EXACT DIAGNOSIS MATCH: Does the model response name the correct diagnosis (or an accepted synonym/abbreviation listed above) as its answer? The disease name must be an exact or near-exact match — naming a parent category (e.g., "vasculitis" instead of "granulomatosis with polyangiitis"), a sibling disease, or a related but distinct condition is NO. (YES/NO)\n2. CORRECT DISEASE CATEGORY: Even if the exact diagnosis is wrong, does the response identify the correct organ system AND disease category? For example, if the answer is "granulomatosis with polyangiitis" and the model says "microscopic polyangiitis", the category (ANCA-associated vasculitis) is correct. But saying "pneumonia" for a vasculitis case is NO. (YES/NO)\n3. DIAGNOSTIC SPECIFICITY: Is the model\'s response a specific disease entity rather than a vague or overly broad term? Responses like "infection", "tumor", "inflammatory condition", or "autoimmune disease" without specifying the exact disease are NO. (YES/NO)\n\nReply with ONLY three YES or NO answers, one per line.'
)
CROSSMODAL_ROW1 = (
    'You are an extremely strict medical expert evaluator conducting a rigorous peer review. Your standard is that of a senior radiologist reviewing cross-modal imaging interpretations. Apply the STRICTEST possible interpretation of each criterion. Answer YES ONLY when the criterion is COMPLETELY, EXPLICITLY, and SPECIFICALLY satisfied with no ambiguity whatsoever. A merely plausible or partially correct response MUST receive NO. Generic observations that could apply to any case MUST receive NO. If information is implied but not explicitly stated, answer NO.\n\nQuestion: How do the CT and biopsy relate?\n\nReference answer: Biopsy confirms CT.\n\nModel response: They confirm sarcoidosis.\n\nKey medical findings: bilateral hilar adenopathy; non-caseating granulomas\nExpected cross-modal relationship: confirm\n\nEvaluate with MAXIMUM strictness. Answer each question with YES or NO only:\n1. Does the response correctly identify ALL the SPECIFIC key findings listed above (missing even one key finding means NO; vague descriptions that do not name the specific finding means NO)? (YES/NO)\n2. Does the response EXPLICITLY describe how findings from DIFFERENT modalities relate to each other (simply listing findings from each modality separately is NO)? (YES/NO)\n3. Does the response correctly classify the relationship type as EXACTLY matching the expected type (confirm/complement/contrast) — using the wrong relationship type or being vague means NO? (YES/NO)\n4. Is the clinical reasoning ENTIRELY specific to this case with ZERO major factual errors (any incorrect medical claim, even if minor, means NO)? (YES/NO)\n5. Does the response provide a genuinely INTEGRATED cross-modal synthesis that derives NEW clinical insight from combining modalities (not just summarizing each modality independently)? (YES/NO)\n\nDefault to NO unless you are CERTAIN the criterion is fully met. Reply with ONLY five YES or NO answers, one per line.'
)
DIAGNOSIS_INSTRUCTION = ("Based on the clinical presentation and medical images, provide your diagnosis. Output ONLY "
                         "the most likely diagnosis using the standard clinical disease name. Do not include "
                         "explanations or reasoning.")


def from_catalog(name: str, root: Path, **extra) -> MMRarebenchDataset:
    row = catalog_rows()[name]
    assert row.cls == "datasets_tsv.benchmarks.mmrarebench:MMRarebenchDataset"
    return MMRarebenchDataset(name, root=root, progress=False, **row.kwargs, **extra)


def sent_text(request: Recorded) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def judge_on(server: FaultServer, journal: Path) -> JournalledJudge:
    model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
    return JournalledJudge(model, journal, nproc=2, secrets=(KEY,))


def run_judged(ds: MMRarebenchDataset, predictions: list, replies: dict, journal: Path):
    """Evaluate with a judge that answers by the model response in its prompt (a 500 for `None`)."""
    def respond(request: Recorded) -> Reply:
        prompt = sent_text(request)
        response = prompt.split("Model response: ", 1)[1].split("\n", 1)[0]
        reply = replies[response]
        return Reply(500, {"error": {"message": "down"}}) if reply is None else chat_reply(reply)

    with FaultServer(respond) as server:
        result = ds.evaluate(ds.data.assign(prediction=predictions), judge=judge_on(server, journal))
        sent = [sent_text(r) for r in server.requests if r.method == "POST"]
    return result, sent


def test_diagnosis_prompt_judge_and_f1(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MMRarebench_Diagnosis.tsv", [
        {"index": 1, "image": json.dumps([JPEG, JPEG]), "context": "A 40-year-old with sinusitis.",
         "question": "What is the diagnosis?", "answer": "Granulomatosis with polyangiitis",
         "answer_aliases": json.dumps(["GPA", "Wegener granulomatosis"])},
        {"index": 2, "image": JPEG, "context": "", "question": "Diagnosis?", "answer": "Fabry disease",
         "answer_aliases": ""},
        {"index": 3, "image": JPEG, "context": "", "question": "Diagnosis?", "answer": "Gaucher disease",
         "answer_aliases": ""},
    ])
    ds = from_catalog("MMRarebench_Diagnosis", lmu_root)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "image", "text"]
    assert parts[-1]["value"] == ("A 40-year-old with sinusitis.\n\nQuestion: What is the diagnosis?\n\n"
                                  + DIAGNOSIS_INSTRUCTION)
    assert ds.build_prompt(1)[-1]["value"] == "Question: Diagnosis?\n\n" + DIAGNOSIS_INSTRUCTION  # no context
    replies = {"Granulomatosis with polyangiitis (GPA)": "YES\nYES\nYES", "Gaucher disease": "NO\nYES\nYes"}
    result, sent = run_judged(ds, ["Granulomatosis with polyangiitis (GPA)", "Gaucher disease", None], replies,
                              tmp_path / "judge.jsonl")
    assert DIAGNOSIS_ROW1 in sent and len(sent) == 2
    # grades: (3 + 1 + 1) / 5 = 1.0; exact NO: (1 + 1) / 10 = 0.2; no prediction: 0 -> mean 0.4
    assert result.metrics["diagnosis_judge_score"] == pytest.approx(0.4)
    # F1: row 1 best of 6/7 (the answer), 0.4 (GPA), 1/3 (Wegener granulomatosis); row 2 0.5; row 3 0
    assert result.metrics["diagnosis_f1"] == pytest.approx((6 / 7 + 0.5) / 3 * 100)
    assert result.primary == "diagnosis_judge_score"
    assert result.per_sample["method"].tolist() == ["judge", "judge", "inference_error"]
    assert KEY not in (tmp_path / "judge.jsonl").read_text()


def test_crossmodal_labels_and_a_failed_call_left_out(lmu_root: Path, tmp_path: Path):
    snapshot = tmp_path / "MMrarebench" / "crossmodal"
    (snapshot / "figs").mkdir(parents=True)
    for name in ("ct.png", "biopsy.png"):
        (snapshot / "figs" / name).write_bytes(image_bytes("gray", "PNG"))
    write_tsv(lmu_root / "MMRarebench_Crossmodal.tsv", [
        {"index": "c1", "image_path": json.dumps(["figs/ct.png", "figs/biopsy.png"]),
         "figure_mapping": json.dumps({"Figure A": "figs/ct.png", "Figure B": "figs/biopsy.png"}),
         "context": "", "question": "How do the CT and biopsy relate?", "answer": "Biopsy confirms CT.",
         "golden_mainline": json.dumps([{"claim": "bilateral hilar adenopathy"},
                                        {"claim": "non-caseating granulomas"}]),
         "relation_type": "Confirm"},
        {"index": "c2", "image_path": json.dumps(["figs/ct.png"]), "figure_mapping": "", "context": "",
         "question": "Relate them.", "answer": "x", "golden_mainline": "", "relation_type": ""},
    ])
    ds = from_catalog("MMRarebench_Crossmodal", lmu_root, data_root=snapshot)
    parts = ds.build_prompt(0)
    assert [(p["type"], p["value"] if p["type"] == "text" else Path(p["value"]).name) for p in parts[:4]] == [
        ("text", "Figure A:"), ("image", "ct.png"), ("text", "Figure B:"), ("image", "biopsy.png")]
    assert [p["type"] for p in ds.build_prompt(1)] == ["image", "text"]
    result, sent = run_judged(ds, ["They confirm sarcoidosis.", "unsure"],
                              {"They confirm sarcoidosis.": "7/10", "unsure": None}, tmp_path / "judge.jsonl")
    assert CROSSMODAL_ROW1 in sent
    # 7/10 read as a ratio; the failed call is left out of the mean
    assert result.metrics["crossmodal_judge_score"] == pytest.approx(0.7)
    assert result.per_sample["method"].tolist() == ["judge", "judge_error"] and result.counts["judge_errors"] == 1


def test_treatment_and_examination_readings(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "MMRarebench_Treatment.tsv", [
        {"index": 1, "image": JPEG, "question": "Treat?", "answer": "Rituximab.",
         "rubric_must_include": json.dumps(["rituximab 375 mg/m2 weekly"]),
         "rubric_must_not": "live vaccines; steroids alone"},
        {"index": 2, "image": JPEG, "question": "Treat?", "answer": "Enzyme replacement.",
         "rubric_must_include": "", "rubric_must_not": ""},
    ])
    treatment = from_catalog("MMRarebench_Treatment", lmu_root)
    result, sent = run_judged(treatment, ["Give rituximab.", "Give agalsidase."],
                              {"Give rituximab.": "YES\nNO\nYES\nNO\nNO\nNO", "Give agalsidase.": "yes"},
                              tmp_path / "t.jsonl")
    assert "Required treatment elements: rituximab 375 mg/m2 weekly\n" \
           "Safety violations to check: live vaccines; steroids alone\n" in sent[0] + sent[1]
    assert result.metrics["treatment_judge_score"] == pytest.approx((2 / 6 + 1.0) / 2)

    write_tsv(lmu_root / "MMRarebench_Examination.tsv", [
        {"index": 1, "image": JPEG, "context": "Leaked answer.", "question": "Workup?", "answer": "MRI.",
         "key_test_names": json.dumps(["MRI brain"]), "must_not": "", "red_flags_to_rule_out": "stroke"},
        {"index": 2, "image": JPEG, "context": "", "question": "Workup?", "answer": "CT.",
         "key_test_names": "", "must_not": "", "red_flags_to_rule_out": ""},
    ])
    exam = from_catalog("MMRarebench_Examination", lmu_root)
    assert "Leaked answer." not in exam.build_prompt(0)[-1]["value"]  # the context is left out
    # row 2's numbered reply: the list numbers 1. and 2. count as ratings too: 1,2,2,1,1,0,2,1 = 10 / 16
    result, _ = run_judged(exam, ["Order MRI.", "Order CT."],
                           {"Order MRI.": "2\n1\n1\n0\n2\n1\n0\n1",
                            "Order CT.": "1. 2\n2. 1\n3. 1\n4. 0\n5. 2\n6. 1\n7. 0\n8. 1"}, tmp_path / "e.jsonl")
    assert result.per_sample["score"].tolist() == pytest.approx([8 / 16, 10 / 16])


@pytest.mark.parametrize("track, reply, grade", [
    ("diagnosis", "yes no no", 0.6), ("diagnosis", "No. Yes. No.", 0.1), ("diagnosis", "2/5", 0.4),
    ("diagnosis", "YES YES", 0.0),
    ("treatment", "YES", 1.0), ("treatment", "NO", 0.0), ("treatment", "3/4 met", 0.75), ("treatment", "80%", 0.8),
    ("treatment", "0.5", 0.5), ("treatment", "score 3/0", 0.0), ("treatment", "unsure", 0.0),
    ("examination", "yes yes yes no no no", 0.5), ("examination", "2 2 2", 0.0),
])
def test_grade_readings(track: str, reply: str, grade: float):
    assert read_grade(track, reply) == pytest.approx(grade)


def test_token_f1_takes_the_best_alias():
    assert token_f1(["The Fabry disease", "AFD"], "fabry's disease") == pytest.approx(0.5)  # fabrys != fabry
    assert token_f1(["AFD"], "afd") == 1.0
