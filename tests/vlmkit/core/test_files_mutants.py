"""vlmkit.core.files' MD5 checks: md5_of and HashedBlocks (a file read once, hashed on a second thread) against
hashlib over the whole file's bytes, whatever the block sizes and however much the caller reads; and download_verified
on a present file (no network)."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tqdm import tqdm

from tests.vlm.api.raw_server import RawConnection, RawRequest, RawServer
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


def serving(*replies: bytes | None) -> RawServer:
    """The shared raw-socket server (tests/vlm/api/raw_server.py) answering its n-th request with replies[n] (the last
    one again after that), then closing the connection (the end of a body without a length); None never answers."""

    def answer(conn: RawConnection, request: RawRequest) -> bool:
        reply = replies[min(request.number, len(replies) - 1)]
        if reply is None:
            conn.wait(10)
        else:
            conn.send(reply)
        return False

    return RawServer(answer)


def url_of(server: RawServer) -> str:
    return server.base_url.removesuffix("/v1") + "/f.tsv"


def with_length(body: bytes) -> bytes:
    """An HTTP/1.0 200 answer carrying body with its Content-Length."""
    return f"HTTP/1.0 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


def test_a_body_without_content_length_is_read_to_the_end_of_the_connection(tmp_path: Path):
    body = b"index\tq\n" + b"".join(b"%d\tq%d\n" % (i, i) for i in range(300))
    with serving(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body) as server:
        dest = tmp_path / "f.tsv"
        download_verified(url_of(server), dest, hashlib.md5(body).hexdigest(), progress=False)
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
    with serving(None) as server:
        with pytest.raises(DownloadError, match=r"did not answer in time"):
            download_verified(url_of(server), tmp_path / "f.tsv", None, timeout=0.5, progress=False)
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


def test_blocks_are_four_mebibytes_by_default(tmp_path: Path):
    """The default block (what the dataset-preparation figures in the README were measured with): 4 MiB."""
    data = os.urandom((1 << 22) + 5)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    with HashedBlocks(path) as blocks:
        assert [len(b) for b in blocks] == [1 << 22, 5]
        assert blocks.hexdigest() == hashlib.md5(data).hexdigest()


class TrickleServer:
    """Answers one download with a body of two parts: the first 1 MiB, then (once the client's partial file beside
    dest holds it, or after `patience` seconds) the rest. It records the partial files it saw and whether the first
    part reached the disk before the rest was sent: a download that streams writes as data arrives."""

    FIRST = 1 << 20

    def __init__(self, body: bytes, folder: Path, patience: float = 20.0) -> None:
        self.body, self.folder, self.patience = body, folder, patience
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/f.bin"
        self.partial_names: list[str] = []
        self.first_part_on_disk = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _partial(self) -> list[Path]:
        return [p for p in self.folder.iterdir() if p.name != "f.bin"] if self.folder.is_dir() else []

    def _serve(self) -> None:
        self.sock.settimeout(30)
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(30)
            try:
                conn.recv(65536)
                head = f"HTTP/1.0 200 OK\r\nContent-Length: {len(self.body)}\r\n\r\n".encode()
                conn.sendall(head + self.body[: self.FIRST])
                stop = threading.Event()
                for _ in range(int(self.patience * 20)):  # bounded: at most `patience` seconds
                    partial = self._partial()
                    self.partial_names = sorted(p.name for p in partial)
                    if any(p.stat().st_size >= self.FIRST for p in partial):
                        self.first_part_on_disk = True
                        break
                    stop.wait(0.05)
                conn.sendall(self.body[self.FIRST:])
            except OSError:
                pass

    def __enter__(self) -> TrickleServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(60)
        self.sock.close()


def test_a_download_is_written_to_a_partial_file_beside_dest_as_it_arrives(tmp_path: Path):
    """Streamed: the first megabyte is on disk, in `.<name>.<random>.part` beside the destination, before the server
    sends the rest (a large file is never held whole in memory); the partial file is gone once the file is there."""
    body = os.urandom(TrickleServer.FIRST + 1000)
    folder = tmp_path / "lmu"
    folder.mkdir()
    with TrickleServer(body, folder) as server:
        dest = folder / "f.bin"
        assert download_verified(server.url, dest, hashlib.md5(body).hexdigest(), progress=False) == dest
    assert server.first_part_on_disk
    assert len(server.partial_names) == 1
    assert re.fullmatch(r"\.f\.bin\.[0-9a-f]{12}\.part", server.partial_names[0]), server.partial_names
    assert dest.read_bytes() == body and sorted(p.name for p in folder.iterdir()) == ["f.bin"]


def test_a_mismatch_is_downloaded_once_more_and_the_good_copy_kept(tmp_path: Path):
    good = b"index\tq\n1\tq1\n"
    with serving(with_length(b"index\tq\n1\tstale\n"), with_length(good)) as server:
        dest = tmp_path / "f.tsv"
        assert download_verified(url_of(server), dest, hashlib.md5(good).hexdigest(), progress=False) == dest
    assert len(server.requests) == 2 and dest.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.tsv"]


def test_without_an_md5_the_first_copy_is_kept_and_fetched_once(tmp_path: Path):
    first = b"index\tq\n1\tq1\n"
    with serving(with_length(first), with_length(b"other")) as server:
        dest = tmp_path / "f.tsv"
        assert download_verified(url_of(server), dest, None, progress=False) == dest
    assert len(server.requests) == 1 and dest.read_bytes() == first


def test_the_hashing_thread_says_what_it_is_in_a_thread_dump(data_file: Path):
    """While a hashed read is open its second thread is listed (py-spy, faulthandler, threading.enumerate) as `md5`;
    closing the reader ends it."""
    before = [t for t in threading.enumerate() if t.name == "md5"]
    blocks = HashedBlocks(data_file, block_size=1000)
    try:
        assert [t.name for t in threading.enumerate() if t.name == "md5" and t not in before] == ["md5"]
        assert blocks.hexdigest() == hashlib.md5(DATA).hexdigest()
    finally:
        blocks.close()
    assert [t for t in threading.enumerate() if t.name == "md5" and t not in before] == []


def test_without_progress_no_bar_is_drawn(http_file_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    data = os.urandom(300_000)
    (http_file_server.folder / "quiet.tsv").write_bytes(data)
    download_verified(http_file_server.url("quiet.tsv"), tmp_path / "quiet.tsv", hashlib.md5(data).hexdigest(),
                      progress=False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    assert (tmp_path / "quiet.tsv").read_bytes() == data
