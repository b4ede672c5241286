import base64
import io

import pytest
from PIL import Image

from vlmkit.media import (
    MediaError,
    b64_to_bytes,
    b64_to_image,
    file_to_data_url,
    image_extension,
    resize_longest_side,
    to_rgb,
)


def _jpeg_bytes(size=(64, 48)):
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 200, 30)).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def test_decoding_keeps_the_original_bytes():
    data = _jpeg_bytes()
    text = base64.b64encode(data).decode()
    assert b64_to_bytes(text) == data
    assert b64_to_bytes(text.rstrip("=")) == data  # padding optional
    assert image_extension(data) == ".jpg"


def test_signatures():
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, format="PNG")
    assert image_extension(buffer.getvalue()) == ".png"
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, format="WEBP")
    assert image_extension(buffer.getvalue()) == ".webp"


def test_broken_base64_is_a_media_error():
    with pytest.raises(MediaError, match="not valid base64"):
        b64_to_bytes("@@@not base64@@@")
    with pytest.raises(MediaError, match="not a readable image"):
        b64_to_image(base64.b64encode(b"plain text, not an image").decode())


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P", "L"])
def test_to_rgb_handles_every_mode(mode):
    image = Image.new(mode, (4, 4))
    if mode == "P":
        image.info["transparency"] = 0
    out = to_rgb(image)
    assert out.mode == "RGB"
    if mode in ("RGBA", "LA", "P"):  # fully transparent pixels composite on white
        assert out.getpixel((0, 0)) == (255, 255, 255)


def test_resize_longest_side_never_enlarges():
    image = Image.new("RGB", (400, 100))
    assert resize_longest_side(image, 200).size == (200, 50)
    assert resize_longest_side(image, 800).size == (400, 100)


def test_data_url_uses_original_bytes_unless_shrinking(tmp_path):
    path = tmp_path / "x.jpg"
    path.write_bytes(_jpeg_bytes((640, 480)))
    url = file_to_data_url(path)
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == path.read_bytes()
    small = file_to_data_url(path, max_side=320)
    assert Image.open(io.BytesIO(base64.b64decode(small.split(",", 1)[1]))).size == (320, 240)
