"""Images as base64, bytes, files and PIL objects.

Decoding keeps the original bytes: a JPEG in a TSV is written to disk as that same JPEG, never re-encoded.

Decompression bombs: every image file a model receives is opened through `read_image_file` (the API path's
`file_to_data_url`, the local path's `load_image`), and every image decoded from bytes through `bytes_to_image`;
both first read the size the header declares (no pixel is decoded) and refuse, as a MediaError naming the file and
the size, an image with more pixels than Pillow's limit `PIL.Image.MAX_IMAGE_PIXELS`. Pillow itself only warns
between one and two times that limit, and the API path never decoded the image at all, so such a file was sent on.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
from pathlib import Path

from PIL import Image

# Magic numbers of the image formats found in benchmark TSVs.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xd8\xff", ".jpg"),
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"GIF87a", ".gif"),
    (b"GIF89a", ".gif"),
    (b"BM", ".bmp"),
    (b"II*\x00", ".tif"),
    (b"MM\x00*", ".tif"),
)


class MediaError(ValueError):
    """Bytes that are not a decodable image (or a base64 string that is not base64), or an image refused."""


def declared_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) as the image's header declares it, read without decoding any pixel; None when no Pillow
    plugin recognises the bytes.

    Pillow's `Image.open` is lazy too, but it raises (beyond twice the limit) or warns (beyond the limit) before
    the size can be read; the plugin's own opener (what `Image.open` calls) reads the header alone.
    """
    Image.init()
    prefix = data[:16]
    for fmt in Image.ID:
        factory, accept = Image.OPEN[fmt]
        try:
            accepted = accept(prefix) if accept is not None else True
            if not accepted or isinstance(accepted, str):  # a str is Pillow's "looks like it, but unsupported"
                continue
            with factory(io.BytesIO(data), "") as image:
                return image.size
        except Exception:  # noqa: BLE001 - a plugin that does not recognise the bytes raises all sorts
            continue
    return None


def refuse_decompression_bomb(data: bytes, name: str | None = None) -> None:
    """MediaError naming `name` (a file) and the declared size when the header declares more pixels than Pillow
    allows."""
    limit = Image.MAX_IMAGE_PIXELS
    size = declared_size(data) if limit is not None else None
    if size is not None:
        _refuse_size(size, name)


def _refuse_size(size: tuple[int, int], name: str | None) -> None:
    limit = Image.MAX_IMAGE_PIXELS
    if limit is None:
        return
    width, height = size
    pixels = max(1, width) * max(1, height)
    if pixels > limit:  # type: ignore[operator]
        where = f"{name}: " if name else ""
        raise MediaError(
            f"{where}the image header declares {width}x{height} pixels ({pixels:,}), more than Pillow's limit of "
            f"{limit:,} (PIL.Image.MAX_IMAGE_PIXELS); refused as a possible decompression bomb"
        )


def read_image_file(path: str | Path) -> bytes:
    """The bytes of an image file, checked by its header alone (no pixel decoded): MediaError naming the file when
    it cannot be read, is not an image at all (a text file, a PDF: whatever its name says, it is never sent as one),
    or declares more pixels than Pillow allows. The one way vlmkit opens an image file for a model."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise MediaError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    size = declared_size(data)
    if size is None:
        raise MediaError(f"{path}: not an image (its first bytes {data[:8]!r} are no image format Pillow reads)")
    _refuse_size(size, str(path))
    return data


def image_extension(data: bytes) -> str:
    """The file extension for image bytes, judged by their signature (".jpg" when unknown)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    for signature, ext in _SIGNATURES:
        if data.startswith(signature):
            return ext
    return ".jpg"


def b64_to_bytes(text: str) -> bytes:
    """Decode base64 (standard alphabet, padding optional, whitespace ignored); MediaError when it is not."""
    cleaned = "".join(text.split())
    if cleaned.startswith("data:"):
        cleaned = cleaned.split(",", 1)[-1]
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MediaError(f"not valid base64 ({exc})") from None


def bytes_to_b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def file_to_b64(path: str | Path) -> str:
    return bytes_to_b64(Path(path).read_bytes())


def to_rgb(image: Image.Image) -> Image.Image:
    """RGB for any mode: transparency (RGBA, LA, P with a transparent index) is composited on white; 16-bit and
    32-bit greyscale (I;16*, I, F) is scaled to 8 bits (Pillow's own convert clips every value above 255 to white)."""
    if image.mode == "RGB":
        return image
    if image.mode.startswith("I") or image.mode == "F":
        return _grey_to_8_bits(image).convert("RGB")
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA"):
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image.convert("RGBA"), mask=image.convert("RGBA").getchannel("A"))
        return background
    return image.convert("RGB")


def _grey_to_8_bits(image: Image.Image) -> Image.Image:
    """An 8-bit greyscale copy of a 16/32-bit integer or float image: integers as 16-bit values (v / 257, so the
    16-bit copy of an 8-bit picture, v * 257, comes back exactly), floats in [0, 1] times 255, other floats as
    16-bit values."""
    import numpy as np

    values = np.asarray(image, dtype=np.float64)
    if image.mode == "F" and values.size and np.nanmax(values) <= 1.0:
        scaled = values * 255.0
    else:
        scaled = values / 257.0
    return Image.fromarray(np.clip(np.rint(np.nan_to_num(scaled)), 0, 255).astype(np.uint8), mode="L")


def bytes_to_image(data: bytes) -> Image.Image:
    """A decoded PIL image; MediaError for bytes that are not an image or declare too many pixels."""
    refuse_decompression_bomb(data)
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # PIL raises several types for bad data
        raise MediaError(f"not a readable image ({exc.__class__.__name__}: {exc})") from None
    return image


def b64_to_image(text: str) -> Image.Image:
    return bytes_to_image(b64_to_bytes(text))


def image_to_b64(image: Image.Image, fmt: str = "JPEG", quality: int = 95) -> str:
    buffer = io.BytesIO()
    if fmt.upper() in ("JPEG", "JPG"):
        to_rgb(image).save(buffer, format="JPEG", quality=quality)
    else:
        image.save(buffer, format=fmt)
    return bytes_to_b64(buffer.getvalue())


def load_image(path: str | Path) -> Image.Image:
    """An RGB PIL image from a file path; MediaError naming the file when it cannot be read or is refused."""
    data = read_image_file(path)
    try:
        return to_rgb(bytes_to_image(data))
    except (OSError, MediaError) as exc:
        raise MediaError(f"{path}: {exc}") from None


def resize_longest_side(image: Image.Image, max_side: int) -> Image.Image:
    """Shrink so that the longer side is at most max_side (never enlarges)."""
    longest = max(image.size)
    if max_side <= 0 or longest <= max_side:
        return image
    scale = max_side / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.BICUBIC)


def file_to_data_url(path: str | Path, max_side: int | None = None) -> str:
    """A data URL for an image file: the original bytes unless it must be shrunk to max_side. MediaError naming
    the file when it cannot be read, is refused (see the module docstring) or, to be shrunk, cannot be decoded."""
    data = read_image_file(path)
    if max_side:
        try:
            image = bytes_to_image(data)
        except MediaError as exc:
            raise MediaError(f"{path}: {exc}") from None
        if max(image.size) > max_side:
            return "data:image/jpeg;base64," + image_to_b64(resize_longest_side(image, max_side))
    mime = mimetypes.types_map.get(image_extension(data), "image/jpeg")
    return f"data:{mime};base64,{bytes_to_b64(data)}"

