"""The verified-MD5 stamp (datasets_tsv.io.tsv_stamp) and the image pass it lets the decoder skip: an unchanged TSV is
not hashed nor read again, any change to it is (same size included), and images are still served from their own
content (a file replaced by hand is rewritten)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pandas as pd

from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.io.tsv_read import iter_records
from datasets_tsv.io.tsv_stamp import SETTLE_NS, STAMP_DIR, cached_records

from tests.support.tsvs import b64, image_bytes, write_tsv

RED, BLUE = image_bytes("red"), image_bytes("blue")


def rows(question: str = "Which colour?") -> list[dict]:
    return [
        {"index": 0, "image": b64(RED), "question": question, "A": "red", "B": "blue", "answer": "A"},
        {"index": 1, "image": b64(BLUE), "question": question, "A": "red", "B": "blue", "answer": "B"},
        {"index": 2, "image": "0", "question": question, "A": "red", "B": "blue", "answer": "A"},  # shares row 0's
    ]


def settle() -> None:
    """Let the file's last change age past the stamp's settling margin (a stamp is written only for a settled
    file: see tsv_stamp.settled)."""
    time.sleep(SETTLE_NS / 1e9 + 0.1)


def write(root: Path, question: str = "Which colour?") -> Path:
    path = write_tsv(root / "Colours.tsv", rows(question))
    settle()
    return path


def load(root: Path) -> ImageMCQDataset:
    return ImageMCQDataset("Colours", root=root, progress=False)


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def stamps(root: Path) -> list[Path]:
    return sorted((root / STAMP_DIR).glob("*.json"))


def forge_stamp_md5(root: Path, fake: str) -> None:
    """Put another MD5 in the stamp, so that a load which reports it can only have taken it from the stamp."""
    [stamp] = stamps(root)
    body = json.loads(stamp.read_text())
    body["md5"] = fake
    stamp.write_text(json.dumps(body))


def test_an_unchanged_file_takes_its_md5_and_table_from_the_stamp(lmu_root):
    tsv = write(lmu_root)
    first = load(lmu_root)
    assert (first.file_md5, first.md5_source, first.info()["md5_source"]) == (md5(tsv), "computed", "computed")
    assert len(stamps(lmu_root)) == 1
    second = load(lmu_root)
    assert (second.file_md5, second.info()["md5_source"]) == (md5(tsv), "stamp")
    pd.testing.assert_frame_equal(second.data, first.data)
    assert [second.build_prompt(i) for i in range(3)] == [first.build_prompt(i) for i in range(3)]
    forge_stamp_md5(lmu_root, "0" * 32)
    assert load(lmu_root).file_md5 == "0" * 32  # the stamp is what was read: the file was not hashed


def test_a_same_size_rewrite_with_a_new_mtime_is_hashed_again(lmu_root):
    tsv = write(lmu_root, "Which colour?")
    load(lmu_root)
    before = tsv.stat()
    write(lmu_root, "WHICH colour?")  # the same number of bytes, another content
    assert tsv.stat().st_size == before.st_size and tsv.stat().st_mtime_ns != before.st_mtime_ns
    again = load(lmu_root)
    assert (again.file_md5, again.md5_source) == (md5(tsv), "computed")
    assert again.line(0)["question"] == "WHICH colour?"
    assert load(lmu_root).md5_source == "stamp"  # and the new content is stamped in turn


def test_a_same_size_rewrite_that_puts_the_old_mtime_back_is_hashed_again(lmu_root):
    tsv = write(lmu_root, "Which colour?")
    load(lmu_root)
    before = tsv.stat()
    write_tsv(tsv, rows("WHICH colour?"))
    os.utime(tsv, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as stamped; ctime cannot be reset
    assert (tsv.stat().st_size, tsv.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    again = load(lmu_root)
    assert (again.file_md5, again.md5_source, again.line(0)["question"]) == (md5(tsv), "computed", "WHICH colour?")


def test_a_size_change_is_hashed_again(lmu_root):
    tsv = write(lmu_root, "Which colour?")
    load(lmu_root)
    forge_stamp_md5(lmu_root, "0" * 32)
    write(lmu_root, "Which colour is it?")
    again = load(lmu_root)
    assert (again.file_md5, again.md5_source) == (md5(tsv), "computed")
    assert again.line(0)["question"] == "Which colour is it?"


def test_a_file_changed_just_before_hashing_gets_no_stamp(lmu_root):
    tsv = write_tsv(lmu_root / "Colours.tsv", rows())
    soon = time.time_ns() + 10**10
    os.utime(tsv, ns=(soon, soon))  # not settled when hashed: a rewrite in the same clock tick could go unseen
    assert load(lmu_root).md5_source == "computed"
    assert stamps(lmu_root) == []
    assert load(lmu_root).md5_source == "computed"


def test_a_catalog_md5_is_still_checked_against_the_stamp(lmu_root):
    tsv = write(lmu_root)
    load(lmu_root)
    forge_stamp_md5(lmu_root, "0" * 32)
    ok = ImageMCQDataset("Colours", root=lmu_root, progress=False, md5="0" * 32)
    assert ok.md5_source == "stamp" and not ok.md5_mismatch_accepted
    kept = ImageMCQDataset("Colours", root=lmu_root, progress=False, md5=md5(tsv), keep_local_tsv=True)
    assert kept.md5_mismatch_accepted and kept.info()["catalog_md5"] == md5(tsv)


def test_a_second_pass_over_the_same_tsv_is_replayed_and_gives_the_same_files(lmu_root):
    write(lmu_root)
    first = load(lmu_root)
    paths = [first.image_paths(i) for i in range(3)]
    assert paths[2] == paths[0] and Path(paths[0][0]).read_bytes() == RED
    manifest = first.image_root / MANIFEST_NAME
    assert list(json.loads(manifest.read_text())["passes"]) == [first.file_md5]
    def state() -> tuple[bytes, int, int]:
        return manifest.read_bytes(), manifest.stat().st_mtime_ns, manifest.stat().st_ino

    recorded = state()
    second = load(lmu_root)
    assert second.md5_source == "stamp"
    assert [second.image_paths(i) for i in range(3)] == paths
    assert state() == recorded  # replayed from the record: a full pass would have recorded itself again


def test_an_image_replaced_by_hand_is_rewritten(lmu_root):
    write(lmu_root)
    first = load(lmu_root)
    [red] = first.image_paths(0)
    [blue] = first.image_paths(1)
    Path(red).write_bytes(BLUE)  # another picture (another size)
    stat = Path(blue).stat()
    Path(blue).write_bytes(RED[: len(BLUE)].ljust(len(BLUE), b"\0"))  # the same size, a later mtime
    os.utime(blue, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = load(lmu_root)
    assert again.md5_source == "stamp"
    assert again.image_paths(0) == [red] and again.image_paths(2) == [red]
    assert Path(red).read_bytes() == RED and Path(blue).read_bytes() == BLUE


def test_an_image_deleted_by_hand_is_written_again(lmu_root):
    write(lmu_root)
    [red] = load(lmu_root).image_paths(0)
    Path(red).unlink()
    again = load(lmu_root)
    assert again.image_paths(2) == [red] and Path(red).read_bytes() == RED


def test_a_changed_tsv_is_never_served_the_old_pass(lmu_root):
    tsv = write(lmu_root)
    [path] = load(lmu_root).image_paths(0)
    swapped = rows()
    swapped[0]["image"], swapped[1]["image"] = b64(BLUE), b64(RED)
    write_tsv(tsv, swapped)
    settle()
    again = load(lmu_root)
    assert again.md5_source == "computed"
    assert again.image_paths(0) == [path] and Path(path).read_bytes() == BLUE


def test_cached_records_are_the_files_records_without_images(lmu_root):
    tsv = write(lmu_root, 'Which "colour"?\tor shade')  # a quoted field with a tab in it
    header, records = iter_records(tsv)
    records = list(records)
    keep = [i for i, name in enumerate(header) if name != "image"]
    expected = ([header[i] for i in keep], [[record[i] for i in keep] for record in records])
    unstamped_header, unstamped = cached_records(lmu_root, tsv)  # not stamped yet: read (once) from the file
    assert (unstamped_header, list(unstamped)) == expected
    assert load(lmu_root).md5_source == "computed"
    cached_header, cached = cached_records(lmu_root, tsv)  # stamped: from the stamp
    assert (cached_header, list(cached)) == expected
    forge_stamp_md5(lmu_root, "0" * 32)
    write(lmu_root, "Which colour?")
    _, changed = cached_records(lmu_root, tsv)  # changed since: the file is read again
    assert [row[1] for row in changed] == [b"Which colour?"] * 3
    assert load(lmu_root).file_md5 == md5(tsv)
