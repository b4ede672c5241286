import base64
import io
import struct
import zlib

import pytest
from PIL import Image

from vlmkit.core.media import (
    MediaError,
    b64_to_bytes,
    b64_to_image,
    bytes_to_image,
    declared_size,
    file_to_data_url,
    image_extension,
    load_image,
    read_image_file,
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


# -- decompression bombs ----------------------------------------------------------------------------------------
def png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG file whose IHDR declares width x height (valid CRCs; the pixel data is absent)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


@pytest.fixture
def no_pixel_decoding(monkeypatch):
    """Any decoding of pixels fails the test: the checks must read the header only."""
    from PIL import ImageFile

    def refuse(self, *args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)


# 100,000 x 100,000 is past twice the limit (Pillow raises); 10,000 x 10,000 is between once and twice the limit,
# where Pillow only warns and would decode 300 MB.
@pytest.mark.parametrize("side", [100_000, 10_000])
def test_bomb_file_is_refused_on_both_paths_from_its_header(tmp_path, no_pixel_decoding, side):
    from vlmkit.formats.transformers_chat import load_image_value
    from vlmkit.formats.openai_chat import image_url_part

    path = tmp_path / "bomb.png"
    path.write_bytes(png_declaring(side, side))
    assert path.stat().st_size < 100  # small on disk
    assert declared_size(path.read_bytes()) == (side, side)
    expected = rf"bomb\.png: the image header declares {side}x{side} pixels .*more than Pillow's limit"
    for open_it in (read_image_file, file_to_data_url, lambda p: file_to_data_url(p, 64),  # the API path
                    load_image, lambda p: load_image_value(str(p)),  # the local (transformers) path
                    lambda p: image_url_part(str(p))):
        with pytest.raises(MediaError, match=expected):
            open_it(path)


def test_bomb_as_bytes_or_data_url_is_refused(no_pixel_decoding):
    from vlmkit.formats.transformers_chat import load_image_value

    data = png_declaring(50_000, 50_000)
    with pytest.raises(MediaError, match=r"declares 50000x50000 pixels"):
        bytes_to_image(data)
    with pytest.raises(MediaError, match=r"image data URL: the image header declares 50000x50000"):
        load_image_value("data:image/png;base64," + base64.b64encode(data).decode())


def test_refused_image_is_a_bad_media_error_record(tmp_path):
    from vlmkit.core.model_calls import error_record
    from vlmkit.formats.openai_chat import to_openai_messages

    path = tmp_path / "bomb.png"
    path.write_bytes(png_declaring(100_000, 100_000))
    with pytest.raises(MediaError) as info:
        to_openai_messages([{"type": "image", "value": str(path)}, {"type": "text", "value": "What is it?"}])
    record = error_record(info.value)
    assert record["kind"] == "bad_media" and str(path) in record["message"] and "100000x100000" in record["message"]


def test_images_within_the_limit_pass_and_sizes_come_from_headers(tmp_path):
    for fmt, ext in [("PNG", "png"), ("JPEG", "jpg"), ("BMP", "bmp"), ("GIF", "gif"), ("WEBP", "webp")]:
        buffer = io.BytesIO()
        Image.new("RGB", (37, 21), "red").save(buffer, format=fmt)
        assert declared_size(buffer.getvalue()) == (37, 21), fmt
        path = tmp_path / f"ok.{ext}"
        path.write_bytes(buffer.getvalue())
        assert read_image_file(path) == buffer.getvalue() and load_image(path).size == (37, 21)
    assert declared_size(b"plain text, not an image") is None
    assert declared_size(png_declaring(8_000, 8_000)) == (8_000, 8_000)
    allowed = tmp_path / "big_but_allowed.png"
    allowed.write_bytes(png_declaring(8_000, 8_000))  # 64 M pixels: under the limit, not refused
    assert file_to_data_url(allowed).startswith("data:image/png;base64,")


def test_missing_image_file_is_a_media_error_naming_it(tmp_path):
    with pytest.raises(MediaError, match=r"nope\.png: cannot be read"):
        read_image_file(tmp_path / "nope.png")


def test_bomb_data_url_is_refused_on_the_api_path_and_other_data_urls_pass(no_pixel_decoding):
    from vlmkit.formats.openai_chat import image_url_part

    bomb = "data:image/png;base64," + base64.b64encode(png_declaring(100_000, 100_000)).decode()
    with pytest.raises(MediaError, match=r"image data URL: the image header declares 100000x100000"):
        image_url_part(bomb)
    fine = "data:image/png;base64," + base64.b64encode(png_declaring(64, 64)).decode()
    assert image_url_part(fine)["image_url"]["url"] == fine
    odd = "data:image/png;base64,@@not base64@@"  # not ours to judge: sent as given, as before
    assert image_url_part(odd)["image_url"]["url"] == odd


# --- files that are not what they say, and 16-bit pictures (issue 22) ---------------------------------------------


@pytest.mark.parametrize("content", [b"just some text\n" * 20, b"%PDF-1.4\n1 0 obj\n", b'{"a": 1}', b""])
def test_a_file_that_is_not_an_image_is_never_sent_as_one(tmp_path, content):
    from vlmkit.formats.openai_chat import image_url_part

    fake = tmp_path / "photo.jpg"  # the name says image, the bytes do not
    fake.write_bytes(content)
    for read in (read_image_file, file_to_data_url, load_image):
        with pytest.raises(MediaError, match=f"{fake}: not an image"):
            read(fake)
    with pytest.raises(MediaError, match="photo.jpg: not an image"):
        image_url_part(str(fake))


def _grey_8bit():
    import numpy as np

    return np.arange(0, 256, dtype=np.uint16).reshape(16, 16)  # every 8-bit value once


@pytest.mark.parametrize("mode", ["I;16", "I", "F"])
def test_a_16_bit_picture_has_the_pixels_of_its_8_bit_copy(tmp_path, mode):
    import numpy as np

    grey = _grey_8bit()
    if mode == "F":
        picture = Image.fromarray((grey / 255.0).astype(np.float32))  # floats in [0, 1]
    else:
        picture = Image.fromarray((grey.astype(np.int64) * 257).astype(np.uint16 if mode == "I;16" else np.int32))
    assert picture.mode == mode
    expected = np.stack([grey.astype(np.uint8)] * 3, axis=-1)  # what the 8-bit copy gives
    assert np.array_equal(np.asarray(to_rgb(picture)), expected)
    if mode == "I;16":  # PNG stores 16-bit greyscale; read back through the local path
        path = tmp_path / "wide.png"
        picture.save(path)
        assert np.array_equal(np.asarray(load_image(path)), expected)
        assert np.asarray(picture.convert("RGB")).max() == 255 and np.asarray(picture.convert("RGB")).min() == 0
