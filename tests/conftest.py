"""Shared fixtures: a temporary $LMUData, a static file server on 127.0.0.1 that can inject faults, and
`transformers serve` on a tiny random LLaVA (started once per session, only when a test asks for it)."""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """tqdm's bars write under a thread lock in the test processes. Its default write lock holds a multiprocessing
    lock, one semaphore shared by every process forked after it was made, and tqdm.refresh does not release it when
    drawing raises: under mutation testing (tools/mutation_test.py: mutmut forks one process per mutant) a mutant
    that broke a bar's format left it held, and every later process that drew a bar waited until its timeout."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


@pytest.fixture
def lmu_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty LMUData folder, also set as $LMUData for code that falls back to vlmkit.core.config."""
    root = tmp_path / "LMUData"
    root.mkdir()
    monkeypatch.setenv("LMUData", str(root))
    return root


@pytest.fixture(params=[0o022, 0o002], ids=["umask022", "umask002"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set for one test and restored after it; the value is the umask."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


class FileServer:
    """Serves the files of `folder` on 127.0.0.1 (HTTP/1.0: one request per connection).

    faults[name] changes how a file is answered:
    - "truncate": the headers announce the full length, half the body is sent, then the connection closes;
    - "status:<code>": that HTTP status with an empty body.
    hits[name] counts the requests for each file. stop() takes the server down (safe to call twice).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.faults: dict[str, str] = {}
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> FileServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                name = unquote(urlparse(self.path).path).lstrip("/")
                with server._lock:
                    server.hits[name] += 1
                    fault = server.faults.get(name, "")
                if fault.startswith("status:"):
                    self.send_response(int(fault.split(":", 1)[1]))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path = server.folder / name
                if not name or not path.is_file():
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "text/tab-separated-values")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body[: len(body) // 2] if fault == "truncate" else body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


@pytest.fixture
def http_file_server(tmp_path: Path) -> Iterator[FileServer]:
    """A FileServer over tmp_path/"served" (write the files to serve there); stopped at teardown."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = FileServer(folder).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def served_llava(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(api_base, served model path) of a running `transformers serve` on a tiny random LLaVA."""
    from tests.support.serve import transformers_serve
    from tests.support.tiny_models import build_tiny_llava

    root = tmp_path_factory.mktemp("transformers_serve")
    model_dir = build_tiny_llava(root / "tiny-llava").resolve()
    with transformers_serve(model_dir, root) as api_base:
        yield api_base, str(model_dir)
