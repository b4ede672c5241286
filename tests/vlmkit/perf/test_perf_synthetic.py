"""`--synthetic-image` / `--synthetic-video`: requests of a chosen payload size without a dataset, the same bytes
for the same seed, sent through the run's media modes (checked on the bodies the mock server recorded)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfInputError
from vlmkit.perf.synthetic import MediaSpec, SyntheticDataset, parse_image_spec, parse_video_spec


def _decode(url: str) -> bytes:
    header, _, data = url.partition(",")
    assert header.endswith(";base64")
    return base64.b64decode(data)


def _image_size(url: str) -> tuple[int, int]:
    return Image.open(io.BytesIO(_decode(url))).size


@pytest.mark.parametrize("text, spec", [("512x256", MediaSpec(512, 256, 1)), ("64X32,3", MediaSpec(64, 32, 3)),
                                        (" 8x8 , 2 ", MediaSpec(8, 8, 2))])
def test_image_spec(text: str, spec: MediaSpec) -> None:
    assert parse_image_spec(text) == spec


@pytest.mark.parametrize("text", ["512", "512x", "0x10", "10x10,0", "10x10,65", "9000x10", "axb", "10x10x3"])
def test_bad_image_spec_is_one_line(text: str) -> None:
    with pytest.raises(PerfInputError, match="--synthetic-image"):
        parse_image_spec(text)


def test_video_spec() -> None:
    assert parse_video_spec("320x240x16") == MediaSpec(320, 240, 16)
    for bad in ("320x240", "320x240x0", "1x1x5000"):
        with pytest.raises(PerfInputError, match="--synthetic-video"):
            parse_video_spec(bad)


def test_rows_are_deterministic_and_distinct() -> None:
    spec = MediaSpec(24, 16, 2)
    one = SyntheticDataset(3, image=spec, seed=7)
    again = SyntheticDataset(3, image=spec, seed=7)
    other_seed = SyntheticDataset(3, image=spec, seed=8)
    rows = [one.build_prompt(one.line(i)) for i in range(3)]
    assert rows == [again.build_prompt(again.line(i)) for i in range(3)]
    assert rows[0] != other_seed.build_prompt(other_seed.line(0))
    images = [p["value"] for row in rows for p in row if p["type"] == "image"]
    assert len(images) == 6 and len(set(images)) == 6  # no image shared between or within rows
    assert {_image_size(url) for url in images} == {(24, 16)}
    assert len({row[-1]["value"] for row in rows}) == 3  # nor a prompt text


def test_video_file_has_the_frames_asked(tmp_path: Path) -> None:
    dataset = SyntheticDataset(1, video=MediaSpec(40, 30, 5), seed=1)
    parts = dataset.build_prompt(dataset.line(0))
    path = Path(parts[0]["value"])
    capture = cv2.VideoCapture(str(path))
    frames = 0
    while capture.read()[0]:
        frames += 1
    size = (capture.get(cv2.CAP_PROP_FRAME_WIDTH), capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
    capture.release()
    assert frames == 5 and size == (40, 30)
    dataset.close()
    assert not path.exists()


def _argv(mock, tmp_path: Path, *extra: str) -> list[str]:
    return ["perf", "--model", "m", "--api-base", mock.base_url, "--out", str(tmp_path / "out"), "--no-plots",
            "--max-tokens", "2", *extra]


def test_images_reach_the_server_at_the_size_asked(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2")
    assert main(_argv(mock, tmp_path, "--synthetic-image", "48x32,2", "--num-requests", "3", "--warmup", "1")) == 0
    bodies = [b for b in mock.bodies() if b["max_tokens"] != 1]  # the probe asks for one token
    assert len(bodies) == 4  # one warm-up + three measured, each its own row
    urls = []
    for body in bodies:
        content = body["messages"][-1]["content"]
        images = [part["image_url"]["url"] for part in content if part["type"] == "image_url"]
        assert len(images) == 2 and [part["type"] for part in content][-1] == "text"
        urls += images
    assert len(set(urls)) == 8 and {_image_size(u) for u in urls} == {(48, 32)}
    summary = json.loads((tmp_path / "out" / "perf_summary.json").read_text())
    assert summary["dataset"]["image"] == {"width": 48, "height": 32, "per_request": 2}
    assert summary["levels"][0]["requests"]["successful"] == 3


@pytest.mark.parametrize("mode", ["frames", "video_url"])
def test_video_reaches_the_server_as_the_mode_says(mode: str, mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2")
    argv = _argv(mock, tmp_path, "--synthetic-video", "32x24x6", "--num-requests", "2", "--video-mode", mode,
                 "--nframe", "3")
    assert main(argv) == 0
    bodies = [b for b in mock.bodies() if b["max_tokens"] != 1]
    assert len(bodies) == 2
    for body in bodies:
        content = body["messages"][-1]["content"]
        if mode == "frames":
            frames = [part["image_url"]["url"] for part in content if part["type"] == "image_url"]
            assert len(frames) == 3 and {_image_size(u) for u in frames} == {(32, 24)}
        else:
            videos = [part["video_url"]["url"] for part in content if part["type"] == "video_url"]
            assert len(videos) == 1
            path = tmp_path / "sent.avi"
            path.write_bytes(_decode(videos[0]))
            capture = cv2.VideoCapture(str(path))
            assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == 6
            capture.release()


def test_two_sources_or_none_is_one_line(mock_server, tmp_path: Path, capsys) -> None:
    mock = mock_server()
    assert main(_argv(mock, tmp_path, "--synthetic-image", "8x8", "--data", "x.tsv")) == 2
    assert "give one" in capsys.readouterr().err
    assert main(_argv(mock, tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("vlmkit perf: error: no requests to send") and len(err.strip().splitlines()) == 1
    assert main(_argv(mock, tmp_path, "--synthetic-image", "8x")) == 2
    assert "expected WxH" in capsys.readouterr().err


def test_pixels_are_not_a_constant_image() -> None:
    dataset = SyntheticDataset(1, image=MediaSpec(16, 16, 1))
    url = dataset.build_prompt(dataset.line(0))[0]["value"]
    pixels = np.asarray(Image.open(io.BytesIO(_decode(url))))
    assert pixels.std() > 40  # random pixels (uniform 0..255 has std ~74), not a flat colour that compresses away
