"""What OpenAICompatModel sends for video and audio, captured by a real server on 127.0.0.1 (tests/support/servers.py)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from tests.support.media_files import nearest_frame, write_tone, write_video
from tests.support.servers import FaultServer, chat_reply, script
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.audio import AudioError
from vlmkit.core.model_calls import Generation


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("api_media")
    return {
        "video": write_video(root / "clip.mp4", frames=16, fps=8.0),
        "wav": write_tone(root / "tone.wav", rate=16000),
        "mp3": write_tone(root / "tone.mp3", rate=16000),
        "flac": write_tone(root / "tone.flac", rate=22050, channels=2),
        "ogg": write_tone(root / "tone.ogg", rate=16000),
    }


def _sent(msgs: list, **kwargs) -> tuple[dict, OpenAICompatModel]:
    """The one request body the model sent for `msgs`."""
    with FaultServer(script(chat_reply("ok"))) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, backoff=0.01, timeout=10, **kwargs)
        assert model.generate(msgs) == "ok"
        (request,) = server.requests
    return request.body, model


def _frame_of(part: dict) -> tuple[int, tuple[int, int]]:
    """(source frame index shown, size) of an image_url part holding a JPEG data URL."""
    url = part["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
    return nearest_frame(np.asarray(image).reshape(-1, 3).mean(axis=0)), image.size


def test_frames_mode_sends_n_image_parts_in_order(media: dict[str, Path]) -> None:
    body, model = _sent(["Before the video.", str(media["video"]), "What happens?"], nframe=4)
    content = body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "image_url", "image_url", "image_url", "text"]
    assert [_frame_of(p)[0] for p in content[1:5]] == [3, 6, 9, 12]  # VLMEvalKit's frames int(i * 16 / 5), in time order
    assert content[0]["text"] == "Before the video." and content[-1]["text"] == "What happens?"
    settings = model.settings()
    assert (settings["video_mode"], settings["nframe"], settings["fps"]) == ("frames", 4, None)


def test_frames_mode_by_fps_and_img_max_side(media: dict[str, Path]) -> None:
    body, model = _sent([str(media["video"]), "What happens?"], fps=1.0, img_max_side=32)
    frames = [_frame_of(p) for p in body["messages"][0]["content"] if p["type"] == "image_url"]
    assert frames == [(0, (32, 24)), (8, (32, 24))]  # int(2 s * 1) = 2 frames from frame 0, every 8th, shrunk
    assert (model.settings()["nframe"], model.settings()["fps"]) == (None, 1.0)  # fps replaces nframe


def test_default_is_eight_frames(media: dict[str, Path]) -> None:
    body, _ = _sent([str(media["video"]), "What happens?"])
    assert sum(p["type"] == "image_url" for p in body["messages"][0]["content"]) == 8


def test_video_url_mode_sends_the_file_as_a_data_url(media: dict[str, Path]) -> None:
    body, model = _sent(["Watch:", str(media["video"]), "What happens?"], video_mode="video_url")
    content = body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "video_url", "text"]
    url = content[1]["video_url"]["url"]
    header, data = url.split(",", 1)
    assert header == "data:video/mp4;base64"
    assert base64.b64decode(data) == media["video"].read_bytes()
    assert model.settings()["video_mode"] == "video_url"


def test_video_url_mode_passes_an_http_url_as_given() -> None:
    url = "https://example.com/videos/clip.mp4?sig=1"
    body, _ = _sent([{"type": "video", "value": url}, "What happens?"], video_mode="video_url")
    assert body["messages"][0]["content"][0] == {"type": "video_url", "video_url": {"url": url}}


def test_bad_video_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="video_mode"):
        OpenAICompatModel("m", api_base="http://127.0.0.1:1/v1", video_mode="clips")


@pytest.mark.parametrize("kind, fmt", [("wav", "wav"), ("mp3", "mp3")])
def test_wav_and_mp3_are_sent_as_they_are(media: dict[str, Path], kind: str, fmt: str) -> None:
    body, _ = _sent([str(media[kind]), "Transcribe."])
    part = body["messages"][0]["content"][0]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == fmt
    assert base64.b64decode(part["input_audio"]["data"]) == media[kind].read_bytes()


@pytest.mark.parametrize("kind", ["flac", "ogg"])
def test_other_formats_are_converted_to_wav(media: dict[str, Path], kind: str) -> None:
    body, _ = _sent([str(media[kind]), "Transcribe."])
    part = body["messages"][0]["content"][0]
    assert part["input_audio"]["format"] == "wav"
    sent, rate = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])), dtype="float32", always_2d=True)
    original, original_rate = sf.read(str(media[kind]), dtype="float32", always_2d=True)
    assert rate == original_rate and sent.shape == original.shape
    assert np.max(np.abs(sent - original)) < 1e-3


def test_mixed_video_audio_image_keep_their_order(media: dict[str, Path], tmp_path: Path) -> None:
    png = tmp_path / "dot.png"
    Image.new("RGB", (8, 8), (9, 9, 9)).save(png)
    msgs = [str(png), "then", str(media["video"]), str(media["wav"]), "Describe all."]
    body, _ = _sent(msgs, nframe=2)
    kinds = [p["type"] for p in body["messages"][0]["content"]]
    assert kinds == ["image_url", "text", "image_url", "image_url", "input_audio", "text"]


def test_bad_audio_fails_that_row_only(media: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.ogg"
    broken.write_bytes(b"OggS but not really")
    with FaultServer(script(chat_reply("ok"))) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, backoff=0.01, timeout=10)
        results = model.generate_batch([[str(broken), "Transcribe."], [str(media["wav"]), "Transcribe."]])
        assert len(server.requests) == 1  # the bad row never reached the service
    assert isinstance(results[0], AudioError) and "broken.ogg" in str(results[0])
    assert isinstance(results[1], Generation) and results[1].text == "ok"
