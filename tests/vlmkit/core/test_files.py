"""vlmkit.core.files against a real HTTP server on 127.0.0.1: verified downloads, cut transfers, offline reuse."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from vlmkit.core.files import (
    DownloadError,
    UnsafePathError,
    contained_path,
    download_verified,
    md5_of,
    write_bytes_atomic,
    write_text_atomic,
)

PAYLOAD = b"index\tquestion\n" + b"".join(b"%d\tquestion number %d\n" % (i, i) for i in range(5000))
PAYLOAD_MD5 = hashlib.md5(PAYLOAD).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_download_verifies_md5_and_shows_progress(http_file_server, tmp_path, capsys):
    (http_file_server.folder / "bench.tsv").write_bytes(PAYLOAD)
    dest = tmp_path / "lmu" / "bench.tsv"
    assert download_verified(http_file_server.url("bench.tsv"), dest, PAYLOAD_MD5, progress=True) == dest
    assert dest.read_bytes() == PAYLOAD and md5_of(dest) == PAYLOAD_MD5
    assert http_file_server.hits["bench.tsv"] == 1
    assert "bench.tsv" in capsys.readouterr().err  # the progress bar names the file
    assert leftovers(dest.parent) == ["bench.tsv"]  # no temporary file left beside it


def test_md5_mismatch_downloads_once_more_then_fails_leaving_nothing(http_file_server, tmp_path):
    (http_file_server.folder / "bench.tsv").write_bytes(PAYLOAD + b"changed upstream\n")
    dest = tmp_path / "lmu" / "bench.tsv"
    with pytest.raises(DownloadError) as info:
        download_verified(http_file_server.url("bench.tsv"), dest, PAYLOAD_MD5, progress=False)
    message = str(info.value)
    assert "MD5" in message and PAYLOAD_MD5 in message and str(dest) in message
    assert http_file_server.hits["bench.tsv"] == 2  # the first try and exactly one re-download
    assert not dest.exists() and leftovers(dest.parent) == []


def test_cut_transfer_never_leaves_a_file_that_is_later_used(http_file_server, tmp_path):
    (http_file_server.folder / "bench.tsv").write_bytes(PAYLOAD)
    http_file_server.faults["bench.tsv"] = "truncate"
    dest = tmp_path / "lmu" / "bench.tsv"
    for md5 in (PAYLOAD_MD5, None):  # with or without an MD5 to check, a short body is refused
        with pytest.raises(DownloadError):
            download_verified(http_file_server.url("bench.tsv"), dest, md5, progress=False)
        assert not dest.exists() and leftovers(dest.parent) == []
    hits_before = http_file_server.hits["bench.tsv"]
    del http_file_server.faults["bench.tsv"]
    download_verified(http_file_server.url("bench.tsv"), dest, None, progress=False)
    assert http_file_server.hits["bench.tsv"] == hits_before + 1  # fetched again, not taken from a partial file
    assert dest.read_bytes() == PAYLOAD


def test_http_error_is_a_download_error_naming_the_url(http_file_server, tmp_path):
    http_file_server.faults["gone.tsv"] = "status:503"
    dest = tmp_path / "gone.tsv"
    with pytest.raises(DownloadError, match="gone.tsv"):
        download_verified(http_file_server.url("gone.tsv"), dest, None, progress=False)
    assert not dest.exists()


def test_an_unreachable_server_is_one_short_line_saying_where_the_file_goes(http_file_server, tmp_path):
    url = http_file_server.url("bench.tsv")
    http_file_server.stop()  # offline: nothing listens on that port now
    dest = tmp_path / "lmu" / "bench.tsv"
    with pytest.raises(DownloadError) as info:
        download_verified(url, dest, PAYLOAD_MD5, progress=False)
    message = str(info.value)
    assert "\n" not in message and len(message) < 2 * len(str(dest)) + len(url) + 160, message
    assert "refused the connection" in message and str(dest) in message and url in message
    assert "urllib3" not in message and "HTTPConnectionPool" not in message


def test_an_http_error_says_its_status(http_file_server, tmp_path):
    http_file_server.faults["gone.tsv"] = "status:503"
    with pytest.raises(DownloadError, match="answered HTTP 503"):
        download_verified(http_file_server.url("gone.tsv"), tmp_path / "gone.tsv", None, progress=False)


def test_present_good_file_is_used_with_the_server_down(http_file_server, tmp_path):
    url = http_file_server.url("bench.tsv")
    dest = tmp_path / "bench.tsv"
    dest.write_bytes(PAYLOAD)
    http_file_server.stop()
    assert download_verified(url, dest, PAYLOAD_MD5, progress=False) == dest
    assert download_verified(url, dest, None, progress=False) == dest  # no MD5 known: any present file
    assert dest.read_bytes() == PAYLOAD
    dest.write_bytes(PAYLOAD + b"tampered\n")  # a wrong file needs the network, which is down
    with pytest.raises(DownloadError):
        download_verified(url, dest, PAYLOAD_MD5, progress=False)


def test_write_bytes_atomic_replaces_whole_file(tmp_path):
    target = tmp_path / "sub" / "a.bin"
    write_bytes_atomic(target, b"first")
    write_bytes_atomic(target, b"second")
    assert target.read_bytes() == b"second" and leftovers(target.parent) == ["a.bin"]


@pytest.mark.parametrize("name", ["../x.jpg", "a/../../x.jpg", "/etc/passwd", "", ".", ".."])
def test_contained_path_refuses_names_leaving_the_folder(tmp_path, name):
    with pytest.raises(UnsafePathError):
        contained_path(tmp_path / "images", name)


def test_contained_path_allows_subfolders(tmp_path):
    folder = tmp_path / "images"
    assert contained_path(folder, "sub/a.jpg") == (folder / "sub" / "a.jpg").resolve()


def test_contained_path_refuses_a_symlink_out(tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    os.symlink(tmp_path, folder / "out")
    with pytest.raises(UnsafePathError):
        contained_path(folder, "out/x.jpg")



def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_atomic_writes_follow_the_umask_like_open(tmp_path, umask):
    expected = 0o666 & ~umask
    with open(tmp_path / "plain.txt", "w") as handle:  # what open() makes: the reference
        handle.write("x")
    assert mode(tmp_path / "plain.txt") == expected
    write_bytes_atomic(tmp_path / "results.json", b"{}")
    write_text_atomic(tmp_path / "sub" / "model_acc.csv", "split,Overall\n")
    write_bytes_atomic(tmp_path / "results.json", b"{ }")  # a replacement too
    assert mode(tmp_path / "results.json") == mode(tmp_path / "sub" / "model_acc.csv") == expected
    assert sorted(leftovers(tmp_path)) == ["plain.txt", "results.json", "sub"]


def test_downloads_follow_the_umask(http_file_server, tmp_path, umask):
    (http_file_server.folder / "bench.tsv").write_bytes(PAYLOAD)
    dest = tmp_path / "lmu" / "bench.tsv"
    download_verified(http_file_server.url("bench.tsv"), dest, PAYLOAD_MD5, progress=False)
    assert mode(dest) == 0o666 & ~umask


def test_existing_file_with_another_md5_is_never_overwritten(http_file_server, tmp_path):
    (http_file_server.folder / "bench.tsv").write_bytes(PAYLOAD)
    dest = tmp_path / "bench.tsv"
    mine = PAYLOAD + b"my own extra row\n"
    dest.write_bytes(mine)
    with pytest.raises(DownloadError) as info:
        download_verified(http_file_server.url("bench.tsv"), dest, PAYLOAD_MD5, progress=False)
    assert str(dest) in str(info.value) and PAYLOAD_MD5 in str(info.value)
    assert hashlib.md5(mine).hexdigest() in str(info.value)
    assert dest.read_bytes() == mine and http_file_server.hits["bench.tsv"] == 0
