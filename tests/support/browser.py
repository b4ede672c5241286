"""A real headless Chromium for the page tests: `--dump-dom` from its command line, and a small DevTools-protocol
session (over aiohttp's websocket client, no other package) to click on the page, read the DOM back and take
screenshots (Chromium's own `--screenshot` draws a page that scrolled itself on load with a blank band). Nothing
leaves 127.0.0.1; the page is opened from disk."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _flags(profile: Path) -> list[str]:
    flags = ["--headless", "--disable-gpu", "--no-first-run", "--disable-extensions", "--mute-audio",
             f"--user-data-dir={profile}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
    return flags


def dump_dom(browser: str, url: str, profile: Path, timeout: float = 90) -> str:
    """The DOM after the page's scripts ran (Chromium's --dump-dom)."""
    done = subprocess.run([browser, *_flags(profile), "--dump-dom", url], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0 or "<html" not in done.stdout:
        raise RuntimeError(f"chromium --dump-dom failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):  # type: ignore[no-untyped-def]
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [n for n in self.iter() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def by_id(self, ident: str) -> Node | None:
        return next((n for n in self.iter() if n.attrs.get("id") == ident), None)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", {}, None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node = self.current
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    builder = _Builder()
    builder.feed(html)
    return builder.root


class DevTools:
    """One page in a headless Chromium driven through the DevTools protocol: open(url), js(expression)."""

    def __init__(self, browser: str, profile: Path) -> None:
        self.browser, self.profile = browser, profile
        self.loop = asyncio.new_event_loop()
        self.process: subprocess.Popen | None = None
        self._ws: Any = None
        self._session: Any = None
        self._id = 0

    def __enter__(self) -> DevTools:
        self.process = subprocess.Popen([self.browser, *_flags(self.profile), "--remote-debugging-port=0",
                                         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self.loop.run_until_complete(self._connect(port))
        return self

    async def _connect(self, port: int) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json(content_type=None)
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)

    async def _call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        await self._ws.send_json({"id": self._id, "method": method, "params": params or {}})
        while True:
            message = await self._ws.receive_json(timeout=60)
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self.loop.run_until_complete(self._call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}))
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {json.dumps(result['exceptionDetails'])[:500]}")
        return result["result"].get("value")

    def open(self, url: str, within: float = 60) -> None:
        """Load url afresh (never a same-document fragment change) and wait until page.js has drawn the page
        (body[data-rendered])."""
        self.loop.run_until_complete(self._call("Page.navigate", {"url": "about:blank"}))
        self.loop.run_until_complete(self._call("Page.navigate", {"url": url}))
        deadline = time.monotonic() + within
        while self.js("document.body && document.body.dataset.rendered === '1' && location.href") != url:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} was not drawn within {within} s")
            time.sleep(0.05)

    def size(self, width: int, height: int) -> None:
        """The viewport, as a window of that size would have it."""
        self.loop.run_until_complete(self._call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}))

    def screenshot(self, out: Path) -> Path:
        """A PNG of the viewport as it is drawn now (after the page's own scrolling, unlike --screenshot)."""
        self.js("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        shot = self.loop.run_until_complete(self._call("Page.captureScreenshot", {"format": "png"}))
        out.write_bytes(base64.b64decode(shot["data"]))
        return out

    def __exit__(self, *exc: object) -> None:
        try:
            if self._ws is not None:
                self.loop.run_until_complete(self._ws.close())
            if self._session is not None:
                self.loop.run_until_complete(self._session.close())
        finally:
            self.loop.close()
            if self.process is not None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
