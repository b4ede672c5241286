"""MathVerse (every MathVerse_MINI variant) scored as VLMEvalKit scores it: the judge extracts the answer, then (unless
it equals the standard answer) judges whether it matches; both prompts verbatim below.
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Per row (columns `index`, `prediction`, `answer`, `question_for_eval`, and `metadata`: a JSON / Python dict with
`problem_version`, `subject`, `subfield`; same-named columns are used where the metadata lacks them):
1. Extraction: VLMEvalKit's extraction prompt, up to 5 asks at temperature 0, 0.5, 1.0, 1.5, 2.0 (max_tokens 128);
   the first non-empty reply (stripped) is the extracted answer.
2. If the extracted answer equals the stripped `answer`, the row is right without another call (`prefetch`, as
   VLMEvalKit's log says); else the scoring prompt, up to 5 asks at the same temperatures: a reply that is exactly
   `0` or `1` (stripped) decides; otherwise it is asked again.

Report as VLMEvalKit's `_score.csv`: one row per `problem_version` (column `split`), columns Overall, each subject and
each subfield (percent). Metrics: Overall, each subject and subfield over all rows, and each problem version.

Where vlmkit deliberately differs from VLMEvalKit (each also written into EvalResult.notes):
- a failed judge call (either stage) is that row's `judge_error` (a miss this run, asked again on the next run);
  VLMEvalKit caches an empty extraction, scores it, and reuses the cached failure on later runs.
- a row whose extraction replies were all empty, or whose five scoring replies were never `0`/`1`, is
  `judge_unread` (a miss, as in VLMEvalKit, but counted apart).
- `metadata` is read as JSON, else as a Python literal (VLMEvalKit turns every `'` into `"` first, which breaks on
  values that contain an apostrophe).

VLMEvalKit's figure (EvalResult.vlmevalkit): the same figures from the same judge replies, the way VLMEvalKit reads
them. Its extraction is kept in an xlsx between the two stages, so the extracted answer comes back through pandas
(an extraction that never came is blank, the text `nan` there; a column of numbers comes back as numbers, `3.0`
beside a blank); its prefetch compares str() of that cell and of the answer cell, both stripped. A row is right
there by prefetch, or by the verdict vlmkit got for the same scoring prompt. Not computed (None, and a note says
why) where a judge reply it needs is one vlmkit does not have: a reply VLMEvalKit reads back as another text (an
empty reply as `nan`: another extraction prompt), an extraction that round-trips to another text and needs a
verdict, a verdict vlmkit did not ask for (it prefetched), or a failed judge call. A failed model call is a miss on
both sides. Its table has one row per problem_version; `Overall` (all rows) is the same figure as vlmkit's.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key, is_blank, listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import group_means, require_columns, split_category_table
from vlmkit.scoring.common.math_answers import BadRow, Tally, where
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.common.vlmevalkit_replies import VLMEVALKIT_FAILURE_REPLY, changed_replies, failed_call
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

SCORER = "mathverse"
TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)
MAX_TOKENS = 128
META_FIELDS = ("problem_version", "subject", "subfield")

# VLMEvalKit's extraction prompt (vlmeval/dataset/utils/mathverse.py), verbatim up to the model's reply.
EXTRACT_HEAD = r"""
I am providing you a response from a model to a math problem, termed 'Model Response'. You should extract the answer from the response as 'Extracted Answer'. Directly output the extracted answer with no explanation.



1.
Model response: 'Rounded to two decimal places, the perimeter of the sector is approximately:

(-2, 1)'
Extracted Answer: (-2, 1)



2.
Model response: 'at those points.

Therefore, the correct option that represents the meaning of the intersection points of the graphs is:

D. They give the solutions to the equation $f(t)=g(t)$.",'
Extracted Answer: D



3.
Model response: ' at 1 (there's a closed circle at y = 1), the range in interval notation is \((-4, 1]\).

Final values:
Domain: \((-3, 3]\)
Range: \((-4, 1]\)'
Extracted Answer: Domain: \((-3, 3]\)
Range: \((-4, 1]\)



4.
Model response: 'As it stands, I cannot provide the correct option letter because there isn't enough information to solve for 'y'.'
Extracted Answer: null



5.
Model response: 'Given that AB = 17.6 meters, we can now substitute into the equation:

d = 17.6 / cos(38°)

Therefore, to one decimal place, the distance d between Ned and Bart is approximately 22.3 meters.'
Extracted answer: 22.3



6.
Model response:  have all the coefficients for the quadratic function:
\( f(x) = ax^2 + bx + c \)
\( f(x) = -1x^2 - 2x + 1 \)

Therefore, the equation for the graphed function \( f \) is:
\( f(x) = -x^2 - 2x + 1 \)"'
Extracted answer: f(x) = -x^2 - 2x + 1


7.
Model response: '"""
# VLMEvalKit's scoring prompt, verbatim up to the question (`{{3}}` and `Judement` are in the source).
SCORE_HEAD = r"""
Below are two answers to a math question. Question is [Question], [Standard Answer] is the standard answer to the question, and [Model_answer] is the answer extracted from a model's output to this question.  Determine whether these two answers are consistent.
Please note that only when the [Model_answer] completely matches the [Standard Answer] means they are consistent. For non-multiple-choice questions, if the meaning is expressed in the same way, it is also considered consistent, for example, 0.5m and 50cm.
If they are consistent, Judement is 1; if they are different, Judement is 0.



[Question]: Write the set of numbers represented on the number line in interval notation.
[Standard Answer]: (-2,1]
[Model_answer] : Extracted Answer: \((-2, 1)\)
Judgement: 0



[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then the length of BC is ()
Choices:
A:2
B:2√{{3}}
C:√{{3}}
D:2√{{2}}
[Standard Answer]: C
[Model_answer] : B:2√{{3}}
Judgement: 0



[Question]: Find the domain and range of the function f using interval notation.
[Standard Answer]: domain: [-4, 0) and range: (-3, 1]
[Model_answer] : Range: \((-4, 1]\)
Judgement: 0



[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then the length of BC is ()
Choices:
A:2
B:2√{{3}}
C:√{{3}}
D:2√{{2}}
[Standard Answer]: C
[Model_answer] : null
Judgement: 0



    [Question]: """


def extract_prompt(prediction: str) -> str:
    return f"{EXTRACT_HEAD}{prediction}'\nExtracted Answer: "


def score_prompt(question_for_eval: str, answer: str, extract: str) -> str:
    return (f"{SCORE_HEAD}{question_for_eval}\n    [Standard Answer]: {answer}\n    [Model_answer] : {extract}\n"
            "    Judgement:")


NOTES = (
    "MathVerse: a failed judge call is a judge_error for that row, asked again on the next run (VLMEvalKit caches an "
    "empty extraction and scores it)",
    "MathVerse: rows whose judge never gave a usable reply are counted as judge_unread (misses, as in VLMEvalKit)",
    "MathVerse: metadata is read as JSON or a Python literal (VLMEvalKit replaces every ' by \" first and fails on "
    "apostrophes)",
)


def _metadata(row: dict[str, Any], pos: int) -> dict[str, str | None]:
    meta: Any = {}
    cell = row.get("metadata")
    if isinstance(cell, dict):
        meta = cell
    elif not is_blank(cell):
        try:
            meta = json.loads(str(cell))
        except ValueError:
            try:
                meta = ast.literal_eval(str(cell))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                meta = None
        if not isinstance(meta, dict):
            raise BadRow(f"{where(pos, row['index'], 'metadata')}: not a JSON object or Python dict")
    out: dict[str, str | None] = {}
    for name in META_FIELDS:
        value = meta.get(name, row.get(name))
        text = cell_text(value)
        out[name] = text if text is not None and text.strip() else None
    return out


def _verdict(_key: str, reply: str) -> int | None:
    text = reply.strip()
    return int(text) if text in ("0", "1") else None


def score_mathverse(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Score MathVerse predictions with `judge` (two stages; see the module docstring)."""
    require_columns(df, ("index", "prediction", "answer", "question_for_eval"), "MathVerse")
    if len(df) == 0:
        raise ValueError("MathVerse: the predictions table has no rows")
    records = df.to_dict(orient="records")
    tally = Tally([r["index"] for r in records])
    metas = [_metadata(row, pos) for pos, row in enumerate(records)]
    rows: dict[str, int] = {}
    for pos, row in enumerate(records):
        prediction = row["prediction"]
        if failed_call(prediction):
            tally.set(pos, "inference_error")
            continue
        key = index_key(row["index"])
        if key in rows:
            raise BadRow(f"{where(pos, row['index'], 'index')}: repeats row {rows[key]}")
        rows[key] = pos

    extract_prompts = {key: extract_prompt(str(records[pos]["prediction"])) for key, pos in rows.items()}
    extracted = judge_rounds(judge, extract_prompts, lambda _key, reply: reply.strip() or None,
                             temperatures=TEMPERATURES, max_tokens=MAX_TOKENS)
    score_prompts: dict[str, str] = {}
    for key, pos in rows.items():
        outcome, row = extracted[key], records[pos]
        if outcome.error is not None:
            tally.set(pos, "judge_error", reply=outcome.last_reply)
            continue
        if outcome.value is None:
            tally.set(pos, "judge_unread", reply=outcome.last_reply)
            continue
        answer = (cell_text(row.get("answer")) or "").strip()
        tally.set(pos, "judge", outcome.value, answer != "" and outcome.value == answer, reply=outcome.last_reply)
        if tally.hits[pos]:
            tally.prefetch[pos] = True
            continue
        question = cell_text(row.get("question_for_eval"))
        if question is None:
            raise BadRow(f"{where(pos, row['index'], 'question_for_eval')}: empty (the scoring prompt needs it)")
        score_prompts[key] = score_prompt(question, str(cell_text(row.get("answer"))), outcome.value)

    verdicts = judge_rounds(judge, score_prompts, _verdict, temperatures=TEMPERATURES, max_tokens=MAX_TOKENS)
    for key, outcome in verdicts.items():
        pos = rows[key]
        read = tally.extracted[pos]
        if outcome.error is not None:
            tally.set(pos, "judge_error", read, reply=outcome.last_reply)
        elif outcome.value is None:
            tally.set(pos, "judge_unread", read, reply=outcome.last_reply)
        else:
            tally.set(pos, "judge", read, outcome.value == 1, reply=outcome.last_reply)

    metrics, table = _figures(metas, tally.hits)
    counts = tally.counts()
    result = tally.result(SCORER, metrics, table, counts, list(NOTES))
    result.vlmevalkit, why_not = mathverse_vlmevalkit_figure(records, rows, metas, tally, extracted, verdicts)
    if why_not:
        result.notes.append(why_not)
    return result


def _figures(metas: list[dict[str, str | None]], hits: list[bool]) -> tuple[dict[str, float], pd.DataFrame]:
    """(metrics, VLMEvalKit's `_score.csv` table) of per-row hits (module docstring)."""
    units = pd.DataFrame({
        "split": [m["problem_version"] for m in metas],
        "subject": [m["subject"] for m in metas],
        "subfield": [m["subfield"] for m in metas],
        "hit": hits,
    })
    table = split_category_table(units, "hit", groups=("subject", "subfield"), scale=100.0)
    metrics = group_means(units, "hit", groups=("subject", "subfield"), scale=100.0)
    versions = {m["problem_version"] for m in metas} - {None}
    for version, value in zip(table["split"], table["Overall"]):
        if version in versions:
            metrics[version if version not in metrics else f"problem_version={version}"] = float(value)
    return metrics, table


def mathverse_vlmevalkit_figure(
    records: list[dict[str, Any]], rows: dict[str, int], metas: list[dict[str, str | None]], tally: Tally,
    extracted: dict[str, Any], verdicts: dict[str, Any],
) -> tuple[VlmevalkitFigure | None, str | None]:
    """(VLMEvalKit's figure, None), or (None, why) when a judge reply it needs is one vlmkit does not have."""
    changed = changed_replies([row["prediction"] for row in records])
    by_pos = {pos: key for key, pos in rows.items()}
    # The extraction column VLMEvalKit writes between its stages ("" when its five asks gave nothing; a failed
    # model call's row holds an extraction of VLMEvalKit's failure message, a text), then reads back.
    written: list[Any] = []
    for pos in range(len(records)):
        outcome = extracted.get(by_pos.get(pos, ""))
        written.append(VLMEVALKIT_FAILURE_REPLY if outcome is None else (outcome.value or ""))
    extracts = vlmevalkit_texts(written)
    answers = vlmevalkit_texts([row.get("answer") for row in records])
    hits: list[bool] = []
    missing: list[Any] = []
    differing: list[ReadingDifference] = []
    for pos, row in enumerate(records):
        key = by_pos.get(pos)
        if key is None:  # a failed model call: a miss on both sides
            hits.append(False)
            continue
        outcome = extracted[key]
        hit: bool | None = None
        if not changed[pos] and outcome.error is None:
            if extracts[pos].strip() == answers[pos].strip():
                hit = True
            elif (outcome.value is not None and extracts[pos] == outcome.value
                  and answers[pos] == str(cell_text(row.get("answer")))):
                verdict = verdicts.get(key)  # the same scoring prompt: the same replies
                if verdict is not None and verdict.error is None:
                    hit = verdict.value == 1
        if hit is None:
            missing.append(row["index"])
            hits.append(False)
            continue
        hits.append(hit)
        if hit != tally.hits[pos] or extracts[pos] != (tally.extracted[pos] or ""):
            differing.append(ReadingDifference(row["index"], tally.extracted[pos], extracts[pos],
                                               float(tally.hits[pos]), float(hit)))
    if missing:
        return None, (f"VLMEvalKit's figure not computed: {len(missing)} row(s) need a judge reply vlmkit does not "
                      "have (a reply or an extraction VLMEvalKit reads back from its xlsx as another text, a verdict "
                      f"vlmkit did not ask for, or a failed judge call); index {listed(missing)}")
    metrics, _ = _figures(metas, hits)
    notes = ["the extraction read back from VLMEvalKit's xlsx between its two stages; VLMEvalKit's table has one row "
             "per problem_version (Overall here: all rows)"]
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes), None
