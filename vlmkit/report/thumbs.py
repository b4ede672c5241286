"""Small JPEG thumbnails of a prompt's images, as data URLs for the self-contained page.

Each image file is read once per page however many runs and samples show it (the same benchmark under several
models): `Thumbnails` keys them by path. JPEGs are decoded at a reduced size (Pillow's draft mode), so a
4,000-image page takes seconds, not minutes. A file that is missing or not an image gets no thumbnail; the page
shows its path instead.

The size: given, or chosen for the page (`plan`): the largest of SIZES whose thumbnails, estimated from a few of
the images (within a few percent), fit in a budget of data-URL bytes, so that a page of a few hundred images gets
160 px pictures and one of 4,000 distinct images stays under 10 MB (the page gives what its text leaves of
9.6 MB: 88 px for an MMBench-like run).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

SIZES = (160, 128, 112, 96, 88, 80, 64)  # px, the longer side; largest first
BUDGET = 8_000_000  # bytes of data URLs the chosen size aims for, unless the caller gives another budget
PROBES = 24  # images thumbnailed to estimate a size's bytes
QUALITY = 50


def thumbnail_bytes(path: Path, size: int = SIZES[1], quality: int = QUALITY) -> bytes | None:
    """A JPEG whose longer side is at most `size` px, or None when the file cannot be read as an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.draft("RGB", (size, size))  # JPEG: decode at 1/2, 1/4 or 1/8 scale, at least size px
            image.thumbnail((size, size), Image.Resampling.BILINEAR, reducing_gap=2.0)
            if image.mode != "RGB":
                image = _flatten(image)
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=quality, optimize=True)
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError):
        return None
    return buffer.getvalue()


def _flatten(image):  # type: ignore[no-untyped-def]
    """RGB on white for images with transparency or a palette; plain conversion otherwise."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def choose_size(paths: list[str], budget: int = BUDGET) -> int:
    """The largest of SIZES whose thumbnails of `paths` are estimated to take at most `budget` bytes as data URLs
    (from up to PROBES of them, evenly spread); the smallest when none fits."""
    if not paths:
        return SIZES[0]
    step = max(1, len(paths) // PROBES)
    probes = [Path(p) for p in paths[::step][:PROBES]]
    for size in SIZES:
        made = [b for b in (thumbnail_bytes(p, size) for p in probes) if b is not None]
        if not made:
            return SIZES[0]  # nothing readable: nothing to weigh
        per_image = sum(len(b) for b in made) / len(made) * 4 / 3 + 30  # base64 and the data URL's prefix
        if per_image * len(paths) <= budget:
            return size
    return SIZES[-1]


class Thumbnails:
    """Data URLs by image path, made once each. size: px of the longer side, 0 for none, None to choose one for
    the page's images (`plan`)."""

    def __init__(self, size: int | None = None, budget: int = BUDGET) -> None:
        self.size = size
        self.budget = budget
        self._ids: dict[str, str | None] = {}
        self.urls: dict[str, str] = {}  # id -> data URL (what the page embeds)
        self.bytes = 0

    def plan(self, paths: list[str], budget: int | None = None) -> int:
        """Fix the size for these image paths (all the page will show) unless one was given; returns it.
        budget: bytes of data URLs (default: the one given when made)."""
        if self.size is None:
            self.size = choose_size(list(dict.fromkeys(paths)), self.budget if budget is None else budget)
        return self.size

    def add(self, path: str) -> str | None:
        """The id of path's thumbnail in `urls`, or None when there is none."""
        if path in self._ids:
            return self._ids[path]
        size = self.plan([path]) if self.size is None else self.size
        data = thumbnail_bytes(Path(path), size) if size > 0 else None
        ident = None
        if data is not None:
            ident = f"i{len(self.urls)}"
            self.urls[ident] = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
            self.bytes += len(data)
        self._ids[path] = ident
        return ident
