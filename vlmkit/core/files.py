"""Files: atomic writes, contained paths, MD5 (also while the same read feeds a parser), and verified downloads.

Every file vlmkit writes here gets the permissions `open()` would give it (0o666 less the process umask), so a
team sharing a work dir or `$LMUData` can read each other's results: the temporary file is created with
`os.open(..., 0o666)` and the kernel applies the umask, instead of `tempfile.mkstemp`, which always makes 0600.
"""

from __future__ import annotations

import errno
import hashlib
import os
import queue
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import requests
from tqdm import tqdm


class DownloadError(RuntimeError):
    """A download that failed or did not verify; the text names the URL and the file."""


class UnsafePathError(ValueError):
    """A name that would place a file outside the folder it belongs in."""


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _temp_beside(path: Path | str, suffix: str = ".tmp", *, make_parent: bool = False) -> tuple[int, str]:
    """(fd, name) of a new, empty temporary file beside path, with the umask's permissions (as open() makes);
    make_parent: create a missing folder (only when the first open finds none, so the common case costs nothing)."""
    parent, base = os.path.split(os.fspath(path))
    for _ in range(100):
        tmp = os.path.join(parent, f".{base}.{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            if not make_parent or not parent:
                raise
            os.makedirs(parent, exist_ok=True)
            make_parent = False
    raise FileExistsError(f"{parent}: no free temporary file name for {base}")


def write_bytes_atomic(path: Path | str, data: bytes) -> os.stat_result:
    """Write via a temporary sibling and rename, so a reader never sees half a file; the file's stat as written.

    Plain `os` calls on strings (no pathlib, no buffered file object, no mkdir unless the folder is missing):
    the image decoder writes thousands of files with it, and this costs under half of the pathlib version."""
    name = os.fspath(path)
    fd, tmp = _temp_beside(name, make_parent=True)
    try:
        try:
            view, done = memoryview(data), 0
            while done < len(view):
                done += os.write(fd, view[done:])
        finally:
            os.close(fd)
        os.replace(tmp, name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return os.stat(name)  # after the close: a network file system may set the mtime only when the data is flushed


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def move_aside(path: Path) -> Path:
    """Rename path to the first free `<stem>.staleN<suffix>` beside it (kept, never deleted); return the new path."""
    n = 1
    while (aside := path.with_name(f"{path.stem}.stale{n}{path.suffix}")).exists():
        n += 1
    os.replace(path, aside)
    return aside


def contained_path(folder: Path, name: str) -> Path:
    """folder/name, refusing any name (absolute, `..`, drive, empty) that would resolve outside folder."""
    if not name or name.strip() in (".", ".."):
        raise UnsafePathError(f"empty or dot file name {name!r}")
    if os.path.isabs(name) or "\x00" in name:
        raise UnsafePathError(f"{name!r} is an absolute path")
    base = folder.resolve()
    target = (base / name).resolve()
    if target == base or base not in target.parents:
        raise UnsafePathError(f"{name!r} would leave {folder}")
    return target


def contained_child(base: Path, name: str) -> Path:
    """contained_path(base, name) for a base that is already resolved, cheaper for the common case: a relative name
    of plain parts (no empty, `.` or `..` part) with no symlink at or under base among them is base/name as it is
    (one lstat per part instead of resolving both paths from the root). Anything else goes through
    contained_path, so the answer (or the refusal) is the same."""
    parts = name.split("/")
    if (os.sep != "/" or not name or "\x00" in name or name.strip() in (".", "..")
            or any(part in ("", ".", "..") for part in parts)):
        return contained_path(base, name)
    prefix = str(base)
    for part in parts:
        prefix = f"{prefix}/{part}"
        try:
            mode = os.lstat(prefix).st_mode
        except FileNotFoundError:
            break  # nothing further exists, so no symlink either
        except OSError:
            return contained_path(base, name)
        if stat.S_ISLNK(mode):
            return contained_path(base, name)
    return Path(f"{base}/{name}")


def md5_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


class HashedBlocks:
    """A file read once, in large blocks, each block also fed to MD5 on a background thread: the caller parses the
    very bytes the digest covers while the hashing runs on another core (hashlib releases the GIL on large
    buffers), instead of reading the file twice.

        with HashedBlocks(path) as blocks:
            for block in blocks: ...
            md5 = blocks.hexdigest()  # hashes what the caller left unread, so always the whole file's MD5
    """

    def __init__(self, path: Path, *, block_size: int = 1 << 22, queued: int = 2) -> None:
        self._handle = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close())
        self._block_size = block_size
        self._digest = hashlib.md5()
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=queued)
        self._thread = threading.Thread(target=self._hash, name="md5", daemon=True)
        self._thread.start()
        self._result: str | None = None

    def _hash(self) -> None:
        while (block := self._queue.get()) is not None:
            self._digest.update(block)

    def _read(self) -> bytes:
        block = self._handle.read(self._block_size)
        if block:
            self._queue.put(block)
        return block

    def __iter__(self) -> Iterator[bytes]:
        while block := self._read():
            yield block

    def hexdigest(self) -> str:
        """The MD5 of the whole file (what was not read yet is read and hashed first)."""
        if self._result is None:
            while self._read():
                pass
            self._finish()
            self._result = self._digest.hexdigest()
        return self._result

    def _finish(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def close(self) -> None:
        self._finish()
        self._handle.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fetch(url: str, dest: Path, timeout: float, progress: bool) -> None:
    """Stream url into a temporary file beside dest, then rename; a broken transfer leaves nothing at dest."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(dest, ".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            with requests.get(url, stream=True, timeout=timeout) as response:
                response.raise_for_status()
                expected = int(response.headers.get("Content-Length") or 0) or None
                received = 0
                with tqdm(
                    total=expected, unit="B", unit_scale=True, desc=dest.name, disable=not progress, leave=False
                ) as bar:
                    for block in response.iter_content(chunk_size=1 << 20):
                        handle.write(block)
                        received += len(block)
                        bar.update(len(block))
        if expected is not None and received != expected:
            raise DownloadError(f"{url}: transfer cut short ({received} of {expected} bytes)")
        os.replace(tmp, dest)
    except requests.RequestException as exc:
        raise DownloadError(f"{dest.name} is not in {dest.parent} and {url} {_unreachable(exc)}; put the file at "
                            f"{dest} (fetched from that URL on a machine with network) and run again") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


_REASONS = {errno.ECONNREFUSED: "refused the connection", errno.ENETUNREACH: "cannot be reached (no network)",
            errno.EHOSTUNREACH: "cannot be reached (no route to the host)"}


def _unreachable(exc: requests.RequestException) -> str:
    """What went wrong with a download, in a few words (urllib3's own text runs to hundreds of characters): read from
    the OS error at the bottom of the chain requests and urllib3 wrap it in."""
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"answered HTTP {exc.response.status_code}"
    if isinstance(exc, requests.Timeout):
        return "did not answer in time"
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return "names a host that cannot be resolved (offline?)"
        if isinstance(cause, OSError) and cause.errno in _REASONS:
            return _REASONS[cause.errno]
    return f"could not be fetched ({exc.__class__.__name__})"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """exc and what it wraps: __cause__/__context__, urllib3's `reason`, an exception passed as an argument."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        stack.extend(w for w in wrapped if isinstance(w, BaseException))


def download_verified(url: str, dest: Path, md5: str | None, *, timeout: float = 60.0, progress: bool = True) -> Path:
    """Download url to dest and check its MD5; on a mismatch download once more, then fail clearly.

    The file appears at dest only complete and verified. A file already at dest with the right MD5 (or any file
    when no MD5 is known) is used as it is, without the network; one with another MD5 is never overwritten (it may
    be the user's own): that is a DownloadError naming both MD5s.
    """
    if dest.exists():
        actual = md5_of(dest) if md5 is not None else None
        if actual == md5:
            return dest
        raise DownloadError(
            f"{dest}: MD5 {actual} differs from the expected {md5}; not overwritten. Move it away to download "
            f"{url} again"
        )
    last_md5 = None
    for _attempt in range(2):
        _fetch(url, dest, timeout, progress)
        if md5 is None:
            return dest
        last_md5 = md5_of(dest)
        if last_md5 == md5:
            return dest
        dest.unlink()
    raise DownloadError(
        f"{url}: MD5 mismatch twice (expected {md5}, got {last_md5}); nothing kept at {dest}. "
        "The server's file may have changed: check the catalog entry or place a verified copy at that path."
    )
