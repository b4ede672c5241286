"""Message format -> transformers chat-template conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from vlmkit.formats.transformers_chat import load_image_value, to_hf_conversation, to_hf_item
from vlmkit.core.media import MediaError, file_to_data_url
from vlmkit.core.message import MessageError


@pytest.fixture()
def images(tmp_path: Path) -> tuple[str, str]:
    png, jpg = tmp_path / "red.png", tmp_path / "blue.jpg"
    Image.new("RGBA", (20, 10), (255, 0, 0, 128)).save(png)
    Image.new("RGB", (8, 16), (0, 0, 255)).save(jpg, quality=90)
    return str(png), str(jpg)


def test_flat_parts_become_one_user_turn_in_order(images: tuple[str, str]) -> None:
    png, jpg = images
    msgs = [
        {"type": "text", "value": "first"},
        {"type": "image", "value": png},
        {"type": "text", "value": "second"},
        {"type": "image", "value": jpg},
    ]
    conv = to_hf_conversation(msgs)
    assert [t["role"] for t in conv] == ["user"]
    items = conv[0]["content"]
    assert [i["type"] for i in items] == ["text", "image", "text", "image"]
    assert items[0] == {"type": "text", "text": "first"} and items[2] == {"type": "text", "text": "second"}
    assert isinstance(items[1]["image"], Image.Image) and items[1]["image"].size == (20, 10)
    assert items[1]["image"].mode == "RGB"  # RGBA composited, the processor gets RGB
    assert items[3]["image"].size == (8, 16)


def test_plain_strings_are_normalised(images: tuple[str, str]) -> None:
    png, _ = images
    conv = to_hf_conversation([png, "What is this?"])
    assert [i["type"] for i in conv[0]["content"]] == ["image", "text"]
    assert conv[0]["content"][1]["text"] == "What is this?"


def test_system_and_multi_turn(images: tuple[str, str]) -> None:
    png, jpg = images
    turns = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "image", "value": png}, {"type": "text", "value": "Colour?"}]},
        {"role": "assistant", "content": "Red."},
        {"role": "user", "content": [{"type": "text", "value": "And this?"}, {"type": "image", "value": jpg}]},
    ]
    conv = to_hf_conversation(turns)
    assert [t["role"] for t in conv] == ["system", "user", "assistant", "user"]
    assert conv[0]["content"] == [{"type": "text", "text": "Be brief."}]
    assert conv[2]["content"] == [{"type": "text", "text": "Red."}]
    assert [i["type"] for i in conv[3]["content"]] == ["text", "image"]


def test_images_first_fallback_per_turn(images: tuple[str, str]) -> None:
    png, jpg = images
    turns = [
        {"role": "system", "content": "sys"},
        {
            "role": "user",
            "content": [
                {"type": "text", "value": "A"},
                {"type": "image", "value": png},
                {"type": "text", "value": "B"},
                {"type": "image", "value": jpg},
            ],
        },
    ]
    conv = to_hf_conversation(turns, interleave=False)
    items = conv[1]["content"]
    assert [i["type"] for i in items] == ["image", "image", "text"]
    assert items[0]["image"].size == (20, 10) and items[1]["image"].size == (8, 16)  # media order kept
    assert items[2] == {"type": "text", "text": "A\nB"}
    assert conv[0]["content"] == [{"type": "text", "text": "sys"}]


def test_data_url_and_http_url(images: tuple[str, str]) -> None:
    png, _ = images
    item = to_hf_item({"type": "image", "value": file_to_data_url(png)})
    assert item["image"].size == (20, 10)
    url = "https://example.com/cat.png"
    assert to_hf_item({"type": "image", "value": url}) == {"type": "image", "url": url}
    assert load_image_value(url) == url


def test_video_audio_and_unloaded_images(images: tuple[str, str]) -> None:
    png, _ = images
    assert to_hf_item({"type": "video", "value": "/data/clip.mp4"}) == {"type": "video", "video": "/data/clip.mp4"}
    assert to_hf_item({"type": "audio", "value": "/data/a.wav"}) == {"type": "audio", "audio": "/data/a.wav"}
    assert to_hf_item({"type": "image", "value": png}, load_images=False) == {"type": "image", "image": png}


def test_bad_images_fail_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.png"
    with pytest.raises(MediaError, match="missing.png"):
        to_hf_item({"type": "image", "value": str(missing)})
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image at all")
    with pytest.raises(MediaError, match="broken.jpg"):
        to_hf_item({"type": "image", "value": str(broken)})
    with pytest.raises(MediaError, match="data URL"):
        to_hf_item({"type": "image", "value": "data:image/png;base64,AAAA"})


def test_invalid_messages_are_rejected() -> None:
    with pytest.raises(MessageError):
        to_hf_conversation([])
    with pytest.raises(MessageError, match="must follow a user turn"):  # a prefill with no question before it
        to_hf_conversation([{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}])


def test_video_and_audio_loaders_keep_positions(images: tuple[str, str]) -> None:
    png, _ = images
    frames = [Image.new("RGB", (4, 4), (i, i, i)) for i in (1, 2, 3)]

    def as_frames(value: str) -> list[dict]:
        assert value == "/data/clip.mp4"
        return [{"type": "image", "image": f} for f in frames]

    def as_wave(value: str) -> dict:
        return {"type": "audio", "audio": f"wave of {value}"}

    msgs = [
        {"type": "text", "value": "A"},
        {"type": "video", "value": "/data/clip.mp4"},
        {"type": "audio", "value": "/data/a.wav"},
        {"type": "image", "value": png},
        {"type": "text", "value": "B"},
    ]
    items = to_hf_conversation(msgs, video_items=as_frames, audio_item=as_wave)[0]["content"]
    assert [i["type"] for i in items] == ["text", "image", "image", "image", "audio", "image", "text"]
    assert [i["image"] for i in items[1:4]] == frames and items[4]["audio"] == "wave of /data/a.wav"
    reordered = to_hf_conversation(msgs, interleave=False, video_items=as_frames, audio_item=as_wave)[0]["content"]
    assert [i["type"] for i in reordered] == ["image", "image", "image", "audio", "image", "text"]
    assert reordered[-1] == {"type": "text", "text": "A\nB"}
