"""What reaches the server: .meta.json and per-row max_tokens, ignore_eos, streaming with usage, and the media
modes (data URLs, file:// URLs, video as frames or video_url, audio as input_audio or audio_url).

Real files (pillow image, opencv video, soundfile audio), a real custom dataset (datasets_tsv.custom), bodies
captured by the mock server."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf

custom = pytest.importorskip("datasets_tsv.custom")


def _options(mock, tmp_path: Path, **kw) -> PerfOptions:
    return PerfOptions(model="served", api_base=mock.base_url, out_dir=tmp_path / "out", plots=False, quiet=True, **kw)


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("perf_media")
    Image.new("RGB", (48, 32), (200, 30, 30)).save(folder / "red.jpg")
    Image.new("RGB", (40, 40), (30, 30, 200)).save(folder / "blue.png")
    import cv2
    import soundfile

    writer = cv2.VideoWriter(str(folder / "clip.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 10, (32, 32))
    for i in range(20):
        writer.write(np.full((32, 32, 3), i * 10, dtype=np.uint8))
    writer.release()
    soundfile.write(folder / "tone.wav", np.sin(np.linspace(0, 440 * 2 * np.pi, 8000)).astype("float32"), 8000)
    return {p.stem: p for p in folder.iterdir()}


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _mm_jsonl(folder: Path, media: dict[str, Path]) -> Path:
    return _write_jsonl(folder / "mm.jsonl", [
        {"type": "image", "path": [str(media["red"]), str(media["blue"])], "question": "compare", "answer": "x"},
        {"type": "video", "path": [str(media["clip"])], "question": "describe the video", "answer": "x"},
        {"type": "audio", "path": [str(media["tone"])], "question": "describe the audio", "answer": "x"},
    ])


def _user_content(body: dict) -> list[dict]:
    return body["messages"][-1]["content"]


def test_meta_json_decides_request_count_and_max_tokens(mock_server, tmp_path: Path, media) -> None:
    data = _mm_jsonl(tmp_path, media)
    meta = {"request_count": 7, "sampling_mode": "default",
            "output_config": {"method": "percentage", "params": {"percentage_distribute": [[5, 0.5], [9, 0.5]]}}}
    Path(str(data) + ".meta.json").write_text(json.dumps(meta))
    dataset = custom.build_custom_dataset(data)
    assert len(dataset.data) == 7
    mock = mock_server("--tokens", "3")
    level = run_perf(dataset, _options(mock, tmp_path, concurrency=[2])).levels[0]
    assert level["requests"]["measured"] == 7 and level["requests"]["successful"] == 7
    bodies = mock.bodies()[1:]
    wanted = [dataset.generation_params(dataset.line(i))["max_tokens"] for i in range(7)]
    assert sorted(b["max_tokens"] for b in bodies) == sorted(wanted) == [5, 5, 5, 9, 9, 9, 9]
    for body in bodies:
        assert body["model"] == "served" and body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}
    kinds = sorted(tuple(p["type"] for p in _user_content(b)) for b in bodies)
    assert ("image_url", "image_url", "text") in kinds  # the two images, then the question
    assert ("input_audio", "text") in kinds
    video = next(k for k in kinds if len(k) > 3)  # video as sampled frames: 8 image parts by default
    assert video == ("image_url",) * 8 + ("text",)
    image_body = next(b for b in bodies if len(_user_content(b)) == 3)
    assert _user_content(image_body)[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_per_row_max_tokens_win_over_the_default_and_ignore_eos_passes(mock_server, tmp_path: Path) -> None:
    data = _write_jsonl(tmp_path / "qa.jsonl", [
        {"question": "one", "answer": "1", "max_tokens": 7},
        {"question": "two", "answer": "2"},
        {"question": "three", "answer": "3", "max_tokens": 11},
    ])
    mock = mock_server("--tokens", "2")
    options = _options(mock, tmp_path, concurrency=[1], max_tokens=13, ignore_eos=True)
    level = run_perf(custom.build_custom_dataset(data), options).levels[0]
    bodies = mock.bodies()[1:]
    assert [b["max_tokens"] for b in bodies] == [7, 13, 11]
    assert all(b["ignore_eos"] is True for b in bodies)
    assert level["tokens"]["output_total"] == 7 + 13 + 11  # the mock honours ignore_eos: max_tokens each


def test_url_modes_send_file_video_and_audio_urls(mock_server, tmp_path: Path, media) -> None:
    dataset = custom.build_custom_dataset(_mm_jsonl(tmp_path, media))
    mock = mock_server("--tokens", "2")
    options = _options(mock, tmp_path, concurrency=[1], media_mode="file-url", video_mode="video_url", audio_mode="audio_url")
    run_perf(dataset, options)
    image, video, audio = (_user_content(b) for b in mock.bodies()[1:])
    assert image[0] == {"type": "image_url", "image_url": {"url": media["red"].resolve().as_uri()}}
    assert image[1]["image_url"]["url"] == media["blue"].resolve().as_uri()
    assert video[0] == {"type": "video_url", "video_url": {"url": media["clip"].resolve().as_uri()}}
    assert audio[0] == {"type": "audio_url", "audio_url": {"url": media["tone"].resolve().as_uri()}}
    assert image[-1] == {"type": "text", "text": "compare"}


def test_video_url_and_audio_url_as_data_urls(mock_server, tmp_path: Path, media) -> None:
    dataset = custom.build_custom_dataset(_mm_jsonl(tmp_path, media))
    mock = mock_server("--tokens", "2")
    run_perf(dataset, _options(mock, tmp_path, concurrency=[1], video_mode="video_url", audio_mode="audio_url"))
    _, video, audio = (_user_content(b) for b in mock.bodies()[1:])
    assert video[0]["video_url"]["url"].startswith("data:video/mp4;base64,")
    assert audio[0]["audio_url"]["url"].startswith("data:audio/")


def test_rows_cycle_when_more_requests_than_rows(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "2")
    params = [{"max_tokens": 3}, {"max_tokens": 4, "temperature": 0.5}]
    run_perf(ListDataset(["a", "b"], params), _options(mock, tmp_path, concurrency=[1], num_requests=5))
    bodies = mock.bodies()[1:]
    assert [b["messages"][0]["content"] for b in bodies] == ["a", "b", "a", "b", "a"]
    assert [b["max_tokens"] for b in bodies] == [3, 4, 3, 4, 3]
    assert bodies[1]["temperature"] == 0.5 and "temperature" not in bodies[0]
