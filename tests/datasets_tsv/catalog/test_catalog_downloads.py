"""New catalog names fetched from a real HTTP server on 127.0.0.1 under their real file names (the server path is
the catalog URL's path), with the catalog's MD5 logic; MMBench variants sharing one image folder."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from urllib.parse import urlparse

import pytest

from datasets_tsv.catalog.entries import CatalogRow, catalog_rows
from datasets_tsv.catalog.registry import build_row
from vlmkit.core.files import DownloadError

from tests.support.tsvs import b64, files_under, image_bytes, write_tsv


def serve(row: CatalogRow, server, rows: list[dict], *, md5: str | None = "served") -> tuple[CatalogRow, Path]:
    """The catalog row pointed at the test server, which holds a TSV at the row's real URL path. md5: "served"
    (the served file's), None (no MD5, as some catalog rows have) or a value (e.g. the catalog's own)."""
    path = urlparse(row.url).path.lstrip("/")
    served = write_tsv(server.folder / path, rows)
    digest = hashlib.md5(served.read_bytes()).hexdigest() if md5 == "served" else (md5 or "")
    return dataclasses.replace(row, url=server.url(path), md5=digest), served


def mcq_rows(colours: list[str], **extra) -> list[dict]:
    return [
        {"index": i, "image": b64(image_bytes(c)), "question": f"Colour {i}?", "A": "red", "B": "blue",
         "answer": "A" if c == "red" else "B", **extra}
        for i, c in enumerate(colours)
    ]  # fmt: skip


def test_hrbench_downloads_from_its_real_file_name_and_is_saved_under_its_catalog_name(lmu_root, http_file_server):
    row = catalog_rows()["HRBench8K"]
    assert row.url.endswith("/hr_bench_8k.tsv")  # the file's name on the server is not the benchmark's
    local, served = serve(row, http_file_server, mcq_rows(["red", "blue"], cycle_category="c1", category="single"))
    ds = build_row(local, root=lmu_root, progress=False)
    assert (lmu_root / "HRBench8K.tsv").read_bytes() == served.read_bytes()
    assert ds.info()["md5"] == local.md5 and ds.info()["source"] == local.url
    assert http_file_server.hits["datasets/DreamMr/HR-Bench/resolve/main/hr_bench_8k.tsv"] == 1
    assert ds.image_paths(0)[0].startswith(str((lmu_root / "images" / "HRBench8K").resolve()))


def test_the_catalogs_md5_is_checked_twice_then_nothing_is_kept(lmu_root, http_file_server):
    row = catalog_rows()["InfoVQA_VAL"]
    local, _ = serve(row, http_file_server, [{"index": 0, "image": b64(image_bytes()), "question": "q", "answer": "a"}],
                     md5=row.md5)  # a file that is not the catalog's: its MD5 cannot match
    with pytest.raises(DownloadError, match=f"MD5 mismatch twice \\(expected {row.md5}"):
        build_row(local, root=lmu_root, progress=False)
    assert http_file_server.hits[urlparse(row.url).path.lstrip("/")] == 2
    assert list(lmu_root.iterdir()) == []


def test_a_row_without_md5_downloads_unverified_and_says_so(lmu_root, http_file_server):
    row = catalog_rows()["A-OKVQA"]
    assert row.url.endswith("/a-okvqa.tsv") and not row.md5
    local, served = serve(row, http_file_server, mcq_rows(["blue"]), md5=None)
    ds = build_row(local, root=lmu_root, progress=False)
    assert (lmu_root / "A-OKVQA.tsv").read_bytes() == served.read_bytes()
    info = ds.info()
    assert info["md5"] == hashlib.md5(served.read_bytes()).hexdigest()
    assert any("not verified" in note for note in info["notes"])


def test_mmbench_variants_share_one_image_folder(lmu_root, http_file_server):
    """Two v1.1 variants with the same indices and pictures: the second decodes nothing."""
    colours = ["red", "blue", "green"]
    en, _ = serve(catalog_rows()["MMBench_DEV_EN_V11"], http_file_server, mcq_rows(colours))
    cn, _ = serve(catalog_rows()["MMBench_DEV_CN_V11"], http_file_server,
                  [{**r, "question": f"颜色 {r['index']}?"} for r in mcq_rows(colours)])
    first = build_row(en, root=lmu_root, progress=False)
    first.prepare_images()
    folder = lmu_root / "images" / "MMBench_V11"
    written = files_under(folder)
    assert len(written) == 3
    second = build_row(cn, root=lmu_root, progress=False)
    second.prepare_images()
    assert files_under(folder) == written  # same files, same mtimes: nothing written again
    assert [second.image_paths(i) for i in range(3)] == [first.image_paths(i) for i in range(3)]
    assert not (lmu_root / "images" / "MMBench_DEV_CN_V11").exists()
    assert second.build_prompt(0)[-1]["value"].startswith("Question: 颜色 0?")
