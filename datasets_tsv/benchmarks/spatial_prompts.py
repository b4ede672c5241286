"""The prompts of VLMEvalKit's EASI spatial benchmarks (SITE-Bench, EmbSpatial-Bench, MMSI-Bench, SpatialViz-Bench,
OmniSpatial, ViewSpatial-Bench, STARE, Spatial-DISE, and the ones whose prompt is a TSV column: MindCube, ERIQ),
character for character. A catalog row names its style (`prompt` option of datasets_tsv.benchmarks.spatial_mcq.SpatialMCQDataset);
each style is a function of the row's cells. `<image>` in a text marks where an image goes (see SpatialMCQDataset).

Where vlmkit's text differs from VLMEvalKit's on purpose: OmniSpatial's manual-CoT system prompt carries a stray
`   # noqa: E501` (a linter comment that ended up inside the string literal); vlmkit leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vlmkit.core.cells import is_missing

from datasets_tsv.kinds.base import OPTION_LETTERS

SITE_POST = "Give me the answer letter directly. The best answer is:"
MMSI_POST = "Answer with the option's letter from the given choices directly. Enclose the option's letter within ``."
SPATIALVIZ_DIRECT = (
    "Answer with a single option letter (A, B, C, or D), enclosed within the <answer></answer> tag."
    "For example: <answer>A</answer>. Ensure that your output contains only the final answer, "
    "without any intermediate reasoning or additional content."
)
SPATIALVIZ_COT = (
    "You should first provide a reasoning process, then provide a single option (A, B, C or D) as the final answer. "
    "The reasoning process and the answer are enclosed within <think></think> and <answer></answer> tags, "
    "respectively, i.e., <think>reasoning process</think>, <answer>answer</answer>."
)
OMNI_DIRECT_POST = "\nAnswer directly with the option letter from the given choices. "
OMNI_FORMAT = "\nEnd your answer with a separate line formatted exactly as:\n\nAnswer: X\nwhere X ∈ {A, B, C, D}.\n"
_OMNI_HEAD = (
    "\nYou are a spatial-reasoning assistant.\n\nTask\n-----\nYou will receive\n"
    "1. **Image** - a single RGB frame depicting a scene.\n"
    "2. **Question** - a natural-language query about spatial relationships between objects in the image.\n"
    "3. **Options** - ≥2 answer candidates, each tagged by a capital letter (A, B, C, D…).\n\n"
)
_OMNI_TAIL = (
    "Always ground your answer in the visual evidence; do not hallucinate unseen objects.\n"
    "If uncertain, pick the most plausible option—never refuse or reply “insufficient information.”\n"
)
OMNI_SYSTEM = {
    "default": _OMNI_HEAD + "Based on the image and question, provide your answer.\n" + _OMNI_TAIL,
    "zeroshot_cot": _OMNI_HEAD + "Think step by step and provide the answer.\n" + _OMNI_TAIL,
    "manual_cot": _OMNI_HEAD
    + "Guidelines\n----------\nPlease follow these steps to analyze the image and answer the question:\n"
    "1. First, carefully observe the image and identify all relevant objects and their spatial relationships.\n"
    "2. Next, break down the question into key components that need to be addressed.\n"
    "3. Think through the spatial reasoning step-by-step to arrive at your answer. It may be necessary to transfer "
    "perspective to better understand the scene.\n"
    "4. Finally, select the most appropriate option (A, B, C, or D) based on your analysis.\n\n" + _OMNI_TAIL,
}
VIEWSPATIAL_POST = "Reply only to the corresponding option.\nAnswer:"
STARE_FORMAT = (
    "Answer with the option's letter from the given choices and put the letter in one <answer> answer </answer>"
)
STARE_DIRECT = (
    "Please ensure that your output only contains the final answer (a single option letter) "
    "without any additional content (such as intermediate reasoning steps)."
)
STARE_COT = "Please solve the problem step by step."


def column_options(line: dict[str, Any]) -> list[tuple[str, str]]:
    """(letter, text) of the option columns A-Z the row fills."""
    return [(L, str(line[L])) for L in OPTION_LETTERS if L in line and not is_missing(line[L])]


# Each style: (line, question, listed options or None, images) -> text. `listed`: the row's `options` list.
Style = Callable[[dict[str, Any], str, list[str] | None, int], str]


def _site(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
    options = "\n".join(f"{OPTION_LETTERS[i]}: {text}" for i, text in enumerate(listed or []))
    return f"Question: {question}\nOptions:\n{options}\n{SITE_POST}"


def _mmsi(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
    hint = line.get("hint")
    prompt = "" if is_missing(hint) else f"Hint: {hint}\n"
    prompt += f"{question}\n"
    options = column_options(line)
    if options:
        prompt += "Options: " + "".join(f"{k}: {v}, " for k, v in options)
    return f"{prompt}\n{MMSI_POST}"


def _spatialviz(pre: str) -> Style:
    def style(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
        return f"{pre}\nQuestion:{question}\n" + "".join(f"{k}. {v}\n" for k, v in column_options(line))

    return style


def _omni(mode: str | None) -> Style:
    def style(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
        options = "".join(f"\n{k}. {v}" for k, v in column_options(line))
        if mode is None:
            return question + options + OMNI_DIRECT_POST
        return OMNI_SYSTEM[mode] + "\n" + OMNI_FORMAT + "\n\n" + question + options

    return style


def _viewspatial(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
    return f"Question: {question}\nChoices: {line.get('candidates')}\n{VIEWSPATIAL_POST}"


def _stare(post: str) -> Style:
    def style(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
        question = question.replace("\\n", "\n").replace("\\\\", "\\")  # STARE's TSV escapes them
        if "<image>" not in question and images:
            question += "\n<image>"
        return "\n".join([f"{question}\n\n{STARE_FORMAT}", post])

    return style


DISE_POST = (
    "Images are provided in order: first the merged full image, followed by the available separate "
    "question/view/option images from the original sample. Use all images together. The answer choices are labeled "
    "A, B, C, and D. Please select the correct answer and respond with only one letter: A, B, C, or D."
)


def _dise(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
    return f"{question.strip()}\n{DISE_POST}"


def _question_only(line: dict[str, Any], question: str, listed: list[str] | None, images: int) -> str:
    return question


STYLES: dict[str, Style] = {
    "site": _site,
    "mmsi": _mmsi,
    "spatialviz": _spatialviz(SPATIALVIZ_DIRECT),
    "spatialviz_cot": _spatialviz(SPATIALVIZ_COT),
    "omnispatial": _omni(None),
    "omnispatial_default": _omni("default"),
    "omnispatial_zeroshot_cot": _omni("zeroshot_cot"),
    "omnispatial_manual_cot": _omni("manual_cot"),
    "viewspatial": _viewspatial,
    "stare": _stare(STARE_DIRECT),
    "stare_cot": _stare(STARE_COT),
    "dise": _dise,
    "column": _question_only,  # the prompt is a TSV column, verbatim (MindCube `input_prompt`, ERIQ `question_raw`)
}
# The columns a style needs besides the question column.
STYLE_COLUMNS: dict[str, tuple[str, ...]] = {"site": ("options",), "viewspatial": ("candidates",)}
