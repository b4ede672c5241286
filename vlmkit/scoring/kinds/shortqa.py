"""The ShortQA family (LiveMMBench_*, hle, hle_verified, PathVQA_VAL/TEST, EMMA, EMMA_COT, MMESCI_*): each short
answer judged right or wrong against the ground truth by an LLM judge, as VLMEvalKit's ImageShortQADataset does.

The judge prompt (`shortqa_prompt`) is VLMEvalKit's ShortQA_prompt, character for character: the instructions, a
requirement line (empty for one answer), in-context examples, then the task with the question, the ground truth and
the response. English questions use `EVAL_TEMPLATE` with the five `EN_SINGLE_EXAMPLES`; a question with a CJK
character (U+4E00..U+9FFF) uses the Chinese template and examples. A ground truth written as a list (`[...]`, unless
the row's `answer_type` is `exactMatch` or `multipleChoice`) with more than one element is shown as the Python list,
with the multi-answer requirement and examples; a one-element list is shown as its element. (The English
single-answer template, examples and the English multi-answer requirement are in the facts file; the Chinese
template, the Chinese and multi-answer examples and the Chinese requirement are taken from VLMEvalKit's
vlmeval/dataset/utils/shortqa.py, which the facts file names but does not quote.)
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Asking and reading: up to 3 asks at temperature 0, 0.5, 1.0 (max_tokens 2048, VLMEvalKit's client default); a reply
is read when the text between `[Begin Correctness]` and `[End Correctness]`, lower-cased, contains exactly one of
`yes` / `no`. After 3 unread replies the row is a miss (`judge_unread`; VLMEvalKit: hit 0, "Fail to Judge").

Multiple-choice rows (the row fills option `A` and its answer is one character) are read by vlmkit.scoring.kinds.mcq
(`score_mcq` on those rows, never circular there): its rules, then its judge for the answers the rules cannot read
(VLMEvalKit: its MCQ rules, then its MCQ judge). A table with `g_index` is circular where a group has several rows: a
group (the rows whose `g_index` is a main row's index; the main row has index == g_index) is a hit only when every
row of it is; figures are over the main rows.

Report (VLMEvalKit's report_acc, `_acc.csv`): rows = split, columns Overall, then each `l2-category` and `category`
value (MMBench abbreviations applied), accuracy as a fraction 0..1. Primary: Overall.

Per row (EvalResult.per_sample): `index`, `hit`, `method` (`judge`, `judge_unread`, `judge_error`: a judge call
failed, a miss this run, asked again on the next run; `inference_error`: no prediction, not asked; for a choice row,
the method vlmkit.scoring.kinds.mcq reports: a rule's name, its judge's, or `unparsed`), `extracted` (the letter of a
choice row), `judge` (the judge's last reply; None when not asked); with `g_index`, also `group` and `group_hit`.
Counts: total, scored (rows or groups reported), hits, by_rule (choice rows read by rule), by_judge, unread
(`judge_unread` and `unparsed`), judge_errors, inference_errors; with `g_index`, groups (and orphan_rows).

Where vlmkit differs from VLMEvalKit (deliberately):
- without a judge VLMEvalKit crashes on a missing key (its exact-matching path never fills the results); vlmkit
  refuses in one line before scoring (datasets_tsv.kinds.judged) and never falls back to rules;
- the ground-truth list is read with ast.literal_eval, never eval(); a gold that does not parse as a literal list
  (or an empty list, on which VLMEvalKit fails) is shown as written;
- a missing prediction is an inference error, a miss, without asking the judge (VLMEvalKit judges the text `nan`);
- a failed judge call is never cached as a miss: the row is asked again on the next run;
- a choice row the rules and the judge cannot read is a miss, never a random letter;
- a multi-row `g_index` group whose rows are not all multiple choice is scored row by row, each row judged as its
  kind, instead of failing an assertion; rows of a group without a main row are not reported (a note lists them).

VLMEvalKit's figure (`EvalResult.vlmevalkit`) is not computed here (None): VLMEvalKit scores ShortQA with its judge
only, and its figure would need the judge's verdicts on VLMEvalKit's own prompts (the reply as its xlsx round trip
leaves it: `nan` for an empty or failed one) and its MCQ reading of the choice rows; vlmkit does not ask those.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_blank, is_missing, listed
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.breakdown import (
    MMBENCH_ABBREVIATIONS,
    group_means,
    keyed_records,
    split_category_table,
)
from vlmkit.scoring.kinds.mcq import METHODS as MCQ_METHODS
from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

JUDGE_TEMPERATURES = (0.0, 0.5, 1.0)  # VLMEvalKit: temperature = attempt x 0.5, 3 attempts
JUDGE_MAX_TOKENS = 2048
SCORER = "shortqa"
JUDGE, UNREAD, JUDGE_ERROR, INFERENCE_ERROR = "judge", "judge_unread", "judge_error", "inference_error"
UNPARSED = "unparsed"  # vlmkit.scoring.kinds.mcq's method for a choice nothing could read
RULE_METHODS = tuple(m for m in MCQ_METHODS if m != UNPARSED)  # vlmkit.scoring.kinds.mcq's rule readings
LITERAL_ANSWER_TYPES = ("exactMatch", "multipleChoice")  # answer types whose `[...]` gold is not a list
_CJK = re.compile("[\u4e00-\u9fff]")
_OPTION_COLUMNS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")

EVAL_TEMPLATE = """
You are an AI assistant tasked with evaluating whether a model's response correctly answers a given visual-language question.

You will be provided with:
1. The question (text only)
2. The model's response
3. The ground truth answer

Your task is to determine whether the model's response conveys the same meaning as the ground truth. The response is considered **correct** if:
- It has the same meaning as the ground truth, even if phrased differently.
- It provides additional relevant details without altering the original meaning.

The response is considered **wrong** if:
- It contradicts the ground-truth
- It misses essential information or include additional incorrect information.

Your evaluation should include the following fields:
- **Correctness**: Either `"yes"` (if correct) or `"no"` (if incorrect).
- **Reason**: A brief explanation of your judgment.

{requirement}

Here are some examples:
{examples}

Now please complete the following task:

[Begin Question]{question}[End Question]
[Begin Ground-Truth]{ground_truth}[End Ground-Truth]
[Begin Response]{response}[End Response]
"""

EVAL_TEMPLATE_CN = """
你是一名 AI 助理，负责评估模型的回答是否正确回答了给定的视觉语言问题。

你将被提供以下信息：
1. 问题（仅包含文本）
2. 模型的回答
3. 标准答案（Ground Truth）

你的任务是判断模型的回答是否与标准答案表达相同的含义。若满足以下条件，则认为回答是**正确的**：
- 回答的含义与标准答案相同，即使措辞不同。
- 回答提供了额外的相关细节，但没有改变原本的含义。

若满足以下条件，则认为回答是**错误的**：
- 回答与标准答案相矛盾。
- 回答遗漏了关键信息，或包含额外的错误信息。

你的评估应包含以下字段：
- **正确性（Correctness）**：值应为 `"yes"`（正确）或 `"no"`（错误）。
- **原因（Reason）**：对你的判断进行简要解释。

{requirement}

以下是一些示例：
{examples}

现在，请完成以下任务：
[Begin Question]{question}[End Question]
[Begin Ground-Truth]{ground_truth}[End Ground-Truth]
[Begin Response]{response}[End Response]
"""

REQUIREMENT_MULTI = (
    "The provided ground-truth is a list. The answer is correct if the model response contains and only contains all "
    "contents in the list (no other answer included)"
)
REQUIREMENT_MULTI_CN = "题目提供的标准答案是一个列表。如果模型回答包含且仅包含列表中的所有内容，则回答正确"


@dataclass(frozen=True)
class Example:
    """One in-context example: question, ground truth, response, correctness (yes/no), reason."""

    question: str
    answer: str
    prediction: str
    correctness: str
    reason: str


_ROOSEVELT = Example(
    'Please tell me the name of the man in this image, in the format of "[First Name] [Given Name]".',
    "Franklin D. Roosevelt", "Franklin Roosevelt", "yes",
    "The model response basically align with the ground-truth answer, just omitted the middle name. Thus the response "
    "is correct.",
)
_BOLT = Example(
    'Please tell me the name of the man in this image, in the format of "[First Name] [Given Name]".',
    "Usain Bolt", "Bolt", "no", "The question asks the model to output the ",
)
EN_SINGLE_EXAMPLES = (
    _ROOSEVELT,
    _BOLT,
    Example("Where did the text in this image originate from", "Ancient Egypt", "egypt", "yes",
            "The model response basically align with the ground-truth answer (egypt vs. Ancient Egypt). Thus the "
            "response is correct. "),
    Example("Name this building", "St. Peter's Basilica Church", "st peters basilica", "yes",
            "The model response basically align with the ground-truth answer. Thus the response is correct."),
    Example("Extract the text on the umbrella in the image", "keter", "ketter", "no",
            "The question requires the model to exactly extract the text on the umbrella. The model response does "
            "not contain the exact text on the umbrella (keter). Thus the response is incorrect. "),
)
EN_MULTIPLE_EXAMPLES = (
    _ROOSEVELT,
    _BOLT,
    Example("Name all countries besides this lake", "['Jordan', 'Israel', 'Palestine']", "Israel, Jordan", "no",
            "The model response does not contain all the countries besides this lake (missing Palestine). Thus the "
            "response is incorrect."),
    Example("Name this building, as well as the country that the building located in.",
            "['La Tour Eiffel (or Eiffel Tower)', 'France']", "Eiffel Tower, France", "yes",
            "The model response basically align with the ground-truth answer. Thus the response is correct."),
    Example("Name this attraction, as well as the country that this attraction located in. ",
            "['Notre Dame de Paris', 'France']", "Notre-Dame Cathedral, France", "yes",
            "The model response basically align with the ground-truth answer. Thus the response is correct."),
    Example("Who are the top three players in terms of goals scored for these teams' Top Team Scorers?",
            "['Mohamed Salah','Erling Haaland','Alexander Isak']",
            "The top three players in terms of goals scored for these teams' Top Team Scorers are: 1. Mohamed Salah - "
            "19 goals (Liverpool) 2. Erling Haaland - 18 goals (Manchester City) 3. Alexander Isak - 17 goals "
            "(Newcastle Utd)",
            "yes",
            "The model response align with the ground-truth answer, and include some additional information including "
            "the team and number of goals of the player. Thus the response is correct."),
)
_DING = Example("图中文物的具体名称是什么？", "司母戊鼎", "鼎", "no", "问题询问文物的具体名称，回答仅提及了鼎，但未提及司母戊鼎，因此回答错误。")
CN_SINGLE_EXAMPLES = (
    Example("请直接告诉我图中右侧人物的名字", "姚明", "Yao Ming", "yes", "回答中用英语提及了人物的名称 Yao Ming，因此回答正确。"),
    Example("图中右起第几位女士的身高最高？", "右起第一位", "1", "yes", "回答中提及了第一位 (依据提问，默认为右起)，因此回答正确。"),
    _DING,
    Example("图中的景点位于哪个省份？", "四川", "图中的景点是九寨沟，位于中国四川省阿坝藏族羌族自治州。", "yes",
            "回答提及景点位于四川省，与标准答案一致，且更加详尽，因此回答正确"),
)
CN_MULTIPLE_EXAMPLES = (
    _DING,
    Example("JiaQi在2025年与哪些战队交过手？", "['\u2060Ninjas in Pyjamas','Invictus Gaming']",  # U+2060 as VLMEvalKit has it
            "根据提供的图片信息，JiaQi在2025年与以下战队交过手：\n- TES Challenger\n- \u2060Ninjas in Pyjamas\n- Invictus Gaming",
            "no",
            "依据问题与标准答案，JiaQi 在 2025 年应仅与 Ninjas in Pyjamas 与 Invictus Gaming 两支战队交过手。模型回复中，"
            "TES Challenger 未在标准答案中提及，因此回答错误。"),
    Example("根据图中内容，请列出全部在 2022年7月份到10月份间的开源模型？", "['CodeGeeX','GLM','Flan-T5','NLLB']",
            "根据图中内容，2022年7月份到10月份间的开源模型有：Tk-Instruct, Luminous, GLM, NLLB", "no",
            "根据问题与标准答案，2022年7月份到10月份间的开源模型有 CodeGeeX, GLM, Flan-T5, NLLB。模型回复中，"
            "Tk-Instruct 与 Luminous 未在标准答案中提及，且遗漏了 cODEGeeX 与 Flan-T5，因此回答错误。"),
    Example("图中的景点是什么，位于哪个城市", "['少林寺', '河南登封市']",
            "The scenic spot in the picture is Shaolin Temple, located in Dengfeng City, Henan Province.", "yes",
            "答案中提及了少林寺及河南省登封市，因此回答正确"),
    Example("图中中央的物品是什么，它最流行于中国的南方还是北方？", "['铜火锅', '北方']", "图中中央的物品是火锅，它最流行于中国的北方。",
            "yes", "回答中提及了火锅及北方，因此回答正确。"),
    Example("请直接告诉我图中右侧人物的名字", "['姚明', '易建联']", "Yao Ming & Jianlian Yi", "yes",
            "回答中用英语提及了姚明与易建联的名字，与标准答案一致，因此回答正确。"),
)


def examples_text(examples: Sequence[Example]) -> str:
    """VLMEvalKit's ICE_builder: each example as its five tagged lines, then a blank line."""
    out = ""
    for number, eg in enumerate(examples, 1):
        out += (f"Example {number}:\n"
                f"[Begin Question]{eg.question}[End Question]\n"
                f"[Begin Ground-Truth]{eg.answer}[End Ground-Truth]\n"
                f"[Begin Response]{eg.prediction}[End Response]\n"
                f"[Begin Correctness]{eg.correctness}[End Correctness]\n"
                f"[Begin Reason]{eg.reason}[End Reason]\n\n")
    return out


def is_chinese(text: str) -> bool:
    """VLMEvalKit's cn_string: the text has a character in U+4E00..U+9FFF."""
    return _CJK.search(text) is not None


def gold_answers(answer: str, answer_type: str | None = None) -> list[Any]:
    """The ground truth as VLMEvalKit reads it: a `[...]` text (unless answer_type is exactMatch/multipleChoice) is a
    Python list literal; anything else, or a list literal that does not parse or is empty, is the one answer."""
    if answer[:1] == "[" and answer[-1:] == "]" and answer_type not in LITERAL_ANSWER_TYPES:
        try:
            parsed = ast.literal_eval(answer)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            parsed = None
        if isinstance(parsed, list) and parsed:
            return parsed
    return [answer]


def shortqa_prompt(question: str, answer: str, prediction: str, answer_type: str | None = None) -> str:
    """VLMEvalKit's ShortQA judge prompt for one row (see the module docstring)."""
    chinese = is_chinese(question)
    golds = gold_answers(answer, answer_type)
    multi = len(golds) > 1
    if chinese:
        examples = CN_MULTIPLE_EXAMPLES if multi else CN_SINGLE_EXAMPLES
        requirement = REQUIREMENT_MULTI_CN if multi else ""
    else:
        examples = EN_MULTIPLE_EXAMPLES if multi else EN_SINGLE_EXAMPLES
        requirement = REQUIREMENT_MULTI if multi else ""
    template = EVAL_TEMPLATE_CN if chinese else EVAL_TEMPLATE
    return template.format(question=question, examples=examples_text(examples), requirement=requirement,
                           ground_truth=str(golds) if multi else str(golds[0]), response=prediction)


def read_correctness(reply: str) -> bool | None:
    """The judge's verdict: the text between `[Begin Correctness]` and `[End Correctness]` (after any think block),
    lower-cased, holding exactly one of `yes` / `no` (VLMEvalKit's substring test); None otherwise."""
    text = answer_part(reply or "")
    begin, end = "[Begin Correctness]", "[End Correctness]"
    if begin not in text or end not in text:
        return None
    verdict = text.split(begin)[1].split(end)[0].strip().lower()
    yes, no = "yes" in verdict, "no" in verdict
    return yes if yes != no else None


# -- the scorer -------------------------------------------------------------------------------------------------
@dataclass
class _Row:
    index: Any
    key: str
    hit: bool = False
    method: str = ""
    extracted: str | None = None
    reply: str | None = None


def is_choice_row(row: dict[str, Any]) -> bool:
    """VLMEvalKit's test for a multiple-choice row of a ShortQA table: option A is filled and the answer is one
    character."""
    answer = cell_text(row.get("answer"))
    return not is_blank(row.get("A")) and answer is not None and len(answer) == 1


def score_shortqa(df: pd.DataFrame, judge: Judge, *, what: str = "ShortQA") -> EvalResult:
    """Judge every answer (see the module docstring). Columns: `index`, `question`, `answer`, `prediction`
    (None/NaN = inference error); optional option columns A..Z, `answer_type`, `g_index`, `split`, `category`,
    `l2-category`. JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "prediction"), what)

    rows: list[_Row] = []
    open_prompts: dict[str, str] = {}
    choice_positions: list[int] = []
    for pos, (key, record) in enumerate(zip(keys, records)):
        row = _Row(record["index"], key)
        rows.append(row)
        question, answer = _required(record, "question", what), _required(record, "answer", what)
        pred = record["prediction"]
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            row.method = INFERENCE_ERROR
        elif is_choice_row(record):
            choice_positions.append(pos)
        else:
            answer_type = cell_text(record.get("answer_type"))
            open_prompts[key] = shortqa_prompt(question, answer, str(pred), answer_type)

    outcomes = judge_rounds(judge, open_prompts, lambda _key, reply: read_correctness(reply),
                            temperatures=JUDGE_TEMPERATURES, max_tokens=JUDGE_MAX_TOKENS) if open_prompts else {}
    for row in rows:
        if row.key in outcomes:
            _apply(row, outcomes[row.key])
    choice_notes = _read_choices(df, choice_positions, rows, judge) if choice_positions else []

    per_sample = pd.DataFrame({
        "index": [row.index for row in rows],
        "hit": [row.hit for row in rows],
        "method": [row.method for row in rows],
        "extracted": pd.Series([row.extracted for row in rows], dtype=object),
        "judge": pd.Series([row.reply for row in rows], dtype=object),
    })
    return _result(df, per_sample, rows, judge, what, choice_notes)


def _read_choices(df: pd.DataFrame, positions: list[int], rows: list[_Row], judge: Judge) -> list[str]:
    """Read the choice rows as vlmkit.scoring.kinds.mcq reads MCQ answers (its rules, then its judge), row by row (never
    circular there: `g_index` groups are formed here); fills their hit / method / extracted / judge; its notes."""
    columns = [c for c in ("index", "question", "hint", "answer", "prediction", *_OPTION_COLUMNS) if c in df.columns]
    choices = df.iloc[positions][columns].reset_index(drop=True)
    read = score_mcq(choices, circular=False, judge=judge)
    samples = read.per_sample.reset_index(drop=True)
    replies = samples["judge"].tolist() if "judge" in samples.columns else [None] * len(samples)
    for pos, hit, method, letter, reply in zip(positions, samples["hit"].tolist(), samples["method"].tolist(),
                                               samples["extracted"].tolist(), replies):
        row = rows[pos]
        row.hit, row.method = bool(hit), str(method)
        row.extracted = None if is_missing(letter) else str(letter)
        row.reply = None if is_missing(reply) else str(reply)
    return [f"choice rows: {note}" for note in read.notes]


def _apply(row: _Row, outcome: JudgeOutcome[bool]) -> None:
    row.reply = outcome.last_reply
    if outcome.error is not None:
        row.method = JUDGE_ERROR
    elif outcome.value is None:
        row.method = UNREAD
    else:
        row.method, row.hit = JUDGE, bool(outcome.value)


def _required(record: dict[str, Any], field: str, what: str) -> str:
    text = cell_text(record.get(field))
    if text is None:
        raise ValueError(f"{what}: row index {record['index']}, field `{field}`: missing")
    return text


def _result(df: pd.DataFrame, per_sample: pd.DataFrame, rows: list[_Row], judge: Judge, what: str,
            choice_notes: list[str]) -> EvalResult:
    keep = [c for c in ("split", "l2-category", "category") if c in df.columns]
    units = pd.DataFrame({c: df[c].to_numpy() for c in keep})
    units["hit"] = per_sample["hit"].to_numpy(dtype=bool)
    notes = [(f"judged by {judge.name} with VLMEvalKit's ShortQA prompt (up to 3 asks); choice rows read by "
             "vlmkit's MCQ rules, then the MCQ judge")]
    counts: dict[str, int] = {"total": len(rows)}
    if "g_index" in df.columns:
        units, orphans = _circular(df, per_sample, units, what)
        counts["groups"] = len(units)
        if orphans:
            counts["orphan_rows"] = len(orphans)
            notes.append(f"{len(orphans)} row(s) belong to no main row's g_index group and are not reported: index "
                         f"{listed(orphans)}")
    methods = Counter(per_sample["method"])
    counts.update(scored=len(units), hits=int(units["hit"].sum()),
                  by_rule=sum(methods[m] for m in RULE_METHODS), by_judge=methods[JUDGE],
                  unread=methods[UNREAD] + methods[UNPARSED], judge_errors=methods[JUDGE_ERROR],
                  inference_errors=methods[INFERENCE_ERROR])
    explained = (
        (UNREAD, ("the judge's reply was never readable: a miss (VLMEvalKit: 'Fail to Judge' for a short answer, a "
                 "random letter for a choice)")),
        (UNPARSED, "a choice the MCQ rules could not read and no judge read: a miss"),
        (JUDGE_ERROR, "the judge call failed: a miss this run, asked again on the next run"),
        (INFERENCE_ERROR, "no prediction: a miss, not sent to the judge (VLMEvalKit judges the text 'nan')"),
    )
    for method, words in explained:
        listed_rows = per_sample.loc[per_sample["method"] == method, "index"].tolist()
        if listed_rows:
            notes.append(f"{len(listed_rows)} row(s) {method}: {words}; index {listed(listed_rows)}")
    notes += choice_notes
    if len(units) == 0:
        raise ValueError(f"{what}: no main rows (index == g_index) to report")
    groups = ("l2-category", "category")
    return EvalResult(
        scorer=SCORER,
        metrics=group_means(units, "hit", groups=groups, rename=MMBENCH_ABBREVIATIONS),
        primary="Overall",
        per_sample=per_sample,
        table=split_category_table(units, "hit", groups=groups, rename=MMBENCH_ABBREVIATIONS),
        table_suffix="acc",
        counts=counts,
        notes=notes,
        scale=Scale(FRACTION),
    )


def _circular(df: pd.DataFrame, per_sample: pd.DataFrame, units: pd.DataFrame, what: str
              ) -> tuple[pd.DataFrame, list[Any]]:
    """Group hits (every row of a g_index group right) on the main rows; (main-row units, orphan row indices)."""
    index_keys = [index_key(v) for v in df["index"].tolist()]
    group_keys = []
    for pos, value in enumerate(df["g_index"].tolist()):
        if is_missing(value):
            raise ValueError(f"{what}: row index {df['index'].iloc[pos]}, field `g_index`: missing")
        group_keys.append(index_key(value))
    mains = {k for k, g in zip(index_keys, group_keys) if k == g}
    hits = per_sample["hit"].to_numpy(dtype=bool)
    group_hit = pd.Series(hits).groupby(group_keys).all()
    per_sample["group"] = df["g_index"].to_numpy()
    per_sample["group_hit"] = [bool(group_hit[g]) for g in group_keys]
    is_main = np.array([k == g for k, g in zip(index_keys, group_keys)], dtype=bool)
    orphans = [idx for idx, g in zip(df["index"].tolist(), group_keys) if g not in mains]
    units = units.loc[is_main].reset_index(drop=True)
    units["hit"] = per_sample["group_hit"].to_numpy(dtype=bool)[is_main]
    return units, orphans
