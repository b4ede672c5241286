"""Thumbnails: any image Pillow reads becomes a small RGB JPEG, a file that is not one gets none, and the size
chosen for a page keeps its thumbnails within the budget."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from tests.support.workdirs import image
from vlmkit.report.thumbs import SIZES, Thumbnails, choose_size, thumbnail_bytes


def test_any_image_becomes_a_small_rgb_jpeg(tmp_path: Path) -> None:
    png = tmp_path / "a.png"
    Image.new("RGBA", (400, 100), (255, 0, 0, 0)).save(png)
    data = thumbnail_bytes(png, 96)
    with Image.open(io.BytesIO(data)) as small:
        assert small.format == "JPEG" and small.mode == "RGB" and small.size == (96, 24)
        assert small.getpixel((48, 12))[1] > 240  # transparent pixels on white, not black
    (tmp_path / "b.jpg").write_bytes(b"not an image")
    assert thumbnail_bytes(tmp_path / "b.jpg") is None and thumbnail_bytes(tmp_path / "gone.jpg") is None


def test_each_path_is_made_once(tmp_path: Path) -> None:
    thumbs = Thumbnails(64)
    path = image(tmp_path / "red.jpg", "red")
    assert thumbs.add(path) == thumbs.add(path) == "i0" and len(thumbs.urls) == 1
    assert thumbs.add(str(tmp_path / "gone.jpg")) is None
    assert Thumbnails(0).add(path) is None  # --thumb-size 0: paths only


def test_the_size_fits_the_budget(tmp_path: Path) -> None:
    paths = [image(tmp_path / f"{i}.jpg", colour) for i, colour in enumerate(["red", "blue", "green", "black"])]
    per_image = {s: max(len(thumbnail_bytes(Path(p), s)) for p in paths) * 4 / 3 + 30 for s in SIZES}
    many = paths * 1000  # the same four images listed 4,000 times: weighed as 4,000
    assert choose_size(many, budget=int(per_image[160] * 4000) + 4000) == 160
    assert choose_size(many, budget=int(per_image[96] * 4000) + 4000) in (112, 96)
    assert choose_size(many, budget=1000) == SIZES[-1]
    # a page lists an image once however many samples show it: four images fit the budget of 160 px
    thumbs = Thumbnails(budget=int(per_image[160] * 4) + 4)
    assert thumbs.plan(many) == 160
    assert thumbs.plan(paths * 10**4) == 160  # fixed once planned
