"""DREAM-1K's scorer (AutoDQ, VLMEvalKit `DREAM.evaluate` in vlmeval/dataset/dream.py at e8e78f05): event recall and
precision of a video description, judged by an LLM.

Per row, with the judge (no system text, temperature 0, one ask each, VLMEvalKit's texts `EXTRACTION_PROMPT` and
`RELATIONSHIP_PROMPT`):
1. the reference's events: the row's `events` column when it holds JSON, else extracted from the reference
   description by the judge; the description's events are extracted from the model's reply;
2. recall: the judge classifies each reference event against the model's description; the number of listed
   `entailment` relationships over the number of reference events (1.0 when there are none, as in VLMEvalKit; the
   judge is then not asked);
3. precision: each of the reply's events against the reference description, the same way;
4. the row's F1 = 2 r p / (r + p) (0 when both are 0).
Judge replies are read as VLMEvalKit's `parse_json` reads them (code fences removed, True/False as JSON, the text
from the first `{` to the last `}`, JSON then a Python literal). Figures (VLMEvalKit's rating): `Recall` and
`Precision`, the means over the rows scored, and `F1` (headline), the harmonic mean of those two means; fractions.

Where vlmkit differs: a row without a prediction scores 0 recall and 0 precision here (VLMEvalKit leaves it out of its
means; its figure does); a row whose judge reply cannot be used (not a dict, an entry without `relationship`) is
left out as in VLMEvalKit (`-1`), and said; a failed judge call leaves the row out this run and it is asked again on
the next (VLMEvalKit stores the failure text and reads it as no events).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["EXTRACTION_PROMPT", "RELATIONSHIP_PROMPT", "parse_json", "score_dream1k"]

SCORER = "dream1k"
EXTRACTION_PROMPT = (
    "Bellow is a description of a video clip:\n"
    "Video Description: {caption}\n"
    "\n"
    "Extract at most 10 key events from the above video description paragraph. Requirements\n"
    ":- An event must include an action, motion or movement (NOT STATIC INFORMATION). DON'T repeat same events.\n"
    "- Every event is represented by a brief sentence within 10 words, with a subject,  a predicate and optionally an object, avoid unnecessary appearance descriptions.\n"  # noqa: E501
    "- Every event must be atomic, meaning that it cannot be further split into multiple events.\n"
    "- Scene cuts and camera motions are NOT events.\n"
    "- Substitute pronouns by the nouns they refer to.\n"
    "\n"
    "Please generate the response in the form of a Python dictionary string with keys \"events\".The value of \"events\" is a List(str), of which each item is an event. DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide the Python dictionary string. For example, your response should look like this: {{\"events\": [event1, event2, ...]}}"  # noqa: E501
)
RELATIONSHIP_PROMPT = (
    "Given a video description and a list of events. For each event, classify the relationship between the video description and the event into three classes: entailment, neutral, contradiction.\n"  # noqa: E501
    "- \"entailment\" means that the video description entails the event.\n"
    "- \"contradiction\" means that some detail in the video description contradicts with the event.\n"
    "- \"neutral\" means that the relationship is neither \"entailment\" or \"contradiction\".\n"
    "\n"
    "Video Description:\n"
    "{prediction}\n"
    "\n"
    "Events: {events}\n"
    "Output a JSON formed as:\n"
    "{{\n"
    "  \"events\": [\n"
    "{{\"event\":\"copy an event here\",\"relationship\":\"put class name here\",\"reason\":\"give your reason here\"}},\n"  # noqa: E501
    "    ...\n"
    "  ]\n"
    "}}\n"
    "\n"
    "DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only output the JSON. Output:"
)
SCORED, UNUSABLE, JUDGE_ERROR, INFERENCE_ERROR = "judge", "judge_unusable", "judge_error", "inference_error"


def parse_json(text: str) -> Any:
    """VLMEvalKit's parse_json (module docstring); None when neither JSON nor a Python literal reads it."""
    text = text.strip()
    if text.startswith("```json"):
        text = text.replace("```json", "").replace("```", "").strip()
    elif text.startswith("```python"):
        text = text.replace("```python", "").replace("```", "").strip()
    text = text.replace("True", "true").replace("False", "false")
    if not text.startswith("{") and (start := text.find("{")) != -1:
        text = text[start:]
    if not text.endswith("}") and (end := text.rfind("}")) != -1:
        text = text[:end + 1]
    try:
        return json.loads(text)
    except ValueError:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None


def events_of(reply: str) -> list[Any]:
    """The `events` of an extraction reply ([] when it reads as nothing); ValueError when it reads as something
    other than a dict (VLMEvalKit's `.get` fails there and the row is left out)."""
    parsed = parse_json(reply)
    if not parsed:
        return []
    if not isinstance(parsed, dict):
        raise ValueError("an extraction reply is not a dict")
    return list(parsed.get("events", []))


def entailed(reply: str) -> int:
    """How many listed relationships are `entailment`; ValueError for an entry that is not a dict (VLMEvalKit fails
    there)."""
    parsed = parse_json(reply)
    if not parsed or not isinstance(parsed, dict) or "events" not in parsed:
        return 0
    count = 0
    for entry in parsed["events"]:
        if not isinstance(entry, dict):
            raise ValueError("a relationship entry is not a dict")
        relation = entry.get("relationship", "")
        if not isinstance(relation, str):
            raise ValueError("a relationship is not a text")
        count += relation.lower() == "entailment"
    return count


def f1(recall: float, precision: float) -> float:
    return 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0


def _ask(judge: Judge, prompts: dict[str, str]) -> dict[str, Any]:
    return judge_rounds(judge, prompts, lambda _k, reply: reply) if prompts else {}


def score_dream1k(df: pd.DataFrame, judge: Judge, *, what: str = "DREAM-1K") -> EvalResult:
    """AutoDQ over every row (module docstring). Columns: index, prediction, answer, events (may be empty)."""
    records, keys = keyed_records(df, ("index", "prediction", "answer"), what)
    answers = [required_text(r, "answer", what) for r in records]
    given: dict[str, list[Any] | None] = {}
    for key, row in zip(keys, records):
        cell = row.get("events")
        try:
            given[key] = json.loads(str(cell)) if not is_missing(cell) and str(cell).strip() else None
        except ValueError:
            given[key] = None
    live = [(key, row, answer) for key, row, answer in zip(keys, records, answers)
            if not is_missing(row["prediction"]) and str(row["prediction"]) != ""]
    extract = {f"{key}#gt": EXTRACTION_PROMPT.format(caption=answer) for key, _, answer in live if given[key] is None}
    extract.update({f"{key}#pred": EXTRACTION_PROMPT.format(caption=str(row["prediction"])) for key, row, _ in live})
    extracted = _ask(judge, extract)
    state: dict[str, dict[str, Any]] = {}
    relate: dict[str, str] = {}
    for key, row, answer in live:
        got = {"method": SCORED}
        try:
            gt = given[key] if given[key] is not None else _events(extracted[f"{key}#gt"])
            pred = _events(extracted[f"{key}#pred"])
        except _Failed:
            got["method"] = JUDGE_ERROR
        except ValueError:
            got["method"] = UNUSABLE
        else:
            got.update(gt=gt, pred=pred)
            if gt:
                relate[f"{key}#r"] = RELATIONSHIP_PROMPT.format(prediction=str(row["prediction"]), events=str(gt))
            if pred:
                relate[f"{key}#p"] = RELATIONSHIP_PROMPT.format(prediction=answer, events=str(pred))
        state[key] = got
    related = _ask(judge, relate)
    recalls, precisions, methods = [], [], []
    for key in keys:
        got = state.get(key, {"method": INFERENCE_ERROR})
        r = p = None
        if got["method"] == SCORED:
            try:
                r = _share(related, f"{key}#r", got["gt"])
                p = _share(related, f"{key}#p", got["pred"])
            except _Failed:
                got["method"] = JUDGE_ERROR
            except ValueError:
                got["method"] = UNUSABLE
        if got["method"] != SCORED:
            r = p = None
        recalls.append(r)
        precisions.append(p)
        methods.append(got["method"])
    return _result(records, recalls, precisions, methods, judge)


class _Failed(Exception):
    """A judge call failed."""


def _events(outcome: Any) -> list[Any]:
    if outcome.error is not None:
        raise _Failed
    return events_of(outcome.value or "")


def _share(related: dict[str, Any], key: str, events: Sequence[Any]) -> float:
    if not events:
        return 1.0
    outcome = related[key]
    if outcome.error is not None:
        raise _Failed
    return entailed(outcome.value or "") / len(events)


def _figures(recalls: Sequence[float], precisions: Sequence[float]) -> dict[str, float]:
    if not recalls:
        return {"F1": 0.0, "Recall": 0.0, "Precision": 0.0}
    r, p = sum(recalls) / len(recalls), sum(precisions) / len(precisions)
    return {"F1": f1(r, p), "Recall": r, "Precision": p}


def _result(records: list[dict[str, Any]], recalls: list[float | None], precisions: list[float | None],
            methods: list[str], judge: Judge) -> EvalResult:
    ours_r = [r if r is not None else 0.0 for r, m in zip(recalls, methods) if m in (SCORED, INFERENCE_ERROR)]
    ours_p = [p if p is not None else 0.0 for p, m in zip(precisions, methods) if m in (SCORED, INFERENCE_ERROR)]
    metrics = _figures(ours_r, ours_p)
    scored_r = [r for r, m in zip(recalls, methods) if m == SCORED]
    scored_p = [p for p, m in zip(precisions, methods) if m == SCORED]
    their = {k: round(v, 4) for k, v in _figures(scored_r, scored_p).items()}
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "recall": recalls, "precision": precisions,
        "f1": [f1(r, p) if r is not None and p is not None else None for r, p in zip(recalls, precisions)],
        "method": methods,
    })  # fmt: skip
    counts = {"total": len(records), "scored": methods.count(SCORED), "unusable": methods.count(UNUSABLE),
              "judge_errors": methods.count(JUDGE_ERROR), "inference_errors": methods.count(INFERENCE_ERROR)}
    notes = [f"events extracted and related by {judge.name} with VLMEvalKit's AutoDQ texts (VLMEvalKit's default "
             "judge gpt-4o); F1 is the harmonic mean of the mean recall and the mean precision"]
    for method, text in ((INFERENCE_ERROR, "no prediction: recall 0 and precision 0 here; VLMEvalKit leaves such rows "
                                           "out of its means (its figure)"),
                         (UNUSABLE, "a judge reply VLMEvalKit's code cannot use (-1 there): left out, as there"),
                         (JUDGE_ERROR, "a judge call failed: left out this run, asked again on the next run")):
        rows = [r["index"] for r, m in zip(records, methods) if m == method]
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {text}; index {listed(rows)}")
    figure = VlmevalkitFigure(metrics=their, primary="F1",
                              notes=["VLMEvalKit prints its figures with 4 decimals over the rows it scored"])
    return EvalResult(scorer=SCORER, metrics=metrics, primary="F1", per_sample=per_sample,
                      table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="score", counts=counts,
                      notes=notes, scale=Scale(FRACTION), vlmevalkit=figure)
