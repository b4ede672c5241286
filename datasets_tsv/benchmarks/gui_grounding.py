"""GUI grounding: ScreenSpot (Mobile, Desktop, Web), ScreenSpot_v2 (the same three), ScreenSpot_Pro (six groups of
applications) and OSWorld_G, as VLMEvalKit's GUI classes build and score them (vlmeval/dataset/GUI/ at e8e78f05).

The prompt, character for character VLMEvalKit's (`functional` referring expressions, its default): a system turn
`SYSTEM_PROMPT`, then a user turn with the screenshot(s) and `USER_INSTRUCTION` filled with the row's `question`.
The model answers `pyautogui.click(x=?, y=?)`; models that write their own format (boxes, `(x,y)` pairs, JSON) are
read too (vlmkit.scoring.benchmarks.gui_points).

Options (catalog kwargs, or given by a run):
- `layout`: `screenspot`, `screenspot_pro` (also VBGD), `venusbench` (VenusBench-GD) or `osworld_g` (the box
  format, the breakdown keys, VLMEvalKit's rule for reading the numbers: vlmkit.scoring.benchmarks.gui_grounding).
- `coords`: the coordinate convention, `abs`, `norm1000`, `norm1` or `auto`: `auto` reads the numbers as VLMEvalKit
  does for the dataset (ScreenSpot/v2/Pro: above 1 = pixels of the screenshot, else 0-1; OSWorld_G: 0-1000). `abs`
  with `smart_resize` (default true) means pixels of the image resized by the Qwen2-VL rule (Qwen2.5-VL), bounded by
  `min_pixels`/`max_pixels`; `smart_resize: false` means pixels of the original.
Whose convention: each model's replies are read in its family's (`for_model`, told by the run what
vlmkit.run.inputs.model_facts knows of the model): `coords` given to the dataset (the run's `--coords`) wins; else
the family's from its preset (vlm/presets.tsv `coords`); else `auto`. The `abs` resize limits: `min_pixels`/
`max_pixels` given to the dataset, else the model's preset's (what its local processor applies), else the Qwen2-VL
processor's defaults 3136 and 1003520; a row's own `min_pixels`/`max_pixels` columns win over all. The convention
and where it came from are in results.json: `dataset.scorer` (`coords`, `coords_from`: `--coords`, `preset` or
`auto`, `coords_preset`, `pixels_from`) and the first scoring note.

Scoring needs the screenshot's size: it is read from the decoded image of each row (its first image).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd
from PIL import Image

from vlmkit.core.qwen_resize import QWEN2VL_MAX_PIXELS, QWEN2VL_MIN_PIXELS
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.gui_points import COORDS, Convention
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

SYSTEM_PROMPT = (
    "You are a GUI agent. You are given a task and a screenshot of the screen. You need to perform pyautogui "
    "click/moveTo action to complete the task. The answer format is `pyautogui.click(x=?, y=?), x and y is necessary`"
)
USER_INSTRUCTION = "Please complete the following tasks by clicking using `pyautogui.click`:\n{instruction}"


class GuiGroundingDataset(TSVDataset):
    """Click-point GUI grounding (module docstring)."""

    kind: ClassVar[str] = "other"
    takes_coords: ClassVar[bool] = True  # a run's --coords reaches it (datasets_tsv.catalog.registry.with_coords)

    def __init__(
        self, name: str, *, layout: str = "screenspot", coords: str | None = None, smart_resize: bool = True,
        min_pixels: int | None = None, max_pixels: int | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        """coords, min_pixels, max_pixels: None leaves them to the model (`for_model`), else their defaults."""
        from vlmkit.scoring.benchmarks.gui_grounding import LAYOUTS, layout_columns

        if layout not in LAYOUTS:
            raise ValueError(f"{name}: layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
        if coords is not None and coords not in COORDS:
            raise ValueError(f"{name}: coords {coords!r}; choose one of {', '.join(COORDS)}")
        if (min_pixels is None) != (max_pixels is None):
            raise ValueError(f"{name}: min_pixels and max_pixels go together")
        self.layout = layout
        self._given = (coords, bool(smart_resize), min_pixels, max_pixels)
        self.coords_from: dict[str, Any] = {}
        self.convention = self._convention({})
        self.answer_columns = layout_columns(layout)
        super().__init__(name, **kwargs)

    def _convention(self, facts: Mapping[str, Any]) -> Convention:
        """The convention for a model's replies (module docstring); sets `coords_from` (what results.json records)."""
        from vlmkit.scoring.benchmarks.gui_grounding import LAYOUTS

        coords, smart, min_pixels, max_pixels = self._given
        if coords is not None:
            origin, source = {"coords_from": "--coords"}, "convention from --coords"
        elif facts.get("coords"):
            coords = str(facts["coords"])
            origin = {"coords_from": "preset", "coords_preset": facts["preset"]}
            source = f"convention from the preset {facts['preset']}"
        else:
            coords = "auto"
            origin = {"coords_from": "auto"}
            source = (f"no --coords, and no preset of {facts['model']} gives a convention" if facts.get("model")
                      else "no --coords, and no model's preset was given")
        if min_pixels is not None:
            origin["pixels_from"] = "the dataset's options"
        elif facts.get("min_pixels"):
            min_pixels, max_pixels = int(facts["min_pixels"]), int(facts["max_pixels"])
            origin["pixels_from"] = f"the preset {facts.get('pixels_preset') or facts.get('preset')}"
        else:
            min_pixels, max_pixels = QWEN2VL_MIN_PIXELS, QWEN2VL_MAX_PIXELS
            origin["pixels_from"] = "the Qwen2-VL image processor's defaults"
        self.coords_from = origin
        return Convention(coords, LAYOUTS[self.layout].vlmevalkit_rule, smart, int(min_pixels), int(max_pixels),
                          source=source)  # fmt: skip

    def for_model(self, facts: Mapping[str, Any]) -> GuiGroundingDataset:
        """This dataset reading one model's replies: a copy (sharing the rows and images) whose convention is that
        model's (module docstring). facts: vlmkit.run.inputs.model_facts (`model`, and where known `coords` with the
        `preset` naming it, `min_pixels`/`max_pixels` with `pixels_preset`)."""
        twin = copy.copy(self)
        twin.convention = twin._convention(facts)
        return twin

    def prompt_text(self, line: dict[str, Any]) -> str:
        return USER_INSTRUCTION.format(instruction=self.text(line, "question"))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        """A system turn, then the screenshot(s) and the instruction (VLMEvalKit's order)."""
        pos, row = self._row(line)
        user: list[Any] = [{"type": "image", "value": p} for p in self._images_at(pos)]
        user.append({"type": "text", "value": self.prompt_text(row)})
        return [{"role": "system", "content": [{"type": "text", "value": SYSTEM_PROMPT}]},
                {"role": "user", "content": user}]  # fmt: skip

    def screen_size(self, index: Any) -> tuple[int, int]:
        """(width, height) of a row's screenshot (its first image)."""
        paths = self.image_paths({"index": index})
        if not paths:
            raise DatasetError(f"{self.tsv_path}: row with index {index}, field image: no screenshot to score against")
        with Image.open(paths[0]) as image:
            return image.size

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.gui_grounding import score_gui_grounding

        sizes = [self.screen_size(index) for index in df["index"]]
        df["image_width"] = [w for w, _ in sizes]
        df["image_height"] = [h for _, h in sizes]
        result = score_gui_grounding(df, self.layout, self.convention)
        if judge is not None:
            result.notes.append("VLMEvalKit scores GUI grounding by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        conv = self.convention
        return {"scorer": "gui_grounding", "layout": self.layout, "coords": conv.coords, **self.coords_from,
                "smart_resize": conv.smart_resize, "min_pixels": conv.min_pixels, "max_pixels": conv.max_pixels,
                "coords_meaning": conv.describe()}  # fmt: skip
