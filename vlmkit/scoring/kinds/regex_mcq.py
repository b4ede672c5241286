"""Multiple choice scored by one regular-expression rule per benchmark, as VLMEvalKit scores these (no judge):
MME-RealWorld, VisualPuzzles, PuzzleVQA, VisuLogic, MedQ-DEG-Bench and MedQ-Bench MCQ.

Reading rules (`RULES`; a row's `method` is the rule's step that read it, `unparsed` when none did):
- `characters` (MME-RealWorld, utils/multiple_choice.extract_characters_regex at
  vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT): inside the first `<answer>...</answer>` when there is one;
  VLMEvalKit's answer prefixes removed, in its order (`The best answer is`, `The correct answer is`, `The answer is`,
  `The answer`, `The best option is`, `The correct option is`, `Best answer:`, `Best option:`; until June 2026 two
  missing commas glued the last four together, so `Best answer: C` read as the B of `Best`: no longer); a reply of
  more than 10 words without a capital A-E reads nothing; else the first capital A-E anywhere (`first_capital`);
  else a reply that is part of `(a)`..`(e)` (`choice_text`). Where vlmkit differs: VLMEvalKit reads an empty reply
  as `A` (the empty text is part of `(a)`), vlmkit reads nothing; VLMEvalKit upper-cases the `<answer>` text before
  removing the prefixes (`<answer>The answer is b</answer>` reads as the E of `THE`), vlmkit does not.
- `answer_line` (VisualPuzzles, utils/visualpuzzles.extract_answer): full-width brackets made ASCII; the last
  non-empty line ends with `\\boxed{X}`, or is `Answer: X` / `Final answer: (X)` (bold and brackets allowed), or is
  only `X`/`(X).`, any case (`last_line`); else the last two lines end with `\\boxed{X}` (`boxed_tail`); X is A-D.
- `boxed_or_phrase` (VisuLogic, utils/visulogic.extract_answer): the last balanced `\\boxed{...}` without LaTeX
  text commands (the whole reply when there is none, or it holds `letter`, `or` or more than 2 characters), when it
  is exactly A-D (`boxed`); else the reply ends with ` X.` / ` (X).` or starts with `X\\n`,
  `(X)\\n`, `(X) X\\n`, or the text after the last `answer:` / `the answer is` / ... (first such phrase of
  VLMEvalKit's list present), up to the line end and the first `.`, is a letter A-D (`phrase`).
- `first_letter` (MedQ-DEG-Bench, MedQ-Bench, their `_extract_option_letter`) over the reply in upper case, letters
  from the `letters` option (A-E, A-D): the whole reply is a letter (`exact`); it starts `X.`/`X)`/`X ` (`leading`);
  `ANSWER IS X` / `OPTION X` (`phrase`); it starts `X -`/`X:` (`leading`); else the first letter standing alone
  anywhere (`first_letter`, so `A cat` reads A: VLMEvalKit's rule). VLMEvalKit's own `phrase` step never fires (a
  lower-case pattern searched in the upper-cased reply), so its figure reads `I doubt A; the answer is C` as A where
  vlmkit reads C (vlmevalkit_first_letter).

VLMEvalKit's figure (`EvalResult.vlmevalkit`): its own reading of each reply as its xlsx round trip gives it back
(an empty reply, `None`, `N/A`... are NaN there; MME-RealWorld then stops with a TypeError, counted a miss here), its
hits and the same report; every row whose reading or score differs is listed.

Targets (`answer_match`): `exact` (VisuLogic), `casefold` (VisualPuzzles, PuzzleVQA), `upper` (MedQ-DEG:
stripped, upper case), `letter_index` (MedQ-Bench: `0`-`3` mean A-D).

Reports: `groups` (Overall, then one figure per value of each grouping column, named by its template, values
sorted), or `mme_realworld` (Overall, each task, task/subtask and task/subtask/l2-category, as VLMEvalKit's
get_dimension_rating; `category` is `Task/Subtask`, an l2-category naming `attribute` is folded into
`<first part>/attribute`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

INFERENCE_ERROR = "inference_error"
ANSWER_MATCHES = ("exact", "casefold", "upper", "letter_index")
REPORTS = ("groups", "mme_realworld")
SCALES = {"fraction": FRACTION, "percent": PERCENT}
Reading = tuple[str | None, str]

# -- characters (MME-RealWorld) ----------------------------------------------------------------------------------
_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Best answer:", "Best option:",
)  # fmt: skip
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def read_characters(text: str) -> Reading:
    tagged = _ANSWER_TAG.search(text)
    s = (tagged.group(1) if tagged else text).strip()
    for prefix in _PREFIXES:
        s = s.replace(prefix, "")
    if not s.strip():
        return None, "unparsed"
    return _characters(s)


def _characters(s: str) -> Reading:
    capital = re.search("[ABCDE]", s)
    if capital:
        return capital.group(0), "first_capital"
    if len(s.split()) > 10:
        return None, "unparsed"
    for letter in "ABCDE":
        if s.lower() in f"({letter.lower()})":
            return letter, "choice_text"
    return None, "unparsed"


def vlmevalkit_characters(text: str) -> str | None:
    """MME-RealWorld's reading in VLMEvalKit (`MMERealWorld.evaluate` at VLMEVALKIT_COMMIT) of a reply as its xlsx
    round trip gives it back: the first `<answer>` text stripped and upper-cased, then extract_characters_regex
    (an empty text is part of `(a)`: A). None where it reads nothing."""
    tagged = _ANSWER_TAG.search(text)
    s = (tagged.group(1).strip().upper() if tagged else text).strip()
    for prefix in _PREFIXES:
        s = s.replace(prefix, "")
    if not s:
        return "A"
    return _characters(s)[0]


# -- answer_line (VisualPuzzles) ---------------------------------------------------------------------------------
_BOXED_END = re.compile(r"\\boxed\{\s*([A-D])\s*\}\s*$", re.IGNORECASE)
_LAST_LINE = (
    _BOXED_END,
    re.compile(r"(?:final\s+answer|answer)\s*[:：]\s*(?:\*\*)?[(\[]?\s*([A-D])\s*[)\]]?(?:\*\*)?\s*$", re.IGNORECASE),
    re.compile(r"^\s*[(\[]?\s*([A-D])\s*[)\].,:;!?]?\s*$", re.IGNORECASE),
)


def read_answer_line(text: str) -> Reading:
    text = text.strip().replace("（", "(").replace("）", ")").replace("【", "[").replace("】", "]")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else text.strip()
    for pattern in _LAST_LINE:
        found = pattern.findall(last)
        if found:
            return found[-1].upper(), "last_line"
    tail = "\n".join(lines[-2:]) if lines else text
    found = _BOXED_END.findall(tail[-256:])
    if found:
        return found[-1].upper(), "boxed_tail"
    return None, "unparsed"


# -- boxed_or_phrase (VisuLogic) ---------------------------------------------------------------------------------
_BOXED_PIECES = re.compile(r"\\boxed\{|[^\\]\}")
_LATEX = (r"\text{", r"\rm{", r"\mathbf{", "$")
_PHRASES = (
    "answer:", "the final answer is:", "the answer is option:", "the answer is:", "the correct answer is option:",
    "the correct answer is:", "the answer should be:", "the final answer is", "the answer is option", "the answer is",
    "the correct answer is option", "the correct answer is", "the answer should be",
)  # fmt: skip
_FOUR = ("A", "B", "C", "D")


def _last_boxed(text: str) -> str | None:
    """The text inside the last outermost \\boxed{...} (LaTeX text commands and braces dropped), or None."""
    stack: list[int] = []
    last = None
    for m in _BOXED_PIECES.finditer(text):
        if m.group().endswith("\\boxed{"):
            stack.append(m.end())
        elif stack:
            start = stack.pop()
            if not stack:
                last = text[start : m.start() + 1]
    if last is None:
        return None
    for command in _LATEX:
        last = last.replace(command, "")
    return last.replace("}", "")


def read_boxed_or_phrase(text: str) -> Reading:
    boxed = _last_boxed(text) if len(text) >= 3 else text
    if boxed is None or "letter" in boxed.lower() or "or" in boxed or len(boxed) > 2:
        boxed = text  # VLMEvalKit then looks at the whole reply
    if boxed.strip() in _FOUR:
        return boxed.strip(), "boxed"
    answer = text.replace("<|endoftext|>", "")
    for c in _FOUR:
        if answer.endswith((f" {c}.", f" ({c}).")) or answer.startswith((f"{c}\n", f"({c})\n", f"({c}) {c}\n")):
            return c, "phrase"
    low = answer.lower()
    for flag in _PHRASES:
        if flag in low:
            low = low.split(flag)[-1].strip().split("\n")[0].split(".")[0]
            if low.upper() in _FOUR:
                return low.upper(), "phrase"
    return None, "unparsed"


# -- first_letter (MedQ) -----------------------------------------------------------------------------------------
def read_first_letter(text: str, letters: str = "ABCDE") -> Reading:
    up = text.strip().upper()
    cls = f"[{re.escape(letters)}]"
    if up and up in letters and len(up) == 1:
        return up, "exact"
    m = re.match(rf"^({cls})[.)\s]", up)
    if m:
        return m.group(1), "leading"
    m = re.search(rf"(?:ANSWER\s+IS\s+|OPTION\s+)({cls})(?:\s|$|[^A-Z])", up)
    if m:
        return m.group(1), "phrase"
    m = re.search(rf"^({cls})\s*[-:]", up)
    if m:
        return m.group(1), "leading"
    found = re.findall(rf"(?:^|[^A-Z])({cls})(?:[^A-Z]|$)", up)
    if found:
        return found[0], "first_letter"
    return None, "unparsed"


def vlmevalkit_first_letter(text: str, letters: str = "ABCDE") -> str | None:
    """MedQ's `_extract_option_letter` at VLMEVALKIT_COMMIT as it runs: its `answer is X` / `option X` step searches a
    lower-case pattern in the upper-cased reply and never matches, so `I doubt A; the answer is C` reads A there
    (vlmkit's read_first_letter reads C). None where it reads no letter."""
    up = text.strip().upper()
    cls = f"[{re.escape(letters)}]"
    if up and up in letters and len(up) == 1:
        return up
    for pattern in (rf"^({cls})[.)\s]", rf"^({cls})\s*[-:]"):
        m = re.search(pattern, up)
        if m:
            return m.group(1)
    found = re.findall(rf"(?:^|[^A-Z])({cls})(?:[^A-Z]|$)", up)
    return found[0] if found else None


RULES = {
    "characters": read_characters,
    "answer_line": read_answer_line,
    "boxed_or_phrase": read_boxed_or_phrase,
    "first_letter": read_first_letter,
}


def target_of(value: Any, how: str) -> str | None:
    """The answer cell as the benchmark compares it (module docstring); None when missing."""
    if is_missing(value):
        return None
    text = str(value)
    if how == "upper":
        return text.strip().upper()
    if how == "letter_index":
        text = text.strip()
        if text.upper() in _FOUR:
            return text.upper()
        return chr(ord("A") + int(text)) if text.isdigit() and 0 <= int(text) <= 3 else text
    return text


def _matches(letter: str | None, target: str | None, how: str) -> bool:
    if letter is None or target is None:
        return False
    if how == "exact":
        return letter == target
    return letter.upper() == target.upper()


def _mme_realworld(df: pd.DataFrame, hits: list[bool]) -> dict[str, float]:
    """get_dimension_rating's figures, flattened: `Overall`, `{task}`, `{task}/{subtask}`, `{task}/{subtask}/{l2}`."""
    require_columns(df, ("category", "l2-category"), "MME-RealWorld")
    cells: dict[tuple[str, ...], list[bool]] = {}
    for category, l2, hit in zip(df["category"].tolist(), df["l2-category"].tolist(), hits):
        parts = str(category).split("/")  # as get_dimension_rating: the first two parts (a third is dropped)
        task, subtask = parts[0], parts[1] if len(parts) > 1 else ""
        sub = str(l2).lower()
        if "attribute" in sub:
            sub = sub.split("/")[0] + "/attribute"
        for key in ((task,), (task, subtask), (task, subtask, sub)):
            cells.setdefault(key, []).append(hit)
    metrics = {"Overall": sum(hits) / len(hits)}
    for key in sorted(cells, key=lambda k: (k[0], len(k) > 1, k)):
        metrics["/".join(key)] = sum(cells[key]) / len(cells[key])
    return metrics


def _grouped(df: pd.DataFrame, hits: list[bool], groups: Sequence[Sequence[str]], factor: float) -> dict[str, float]:
    hit = pd.Series(hits, dtype=float)
    metrics = {"Overall": factor * float(hit.mean())}
    for column, template in groups:
        if column not in df.columns:
            continue
        values = df[column].reset_index(drop=True)
        for value in sorted({str(v) for v in values if not is_missing(v)}):
            rows = values.map(lambda v, value=value: not is_missing(v) and str(v) == value).to_numpy()
            metrics[template.format(value)] = factor * float(hit[rows].mean())
    return metrics


def score_regex_mcq(
    df: pd.DataFrame,
    *,
    rule: str,
    answer_match: str = "exact",
    letters: str = "ABCDE",
    report: str = "groups",
    groups: Sequence[Sequence[str]] = (),
    scale: str = "percent",
) -> EvalResult:
    """Score predictions by one reading rule (module docstring). Columns: `index`, `prediction` (None/NaN =
    inference error), `answer`, and what the report needs."""
    if rule not in RULES or answer_match not in ANSWER_MATCHES or report not in REPORTS or scale not in SCALES:
        raise ValueError(f"regex MCQ: unknown rule/answer_match/report/scale {rule!r}/{answer_match!r}/{report!r}/"
                         f"{scale!r}")
    require_columns(df, ("index", "prediction", "answer"), "regex MCQ")
    if len(df) == 0:
        raise ValueError("regex MCQ: the predictions table has no rows")
    df = df.reset_index(drop=True)
    read = RULES[rule]
    extracted: list[str | None] = []
    methods: list[str] = []
    hits: list[bool] = []
    missing_target: list[Any] = []
    for index, pred, answer in zip(df["index"].tolist(), df["prediction"].tolist(), df["answer"].tolist()):
        target = target_of(answer, answer_match)
        if target is None:
            missing_target.append(index)
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            letter, method = None, INFERENCE_ERROR
        elif rule == "first_letter":
            letter, method = read_first_letter(str(pred), letters)
        else:
            letter, method = read(str(pred))
        extracted.append(letter)
        methods.append(method)
        hits.append(_matches(letter, target, answer_match))
    tally = Counter(methods)
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits)}
    counts.update({m: n for m, n in sorted(tally.items()) if m not in ("unparsed", INFERENCE_ERROR)})
    counts["inference_errors"] = tally[INFERENCE_ERROR]
    counts["by_rule"] = len(df) - tally["unparsed"] - tally[INFERENCE_ERROR]
    counts["by_judge"] = 0
    counts["unread"] = tally["unparsed"]
    counts["judge_errors"] = 0
    counts["invalid_target"] = len(missing_target)
    metrics = _report(df, hits, report, groups, scale)
    theirs, their_hits, figure_notes = _vlmevalkit_rows(df, rule, answer_match, letters)
    nan_rows = [i for i, note in enumerate(figure_notes) if note]
    figure = VlmevalkitFigure(
        metrics=_report(df, their_hits, report, groups, scale), primary="Overall",
        differing=[
            ReadingDifference(index, ours, their, float(hit), float(their_hit))
            for index, ours, their, hit, their_hit, method in zip(
                df["index"].tolist(), extracted, theirs, hits, their_hits, methods)
            if method != INFERENCE_ERROR and (ours != their or hit != their_hit)
        ],
    )  # fmt: skip
    notes = []
    if nan_rows:
        rows = listed([df["index"].iloc[i] for i in nan_rows])
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(
            f"VLMEvalKit reads {len(nan_rows)} reply(ies) as NaN (its xlsx round trip turns an empty reply, `None`, "
            f"`N/A`, `NA`, `null`... into NaN); vlmkit reads the reply itself: index {rows}"
        )
        figure.notes.append(notes[-1])
        if rule == "characters":
            figure.notes.append(
                "VLMEvalKit at this commit stops with a TypeError on such a reply (re.search on NaN); its figure here "
                "counts them as misses"
            )
    if missing_target:
        notes.append(f"{len(missing_target)} row(s) have no answer (scored as misses): index {listed(missing_target)}")
    if tally["unparsed"]:
        notes.append(f"{tally['unparsed']} reply(ies) could not be read by the benchmark's rule (misses)")
    per_sample = pd.DataFrame(
        {"index": df["index"].tolist(), "extracted": pd.Series(extracted, dtype=object), "method": methods,
         "hit": hits}
    )  # fmt: skip
    return EvalResult(
        scorer="regex_mcq", metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(SCALES[scale]), vlmevalkit=figure,
    )  # fmt: skip


def _report(df: pd.DataFrame, hits: list[bool], report: str, groups: Sequence[Sequence[str]], scale: str
            ) -> dict[str, float]:
    if report == "mme_realworld":
        metrics = _mme_realworld(df, hits)
        return {k: 100.0 * v for k, v in metrics.items()} if scale == "percent" else metrics
    return _grouped(df, hits, groups, 100.0 if scale == "percent" else 1.0)


def _vlmevalkit_rows(df: pd.DataFrame, rule: str, answer_match: str, letters: str
                     ) -> tuple[list[str | None], list[bool], list[bool]]:
    """VLMEvalKit's reading of every row, its hits, and whether the row's reply is NaN to it (its xlsx round trip,
    vlmkit.scoring.common.vlmevalkit_cells). `characters` and `first_letter` are VLMEvalKit's own as they run
    (vlmevalkit_characters, vlmevalkit_first_letter; MedQ's rule returns NaN for a NaN reply: a miss); the other two
    rules are VLMEvalKit's already, read on the text `nan` for such a reply. A failed call is a miss."""
    preds = df["prediction"].tolist()
    failed = [is_missing(p) or VLMEVALKIT_FAIL_MARKER in str(p) for p in preds]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else p for p, f in zip(preds, failed)])
    readings: list[str | None] = []
    hits: list[bool] = []
    nan: list[bool] = []
    for pred, cell, fail, answer in zip(preds, back, failed, df["answer"].tolist()):
        is_nan = not fail and is_nan_cell(cell) and str(pred) != "nan"
        nan.append(is_nan)
        if fail:
            letter = None
        elif rule == "characters":
            letter = vlmevalkit_characters(cell) if isinstance(cell, str) else None  # NaN / a number: a TypeError
        elif rule == "first_letter":
            letter = None if is_nan_cell(cell) else vlmevalkit_first_letter(str(cell), letters)
        else:
            letter = RULES[rule](str(cell))[0]
        readings.append(letter)
        hits.append(_matches(letter, target_of(answer, answer_match), answer_match))
    return readings, hits, nan
