"""Model-owned prompts: VLMEvalKit's wrappers that write their own prompt for some benchmarks, one module per family.

A family is named by the `prompt_style` column of `vlm/presets.tsv` (`dataset`: the benchmark's own prompt, no
family). Each family class takes the preset's values and answers VLMEvalKit's two questions:

    use_custom_prompt(info: vlmkit.prompting.DatasetInfo) -> bool
    build_prompt(line: dict, info: DatasetInfo) -> list of parts

The runner asks them without loading the model's weights (`prompts_for(preset)`); the local model classes delegate
their own `use_custom_prompt`/`build_prompt` to the same object. Modules load only when their family is asked for.
"""

from __future__ import annotations

from typing import Any

from vlmkit.registry import import_target

FAMILIES: dict[str, str] = {}  # prompt_style -> "module:Class"


def prompts_for(preset: dict[str, Any] | None) -> Any | None:
    """The family prompts object a preset names (None: the preset uses the dataset's prompts, or there is none)."""
    style = (preset or {}).get("prompt_style") or "dataset"
    if style == "dataset":
        return None
    if style not in FAMILIES:
        raise ValueError(f"preset {(preset or {}).get('name')!r}: unknown prompt_style {style!r}; "
                         f"known: dataset, {', '.join(sorted(FAMILIES))}")
    return import_target(FAMILIES[style], what=f"prompt family {style!r}")(dict((preset or {}).get("values") or {}))
