"""LLaVABench and LLaVABench_KO: the model's answer against the GPT-4 reference answer, reviewed by an LLM judge.

The judge (system prompt `SYSTEM_PROMPT`, temperature 0.2, max_tokens 2048, one ask per row as VLMEvalKit makes it)
sees the image caption, the question, the reference answer (TSV `gpt4_ans`) as Assistant 1 and the model's answer as
Assistant 2, then the rule text; it answers with the two scores (1-10) on its first line, the reference's first.
The English review prompt and rule (`review_prompt`, `RULE`) are VLMEvalKit's, character for character; the rule is
the same for the three categories (conv, detail, complex), and vlmkit gives it to any other category too (VLMEvalKit
fails on one). LLaVABench_KO (`language="ko"`) uses VLMEvalKit's Korean section labels and Korean rule (`RULE_KO`);
its system prompt and temperature are the English ones, as in VLMEvalKit.
(`RULE_KO` is taken from VLMEvalKit's vlmeval/dataset/utils/llavabench.py `rule_dict_ko`, which the facts file names
but does not quote.)
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Reading a review: the first non-blank line of the reply (after any `<think>` block), commas read as spaces, must be
exactly two numbers within 0..10: (reference score, model score). VLMEvalKit splits the first line on single spaces,
so `8  9` or a reply opening with a blank line are failures there; vlmkit reads them.

Scores (VLMEvalKit's `_score.csv`, one row `overall` then one per category, rounded to 1 decimal):
`Relative Score (main)` = mean(model) / mean(reference) x 100 (the headline figure, percent; above 100 when the model
beats the reference), `VLM Score` = mean(model) x 10, `GPT4 Score` = mean(reference) x 10. Metrics hold the same
figures unrounded: `Relative Score (main)`, `VLM Score`, `GPT4 Score` overall, and `<category>/<figure>`.

Where vlmkit differs from VLMEvalKit (deliberately): VLMEvalKit scores an unreadable review as (-1, -1) and keeps it
in both means, which lowers both and skews their ratio. vlmkit leaves such a row (`judge_unread`) out of both sums,
and so a row whose judge call failed (`judge_error`: asked again on the next run) and a row without a prediction
(`inference_error`, never sent to the judge; VLMEvalKit sends the text `nan`): the relative score compares the model
with the reference on the same rows, and there is no score that would stand for "no review". They are counted
(`unread`, `judge_errors`, `inference_errors`), listed in the notes, and the run is partial while any remain.
`scored` counts the rows in the sums.

VLMEvalKit's figure (EvalResult.vlmevalkit): the same three figures, rounded to 1 decimal as VLMEvalKit prints them,
from the same judge replies read by VLMEvalKit's parse_score (the stripped reply's first line, commas as spaces,
split on single spaces: exactly two pieces, each read by float(), any value; anything else, an empty reply included,
is (-1, -1) and stays in both means). Rows without a prediction are left out of both figures (VLMEvalKit would have
reviewed its failure message). Not computed (None, and a note says why) where a review it needs is one vlmkit does
not have: a reply VLMEvalKit reads back from its xlsx as another text (an empty reply, `None`, `N/A` as `nan`, `3`
as `3.0` in a column of numbers: its judge would review that text), or a failed judge call.

Per row (EvalResult.per_sample): `index`, `points` (the model's 1-10 score; None when not read),
`reference_points` (the reference's), `score` (points / 10, the 0..1 figure vlmkit's report reads), `method`
(`judge`, `judge_unread`, `judge_error`, `inference_error`) and `judge` (the judge's reply; None when not asked).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.vlmevalkit_replies import changed_replies, failed_call
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

SYSTEM_PROMPT = "You are a helpful and precise assistant for checking the quality of the answer."
JUDGE_TEMPERATURE = 0.2
JUDGE_MAX_TOKENS = 2048
SCORE_RANGE = (0.0, 10.0)
SCORER = "llavabench"
RELATIVE, VLM, GPT4 = "Relative Score (main)", "VLM Score", "GPT4 Score"
OVERALL = "overall"
LANGUAGES = ("en", "ko")

RULE = (
    "We would like to request your feedback on the performance of two AI assistants in response to the user question "
    "displayed above. The user asks the question on observing an image. For your reference, the visual content in "
    "the image is represented with a few sentences describing the image. \n"
    "Please rate the helpfulness, relevance, accuracy, level of details of their responses. Each assistant receives "
    "an overall score on a scale of 1 to 10, where a higher score indicates better overall performance.\n"
    "Please first output a single line containing only two values indicating the scores for Assistant 1 and 2, "
    "respectively. The two scores are separated by a space.\n"
    "In the subsequent line, please provide a comprehensive explanation of your evaluation, avoiding any potential "
    "bias and ensuring that the order in which the responses were presented does not affect your judgment."
)

RULE_KO = (
    "두 인공지능 어시스턴트의 성능을 [질문]에 대한 응답에 기반하여 평가하세요. 해당 [질문]은 특정 이미지를 보고 생성되었습니다. "
    "`유용성`, `관련성`, `정확성`, `세부 수준`, `한국어 생성능력`을 기준으로 응답을 평가하세요. 각각의 어시스턴트에게 1에서 10까지의 "
    "전반적인 점수를 부여하며, 높은 점수일수록 더 나은 전반적인 성능을 나타냅니다.\n\n"
    "# 단계\n"
    "1. 제공된 이미지 [설명]을 검토하세요.\n"
    "2. 각 어시스턴트의 응답을 다음 기준으로 분석하세요:\n"
    "   - `유용성`: 응답이 사용자의 질문을 얼마나 잘 해결하는가?\n"
    "   - `관련성`: 응답이 사용자의 질문에 얼마나 적절한가?\n"
    "   - `정확성`: 응답에서 제공한 정보가 얼마나 정확한가?\n"
    "   - `세부 수준`: 응답이 과하지 않게 충분히 자세한가?\n"
    "   - `한국어 생성능력`: 생성된 한국어 문장이 자연스럽고 문법적으로 올바른가?\n"
    "3. 분석에 기반하여 각 어시스턴트에게 1에서 10까지의 점수를 부여하세요.\n"
    "4. 두 점수를 공백으로 구분하여 한 줄로 제공하세요.\n"
    "5. 점수에 대한 이유를 강조하면서 포괄적인 평가를 제공하고, 편견을 피하며 응답의 순서가 판단에 영향을 미치지 않도록 하세요.\n\n"
    "# 출력 형식\n"
    "- 첫 번째 줄: `어시스턴트1_점수 어시스턴트2_점수` (예: `8 9`)\n"
    "- 두 번째 줄: `유용성`, `관련성`, `정확성`, `세부 수준`, `한국어 생성능력` 기준으로 점수를 설명하는 자세한 문단을 제공합니다.\n\n"
    "# 주의사항\n"
    "- 평가 시 잠재적 편견을 방지하여 객관성을 확보하세요.\n"
    "- 분석과 설명에서 일관성과 명확성을 유지하세요."
)

JUDGE, UNREAD, JUDGE_ERROR, INFERENCE_ERROR = "judge", "judge_unread", "judge_error", "inference_error"


def review_prompt(caption: str, question: str, reference: str, prediction: str, *, language: str = "en") -> str:
    """VLMEvalKit's review prompt for one row (build_prompt / build_prompt_ko)."""
    if language == "ko":
        return (f"[설명]\n{caption}\n\n[질문]\n{question}\n\n"
                f"[어시스턴트 1]\n{reference}\n\n[어시스턴트 1 끝]\n\n"
                f"[어시스턴트 2]\n{prediction}\n\n[어시스턴트 2 끝]\n\n"
                f"[System]\n{RULE_KO}\n\n")
    if language != "en":
        raise ValueError(f"LLaVABench: unknown review language {language!r} (expected one of {', '.join(LANGUAGES)})")
    return (f"[Context]\n{caption}\n\n[Question]\n{question}\n\n"
            f"[Assistant 1]\n{reference}\n\n[End of Assistant 1]\n\n"
            f"[Assistant 2]\n{prediction}\n\n[End of Assistant 2]\n\n"
            f"[System]\n{RULE}\n\n")


def read_review(reply: str) -> tuple[float, float] | None:
    """(reference score, model score) from the first non-blank line of a review; None when it is not exactly two
    numbers within SCORE_RANGE."""
    text = answer_part(reply or "").strip()
    if not text:
        return None
    tokens = text.split("\n", 1)[0].replace(",", " ").split()
    if len(tokens) != 2:
        return None
    try:
        pair = (float(tokens[0]), float(tokens[1]))
    except ValueError:
        return None
    low, high = SCORE_RANGE
    if not all(math.isfinite(v) and low <= v <= high for v in pair):
        return None
    return pair


def score_llavabench(df: pd.DataFrame, judge: Judge, *, language: str = "en", what: str = "LLaVABench") -> EvalResult:
    """Review every prediction against the reference (see the module docstring). Columns: `index`, `question`,
    `caption`, `gpt4_ans`, `category`, `prediction` (None/NaN = inference error). JudgeStopped is let through."""
    if language not in LANGUAGES:
        raise ValueError(f"{what}: unknown review language {language!r} (expected one of {', '.join(LANGUAGES)})")
    records, keys = keyed_records(df, ("index", "question", "caption", "gpt4_ans", "category", "prediction"), what)

    prompts: dict[str, str] = {}
    categories: list[str] = []
    for key, row in zip(keys, records):
        categories.append(required_text(row, "category", what))
        texts = [required_text(row, field, what) for field in ("caption", "question", "gpt4_ans")]
        pred = row["prediction"]
        if failed_call(pred):
            continue
        prompts[key] = review_prompt(*texts, str(pred), language=language)

    outcomes = judge_rounds(judge, prompts, lambda _key, reply: read_review(reply), temperatures=(JUDGE_TEMPERATURE,),
                            max_tokens=JUDGE_MAX_TOKENS, system=SYSTEM_PROMPT) if prompts else {}
    model_scores: list[float | None] = []
    reference_scores: list[float | None] = []
    methods: list[str] = []
    replies: list[str | None] = []
    for key in keys:
        outcome = outcomes.get(key)
        pair = outcome.value if outcome is not None else None
        reference_scores.append(pair[0] if pair else None)
        model_scores.append(pair[1] if pair else None)
        replies.append(outcome.last_reply if outcome is not None else None)
        if outcome is None:
            methods.append(INFERENCE_ERROR)
        elif outcome.error is not None:
            methods.append(JUDGE_ERROR)
        else:
            methods.append(UNREAD if pair is None else JUDGE)

    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records],
        "points": pd.Series(model_scores, dtype=object),
        "reference_points": pd.Series(reference_scores, dtype=object),
        "score": pd.Series([None if p is None else p / 10 for p in model_scores], dtype=object),
        "method": methods,
        "judge": pd.Series(replies, dtype=object),
    })
    read = per_sample.assign(category=categories)[per_sample["method"] == JUDGE]
    splits = [OVERALL, *sorted(set(categories))]
    figures = {split: _figures(read if split == OVERALL else read[read["category"] == split]) for split in splits}
    table = pd.DataFrame([{"split": split, **figures[split]} for split in splits]).round(1)
    metrics: dict[str, float] = dict(figures[OVERALL])
    for split in splits[1:]:
        metrics.update({f"{split}/{name}": value for name, value in figures[split].items() if not math.isnan(value)})
    counts = {
        "total": len(records), "scored": len(read), "by_judge": methods.count(JUDGE), "unread": methods.count(UNREAD),
        "judge_errors": methods.count(JUDGE_ERROR), "inference_errors": methods.count(INFERENCE_ERROR),
    }
    figure, why_not = llavabench_vlmevalkit_figure(per_sample, records, categories)
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary=RELATIVE,
        per_sample=per_sample,
        table=table,
        table_suffix="score",
        counts=counts,
        notes=_notes(per_sample, judge, language) + ([why_not] if why_not else []),
        scale=Scale(PERCENT),
        vlmevalkit=figure,
    )


VLMEVALKIT_JUDGE_FAILURE = "Failed to obtain answer via API."  # what VLMEvalKit's judge returns for an empty reply
VLMEVALKIT_UNREAD = (-1.0, -1.0)


def vlmevalkit_review(reply: str) -> tuple[float, float]:
    """(reference score, model score) as VLMEvalKit's parse_score reads a review; (-1, -1) when it cannot."""
    text = reply.strip() or VLMEVALKIT_JUDGE_FAILURE
    pieces = text.split("\n")[0].replace(",", " ").split(" ")
    if len(pieces) != 2:
        return VLMEVALKIT_UNREAD
    try:
        return float(pieces[0]), float(pieces[1])
    except ValueError:
        return VLMEVALKIT_UNREAD


def llavabench_vlmevalkit_figure(per_sample: pd.DataFrame, records: list[dict],
                                 categories: list[str]) -> tuple[VlmevalkitFigure | None, str | None]:
    """(VLMEvalKit's figures for the same reviews, None), or (None, why) when a review it needs is one vlmkit does
    not have (module docstring)."""
    pairs: list[tuple[float, float]] = []
    kept: list[str] = []
    differing: list[ReadingDifference] = []
    missing: list[object] = []
    unread: list[object] = []
    changed = changed_replies([row["prediction"] for row in records])
    for row, method, reply, points, reference, category, other_text in zip(
        records, per_sample["method"], per_sample["judge"], per_sample["points"], per_sample["reference_points"],
        categories, changed,
    ):
        if method == INFERENCE_ERROR:
            continue
        if method == JUDGE_ERROR or other_text or reply is None:
            missing.append(row["index"])
            continue
        pair = vlmevalkit_review(str(reply))
        pairs.append(pair)
        kept.append(category)
        if pair == VLMEVALKIT_UNREAD:
            unread.append(row["index"])
        mine = None if points is None else (reference, points)
        if mine != pair:
            differing.append(ReadingDifference(row["index"], None if mine is None else list(mine), list(pair),
                                               None if points is None else points / 10, pair[1] / 10))
    if missing:
        return None, (f"VLMEvalKit's figure not computed: {len(missing)} row(s) need a review vlmkit does not have "
                      "(a reply VLMEvalKit reads back from its xlsx as another text, 'nan' or a number, and would send "
                      "as such, or a failed judge call); "
                      f"index {listed(missing)}")
    if not pairs:
        return None, "VLMEvalKit's figure not computed: no row has a reply"
    reviewed = pd.DataFrame(pairs, columns=["reference", "points"]).assign(category=kept)
    metrics: dict[str, float] = {}
    for split in [OVERALL, *sorted(set(kept))]:
        sub = reviewed if split == OVERALL else reviewed[reviewed["category"] == split]
        model, reference = float(sub["points"].mean()), float(sub["reference"].mean())
        relative = model / reference * 100 if reference != 0 else float("nan")
        figures = {RELATIVE: relative, VLM: model * 10, GPT4: reference * 10}
        prefix = "" if split == OVERALL else f"{split}/"
        metrics.update({prefix + name: float(np.round(value, 1)) for name, value in figures.items()})
    notes = ["rounded to 1 decimal as VLMEvalKit prints them; rows without a prediction left out"]
    if unread:
        notes.append(f"{len(unread)} review(s) VLMEvalKit's parse_score cannot read scored (-1, -1) in both means; "
                     f"index {listed(unread)}")
    return VlmevalkitFigure(metrics=metrics, primary=RELATIVE, differing=differing, notes=notes), None


def _figures(read: pd.DataFrame) -> dict[str, float]:
    """The three figures over the rows whose review was read (NaN when there are none)."""
    if len(read) == 0:
        return {RELATIVE: float("nan"), VLM: float("nan"), GPT4: float("nan")}
    model = float(np.mean(read["points"].astype(float)))
    reference = float(np.mean(read["reference_points"].astype(float)))
    relative = model / reference * 100 if reference > 0 else float("nan")
    return {RELATIVE: relative, VLM: model * 10, GPT4: reference * 10}


def _notes(per_sample: pd.DataFrame, judge: Judge, language: str) -> list[str]:
    notes = [
        (f"reviewed by {judge.name} with VLMEvalKit's LLaVABench prompt ({'Korean' if language == 'ko' else 'English'}"
        "), the reference answer as Assistant 1; Relative Score = mean(model) / mean(reference) x 100 over the rows "
        "whose review was read")
    ]
    explained = (
        (UNREAD, ("the review's first line was not two scores: left out of both means (VLMEvalKit counts -1 for both "
                 "scores, lowering both means)")),
        (JUDGE_ERROR, "the judge call failed: left out of both means this run and asked again on the next run"),
        (INFERENCE_ERROR, "no prediction: not reviewed, left out of both means (VLMEvalKit reviews the text 'nan')"),
    )
    for method, what in explained:
        rows = per_sample.loc[per_sample["method"] == method, "index"].tolist()
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {what}; index {listed(rows)}")
    return notes
