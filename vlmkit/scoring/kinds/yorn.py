"""Yes/No scoring: reading the answer, VLMEvalKit's judge for the answers no rule reads, and VLMEvalKit's four
reports (plain accuracy, MME, POPE, HallusionBench; AMBER and VSR in vlmkit.scoring.kinds.yorn_ratings).

Reading (`extract_yes_no`) is a careful reader's (see its docstring; stress set in
tests/vlmkit/scoring/test_answer_stress.py);
`vlmevalkit_yes_no` is VLMEvalKit's rule, kept to count the rows where the two differ
(`counts["differs_from_vlmevalkit"]`), to read the judge's replies and to compute VLMEvalKit's figure for the same
replies (`EvalResult.vlmevalkit`, vlmkit.scoring.kinds.yorn_vlmevalkit; with a judge, the replies its rule leaves
Unknown are asked too). With a judge, a row read as `Unknown` (a
non-empty answer with a Yes/No target) is sent to it with VLMEvalKit's prompt (vlmkit.scoring.common.choice_judge), up to 5
times at temperatures 0, 0.5, 1.0, 1.5, 2.0; method `judge`, `judge_unread` (still Unknown) or `judge_error` (a
failed call: a miss this run, asked again on the next). Counts: `unparsed` (rows no rule read), `by_rule`, `by_judge`,
`unread`, `judge_errors`, `judge_asked`.

Figures are x100 as VLMEvalKit reports them (VSR's f1_score alone is a fraction, as VLMEvalKit reports it). A
prediction that is None/NaN (or VLMEvalKit's API-failure marker) is an inference error, one that is neither clearly
yes nor no is `Unknown` (unparsed); both are misses, and for POPE and VSR an `Unknown` counts as a "No" answer, as
in VLMEvalKit. An `answer` other than yes/no (any case) is an invalid target: a miss, counted and listed in the
notes. Answers compare case-insensitively for every metric
(VLMEvalKit: for AMBER only; a note counts the rows where that matters).

Columns: `index`, `prediction`, `answer` always (`question` when a judge has rows to read); `category` for "mme" (plus
`image_path` to pair the two questions of an image, else rows are paired in index order within a category) and used
when present by the others; "hallusion" needs `l2-category` and `set_id`, `figure_id`, `question_id` (when those three
are absent they are read from the index as VLMEvalKit does: fields 3, 4, 5 of `index.split("_")`); "amber" needs
`category`; "vsr" nothing more.

Interval of the headline (`EvalResult.interval`, `_interval`; docs/error_bars.md): Wilson over rows (acc, VSR), MME's
sum clustered by image (its acc+ pairs), HallusionBench's bootstrap drawing whole question sets (each question group
and figure group lies in one), POPE's F1 and AMBER's Avg ACC (within its categories) bootstrapped by row.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_missing, listed
from vlmkit.judging import Judge
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.breakdown import group_means, require_columns, split_category_table
from vlmkit.scoring.common.choice_judge import YORN_TEMPERATURES, Judged, ask_judge, judge_notes, row_keys, yorn_judge_prompt
from vlmkit.scoring.common.choice_reading import normalise, tagged_answer
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import MME_CATEGORY_POINTS, PERCENT, POINTS, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text, vlmevalkit_punctuation
from vlmkit.scoring.kinds.yorn_ratings import (
    AMBER_CATEGORIES,
    AMBER_PRIMARY,
    VSR_PRIMARY,
    VSR_SCALES,
    amber_rating,
    vsr_rating,
    yes_positive,
)
from vlmkit.scoring.common.grouped_intervals import f1_interval, hallusion_interval, mme_interval
from vlmkit.scoring.common.intervals import Interval, stratum_mean_of_means, wilson
from vlmkit.scoring.kinds.yorn_vlmevalkit import yorn_figure

METRICS = ("acc", "mme", "pope", "hallusion", "amber", "vsr")
UNKNOWN = "Unknown"

# MME's two super-categories (MME_rating in VLMEvalKit).
MME_PERCEPTION = (
    "OCR", "artwork", "celebrity", "color", "count", "existence", "landmark", "position", "posters", "scene",
)  # fmt: skip
MME_REASONING = ("code_reasoning", "commonsense_reasoning", "numerical_calculation", "text_translation")


def vlmevalkit_yes_no(prediction: Any) -> str:
    """VLMEvalKit's rule: `Yes` if the word yes occurs and no does not, `No` for the reverse, else `Unknown`
    (lower-case, VLMEvalKit's copy of the VQA punctuation rule, whitespace split). Also how a judge's reply is read."""
    if is_missing(prediction):
        return UNKNOWN
    words = vlmevalkit_punctuation(str(prediction).lower()).split()
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes and not has_no:
        return "Yes"
    if has_no and not has_yes:
        return "No"
    return UNKNOWN


_YES_WORDS = frozenset({"yes", "yeah", "yep", "yup", "是", "是的", "对", "对的", "正确", "有"})
_NO_WORDS = frozenset({"no", "nope", "nah", "否", "不是", "不", "不对", "错误", "没有"})
# `no` in these is no answer: dropped before reading (`There's no way to tell`, `Yes, no doubt`)
_NO_IDIOM_RE = re.compile(r"(?i)\bno\s+(?:doubt|question|problem|matter|way\s+to|idea|clue|telling|comment)\b")
_YN_MARKER_RE = re.compile(r"(?i)\banswer(?:\s+is)?\s*[:：=\-]?\s*|答案\s*(?:是|为)?\s*[:：]?\s*")
_YN_CONNECTIVE_RE = re.compile(r"(?i)^(?:so|thus|hence|therefore|then|i\s+think\s+so|based\s+on\s+the\s+image)\W*")
_YN_WORD_RE = re.compile(r"[a-z]+|[\u4e00-\u9fff]+")


def _yn(word: str) -> str | None:
    return "Yes" if word in _YES_WORDS else "No" if word in _NO_WORDS else None


def _yn_phrase(text: str) -> str | None:
    """Yes/No when the whole of `text` is a yes/no word (punctuation, an opening `so,`/`therefore` ignored)."""
    text = _YN_CONNECTIVE_RE.sub("", text.strip().lower()).strip(" .。!！?？,，:：;；()[]\"'-")
    return _yn(text)


def extract_yes_no(prediction: Any) -> str:
    """`Yes`, `No` or `Unknown`, read as a careful person would (tests/vlmkit/scoring/test_answer_stress.py):
    only the answer part (after `</think>`), NFKC and markdown dropped; then the inside of an `<answer>` tag,
    `\\boxed{}` or JSON `answer` field; then the answer positions (the whole reply, its first word - `No doubt`
    aside -, its last word, a sentence that is only yes/no, the word after `Answer:`/`答案`): one value there is the
    answer, two different ones are Unknown (`Yes and no`, `No. Yes.`); then VLMEvalKit's rule on the whole reply."""
    if is_missing(prediction):
        return UNKNOWN
    text = normalise(answer_part(str(prediction)))
    if not text:
        return UNKNOWN
    inner = tagged_answer(text)
    if inner is not None:
        return _yn_phrase(inner) or vlmevalkit_yes_no(inner)
    whole = _yn_phrase(text)
    if whole:
        return whole
    low = _NO_IDIOM_RE.sub(" ", text.lower())
    found: set[str] = set()
    words = _YN_WORD_RE.findall(low)
    if words:
        found.update((_yn(words[0]) or "", _yn(words[-1]) or ""))
    for sentence in re.split(r"[.!?;\n。！？；]+", low):
        found.add(_yn_phrase(sentence) or "")
    for m in _YN_MARKER_RE.finditer(low):
        after = _YN_WORD_RE.match(low, m.end())
        if after:
            found.add(_yn(after.group(0)) or "")
    found.discard("")
    if len(found) == 1:
        # the answer word at an answer position; the other word elsewhere as an answer too means a hedge
        value = found.pop()
        other = "no" if value == "Yes" else "yes"
        if re.search(rf"(?:\b(?:or|and|also|{value.lower()})\W+{other}\b)|(?:\b{other}\W+(?:or|and)\b)", low):
            return UNKNOWN
        return value
    if found:
        return UNKNOWN
    return vlmevalkit_yes_no(low)


def _target(value: Any) -> str | None:
    text = cell_text(value)
    if text is None:
        return None
    low = text.strip().lower()
    return {"yes": "Yes", "no": "No"}.get(low)


def _base(
    df: pd.DataFrame, what: str, judge: Judge | None, vlmevalkit_ignores_case: bool = False
) -> tuple[pd.DataFrame, dict[str, int], list[str], dict[int, tuple[str, Judged]]]:
    """Per row: index, extracted, method, hit (and `judge`, the judge's last reply, when a judge is given); plus
    counts and notes common to every Y/N report, and the judge's verdicts by row position with the prompt each was
    asked with. `vlmevalkit_ignores_case`: VLMEvalKit compares the answer
    case-insensitively too (AMBER), so no note on answers spelled other than `Yes`/`No`."""
    require_columns(df, ("index", "prediction", "answer"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    indices = df["index"].tolist()
    extracted, methods, hits, targets, invalid, answers = [], [], [], [], [], []
    differs = 0
    other_case = 0
    for idx, pred, ans in zip(indices, df["prediction"].tolist(), df["answer"].tolist(), strict=True):
        target = _target(ans)
        if target is None:
            invalid.append(idx)
        elif cell_text(ans) != target:
            other_case += 1
        targets.append(target)
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            extracted.append(UNKNOWN)
            methods.append("inference_error")
            hits.append(False)
            answers.append("")
            continue
        got = extract_yes_no(pred)
        differs += got != vlmevalkit_yes_no(pred)
        text = str(pred)
        answer = answer_part(text)
        answers.append(text if answer is text else answer)
        extracted.append(got)
        methods.append("unparsed" if got == UNKNOWN else "parsed")
        hits.append(target is not None and got == target)
    unparsed = methods.count("unparsed")
    asked = _judge_rows(df, judge, methods, targets, answers) if judge is not None else {}
    judged = {i: verdict for i, (_prompt, verdict) in asked.items()}
    for i, verdict in judged.items():
        methods[i] = verdict.method
        extracted[i] = verdict.value or UNKNOWN
        hits[i] = verdict.value is not None and verdict.value == targets[i]
    per_sample = pd.DataFrame({"index": indices, "extracted": extracted, "method": methods, "hit": hits})
    if judge is not None:
        per_sample["judge"] = pd.Series([judged[i].reply if i in judged else None for i in range(len(df))],
                                        dtype=object)
    per_sample["target"] = targets
    counts = {
        "total": len(df),
        "scored": len(df),
        "hits": int(sum(hits)),
        "unparsed": unparsed,
        "inference_errors": methods.count("inference_error"),
        "invalid_target": len(invalid),
        "by_rule": methods.count("parsed"),
        "by_judge": methods.count("judge"),
        "unread": methods.count("unparsed") + methods.count("judge_unread"),
        "judge_errors": methods.count("judge_error"),
        "judge_asked": len(judged),
        "differs_from_vlmevalkit": differs,
    }
    notes = []
    if invalid:
        notes.append(
            f"{len(invalid)} row(s) have an answer other than Yes/No (scored as misses): index {listed(invalid)}"
        )
    if differs:
        notes.append(
            f"vlmkit's rules read a different answer than VLMEvalKit's Y/N rule for {differs} row(s) (vlmkit reads "
            "as a careful person would; see vlmkit.scoring.kinds.yorn.extract_yes_no)"
        )
    if other_case and not vlmevalkit_ignores_case:
        notes.append(
            f"{other_case} row(s) have an answer spelled other than `Yes`/`No` (e.g. `yes`): vlmkit compares "
            "case-insensitively; VLMEvalKit compares exactly here (only AMBER ignores case) and scores them as misses"
        )
    notes += judge_notes(methods, judge is not None, unparsed)
    return per_sample, counts, notes, asked


def _judge_rows(
    df: pd.DataFrame, judge: Judge, methods: list[str], targets: list[str | None], answers: list[str]
) -> dict[int, tuple[str, Judged]]:
    """The judge's (prompt, verdict), by row position, for answers the rules read as Unknown (valid target,
    non-empty)."""
    ask = [i for i, m in enumerate(methods) if m == "unparsed" and targets[i] is not None and answers[i].strip()]
    if not ask:
        return {}
    require_columns(df, ("question",), "Y/N judge")
    questions = df["question"].tolist()
    indices = df["index"].tolist()
    keys = row_keys([indices[i] for i in ask])
    position = dict(zip(keys, ask, strict=True))
    prompts = {key: yorn_judge_prompt(cell_text(questions[i]) or "", answers[i]) for key, i in position.items()}
    verdicts = ask_judge(judge, prompts, _read_reply, YORN_TEMPERATURES)
    return {position[key]: (prompts[key], verdict) for key, verdict in verdicts.items()}


def _read_reply(_key: str, reply: str) -> str | None:
    value = vlmevalkit_yes_no(reply)
    return None if value == UNKNOWN else value


def _with_columns(df: pd.DataFrame, per_sample: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    out = per_sample.copy()
    for col in columns:
        if col in df.columns:
            out[col] = df[col].to_numpy()
    return out


def _acc(df: pd.DataFrame, rows: pd.DataFrame) -> tuple[dict[str, float], pd.DataFrame, str]:
    data = _with_columns(df, rows, ("split", "category", "l2-category"))
    groups = ("category", "l2-category")
    metrics = group_means(data, "hit", groups=groups, scale=100.0)
    return metrics, split_category_table(data, "hit", groups=groups, scale=100.0), "Overall"


def _mme_data(df: pd.DataFrame, rows: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """The per-row readings with `category` and `image` (the pair an MME question belongs to)."""
    require_columns(df, ("category",), "MME scoring")
    empty = df["category"].isna().to_numpy()
    if empty.any():
        row = int(empty.argmax())
        index = index_key(df["index"].iloc[row])
        raise ValueError(f"MME scoring: row {row} (index {index}), field `category` is empty")
    data = _with_columns(df, rows, ("category",))
    if "image_path" in df.columns:
        data["image"] = df["image_path"].map(str).to_numpy()
    else:
        # No image_path: the two questions of an image are taken as consecutive rows in index order.
        order = np.argsort(pd.Series(df["index"].tolist()).map(_sort_key).to_numpy(), kind="stable")
        rank = np.empty(len(df), dtype=np.int64)
        rank[order] = np.arange(len(df))
        data["_rank"] = rank
        data["image"] = data.groupby("category")["_rank"].rank(method="first").astype(int).sub(1) // 2
        notes.append("no `image_path` column: MME questions paired as consecutive rows (index order) per category")
    return data


def _mme(df: pd.DataFrame, rows: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
    data = _mme_data(df, rows, notes)
    sizes = data.groupby(["category", "image"]).size()
    if (sizes != 2).any():
        notes.append(f"{int((sizes != 2).sum())} MME image(s) do not have exactly 2 questions; acc+ needs all right")
    metrics: dict[str, float] = {}
    scores: dict[str, float] = {}
    for cat in pd.unique(data["category"]):
        if pd.isna(cat):
            continue
        sub = data[data["category"] == cat]
        acc = float(sub["hit"].mean()) * 100
        acc_plus = float(sub.groupby("image")["hit"].all().mean()) * 100
        name = str(cat)
        scores[name] = acc + acc_plus
        metrics[f"{name}/acc"] = acc
        metrics[f"{name}/acc+"] = acc_plus
    missing = [c for c in (*MME_PERCEPTION, *MME_REASONING) if c not in scores]
    if missing:
        notes.append(f"MME categories absent, left out of the perception/reasoning sums: {', '.join(missing)}")
    extra = [c for c in scores if c not in MME_PERCEPTION and c not in MME_REASONING]
    if extra:
        notes.append(f"categories outside MME's perception/reasoning lists (reported alone): {', '.join(extra)}")
    perception = sum(scores.get(c, 0.0) for c in MME_PERCEPTION)
    reasoning = sum(scores.get(c, 0.0) for c in MME_REASONING)
    summary = {"perception": perception, "reasoning": reasoning, **scores}
    metrics = {"Overall": perception + reasoning, **summary, **metrics}
    return metrics, pd.DataFrame([summary]), "Overall"


def _sort_key(value: Any) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _prf(sub: pd.DataFrame) -> dict[str, float]:
    precision, recall, f1 = yes_positive(sub)
    acc = float(sub["hit"].mean())
    return {"Overall": f1 * 100, "acc": acc * 100, "precision": precision * 100, "recall": recall * 100}


def _pope(df: pd.DataFrame, rows: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
    data = _with_columns(df, rows, ("category",))
    if "category" in data.columns:
        split = data["category"].map(lambda v: v if pd.isna(v) else [c.strip() for c in str(v).split(",")])
        if (split.map(lambda v: isinstance(v, list) and len(v) > 1)).any():
            notes.append("rows listing several POPE categories count once per category in Overall, as in VLMEvalKit")
        data = data.assign(category=split).explode("category", ignore_index=True)
    table_rows = [{"split": "Overall", **_prf(data)}]
    metrics = {k: v for k, v in table_rows[0].items() if k != "split"}
    if "category" in data.columns:
        for cat in sorted((c for c in pd.unique(data["category"]) if not pd.isna(c)), key=str):
            figures = _prf(data[data["category"] == cat])
            table_rows.append({"split": str(cat), **figures})
            metrics[f"{cat}/F1"] = figures["Overall"]
            for key in ("acc", "precision", "recall"):
                metrics[f"{cat}/{key}"] = figures[key]
    return metrics, pd.DataFrame(table_rows), "Overall"


def _hallusion_data(df: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The per-row readings with `_set`, `_figure` and `_question` (HallusionBench's groups)."""
    require_columns(df, ("l2-category",), "HallusionBench scoring")
    data = _with_columns(df, rows, ("category", "l2-category", "set_id", "figure_id", "question_id"))
    ids = ("set_id", "figure_id", "question_id")
    if not all(c in df.columns for c in ids):
        parts = [str(i).split("_") for i in df["index"].tolist()]
        bad = next((p for p, fields in enumerate(parts) if len(fields) < 6), None)
        if bad is not None:
            missing = next(c for c in ids if c not in df.columns)
            raise ValueError(
                f"HallusionBench scoring: the predictions table has no `{missing}` column and row {bad}'s `index` "
                f"{df['index'].iloc[bad]!r} does not hold it (expected at least 6 `_`-separated fields)"
            )
        for pos, col in zip((3, 4, 5), ids, strict=True):
            data[col] = [fields[pos] for fields in parts]
    for col in ("l2-category", *ids):
        data[col] = data[col].map(str)
    data["_figure"] = data["l2-category"] + "_" + data["set_id"] + "_" + data["figure_id"]
    data["_question"] = data["l2-category"] + "_" + data["set_id"] + "_" + data["question_id"]
    data["_set"] = data["l2-category"] + "_" + data["set_id"]
    return data


def _hallusion(df: pd.DataFrame, rows: pd.DataFrame) -> tuple[dict[str, float], pd.DataFrame, str]:
    data = _hallusion_data(df, rows)

    def figures(sub: pd.DataFrame) -> dict[str, float]:
        return {
            "aAcc": float(sub["hit"].mean()) * 100,
            "fAcc": float(sub.groupby("_figure")["hit"].all().mean()) * 100,
            "qAcc": float(sub.groupby("_question")["hit"].all().mean()) * 100,
        }

    overall = figures(data)
    table_rows = [{"split": "Overall", **overall}]
    metrics = {"Overall": (overall["aAcc"] + overall["fAcc"] + overall["qAcc"]) / 3, **overall}
    for group in ("category", "l2-category"):
        if group not in data.columns:
            continue
        for val in sorted((v for v in pd.unique(data[group]) if not pd.isna(v)), key=str):
            figs = figures(data[data[group] == val])
            table_rows.append({"split": str(val), **figs})
            metrics.update({f"{val}/{k}": v for k, v in figs.items()})
    return metrics, pd.DataFrame(table_rows), "Overall"


def _mme_scales(metrics: dict[str, float]) -> dict[str, Scale]:
    """MME: `<category>/acc` and `/acc+` are percent; a category's score (acc + acc+) is points out of 200; the
    perception, reasoning and Overall sums are out of 200 per category of theirs present."""
    present = {name for name in metrics if f"{name}/acc" in metrics}
    n_perception = sum(c in present for c in MME_PERCEPTION)
    n_reasoning = sum(c in present for c in MME_REASONING)
    scales: dict[str, Scale] = {}
    for name in metrics:
        if name.endswith(("/acc", "/acc+")) and name.rsplit("/", 1)[0] in present:
            scales[name] = Scale(PERCENT)
        elif name in present:
            scales[name] = Scale(POINTS, out_of=MME_CATEGORY_POINTS)
    scales["perception"] = Scale(POINTS, out_of=MME_CATEGORY_POINTS * n_perception)
    scales["reasoning"] = Scale(POINTS, out_of=MME_CATEGORY_POINTS * n_reasoning)
    scales["Overall"] = Scale(POINTS, out_of=MME_CATEGORY_POINTS * (n_perception + n_reasoning))
    return scales


def score_yorn(df: pd.DataFrame, metric: str = "acc", judge: Judge | None = None) -> EvalResult:
    """Score Yes/No predictions with one of METRICS (see the module docstring for the columns each needs).

    acc: accuracy, per category and l2-category. mme: per category acc + acc+ (both questions of an image
    right); `perception` / `reasoning` sum their categories, `Overall` = perception + reasoning (the figure the
    OpenVLM leaderboard shows). pope: F1 with Yes positive as `Overall`, plus acc, precision, recall, per
    category (a cell may list several, comma-separated). hallusion: aAcc (questions), fAcc (figures), qAcc
    (question pairs); `Overall` is their mean. amber: accuracy per AMBER category (Attribute, Existence, Relation)
    and `Avg ACC`, their mean. vsr: precision, recall (Yes positive) and acc x100, `f1_score` a fraction; `acc` is
    the headline.
    """
    if metric not in METRICS:
        raise ValueError(f"Y/N scoring: unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if metric == "amber":
        require_columns(df, ("category",), "AMBER scoring")
    per_sample, counts, notes, asked = _base(df, f"Y/N scoring ({metric})", judge, metric == "amber")

    def rate(rows: pd.DataFrame, out_notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
        return _rate(df, metric, rows, out_notes)

    metrics, table, primary = rate(per_sample, notes)
    figure = yorn_figure(df, per_sample, read=vlmevalkit_yes_no, rate=rate, judge=judge, asked=asked,
                         ignore_case=metric == "amber", unknown=UNKNOWN)  # fmt: skip
    return EvalResult(
        scorer=f"yorn_{metric}",
        metrics=metrics,
        primary=primary,
        per_sample=per_sample[["index", "extracted", "method", "hit", *(["judge"] if judge is not None else [])]],
        table=table,
        table_suffix="score",
        counts=counts,
        notes=notes,
        scale=Scale(POINTS) if metric == "mme" else Scale(PERCENT),
        metric_scales=_mme_scales(metrics) if metric == "mme" else dict(VSR_SCALES) if metric == "vsr" else {},
        vlmevalkit=figure,
        interval=_interval(df, metric, per_sample, metrics[primary]),
    )


def _interval(df: pd.DataFrame, metric: str, rows: pd.DataFrame, headline: float) -> Interval:
    """The headline's 95% interval (vlmkit.scoring.common.intervals): Wilson over rows for acc and VSR's acc, MME
    clustered by image, HallusionBench bootstrapped by question set, POPE's F1 by row, AMBER's Avg ACC within its
    categories."""
    hits = rows["hit"].to_numpy(dtype=float)
    if metric in ("acc", "vsr"):
        return wilson(hits, "Overall" if metric == "acc" else VSR_PRIMARY, factor=100.0)
    if metric == "mme":
        data = _mme_data(df, rows, [])
        return mme_interval(hits, data["category"].tolist(), data["image"].tolist(), (*MME_PERCEPTION, *MME_REASONING))
    if metric == "hallusion":
        data = _hallusion_data(df, rows)
        return hallusion_interval(hits, data["_set"].tolist(), data["_figure"].tolist(), data["_question"].tolist(),
                                  headline)
    if metric == "pope":
        copies = np.ones(len(rows))
        if "category" in df.columns:
            copies = np.array([len(str(v).split(",")) if not pd.isna(v) else 1 for v in df["category"]], dtype=float)
        return f1_interval((rows["target"] == "Yes").to_numpy(), (rows["extracted"] == "Yes").to_numpy(), copies,
                           headline)
    grouped = df["category"].map(lambda c: AMBER_CATEGORIES.get(str(c), str(c))).to_numpy()
    return stratum_mean_of_means(hits, grouped, AMBER_PRIMARY, headline, factor=100.0)


def _rate(
    df: pd.DataFrame, metric: str, rows: pd.DataFrame, notes: list[str]
) -> tuple[dict[str, float], pd.DataFrame, str]:
    """The report of `metric` over per-row readings (`index`, `extracted`, `hit`, `target`)."""
    if metric == "acc":
        return _acc(df, rows)
    if metric == "mme":
        return _mme(df, rows, notes)
    if metric == "pope":
        return _pope(df, rows, notes)
    if metric == "amber":
        return amber_rating(_with_columns(df, rows, ("category",)), notes)
    if metric == "vsr":
        return vsr_rating(rows, notes)
    return _hallusion(df, rows)
