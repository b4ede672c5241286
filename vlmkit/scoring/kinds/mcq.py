"""Multiple-choice scoring: (circular) accuracy over answers read by rule and, when a judge is given, by VLMEvalKit's
LLM judge for the answers no rule can read.

Reading: vlmkit.scoring.common.choice_reading (`extract_choice`, the steps a careful reader takes; `vlmevalkit_choice`,
VLMEvalKit's own rule; one `ChoiceReader` per call reads every row as they do, each distinct prediction analysed
once). The judge: vlmkit.scoring.common.choice_judge (VLMEvalKit's prompts, 3 asks at temperature 0).

Per row: the rules first. With a judge, a row they cannot read (`unparsed`, a non-empty answer whose target is one of
its options) is sent to the judge; its verdict's method is `judge` (the letter read from the reply, or none for `Z`),
`judge_unread` (no reply could be read: a miss, never a random letter) or `judge_error` (the call failed: a miss this
run, asked again on the next). Circular: every row is rule-read first; a group with a wrong rule-read letter, a failed
inference or an invalid target is a miss and none of its rows goes to the judge; the unparsed rows of the other groups
are judged (all at once, where VLMEvalKit asks row by row and stops at the first wrong one: the same figures, more
calls); a group is a hit only if every row is right.

Headline: `Overall` over all rows; when the rows hold several splits, VLMEvalKit reports one split's Overall
(test, then validation, val, dev: vlmkit.scoring.common.breakdown.headline_split; MMMU_DEV_VAL's validation), so the
headline is `Overall (<that split>)`, every split's `Overall (<split>)` is a metric, and `Overall` stays one.

VLMEvalKit's figure (`EvalResult.vlmevalkit`, vlmkit.scoring.kinds.mcq_figure): the same table read by its rule on
the replies as its xlsx round trip gives them back (an empty reply, `None`, `N/A`... are the text `nan` there), with
its judge asked where its rule fails (the verdicts vlmkit already has are reused by prompt); per-sample columns
`vlmevalkit` (its letter, `Z` its "no option") and `vlmevalkit_hit`; `vlmevalkit_nan_replies` counts the replies it
reads as `nan`, each listed in a note.

Interval (`EvalResult.interval`, vlmkit.scoring.common.headline_interval): Wilson over the headline's units, rows or
(circular) groups, each group one 0/1 unit, so the rotations of one question never count as independent evidence.

Counts: one per rule method (how many rows each step read), `unparsed` (rows no rule could read), `by_rule`,
`by_judge`, `unread` (answers neither read: rule-unparsed rows not judged plus `judge_unread`), `judge_errors`,
`inference_errors`, `invalid_target`, and `differs_from_vlmevalkit`: rows where vlmkit's rules and VLMEvalKit's rule
(`can_infer`) read a different letter, VLMEvalKit's `Z` counting as no letter.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.judging import Judge
from vlmkit.scoring.common.breakdown import (
    MMBENCH_ABBREVIATIONS,
    group_means,
    require_columns,
    split_category_table,
    split_headline,
)
from vlmkit.scoring.common.choice_judge import (
    MCQ_TEMPERATURES,
    NO_OPTION,
    Judged,
    ask_judge,
    judge_notes,
    mcq_judge_prompt,
    read_mcq_reply,
    row_keys,
)
from vlmkit.scoring.common.headline_interval import headline_interval
from vlmkit.scoring.common.choice_reading import (
    LETTERS,
    METHODS,
    RULE_METHODS,
    ChoiceReader,
    clean_options,
    extract_choice,
    vlmevalkit_choice,
)
from vlmkit.scoring.kinds.mcq_figure import differences, figure_rows
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["CIRCULAR_BASE", "INFERENCE_ERROR", "METHODS", "clean_options", "extract_choice", "score_mcq",
           "vlmevalkit_choice"]

INFERENCE_ERROR = "inference_error"  # the `method` of a row whose prediction is missing (per_sample only)
CIRCULAR_BASE = 1_000_000
_UNSET: Any = object()
_TARGET_RE = re.compile(r"[(\[（]?\s*([A-Za-z])\s*[)\]）]?\s*[.:：。]?")


def _normalise_target(value: Any) -> str | None:
    text = cell_text(value)
    if text is None:
        return None
    m = _TARGET_RE.fullmatch(text.strip())
    return m.group(1).upper() if m else text.strip()


def _option_texts(values: list[Any]) -> list[str | None]:
    """One option column as `clean_options` keeps it: the cell's text, or None when missing or blank."""
    out: list[str | None] = []
    for value in values:
        if type(value) is str:
            out.append(value if value.strip() else None)
        elif type(value) is float and math.isnan(value):  # NaN, the commonest gap (cell_text's answer: None)
            out.append(None)
        else:
            text = cell_text(value)
            out.append(text if text is not None and text.strip() else None)
    return out


def _integer_indices(indices: list[Any], column: pd.Series | None = None) -> np.ndarray:
    """The `index` values as int64, each read as `int(float(value))`; `column`: the same values as a table column,
    whose int64 values within +-2**53 (where float is exact) are taken as they are."""
    if column is not None and column.dtype == np.int64 and len(column):
        values = column.to_numpy(dtype=np.int64, copy=True)
        if -(2**53) <= values.min() and values.max() <= 2**53:
            return values
    out = np.empty(len(indices), dtype=np.int64)
    for pos, idx in enumerate(indices):
        try:
            as_float = float(idx)
            if not as_float.is_integer():
                raise ValueError
            out[pos] = int(as_float)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"circular MCQ: row {pos}, field `index`: {idx!r} is not an integer "
                f"(circular groups are index % {CIRCULAR_BASE})"
            ) from None
    return out


def _judge_rows(
    df: pd.DataFrame,
    judge: Judge,
    judge_prompt: str,
    circular: bool,
    indices: list[Any],
    methods: list[str],
    hits: np.ndarray,
    targets: list[str | None],
    row_input: Callable[[int], tuple[dict[str, str], str]],
    asked: dict[str, Judged],
) -> dict[int, Judged]:
    """The judge's verdicts, by row position, for the rows the rules could not read (module docstring); `asked`
    gets each verdict by its prompt. `row_input(i)`: row i's options and the answer part of its prediction, worked
    out again for the rule-unparsed rows only (nothing a row is kept for the rows the rules read)."""
    unparsed = {i: row_input(i) for i, m in enumerate(methods) if m == "unparsed" and targets[i] is not None}
    options = {i: got[0] for i, got in unparsed.items()}
    answers = {i: got[1] for i, got in unparsed.items()}
    ask = [i for i in unparsed if answers[i].strip()]
    if circular and ask:
        groups = _integer_indices(indices) % CIRCULAR_BASE
        lost = {
            groups[i]
            for i, m in enumerate(methods)
            if m == INFERENCE_ERROR or targets[i] is None or (m in RULE_METHODS and not hits[i])
        }
        ask = [i for i in ask if groups[i] not in lost]
    if not ask:
        return {}
    require_columns(df, ("question",), "MCQ judge")
    questions = df["question"].tolist()
    keys = row_keys([indices[i] for i in ask])
    position = dict(zip(keys, ask))
    prompts = {
        key: mcq_judge_prompt(cell_text(questions[i]) or "", options[i], answers[i], judge_prompt)
        for key, i in position.items()
    }
    verdicts = ask_judge(judge, prompts, lambda key, reply: read_mcq_reply(reply, options[position[key]]),
                         MCQ_TEMPERATURES, no_answer=NO_OPTION)
    asked.update({prompts[key]: verdict for key, verdict in verdicts.items()})
    return {position[key]: verdict for key, verdict in verdicts.items()}


def score_mcq(
    df: pd.DataFrame, *, circular: bool, fuzzy: bool = False, judge: Judge | None = None, judge_prompt: str = "default"
) -> EvalResult:
    """Score MCQ predictions. Figures are fractions (0..1) as VLMEvalKit reports MCQ accuracy.

    Columns: `index`, `prediction` (None/NaN = inference error), `answer` (a letter), option columns A..Z,
    optional `split`, `category`, `l2-category`; `question` when a judge has rows to read. Circular: group =
    index % 1e6; a group is a hit only if every row of it is right; figures are over groups, with the main row's
    (index == group) split and categories. `judge`: asked for the answers the rules cannot read (module docstring);
    `judge_prompt`: "default" or "blink" (vlmkit.scoring.common.choice_judge).
    """
    what = "circular MCQ" if circular else "MCQ"
    require_columns(df, ("index", "prediction", "answer"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    letters = sorted(c for c in df.columns if isinstance(c, str) and c in LETTERS)
    option_columns = [_option_texts(df[letter].tolist()) for letter in letters]
    indices = df["index"].tolist()
    preds = df["prediction"].tolist()
    targets = df["answer"].tolist()

    n = len(df)
    extracted: list[str | None] = [None] * n
    methods: list[str] = [""] * n
    row_hits: list[bool] = [False] * n
    row_targets: list[str | None] = [None] * n
    invalid: list[Any] = []
    differs = 0
    target_of: dict[str, str | None] = {}  # _normalise_target of each distinct text answer
    read_row = ChoiceReader(fuzzy).read_row  # one reader: each distinct prediction is analysed once
    rows = zip(*option_columns) if option_columns else iter(lambda: (), None)
    for i, texts in zip(range(n), rows):
        options = {letter: text for letter, text in zip(letters, texts) if text is not None}
        raw = targets[i]
        if type(raw) is str:
            target = target_of.get(raw, _UNSET)
            if target is _UNSET:
                target = target_of[raw] = _normalise_target(raw)
        else:
            target = _normalise_target(raw)
        if target is None or target not in options:
            invalid.append(indices[i])
            target = None
        row_targets[i] = target
        pred = preds[i]
        if type(pred) is not str:
            if is_missing(pred):
                methods[i] = INFERENCE_ERROR
                continue
            pred = str(pred)
        if VLMEVALKIT_FAIL_MARKER in pred:
            methods[i] = INFERENCE_ERROR
            continue
        letter, method, _, vlm = read_row(pred, options)
        extracted[i], methods[i] = letter, method
        row_hits[i] = target is not None and letter == target
        if letter != (None if vlm == NO_OPTION else vlm):
            differs += 1
    hits = np.array(row_hits, dtype=bool)

    tally = Counter(methods)
    judged: dict[int, Judged] = {}
    asked: dict[str, Judged] = {}  # the judge's verdicts by prompt: VLMEvalKit's figure asks no prompt twice
    if judge is not None:
        def row_input(i: int) -> tuple[dict[str, str], str]:  # as the loop above worked them out for row i
            options = {letter: column[i] for letter, column in zip(letters, option_columns) if column[i] is not None}
            pred = preds[i]
            return options, read_row(pred if type(pred) is str else str(pred), options)[2]

        judged = _judge_rows(df, judge, judge_prompt, circular, indices, methods, hits, row_targets, row_input, asked)
        for i, verdict in judged.items():
            methods[i], extracted[i] = verdict.method, verdict.value
            hits[i] = verdict.value is not None and verdict.value == row_targets[i]

    failed = [m == INFERENCE_ERROR for m in methods]
    theirs = figure_rows(
        indices, preds, targets, {k: df[k].tolist() for k in letters},
        questions=df["question"].tolist() if "question" in df.columns else None, judge=judge,
        judge_prompt=judge_prompt, asked=asked,
        lost_groups=_integer_indices(indices) % CIRCULAR_BASE if circular and judge is not None else None,
    )  # fmt: skip

    per_sample = pd.DataFrame(
        {"index": indices, "extracted": pd.Series(extracted, dtype=object), "method": methods, "hit": hits}
    )
    if judge is not None:
        replies = [judged[i].reply if i in judged else None for i in range(n)]
        per_sample["judge"] = pd.Series(replies, dtype=object)
    per_sample["vlmevalkit"] = pd.Series(theirs.readings, dtype=object)
    per_sample["vlmevalkit_hit"] = theirs.hits
    counts: dict[str, int] = {"total": n}
    for method in (*METHODS, INFERENCE_ERROR):
        key = "inference_errors" if method == INFERENCE_ERROR else method
        counts[key] = tally[method]
    final = Counter(methods)
    counts["by_rule"] = sum(final[m] for m in RULE_METHODS)
    counts["by_judge"] = final["judge"]
    counts["unread"] = final["unparsed"] + final["judge_unread"]
    counts["judge_errors"] = final["judge_error"]
    counts["judge_asked"] = len(judged)
    counts["invalid_target"] = len(invalid)
    counts["differs_from_vlmevalkit"] = differs
    notes: list[str] = []
    if invalid:
        notes.append(
            f"{len(invalid)} row(s) have an answer that is not one of their options (scored as misses): "
            f"index {listed(invalid)}"
        )
    if counts["fuzzy"]:
        notes.append(f"{counts['fuzzy']} prediction(s) matched only by fuzzy (Levenshtein) matching, not in VLMEvalKit")
    if differs:
        notes.append(
            f"vlmkit's rules read a different letter than VLMEvalKit's rule (can_infer) for {differs} row(s) "
            "(vlmkit reads as a careful person would; see vlmkit.scoring.common.choice_reading)"
        )
    notes += judge_notes(methods, judge is not None, counts["unparsed"])
    counts["vlmevalkit_nan_replies"] = len(theirs.nan_rows)
    notes += theirs.notes(indices)[:1] if theirs.nan_rows else []  # the first of them is the `nan` rows' note

    keep = [c for c in ("split", "l2-category", "category") if c in df.columns]
    units = pd.DataFrame({c: df[c].to_numpy() for c in keep})
    units["hit"] = hits
    units["vlmevalkit_hit"] = theirs.hits
    if circular:
        ints = _integer_indices(indices, df["index"])
        dup = pd.Series(ints).duplicated()
        if dup.any():
            repeated = sorted(set(ints[dup.to_numpy()].tolist()))
            raise ValueError(f"circular MCQ: duplicate `index` value(s): {listed(repeated)}")
        groups = ints % CIRCULAR_BASE
        per_sample["group"] = groups
        _, group_of = np.unique(groups, return_inverse=True)
        group_hit = np.bincount(group_of, weights=~hits)[group_of] == 0  # no row of its group missed
        per_sample["group_hit"] = group_hit
        their_group_hit = np.bincount(group_of, weights=~theirs.hits)[group_of] == 0
        per_sample["vlmevalkit_group_hit"] = their_group_hit
        is_main = ints == groups
        units = units.loc[is_main].reset_index(drop=True)
        units["hit"] = group_hit[is_main]
        units["vlmevalkit_hit"] = their_group_hit[is_main]
        counts["groups"] = len(units)
        orphan = sorted(set(groups.tolist()) - set(groups[is_main].tolist()))
        if orphan:
            n_orphan = int(np.isin(groups, orphan).sum())
            counts["orphan_rows"] = n_orphan
            notes.append(
                f"{n_orphan} row(s) belong to circular groups without a main row (index == group) and are not "
                f"reported: group {listed(orphan)}"
            )
    counts["scored"] = len(units)
    counts["hits"] = int(units["hit"].sum())
    if len(units) == 0:
        raise ValueError(f"{what}: no main rows (index < {CIRCULAR_BASE}) to report")

    table = split_category_table(units, "hit", groups=("l2-category", "category"), rename=MMBENCH_ABBREVIATIONS)
    metrics = group_means(units, "hit", groups=("l2-category", "category"), rename=MMBENCH_ABBREVIATIONS)
    primary = split_headline(units, "hit", metrics)
    if primary != "Overall":
        notes.append(f"the headline is {primary}, the split VLMEvalKit reports for a table of several splits; "
                     "`Overall` is over all rows")
    their_metrics = group_means(units, "vlmevalkit_hit", groups=("l2-category", "category"),
                                rename=MMBENCH_ABBREVIATIONS)
    split_headline(units, "vlmevalkit_hit", their_metrics)
    figure = VlmevalkitFigure(
        metrics=their_metrics, primary=primary,
        differing=differences(indices, extracted, hits, theirs, failed), notes=theirs.notes(indices),
    )  # fmt: skip
    return EvalResult(
        scorer="mcq_circular" if circular else "mcq",
        metrics=metrics,
        primary=primary,
        per_sample=per_sample,
        table=table,
        table_suffix="acc",
        counts=counts,
        notes=notes,
        scale=Scale(FRACTION),
        vlmevalkit=figure,
        interval=headline_interval(units, "hit", primary, unit="circular group" if circular else "row"),
    )
