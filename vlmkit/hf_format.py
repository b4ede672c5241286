"""The message format -> a transformers chat-template conversation. The one place that builds that shape.

A transformers conversation is a list of turns ``{"role": ..., "content": [items]}`` whose items are
``{"type": "text", "text": str}``, ``{"type": "image", "image": PIL.Image}`` (or ``{"type": "image", "url": ...}``
for an http(s) URL, which the processor fetches), ``{"type": "video", "video": path}`` and
``{"type": "audio", "audio": path}``. Images given as local paths or data URLs are decoded to RGB PIL images
here, so the processor never guesses at a path. Every role's content is a list (system turns included), the
shape multimodal chat templates iterate over.

A model whose chat template cannot interleave gets `images_first` order per turn: its media in order, then its
texts joined by newlines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PIL import Image

from vlmkit.media import MediaError, b64_to_image, load_image, to_rgb
from vlmkit.message import Part, Turn, images_first, is_url, normalise_conversation

HFItem = dict[str, Any]
HFTurn = dict[str, Any]


def load_image_value(value: str) -> Image.Image | str:
    """A PIL image for a local path or data URL; an http(s) URL is returned as is (the processor fetches it).

    MediaError (naming the path) when the file is missing or not an image.
    """
    if is_url(value):
        return value
    if value.startswith("data:"):
        try:
            return to_rgb(b64_to_image(value))
        except MediaError as exc:
            raise MediaError(f"image data URL: {exc}") from None
    return load_image(value)


def to_hf_item(part: Part, *, load_images: bool = True) -> HFItem:
    """One normalised part as a transformers content item."""
    kind, value = part["type"], part["value"]
    if kind == "text":
        return {"type": "text", "text": value}
    if kind == "image":
        image = load_image_value(value) if load_images else value
        if isinstance(image, str) and is_url(image):
            return {"type": "image", "url": image}
        return {"type": "image", "image": image}
    return {"type": kind, kind: value}  # video / audio: a path or URL, loaded by whoever takes that modality


def to_hf_turn(turn: Turn, *, interleave: bool = True, load_images: bool = True) -> HFTurn:
    parts: Sequence[Part] = turn["content"] if interleave else images_first(turn["content"])
    return {"role": turn["role"], "content": [to_hf_item(p, load_images=load_images) for p in parts]}


def to_hf_conversation(msgs: Any, *, interleave: bool = True, load_images: bool = True) -> list[HFTurn]:
    """A transformers conversation from a message (flat parts -> one user turn) or a list of turns.

    `interleave=False` reorders each turn images-first. `load_images=False` keeps image values as strings
    (for rendering a template without decoding pixels).
    """
    turns = normalise_conversation(msgs)
    return [to_hf_turn(t, interleave=interleave, load_images=load_images) for t in turns]

