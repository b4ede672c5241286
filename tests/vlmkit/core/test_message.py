import pytest
from PIL import Image

from vlmkit.core.message import (
    MessageError,
    images_first,
    media_type_of,
    prefill_text,
    modalities,
    normalise_conversation,
    normalise_parts,
)


@pytest.fixture
def image_file(tmp_path):
    path = tmp_path / "cat.png"
    Image.new("RGB", (8, 8), "red").save(path)
    return str(path)


def test_strings_become_media_parts_only_for_existing_files_and_urls(image_file, tmp_path):
    parts = normalise_parts([image_file, "https://x.org/a.JPG", "what is this?", str(tmp_path / "missing.png")])
    assert [p["type"] for p in parts] == ["image", "image", "text", "text"]
    assert parts[0]["value"] == image_file


def test_media_type_of_data_urls_and_extensions():
    assert media_type_of("data:image/png;base64,AAAA") == "image"
    assert media_type_of("clip.MP4") == "video"
    assert media_type_of("https://h/x.wav?sig=1") == "audio"
    assert media_type_of("notes.txt") is None


def test_dict_parts_are_validated():
    with pytest.raises(MessageError, match="part 1: unknown part type 'picture'"):
        normalise_parts([{"type": "text", "value": "a"}, {"type": "picture", "value": "x"}])
    with pytest.raises(MessageError, match="must be a string"):
        normalise_parts([{"type": "text", "value": 3}])
    with pytest.raises(MessageError, match="empty message"):
        normalise_parts([])


def test_flat_parts_are_one_user_turn_and_turns_keep_roles(image_file):
    turns = normalise_conversation([image_file, "describe"])
    assert turns == [{"role": "user", "content": [{"type": "image", "value": image_file}, {"type": "text", "value": "describe"}]}]
    conv = normalise_conversation(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "value": "hi"}]}]
    )
    assert conv[0] == {"role": "system", "content": [{"type": "text", "value": "be brief"}]}
    assert modalities(conv) == {"text"}


def test_a_final_assistant_turn_is_a_prefill_of_text_after_a_user_turn(image_file):
    turns = normalise_conversation([{"role": "user", "content": "q"},
                                    {"role": "assistant", "content": "Best option:("}])
    assert turns[-1] == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    assert prefill_text(turns) == "Best option:("
    assert prefill_text(normalise_conversation("q")) is None
    with pytest.raises(MessageError, match="turn 1: .*prefill.*text only; this one has image"):
        normalise_conversation([{"role": "user", "content": "q"}, {"role": "assistant", "content": [image_file]}])
    with pytest.raises(MessageError, match="turn 1: .*must follow a user turn"):
        normalise_conversation([{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}])
    with pytest.raises(MessageError, match="turn 0: .*must follow a user turn"):
        normalise_conversation([{"role": "assistant", "content": "a"}])


def test_unknown_role_is_refused():
    with pytest.raises(MessageError, match="unknown role"):
        normalise_conversation([{"role": "robot", "content": "q"}])


def test_images_first_keeps_media_order_and_joins_text():
    parts = [
        {"type": "text", "value": "first"},
        {"type": "image", "value": "a.png"},
        {"type": "text", "value": "second"},
        {"type": "image", "value": "b.png"},
    ]
    assert images_first(parts) == [
        {"type": "image", "value": "a.png"},
        {"type": "image", "value": "b.png"},
        {"type": "text", "value": "first\nsecond"},
    ]
