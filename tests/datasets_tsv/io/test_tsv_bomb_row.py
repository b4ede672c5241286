"""A TSV row whose image declares more pixels than Pillow allows fails alone, as that row's `bad_media` error,
and the run goes on: the other rows are asked and scored, and the refused image never reaches the server."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from datasets_tsv.kinds.yorn import ImageYORNDataset
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.runner import Runner, RunOptions

from tests.support.tsvs import b64, image_bytes, write_tsv


def png_declaring(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def answer(request: Recorded) -> Reply:
    if request.method != "POST":  # the runner's probe of GET /models: a server without a model list
        return Reply(404, {"error": {"message": "no model list here"}})
    return chat_reply("Yes")


def test_bomb_row_fails_alone_and_the_run_goes_on(lmu_root, tmp_path):
    rows = [
        {"index": 0, "image": b64(image_bytes("red")), "question": "Red?", "answer": "Yes"},
        {"index": 1, "image": b64(png_declaring(100_000, 100_000)), "question": "Red?", "answer": "Yes"},
        {"index": 2, "image": b64(image_bytes("red")), "question": "Red?", "answer": "Yes"},
    ]
    write_tsv(lmu_root / "Bomb.tsv", rows)
    dataset = ImageYORNDataset("Bomb", root=lmu_root, progress=False)
    with FaultServer(answer) as server:
        spec = resolve_model("served", ModelOptions(api_base=server.base_url, api_key="sk-test"))
        outcome = Runner(RunOptions(work_dir=tmp_path / "out", nproc=2, progress=False)).run_one(spec, dataset)
        posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) == 2  # the refused image was never sent
    records = {r["index"]: r for r in map(json.loads, Path(outcome.files["predictions"]).read_text().splitlines())}
    assert records[0]["prediction"] == records[2]["prediction"] == "Yes"
    error = records[1]["error"]
    assert records[1].get("prediction") is None and error["kind"] == "bad_media"
    assert "1.png" in error["message"] and "100000x100000" in error["message"]
