"""HiPhO: physics olympiad problems (IPhO, EuPhO, APhO, PanPhO, NBPhO, F=MA, PanMechanics; HiPhO_ALL), scored on
their marking schemes and answers by an LLM judge (vlmkit.scoring.benchmarks.hipho).

The prompt is VLMEvalKit's (HiPhODataset.build_prompt, vlmeval/dataset/utils/hipho_prompt_inference.py): the row's
image when it has one, then the competition instructions (`PROMPT_EN`, or `PROMPT_ZH` for `language="zh"`: the
PanMechanics rows of the catalog) with `{context}`, `{problem}` and `{information}` replaced by the row's `context`,
`question` and `information` (blank cells: empty text), in that order, character for character, the doubled braces
of `\\boxed{{answer}}` included (VLMEvalKit fills the template with str.replace, so they reach the model doubled).

The data: VLMEvalKit loads the Hugging Face dataset HY-Wan/HiPhO (one split per competition; HiPhO_ALL is the
13 splits together with a `SUB_DATASET` column naming each row's split). vlmkit reads a TSV of the same columns at
$LMUData/<name>.tsv (no download): `index`, `image` (base64, the split's `image_question`; blank for a problem without
a figure, which VLMEvalKit also sends without an image), `context`, `question`, `information`, `answer` (a list of
reference answers), `points` (a list, one per answer), `marking` (a list of criteria, or of alternative schemes),
and for HiPhO_ALL `SUB_DATASET`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.judged import JudgedDataset

PROMPT_EN = r"""You are participating in a high school physics competition.
Please read the following question carefully and provide a clear, step-by-step solution with full reasoning.

Context (if applicable):
{context}

Problem:
{problem}

Useful information (formulas, constants, units, if applicable):
{information}

Instructions:
1. Use LaTeX to format all variables, equations, and calculations.
2. Enclose your full reasoning process within <think> </think> tags.
3. Provide the final answer within <answer> </answer> tags, using the format
   of [\boxed{{answer}}]. Do not include units inside the box.
4. For multiple sub-questions, list the answers in order using the format:
   [\boxed{{answer1}}, \boxed{{answer2}}, ...].
5. For multiple-choice questions, provide the final selected option(s) in the
   boxed answer instead of the calculation result (e.g., [\boxed{{A}}]).

Example of Output:
<think>
Step 1: Analyze the problem... Step 2: Apply the relevant equations...
</think>
<answer>
[\boxed{{A}}, \boxed{{3.2}}]
</answer>
"""

PROMPT_ZH = r"""你正在参加高中物理竞赛。
请仔细阅读下列题目，结合上下文信息，详细推导并给出清晰、有条理的解题步骤与完整的逻辑推理过程。

背景信息（如有）：
{context}

题目内容：
{problem}

可用信息（如物理公式、常数、单位等）：
{information}

作答要求：
1. 所有物理量、公式和计算过程须使用 LaTeX 格式书写。
2. 将完整的推理过程用 <think> 和 </think> 标签括起来。
3. 将最终答案置于 <answer> 和 </answer> 标签中，答案格式为 [\boxed{{答案}}]，方框内不包含单位。
4. 对于包含多个小问的题目，按顺序列出所有答案，格式为：[\boxed{{答案1}}, \boxed{{答案2}}, ...]。
5. 对于选择题，请在答案的方框中给出最终选择的选项，而不是计算结果（例如：[\boxed{{A}}]）。

输出示例:
<think>
第一步: 分析问题... 第二步: 运用相关公式...
</think>
<answer>
[\boxed{{A}}, \boxed{3.2}]
</answer>
"""

PROMPTS = {"en": PROMPT_EN, "zh": PROMPT_ZH}


def hipho_prompt(template: str, context: str, problem: str, information: str) -> str:
    """VLMEvalKit's filling: `{context}`, then `{problem}`, then `{information}` replaced in turn."""
    return template.replace("{context}", context).replace("{problem}", problem).replace("{information}", information)


class HiPhODataset(JudgedDataset):
    """A HiPhO competition (or HiPhO_ALL): VLMEvalKit's prompt in `language` (en, zh), scored by the judge."""

    judge_scorer = "HiPhO marking + answers (LLM judge)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def __init__(self, name: str, *, language: str = "en", **kwargs: Any) -> None:
        if language not in PROMPTS:
            raise ValueError(f"{name}: language {language!r}; choose one of {', '.join(PROMPTS)}")
        self.language = language
        self.kind = "vqa"
        self.scorer = None
        self.question_column = "question"
        self.suffix = ""
        self.prompt_columns = ("question",)
        TSVDataset.__init__(self, name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        def cell(column: str) -> str:
            value = line.get(column)
            return "" if is_blank(value) else str(value)

        return hipho_prompt(PROMPTS[self.language], cell("context"), cell("question"), cell("information"))

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.hipho import score_hipho

        return score_hipho(df, judge, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "hipho", "language": self.language}
