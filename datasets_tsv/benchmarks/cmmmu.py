"""CMMMU (CMMMU_VAL): VLMEvalKit's CMMMU (vlmeval/dataset/cmmmu.py at e8e78f05).

The prompt, by the row's `type`, as VLMEvalKit builds it: the row's images, then
- 选择: `问题: {question}\\nOptions:\\nA. {option1}\\nB. {option2}\\nC. {option3}\\nD. {option4}\\n` and the
  multiple-choice instruction (CHOICE_SUFFIX);
- 判断: the question, a line break and the true/false instruction (TRUE_FALSE_SUFFIX);
- anything else: the question, a line break and the fill-in instruction (FILL_SUFFIX).
Scoring: vlmkit.scoring.benchmarks.cmmmu.
"""

from __future__ import annotations

from typing import Any, ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

CHOICE_SUFFIX = ("请回答上述多项选择题，并选出正确选项。这些题目可能包括单选和多选题型。如果所提供的信息不足以确定一个明确的答案，"
                 "那么请根据可用的数据和你的判断来选择最可能正确的选项。")  # fmt: skip
TRUE_FALSE_SUFFIX = ("\n请回答上述判断题，并根据题目描述和所给的信息来判断问题中陈述的对错。如果信息不完整或不足以作出绝对判断，"
                     "请运用你的逻辑推理和现有信息来做出最可能的判断。")  # fmt: skip
FILL_SUFFIX = ("\n请回答上述填空题，并根据题目的要求和所提供的信息来给出最恰当的答案。如果信息不足以确切回答，"
               "那么请依据现有的数据和你的推理能力来填写最合理的答案。")  # fmt: skip


class CMMMUDataset(OwnRuleScoring, TSVDataset):
    """CMMMU (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "type", "category", "option1", "option2", "option3",
                                                 "option4")  # fmt: skip
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "type")
    rule_scorer: ClassVar[str] = "cmmmu"

    def prompt_text(self, line: dict[str, Any]) -> str:
        question, kind = self.text(line, "question"), self.text(line, "type")
        if kind == "选择":
            options = "".join(f"{letter}. {self.text(line, f'option{k}')}\n" for k, letter in enumerate("ABCD", 1))
            return f"问题: {question}\n" + "Options:\n" + options + CHOICE_SUFFIX
        return question + (TRUE_FALSE_SUFFIX if kind == "判断" else FILL_SUFFIX)
