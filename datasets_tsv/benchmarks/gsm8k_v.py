"""GSM8K-V: VLMEvalKit's GSM8KVDataset class (vlmeval/dataset/gsm8k_v.py at e8e78f05).

The prompt, as VLMEvalKit builds it, by `mode` (a catalog option; VLMEvalKit reads the environment variable
GSM8K_V_MODE, default `visual_implicit`): `visual_implicit`: the row's images, then `IMPLICIT_PROMPT` (the problem is
in the images); `visual_explicit`: the images, then `EXPLICIT_PROMPT` with `modify_scene_related_question`.
VLMEvalKit's `text_only` mode (a blank 10x10 image and `original_question`) and `all` (the table three times) are not
offered. Scoring: vlmkit.scoring.benchmarks.gsm8k_v, by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

_FINAL = ("- If the answer can be expressed as a whole number (integer), provide it as an integer\n")
_CLOSE = ('Please think step by step. After your reasoning, output your final answer on a new line starting with '
          '"FINAL ANSWER: " followed by the number only.')  # fmt: skip
IMPLICIT_PROMPT = ("You are an expert at solving mathematical problems from visual information. The images contain a "
                   "complete math problem. Please carefully read and understand the problem from the images, When "
                   "providing your final answer:\n" + _FINAL + _CLOSE)  # fmt: skip
EXPLICIT_PROMPT = ("You are an expert at solving mathematical word problems. Please solve the following problem step "
                   "by step, showing your reasoning.\n\nWhen providing your final answer:\n" + _FINAL
                   + "Problem: {}\n\n" + _CLOSE)  # fmt: skip
MODES = ("visual_implicit", "visual_explicit")


class GSM8KVDataset(OwnRuleScoring, TSVDataset):
    """GSM8K-V (module docstring)."""

    rule_scorer: ClassVar[str] = "gsm8k_v"

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def __init__(self, name: str, *, mode: str = "visual_implicit", **kwargs: Any) -> None:
        if mode not in MODES:
            raise ValueError(f"{name}: mode {mode!r}; choose one of {', '.join(MODES)}")
        self.mode = mode
        self.prompt_columns = ("modify_scene_related_question",) if mode == "visual_explicit" else ()
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        if self.mode == "visual_explicit":
            return EXPLICIT_PROMPT.format(self.text(line, "modify_scene_related_question"))
        return IMPLICIT_PROMPT

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "gsm8k_v", "mode": self.mode}
