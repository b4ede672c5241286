"""vlmkit.core.files' MD5 checks: md5_of and HashedBlocks (a file read once, hashed on a second thread) against
hashlib over the whole file's bytes, whatever the block sizes and however much the caller reads; and download_verified
on a present file (no network)."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vlmkit.core import files as files_module
from vlmkit.core.files import DownloadError, HashedBlocks, download_verified, md5_of

DATA = os.urandom(3 * 4096 + 17)  # not a multiple of any block size used


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "f.bin"
    path.write_bytes(DATA)
    return path


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_md5_of_is_the_whole_files_md5_for_any_chunk(data_file: Path, chunk: int):
    assert md5_of(data_file, chunk) == hashlib.md5(DATA).hexdigest()


def test_md5_of_an_empty_file(tmp_path: Path):
    (tmp_path / "e").write_bytes(b"")
    assert md5_of(tmp_path / "e") == hashlib.md5(b"").hexdigest() == "d41d8cd98f00b204e9800998ecf8427e"


@pytest.mark.parametrize(("block_size", "queued"), [(1000, 1), (4096, 2), (1 << 22, 2)])
def test_blocks_are_the_file_in_order_and_the_digest_covers_them(data_file: Path, block_size: int, queued: int):
    with HashedBlocks(data_file, block_size=block_size, queued=queued) as blocks:
        read = list(blocks)
        assert b"".join(read) == DATA
        assert all(len(b) == block_size for b in read[:-1]) and 0 < len(read[-1]) <= block_size
        assert blocks.hexdigest() == hashlib.md5(DATA).hexdigest()
        assert blocks.hexdigest() == hashlib.md5(DATA).hexdigest()  # asked again: the same


@pytest.mark.parametrize("taken", [0, 1, 3])
def test_the_digest_is_the_whole_files_however_little_was_read(data_file: Path, taken: int):
    with HashedBlocks(data_file, block_size=1000) as blocks:
        it = iter(blocks)
        got = [next(it) for _ in range(taken)]
        assert b"".join(got) == DATA[: 1000 * taken]
        assert blocks.hexdigest() == hashlib.md5(DATA).hexdigest()


def test_an_empty_file_has_no_blocks_and_the_empty_digest(tmp_path: Path):
    (tmp_path / "e").write_bytes(b"")
    with HashedBlocks(tmp_path / "e") as blocks:
        assert list(blocks) == []
        assert blocks.hexdigest() == hashlib.md5(b"").hexdigest()


def test_closing_without_a_digest_ends_the_hashing_thread(data_file: Path):
    blocks = HashedBlocks(data_file, block_size=1000)
    next(iter(blocks))
    blocks.close()
    assert not blocks._thread.is_alive() and blocks._handle.closed


def test_a_present_file_with_the_right_md5_is_used_without_the_network(data_file: Path):
    # the URL is never fetched (nothing listens on port 9 of 127.0.0.1)
    url = "http://127.0.0.1:9/f.bin"
    assert download_verified(url, data_file, hashlib.md5(DATA).hexdigest()) == data_file
    assert download_verified(url, data_file, None) == data_file  # no MD5 known: any present file is used
    with pytest.raises(DownloadError) as info:
        download_verified(url, data_file, "0" * 32)
    assert str(info.value) == (f"{data_file}: MD5 {hashlib.md5(DATA).hexdigest()} differs from the expected {'0' * 32}"
                               f"; not overwritten. Move it away to download {url} again")
    assert data_file.read_bytes() == DATA


class RawServer:
    """One-connection-at-a-time HTTP server on 127.0.0.1 answering every request with `reply` (None: never answers,
    until stopped). Stops by itself when the test's `with` block ends."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/f.tsv"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    if self.reply is None:
                        self.stopped.wait(10)
                    else:
                        conn.sendall(self.reply)
                except OSError:
                    pass

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.sock.close()


def test_a_body_without_content_length_is_read_to_the_end_of_the_connection(tmp_path: Path):
    body = b"index\tq\n" + b"".join(b"%d\tq%d\n" % (i, i) for i in range(300))
    with RawServer(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body) as server:
        dest = tmp_path / "f.tsv"
        download_verified(server.url, dest, hashlib.md5(body).hexdigest(), progress=False)
    assert dest.read_bytes() == body


def test_the_file_lands_in_folders_that_do_not_exist_yet(http_file_server, tmp_path: Path):
    (http_file_server.folder / "f.tsv").write_bytes(DATA)
    dest = tmp_path / "a" / "b" / "c" / "f.tsv"
    url = http_file_server.url("f.tsv")
    assert download_verified(url, dest, hashlib.md5(DATA).hexdigest(), progress=False) == dest
    assert dest.read_bytes() == DATA and sorted(p.name for p in dest.parent.iterdir()) == ["f.tsv"]


def test_the_partial_file_is_written_beside_the_destination_not_in_the_working_folder(
        http_file_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (http_file_server.folder / "f.tsv").write_bytes(DATA)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # a working folder that no longer exists: nothing can be created relative to it
    dest = tmp_path / "data" / "f.tsv"
    url = http_file_server.url("f.tsv")
    assert download_verified(url, dest, hashlib.md5(DATA).hexdigest(), progress=False) == dest


def test_a_server_that_never_answers_is_given_up_after_the_timeout(tmp_path: Path):
    with RawServer(None) as server:
        with pytest.raises(DownloadError, match=r"did not answer in time"):
            download_verified(server.url, tmp_path / "f.tsv", None, timeout=0.5, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_file_of_several_transfer_blocks_is_counted_whole(http_file_server, tmp_path: Path):
    # more than one 1 MiB block: every block counts towards the length the server announced
    data = os.urandom((1 << 20) * 2 + 123)
    (http_file_server.folder / "big.tsv").write_bytes(data)
    dest = tmp_path / "big.tsv"
    download_verified(http_file_server.url("big.tsv"), dest, hashlib.md5(data).hexdigest(), progress=False)
    assert dest.read_bytes() == data


def test_a_server_file_with_another_md5_twice_is_one_message_saying_what_to_do(http_file_server, tmp_path: Path):
    (http_file_server.folder / "f.tsv").write_bytes(DATA)
    dest = tmp_path / "f.tsv"
    url = http_file_server.url("f.tsv")
    with pytest.raises(DownloadError) as info:
        download_verified(url, dest, "0" * 32, progress=False)
    assert str(info.value) == (
        f"{url}: MD5 mismatch twice (expected {'0' * 32}, got {hashlib.md5(DATA).hexdigest()}); nothing kept at "
        f"{dest}. The server's file may have changed: check the catalog entry or place a verified copy at that path."
    )


def test_the_progress_bar_is_shown_by_default_in_bytes_of_the_announced_total(
        http_file_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    data = os.urandom(300_000)
    (http_file_server.folder / "bar.tsv").write_bytes(data)
    download_verified(http_file_server.url("bar.tsv"), tmp_path / "bar.tsv", hashlib.md5(data).hexdigest())
    err = capsys.readouterr().err
    # the file's name, the announced total in scaled bytes, a rate in bytes; the bar is cleared when done
    assert "bar.tsv: " in err and "/300k " in err and "B/s]" in err
    assert err.rstrip("\r").split("\r")[-1].strip() == ""


def test_an_abandoned_hashed_reader_never_keeps_the_process_alive(tmp_path: Path):
    # the hashing thread waits on its queue for ever when nobody closes the reader: it must not hold the exit
    path = tmp_path / "f.bin"
    path.write_bytes(DATA)
    with HashedBlocks(path, block_size=1000) as blocks:  # (in this process too, so that mutmut runs this test
        assert blocks.hexdigest() == hashlib.md5(DATA).hexdigest()  # for every change to HashedBlocks)
    code = ("import sys; from pathlib import Path; from vlmkit.core.files import HashedBlocks; "
            f"b = HashedBlocks(Path({str(path)!r}), block_size=1000); next(iter(b)); print('read')")
    root = Path(files_module.__file__).resolve().parents[2]  # where this vlmkit was imported from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20, cwd=root, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "read"
