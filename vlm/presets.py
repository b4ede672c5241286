"""The rows of `presets.tsv`: VLMEvalKit's preset for each local model of the registry, as data.

Columns (tab-separated, one registry name per line, `#` lines and blank lines ignored; an empty cell: not set):

- name                the registry name (`vlm.registry`); aliases take the preset of the checkpoint they name.
- vlmeval             VLMEvalKit's name for the model in vlmeval/config.py (empty: VLMEvalKit has no entry for this
                      size, its wrapper's defaults are written down).
- vlmeval_prompt      how VLMEvalKit prompts it: `dataset` (the benchmark's prompt) or `model` (the wrapper's own
                      `build_prompt` for some benchmarks).
- prompt_style        the wrapper family vlmkit runs it as: `dataset` (no family: the benchmark's prompt, the
                      limits above for every dataset) or a family of `vlm.prompts.FAMILIES` (`qwen2vl`, `llava`,
                      ...): its own prompts where VLMEvalKit's wrapper has them (none when vlmeval_prompt is
                      `dataset`: VLMEvalKit's use_custom_prompt=False) and its per-dataset image settings (e.g.
                      Qwen2VLChat's OCRBench min_pixels). `vlmkit run --prompt-style dataset` keeps the
                      benchmark's prompt whatever the family.
- min_pixels,         image resolution limits of Qwen2-VL-style processors (whole numbers of pixels): every image is
  max_pixels          resized so that its area lies between them, sides multiples of patch * merge size (28).
- max_new_tokens      the answer budget VLMEvalKit passes to generate (a whole number); `--max-tokens` wins.
- repetition_penalty  passed to generate explicitly (a number).
- system_prompt       a JSON string (`"You are ... "`, so that its spaces are visible): the system turn the wrapper
                      sends; `--system-prompt` wins, and a row's own system turn wins over both.
- coords              the family's coordinate convention for points and boxes (`abs`: pixels of the image as the
                      model saw it, `norm1000`, `norm1`; empty: not known). GUI grounding reads this model's replies by
                      it unless `--coords` is given (vlmkit.run.inputs.model_facts); it changes no answer, so it stays
                      out of `as_kwarg()` and the run fingerprint.
- notes               where vlmkit still differs from VLMEvalKit for this model (recorded in results.json).

The generic transformers path applies a preset (`vlm.local.generic.HFVisionModel(preset=...)`): the limits to the
processor, the generation settings where the user set none, the system prompt where the user gave none.
Reading the file imports no model code, torch or transformers.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from vlm.prompts import FAMILIES
from vlmkit.scoring.benchmarks.gui_points import COORDS

COLUMNS = (
    "name", "vlmeval", "vlmeval_prompt", "prompt_style", "min_pixels", "max_pixels", "max_new_tokens",
    "repetition_penalty", "system_prompt", "coords", "notes",
)  # fmt: skip
PRESET_COORDS = tuple(c for c in COORDS if c != "auto")  # auto is the dataset's rule: an empty cell
PROMPT_STYLES = ("dataset", *FAMILIES)
VLMEVAL_PROMPTS = ("dataset", "model")
IMAGE_KEYS = ("min_pixels", "max_pixels")
GENERATION_KEYS = ("max_new_tokens", "repetition_penalty")
VALUE_KEYS = (*IMAGE_KEYS, *GENERATION_KEYS, "system_prompt")


class PresetError(ValueError):
    """A malformed presets row; the text names the source, the line and the column."""


@dataclass(frozen=True)
class Preset:
    name: str
    vlmeval: str | None
    vlmeval_prompt: str
    prompt_style: str
    values: dict[str, Any] = field(default_factory=dict)  # only the keys the row sets, typed
    notes: str = ""
    coords: str | None = None  # abs, norm1000, norm1; None: not known (not in as_kwarg: it changes no answer)

    def as_kwarg(self) -> dict[str, Any]:
        """The preset as the plain JSON value a model takes as `preset=` (and the run fingerprint holds; the notes,
        which change no answer, stay out)."""
        return {
            "name": self.name, "vlmeval": self.vlmeval, "vlmeval_prompt": self.vlmeval_prompt,
            "prompt_style": self.prompt_style, "values": dict(self.values),
        }  # fmt: skip


def _whole(text: str, where: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise PresetError(f"{where}: expected a whole number, got {text!r}") from None
    if value < 1:
        raise PresetError(f"{where}: expected a whole number of 1 or more, got {value}")
    return value


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PresetError(f"{where}: expected a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise PresetError(f"{where}: expected a number above 0, got {text!r}")
    return value


def _json_string(text: str, where: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise PresetError(f'{where}: expected a JSON string such as "You are a helpful assistant.", got {text!r}')
    return value


def _choice(text: str, allowed: tuple[str, ...], where: str) -> str:
    if text not in allowed:
        raise PresetError(f"{where}: expected one of {', '.join(allowed)}, got {text!r}")
    return text


_PARSERS = {"min_pixels": _whole, "max_pixels": _whole, "max_new_tokens": _whole,
            "repetition_penalty": _number, "system_prompt": _json_string}  # fmt: skip


def _row(cells: dict[str, str], where: str) -> Preset:
    def at(column: str) -> str:
        return f"{where}, column {column}"

    name = cells["name"].strip()
    if not name:
        raise PresetError(f"{at('name')}: empty")
    values = {key: _PARSERS[key](cells[key], at(key)) for key in VALUE_KEYS if cells[key] != ""}
    if ("min_pixels" in values) != ("max_pixels" in values):
        raise PresetError(f"{where}: min_pixels and max_pixels go together")
    if "min_pixels" in values and values["min_pixels"] > values["max_pixels"]:
        raise PresetError(f"{where}: min_pixels {values['min_pixels']} is above max_pixels {values['max_pixels']}")
    return Preset(
        name=name,
        vlmeval=cells["vlmeval"].strip() or None,
        vlmeval_prompt=_choice(cells["vlmeval_prompt"], VLMEVAL_PROMPTS, at("vlmeval_prompt")),
        prompt_style=_choice(cells["prompt_style"], PROMPT_STYLES, at("prompt_style")),
        values=values,
        notes=cells["notes"].strip(),
        coords=_choice(cells["coords"], PRESET_COORDS, at("coords")) if cells["coords"] else None,
    )


def parse_presets(text: str, source: str = "presets.tsv") -> dict[str, Preset]:
    """name -> Preset; PresetError (naming source, line and column) for a row that is not as the docstring says."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise PresetError(f"{source}: no header line")
    header_line, header = lines[0][0], lines[0][1].split("\t")
    if tuple(header) != COLUMNS:
        raise PresetError(f"{source}, line {header_line}: the columns must be {', '.join(COLUMNS)}; got {', '.join(header)}")
    presets: dict[str, Preset] = {}
    for number, line in lines[1:]:
        where = f"{source}, line {number}"
        cells = next(csv.reader(io.StringIO(line), delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(cells) != len(COLUMNS):
            raise PresetError(f"{where}: {len(cells)} cells, expected {len(COLUMNS)} (tab-separated)")
        preset = _row(dict(zip(COLUMNS, cells)), where)
        if preset.name in presets:
            raise PresetError(f"{where}: {preset.name!r} is listed twice")
        presets[preset.name] = preset
    return presets


@lru_cache(maxsize=1)
def model_presets() -> dict[str, Preset]:
    """The presets shipped with vlmkit (vlm/presets.tsv), read once."""
    text = resources.files("vlm").joinpath("presets.tsv").read_text(encoding="utf-8")
    return parse_presets(text, "vlm/presets.tsv")
