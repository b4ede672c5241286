"""Model-owned prompts: VLMEvalKit's wrappers that write their own prompt for some benchmarks, one module per family.

A family is named by the `prompt_style` column of `vlm/presets.tsv` (`dataset`: the benchmark's own prompt, no
family). Each family class (`vlm.prompts.common.PromptFamily` is a base to start from) is built as
`Family(values)` from the preset's values (min_pixels, max_new_tokens, ...), and as `Family(values,
own_prompts=False)` when the preset says VLMEvalKit runs the wrapper with `use_custom_prompt=False` (its
`vlmeval_prompt` is `dataset`): such a family writes no prompt, and its per-dataset processor settings still apply.
It answers VLMEvalKit's two questions:

    use_custom_prompt(info: vlmkit.core.contracts.DatasetInfo) -> bool
    build_prompt(line: dict, info: DatasetInfo) -> list of parts

and, optionally, the per-dataset processor settings hook:

    processor_kwargs(dataset: str | None) -> dict

keyed by the dataset *name* as VLMEvalKit keys them (e.g. Qwen2VLChat's OCRBench `min_pixels`; InternVL's tile
counts). The local transformers model (`vlm.local.generic.HFVisionModel`) asks it once per generate call with the
dataset's name and hands the result to the image processor for that call only (`images_kwargs` of the processor
call: nothing changes for the next call or for a dataset the family does not name). The keys are the image
processor's own call arguments (anything its `valid_kwargs` names, e.g. `max_patches`, `min_patches`,
`crop_to_patches`), plus `min_pixels` / `max_pixels`, which are merged into the image processor's current pixel
limits (its `size`); an unknown key fails loudly. An empty dict (or no such method) changes nothing.
Optionally `describe() -> dict` says what results.json records of the family (default: its style name).

The runner asks them without loading the model's weights (`prompts_for(preset)`); the local model classes delegate
their own `use_custom_prompt`/`build_prompt` to the same object. Modules load only when their family is asked for.
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.registry import import_target

FAMILIES: dict[str, str] = {  # prompt_style -> "module:Class"
    "qwen2vl": "vlm.prompts.qwen2_vl:Qwen2VLPrompts",
    "llava": "vlm.prompts.llava:LLaVAPrompts",
    "internvl": "vlm.prompts.internvl:InternVLPrompts",
    "smolvlm": "vlm.prompts.smolvlm:SmolVLMPrompts",
}


def prompts_for(preset: dict[str, Any] | None) -> Any | None:
    """The family prompts object a preset names (None: the preset uses the dataset's prompts, or there is none)."""
    style = (preset or {}).get("prompt_style") or "dataset"
    if style == "dataset":
        return None
    if style not in FAMILIES:
        raise ValueError(f"preset {(preset or {}).get('name')!r}: unknown prompt_style {style!r}; "
                         f"known: dataset, {', '.join(sorted(FAMILIES))}")
    cls = import_target(FAMILIES[style], what=f"prompt family {style!r}")
    values = dict((preset or {}).get("values") or {})
    if (preset or {}).get("vlmeval_prompt") == "dataset":
        return cls(values, own_prompts=False)
    return cls(values)


def family_record(family: Any | None) -> dict[str, Any] | None:
    """What results.json says of a family object (None: none, the dataset's prompts)."""
    if family is None:
        return None
    describe = getattr(family, "describe", None)
    return describe() if callable(describe) else {"name": type(family).__name__}
