"""datasets_tsv.io.images edge by edge (mutation testing, issue 31): file names and suffixes, base64 that needs the
tolerant decoder, formats judged by their header, the digests a recorded pass keeps, existing files named by
`image_path`, the writer thread, the decode lock (a pass another process recorded while this one waited, a waiter
that gives up), the progress bar, and the one-line errors. Expectations are worked by hand: the bytes written are
the bytes pillow made, digests are hashlib's SHA-1 of the field as written in the TSV, file names are spelled out."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import datasets_tsv.io.setup_lock as setup_lock
from datasets_tsv.io import images
from datasets_tsv.io.image_manifest import MANIFEST_NAME, ImageManifest
from datasets_tsv.io.images import (
    DECODE_LOCK,
    _Decoder,
    _has_known_signature,
    _needs_full_decode,
    _Writer,
    decode_images,
)
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.tsvs import b64, files_under, image_bytes, write_tsv

RED_JPEG = image_bytes("red", "JPEG")
BLUE_PNG = image_bytes("blue", "PNG")
GREEN_GIF = image_bytes("green", "GIF")
GREY_PPM = image_bytes("grey", "PPM")  # no signature the decoder knows: pillow's header reading accepts it
NOT_AN_IMAGE = b"plain text, no image format has this header; long enough not to be a reference" * 2


def row(index, image="", **more) -> dict:
    return {"index": index, "image": image, "question": "Q?", "answer": "yes", **more}


def write_raw(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("ascii")).hexdigest()


_re = re.escape


# --- the helpers that judge a field ---------------------------------------------------------------------------------


@pytest.mark.parametrize("head", [b"\xff\xd8\xff\xe0", b"\x89PNG\r\n\x1a\n\x00", b"GIF87a..", b"GIF89a..",
                                  b"BM\x00\x00", b"II*\x00\x08", b"MM\x00*\x00", b"RIFF\x00\x00\x00\x00WEBPVP8 "])
def test_each_known_signature_is_known(head: bytes) -> None:
    assert _has_known_signature(head + b"\x00" * 8)


@pytest.mark.parametrize("head", [b"\xff\xd8\x00", b"\x89PNG\r\n\x1a\x00", b"GIF88a", b"B", b"II*\x01", b"MM\x00+",
                                  b"RIFF\x00\x00\x00\x00WAVEfmt ", b"RIFX\x00\x00\x00\x00WEBPVP8 ", b"P6\n32 24\n",
                                  b"", b"WEBP\x00\x00\x00\x00RIFF"])
def test_near_signatures_are_not(head: bytes) -> None:
    assert not _has_known_signature(head)


@pytest.mark.parametrize(
    "field, needs",
    [
        ("data:image/png;base64,iVBORw0K", True), (b"data:image/png;base64,iVBORw0K", True),
        ("iVBO Rw0K", True), ("iVBO\nRw0K", True), (b"iVBO\rRw0K", True), (b"iVBO\r\nRw0K", True),
        ("iVBORw0KGgo", False), (b"iVBORw0KGgo=", False), ("", False), ("xdata:abc", False), ("iVBO\tRw0K", False),
        ("\u00e9t\u00e9 sans espace", True), ("\u00e9t\u00e9", False),  # not ASCII: read with '?' for it, no error
    ],
)
def test_a_field_needs_a_full_decode_only_for_whitespace_or_a_data_prefix(field, needs: bool) -> None:
    assert _needs_full_decode(field) is needs


# --- names and suffixes ---------------------------------------------------------------------------------------------


def test_an_image_path_with_an_image_suffix_is_the_name_as_given_in_any_case(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "N.tsv", [row(0, b64(BLUE_PNG), image_path="Pic.PNG"),
                                         row(1, b64(RED_JPEG), image_path="photo.Jpeg"),
                                         row(2, b64(GREEN_GIF), image_path="noext"),
                                         row(3, b64(BLUE_PNG), image_path="report.pdf")])
    folder = tmp_path / "images"
    paths = decode_images(tsv, folder)
    base = folder.resolve()
    # a name whose suffix is an image's is kept; any other gets the suffix of the bytes added
    assert paths == [[str(base / "Pic.PNG")], [str(base / "photo.Jpeg")], [str(base / "noext.gif")],
                     [str(base / "report.pdf.png")]]
    assert (base / "Pic.PNG").read_bytes() == BLUE_PNG and (base / "report.pdf.png").read_bytes() == BLUE_PNG


def test_a_named_row_does_not_need_a_plain_index(tmp_path: Path) -> None:
    # the index only names a file when no image_path does: a slash in it is then harmless
    tsv = write_tsv(tmp_path / "S.tsv", [row("a/b", b64(RED_JPEG), image_path="ab.jpg"),
                                         row("c/d", json.dumps([b64(BLUE_PNG)]), image_path='["cd.png"]')])
    paths = decode_images(tsv, tmp_path / "images")
    assert [Path(p).name for [p] in paths] == ["ab.jpg", "cd.png"]


@pytest.mark.parametrize("index", ["a/b", "a\\b", ".", ".."])
def test_an_index_that_cannot_name_a_file_is_refused_with_one_line(tmp_path: Path, index: str) -> None:
    tsv = write_tsv(tmp_path / "X.tsv", [row(index, b64(RED_JPEG))])
    message = (rf"X\.tsv: row 0 \(index {_re(index)}\), field index: {_re(repr(index))} cannot name an image file "
               r"\(path separator or dot\); give an `image_path` column or a plain index$")
    with pytest.raises(DatasetError, match=message):
        decode_images(tsv, tmp_path / "images")
    assert files_under(tmp_path / "images") == {}


def test_an_empty_index_cannot_name_a_list_image(tmp_path: Path) -> None:
    tsv = write_raw(tmp_path / "E.tsv", [b"index\timage", b"\t" + json.dumps([b64(RED_JPEG)]).encode()])
    with pytest.raises(DatasetError, match=r"E\.tsv: row 0 \(index \), field index: '' cannot name an image file"):
        decode_images(tsv, tmp_path / "images")


def test_a_name_with_a_nul_is_refused_as_leaving_the_folder(tmp_path: Path) -> None:
    tsv = write_raw(tmp_path / "Z.tsv", [b"index\timage\timage_path",
                                         b"0\t" + b64(RED_JPEG).encode() + b"\tbad\x00name.jpg"])
    folder = tmp_path / "images"
    with pytest.raises(DatasetError, match=r"Z\.tsv: row 0 \(index 0\), field image_path: .*is an absolute path; "
                                           rf"refusing to write outside {_re(str(folder))}$"):
        decode_images(tsv, folder)


def test_names_in_subfolders_are_written_there_and_recorded_by_their_relative_name(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "F.tsv", [row(0, b64(RED_JPEG), image_path="sub/deeper/r.jpg"),
                                         row(1, b64(BLUE_PNG), image_path="sub/b")])
    folder = tmp_path / "images"
    paths = decode_images(tsv, folder)
    base = folder.resolve()
    assert paths == [[str(base / "sub" / "deeper" / "r.jpg")], [str(base / "sub" / "b.png")]]
    recorded = json.loads((folder / MANIFEST_NAME).read_text())["files"]
    assert sorted(recorded) == ["sub/b.png", "sub/deeper/r.jpg"]


def test_blank_names_in_a_list_fall_back_to_the_index(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "L.tsv", [row(7, json.dumps([b64(RED_JPEG), b64(BLUE_PNG), b64(GREEN_GIF)]),
                                             image_path=json.dumps(["first.jpg", "  ", ""]))])
    paths = decode_images(tsv, tmp_path / "images")
    assert [Path(p).name for p in paths[0]] == ["first.jpg", "7_1.png", "7_2.gif"]


def test_a_list_row_without_names_numbers_its_images_from_zero(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "L.tsv", [row("q", json.dumps([b64(BLUE_PNG), b64(RED_JPEG)]))])
    paths = decode_images(tsv, tmp_path / "images")
    assert [Path(p).name for p in paths[0]] == ["q_0.png", "q_1.jpg"]
    assert [Path(p).read_bytes() for p in paths[0]] == [BLUE_PNG, RED_JPEG]


@pytest.mark.parametrize("names, count", [('["a.png"]', 1), ('["a.png", "b.png", "c.png"]', 3), ("one.png", 1)])
def test_as_many_names_as_images(tmp_path: Path, names: str, count: int) -> None:
    tsv = write_tsv(tmp_path / "C.tsv", [row(3, json.dumps([b64(BLUE_PNG), b64(RED_JPEG)]), image_path=names)])
    with pytest.raises(DatasetError, match=rf"C\.tsv: row 0 \(index 3\), field image_path: {count} name\(s\) for 2 "
                                           r"image\(s\)$"):
        decode_images(tsv, tmp_path / "images")


def test_a_single_image_with_a_list_of_two_names_is_refused(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "C.tsv", [row(3, b64(BLUE_PNG), image_path='["a.png", "b.png"]')])
    with pytest.raises(DatasetError, match=r"row 0 \(index 3\), field image_path: 2 name\(s\) for 1 image\(s\)$"):
        decode_images(tsv, tmp_path / "images")


def test_a_bracket_that_is_not_a_list_of_strings_is_refused(tmp_path: Path) -> None:
    bad = "[" + b64(RED_JPEG)  # long, starts with '[', parses as nothing
    tsv = write_tsv(tmp_path / "B.tsv", [row(2, bad)])
    with pytest.raises(DatasetError, match=r"B\.tsv: row 0 \(index 2\), field image: starts with '\[' but is not a "
                                           r"list of strings$"):
        decode_images(tsv, tmp_path / "images")


# --- base64 the strict decoder refuses, and formats -----------------------------------------------------------------


@pytest.mark.parametrize("spoil", ["unpadded", "data-url", "wrapped", "spaced"])
def test_base64_the_tolerant_decoder_reads_gives_the_same_bytes(tmp_path: Path, spoil: str) -> None:
    text = b64(BLUE_PNG)
    assert text.endswith("=")  # pillow's PNG here needs padding, so that "unpadded" really lacks it
    field = {
        "unpadded": text.rstrip("="),
        "data-url": "data:image/png;base64," + text,
        "wrapped": "\n".join(text[i:i + 76] for i in range(0, len(text), 76)),
        "spaced": text[:40] + " " + text[40:],
    }[spoil]
    tsv = write_tsv(tmp_path / "W.tsv", [row(0, field)])
    paths = decode_images(tsv, tmp_path / "images")
    assert Path(paths[0][0]).name == "0.png"  # the suffix read off the decoded bytes, not the field's first chars
    assert Path(paths[0][0]).read_bytes() == BLUE_PNG


def test_a_format_without_a_known_signature_is_kept_when_its_header_reads(tmp_path: Path) -> None:
    assert not _has_known_signature(GREY_PPM)
    tsv = write_tsv(tmp_path / "P.tsv", [row(0, b64(GREY_PPM)), row(1, b64(NOT_AN_IMAGE))])
    with pytest.raises(DatasetError, match=r"P\.tsv: row 1 \(index 1\), field image: not a readable image \(no image "
                                           r"format recognised\)$"):
        decode_images(tsv, tmp_path / "images")
    tsv = write_tsv(tmp_path / "P.tsv", [row(0, b64(GREY_PPM))])
    [[path]] = decode_images(tsv, tmp_path / "images")
    assert Path(path).name == "0.jpg" and Path(path).read_bytes() == GREY_PPM  # unknown suffix: .jpg, bytes kept


def test_an_empty_list_element_is_an_empty_image(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "E.tsv", [row(5, json.dumps([b64(RED_JPEG), ""]))])
    with pytest.raises(DatasetError, match=r"E\.tsv: row 0 \(index 5\), field image\[1\]: empty image$"):
        decode_images(tsv, tmp_path / "images")


def test_broken_base64_is_one_line_naming_the_field(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "B.tsv", [row(9, json.dumps([b64(RED_JPEG), "%" * 70]))])
    with pytest.raises(DatasetError, match=r"B\.tsv: row 0 \(index 9\), field image\[1\]: not valid base64 \(.*\)$"):
        decode_images(tsv, tmp_path / "images")


def test_a_field_broken_in_its_first_characters_is_an_error_not_a_guess(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "H.tsv", [row(1, "%%%%" + b64(RED_JPEG))])
    with pytest.raises(DatasetError, match=r"H\.tsv: row 0 \(index 1\), field image: not valid base64"):
        decode_images(tsv, tmp_path / "images")
    assert files_under(tmp_path / "images") == {}


# --- reuse, conflicts and the digests of a recorded pass ------------------------------------------------------------


def test_a_recorded_pass_keeps_the_sha1_of_each_field_it_wrote_or_reused(tmp_path: Path) -> None:
    red, blue, green = b64(RED_JPEG), b64(BLUE_PNG), b64(GREEN_GIF)
    rows = [row(0, red), row(1, blue, image_path="b.png"), row(2, json.dumps([green, red])), row(3, "0"),
            row(4, blue, image_path="b.png")]
    tsv = write_tsv(tmp_path / "D.tsv", rows)
    folder = tmp_path / "images"
    want = {"0.jpg": sha1(red), "b.png": sha1(blue), "2_0.gif": sha1(green), "2_1.jpg": sha1(red)}
    for _ in range(2):  # first written (the writer computes each digest), then reused from the manifest's records
        decode_images(tsv, folder, tsv_md5="b" * 32)
        body = json.loads((folder / MANIFEST_NAME).read_text())
        assert body["passes"]["b" * 32]["files"] == want
        assert {name: record[0] for name, record in body["files"].items()} == want
        (folder / MANIFEST_NAME).write_text(json.dumps({**body, "passes": {}}))  # the second pass is a full one


def test_a_name_two_rows_give_to_two_pictures_is_refused_after_a_reuse(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    first = write_tsv(tmp_path / "A.tsv", [row(0, b64(RED_JPEG), image_path="one.jpg")])
    decode_images(first, folder)  # one.jpg is now in the manifest: the next pass reuses it, digest known
    tsv = write_tsv(tmp_path / "B.tsv", [row(0, b64(RED_JPEG), image_path="one.jpg"),
                                         row(1, b64(RED_JPEG), image_path="one.jpg"),
                                         row(2, b64(BLUE_PNG), image_path="one.jpg")])
    with pytest.raises(DatasetError, match=r"B\.tsv: row 2 \(index 2\), field image: its image would be written to "
                                           r"one\.jpg, where row 0 put a different image; give the rows different "
                                           r"`image_path` names$"):
        decode_images(tsv, folder)
    assert (folder / "one.jpg").read_bytes() == RED_JPEG


def test_a_changed_picture_under_a_recorded_name_is_written_again(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    decode_images(write_tsv(tmp_path / "A.tsv", [row(0, b64(RED_JPEG))]), folder)
    stamp = (folder / "0.jpg").stat().st_mtime_ns
    other = image_bytes("black", "JPEG")
    [[path]] = decode_images(write_tsv(tmp_path / "A.tsv", [row(0, b64(other))]), folder)
    assert Path(path).read_bytes() == other
    body = json.loads((folder / MANIFEST_NAME).read_text())
    assert body["files"]["0.jpg"][0] == sha1(b64(other))
    assert body["files"]["0.jpg"][1] == len(other) and (folder / "0.jpg").stat().st_mtime_ns >= stamp


def test_the_same_picture_under_a_recorded_name_is_not_written_again(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    tsv = write_tsv(tmp_path / "A.tsv", [row(0, b64(RED_JPEG)), row(1, b64(RED_JPEG), image_path="0.jpg")])
    decode_images(tsv, folder)
    before = files_under(folder, manifest=True)
    assert decode_images(tsv, folder) == [[str(folder.resolve() / "0.jpg")]] * 2
    assert files_under(folder, manifest=True) == before  # nothing written, not even the manifest


# --- existing files named by image_path -----------------------------------------------------------------------------


def test_existing_files_are_looked_up_in_the_image_folder_first_then_beside_the_tsv(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "both.png").write_bytes(BLUE_PNG)
    (tmp_path / "both.png").write_bytes(RED_JPEG)
    (tmp_path / "beside.png").write_bytes(GREEN_GIF)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "abs.png").write_bytes(BLUE_PNG)
    tsv = write_tsv(tmp_path / "X.tsv", [row(0, "", image_path="both.png"), row(1, "", image_path="beside.png"),
                                         row(2, "", image_path=str(outside / "abs.png")),
                                         row(3, "", image_path=json.dumps(["beside.png", "both.png"]))])
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    paths = decode_images(tsv, folder)
    assert paths == [[str(folder.resolve() / "both.png")], [str(tmp_path.resolve() / "beside.png")],
                     [str(outside / "abs.png")],
                     [str(tmp_path.resolve() / "beside.png"), str(folder.resolve() / "both.png")]]


def test_an_existing_file_is_never_looked_up_in_the_working_folder_or_outside(tmp_path: Path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "here.png").write_bytes(BLUE_PNG)
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "up.png").write_bytes(BLUE_PNG)  # beside data/, not in it
    monkeypatch.chdir(cwd)
    folder = tmp_path / "data" / "images"
    for name in ("here.png", "../up.png", str(tmp_path / "data" / "missing.png")):
        tsv = write_tsv(data / "X.tsv", [row(4, "", image_path=name)])
        with pytest.raises(DatasetError, match=rf"X\.tsv: row 0 \(index 4\), field image_path: no image data and no "
                                               rf"file {_re(repr(name))} \(looked in {_re(str(folder))} and "
                                               rf"{_re(str(data))}\)$"):
            decode_images(tsv, folder)


def test_a_folder_is_not_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "dir.png").mkdir()
    tsv = write_tsv(tmp_path / "X.tsv", [row(0, "", image_path="dir.png")])
    with pytest.raises(DatasetError, match=r"no image data and no file 'dir\.png'"):
        decode_images(tsv, tmp_path / "images")


# --- the recorded pass and the lock ---------------------------------------------------------------------------------


def test_the_lock_file_is_made_only_by_a_pass_with_a_known_md5(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "K.tsv", [row(0, b64(RED_JPEG))])
    decode_images(tsv, tmp_path / "plain")
    assert not (tmp_path / "plain" / DECODE_LOCK).exists()
    decode_images(tsv, tmp_path / "locked", tsv_md5="c" * 32)
    assert (tmp_path / "locked" / ".decode.lock").is_file()
    body = json.loads((tmp_path / "locked" / MANIFEST_NAME).read_text())
    assert body["passes"]["c" * 32]["rows"] == [["0.jpg"]]
    assert json.loads((tmp_path / "plain" / MANIFEST_NAME).read_text())["passes"] == {}


def test_a_recorded_pass_of_another_length_is_not_replayed(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "R.tsv", [row(0, b64(RED_JPEG)), row(1, "0"), row(2, b64(BLUE_PNG))])
    folder = tmp_path / "images"
    first = decode_images(tsv, folder, tsv_md5="d" * 32, index_keys=["0", "1", "2"])
    assert decode_images(tsv, folder, tsv_md5="d" * 32, index_keys=["0", "1", "2"]) == first
    with pytest.raises(DatasetError, match=r"R\.tsv: 3 rows now, 4 when the table was read$"):
        decode_images(tsv, folder, tsv_md5="d" * 32, index_keys=["0", "1", "2", "3"])
    with pytest.raises(DatasetError, match=r"R\.tsv: row 2 \(index 2\): the rows changed since the table was read$"):
        decode_images(tsv, folder, tsv_md5="d" * 32, index_keys=["0", "1"])


def test_a_pass_replays_only_the_md5_it_recorded(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "R.tsv", [row(0, b64(RED_JPEG))])
    folder = tmp_path / "images"
    decode_images(tsv, folder, tsv_md5="e" * 32)
    write_tsv(tsv, [row(0, b64(BLUE_PNG))])
    assert decode_images(tsv, folder, tsv_md5="f" * 32) == [[str(folder.resolve() / "0.png")]]
    assert decode_images(tsv, folder, tsv_md5="e" * 32) == [[str(folder.resolve() / "0.jpg")]]


# --- the decoder and the writer called directly ---------------------------------------------------------------------


def test_the_decoder_places_plain_names_and_refuses_escapes(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", folder / "link")
    decoder = _Decoder(tmp_path / "T.tsv", folder)
    base = str(folder.resolve())
    assert decoder.target("a.png", 0, "0", "index") == (base + "/a.png", "a.png")
    assert decoder.target("s/a.png", 0, "0", "image_path") == (base + "/s/a.png", "s/a.png")
    for name in ("link", "link/a.png", "../a.png", "", " . ", ".."):
        with pytest.raises(DatasetError, match=rf"T\.tsv: row 3 \(index i\), field f: .*; refusing to write outside "
                                               rf"{_re(str(folder))}$"):
            decoder.target(name, 3, "i", "f")
    assert decoder.where(2, "x", "image") == f"{tmp_path / 'T.tsv'}: row 2 (index x), field image"


def test_the_decoders_head_is_the_first_bytes_of_the_image(tmp_path: Path) -> None:
    decoder = _Decoder(tmp_path / "T.tsv", tmp_path)
    for data in (RED_JPEG, BLUE_PNG, GREEN_GIF):
        text = b64(data)
        assert decoder.head(text, 0, "0", "image")[:12] == data[:12]
        assert decoder.head(text.encode(), 0, "0", "image")[:12] == data[:12]
        assert decoder.decode(text.encode(), 0, "0", "image") == data
    tiny = base64.b64encode(b"GIF89a\x01").decode()  # shorter than 16 characters, padded
    assert decoder.head(tiny, 0, "0", "image") == b"GIF89a\x01"
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image: not valid base64"):
        decoder.head("%%%%" + b64(RED_JPEG), 0, "0", "image")


def test_the_writer_writes_in_order_and_computes_missing_digests(tmp_path: Path) -> None:
    manifest = ImageManifest(tmp_path)
    writer = _Writer(manifest, queued=1)
    fields = [b64(RED_JPEG), b64(BLUE_PNG).encode(), b64(GREEN_GIF)]
    for k, field in enumerate(fields):
        data = base64.b64decode(field)
        writer.write(f"{k}.img", None if k != 1 else "given", field, str(tmp_path / f"{k}.img"), data)
        # one thread for the whole pass, named in a traceback, and never what keeps a finished process alive
        assert writer.thread is not None and writer.thread.name == "image-writer" and writer.thread.daemon is True
    assert writer.digest("0.img") == sha1(fields[0])
    assert writer.stop() is None and writer.thread is None
    assert writer.digests == {"0.img": sha1(fields[0]), "2.img": sha1(fields[2])}  # "1.img" came with its digest
    assert [(tmp_path / f"{k}.img").read_bytes() for k in range(3)] == [RED_JPEG, BLUE_PNG, GREEN_GIF]
    for k in range(3):
        stat = (tmp_path / f"{k}.img").stat()
        want = sha1(fields[k]) if k != 1 else "given"
        assert manifest.changed[f"{k}.img"] == (want, stat.st_size, stat.st_mtime_ns)
    assert writer.stop() is None  # stopping twice is harmless


def test_a_failed_write_is_raised_by_the_next_call_and_later_files_are_not_written(tmp_path: Path) -> None:
    manifest = ImageManifest(tmp_path)
    writer = _Writer(manifest)
    (tmp_path / "blocked.jpg").mkdir()  # a folder where the file goes: its rename fails
    writer.write("blocked.jpg", "d1", "x", str(tmp_path / "blocked.jpg"), RED_JPEG)
    writer.queue.join()
    with pytest.raises(OSError):
        writer.write("after.jpg", "d2", "y", str(tmp_path / "after.jpg"), RED_JPEG)
    with pytest.raises(OSError):
        writer.digest("blocked.jpg")
    failure = writer.stop()
    assert isinstance(failure, OSError) and not (tmp_path / "after.jpg").exists()
    assert manifest.changed == {}


def test_files_queued_after_a_failure_are_drained_unwritten(tmp_path: Path) -> None:
    manifest = ImageManifest(tmp_path)
    writer = _Writer(manifest, queued=64)
    (tmp_path / "0.jpg").mkdir()
    for k in range(5):  # queued before the writer has reported anything: the ones after the failure are skipped
        writer.queue.put((f"{k}.jpg", "d", "x", str(tmp_path / f"{k}.jpg"), RED_JPEG))
    writer.write("5.jpg", "d", "x", str(tmp_path / "5.jpg"), RED_JPEG)
    assert isinstance(writer.stop(), OSError)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == []
    assert manifest.changed == {}


def test_a_writer_that_wrote_nothing_stops_without_a_thread(tmp_path: Path) -> None:
    writer = _Writer(ImageManifest(tmp_path))
    assert writer.stop() is None and writer.thread is None and writer.error is None


@pytest.mark.parametrize("field", ["%%%% " * 20, "data:image/png;base64," + "%" * 60, "ab\ncd" + "%" * 70,
                                   "caf\u00e9 %%%%" * 10, "caf\u00e9%%%%" * 10])
def test_broken_base64_the_tolerant_decoder_cannot_read_either_names_the_row(tmp_path: Path, field: str) -> None:
    # with whitespace or a data: prefix the whole field is decoded first; a character that is not ASCII is read as
    # '?', never a crash of its own
    tsv = write_tsv(tmp_path / "B.tsv", [row(0, b64(RED_JPEG)), row(6, field)])
    with pytest.raises(DatasetError, match=r"B\.tsv: row 1 \(index 6\), field image: not valid base64 \(.*\)$"):
        decode_images(tsv, tmp_path / "images")


def test_a_recorded_name_whose_new_content_is_broken_names_the_row(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    decode_images(write_tsv(tmp_path / "A.tsv", [row(0, b64(RED_JPEG)), row(1, b64(BLUE_PNG))]), folder)
    text = b64(BLUE_PNG)
    broken = text[:40] + "%%%%" + text[44:]  # the first characters still say PNG: the name is the recorded 1.png
    tsv = write_tsv(tmp_path / "A.tsv", [row(0, b64(RED_JPEG)), row(1, broken)])
    with pytest.raises(DatasetError, match=r"A\.tsv: row 1 \(index 1\), field image: not valid base64 \(.*\)$"):
        decode_images(tsv, folder)
    assert (folder / "1.png").read_bytes() == BLUE_PNG


@pytest.mark.parametrize("name", ["../escape", "sub/../../escape", "ABSOLUTE"])
def test_an_image_path_without_a_suffix_that_leaves_the_folder_names_the_field(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "images"
    name = str(tmp_path / "escape") if name == "ABSOLUTE" else name
    tsv = write_tsv(tmp_path / "E.tsv", [row(2, b64(RED_JPEG), image_path=name)])
    with pytest.raises(DatasetError, match=rf"E\.tsv: row 0 \(index 2\), field image_path: .*; refusing to write "
                                           rf"outside {_re(str(folder))}$"):
        decode_images(tsv, folder)
    assert not (tmp_path / "escape.jpg").exists()


# --- the file as a whole --------------------------------------------------------------------------------------------


def test_a_list_field_that_is_not_utf8_names_its_row_and_field(tmp_path: Path) -> None:
    tsv = write_raw(tmp_path / "U.tsv", [b"index\timage", b"0\t" + b64(RED_JPEG).encode(),
                                         b'1\t["' + b64(RED_JPEG).encode() + b'\xff"]'])
    with pytest.raises(DatasetError, match=r"U\.tsv: row 1, field image: not UTF-8 \(invalid start byte at byte "
                                           r"\d+\)$"):
        decode_images(tsv, tmp_path / "images")


def test_a_header_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    tsv = write_raw(tmp_path / "H.tsv", [b"index\timage\tnot\xe9", b"0\t" + b64(RED_JPEG).encode() + b"\tx"])
    with pytest.raises(DatasetError, match=rf"^{_re(str(tsv))}: row header, field : not UTF-8"):
        decode_images(tsv, tmp_path / "images")


def test_a_pass_prints_nothing_and_warns_nothing_by_default(tmp_path: Path, capfd) -> None:
    tsv = write_tsv(tmp_path / "Q.tsv", [row(i, b64(RED_JPEG)) for i in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decode_images(tsv, tmp_path / "images")
        decode_images(tsv, tmp_path / "images2", tsv_md5="1" * 32)
    assert capfd.readouterr() == ("", "")


LOCK_HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()  # hold the lock until told (or until the parent closes the pipe)
"""


@pytest.mark.skipif(os.name != "posix", reason="the decode lock is fcntl's")
def test_a_pass_another_process_recorded_while_this_one_waited_is_replayed(tmp_path: Path, monkeypatch) -> None:
    """Process B holds the folder's decode lock; this process asks for the images (nothing recorded yet), waits on
    the lock, and meanwhile B's pass is recorded (done here, without the lock, as B would). Once B lets go, the
    waiter replays B's pass instead of reading the TSV, which by then holds nothing readable."""
    tsv = write_tsv(tmp_path / "W.tsv", [row(0, b64(RED_JPEG)), row(1, "0")])
    folder = tmp_path / "images"
    folder.mkdir()
    waiting = threading.Event()

    class Clock:  # setup_lock's time, telling the test when the waiter starts polling the held lock
        monotonic = staticmethod(time.monotonic)

        @staticmethod
        def sleep(seconds: float) -> None:
            waiting.set()
            time.sleep(min(seconds, 0.05))

    monkeypatch.setattr(setup_lock, "time", Clock)
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(folder / DECODE_LOCK)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result: list = []
        waiter = threading.Thread(target=lambda: result.append(decode_images(tsv, folder, tsv_md5="9" * 32)))
        waiter.start()
        assert waiting.wait(timeout=60)
        recorded = images._decode_file(tsv, folder, None, False, "9" * 32)  # "B's" pass
        tsv.write_text("index\timage\n0\tnot base64 at all, and far too long to be the index of another row\n")
        holder.stdin.write("\n")
        holder.stdin.flush()
        waiter.join(timeout=60)
        assert not waiter.is_alive()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert result == [recorded] and recorded[0] == recorded[1] == [str(folder.resolve() / "0.jpg")]


@pytest.mark.skipif(os.name != "posix", reason="the decode lock is fcntl's")
def test_a_waiter_that_gives_up_says_what_it_waited_for_and_decodes_itself(tmp_path: Path, monkeypatch,
                                                                          caplog) -> None:
    tsv = write_tsv(tmp_path / "G.tsv", [row(0, b64(BLUE_PNG))])
    folder = tmp_path / "images"
    folder.mkdir()
    monkeypatch.setattr(setup_lock, "SETUP_WAIT_S", 0.05)  # give up at once: the holder never lets go here
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(folder / DECODE_LOCK)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with caplog.at_level(logging.WARNING, logger="vlmkit"):
            assert decode_images(tsv, folder, tsv_md5="8" * 32) == [[str(folder.resolve() / "0.png")]]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    [line] = [r.getMessage() for r in caplog.records if r.name == "vlmkit"]
    assert line.endswith(f"to finish decoding the images of {tsv}; doing it here as well")
    assert (folder / "0.png").read_bytes() == BLUE_PNG



def test_a_pass_asked_for_progress_draws_one_bar_of_rows_and_leaves_no_line(tmp_path: Path, monkeypatch,
                                                                             capsys) -> None:
    from tqdm import tqdm

    # the bar drawn on a lock of this test's own and without tqdm's monitor thread: with tqdm's process-shared lock,
    # a bar drawn in mutmut's main process left the forked test runs of later mutants hanging on it
    monkeypatch.setattr(tqdm, "_lock", threading.RLock(), raising=False)
    monkeypatch.setattr(tqdm, "monitor_interval", 0)
    tsv = write_tsv(tmp_path / "Q.tsv", [row(i, b64(RED_JPEG)) for i in range(3)])
    for md5 in (None, "7" * 32):  # a plain pass, and one recorded under the file's MD5 (made holding the lock)
        decode_images(tsv, tmp_path / "pictures", index_keys=["0", "1", "2"], progress=True, tsv_md5=md5)
        err = capsys.readouterr().err
        # the bar as it starts: named after the folder, counting rows out of the table's rows; cleared when done
        assert err.startswith("\rimages pictures:   0%|") and "| 0/3 [" in err and "?row/s]" in err
        assert err.endswith("\r") and "\n" not in err
