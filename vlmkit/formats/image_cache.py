"""Encode once: the data URLs of local image files, kept while the file is unchanged.

An image shared by many rows (a benchmark whose rows point at one picture, a resumed or retried row) was read,
checked (vlmkit.core.media.read_image_file: the header, the pixel limit) and base64-encoded on every request. The
OpenAI conversion (vlmkit.formats.openai_chat) now keeps each file's data URL here, keyed by what says the file is
the same: its path as given, size, modification time (ns), inode, and the `img_max_side` it was shrunk to. A file
rewritten in place has another size or mtime and is read again; a file that fails its checks is never kept (each
request that names it fails with its own error).

The cache is bounded by the characters it holds (`MAX_CHARS`, 64 Mi: a 48 MB image budget, base64) and by entries
(`MAX_ENTRIES`); the least recently used go first, and a single data URL larger than a quarter of the budget is not
kept at all (a dataset of large distinct images gains nothing, and must not grow the memory). Thread-safe.
`image_cache_stats()` says how many encodes and hits there were, for a benchmark or a test.
"""

from __future__ import annotations

import stat as _stat
import threading
from collections import OrderedDict
from typing import Any

MAX_CHARS = 64 * 1024 * 1024
MAX_ENTRIES = 4096


class DataUrlCache:
    """A least-recently-used map from a file's identity to its data URL, bounded by entries and characters."""

    def __init__(self, max_chars: int = MAX_CHARS, max_entries: int = MAX_ENTRIES) -> None:
        self.max_chars = max_chars
        self.max_entries = max_entries
        self._items: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.encodes = 0

    def get(self, key: tuple[Any, ...]) -> str | None:
        """The data URL kept for `key` (marked as recently used), or None; a None counts as the encode to follow."""
        with self._lock:
            url = self._items.get(key)
            if url is None:
                self.encodes += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return url

    def put(self, key: tuple[Any, ...], url: str) -> None:
        if len(url) > self.max_chars // 4:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._chars -= len(old)
            self._items[key] = url
            self._chars += len(url)
            while self._items and (self._chars > self.max_chars or len(self._items) > self.max_entries):
                _, dropped = self._items.popitem(last=False)
                self._chars -= len(dropped)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"encodes": self.encodes, "hits": self.hits, "entries": len(self._items), "chars": self._chars}

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._chars = 0
            self.hits = self.encodes = 0


IMAGE_URLS = DataUrlCache()  # one per process: the same file is the same data URL for every model and run


def image_cache_stats() -> dict[str, int]:
    """Image data URLs encoded (cache misses) and reused (hits) in this process, and what the cache holds now."""
    return IMAGE_URLS.stats()


def stat_is_file(result: Any) -> bool:
    """Whether an os.stat result is a regular file (what os.path.isfile asks, without a second stat)."""
    return _stat.S_ISREG(result.st_mode)
