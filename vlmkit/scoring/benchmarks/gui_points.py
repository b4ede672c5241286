"""Click points of GUI-grounding replies, read in a model family's coordinate convention.

Reading (`read_click`), the first that applies:
1. `x=<n>, y=<n>` (the `pyautogui.click(x=?, y=?)` the GUI prompts ask for; quotes, spaces or only a space between
   the two allowed): a point.
2. Otherwise the earliest of: two bracketed pairs `(x1,y1),(x2,y2)` / `[x1,y1],[x2,y2]` (Qwen2-VL's
   `<|box_start|>(x1,y1),(x2,y2)<|box_end|>`), a bracketed box of four numbers `[x1, y1, x2, y2]` (Qwen2.5-VL's
   `bbox_2d`, CogAgent, ...), a bracketed pair `(x, y)` / `[x, y]` (UI-TARS' `start_box='(x,y)'`, Qwen2.5-VL's
   `point_2d` and `coordinate`): a box stands for its centre.
Anything else reads no point (a miss).

Conventions (`COORDS`, the `coords` option of the GUI datasets; which family writes which: vlm/presets.tsv, and
each model's replies are read in its own in a run, datasets_tsv.benchmarks.gui_grounding):
- `abs`: absolute pixels of the image as the model saw it. With `smart_resize` (the default) that is the image
  resized by the Qwen2-VL rule (`smart_resize` below: sides rounded to multiples of 28, the area brought inside
  [min_pixels, max_pixels]), as Qwen2.5-VL answers; without it, pixels of the original screenshot.
- `norm1000`: 0-1000 of the image's width and height (Qwen2-VL, CogAgent, UI-TARS 1.0, InternVL, many others).
- `norm1`: 0-1 of the width and height.
- `auto`: VLMEvalKit's rule for the dataset (`VLMEVALKIT_RULES`): for ScreenSpot, ScreenSpot_v2 and ScreenSpot_Pro
  a point with a coordinate above 1 is pixels of the original screenshot, else 0-1; for OSWorld_G always 0-1000.
  With `auto`, vlmkit reads the numbers as VLMEvalKit does, so the figures agree unless the reading differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vlmkit.core.qwen_resize import QWEN2VL_MAX_PIXELS, QWEN2VL_MIN_PIXELS, smart_resize

COORDS = ("abs", "norm1000", "norm1", "auto")
VLMEVALKIT_RULES = {
    "pixels_over_1": "a coordinate above 1 means pixels of the original screenshot, else 0-1",
    "norm1000": "0-1000 of the screenshot's width and height",
}

_NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)"
_XY = re.compile(rf"x\s*=\s*['\"]?({_NUM})['\"]?\s*[,;]?\s*y\s*=\s*['\"]?({_NUM})")
_OPEN, _CLOSE, _SEP = r"[\[(]\s*", r"\s*[\])]", r"\s*,\s*"
_TWO_PAIRS = re.compile(
    _OPEN + _SEP.join([f"({_NUM})"] * 2) + _CLOSE + r"\s*,?\s*" + _OPEN + _SEP.join([f"({_NUM})"] * 2) + _CLOSE
)
_BOX = re.compile(_OPEN + _SEP.join([f"({_NUM})"] * 4) + _CLOSE)
_PAIR = re.compile(_OPEN + _SEP.join([f"({_NUM})"] * 2) + _CLOSE)


@dataclass(frozen=True)
class Click:
    """A click read from a reply, in the reply's own numbers: `how` is `xy`, `point` or `box`."""

    x: float
    y: float
    how: str


def read_click(reply: str) -> Click | None:
    """The click point of a reply (module docstring), or None when it holds none."""
    found = _XY.search(reply)
    if found:
        return Click(float(found.group(1)), float(found.group(2)), "xy")
    candidates = []
    for pattern, how in ((_TWO_PAIRS, "box"), (_BOX, "box"), (_PAIR, "point")):
        match = pattern.search(reply)
        if match:
            candidates.append((match.start(), -len(match.group(0)), how, match))
    if not candidates:
        return None
    _, _, how, match = min(candidates, key=lambda c: (c[0], c[1]))
    numbers = [float(v) for v in match.groups()]
    if how == "box":
        return Click((numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2, "box")
    return Click(numbers[0], numbers[1], "point")


@dataclass(frozen=True)
class Convention:
    """How a reply's numbers become a point in 0-1 of the screenshot (module docstring)."""

    coords: str = "auto"
    vlmevalkit_rule: str = "pixels_over_1"  # what `auto` means for the dataset
    smart_resize: bool = True  # `abs`: pixels of the Qwen2-VL-resized image (else of the original)
    min_pixels: int = QWEN2VL_MIN_PIXELS
    max_pixels: int = QWEN2VL_MAX_PIXELS
    source: str = ""  # where it came from, a phrase for the notes ("convention from --coords", ...)

    def __post_init__(self) -> None:
        if self.coords not in COORDS:
            raise ValueError(f"coords {self.coords!r}; choose one of {', '.join(COORDS)}")
        if self.vlmevalkit_rule not in VLMEVALKIT_RULES:
            raise ValueError(f"vlmevalkit_rule {self.vlmevalkit_rule!r}; choose one of {', '.join(VLMEVALKIT_RULES)}")
        if not 0 < self.min_pixels <= self.max_pixels:
            raise ValueError(f"min_pixels {self.min_pixels} and max_pixels {self.max_pixels}: need 0 < min <= max")

    def frame(self, width: int, height: int, min_pixels: int | None = None, max_pixels: int | None = None
              ) -> tuple[int, int]:  # fmt: skip
        """(width, height) of the image the `abs` numbers refer to (per-row pixel limits override the option's)."""
        if not self.smart_resize:
            return width, height
        h, w = smart_resize(height, width, min_pixels=min_pixels or self.min_pixels,
                            max_pixels=max_pixels or self.max_pixels)
        return w, h

    def to_unit(self, click: Click, width: int, height: int, min_pixels: int | None = None,
                max_pixels: int | None = None) -> tuple[float, float]:  # fmt: skip
        """The click as a point in 0-1 of the screenshot of `width` x `height` pixels."""
        x, y = click.x, click.y
        coords = self.coords
        if coords == "auto":
            if self.vlmevalkit_rule == "norm1000":
                coords = "norm1000"
            else:
                return (x / width, y / height) if x > 1 or y > 1 else (x, y)
        if coords == "norm1":
            return x, y
        if coords == "norm1000":
            return x / 1000, y / 1000
        w, h = self.frame(width, height, min_pixels, max_pixels)
        return x / w, y / h

    def describe(self) -> str:
        """One line for results.json notes."""
        return self._meaning() + (f"; {self.source}" if self.source else "")

    def _meaning(self) -> str:
        if self.coords == "auto":
            return f"click points read by VLMEvalKit's rule for this dataset (coords auto): " \
                   f"{VLMEVALKIT_RULES[self.vlmevalkit_rule]}"
        if self.coords == "abs":
            if self.smart_resize:
                return ("click points read as absolute pixels of the image resized by the Qwen2-VL rule (coords abs, "
                        f"min_pixels {self.min_pixels}, max_pixels {self.max_pixels}, unless the row says)")
            return "click points read as absolute pixels of the original screenshot (coords abs, no resize)"
        scale = "0-1000" if self.coords == "norm1000" else "0-1"
        return f"click points read as {scale} of the screenshot's width and height (coords {self.coords})"
