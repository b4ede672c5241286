"""DUDE and SlideVQA as VLMEvalKit scores them: an LLM judge extracts the answer from the reply, then a rule scores
it (vlmeval/dataset/dude.py DUDE_acc, slidevqa.py SlideVQA_acc, with mmlongbenchdoc.py MMLongBench_auxeval,
build_mmlongbench_gpt4_prompt and anls_compute at e8e78f05).

Judge: VLMEvalKit's MMLongBench-Doc extraction prompt (EXTRACTION_PROMPT, verbatim: a task description and four
worked examples) followed by `---\nQuestion:{question}\nAnalysis: {reply}`, asked once at temperature 0 with at
most 128 tokens (VLMEvalKit asks again, at temperature 0.5 x attempt, only when the call itself failed; a failed
call is a judge error in vlmkit, asked again by the next run). The extracted answer is the judge's text between the
first `Extracted answer:` and `Answer format:`, stripped; a reply without `Extracted answer:` extracts nothing (`""`).
No rule can stand in for the judge: the reply is never read without it.

ANLS (anls): the Levenshtein distance of the answer and the extraction over the longer length (of their upper-cased
forms), 1 minus that, and 0 when that is at most 0.5; 1 when both are empty.
- DUDE: an empty answer cell is `Not answerable`; answer and extraction lower-cased. Figure `anls`, the mean.
- SlideVQA: an empty answer cell is `Not answerable`; the answer's line breaks removed; both lower-cased. Per row
  ANLS, EM (equal after stripping) and F1 (the extraction's words found among the answer's words, counted per
  extraction word: recall over the answer's word count, precision over the extraction's; 0 when either has no word).
  Figures `anls`, `EM`, `F1`, the means (VLMEvalKit's table order; `anls` is the headline).
Fractions. A failed call is not sent to the judge and scores 0 (VLMEvalKit sends its failure text to the judge).
Where VLMEvalKit's own figure would differ: it reads the extractions back from an xlsx, so DUDE_acc stops on an empty
or numeric extraction (`.lower()` of NaN or a number); SlideVQA_acc reads it with str() (`nan`, `3.0`); the
`vlmevalkit` figure of SlideVQA follows that round trip.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
from rapidfuzz.distance import Levenshtein

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

JUDGE_MAX_TOKENS = 128
NOT_ANSWERABLE = "Not answerable"

# VLMEvalKit's build_mmlongbench_gpt4_prompt: its task description and its four examples (get_gpt4_ICE), verbatim
EXTRACTION_PROMPT = """
Given the question and analysis, you are tasked to extract answers with required formats from the free-form analysis.
- Your extracted answers should be one of the following formats: (1) Integer, (2) Float, (3) String and (4) List.
If you find the analysis the question can not be answered from the given documents, type "Not answerable".
Exception: If the analysis only tells you that it can not read/understand the images or documents,
type "Fail to answer".
- Please make your response as concise as possible. Also note that your response should be formatted as below:
```
Extracted answer: [answer]
Answer format: [answer format]
```
Please read the following example, then extract the answer from the model response
and type it at the end of the prompt.


---
Question: List the primary questions asked about the services in this report.
Analysis:  The primary questions asked about the services in the report for The Limes Residential Home are:


1. Is the service safe?

2. Is the service effective?

3. Is the service caring?

4. Is the service responsive?

5. Is the service well-led?
Extracted answer: [
    'Is the servife safe?',
    'Is the service effective',
    'Is the serve caring?',
    'Is the service responsive?',
    'Is the service well-led?'
]
Answer format: List


---
Question: How many regulations of the HSCA 2008 are breached in all according to this report?
Analysis: According to the report, the provider breached 10 Health and Social Care Act 2008 (Regulated Activities)
Regulations in total. Here are the specifics:

1. Regulation 13: Safeguarding service users from abuse and
improper treatment
2. Regulation 12: Safe care and treatment
3. Regulation 18: Staffing
4. Regulation 11:
Need for consent
5. Regulation 10: Dignity and respect
6. Regulation 9: Person-centred care
7. Regulation 17:
Good governance
8. Regulation 18 (CQC Registration Regulations 2009): Notification of other incidents
9.
Regulation 18: Failure to maintain an accurate and up-to-date care plan
10. Regulation 11: Failure to implement
the Mental Capacity Act 2005 code of practice effectively

These breaches involve issues concerning staffing,
safeguarding, medicines management, dignity and respect, consent, care planning, governance, and failure to
notify the CQC of incidents.
Extracted answer: 10
Answer format: Integer


---
Question: According to the survey that is the percentage of Chinese who are paying more or
about the same attention to politics after Trump's election?
Analysis: The survey provided does not specify the percentage of Chinese individuals specifically who are paying
more or about the same attention to politics after Trump's election. The report focuses primarily on American
demographics and does not include specific details about the Chinese population in relation to this question. If
you need information about a different demographic or a summary of the findings from the American demographic,
I can certainly help with that!
Extracted answer: Not answerable
Answer format: String


---
Question: How many quotations from male respondent over 50 years old are included in this report?
Analysis: The image you've provided appears to be a screenshot of a document with multiple charts. However, the
text is too small and blurry to read accurately. If you can provide a clearer image or more context, I might be
able to help you with your question.
Extracted answer: Fail to answer
Answer format: String

"""


def extraction_prompt(question: str, reply: str) -> str:
    """The judge prompt for one row."""
    return EXTRACTION_PROMPT + "---\nQuestion:" + question + "\n" + "Analysis: " + reply


def extracted_answer(reply: str) -> str | None:
    """The judge's extraction (module docstring); None when the reply has no `Extracted answer:`."""
    parts = reply.split("Answer format:")[0].split("Extracted answer:")
    return parts[1].strip() if len(parts) > 1 else None


def anls(answer: str, extraction: str, threshold: float = 0.5) -> float:
    length = max(len(answer.upper()), len(extraction.upper()))
    value = 1.0 - (0.0 if length == 0 else Levenshtein.distance(answer, extraction) / length)
    return 0.0 if value <= threshold else value


def bag_f1(answer: str, extraction: str) -> float:
    gold, mine = answer.strip().split(), extraction.strip().split()
    if not gold or not mine:
        return 0.0
    found = len([w for w in mine if w in gold])
    recall, precision = found / len(gold), found / len(mine)
    return 2 * recall * precision / (recall + precision) if recall + precision > 1e-4 else 0.0


def _answer(cell: Any) -> str:
    """The answer cell; an empty one (NaN in VLMEvalKit's table) is `Not answerable`."""
    return NOT_ANSWERABLE if is_missing(cell) or cell == "" else str(cell)


def dude_row(answer: Any, extraction: str) -> dict[str, float]:
    return {"anls": anls(_answer(answer).lower(), extraction.lower())}


def slidevqa_row(answer: Any, extraction: str) -> dict[str, float]:
    gold, mine = re.sub("\n", "", _answer(answer)).lower(), extraction.lower()
    return {"anls": anls(gold, mine), "EM": float(gold.strip() == mine.strip()), "F1": bag_f1(gold, mine)}


def _extract(outcomes: dict[str, JudgeOutcome[str]], key: str) -> tuple[str, str, str | None]:
    """(extraction, method, judge reply) of a row; a row not asked was a failed call."""
    outcome = outcomes.get(key)
    if outcome is None:
        return "", INFERENCE_ERROR, None
    if outcome.error is not None:
        return "", JUDGE_ERROR, outcome.last_reply
    reply = outcome.last_reply or ""
    found = extracted_answer(reply)
    return ("", UNREAD, reply) if found is None else (found, JUDGE, reply)


def score_judged_document_vqa(df: pd.DataFrame, judge: Judge, *, benchmark: str, what: str) -> EvalResult:
    """Score DUDE (`benchmark="dude"`) or SlideVQA (`"slidevqa"`) replies with the judge's extractions. Columns:
    `index`, `question`, `answer` (blank: Not answerable), `prediction` (None/NaN = a failed call)."""
    if benchmark not in ("dude", "slidevqa"):
        raise ValueError(f"unknown document VQA benchmark {benchmark!r} (dude or slidevqa)")
    records, keys = keyed_records(df, ("index", "question", "answer", "prediction"), what)
    prompts = {key: extraction_prompt(required_text(row, "question", what), str(row["prediction"]))
               for key, row in zip(keys, records) if not failed_call(row["prediction"])}  # fmt: skip
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: reply, temperatures=(0.0,),
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}  # fmt: skip
    row_figures = dude_row if benchmark == "dude" else slidevqa_row
    extractions, methods, replies, rows = [], [], [], []
    for key, row in zip(keys, records):
        extraction, method, reply = _extract(outcomes, key)
        scored = row_figures(row["answer"], extraction)
        if method in (INFERENCE_ERROR, JUDGE_ERROR):
            scored = {name: 0.0 for name in scored}
        extractions.append(extraction)
        methods.append(method)
        replies.append(reply)
        rows.append(scored)
    names = list(rows[0]) if rows else ["anls"]
    metrics = {name: sum(r[name] for r in rows) / len(rows) for name in names}
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "extracted": extractions,
                               **{name: [r[name] for r in rows] for name in names}, "method": methods,
                               "judge": pd.Series(replies, dtype=object)})  # fmt: skip
    counts = {**judged_counts(methods, len(records), count_unread=True), "by_rule": 0}
    notes = _notes(methods, [r["index"] for r in records])
    figure = _slidevqa_figure(records, extractions, methods, rows) if benchmark == "slidevqa" else None
    return EvalResult(
        scorer=benchmark, metrics=metrics, primary="anls", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip


def _notes(methods: Sequence[str], indices: Sequence[Any]) -> list[str]:
    out = []
    for method, says in ((INFERENCE_ERROR, "failed call(s) were not sent to the judge and score 0"),
                         (JUDGE_ERROR, "row(s) could not be judged (the judge call failed) and score 0 this run"),
                         (UNREAD, "judge reply(ies) extract no answer (no `Extracted answer:`) and score 0")):
        which = [i for i, m in zip(indices, methods) if m == method]
        if which:
            out.append(f"{len(which)} {says}: index {', '.join(map(str, which[:20]))}"
                       + (" ..." if len(which) > 20 else ""))  # fmt: skip
    return out


def _slidevqa_figure(records: list[dict[str, Any]], extractions: list[str], methods: list[str],
                     mine: list[dict[str, float]]) -> VlmevalkitFigure:  # fmt: skip
    """SlideVQA_acc on the extractions as its xlsx round trip leaves them (str() of each cell)."""
    judged = [m not in (INFERENCE_ERROR, JUDGE_ERROR) for m in methods]
    texts = vlmevalkit_texts([e for e, ok in zip(extractions, judged) if ok])
    theirs, differing, it = [], [], iter(texts)
    for row, extraction, ok, my_row in zip(records, extractions, judged, mine):
        if not ok:
            theirs.append({name: 0.0 for name in my_row})
            continue
        text = next(it)
        scored = slidevqa_row(row["answer"], text)
        theirs.append(scored)
        if scored != my_row:
            differing.append(ReadingDifference(row["index"], extraction, text, my_row["anls"], scored["anls"]))
    metrics = {name: sum(r[name] for r in theirs) / len(theirs) for name in ("anls", "EM", "F1")}
    return VlmevalkitFigure(metrics, "anls", differing)
