"""A first load reads a TSV once (the MD5 is hashed from the same bytes the table is streamed from, and the kind
detection of a local TSV is that same read), a second load of an unchanged TSV hashes nothing, and the image pass
that writes its files on a second thread writes and records the same files, failures included."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import time
from pathlib import Path

import pytest

from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.io.tsv_read import DatasetError, _lines, iter_records, table_text
from datasets_tsv.io.tsv_stamp import (
    SETTLE_NS,
    STAMP_DIR,
    cached_records,
    identity,
    scan,
    take_fresh_scan,
)
from vlmkit.core.files import HashedBlocks

from tests.support.tsvs import b64, image_bytes, write_tsv

RED, BLUE = image_bytes("red"), image_bytes("blue")


def rows(n: int = 3) -> list[dict]:
    colours = [b64(RED), b64(BLUE)]
    return [{"index": i, "image": colours[i % 2], "question": f"Colour {i}?", "A": "red", "B": "blue",
             "answer": "AB"[i % 2]} for i in range(n)]


def settled_tsv(path: Path, table: list[dict]) -> Path:
    write_tsv(path, table)
    time.sleep(SETTLE_NS / 1e9 + 0.1)  # a stamp (and a kept scan) is only for a settled file: see tsv_stamp.settled
    return path


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 22])
@pytest.mark.parametrize("consumed", [0, 1, None])  # blocks read by the caller before asking (None: all)
def test_hashed_blocks_give_the_files_bytes_and_its_md5(tmp_path, block_size, consumed):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(random.Random(0).randrange(256) for _ in range(1000)))
    with HashedBlocks(path, block_size=block_size) as blocks:
        got = []
        for block in blocks:
            if consumed is not None and len(got) >= consumed:
                break
            got.append(block)
        assert blocks.hexdigest() == md5(path)  # whatever the caller left unread is hashed too
    assert b"".join(got) == (path.read_bytes() if consumed is None else path.read_bytes()[: consumed * block_size])


def test_hashed_blocks_of_an_empty_file(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    with HashedBlocks(path) as blocks:
        assert list(blocks) == [] and blocks.hexdigest() == hashlib.md5(b"").hexdigest()


def test_lines_from_blocks_are_the_lines_a_file_gives():
    rng = random.Random(1)
    for _ in range(500):
        data = bytes(rng.choice(b'ab\t"\r\n') for _ in range(rng.randrange(80)))
        size = rng.randrange(1, 9)
        blocks = [data[i:i + size] for i in range(0, len(data), size)]
        assert list(_lines(blocks)) == io.BytesIO(data).readlines(), (data, size)


def test_records_from_blocks_are_the_records_from_the_file(tmp_path):
    path = write_tsv(tmp_path / "t.tsv", [*rows(), {"index": 9, "image": b64(RED), "question": 'a "multi\nline"\tq'}])
    header, records = iter_records(path)
    with HashedBlocks(path, block_size=5) as blocks:  # lines and quoted fields cut across blocks
        header_b, records_b = iter_records(path, blocks)
        assert (header_b, list(records_b)) == (header, list(records))
        assert blocks.hexdigest() == md5(path)


def test_one_scan_gives_the_md5_and_the_table(tmp_path):
    path = write_tsv(tmp_path / "t.tsv", rows(5))
    found = scan(path)
    assert (found.md5, found.table, found.error) == (md5(path), table_text(path), None)
    assert found.identity == identity(path)


def test_a_bad_row_stops_the_table_but_the_whole_file_is_hashed(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tquestion\n0\tok\n1\tcaf\xe9\n" + b"2\tmore\n" * 1000)
    found = scan(path)
    assert found.table is None and found.md5 == md5(path)
    assert isinstance(found.error, DatasetError) and "row 1, field question: not UTF-8" in str(found.error)


def test_a_bad_row_in_a_file_that_is_not_the_catalogs_is_reported_as_the_wrong_file(lmu_root):
    path = lmu_root / "Colours.tsv"
    path.write_bytes(b"index\tquestion\tA\tB\n0\tok\tx\ty\n1\tcaf\xe9\tx\ty\n")
    with pytest.raises(DatasetError, match=rf"MD5 {md5(path)} differs from the catalog's {'0' * 32}"):
        ImageMCQDataset("Colours", root=lmu_root, md5="0" * 32, progress=False)
    with pytest.raises(DatasetError, match=r"row 1, field question: not UTF-8"):
        ImageMCQDataset("Colours", root=lmu_root, progress=False)


def test_the_kind_detections_read_is_the_constructors(lmu_root):
    tsv = settled_tsv(lmu_root / "Mine.tsv", rows())
    header, records = cached_records(lmu_root, tsv)  # what build_dataset's kind detection reads
    assert "image" not in header and len(list(records)) == 3
    kept = take_fresh_scan(tsv, identity(tsv), "image")
    assert kept is not None and (kept.md5, kept.table) == (md5(tsv), table_text(tsv))
    assert take_fresh_scan(tsv, identity(tsv), "image") is None  # taken once


def test_a_scan_of_a_file_changed_since_is_not_taken(lmu_root):
    tsv = settled_tsv(lmu_root / "Mine.tsv", rows())
    cached_records(lmu_root, tsv)
    write_tsv(tsv, rows(4))
    assert take_fresh_scan(tsv, identity(tsv), "image") is None


def test_a_scan_of_an_unsettled_file_is_not_kept(lmu_root):
    tsv = write_tsv(lmu_root / "Mine.tsv", rows())
    soon = time.time_ns() + 10**10
    os.utime(tsv, ns=(soon, soon))  # changed "now": a rewrite in the same clock tick could keep its identity
    assert cached_records(lmu_root, tsv) is not None
    assert take_fresh_scan(tsv, identity(tsv), "image") is None


def test_a_second_build_of_an_unchanged_local_tsv_does_not_hash_it(lmu_root):
    tsv = settled_tsv(lmu_root / "Mine.tsv", rows())
    first = build_dataset("Mine", root=lmu_root, progress=False)  # kind detection, then the constructor
    assert (first.file_md5, first.info()["md5_source"]) == (md5(tsv), "computed")
    assert take_fresh_scan(tsv, identity(tsv), "image") is None  # the constructor took the detection's read
    [stamp] = sorted((lmu_root / STAMP_DIR).glob("*.json"))
    body = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({**body, "md5": "f" * 32}))  # only a load that did not hash the file reports this
    second = build_dataset("Mine", root=lmu_root, progress=False)
    assert (second.file_md5, second.info()["md5_source"]) == ("f" * 32, "stamp")
    assert second.data.equals(first.data) and type(second) is type(first)


def test_images_written_on_the_second_thread_are_all_there_and_recorded(lmu_root):
    write_tsv(lmu_root / "Colours.tsv", rows(40))
    ds = ImageMCQDataset("Colours", root=lmu_root, progress=False)
    paths = [ds.image_paths(i) for i in range(40)]
    assert all(Path(p).read_bytes() == (RED, BLUE)[i % 2] for i, [p] in enumerate(paths))
    recorded = json.loads((ds.image_root / MANIFEST_NAME).read_text())["files"]
    assert sorted(recorded) == sorted(Path(p).name for [p] in paths)
    assert all(recorded[Path(p).name][1:] == [Path(p).stat().st_size, Path(p).stat().st_mtime_ns] for [p] in paths)


def test_a_failed_write_is_raised_and_what_was_written_is_recorded(lmu_root):
    write_tsv(lmu_root / "Colours.tsv", rows(6))
    ds = ImageMCQDataset("Colours", root=lmu_root, progress=False)
    (ds.image_root / "3.jpg").mkdir(parents=True)  # a folder where row 3's image goes: its write fails
    with pytest.raises(OSError):
        ds.prepare_images()
    recorded = json.loads((ds.image_root / MANIFEST_NAME).read_text())["files"]
    assert {"0.jpg", "1.jpg", "2.jpg"} <= set(recorded) and "3.jpg" not in recorded
    assert (ds.image_root / "0.jpg").read_bytes() == RED


def named(images: list[str], name: str = "same.jpg") -> list[dict]:
    return [{"index": i, "image": image, "image_path": name, "question": "Colour?", "A": "red", "B": "blue",
             "answer": "A"} for i, image in enumerate(images)]


@pytest.mark.parametrize("recorded", [False, True])  # the name new to the folder, or in its manifest from before
def test_two_pictures_for_one_file_name_are_an_error_naming_both_rows(lmu_root, recorded):
    if recorded:
        write_tsv(lmu_root / "Colours.tsv", named([b64(RED)]))
        ImageMCQDataset("Colours", root=lmu_root, progress=False).prepare_images()
    write_tsv(lmu_root / "Colours.tsv", named([b64(RED), b64(RED), b64(BLUE)]))
    ds = ImageMCQDataset("Colours", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"row 2 \(index 2\), field image: its image would be written to "
                                           r"same\.jpg, where row 0 put a different image"):
        ds.prepare_images()
    assert (ds.image_root / "same.jpg").read_bytes() == RED


def test_one_picture_named_by_several_rows_is_written_once(lmu_root):
    write_tsv(lmu_root / "Colours.tsv", named([b64(BLUE)] * 3))
    ds = ImageMCQDataset("Colours", root=lmu_root, progress=False)
    assert [ds.image_paths(i) for i in range(3)] == [[str(ds.image_root / "same.jpg")]] * 3
    assert (ds.image_root / "same.jpg").read_bytes() == BLUE
