"""SimpleVQA as VLMEvalKit scores it: a judge grades each reply correct / incorrect / not attempted
(vlmeval/dataset/simplevqa.py get_scores and utils/simplevqa.py SimpleVQAEval at e8e78f05).

Judge: VLMEvalKit's Chinese grading prompt (GRADING_PROMPT, verbatim, its indentation kept) with the row's question,
its answer and `\n[预测答案0]：{reply}`, asked once at temperature 1. The reply is read as VLMEvalKit reads it:
```json / ```python / ``` removed, stripped, a `}` added when it does not end with one, then parsed as JSON; the
value of its first key is the verdict (a dict: its `conclusion`), `**` removed: 正确 (correct), 错误 (incorrect),
未尝试 (not attempted); any other text longer than 3 characters is not attempted. A reply that is no JSON object,
and any shorter unknown text, is counted in no class (VLMEvalKit's parse failure `答案解析失败`), but in the total.
Figures (fractions; VLMEvalKit rounds the first three to 4 places and computes the rest from the rounded values):
`is_correct`, `is_incorrect`, `is_not_attempted` (each class's count over all rows), `is_given_attempted` (correct +
incorrect), `accuracy_given_attempted` (correct / given attempted, 0 when none) and the headline `f1`, the harmonic
mean of accuracy_given_attempted and is_correct.

Where vlmkit differs: VLMEvalKit always asks gpt-4o through an OpenAI client of its own (OPENAI_API_KEY /
OPENAI_API_BASE), whatever judge the run names; vlmkit asks the run's judge with the same prompt and temperature. A
failed call is not sent to the judge and counts as not attempted (VLMEvalKit sends its failure text); a failed judge
call is a judge error, counted in no class (as VLMEvalKit's exception path does) and asked again by the next run.
"""

from __future__ import annotations

import json

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE_ERROR, judged_counts
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

JUDGE_TEMPERATURE = 1.0
CLASSES = {"正确": "is_correct", "错误": "is_incorrect", "未尝试": "is_not_attempted"}
PARSE_FAILED = "答案解析失败"
NOT_ATTEMPTED = "未尝试"

# VLMEvalKit's COMPARE_ANSWER_PROMPT (after its .strip()), verbatim; str.format fills question, answer, candidates
GRADING_PROMPT = """请根据给定问题、标准答案和模型预测的答案来评估模型的回答是否正确。您的任务是将结果评定为：【正确】、【错误】或【未尝试】。
            首先，我们将列出每个评定类别的示例，然后请您对新问题的预测答案进行评定。
            ## 以下是【正确】的答复示例：
            ```
            问题：图中人物（贝拉克·奥巴马）的孩子叫什么名字？
            标准答案：玛丽亚·奥巴马和萨莎·奥巴马
            模型预测1：Malia Obama and Sasha Obama
            模型预测2：玛丽亚和萨沙
            模型预测3：大多数人会说是玛丽亚和萨莎，但我不确定，需要再确认
            模型预测4：巴拉克·奥巴马有两个女儿，她们分别是玛丽亚·安和娜塔莎·玛丽安，但通常称作玛丽亚·奥巴马和萨莎·奥巴马。玛丽亚出生于1998年7月4日，萨莎出生于2001年6月10日。
            ```
            这些答复均为【正确】，因为：
            - 完整地包含了标准答案中的重要信息。
            - 不包含任何与标准答案矛盾的信息。
            - 只关注语义内容，中英文，大小写、标点、语法和顺序不重要。
            - 答复中出现模糊语句或猜测是可以接受的，前提是包含了标准答案且不含有不正确信息或矛盾。

            ## 以下是【错误】的答复示例：
            ```
            问题：图中人物（贝拉克·奥巴马）的孩子叫什么名字？
            标准答案：玛丽亚·奥巴马和萨莎·奥巴马
            模型预测1：玛丽亚
            模型预测2：玛丽亚、萨莎和苏珊
            模型预测3：巴拉克·奥巴马没有孩子
            模型预测4：我认为是玛丽亚和萨莎。或者是玛丽亚和杰基。或者是乔伊和玛丽亚。
            模型预测5：虽然我不知道他们的确切名字，但能说出巴拉克·奥巴马有三个孩子。
            模型预测6：你可能是想说贝茜和奥利维亚。不过您应通过最新的参考资料确认详细信息。那是正确的答案吗？
            ```
            这些答复均为【错误】，因为：
            - 答复中包含与标准答案矛盾的事实陈述。即使在陈述中略带保留（例如：“可能是”，“虽然我不确定，但我认为”），也视为错误。

            ## 以下是【未尝试】的答复示例：
            ```
            问题：图中人物（贝拉克·奥巴马）的孩子叫什么名字？
            标准答案：玛丽亚·奥巴马和萨莎·奥巴马
            模型预测1：我不知道。
            模型预测2：我需要更多关于您所指奥巴马的上下文。
            模型预测3：不查阅网络我无法回答这个问题，不过我知道巴拉克·奥巴马有两个孩子。
            模型预测4：巴拉克·奥巴马有两个孩子。我知道其中一个叫玛丽亚，但我不确定另一个的名字。
            模型预测5：我无法识别图中的人物。
            模型预测6：N/A。
            ```
            这些答复均为【未尝试】，因为：
            - 没有包含标准答案中的重要信息。
            - 回复中没有与标准答案矛盾的陈述。
            只返回字母”A”、”B”或”C”，无须添加其他文本。

            另外注意以下几点：
            - 对于标准答案为数字的问题，预测答案应和标准答案一致。例如，考虑问题“金山铁路黄浦江特大桥的全长是多少米？”，标准答案为“3518.17”：
            - 预测答案“3518”、“3518.1”、“3518.17”均为【正确】。
            - 预测答案“3520”和“3600”均为【错误】。
            - 预测答案“大约3500米”和“超过3000米”被视为【未尝试】，因为它们既不确认也不与标准答案矛盾。
            - 如果标准答案包含比问题更多的信息，预测答案只需包含问题中提到的信息。
            - 例如，考虑问题“菱镁矿的主要化学成分是什么？”,标准答案为“碳酸镁（MgCO3）”。“碳酸镁”或“MgCO3”均视为【正确】答案。
            - 如果从问题中明显可以推断出预测答案省略的信息，那么算作【正确】。
            - 例如，问题“巴鲁米尼的努拉吉遗迹在1997年被联合国教科文组织列为世界文化遗产，那么这遗址在哪个地区？”标准答案为“意大利撒丁岛”，预测答案“撒丁岛”被视为【正确】。
            - 如果能明显看出名字翻译版本不同但是是同一个人也认为【正确】。
            - 例如，如果标准答案是“Robinson”，那么回答鲁滨逊或者鲁滨孙均【正确】。
            - 预测答案和标准答案对应的是同一事物，但是称呼不同，如“天坛”和“祈年殿”，那么算作【正确】

            ## 下面是一个新的问题示例。对每一个预测答案，请只回复"正确"、"错误"、"未尝试"之一，不要道歉或纠正自己的错误，只需要评估该回答。
            ```
            问题: {question}
            正确答案: {answer}
            预测答案: {candidates}
            ```

            请严格按照以下格式回复，以JSON格式返回一个字典,而且字典第一层key不要替换为具体答案。不要返回其他任何内容。
            [回复格式]:
            ```json
            {{
                "预测答案0": "整体结论，只返回'正确','错误','未尝试'中的一个，无须添加其他文本",
                "预测答案1": "整体结论，只返回'正确','错误','未尝试'中的一个，无须添加其他文本",
                ...
            }}
            ```"""


def grading_prompt(question: str, answer: str, reply: str) -> str:
    return GRADING_PROMPT.format(question=question, answer=answer, candidates="\n[预测答案0]：{}".format(reply))


def verdict(reply: str) -> str:
    """The judge's verdict as VLMEvalKit reads it (module docstring); PARSE_FAILED when it cannot."""
    text = reply.replace("```json", "").replace("```python", "").replace("```", "").strip()
    try:
        if text[-1] != "}":
            text += "}"
        parsed = json.loads(text)
        first = next(iter(parsed.values()), None) if isinstance(parsed, dict) else None
    except (IndexError, ValueError, AttributeError):
        return PARSE_FAILED
    if parsed == {}:
        return ""
    if isinstance(first, dict):
        return str(first.get("conclusion", PARSE_FAILED)).replace("**", "")
    if not isinstance(first, str):
        return PARSE_FAILED
    if first in CLASSES:
        return first
    first = first.replace("**", "")
    return NOT_ATTEMPTED if len(first) > 3 else first


def figures(verdicts: list[str]) -> dict[str, float]:
    """SimpleVQAEval's aggregate from the rows' verdicts (those outside CLASSES count in no class)."""
    amount = len(verdicts)
    out = {name: round(sum(v == key for v in verdicts) / amount, 4) for key, name in CLASSES.items()}
    out["is_given_attempted"] = round(out["is_correct"] + out["is_incorrect"], 4)
    given = out["is_given_attempted"]
    out["accuracy_given_attempted"] = out["is_correct"] / given if given > 0 else 0
    both = out["accuracy_given_attempted"] + out["is_correct"]
    out["f1"] = 2 * out["accuracy_given_attempted"] * out["is_correct"] / both if both > 0 else 0
    return {k: float(v) for k, v in out.items()}


def score_simplevqa(df: pd.DataFrame, judge: Judge, *, what: str = "SimpleVQA") -> EvalResult:
    """Grade every reply with the judge (module docstring). Columns: `index`, `question`, `answer`, `prediction`
    (None/NaN = a failed call). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "prediction"), what)
    prompts = {key: grading_prompt(required_text(row, "question", what), required_text(row, "answer", what),
                                   str(row["prediction"]))
               for key, row in zip(keys, records) if not failed_call(row["prediction"])}  # fmt: skip
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: reply,
                            temperatures=(JUDGE_TEMPERATURE,)) if prompts else {}  # fmt: skip
    verdicts, methods, replies = [], [], []
    for key in keys:
        outcome = outcomes.get(key)
        if outcome is None:
            verdicts.append(NOT_ATTEMPTED)
            methods.append(INFERENCE_ERROR)
            replies.append(None)
        elif outcome.error is not None:
            verdicts.append(PARSE_FAILED)
            methods.append(JUDGE_ERROR)
            replies.append(outcome.last_reply)
        else:
            found = verdict(outcome.last_reply or "")
            verdicts.append(found)
            methods.append("judge" if found in CLASSES else "judge_unread")
            replies.append(outcome.last_reply)
    metrics = figures(verdicts)
    indices = [row["index"] for row in records]
    notes = []
    for method, says in ((INFERENCE_ERROR, "failed call(s) were not sent to the judge and count as not attempted"),
                         (JUDGE_ERROR, "row(s) could not be judged (the judge call failed): in no class this run"),
                         ("judge_unread", "judge reply(ies) give no verdict VLMEvalKit counts: in no class")):
        which = [i for i, m in zip(indices, methods) if m == method]
        if which:
            notes.append(f"{len(which)} {says}: index {listed(which)}")
    per_sample = pd.DataFrame({"index": indices, "verdict": verdicts, "method": methods,
                               "judge": pd.Series(replies, dtype=object)})  # fmt: skip
    counts = {**judged_counts(methods, len(records), count_unread=True), "by_rule": 0}
    return EvalResult(
        scorer="simplevqa", metrics=metrics, primary="f1", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
    )  # fmt: skip
