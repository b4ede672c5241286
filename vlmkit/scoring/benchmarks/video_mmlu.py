"""Video_MMLU_CAP and Video_MMLU_QA's scorers (VLMEvalKit `Video_MMLU_CAP.evaluate`, `Video_MMLU_QA.evaluate` and
utils/video_mmlu.py at e8e78f05).

Video_MMLU_CAP: VDC's caption QA (vlmkit.scoring.benchmarks.vdc.score_caption_qa: the judge answers each question
from the model's caption, then judges that answer) with Video-MMLU's scoring system text `SYSTEM_SCORE_CAP`, figures
by `discipline` (math, physics, chemistry, lower-cased as VLMEvalKit does). VLMEvalKit's evaluate has VDC's defect
(one answer and one verdict per caption row): no VLMEvalKit figure.

Video_MMLU_QA: one judge ask per row, system `SYSTEM_SCORE_QA`, the MovieChat1k yes/score text
(vlmkit.scoring.benchmarks.moviechat.judge_prompt) with the model's reply as the predicted answer; temperature 0;
verdicts and figures as MovieChat1k's, by discipline. VLMEvalKit's evaluate builds that text from a
`pred_response` column that its QA table does not have, so it stops with a KeyError: there is no VLMEvalKit figure
to compare, and vlmkit puts the model's reply where the template's predicted answer goes.
"""

from __future__ import annotations

import pandas as pd

from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.moviechat import judge_prompt, read_verdict, verdict_columns, verdict_figures
from vlmkit.scoring.benchmarks.moviechat import verdict_result
from vlmkit.scoring.benchmarks.vdc import score_caption_qa
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult

__all__ = ["SYSTEM_SCORE_CAP", "SYSTEM_SCORE_QA", "score_video_mmlu_cap", "score_video_mmlu_qa"]

DISCIPLINES = ("math", "physics", "chemistry")
SYSTEM_SCORE_CAP = """
    You are an intelligent chatbot designed for evaluating the correctness of generative outputs for question-answer pairs.
    Your task is to compare the predicted answer with the correct answer and determine if they match meaningfully. The evaluation criteria differ based on the type of question:
    ------
    ## INSTRUCTIONS:
    1. For **OCR-related questions**:
       - Perform a strict letter-by-letter comparison.
       - Any difference in characters (including case, punctuation, or letter substitution) must result in 'no'.
       - Minor spelling errors or missing characters should not be accepted.
    2. For **non-OCR-related questions**:
       - Focus on the meaningful match between the predicted answer and the correct answer.
       - Synonyms or paraphrases can be considered valid matches.
       - Minor spelling differences or alternative expressions should not be penalized.
"""  # noqa: E501

SYSTEM_SCORE_QA = """
    You are an intelligent chatbot designed for evaluating the correctness of generative outputs for reasoning-based question-answer pairs.
    Your task is to compare the predicted answer with the correct answer based on the following rules:
    ------
    ## INSTRUCTIONS:
    1. **Evaluate Reasoning Tasks Strictly:**
       - The predicted answer must capture all critical concepts and details mentioned in the correct answer.
       - If the correct answer mentions specific concepts or examples (e.g., 'odd numbers accumulate to form perfect squares'), the predicted answer must include these concepts or examples.
       - Even if the phrasing differs, the key meaning and concepts must be preserved. However, omitting or altering key concepts or examples is **not acceptable**.
       - **Example 1:** If the correct answer is 'The construction method shows how odd numbers accumulate to form perfect squares,' the predicted answer must include 'odd numbers' and 'perfect squares'.
       - **Example 2:** If the correct answer is 'To eliminate HBr and form an alkene,' the predicted answer must address the elimination of HBr as well.
       - Minor differences in phrasing are acceptable as long as the key information is retained.
       - **Critical Detail:** If any essential element (e.g., key terms, concepts, or examples) is missing from the predicted answer, the answer is considered incorrect.
       - Do **not** introduce new, unrelated information in the predicted answer.
"""  # noqa: E501


def score_video_mmlu_cap(df: pd.DataFrame, judge: Judge, *, what: str = "Video_MMLU_CAP") -> EvalResult:
    """Caption QA by discipline (module docstring). Columns: index, prediction, question (the list), discipline."""
    return score_caption_qa(df, judge, group_column="discipline", groups=DISCIPLINES, score_system=SYSTEM_SCORE_CAP,
                            scorer="video_mmlu_cap", what=what)


def score_video_mmlu_qa(df: pd.DataFrame, judge: Judge, *, what: str = "Video_MMLU_QA") -> EvalResult:
    """One verdict per answer (module docstring). Columns: index, prediction, question, answer, discipline."""
    records, keys = keyed_records(df, ("index", "prediction", "question", "answer", "discipline"), what)
    groups = [required_text(r, "discipline", what).lower() for r in records]
    prompts = {k: judge_prompt(required_text(r, "question", what), required_text(r, "answer", what),
                               str(r["prediction"]))
               for k, r in zip(keys, records) if not failed_call(r["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_verdict(reply),
                            system=SYSTEM_SCORE_QA) if prompts else {}
    verdicts, methods = [], []
    for k in keys:
        outcome = outcomes.get(k)
        verdicts.append(outcome.value if outcome is not None else None)
        methods.append(INFERENCE_ERROR if outcome is None else JUDGE_ERROR if outcome.error is not None
                       else UNREAD if outcome.value is None else JUDGE)
    names = list(dict.fromkeys(g for g in groups if g in DISCIPLINES))
    metrics = verdict_figures(groups, verdicts, names, every_row=True)
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "discipline": groups, **verdict_columns(verdicts), "method": methods,
        "judge": pd.Series([o.last_reply if (o := outcomes.get(k)) else None for k in keys], dtype=object),
    })  # fmt: skip
    counts = judged_counts(methods, len(records), count_unread=True)
    notes = [f"judged yes/no and 0-5 by {judge.name} with VLMEvalKit's Video-MMLU QA texts (its default judge "
             "qwen-72b, Qwen2.5-72B-Instruct); a row without a verdict counts as not correct",
             "no VLMEvalKit figure: its Video_MMLU_QA evaluate reads a pred_response column its table does not have "
             "and stops with a KeyError; vlmkit sends the model's reply as the predicted answer"]
    notes += method_notes(per_sample, {
        UNREAD: "the judge's reply is not a dict with pred and score: no verdict",
        JUDGE_ERROR: "the judge call failed: no verdict this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: not asked, no verdict",
    })
    return verdict_result("video_mmlu_qa", per_sample=per_sample, group_column="discipline", names=names,
                          metrics=metrics, counts=counts, notes=notes)
