"""Loading a transformers processor with or without torchvision.

Processors that declare a video processor (Qwen2-VL, Qwen2.5-VL, SmolVLM, LLaVA-OneVision, InternVL, ...) refuse
to construct without torchvision, because their video processors need it. For images only, the kit builds an
*image-only* subclass of the same processor class: its `__init__` takes no video processor, and a stand-in sits
where the video processor would be, so that a video that still reaches the processor raises
`UnsupportedInputError` instead of being dropped silently (the plain processor would skip the pixels and leave a
lone video placeholder token). The model class, not this module, declares which modalities a loaded checkpoint
takes (`processor_takes_video`).

torch/transformers are imported inside the functions: importing this module is cheap.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any

from vlmkit.core.model_calls import UnsupportedInputError

_SUB_PROCESSORS = ("image_processor", "tokenizer", "video_processor")
NO_TORCHVISION = "video input needs torchvision, which is not installed (the processor was loaded for images only)"


def torchvision_available() -> bool:
    from transformers.utils import is_torchvision_available

    return bool(is_torchvision_available())


class NoVideoProcessor:
    """Stands where a processor keeps its video processor when torchvision is missing: any use fails loudly.

    `num_frames`/`fps` are None because some processors read them while rendering a chat template (SmolVLM).
    """

    num_frames = None
    fps = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UnsupportedInputError(NO_TORCHVISION)

    def __repr__(self) -> str:
        return "NoVideoProcessor()"


@lru_cache(maxsize=None)
def image_only_class(cls: type) -> type:
    """A subclass of processor class `cls` whose `__init__` takes no video processor (same class name).

    Keyword arguments are passed on to `cls.__init__` (e.g. SmolVLM's `image_seq_len`); the parent class then
    hands `None` for the video processor to `ProcessorMixin`, which only keeps the sub-processors named in this
    subclass's signature (image processor and tokenizer).
    """

    def __init__(self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kwargs: Any) -> None:
        cls.__init__(
            self,
            image_processor=image_processor,
            tokenizer=tokenizer,
            video_processor=None,
            chat_template=chat_template,
            **kwargs,
        )
        self.video_processor = NoVideoProcessor()

    # The parent's signature without the video processor: `to_dict`/`save_pretrained` keep exactly the settings
    # named there (SmolVLM's image_seq_len would otherwise be lost), and `get_attributes` reads it too.
    parent = inspect.signature(cls.__init__)
    __init__.__signature__ = parent.replace(  # type: ignore[attr-defined]
        parameters=[p for name, p in parent.parameters.items() if name != "video_processor"]
    )
    namespace = {"__init__": __init__, "__module__": cls.__module__, "__qualname__": cls.__qualname__, "image_only": True}
    return type(cls.__name__, (cls,), namespace)


def declares_video_processor(cls: type) -> bool:
    """True for processor classes whose constructor takes a video processor (they need torchvision)."""
    return "video_processor" in inspect.signature(cls.__init__).parameters


def is_image_only(processor: Any) -> bool:
    return bool(getattr(type(processor), "image_only", False))


def processor_takes_video(processor: Any) -> bool:
    """True when the processor holds a real video processor (not absent, not the stand-in)."""
    video = getattr(processor, "video_processor", None)
    return video is not None and not isinstance(video, NoVideoProcessor)


def processor_class_for(path: str, **hub_kwargs: Any) -> type | None:
    """The processor class a checkpoint names (processor_config.json, else its config's model type); None if none."""
    from transformers import AutoConfig, ProcessorMixin
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES, processor_class_from_name

    name = None
    try:
        processor_dict, _ = ProcessorMixin.get_processor_dict(path, **hub_kwargs)
        name = processor_dict.get("processor_class")
    except (OSError, ValueError):
        pass
    if not name:
        try:
            model_type = AutoConfig.from_pretrained(path, **hub_kwargs).model_type
        except (OSError, ValueError):
            return None
        name = PROCESSOR_MAPPING_NAMES.get(model_type)
    return processor_class_from_name(name) if isinstance(name, str) else None


def build_image_only(cls: type, image_processor: Any, tokenizer: Any, chat_template: Any = None, **kwargs: Any) -> Any:
    """An image-only instance of processor class `cls` from its parts; kwargs must be named in `cls.__init__`."""
    return image_only_class(cls)(image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template, **kwargs)


def load_image_only(cls: type, path: str, **hub_kwargs: Any) -> Any:
    """Load the image processor, tokenizer and processor settings of a checkpoint into an image-only processor."""
    from transformers import AutoImageProcessor, AutoTokenizer

    processor_dict, _ = cls.get_processor_dict(path, **hub_kwargs)
    accepted = set(inspect.signature(cls.__init__).parameters) - set(_SUB_PROCESSORS) - {"self", "chat_template"}
    settings = {k: v for k, v in processor_dict.items() if k in accepted}
    image_processor = AutoImageProcessor.from_pretrained(path, **hub_kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **hub_kwargs)
    return build_image_only(cls, image_processor, tokenizer, processor_dict.get("chat_template"), **settings)


def load_processor(path: str, **hub_kwargs: Any) -> Any:
    """`AutoProcessor.from_pretrained(path)`, or an image-only processor where that cannot work.

    Image-only: without torchvision for a processor class that declares a video processor; with torchvision too
    when such a checkpoint cannot build its video processor (e.g. it ships no video processor config).
    """
    from transformers import AutoProcessor

    cls = processor_class_for(path, **hub_kwargs)
    takes_video = cls is not None and declares_video_processor(cls)
    if takes_video and not torchvision_available():
        return load_image_only(cls, path, **hub_kwargs)  # type: ignore[arg-type]
    try:
        return AutoProcessor.from_pretrained(path, **hub_kwargs)
    except (OSError, ValueError, TypeError, ImportError):
        if not takes_video:
            raise
        return load_image_only(cls, path, **hub_kwargs)  # type: ignore[arg-type]


def placeholder_tokens(processor: Any) -> tuple[str, ...]:
    """The tokens a processor expands into image/video/audio slots (`image_token`, `video_token`, `boi_token`, ...,
    its attributes named `*_token` holding text), longest first, so that text quoting one can be neutralised."""
    found = set()
    for name in dir(processor):
        if name.endswith("_token") and not name.startswith("_"):
            try:
                value = getattr(processor, name)
            except Exception:  # noqa: BLE001 - a property of some processors raises when a part is missing
                continue
            if isinstance(value, str) and len(value) > 1:
                found.add(value)
    return tuple(sorted(found, key=len, reverse=True))
