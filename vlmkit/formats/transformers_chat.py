"""The message format -> a transformers chat-template conversation. The one place that builds that shape.

A transformers conversation is a list of turns ``{"role": ..., "content": [items]}`` whose items are
``{"type": "text", "text": str}``, ``{"type": "image", "image": PIL.Image}`` (or ``{"type": "image", "url": ...}``
for an http(s) URL, which the processor fetches), ``{"type": "video", "video": path}`` and
``{"type": "audio", "audio": path}``. Images given as local paths or data URLs are decoded to RGB PIL images
here, so the processor never guesses at a path. Every role's content is a list (system turns included), the
shape multimodal chat templates iterate over.

A model whose chat template cannot interleave gets `images_first` order per turn: its media in order, then its
texts joined by newlines.

Video and audio parts stay paths unless the caller says how to load them: `video_items` maps a video value to the
items it becomes (one native ``{"type": "video", "video": frames}`` item, or one image item per sampled frame for
a model that takes frames as images); `audio_item` maps an audio value to one item (a waveform array for models
whose processor takes audio). Both keep the part's position in the turn.

A conversation that ends with a prefill (an assistant turn, `vlmkit.core.message`) keeps it as its last turn; render
it with `template_flags(conversation)` (``continue_final_message=True, add_generation_prompt=False``) so the template
leaves that turn open and the model continues it. Conversations rendered in one padded call must agree on it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from PIL import Image

from vlmkit.core.media import MediaError, b64_to_image, load_image, to_rgb
from vlmkit.core.message import Part, Turn, images_first, is_url, normalise_conversation, prefill_text

HFItem = dict[str, Any]
HFTurn = dict[str, Any]
VideoItems = Callable[[str], list[HFItem]]
AudioItem = Callable[[str], HFItem]


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


NEUTRAL_JOIN = "\u200b"  # a zero-width space put inside a placeholder token that stands in a text part


def neutralise(text: str, tokens: Collection[str]) -> str:
    """The text with each of a processor's placeholder tokens (`<image>`, `<|image_pad|>`, ...) broken by a zero-width
    space after its first character, so that a question quoting `<image>` stays text: the processor never takes it
    for an image slot (one more slot than images fails the row, or shifts the pictures)."""
    for token in tokens:
        if token and token in text:
            text = text.replace(token, token[0] + NEUTRAL_JOIN + token[1:])
    return text


def to_hf_item(part: Part, *, load_images: bool = True, placeholders: Collection[str] = ()) -> HFItem:
    """One normalised part as a transformers content item (text with `placeholders` neutralised)."""
    kind, value = part["type"], part["value"]
    if kind == "text":
        return {"type": "text", "text": neutralise(value, placeholders)}
    if kind == "image":
        image = load_image_value(value) if load_images else value
        if isinstance(image, str) and is_url(image):
            return {"type": "image", "url": image}
        return {"type": "image", "image": image}
    return {"type": kind, kind: value}  # video / audio: a path or URL, loaded by whoever takes that modality


def to_hf_items(
    part: Part,
    *,
    load_images: bool = True,
    video_items: VideoItems | None = None,
    audio_item: AudioItem | None = None,
    placeholders: Collection[str] = (),
) -> list[HFItem]:
    """The transformers content items one part becomes (several for a video sent as frames)."""
    if part["type"] == "video" and video_items is not None:
        return list(video_items(part["value"]))
    if part["type"] == "audio" and audio_item is not None:
        return [audio_item(part["value"])]
    return [to_hf_item(part, load_images=load_images, placeholders=placeholders)]


def to_hf_turn(
    turn: Turn,
    *,
    interleave: bool = True,
    load_images: bool = True,
    video_items: VideoItems | None = None,
    audio_item: AudioItem | None = None,
    placeholders: Collection[str] = (),
) -> HFTurn:
    parts: Sequence[Part] = turn["content"] if interleave else images_first(turn["content"])
    items = [
        item
        for p in parts
        for item in to_hf_items(p, load_images=load_images, video_items=video_items, audio_item=audio_item,
                                placeholders=placeholders)
    ]
    return {"role": turn["role"], "content": items}


def to_hf_conversation(
    msgs: Any,
    *,
    interleave: bool = True,
    load_images: bool = True,
    video_items: VideoItems | None = None,
    audio_item: AudioItem | None = None,
    placeholders: Collection[str] = (),
) -> list[HFTurn]:
    """A transformers conversation from a message (flat parts -> one user turn) or a list of turns.

    `interleave=False` reorders each turn images-first. `load_images=False` keeps image values as strings
    (for rendering a template without decoding pixels). `video_items` / `audio_item`: see the module docstring.
    `placeholders`: the processor's placeholder tokens, neutralised in text parts (`neutralise`).
    """
    turns = normalise_conversation(msgs)
    return [
        to_hf_turn(t, interleave=interleave, load_images=load_images, video_items=video_items, audio_item=audio_item,
                   placeholders=placeholders)
        for t in turns
    ]


def template_flags(conversations: Sequence[Sequence[HFTurn]]) -> dict[str, bool]:
    """`apply_chat_template`'s `add_generation_prompt` / `continue_final_message` for conversations rendered together
    (transformers conversations, or OpenAI messages for vLLM's `LLM.chat`, which takes the same two flags): continue
    the final message when each ends with a prefill, add the generation prompt when none does. ValueError for a mix
    (one call renders every conversation of a batch the same way: group them first)."""
    continues = {prefill_text(c) is not None for c in conversations}
    if len(continues) > 1:
        raise ValueError("conversations rendered together must all end with a prefill (assistant turn) or none")
    prefill = continues == {True}
    return {"add_generation_prompt": not prefill, "continue_final_message": prefill}
