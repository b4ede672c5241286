"""Multiple choice whose VLMEvalKit scorer is one reading rule and no judge: MME-RealWorld (-CN, -Lite),
VisualPuzzles, PuzzleVQA, VisuLogic, MedQ-DEG-Bench, MedQ-Bench MCQ. One class; the benchmark's prompt, reading rule,
answer form and report are catalog options (vlmkit.scoring.kinds.regex_mcq has the rules):

- `prompt`: PROMPTS below (mme_realworld, mme_realworld_cn, visualpuzzles, puzzlevqa, visulogic, medqdeg,
  medqbench), each VLMEvalKit's text character for character (MME-RealWorld: `{question} {options}\n{instruction}`,
  the options text being the `multi-choice options` cell, or, for the Lite TSV's list literal, VLMEvalKit's
  `The choices are listed below:\n` and the options one per line: mme_realworld_choices).
- `rule`, `answer_match`, `letters`, `report`, `groups` (a list of [column, name template]), `scale`: the scorer's.
- `image_subdir` with `--data-root`: images from the benchmark's snapshot (datasets_tsv.io.snapshot_images).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank, is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import OPTION_LETTERS
from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.io.tsv_read import DatasetError

MME_RW_EN = (
    "Select the best answer to the above multiple-choice question based on the image. "
    "Respond with only the letter (A, B, C, D, or E) of the correct option. \nThe best answer is:"
)
MME_RW_CN = "根据图像选择上述多项选择题的最佳答案。只需回答正确选项的字母（A, B, C, D 或 E）。\n最佳答案为："
PUZZLE_TAIL = (
    "\nSolve the multiple-choice question and then answer with the option letter from the given choices. "
    "The last line of your response should be of the following format:"
    "'Answer: $LETTER' (without quotes) where LETTER is one of options. Think step by step before answering."
)
VISULOGIC_TAIL = (
    "\nSolve the complex visual logical reasoning problem through step-by-step reasoning."
    "Think about the reasoning process first and answer the question following this format: Answer: \\boxed{$LETTER}"
)
MEDQDEG_TAIL = "Answer with the option letter from the given choices directly."
MEDQBENCH_HEAD = "Please carefully observe this medical image and answer the following question:\n\n"
MEDQBENCH_TAIL = "Answer directly only with the option **letter** from the given choices. "


def _options(line: dict[str, Any], letters: str) -> str:
    """`A. text` lines for the option columns among `letters` the row fills (texts stripped, blank ones left out)."""
    return "\n".join(f"{k}. {str(line[k]).strip()}" for k in letters if k in line and not is_blank(line[k]))


MME_RW_LEAD_EN = "The choices are listed below:\n"
MME_RW_LEAD_CN = "选项如下所示:\n"


def mme_realworld_choices(ds: RegexMCQDataset, line: dict[str, Any], lead: str) -> str:
    """The row's `multi-choice options` as VLMEvalKit puts it in the prompt. The full and CN TSVs hold the text
    already (`The choices are listed below:\n(A) ...`); the Lite TSV holds a Python list literal of the options
    (`['(A) 3', '(B) 5', ...]`), which VLMEvalKit's MMERealWorld.load_data turns into `lead` + the options joined by
    newlines (English for the Lite TSV; vlmkit gives a list under the CN prompt the CN lead, as VLMEvalKit's
    generate_tsv writes it)."""
    cell = ds.text(line, "multi-choice options")
    if not cell.lstrip().startswith("["):
        return cell
    try:
        items = ast.literal_eval(cell.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        items = None
    if not isinstance(items, (list, tuple)) or not all(isinstance(t, str) for t in items):
        raise DatasetError(f"{ds._where(line, 'multi-choice options')}: starts with `[` but is not a list of option "
                           "texts")
    return lead + "\n".join(items)


def _mme_realworld(system: str, lead: str):
    def prompt(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
        return f"{ds.text(line, 'question')} {mme_realworld_choices(ds, line, lead)}\n{system}"

    return prompt


def _visualpuzzles(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
    cell = line.get("options")
    if is_missing(cell):
        options = "Options: Choose from (A) (B) (C) (D) in the image."
    else:  # VLMEvalKit takes every single-quoted piece of the cell
        items = re.findall(r"'(.*?)'", str(cell))
        options = "Options:\n" + "\n".join(f"({OPTION_LETTERS[i]}) {t}" for i, t in enumerate(items))
    return f"{ds.text(line, 'question')}\n{options}{PUZZLE_TAIL}"


def _puzzlevqa(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
    try:
        items = ast.literal_eval(ds.text(line, "options"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        items = None
    if not isinstance(items, (list, tuple)):
        raise DatasetError(f"{ds._where(line, 'options')}: not a list of option texts")
    options = "\n".join(f"({OPTION_LETTERS[i]}) {t}" for i, t in enumerate(items))
    return f"{ds.text(line, 'question')}\nOptions:\n{options}{PUZZLE_TAIL}"


def _visulogic(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
    return ds.text(line, "question") + VISULOGIC_TAIL


def _medqdeg(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
    return f"{ds.text(line, 'question')}\n\n{_options(line, 'ABCDE')}\n\n{MEDQDEG_TAIL}"


def _medqbench(ds: RegexMCQDataset, line: dict[str, Any]) -> str:
    return f"{MEDQBENCH_HEAD}{ds.text(line, 'question')}\n\nOptions:\n{_options(line, 'ABCD')}\n\n{MEDQBENCH_TAIL}"


PROMPTS = {
    "mme_realworld": _mme_realworld(MME_RW_EN, MME_RW_LEAD_EN),
    "mme_realworld_cn": _mme_realworld(MME_RW_CN, MME_RW_LEAD_CN),
    "visualpuzzles": _visualpuzzles,
    "puzzlevqa": _puzzlevqa,
    "visulogic": _visulogic,
    "medqdeg": _medqdeg,
    "medqbench": _medqbench,
}
PROMPT_COLUMNS = {"mme_realworld": ("multi-choice options",), "mme_realworld_cn": ("multi-choice options",),
                  "puzzlevqa": ("options",)}  # fmt: skip


class RegexMCQDataset(SnapshotImages):
    """A multiple-choice benchmark scored by one VLMEvalKit reading rule (module docstring)."""

    kind: ClassVar[str] = "mcq"

    def __init__(
        self,
        name: str,
        *,
        prompt: str,
        rule: str,
        answer_match: str = "exact",
        letters: str = "ABCDE",
        report: str = "groups",
        groups: list[list[str]] | None = None,
        scale: str = "percent",
        image_subdir: str = "",
        data_root: Path | str | None = None,
        **kwargs: Any,
    ) -> None:
        from vlmkit.scoring.kinds.regex_mcq import ANSWER_MATCHES, REPORTS, RULES, SCALES

        for option, value, allowed in (("prompt", prompt, PROMPTS), ("rule", rule, RULES),
                                       ("answer_match", answer_match, ANSWER_MATCHES), ("report", report, REPORTS),
                                       ("scale", scale, SCALES)):  # fmt: skip
            if value not in allowed:
                raise ValueError(f"{name}: {option} {value!r}; choose one of {', '.join(allowed)}")
        groups = [list(g) for g in (groups or [])]
        if not all(len(g) == 2 and all(isinstance(x, str) and x for x in g) and "{}" in g[1] for g in groups):
            raise ValueError(f"{name}: groups must be [column, name template with {{}}] pairs")
        self.prompt, self.rule, self.answer_match, self.letters = prompt, rule, answer_match, str(letters)
        self.report, self.groups, self.scale = report, groups, scale
        self.prompt_columns = ("question", *PROMPT_COLUMNS.get(prompt, ()))
        if report == "mme_realworld":
            self.answer_columns = ("answer", "category", "l2-category")
        self._set_snapshot(data_root, image_subdir)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return PROMPTS[self.prompt](self, line)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.regex_mcq import score_regex_mcq

        result = score_regex_mcq(
            df, rule=self.rule, answer_match=self.answer_match, letters=self.letters, report=self.report,
            groups=self.groups, scale=self.scale,
        )  # fmt: skip
        if judge is not None:
            result.notes.append("VLMEvalKit scores this benchmark by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {
            "scorer": "regex_mcq", "prompt": self.prompt, "rule": self.rule, "answer_match": self.answer_match,
            "report": self.report, **({"letters": self.letters} if self.rule == "first_letter" else {}),
            **self.snapshot_params(),
        }  # fmt: skip
