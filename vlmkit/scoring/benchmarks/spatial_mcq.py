"""VLMEvalKit's EASI "spatial_bench" multiple-choice scorer (utils/spatial_bench: SITE-Bench, EmbSpatial-Bench,
MMSI-Bench, MindCube, OmniSpatial, SpatialViz-Bench, STARE, ViewSpatial-Bench, ERIQ, ...).

VLMEvalKit reads the option letter out of the reply *and* out of the `answer` cell with one rule
(`can_match_option`, without the row's options: letters A-F) and counts a row right when both read the same
letter. `read_option_letter` is that rule, step by step (the step's name is the row's `method`):

1. answer_block  - the first `<answer ...>` block whose text starts with a letter A-J (any case), e.g.
                   `<answer>B) the red one</answer>`.
2. tag_tail      - in the last 800 characters, a letter A-F (any case, brackets allowed) right before `</answer>`,
                   else right before `</think>`.
3. last_lines    - the last 6 lines after the last `</think>` (else after the last `<think>`, else the whole reply),
                   read from the end; the first line that gives a letter decides: a line that is only a letter
                   (markdown marks and brackets allowed), a line starting `B.`/`B)`/`B:` and a space, or a line naming
                   exactly one upper-case letter A-F as a word. Lines starting `option X:` are skipped.
4. tail_lines    - the same on the last 6 lines of the last 800 characters.
5. phrase        - the first `answer is B`, `final answer: (c)`, `答案 B`, `选B`, ... in the reply (any case).
6. lone_letter   - exactly one distinct upper-case letter A-F stands alone in the reply (option-list lines skipped).

Nothing read: `unparsed` (a miss, counted as `unread`). A row whose `answer` cell reads as no letter is a miss too
(counted as `invalid_target`). This is VLMEvalKit's reading with its quirks (`A` the article counts as a letter in
step 3; the first phrase of step 5 wins, not the last); vlmkit keeps them so that scores compare.

Figures are percents as VLMEvalKit reports them: `Overall` (VLMEvalKit's `overall`), then `{value}_accuracy` per
value of each grouping column (`{column}.{value}_accuracy` when there are several grouping columns, unless
`group_prefix=False`), and, with `caa=True` (SITE-Bench), the class-adjusted accuracy `overall_caa` / `{value}_caa`:
(sum hits - sum 1/n_i) / (N - sum 1/n_i), n_i the number of options of row i (its `candidates` or `options` list,
else 4). `report="stare"` adds STARE's F1 of the yes/no categories and its six-term macro average.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER

METHODS = ("answer_block", "tag_tail", "last_lines", "tail_lines", "phrase", "lone_letter", "unparsed")
INFERENCE_ERROR = "inference_error"
REPORTS = ("acc", "stare")
TAIL_CHARS = 800
TAIL_LINES = 6

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\ufeff]")
_ANSWER_BLOCK = re.compile(
    r"<\s*answer\b[^>]*>\s*([A-Ja-j])(?:\s*[.．:：)\]】、])?.*?<\s*/\s*answer\s*>", re.IGNORECASE | re.DOTALL
)
_OPEN = r"[(\[{（【]?\s*"
_CLOSE = r"\s*[)\]}）】]?"
_BEFORE_ANSWER_END = re.compile(rf"(?<![A-Za-z]){_OPEN}([A-F]){_CLOSE}\s*</\s*answer\s*>", re.IGNORECASE)
_BEFORE_THINK_END = re.compile(rf"(?<![A-Za-z]){_OPEN}([A-F]){_CLOSE}\s*</\s*think\s*>", re.IGNORECASE)
_THINK_END = re.compile(r"</\s*think\s*>", re.IGNORECASE)
_THINK_START = re.compile(r"<\s*think\s*>", re.IGNORECASE)
_OPTION_LINE = re.compile(r"^(?:[*_>\-\s]*)(?:option|选项)\s+[A-J]\s*[:：]", re.IGNORECASE)
_LETTER_LINE = re.compile(r"\s*[*_`>（）\[\]【】()]*\s*([A-Fa-f])\s*[*_`（）\[\]【】()]*\s*")
_LABELLED_LINE = re.compile(r"\s*([A-F])\s*[.．:：)\]】、-]\s+", re.IGNORECASE)
_TIGHT = r".,:;!?)\]】》」』，。；、：）"
_INLINE_LETTER = re.compile(rf"(?<![A-Za-z])[*_`（\[{{(]*\s*([A-F])\s*[*_`）\]}})]*(?=$|[\s{_TIGHT}])")
_PHRASE = re.compile(
    r"(?i)(?:final\s*answer|the\s*answer\s*is|answer(?:\s*is)?|correct\s*answer|"
    r"答案|最终答案|结论|所以|因此|"
    rf"我选(?:择)?|选择|选)\s*[:：>＝=]?\s*{_OPEN}([A-F]){_CLOSE}(?:\b|[.)、。])"
)
_LONE_LETTER = re.compile(rf"(?<![A-Za-z]){_OPEN}([A-F]){_CLOSE}(?![A-Za-z])")


def _from_lines(lines: list[str]) -> str | None:
    """Step 3/4: the letter of the last line that gives one."""
    for line in reversed([ln.strip() for ln in lines if ln.strip()]):
        if _OPTION_LINE.search(line):
            continue
        m = _LETTER_LINE.fullmatch(line) or _LABELLED_LINE.match(line)
        if m:
            return m.group(1).upper()
        found = set(_INLINE_LETTER.findall(line))
        if len(found) == 1:
            return found.pop()
    return None


def read_option_letter(text: Any) -> tuple[str | None, str]:
    """(letter or None, method): VLMEvalKit's `can_match_option(text)` (module docstring)."""
    if not isinstance(text, str):
        return None, "unparsed"
    text = _ZERO_WIDTH.sub("", text.strip())
    m = _ANSWER_BLOCK.search(text)
    if m:
        return m.group(1).upper(), "answer_block"
    tail = text[-TAIL_CHARS:]
    for pattern in (_BEFORE_ANSWER_END, _BEFORE_THINK_END):
        m = pattern.search(tail)
        if m:
            return m.group(1).upper(), "tag_tail"
    ends = list(_THINK_END.finditer(text)) or list(_THINK_START.finditer(text))
    after = text[ends[-1].end():].strip() if ends else text
    letter = _from_lines(after.splitlines()[-TAIL_LINES:])
    if letter:
        return letter, "last_lines"
    letter = _from_lines(tail.splitlines()[-TAIL_LINES:])
    if letter:
        return letter, "tail_lines"
    m = _PHRASE.search(text)
    if m:
        return m.group(1).upper(), "phrase"
    kept = "\n".join(ln for ln in text.splitlines() if not _OPTION_LINE.search(ln))
    found = set(_LONE_LETTER.findall(kept))
    if len(found) == 1:
        return found.pop(), "lone_letter"
    return None, "unparsed"


def option_count(row: dict[str, Any], default: int = 4) -> int:
    """n_i of the class-adjusted accuracy: the length of the row's `candidates` (else `options`) list, else 4."""
    for column in ("candidates", "options"):
        if column in row:
            value = row[column]
            if isinstance(value, str):
                try:
                    value = ast.literal_eval(value)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    value = None
            return len(value) if isinstance(value, list) and value else default
    return default


def class_adjusted(hits: Sequence[bool], counts: Sequence[int]) -> float:
    """SITE's class-adjusted accuracy (a fraction; 0 when undefined)."""
    chance = sum(1.0 / n for n in counts)
    denominator = len(hits) - chance
    return float((sum(map(bool, hits)) - chance) / denominator) if len(hits) and denominator else 0.0


def _group_labels(df: pd.DataFrame, column: str) -> list[Any]:
    """The values of a grouping column in order of first appearance (missing ones left out)."""
    return list(dict.fromkeys(v for v in df[column].tolist() if not is_missing(v)))


def score_spatial_mcq(
    df: pd.DataFrame,
    *,
    groups: Sequence[str] = ("category",),
    caa: bool = False,
    report: str = "acc",
    group_prefix: bool | None = None,
) -> EvalResult:
    """Score spatial_bench MCQ predictions (module docstring). Columns: `index`, `prediction` (None/NaN = inference
    error), `answer`, the grouping columns that exist (missing ones are skipped, as in VLMEvalKit). `group_prefix`:
    name group figures `{column}.{value}_accuracy` (default: when there are several grouping columns, as
    VLMEvalKit's eval_mcq_core; SpatialViz-Bench reports them without the prefix)."""
    if report not in REPORTS:
        raise ValueError(f"spatial MCQ: report {report!r}; choose one of {', '.join(REPORTS)}")
    require_columns(df, ("index", "prediction", "answer"), "spatial MCQ")
    if len(df) == 0:
        raise ValueError("spatial MCQ: the predictions table has no rows")
    df = df.reset_index(drop=True)
    records = df.to_dict("records")
    extracted: list[str | None] = []
    targets: list[str | None] = []
    methods: list[str] = []
    hits: list[bool] = []
    invalid: list[Any] = []
    for row in records:
        target, _ = read_option_letter(str(row["answer"]).strip()) if not is_missing(row["answer"]) else (None, "")
        if target is None:
            invalid.append(row["index"])
        pred = row["prediction"]
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            letter, method = None, INFERENCE_ERROR
        else:
            letter, method = read_option_letter(str(pred))
        extracted.append(letter)
        targets.append(target)
        methods.append(method)
        hits.append(letter is not None and letter == target)

    per_sample = pd.DataFrame(
        {"index": df["index"].tolist(), "extracted": pd.Series(extracted, dtype=object),
         "target": pd.Series(targets, dtype=object), "method": methods, "hit": hits}
    )  # fmt: skip
    tally = Counter(methods)
    counts: dict[str, int] = {"total": len(df), "scored": len(df), "hits": sum(hits)}
    counts.update({m: tally[m] for m in METHODS})
    counts["inference_errors"] = tally[INFERENCE_ERROR]
    counts["by_rule"] = sum(tally[m] for m in METHODS if m != "unparsed")
    counts["by_judge"] = 0
    counts["unread"] = tally["unparsed"]
    counts["judge_errors"] = 0
    counts["invalid_target"] = len(invalid)

    metrics = _metrics(df, records, hits, extracted, groups, caa, report, group_prefix)
    notes: list[str] = []
    figure, theirs = _vlmevalkit_figure(
        df, records, extracted, targets, methods, hits,
        lambda their_hits, their_letters: _metrics(df, records, their_hits, their_letters, groups, caa, report,
                                                   group_prefix, vlmevalkit=True),
    )  # fmt: skip
    per_sample["vlmevalkit"] = pd.Series(theirs, dtype=object)
    if invalid:
        notes.append(
            f"{len(invalid)} row(s) have an answer from which no option letter can be read (scored as misses): "
            f"index {listed(invalid)}"
        )
    if tally["unparsed"]:
        notes.append(
            f"{tally['unparsed']} reply(ies) name no option letter by VLMEvalKit's spatial_bench rule (misses)"
        )
    table = pd.DataFrame([metrics])
    return EvalResult(
        scorer="spatial_mcq", metrics=metrics, primary="Overall", per_sample=per_sample, table=table,
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _metrics(df: pd.DataFrame, records: list[dict[str, Any]], hits: list[bool], extracted: list[str | None],
             groups: Sequence[str], caa: bool, report: str, group_prefix: bool | None, *,
             vlmevalkit: bool = False) -> dict[str, float]:
    """The figures of one reading; `vlmevalkit=True` for VLMEvalKit's (STARE reports absent categories its way)."""
    hit_series = pd.Series(hits, dtype=bool)
    n_options = [option_count(row) for row in records] if caa else []
    metrics: dict[str, float] = {"Overall": 100.0 * float(hit_series.mean())}
    if caa:
        metrics["overall_caa"] = 100.0 * class_adjusted(hits, n_options)
    present = [c for c in groups if c in df.columns]
    for column in present:
        several = len(present) > 1 if group_prefix is None else group_prefix
        prefix = f"{column}." if several else ""
        values = df[column]
        for label in _group_labels(df, column):
            rows = (values == label).to_numpy()
            metrics[f"{prefix}{label}_accuracy"] = 100.0 * float(hit_series[rows].mean())
            if caa:
                sub = [n for n, keep in zip(n_options, rows) if keep]
                metrics[f"{prefix}{label}_caa"] = 100.0 * class_adjusted(hit_series[rows].tolist(), sub)
    if report == "stare":
        from vlmkit.scoring.benchmarks.spatial_stare import stare_metrics

        metrics.update(stare_metrics(df, hits, extracted, vlmevalkit=vlmevalkit))
    return metrics


def _vlmevalkit_figure(df: pd.DataFrame, records: list[dict[str, Any]], extracted: list[str | None],
                       targets: list[str | None], methods: list[str], hits: list[bool],
                       figures: Callable[[list[bool], list[str | None]], dict[str, float]]
                       ) -> tuple[VlmevalkitFigure, list[str | None]]:
    """VLMEvalKit's figure: its rule (read_option_letter, which is vlmkit's) on the replies as its xlsx round trip
    gives them back (`str(nan)` = `nan` for an empty reply, `None`, `N/A`, ...); a failed call a miss on both."""
    preds = df["prediction"].tolist()
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else p for p, f in zip(preds, failed)])
    theirs = [None if f else read_option_letter(str(cell))[0] for f, cell in zip(failed, back)]
    their_hits = [letter is not None and letter == target for letter, target in zip(theirs, targets)]
    nan_rows = [row["index"] for row, cell, f in zip(records, back, failed)
                if not f and is_nan_cell(cell) and str(row["prediction"]) != "nan"]
    differing = [
        ReadingDifference(row["index"], ours, their, float(hit), float(their_hit))
        for row, ours, their, hit, their_hit, f in zip(records, extracted, theirs, hits, their_hits, failed)
        if not f and (ours != their or hit != their_hit)
    ]
    notes = [nan_note(nan_rows, "reads the reply itself")] if nan_rows else []
    figure = VlmevalkitFigure(metrics=figures(their_hits, theirs), primary="Overall", differing=differing,
                              notes=notes)
    return figure, theirs


def parse_option_list(value: Any) -> list[str] | None:
    """A cell holding a list of option texts (JSON or a Python literal), as VLMEvalKit's spatial datasets read
    `options`; None when the cell is not such a list."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if not isinstance(value, str):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            got = parse(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(got, (list, tuple)):
            return [str(v) for v in got]
    return None
