"""GUI grounding: ScreenSpot (Mobile, Desktop, Web), ScreenSpot_v2 (the same three), ScreenSpot_Pro (six groups of
applications) and OSWorld_G, as VLMEvalKit's GUI classes build and score them (vlmeval/dataset/GUI/ at e8e78f05).

The prompt, character for character VLMEvalKit's (`functional` referring expressions, its default): a system turn
`SYSTEM_PROMPT`, then a user turn with the screenshot(s) and `USER_INSTRUCTION` filled with the row's `question`.
The model answers `pyautogui.click(x=?, y=?)`; models that write their own format (boxes, `(x,y)` pairs, JSON) are
read too (vlmkit.scoring.benchmarks.gui_points).

Options (catalog kwargs, or given by a run):
- `layout`: `screenspot`, `screenspot_pro` (also VBGD), `venusbench` (VenusBench-GD) or `osworld_g` (the box
  format, the breakdown keys, VLMEvalKit's rule for reading the numbers: vlmkit.scoring.benchmarks.gui_grounding).
- `coords`: the model family's coordinate convention, `abs`, `norm1000`, `norm1` or `auto` (default): `auto` reads
  the numbers as VLMEvalKit does for the dataset (ScreenSpot/v2/Pro: above 1 = pixels of the screenshot, else 0-1;
  OSWorld_G: 0-1000). `abs` with `smart_resize` (default true) means pixels of the image resized by the Qwen2-VL
  rule (Qwen2.5-VL), bounded by `min_pixels`/`max_pixels` (defaults: the Qwen2-VL processor's 3136 and 1003520;
  a row's own `min_pixels`/`max_pixels` columns win); `smart_resize: false` means pixels of the original.
The convention is in results.json: `dataset.scorer` and the first scoring note.

Scoring needs the screenshot's size: it is read from the decoded image of each row (its first image).
"""

from __future__ import annotations

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
        self, name: str, *, layout: str = "screenspot", coords: str = "auto", smart_resize: bool = True,
        min_pixels: int = QWEN2VL_MIN_PIXELS, max_pixels: int = QWEN2VL_MAX_PIXELS, **kwargs: Any,
    ) -> None:  # fmt: skip
        from vlmkit.scoring.benchmarks.gui_grounding import LAYOUTS, layout_columns

        if layout not in LAYOUTS:
            raise ValueError(f"{name}: layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
        if coords not in COORDS:
            raise ValueError(f"{name}: coords {coords!r}; choose one of {', '.join(COORDS)}")
        self.layout = layout
        self.convention = Convention(coords, LAYOUTS[layout].vlmevalkit_rule, bool(smart_resize), int(min_pixels),
                                     int(max_pixels))  # fmt: skip
        self.answer_columns = layout_columns(layout)
        super().__init__(name, **kwargs)

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
        return {"scorer": "gui_grounding", "layout": self.layout, "coords": conv.coords,
                "smart_resize": conv.smart_resize, "min_pixels": conv.min_pixels, "max_pixels": conv.max_pixels,
                "coords_meaning": conv.describe()}  # fmt: skip
