"""Files a dataset writes into $LMUData (a downloaded TSV, a bundled TSV copied into place, decoded images and
their manifest) get the permissions open() would give them, so teammates on shared storage can read them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.mcq import ImageMCQDataset

from tests.support.tsvs import b64, image_bytes, write_tsv


def modes(paths: list[Path]) -> set[int]:
    return {p.stat().st_mode & 0o777 for p in paths}


def test_downloaded_tsv_images_and_manifest_follow_the_umask(lmu_root, http_file_server, umask):
    served = write_tsv(http_file_server.folder / "Remote.tsv", [
        {"index": i, "image": b64(image_bytes(c)), "question": "Colour?", "A": "red", "B": "blue", "answer": "A"}
        for i, c in enumerate(["red", "blue"])
    ])
    md5 = hashlib.md5(served.read_bytes()).hexdigest()
    ds = ImageMCQDataset("Remote", root=lmu_root, url=http_file_server.url("Remote.tsv"), md5=md5, progress=False)
    ds.prepare_images()
    folder = lmu_root / "images" / "Remote"
    written = [lmu_root / "Remote.tsv", folder / MANIFEST_NAME, *(Path(p) for i in range(2) for p in ds.image_paths(i))]
    assert modes(written) == {0o666 & ~umask}


def test_bundled_tsv_copied_into_lmudata_follows_the_umask(lmu_root, umask):
    from datasets_tsv.catalog.registry import build_dataset

    build_dataset("vlmkit_demo_mcq", root=lmu_root, progress=False)
    assert modes([lmu_root / "vlmkit_demo_mcq.tsv"]) == {0o666 & ~umask}
