"""MMRarebench (rare-disease medicine; MMRarebench_Diagnosis, _Treatment, _Crossmodal, _Examination): each answer is
graded by an LLM judge on a rubric of its track, as VLMEvalKit grades it (vlmeval/dataset/mmrarebench.py at e8e78f05).

One judge prompt per row (VLMEvalKit's `_build_judge_prompt` of the track, character for character, filled from the
row's cells; `build_judge_prompt` here), one ask, temperature 0, max_tokens 2048 (VLMEvalKit's judge defaults). The
model's reply is pasted in as VLMEvalKit pastes it (the Diagnosis track strips it first, the others do not).

- Diagnosis: three YES/NO questions (exact diagnosis, disease category, specificity) against `answer` and its
  `answer_aliases` (a JSON list, else `;`-separated). Reading: the first three `yes`/`no` words of the reply (any
  case, whole words): exact YES scores (3 + category + specificity) / 5, exact NO scores (category + specificity) / 10;
  fewer than three words: a ratio `a / b` in the reply (capped at 1), else 0. Also VLMEvalKit's token F1 of the reply
  against the answer and its aliases (SQuAD normalisation: lower case, no punctuation, no articles; the best alias).
- Treatment (six YES/NO) and Crossmodal (five YES/NO): the share of `yes` among the `yes`/`no` words when there are
  two or more; one word: 1 for yes, 0 for no; else a ratio `a / b`, else a percentage, else a bare 0 or 1 (0..1
  values), else 0.
- Examination: eight 0/1/2 ratings: the first eight stand-alone digits 0, 1 or 2 of the reply, summed / 16 (list
  numbers such as `1.` count as ratings too, as in VLMEvalKit); fewer: the share of `yes` when six or more yes/no
  words, else a ratio `a / b`, else 0.

Figures (VLMEvalKit's `_detailed_metrics.json`): `<track>_judge_score`, the mean grade (0..1, the headline), and for
Diagnosis `diagnosis_f1` (mean F1 x 100). Per row (EvalResult.per_sample): `index`, `score` (the grade), `f1`
(Diagnosis), `method` (`judge`; `judge_error`: the judge call failed, the row is left out this run and asked again
on the next; `inference_error`: no prediction, not sent to the judge, 0) and `judge` (the reply).

Where vlmkit differs from VLMEvalKit (deliberately): a failed judge call is not a 0 grade (VLMEvalKit grades its
failure message, which reads as 0) but a judge error left out of the mean and asked again on the next run; a row
without a prediction is not sent to the judge (VLMEvalKit sends the text `nan`) and scores 0 (F1 0 too).
vlmkit reads the judge's replies as VLMEvalKit does, so no separate VLMEvalKit figure is kept.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE_ERROR, judged_columns, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale

SCORER = "mmrarebench"
TRACKS = ("diagnosis", "treatment", "crossmodal", "examination")
JUDGE_MAX_TOKENS = 2048

# the prompts' fixed texts, VLMEvalKit's (MMRarebench*._build_judge_prompt)
DIAGNOSIS_HEAD = (
    "You are an extremely strict medical expert evaluator. "
    "You are evaluating whether a model correctly identified a diagnosis "
    "from clinical presentation and medical images. "
    "The model was asked to output ONLY the disease name. "
    "Apply the STRICTEST possible interpretation. "
    "Answer YES ONLY when the criterion is COMPLETELY satisfied.\n\n"
)
DIAGNOSIS_TAIL = (
    "IMPORTANT CALIBRATION: Only models that name the EXACT correct diagnosis "
    "(or an accepted synonym) should receive YES on question 1. "
    "Naming a related but different disease, a broader category, or a partial match is NO.\n\n"
    "Answer each question with YES or NO only:\n"
    "1. EXACT DIAGNOSIS MATCH: Does the model response name the correct diagnosis "
    "(or an accepted synonym/abbreviation listed above) as its answer? "
    "The disease name must be an exact or near-exact match — "
    'naming a parent category (e.g., "vasculitis" instead of "granulomatosis with polyangiitis"), '
    "a sibling disease, or a related but distinct condition is NO. (YES/NO)\n"
    "2. CORRECT DISEASE CATEGORY: Even if the exact diagnosis is wrong, "
    "does the response identify the correct organ system AND disease category? "
    'For example, if the answer is "granulomatosis with polyangiitis" and the model says '
    '"microscopic polyangiitis", the category (ANCA-associated vasculitis) is correct. '
    'But saying "pneumonia" for a vasculitis case is NO. (YES/NO)\n'
    "3. DIAGNOSTIC SPECIFICITY: Is the model's response a specific disease entity "
    "rather than a vague or overly broad term? "
    'Responses like "infection", "tumor", "inflammatory condition", or "autoimmune disease" '
    "without specifying the exact disease are NO. (YES/NO)\n\n"
    "Reply with ONLY three YES or NO answers, one per line."
)
TREATMENT_HEAD = (
    "You are an extremely strict medical expert evaluator conducting a rigorous peer review. "
    "Your standard is that of a senior attending physician reviewing a resident's treatment plan. "
    "Apply the STRICTEST possible interpretation of each criterion. "
    "Answer YES ONLY when the criterion is COMPLETELY, EXPLICITLY, and SPECIFICALLY satisfied "
    "with no ambiguity whatsoever. "
    "A merely plausible or partially correct response MUST receive NO. "
    "Generic medical advice that could apply to any patient MUST receive NO. "
    "If information is implied but not explicitly stated, answer NO.\n\n"
)
TREATMENT_TAIL = (
    "\nEvaluate with MAXIMUM strictness. Answer each question with YES or NO only:\n"
    "1. Does the response explicitly name the EXACT SAME specific treatments as the reference "
    '(generic categories like "chemotherapy" or "antibiotics" without specifying the '
    "exact regimen do NOT count)? (YES/NO)\n"
    "2. Does the response include the CORRECT specific drug names AND dosages/routes that match the reference "
    "(mentioning a drug class without the specific agent is NO; omitting dosage is NO)? (YES/NO)\n"
    "3. Is the response COMPLETELY free of ALL safety violations, contraindications, drug interactions, "
    "and clinically dangerous suggestions (even one minor safety issue means NO)? (YES/NO)\n"
    '4. Does the response specify CONCRETE follow-up timelines (e.g., "reassess in 2 weeks") and '
    'SPECIFIC monitoring parameters (e.g., "monitor serum creatinine") rather than vague statements '
    'like "regular follow-up" or "monitor labs"? (YES/NO)\n'
    "5. Does the response demonstrate CORRECT understanding of the pathophysiology that directly "
    "justifies the chosen treatment (not just restating the diagnosis)? (YES/NO)\n"
    "6. Is the response detailed and specific enough that a clinician could directly implement it "
    "as a treatment plan WITHOUT needing additional information? (YES/NO)\n\n"
    "Default to NO unless you are CERTAIN the criterion is fully met. "
    "Reply with ONLY six YES or NO answers, one per line."
)
CROSSMODAL_HEAD = (
    "You are an extremely strict medical expert evaluator conducting a rigorous peer review. "
    "Your standard is that of a senior radiologist reviewing cross-modal imaging interpretations. "
    "Apply the STRICTEST possible interpretation of each criterion. "
    "Answer YES ONLY when the criterion is COMPLETELY, EXPLICITLY, and SPECIFICALLY satisfied "
    "with no ambiguity whatsoever. "
    "A merely plausible or partially correct response MUST receive NO. "
    "Generic observations that could apply to any case MUST receive NO. "
    "If information is implied but not explicitly stated, answer NO.\n\n"
)
CROSSMODAL_TAIL = (
    "\nEvaluate with MAXIMUM strictness. Answer each question with YES or NO only:\n"
    "1. Does the response correctly identify ALL the SPECIFIC key findings listed above "
    "(missing even one key finding means NO; vague descriptions that do not name the specific "
    "finding means NO)? (YES/NO)\n"
    "2. Does the response EXPLICITLY describe how findings from DIFFERENT modalities relate to each other "
    "(simply listing findings from each modality separately is NO)? (YES/NO)\n"
    "3. Does the response correctly classify the relationship type as EXACTLY matching the expected type "
    "(confirm/complement/contrast) — using the wrong relationship type or being vague means NO? (YES/NO)\n"
    "4. Is the clinical reasoning ENTIRELY specific to this case with ZERO major factual errors "
    "(any incorrect medical claim, even if minor, means NO)? (YES/NO)\n"
    "5. Does the response provide a genuinely INTEGRATED cross-modal synthesis that derives NEW clinical "
    "insight from combining modalities (not just summarizing each modality independently)? (YES/NO)\n\n"
    "Default to NO unless you are CERTAIN the criterion is fully met. "
    "Reply with ONLY five YES or NO answers, one per line."
)
EXAMINATION_HEAD = (
    "You are a board-certified physician evaluating a diagnostic workup plan. "
    "Rate each dimension on a 0-1-2 scale.\n"
    "CALIBRATION: Score 2 is RARE and requires textbook-perfect performance. "
    "Score 1 is the expected score for a competent response. "
    "Score 0 means clearly inadequate. "
    "A strong response typically averages 0.8-1.0 across dimensions.\n\n"
)
EXAMINATION_TAIL = (
    "\nRate each dimension (0, 1, or 2):\n"
    "1. KEY TEST COVERAGE:\n"
    "   2 = names >95% of the key tests with exact clinical names AND correct priority order;\n"
    "   1 = names 60-95% of the key tests, or names most but with imprecise terminology;\n"
    "   0 = names <60% of the key tests or recommends mostly irrelevant tests.\n"
    "2. TEST SPECIFICITY:\n"
    "   2 = ALL tests specify exact parameters (body region, contrast agent, sequences/views);\n"
    "   1 = some tests have parameters but others only name the modality;\n"
    "   0 = most tests are named only by modality without clinical details.\n"
    "3. TEST ORDERING & CONDITIONAL LOGIC:\n"
    "   2 = explicitly states first-line vs second-line vs confirmatory with conditional\n"
    '       branching (e.g., "if X is negative, proceed to Y");\n'
    "   1 = mentions some ordering or priority but lacks explicit branching logic;\n"
    "   0 = flat list of tests with no ordering or sequencing.\n"
    "4. EXPECTED FINDINGS:\n"
    '   2 = describes specific expected findings for each major test (e.g., "MRI may show\n'
    '       hyperintense T2 signal in periventricular region suggesting demyelination");\n'
    "   1 = mentions expected findings for some tests but not most;\n"
    "   0 = does not describe what findings to look for in any test.\n"
    "5. QUANTITATIVE CRITERIA:\n"
    "   2 = provides specific thresholds, lab cutoffs, or scoring systems for most tests\n"
    '       (e.g., "ESR >20mm/hr", "lesion >1cm warrants biopsy");\n'
    "   1 = mentions some quantitative elements but most tests lack thresholds;\n"
    "   0 = no quantitative criteria or measurement standards mentioned.\n"
    "6. DIFFERENTIAL NARROWING:\n"
    "   2 = each test explicitly maps to ruling in/out specific differential diagnoses,\n"
    "       forming a coherent diagnostic decision tree;\n"
    "   1 = some tests linked to differentials but the overall logic is incomplete;\n"
    "   0 = tests are not connected to any differential diagnosis reasoning.\n"
    "7. PATIENT-SPECIFIC ADAPTATION:\n"
    "   2 = tests are explicitly adapted to patient demographics, comorbidities, and history\n"
    "       (e.g., adjusting for age, pregnancy, renal function, allergies);\n"
    "   1 = mentions some patient factors but does not adapt test choices accordingly;\n"
    "   0 = generic workup with no patient-specific adaptation.\n"
    "8. TESTING PRECISION:\n"
    "   2 = zero redundant tests AND explicitly justifies why each is necessary;\n"
    "   1 = mostly relevant but includes some redundancy or lacks justification;\n"
    "   0 = shotgun approach with many irrelevant or redundant tests.\n\n"
    "Reply with ONLY eight scores (0, 1, or 2), one per line."
)

_YES_NO = re.compile(r"\b(yes|no)\b")
_YES = re.compile(r"\byes\b")
_NO = re.compile(r"\bno\b")
_RATIO = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*(\d+)")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_UNIT = re.compile(r"\b(0(?:\.\d+)?|1(?:\.0+)?)\b")
_RATING = re.compile(r"\b([012])\b")


def json_list(value: Any) -> list[Any]:
    """VLMEvalKit's parse_json_list: a JSON value as a list (a non-list JSON value as its one item), else the text
    split on `;`; blank: []."""
    if isinstance(value, list):
        return value
    if is_blank(value):
        return []
    try:
        parsed = json.loads(value)
    except (ValueError, TypeError):
        return [s.strip() for s in str(value).split(";") if s.strip()]
    return parsed if isinstance(parsed, list) else [str(parsed)]


def _text(row: dict[str, Any], column: str) -> str:
    """`str(row.get(column, ''))` as VLMEvalKit writes a cell into its prompt (a blank cell is `nan` there)."""
    if column not in row:
        return ""
    value = row[column]
    return "nan" if is_blank(value) else str(value)


def gold_answers(row: dict[str, Any]) -> list[str]:
    """Diagnosis: the answer, then its aliases (blank ones dropped)."""
    aliases = [str(a) for a in json_list(row.get("answer_aliases")) if str(a).strip()]
    return [_text(row, "answer"), *aliases]


def build_judge_prompt(track: str, row: dict[str, Any], prediction: str) -> str:
    """The judge prompt of a row of `track` with the model's reply (see the module docstring)."""
    if track == "diagnosis":
        gold = gold_answers(row)
        prompt = DIAGNOSIS_HEAD + f"Reference diagnosis: {gold[0]}\n"
        if len(gold) > 1:
            prompt += f"Acceptable synonyms/abbreviations: {'; '.join(gold[1:])}\n"
        return prompt + f"\nModel response: {prediction.strip()}\n\n" + DIAGNOSIS_TAIL
    head = {"treatment": TREATMENT_HEAD, "crossmodal": CROSSMODAL_HEAD, "examination": EXAMINATION_HEAD}[track]
    prompt = (head + f"Question: {_text(row, 'question')}\n\nReference answer: {_text(row, 'answer')}\n\n"
              f"Model response: {prediction}\n\n")
    if track == "treatment":
        must_include, must_not = json_list(row.get("rubric_must_include")), json_list(row.get("rubric_must_not"))
        if must_include:
            prompt += f"Required treatment elements: {'; '.join(map(str, must_include))}\n"
        if must_not:
            prompt += f"Safety violations to check: {'; '.join(map(str, must_not))}\n"
        return prompt + TREATMENT_TAIL
    if track == "crossmodal":
        mainline = json_list(row.get("golden_mainline"))
        if mainline and isinstance(mainline[0], dict):
            mainline = [item.get("claim", str(item)) for item in mainline]
        relation = _text(row, "relation_type").lower().strip()
        if mainline:
            prompt += f"Key medical findings: {'; '.join(map(str, mainline))}\n"
        if relation and relation != "nan":
            prompt += f"Expected cross-modal relationship: {relation}\n"
        return prompt + CROSSMODAL_TAIL
    key_tests = json_list(row.get("key_test_names"))
    must_not = json_list(row.get("must_not"))
    red_flags = json_list(row.get("red_flags_to_rule_out"))
    if key_tests:
        prompt += f"Key diagnostic tests expected: {'; '.join(map(str, key_tests))}\n"
    if red_flags:
        prompt += f"Red flags that should be addressed: {'; '.join(map(str, red_flags))}\n"
    if must_not:
        prompt += f"Tests that should NOT be recommended: {'; '.join(map(str, must_not))}\n"
    return prompt + EXAMINATION_TAIL


def _ratio(text: str) -> float | None:
    found = _RATIO.search(text)
    if found is None:
        return None
    denominator = float(found.group(2))
    if denominator == 0:
        return 0.0  # VLMEvalKit divides by zero there: the call fails and the row scores 0
    return min(float(found.group(1)) / denominator, 1.0)


def read_grade(track: str, reply: str) -> float:
    """The track's reading of a judge reply as VLMEvalKit reads it (module docstring), 0..1."""
    text = reply.strip()
    lower = text.lower()
    if track == "diagnosis":
        answers = _YES_NO.findall(lower)
        if len(answers) >= 3:
            exact, category, specific = (1 if a == "yes" else 0 for a in answers[:3])
            return (category + specific) / 10.0 if not exact else (3 * exact + category + specific) / 5.0
        ratio = _ratio(lower)
        return ratio if ratio is not None else 0.0
    yes, no = len(_YES.findall(lower)), len(_NO.findall(lower))
    if track == "examination":
        ratings = [int(x) for x in _RATING.findall(text)]
        if len(ratings) >= 8:
            return sum(ratings[:8]) / 16.0
        if yes + no >= 6:
            return yes / (yes + no)
        ratio = _ratio(text)
        return ratio if ratio is not None else 0.0
    if yes + no >= 2:
        return yes / (yes + no)
    if yes + no == 1:
        return 1.0 if yes == 1 else 0.0
    ratio = _ratio(text)
    if ratio is not None:
        return ratio
    percent = _PERCENT.search(text)
    if percent:
        return min(float(percent.group(1)) / 100.0, 1.0)
    unit = _UNIT.search(lower)
    return float(unit.group(1)) if unit else 0.0


def _normalise(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def token_f1(gold: Sequence[str], prediction: str) -> float:
    """VLMEvalKit's compute_f1: the best token F1 of the prediction against each gold answer."""
    def one(answer: str) -> float:
        gold_tokens, pred_tokens = _normalise(answer).split(), _normalise(prediction).split()
        same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
        if same == 0:
            return 0.0
        precision, recall = same / len(pred_tokens), same / len(gold_tokens)
        return 2 * precision * recall / (precision + recall)

    return max(one(answer) for answer in gold)


def score_mmrarebench(df: pd.DataFrame, judge: Judge, *, track: str, what: str = "MMRarebench") -> EvalResult:
    """Grade every answer of a `track` table (module docstring). Columns: `index`, `prediction`, and the track's
    cells. JudgeStopped from the judge is let through."""
    if track not in TRACKS:
        raise ValueError(f"{what}: unknown MMRarebench track {track!r}; choose one of {', '.join(TRACKS)}")
    records, keys = keyed_records(df, ("index", "prediction"), what)
    prompts = {key: build_judge_prompt(track, row, str(row["prediction"]))
               for key, row in zip(keys, records) if not failed_call(row["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: read_grade(track, answer_part(reply)),
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    scores, methods, replies = judged_columns(keys, outcomes, unasked=0.0)
    graded = [s for s in scores if s is not None]
    headline = f"{track}_judge_score"
    metrics = {headline: sum(graded) / len(graded) if graded else 0.0}
    per_sample = pd.DataFrame({"index": [row["index"] for row in records],
                               "score": pd.Series(scores, dtype=object)})
    metric_scales = {}
    if track == "diagnosis":
        f1 = [0.0 if failed_call(row["prediction"]) else token_f1(gold_answers(row), str(row["prediction"]).strip())
              for row in records]
        per_sample["f1"] = f1
        metrics["diagnosis_f1"] = sum(f1) / len(f1) * 100
        metric_scales["diagnosis_f1"] = Scale(PERCENT)
    per_sample["method"] = methods
    per_sample["judge"] = pd.Series(replies, dtype=object)
    counts = judged_counts(methods, len(graded))
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary=headline,
        per_sample=per_sample,
        table=pd.DataFrame([{**metrics, "n_total": len(records)}]),
        table_suffix="score",
        counts=counts,
        notes=_notes(per_sample, judge, track),
        scale=Scale(FRACTION),
        metric_scales=metric_scales,
    )


def _notes(per_sample: pd.DataFrame, judge: Judge, track: str) -> list[str]:
    notes = [f"graded by {judge.name} with VLMEvalKit's MMRarebench {track} rubric (one ask per row); "
             f"{track}_judge_score = mean grade (0..1)"]
    return notes + method_notes(per_sample, {
        JUDGE_ERROR: "the judge call failed: left out of the mean this run and asked again on the next run "
                     "(VLMEvalKit grades the failure as 0)",
        INFERENCE_ERROR: "no prediction: not sent to the judge, 0 (VLMEvalKit sends the text 'nan')",
    })
