"""MRareBench T1 Diagnosis (MRareBench_Diagnosis, _FD, _TO): a ranked list of the 10 most likely diagnoses, scored by
rule as VLMEvalKit scores it (vlmeval/dataset/mrarebench.py MRareBenchDiagnosis at e8e78f05), with VLMEvalKit's
optional five-dimension judge when a judge is given.

Reading the list (VLMEvalKit's parse_ranked_list): `<think>...</think>` blocks removed; the lines `1. name` / `2) name`
in order; a reply that had a think block and gave fewer than two such lines is also split inline on `1. `, `2) `...
(kept when that finds more); with no numbered line, the reply split on new lines and `;` (each item stripped of
` -*` and tabs); empty and repeated items (case-blind) dropped; the first 10 kept.

A candidate is a hit (VLMEvalKit's is_hit) when, after SQuAD normalisation (lower case, no punctuation, no articles,
single spaces), it equals the answer or one of `answer_aliases`, either contains the other, or their token-set F1
is at least 0.6. The first hit's rank gives `recall@1/3/5/10` (share of rows whose first hit is within k), `MRR`
(mean 1/rank, 0 without a hit), `MR` (mean rank over the rows with a hit; 0 when none; lower is better),
`hit_rate` (any hit in the list) and `parse_fail_rate` (no item read); `n_total`, `n_hit`. All fractions 0..1 as
VLMEvalKit reports them. VLMEvalKit names no headline; vlmkit's is `recall@1` (top-1 accuracy).

With a judge (VLMEvalKit's complementary judge; temperature 0, max_tokens 2048, one ask per row): the prompt
(`judge_prompt`, VLMEvalKit's text character for character) shows the gold diagnosis, the aliases and the parsed
list; the reply's first five non-blank lines are read as PRESENCE, TOP1 (first yes/no word: yes = 1), TYPE_MATCH (the
first digit 0-3 after any leading `3.` numbering), SPECIFICITY, COHERENCE. `judge_avg_score` = the mean over rows
of the mean of the five with TYPE_MATCH / 3; `judge_dim_<name>` = each dimension's mean (TYPE_MATCH on 0-3).

Per row (EvalResult.per_sample): `index`, `ranked_list` (JSON), `first_hit_rank` (-1 without a hit), `hit`,
`score` (1 for a hit at rank 1), `method` (`rule`; `inference_error`: no prediction), and with a judge `judge_score`,
the five dimensions, `judge` (the reply) and `judge_method` (`judge`, `judge_error`, `inference_error`).

Where vlmkit differs from VLMEvalKit (deliberately): a row without a prediction has no list, no hit and is not a
parse failure (VLMEvalKit reads the text `nan` as a one-item list) and is not sent to the judge (0 on every
dimension); a failed judge call is left out of the judge figures this run and asked again on the next (VLMEvalKit
reads its failure text as 0 everywhere); VLMEvalKit's optional rare-candidate judge (a second judge model) is not
run.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.mmrarebench import json_list
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, judged_columns
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, POINTS, Scale

SCORER = "mrarebench_diagnosis"
TOPK = 10
RECALL_KS = (1, 3, 5, 10)
MATCH_F1 = 0.6
JUDGE_MAX_TOKENS = 2048
DIMENSIONS = ("presence", "top1", "typematch", "specificity", "coherence")
RULE = "rule"

_THINK = re.compile(r"(?is)<think>.*?</think>")
_NUMBERED = re.compile(r"^\s*(\d+)[\.\)]\s*(.+?)\s*$")
_INLINE = re.compile(r"(?:^|\s)\d{1,2}[\.\)]\s+")
_SPLIT = re.compile(r"[\n;]+")
_YES_NO = re.compile(r"\b(yes|no)\b")
_LEADING_NUMBER = re.compile(r"^\s*\d+\s*[\.\)]\s*")
_ORDINAL = re.compile(r"[0-3]")
_PUNCTUATION = frozenset(string.punctuation)


def normalise(text: str) -> str:
    """SQuAD normalisation: lower case, punctuation removed, articles removed, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def token_set_f1(a: str, b: str) -> float:
    """VLMEvalKit's token_set_f1 of two texts (normalised, as sets of tokens)."""
    ta, tb = set(normalise(a).split()), set(normalise(b).split())
    common = len(ta & tb)
    if not ta or not tb or common == 0:
        return 0.0
    precision, recall = common / len(ta), common / len(tb)
    return 2 * precision * recall / (precision + recall)


def is_hit(candidate: str, gold: Sequence[str]) -> bool:
    """VLMEvalKit's is_hit (module docstring)."""
    mine = normalise(candidate)
    if not mine:
        return False
    for answer in gold:
        theirs = normalise(answer)
        if not theirs:
            continue
        if mine == theirs or theirs in mine or mine in theirs or token_set_f1(candidate, answer) >= MATCH_F1:
            return True
    return False


def ranked_list(prediction: str, topk: int = TOPK) -> list[str]:
    """VLMEvalKit's parse_ranked_list (module docstring)."""
    had_think = "<think>" in prediction.lower()
    text = _THINK.sub("", prediction).strip()
    items = [m.group(2).strip() for m in map(_NUMBERED.match, text.splitlines()) if m]
    if had_think and len(items) < 2:
        inline = [s.strip(" -*\t\n") for s in _INLINE.split(text) if s.strip()]
        if len(inline) > len(items):
            items = inline
    if not items:
        items = [s.strip(" -*\t") for s in _SPLIT.split(text) if s.strip()]
    seen: set[str] = set()
    cleaned = []
    for item in items:
        if item and item.lower() not in seen:
            seen.add(item.lower())
            cleaned.append(item)
    return cleaned[:topk]


def gold_answers(row: dict[str, Any]) -> list[str]:
    """The answer and its aliases, stripped, blank ones dropped."""
    gold = [(cell_text(row.get("answer")) or "").strip()]
    gold += [str(a).strip() for a in json_list(row.get("answer_aliases")) if str(a).strip()]
    return [g for g in gold if g]


def judge_prompt(ranked: Sequence[str], gold: Sequence[str]) -> str:
    """VLMEvalKit's MRareBenchDiagnosis._build_judge_prompt."""
    aliases = "; ".join(gold[1:]) if len(gold) > 1 else "(none)"
    numbered = "\n".join(f"{i}. {d}" for i, d in enumerate(ranked, start=1)) or "(empty)"
    return (
        "You are an extremely strict attending-physician evaluator. "
        "For YES/NO items, default to NO and answer YES only when a criterion "
        "is completely and explicitly satisfied.\n\n"
        f"Correct diagnosis (gold): {gold[0] if gold else ''}\n"
        f"Accepted synonyms/abbreviations: {aliases}\n\n"
        f"The model produced this ranked differential (1 = most likely):\n{numbered}\n\n"
        "Score each of the following, one answer per line, in order:\n"
        "1. PRESENCE: Does the list contain the correct diagnosis or an "
        "accepted synonym anywhere? (YES/NO)\n"
        "2. TOP1: Is the #1 (most likely) item the correct diagnosis or an "
        "accepted synonym? (YES/NO)\n"
        "3. TYPE_MATCH: Judge the disease-type proximity between the BEST item "
        "in the list and the gold diagnosis, on a 0-3 scale:\n"
        "   3 = the gold itself, an accepted synonym, or an explicit subtype of it;\n"
        "   2 = a different subtype of the same disease, or its direct parent "
        "entity (highly related disease type);\n"
        "   1 = the same disease family or same underlying mechanism "
        "(related but not specific);\n"
        "   0 = unrelated.\n"
        "4. SPECIFICITY: Are the listed items specific disease entities rather "
        'than vague terms like "infection", "tumor", or "autoimmune disease"? (YES/NO)\n'
        "5. COHERENCE: Is the differential clinically plausible for this "
        "presentation and ordered reasonably (more likely diseases ranked "
        "higher)? (YES/NO)\n\n"
        "Reply with ONLY five lines, one answer per line, in this exact order: "
        "YES/NO, YES/NO, 0-3 integer, YES/NO, YES/NO."
    )


def judge_dimensions(reply: str) -> list[int]:
    """VLMEvalKit's _parse_judge_dims: [presence, top1, typematch (0-3), specificity, coherence]."""
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()][:5]
    lines += [""] * (5 - len(lines))

    def binary(text: str) -> int:
        found = _YES_NO.search(text.lower())
        return 1 if found and found.group(1) == "yes" else 0

    def ordinal(text: str) -> int:
        found = _ORDINAL.search(_LEADING_NUMBER.sub("", text, count=1))
        return int(found.group(0)) if found else 0

    return [binary(lines[0]), binary(lines[1]), ordinal(lines[2]), binary(lines[3]), binary(lines[4])]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def score_mrarebench_diagnosis(df: pd.DataFrame, judge: Judge | None = None, *,
                               what: str = "MRareBench_Diagnosis") -> EvalResult:
    """Score the ranked lists (module docstring). Columns: `index`, `answer`, `prediction` (None/NaN = inference
    error), optional `answer_aliases`. With a judge, VLMEvalKit's five-dimension judge too."""
    records, keys = keyed_records(df, ("index", "answer", "prediction"), what)
    golds = [gold_answers(row) for row in records]
    lists = [[] if failed_call(row["prediction"]) else ranked_list(str(row["prediction"])) for row in records]
    ranks: list[int | None] = []
    for ranked, gold in zip(lists, golds):
        ranks.append(next((r for r, cand in enumerate(ranked, start=1) if is_hit(cand, gold)), None))
    missing = [failed_call(row["prediction"]) for row in records]
    n = len(records)
    hit_ranks = [r for r in ranks if r is not None]
    metrics: dict[str, float] = {f"recall@{k}": _mean([1.0 if r is not None and r <= k else 0.0 for r in ranks])
                                 for k in RECALL_KS}
    metrics.update({
        "MRR": _mean([1.0 / r if r is not None else 0.0 for r in ranks]),
        "MR": _mean([float(r) for r in hit_ranks]),
        "hit_rate": _mean([1.0 if r is not None else 0.0 for r in ranks]),
        "parse_fail_rate": _mean([1.0 if not ranked and not gone else 0.0 for ranked, gone in zip(lists, missing)]),
        "n_total": float(n), "n_hit": float(len(hit_ranks)),
    })
    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records],
        "ranked_list": [json.dumps(ranked, ensure_ascii=False) for ranked in lists],
        "first_hit_rank": [r if r is not None else -1 for r in ranks],
        "hit": [int(r is not None) for r in ranks],
        "score": [1.0 if r == 1 else 0.0 for r in ranks],
        "method": [INFERENCE_ERROR if gone else RULE for gone in missing],
    })
    notes = ["ranked top-10 lists scored by VLMEvalKit's hit rule (normalised match, containment or token-set F1 "
             ">= 0.6); headline recall@1 (VLMEvalKit names none)"]
    counts = {"total": n, "scored": n, "inference_errors": sum(missing)}
    if judge is not None:
        _judged(judge, records, keys, lists, golds, missing, metrics, per_sample, notes, counts)
    point_scales = {"MR": Scale(POINTS, higher_is_better=False), "n_total": Scale(POINTS), "n_hit": Scale(POINTS),
                    "parse_fail_rate": Scale(FRACTION, higher_is_better=False),
                    "judge_dim_typematch": Scale(POINTS, out_of=3.0)}
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary="recall@1",
        per_sample=per_sample,
        table=pd.DataFrame([metrics]),
        table_suffix="score",
        counts=counts,
        notes=notes,
        scale=Scale(FRACTION),
        metric_scales={name: scale for name, scale in point_scales.items() if name in metrics},
    )


def _judged(judge: Judge, records: Sequence[dict], keys: Sequence[str], lists: Sequence[list[str]],
            golds: Sequence[list[str]], missing: Sequence[bool], metrics: dict[str, float],
            per_sample: pd.DataFrame, notes: list[str], counts: dict[str, int]) -> None:
    """VLMEvalKit's optional five-dimension judge, added to metrics and per_sample in place."""
    prompts = {key: judge_prompt(ranked, gold)
               for key, ranked, gold, gone in zip(keys, lists, golds, missing) if not gone}
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: judge_dimensions(answer_part(reply)),
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    dims, methods, replies = judged_columns(keys, outcomes, unasked=(0,) * len(DIMENSIONS))
    scores = [None if d is None else (d[0] + d[1] + d[2] / 3.0 + d[3] + d[4]) / 5.0 for d in dims]
    known = [d for d in dims if d is not None]
    metrics["judge_avg_score"] = _mean([s for s in scores if s is not None])
    for j, name in enumerate(DIMENSIONS):
        metrics[f"judge_dim_{name}"] = _mean([float(d[j]) for d in known])
        per_sample[f"judge_{name}"] = pd.Series([None if d is None else d[j] for d in dims], dtype=object)
    per_sample["judge_score"] = pd.Series(scores, dtype=object)
    per_sample["judge_method"] = methods
    per_sample["judge"] = pd.Series(replies, dtype=object)
    counts["by_judge"] = methods.count(JUDGE)
    counts["judge_errors"] = methods.count(JUDGE_ERROR)
    notes.append(f"VLMEvalKit's five-dimension judge asked ({judge.name}); judge_avg_score = mean of the five "
                 "(TYPE_MATCH / 3)")
    failed = [row["index"] for row, method in zip(records, methods) if method == JUDGE_ERROR]
    if failed:
        notes.append(f"{len(failed)} row(s) judge_error: the judge call failed: left out of the judge figures this "
                     f"run and asked again on the next run (VLMEvalKit reads the failure as 0); index {listed(failed)}")
