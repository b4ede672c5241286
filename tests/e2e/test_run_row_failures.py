"""Row-level media failures are said on the console, each kind with its first row and reason: an audio file
soundfile cannot read, a video opencv cannot open. The other rows are answered. (Answers that fit no option:
tests/e2e/test_run_failures.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from tests.support.run_helpers import chat_only, chat_requests, run_served, vlmkit_cli
from tests.support.media_files import write_tone
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply, models_reply


def answer(request: Recorded) -> Reply:
    return chat_reply("red")


def test_unreadable_audio_and_video_are_listed_with_their_first_row(tmp_path: Path):
    media = tmp_path / "media"
    media.mkdir()
    Image.new("RGB", (16, 16), "red").save(media / "ok.png")
    write_tone(media / "ok.wav")
    (media / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEnot really audio")
    (media / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 not a video")
    rows = [
        {"type": "image", "path": ["ok.png"], "question": "What colour?", "answer": "red"},
        {"type": "audio", "path": ["broken.wav"], "question": "What is said?", "answer": "hello"},
        {"type": "audio", "path": ["ok.wav"], "question": "What is heard?", "answer": "a tone"},
        {"type": "video", "path": ["broken.mp4"], "question": "What happens?", "answer": "nothing"},
    ]
    data = media / "mm_custom.jsonl"  # paths are relative to the file
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    work = tmp_path / "out"
    with FaultServer(chat_only(answer)) as server:
        result = vlmkit_cli("run", "--custom-dataset-path", str(data), "--model", "served", "--api-base",
                            server.base_url, "--work-dir", str(work), "--retries", "0",
                            env={"LMUData": str(tmp_path / "LMUData")})
        asked = len(chat_requests(server.requests))
    assert result.returncode == 3, result.stderr  # finished, but some samples failed
    assert asked == 2  # the readable rows only
    lines = [line for line in result.stdout.splitlines() if "bad_media" in line]
    assert len(lines) == 1
    assert "2 sample(s) failed with bad_media" in lines[0] and "first: row 1" in lines[0]
    assert "broken.wav" in lines[0]
    results = json.loads(next(work.rglob("results.json")).read_text())
    assert results["errors_by_kind"]["bad_media"]["count"] == 2
    assert "broken.mp4" in (work / "served").joinpath(results["dataset"]["name"], "predictions.jsonl").read_text()


def test_an_answer_that_is_none_of_the_options_is_said_on_the_console(lmu_root: Path, tmp_path: Path):
    """Before, only results.json said so (issue 22)."""
    rows = ["index\tquestion\tA\tB\tanswer"] + [f"{i}\tPick {i}\tred\tblue\t{'E' if i == 3 else 'A'}" for i in range(5)]
    (lmu_root / "Picks.tsv").write_text("\n".join(rows) + "\n")
    with FaultServer(lambda r: chat_reply("A") if r.method == "POST" else models_reply("served")) as server:
        result = run_served(server.base_url, tmp_path / "out", lmu_root, data="Picks")
    line = next(line for line in result.stdout.splitlines() if "not one of their options" in line)
    assert line.startswith("served x Picks: 1 row(s) have an answer that is not one of their options") and "3" in line
