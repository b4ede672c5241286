"""M4Bench by catalog name: VLMEvalKit's prompt (the two images of `image1`/`image2`, then the query as it is), the
URL fall-back, a bad cell named, and scoring through the dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError

QUERY = "Are the two scenes the same?\n(A) yes\n(B) no"
RED, BLUE = image_bytes("red", "PNG"), image_bytes("blue", "JPEG")


def _row(index: int, **cells: str) -> dict:
    return {"index": index, "image1": b64(RED), "image2": b64(BLUE), "image1_path": f"https://h.org/d/{index}a.png",
            "image2_path": f"https://h.org/d/{index}b.jpg", "query": QUERY, "response": "B", **cells}  # fmt: skip


@pytest.mark.parametrize("name", ["State_Invariance", "Detailed_Difference"])
def test_the_two_images_then_the_query(lmu_root: Path, name: str):
    write_tsv(lmu_root / f"{name}.tsv", [_row(7), _row(8, image1="", image2="")])
    ds = build_dataset(name, root=lmu_root, progress=False, keep_local_tsv=True)
    first, second, text = ds.build_prompt(0)
    assert text == {"type": "text", "value": QUERY}
    assert Path(first["value"]).read_bytes() == RED and Path(second["value"]).read_bytes() == BLUE
    assert Path(first["value"]).name == "7_1.png" and Path(second["value"]).name == "7_2.jpg"
    assert Path(first["value"]).parent == lmu_root / "images" / name
    # without base64 the addresses are sent, as VLMEvalKit does
    assert [p["value"] for p in ds.build_prompt(1)[:2]] == ["https://h.org/d/8a.png", "https://h.org/d/8b.jpg"]
    result = ds.evaluate(ds.data.assign(prediction=["(B) no", "A"]))
    assert result.metrics == {"acc": 50.0} and result.vlmevalkit.metrics == {"acc": 50.0}


def test_a_row_without_usable_images_is_named(lmu_root: Path):
    write_tsv(lmu_root / "Spatial_Perception.tsv", [_row(1, image1="", image2_path=""), _row(2, image2="!!")])
    ds = build_dataset("Spatial_Perception", root=lmu_root, progress=False, keep_local_tsv=True)
    with pytest.raises(DataError, match=r"Spatial_Perception.tsv: row 0 \(index 1\), field image1: both images"):
        ds.build_prompt(0)
    with pytest.raises(DataError, match=r"row 1 \(index 2\), field image2"):
        ds.build_prompt(1)
