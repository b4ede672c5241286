"""MMVet and MMVet_Hard: each answer graded 0-1 by an LLM judge against the ground truth, as VLMEvalKit grades it.

The judge prompt (`MMVET_PROMPT`) is VLMEvalKit's few-shot table, character for character: the instructions, the
seven graded examples, then one row `question | ground truth | prediction | ` for the judge to complete. In the
ground truth, `<AND>` / `<OR>` are padded with a space on each side (` <AND> `), as VLMEvalKit does.
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Asking and reading (VLMEvalKit's MMVet_auxeval): up to 5 asks of the same prompt at temperature 0, 0.5, 1.0, 1.5,
2.0 (max_tokens 2048); a reply is read when the whole of it parses as a number (Python's float(), surrounding white
space allowed) within [0, 1]; otherwise the judge is asked again. After 5 unread replies the row scores 0.0
(method `judge_unread`), as in VLMEvalKit.

Per row (EvalResult.per_sample): `index`, `score` (0..1), `method` (`judge`, `judge_unread`,
`judge_error`: a judge call failed, 0 this run, asked again on the next run; `inference_error`: no prediction, not
asked, 0) and `judge` (the judge's last reply; None when not asked).

Report (VLMEvalKit's MMVet_acc): the table is `_score.csv`: one row per capability `rec`, `ocr`, `know`, `gen`,
`spat`, `math` (a row counts for every capability whose name is a substring of its `category`, e.g. `rec,ocr`) and
`Overall`, columns `Category`, `tot`, `acc` (mean score x 100). Metrics: `Overall` (primary, percent) and each
capability, plus `fine/<category>` for each exact category combination (commas -> underscores), VLMEvalKit's
`_score_fine.csv`.

Where vlmkit differs from VLMEvalKit (deliberately):
- a missing prediction is an inference error scored 0 without asking the judge (VLMEvalKit sends the text `nan`);
- a reply `nan` is not a score (Python's float() reads it and VLMEvalKit keeps NaN, which poisons the means), and a
  `<think>...</think>` block before the number is dropped before reading;
- a failed judge call is never cached as 0.0: the row is a judge error this run and asked again on the next;
- a capability without rows has `acc` NaN (VLMEvalKit divides by zero);
- a row with one capability (`category` `rec`) counts once in that capability's figure. VLMEvalKit's MMVet_acc adds
  each row to every capability it names and then to its exact category (`rec`), which is the same key for a
  single-capability row: such a row counts twice in `rec` (and in `fine/rec`). vlmkit's figures count it once; a
  note says how many rows VLMEvalKit counts twice.

VLMEvalKit's figure (EvalResult.vlmevalkit): MMVet_acc with its double count, on the grades VLMEvalKit reads from the
same judge replies (the whole reply, stripped, through float(): `nan` is a grade there and makes its figures NaN, a
think block is not). It needs, for every row, the judge reply VLMEvalKit would have stopped at; it is not computed
(None, and a note says why) where vlmkit has none: a reply VLMEvalKit reads back from its xlsx as another text (an
empty reply, `None`, `N/A` as `nan`; `3` as `3.0` in a column of numbers: a prompt vlmkit never sent), a reply
vlmkit read that VLMEvalKit's float() cannot (it would ask again), or a failed judge call. A row without a
prediction is 0 on both sides. A capability without rows is left out (VLMEvalKit divides by zero there).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.vlmevalkit_replies import changed_replies, failed_call
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

# VLMEvalKit's build_mmvet_gpt4_prompt, up to the row the judge completes (starts with a newline; ends after the
# last example's newline).
MMVET_PROMPT = """
Compare the ground truth and prediction from AI models, to give a correctness score for the prediction.
<AND> in the ground truth means it is totally right
only when all elements in the ground truth are present in the prediction,
and <OR> means it is totally right when any one element in the ground truth is present in the prediction.
The correctness score is 0.0 (totally wrong), 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, or 1.0 (totally right).
Just complete the last space of the correctness score.

Question | Ground truth | Prediction | Correctness
--- | --- | --- | ---
What is x in the equation? | -1 <AND> -5 | x = 3 | 0.0
What is x in the equation? | -1 <AND> -5 | x = -1 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -5 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -5 or 5 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -1 or x = -5 | 1.0
Can you explain this meme? | This meme is poking fun at the fact that the names of the countries
Iceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes,
while Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues
because the names of these countries do not accurately represent their landscapes. |
The meme talks about Iceland and Greenland. It's pointing out that despite their names,
Iceland is not very icy and Greenland isn't very green. | 0.4
Can you explain this meme? | This meme is poking fun at the fact that the names of the countries
Iceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes,
while Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues
because the names of these countries do not accurately represent their landscapes. |
The meme is using humor to point out the misleading nature of Iceland's and Greenland's names.
Iceland, despite its name, has lush green landscapes while Greenland is mostly covered in ice and snow.
The text 'This is why I have trust issues' is a playful way to suggest
that these contradictions can lead to distrust or confusion.
The humor in this meme is derived from the unexpected contrast between the names of the countries
and their actual physical characteristics. | 1.0
"""

CAPABILITIES = ("rec", "ocr", "know", "gen", "spat", "math")
JUDGE_TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)  # VLMEvalKit: temperature = attempt x 0.5, 5 attempts
JUDGE_MAX_TOKENS = 2048
SCORER = "mmvet"

JUDGE, UNREAD, JUDGE_ERROR, INFERENCE_ERROR = "judge", "judge_unread", "judge_error", "inference_error"


def mmvet_prompt(question: str, answer: str, prediction: str) -> str:
    """The judge prompt for one row (see the module docstring)."""
    truth = answer.replace("<AND>", " <AND> ").replace("<OR>", " <OR> ")
    return MMVET_PROMPT + "\n" + f"{question} | {truth} | {prediction} | "


def read_grade(reply: str) -> float | None:
    """The judge's grade: the whole reply (after any think block) as a number within [0, 1]; None otherwise."""
    try:
        value = float(answer_part(reply))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else None


def graded_row(outcome: JudgeOutcome[float] | None) -> tuple[float, str, str | None]:
    """(score, method, last judge reply) of one row; no outcome: the row was not asked (no prediction)."""
    if outcome is None:
        return 0.0, INFERENCE_ERROR, None
    if outcome.error is not None:
        return 0.0, JUDGE_ERROR, outcome.last_reply
    if outcome.value is None:
        return 0.0, UNREAD, outcome.last_reply
    return float(outcome.value), JUDGE, outcome.last_reply


def score_mmvet(df: pd.DataFrame, judge: Judge, *, what: str = "MMVet") -> EvalResult:
    """Grade every prediction with the judge (see the module docstring). Columns: `index`, `question`, `answer`,
    `category`, `prediction` (None/NaN = inference error). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "category", "prediction"), what)

    prompts: dict[str, str] = {}
    categories: list[str] = []
    for key, row in zip(keys, records):
        categories.append(required_text(row, "category", what))
        answer = required_text(row, "answer", what)
        question = required_text(row, "question", what)
        pred = row["prediction"]
        if failed_call(pred):
            continue
        prompts[key] = mmvet_prompt(question, answer, str(pred))

    outcomes = judge_rounds(judge, prompts, lambda _key, reply: read_grade(reply),
                            temperatures=JUDGE_TEMPERATURES, max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    graded = [graded_row(outcomes.get(key)) for key in keys]
    scores = [score for score, _, _ in graded]
    methods = [method for _, method, _ in graded]
    replies = [reply for _, _, reply in graded]

    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records],
        "score": scores,
        "method": methods,
        "judge": pd.Series(replies, dtype=object),
    })
    figure, why_not = mmvet_vlmevalkit_figure(records, keys, categories, outcomes, scores)
    table = capability_table(categories, scores)
    metrics = {str(cat): float(acc) for cat, tot, acc in table.itertuples(index=False) if tot > 0}
    for fine, acc in fine_scores(categories, scores).items():
        metrics[f"fine/{fine}"] = acc
    counts = {
        "total": len(records), "scored": len(records), "by_judge": methods.count(JUDGE),
        "unread": methods.count(UNREAD), "judge_errors": methods.count(JUDGE_ERROR),
        "inference_errors": methods.count(INFERENCE_ERROR),
    }
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary="Overall",
        per_sample=per_sample,
        table=table,
        table_suffix="score",
        counts=counts,
        notes=_notes(per_sample, judge) + _double_count_note(categories) + ([why_not] if why_not else []),
        scale=Scale(PERCENT),
        vlmevalkit=figure,
    )


def capability_table(categories: Sequence[str], scores: Sequence[float]) -> pd.DataFrame:
    """VLMEvalKit's `_score.csv`: Category (each capability, then Overall), tot, acc (mean score x 100)."""
    rows = []
    values = np.asarray(scores, dtype=float)
    for capability in (*CAPABILITIES, "Overall"):
        mask = np.array([capability == "Overall" or capability in cat for cat in categories], dtype=bool)
        tot = int(mask.sum())
        rows.append((capability, tot, float(values[mask].mean() * 100) if tot else float("nan")))
    return pd.DataFrame(rows, columns=["Category", "tot", "acc"])


def fine_scores(categories: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """VLMEvalKit's `_score_fine.csv` without Overall: mean score x 100 per exact category (`,` -> `_`), in the
    order the categories first appear."""
    sums: dict[str, list[float]] = {}
    for cat, score in zip(categories, scores):
        sums.setdefault(cat.replace(",", "_"), []).append(score)
    return {name: float(np.mean(values) * 100) for name, values in sums.items()}


def vlmevalkit_grade(replies: Sequence[str]) -> tuple[float | None, bool]:
    """(grade, known) as VLMEvalKit's MMVet_auxeval reads the judge's replies in order: the first whose stripped
    text float() reads within [0, 1] (NaN passes its range check); 0.0 after 5 unread. Not known when the replies
    run out before that (vlmkit stopped asking sooner)."""
    for reply in replies[:len(JUDGE_TEMPERATURES)]:
        try:
            value = float(reply.strip())
        except ValueError:
            continue
        if not (value < 0 or value > 1):
            return value, True
    return (0.0, True) if len(replies) >= len(JUDGE_TEMPERATURES) else (None, False)


def vlmevalkit_acc(categories: Sequence[str], grades: Sequence[float]) -> tuple[dict[str, float], dict[str, float]]:
    """VLMEvalKit's MMVet_acc: (capability and Overall figures, exact-category figures), acc = score / tot x 100.
    Capabilities and exact categories share one tally, so a single-capability row counts twice there. A
    capability without rows is left out (VLMEvalKit divides by zero)."""
    tot: dict[str, int] = {}
    score: dict[str, float] = {}
    fine: list[str] = []
    for cat, grade in zip(categories, grades):
        exact = cat.replace(",", "_")
        if exact not in fine:
            fine.append(exact)
        for key in [c for c in CAPABILITIES if c in cat] + ["Overall", exact]:
            tot[key] = tot.get(key, 0) + 1
            score[key] = score.get(key, 0.0) + grade
    capability = {k: score[k] / tot[k] * 100 for k in (*CAPABILITIES, "Overall") if tot.get(k)}
    return capability, {k: score[k] / tot[k] * 100 for k in fine}


def mmvet_vlmevalkit_figure(
    records: Sequence[dict], keys: Sequence[str], categories: Sequence[str],
    outcomes: dict[str, JudgeOutcome[float]], scores: Sequence[float],
) -> tuple[VlmevalkitFigure | None, str | None]:
    """(VLMEvalKit's MMVet figures for the same judge replies, None) (module docstring); (None, why) when a grade
    it needs is a judge reply vlmkit does not have."""
    grades: list[float] = []
    differing: list[ReadingDifference] = []
    missing: list[object] = []
    changed = changed_replies([row["prediction"] for row in records])
    for row, key, mine, other_text in zip(records, keys, scores, changed):
        pred = row["prediction"]
        grade: float | None = 0.0
        if other_text:
            grade = None
        elif not failed_call(pred):
            outcome = outcomes.get(key)
            grade, known = vlmevalkit_grade(outcome.replies if outcome is not None else [])
            grade = grade if known else None
        if grade is None:
            missing.append(row["index"])
            continue
        grades.append(grade)
        if not (grade == mine or (math.isnan(grade) and math.isnan(mine))):
            differing.append(ReadingDifference(row["index"], mine, grade, mine, grade))
    if missing:
        return None, (f"VLMEvalKit's figure not computed: {len(missing)} row(s) need a judge reply vlmkit does not "
                      "have (a reply VLMEvalKit reads back from its xlsx as another text, 'nan' or a number, and "
                      "would send as such, a grade its float() cannot read so it would ask again, or a failed judge "
                      f"call); index {listed(missing)}")
    capability, fine = vlmevalkit_acc(categories, grades)
    metrics = dict(capability)
    metrics.update({f"fine/{name}": value for name, value in fine.items()})
    notes = _double_count_note(categories)
    nans = [d.index for d in differing if isinstance(d.vlmevalkit, float) and math.isnan(d.vlmevalkit)]
    if nans:
        notes.append(f"{len(nans)} judge reply(ies) 'nan' read as a grade by VLMEvalKit's float(): its figures for "
                     f"their capabilities and Overall are NaN; index {listed(nans)}")
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes), None


def _double_count_note(categories: Sequence[str]) -> list[str]:
    single = Counter(cat for cat in categories if cat in CAPABILITIES)
    if not single:
        return []
    counted = ", ".join(f"{cap} {single[cap]}" for cap in CAPABILITIES if single[cap])
    return [f"{sum(single.values())} row(s) have a single capability ({counted}): vlmkit counts each once in that "
            "capability's figure; VLMEvalKit's MMVet_acc counts them twice (capability and exact category share a "
            "key; its figures, where computed, in scoring.vlmevalkit)"]


def _notes(per_sample: pd.DataFrame, judge: Judge) -> list[str]:
    notes = [f"graded 0-1 by {judge.name} with VLMEvalKit's MMVet prompt (up to 5 asks); acc = mean grade x 100"]
    explained = (
        (UNREAD, "the judge never answered with a number in [0, 1] in 5 asks: scored 0, as in VLMEvalKit"),
        (JUDGE_ERROR, ("the judge call failed: scored 0 this run and asked again on the next run (VLMEvalKit caches "
                      "such a failure as a 0.0 grade)")),
        (INFERENCE_ERROR, "no prediction: scored 0 without asking the judge (VLMEvalKit sends the text 'nan')"),
    )
    for method, what in explained:
        rows = per_sample.loc[per_sample["method"] == method, "index"].tolist()
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {what}; index {listed(rows)}")
    return notes
