"""vlmkit.formats.openai_chat: message format -> OpenAI chat `messages`, on real image and audio files."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path

import pytest
from PIL import Image

from vlmkit.core.model_calls import UnsupportedInputError
from vlmkit.core.message import MessageError
from vlmkit.formats.openai_chat import audio_part, content_parts, image_url_part, to_openai_messages


@pytest.fixture
def png(tmp_path: Path) -> Path:
    path = tmp_path / "red.png"
    Image.new("RGB", (40, 20), (255, 0, 0)).save(path)
    return path


@pytest.fixture
def big_jpg(tmp_path: Path) -> Path:
    path = tmp_path / "big.jpg"
    Image.new("RGB", (400, 200), (0, 128, 255)).save(path, quality=90)
    return path


@pytest.fixture
def wav(tmp_path: Path) -> Path:
    path = tmp_path / "tone.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(bytes(range(256)) * 8)
    return path


def _decode_data_url(url: str) -> tuple[str, bytes]:
    header, _, data = url.partition(",")
    assert header.endswith(";base64")
    return header[5:].split(";")[0], base64.b64decode(data)


def test_local_image_becomes_data_url_of_the_same_bytes(png: Path) -> None:
    part = image_url_part(str(png))
    assert part["type"] == "image_url"
    mime, data = _decode_data_url(part["image_url"]["url"])
    assert mime == "image/png"
    assert data == png.read_bytes()


def test_img_max_side_shrinks_large_images_only(png: Path, big_jpg: Path) -> None:
    mime, data = _decode_data_url(image_url_part(str(big_jpg), img_max_side=100)["image_url"]["url"])
    assert mime == "image/jpeg"
    assert Image.open(io.BytesIO(data)).size == (100, 50)
    # a small image keeps its original bytes
    assert _decode_data_url(image_url_part(str(png), img_max_side=100)["image_url"]["url"])[1] == png.read_bytes()


def test_urls_pass_through_as_given() -> None:
    http = "https://example.com/cat.jpg?x=1"
    data_url = "data:image/png;base64,iVBORw0KGgo="
    assert image_url_part(http) == {"type": "image_url", "image_url": {"url": http}}
    assert image_url_part(data_url)["image_url"]["url"] == data_url


def test_missing_image_file_names_the_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.png")
    with pytest.raises(MessageError, match="nope.png"):
        content_parts([{"type": "image", "value": missing}])


def test_unreadable_image_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image at all")
    with pytest.raises(MessageError, match="bad.png"):
        image_url_part(str(bad), img_max_side=10)


def test_flat_list_is_one_user_turn_with_interleaved_order(png: Path, big_jpg: Path) -> None:
    messages = to_openai_messages(["Compare", str(png), "with", str(big_jpg), "please."])
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "text", "image_url", "text"]
    assert [p["text"] for p in content if p["type"] == "text"] == ["Compare", "with", "please."]
    assert _decode_data_url(content[1]["image_url"]["url"])[1] == png.read_bytes()
    assert _decode_data_url(content[3]["image_url"]["url"])[1] == big_jpg.read_bytes()


def test_text_only_user_turn_is_a_plain_string() -> None:
    assert to_openai_messages(["What is 2+2?"]) == [{"role": "user", "content": "What is 2+2?"}]
    two = to_openai_messages([{"type": "text", "value": "a"}, {"type": "text", "value": "b"}])
    assert two == [{"role": "user", "content": "a\nb"}]


def test_conversation_roles_and_system_prompt(png: Path) -> None:
    conversation = [
        {"role": "user", "content": [{"type": "image", "value": str(png)}, {"type": "text", "value": "colour?"}]},
        {"role": "assistant", "content": "red"},
        {"role": "user", "content": "and the shape?"},
    ]
    messages = to_openai_messages(conversation, system_prompt="Be brief.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"] == "Be brief."
    assert messages[2] == {"role": "assistant", "content": "red"}
    assert messages[3] == {"role": "user", "content": "and the shape?"}
    assert messages[1]["content"][0]["type"] == "image_url"


def test_own_system_turn_wins_over_system_prompt() -> None:
    conversation = [{"role": "system", "content": "From the data."}, {"role": "user", "content": "hi"}]
    messages = to_openai_messages(conversation, system_prompt="Default.")
    assert messages == [{"role": "system", "content": "From the data."}, {"role": "user", "content": "hi"}]


def test_media_in_a_system_turn_is_refused(png: Path) -> None:
    conversation = [{"role": "system", "content": [str(png)]}, {"role": "user", "content": "hi"}]
    with pytest.raises(MessageError, match="system turn may hold text only"):
        to_openai_messages(conversation)


def test_audio_file_becomes_input_audio(wav: Path) -> None:
    messages = to_openai_messages([str(wav), "Transcribe."])
    part = messages[0]["content"][0]
    assert part["type"] == "input_audio"
    assert part["input_audio"]["format"] == "wav"
    assert base64.b64decode(part["input_audio"]["data"]) == wav.read_bytes()


def test_audio_data_url_and_mime_names() -> None:
    payload = base64.b64encode(b"ID3fake").decode()
    part = audio_part(f"data:audio/mpeg;base64,{payload}")
    assert part == {"type": "input_audio", "input_audio": {"data": payload, "format": "mp3"}}
    with pytest.raises(UnsupportedInputError, match="not a URL"):
        audio_part("https://example.com/a.wav")


def test_video_without_frame_sampler_fails_loudly(tmp_path: Path) -> None:
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00" * 64)
    with pytest.raises(UnsupportedInputError, match="video"):
        to_openai_messages([str(video), "What happens?"])


def test_video_with_frame_sampler_sends_frames_as_images(tmp_path: Path, png: Path, big_jpg: Path) -> None:
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00" * 64)
    seen: list[str] = []

    def frames(value: str) -> list[str]:
        seen.append(value)
        return [str(png), str(big_jpg)]

    messages = to_openai_messages([str(video), "What happens?"], video_frames=frames)
    assert seen == [str(video)]
    content = messages[0]["content"]
    assert [p["type"] for p in content] == ["image_url", "image_url", "text"]
    assert _decode_data_url(content[1]["image_url"]["url"])[1] == big_jpg.read_bytes()


def test_video_url_mode(tmp_path: Path) -> None:
    from tests.support.media_files import write_video

    clip = write_video(tmp_path / "clip.mov", frames=4, fps=4.0)
    messages = to_openai_messages([str(clip), "What happens?"], video_mode="video_url")
    part = messages[0]["content"][0]
    assert part["type"] == "video_url"
    mime, data = _decode_data_url(part["video_url"]["url"])
    assert mime == "video/quicktime" and data == clip.read_bytes()
    url = "http://example.com/v.webm"
    assert to_openai_messages([{"type": "video", "value": url}], video_mode="video_url")[0]["content"] == [
        {"type": "video_url", "video_url": {"url": url}}
    ]
    with pytest.raises(ValueError, match="video_mode"):
        to_openai_messages([str(clip)], video_mode="gif", video_frames=lambda v: [])


def test_audio_formats_outside_wav_and_mp3_become_wav(tmp_path: Path) -> None:
    import soundfile as sf

    flac = tmp_path / "tone.flac"
    sf.write(str(flac), [0.0, 0.25, -0.25, 0.5] * 100, 8000)
    part = audio_part(str(flac))
    assert part["input_audio"]["format"] == "wav"
    samples, rate = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])))
    assert rate == 8000 and len(samples) == 400
    url = "data:audio/flac;base64," + base64.b64encode(flac.read_bytes()).decode()
    assert audio_part(url)["input_audio"]["format"] == "wav"  # data URLs too
