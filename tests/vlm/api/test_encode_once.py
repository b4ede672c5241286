"""Encode once (vlmkit.formats.image_cache): an image shared by many rows is read, checked and base64-encoded once per
process while the file is unchanged; every request still carries the file's own bytes; a file rewritten in place is
read again; a file that is not an image is refused every time and never kept; the cache stays within its bounds."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from tests.support.servers import FaultServer, Recorded, chat_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.message import MessageError
from vlmkit.formats import image_cache
from vlmkit.formats.image_cache import DataUrlCache, image_cache_stats
from vlmkit.formats.openai_chat import image_url_part
from vlmkit.run.inference import Task, run_api
from vlmkit.run.journal import Journal

ROWS = 30


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    image_cache.IMAGE_URLS.clear()


def png(path: Path, colour: str, size: int = 24) -> bytes:
    Image.new("RGB", (size, size), colour).save(path)
    return path.read_bytes()


def data_url_of(data: bytes) -> str:
    """What the request must carry for a PNG file: its own bytes, base64 (worked out here, not by the code)."""
    return "data:image/png;base64," + base64.b64encode(data).decode()


def sent_images(request: Recorded) -> list[str]:
    return [p["image_url"]["url"] for p in request.body["messages"][-1]["content"] if p["type"] == "image_url"]


def test_rows_sharing_two_images_encode_each_once_and_send_its_bytes(tmp_path: Path) -> None:
    red, blue = tmp_path / "red.png", tmp_path / "blue.png"
    red_bytes, blue_bytes = png(red, "red"), png(blue, "blue")
    tasks = [Task(i, [str(red if i % 3 else blue), f"q{i}"]) for i in range(ROWS)]
    journal = Journal(tmp_path / "journal.jsonl", {"test": "encode once"})
    journal.open()
    with FaultServer(lambda request: chat_reply("ok")) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        try:
            errors = run_api(model, tasks, journal, dataset=None, nproc=4, desc="t", progress=False)
        finally:
            journal.close()
            model.close()
        requests = list(server.requests)
    assert errors == 0 and len(requests) == ROWS
    expected = {f"q{i}": data_url_of(red_bytes if i % 3 else blue_bytes) for i in range(ROWS)}
    got = {r.body["messages"][-1]["content"][-1]["text"]: sent_images(r)[0] for r in requests}
    assert got == expected
    stats = image_cache_stats()
    assert stats["encodes"] == 2 and stats["hits"] == ROWS - 2 and stats["entries"] == 2


def test_a_file_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "picture.png"
    first = png(path, "red", size=16)
    assert image_url_part(str(path))["image_url"]["url"] == data_url_of(first)
    assert image_url_part(str(path))["image_url"]["url"] == data_url_of(first)
    second = png(path, "green", size=20)  # another size of file, and another mtime
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1_000_000))
    assert image_url_part(str(path))["image_url"]["url"] == data_url_of(second)
    assert image_cache_stats()["encodes"] == 2


def test_a_shrunk_copy_is_kept_apart_from_the_original(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    original = png(path, "red", size=64)
    small = image_url_part(str(path), img_max_side=16)["image_url"]["url"]
    assert image_url_part(str(path))["image_url"]["url"] == data_url_of(original)
    assert small.startswith("data:image/jpeg;base64,") and small != data_url_of(original)
    assert image_url_part(str(path), img_max_side=16)["image_url"]["url"] == small
    assert image_cache_stats()["encodes"] == 2


def test_a_file_that_is_not_an_image_is_refused_every_time_and_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("not a picture at all")
    for _ in range(2):
        with pytest.raises(MessageError, match="notes.png.*not an image"):
            image_url_part(str(path))
    assert image_cache_stats()["entries"] == 0
    with pytest.raises(MessageError, match="no such file"):
        image_url_part(str(tmp_path / "missing.png"))


def test_the_cache_drops_the_least_recently_used_within_its_bounds() -> None:
    cache = DataUrlCache(max_chars=100, max_entries=3)
    for key in "abc":
        cache.put((key,), key * 20)
    assert cache.get(("a",)) == "a" * 20  # a is now the most recently used
    cache.put(("d",), "d" * 20)  # a fourth entry: b, the least recently used, goes
    assert cache.get(("b",)) is None and cache.get(("c",)) == "c" * 20
    cache.put(("e",), "e" * 24)  # within 3 entries, but 20 + 20 + 20 + 24 chars > 100: the oldest goes
    assert cache.stats()["chars"] <= 100 and cache.stats()["entries"] <= 3
    cache.put(("huge",), "x" * 26)  # over a quarter of the budget: never kept
    assert cache.get(("huge",)) is None


def test_the_request_body_of_an_image_row_matches_the_text_of_the_file_without_the_cache(tmp_path: Path) -> None:
    """The cached path and a fresh read give the same body (the cache changes nothing a server sees)."""
    path = tmp_path / "p.png"
    png(path, "purple")
    model = OpenAICompatModel("m", api_base="http://127.0.0.1:9/v1")
    first = json.dumps(model.request_body([str(path), "what colour?"]))
    image_cache.IMAGE_URLS.clear()
    assert json.dumps(model.request_body([str(path), "what colour?"])) == first
    assert json.dumps(model.request_body([str(path), "what colour?"])) == first
    assert image_cache_stats() == {**image_cache_stats(), "encodes": 1, "hits": 1}
