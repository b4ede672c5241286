"""The generic local transformers VLM: AutoProcessor + AutoModelForImageTextToText + the processor's chat template.

One path serves most families (Qwen2-VL, Qwen2.5-VL, LLaVA, LLaVA-OneVision, SmolVLM/Idefics3, InternVL-hf,
Gemma 3, ...). Batches are one left-padded `generate` call; decoding is greedy unless `temperature > 0`.

Capabilities are declared per loaded checkpoint (instance attributes over the class ones):
- image: always.
- video: only when the processor really holds a video processor (torchvision installed) and the model's
  forward takes `pixel_values_videos`. Without torchvision the processor is loaded image-only
  (`vlm.hf.processors`) and a video part fails with `UnsupportedInputError` before anything runs.
- audio: not on this path (a message with audio fails with `UnsupportedInputError`).
- interleave: probed from the chat template (does an image between two texts render between them?); a
  template that puts images first gets messages reordered with `vlmkit.message.images_first`.

torch and transformers are imported when a model is built, not when this module is imported.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import Any

from vlm.base import BaseModel
from vlm.hf.loading import resolve_model_path
from vlm.hf.processors import NO_TORCHVISION, is_image_only, load_processor, processor_takes_video
from vlmkit.generation import Generation, UnsupportedInputError, Usage
from vlmkit.hf_format import to_hf_conversation
from vlmkit.message import Turn, modalities

_DTYPES = ("auto", "bfloat16", "float16", "float32")
_PROBE_A, _PROBE_B = "\u27e6probe-a\u27e7", "\u27e6probe-b\u27e7"


class HFVisionModel(BaseModel):
    """A local vision-language model loaded with transformers from a folder or the Hugging Face cache.

    model_path: a model folder or a Hugging Face repo id (looked up in the hub cache, never downloaded).
    dtype: "auto" (bfloat16 on a GPU that has it, float16 on other GPUs, float32 on CPU) or a torch dtype name.
    device: None (cuda when available, else cpu), "cpu", "cuda", "cuda:N", or "auto" (spread over GPUs).
    max_new_tokens, temperature: greedy decoding when temperature is 0, sampling otherwise.
    batch_size: the most messages in one padded `generate`; `generate_batch` splits longer lists.
    generate_kwargs: passed on to `model.generate` (e.g. top_p, repetition_penalty).
    """

    modalities = frozenset({"text", "image"})
    interleave = True

    def __init__(
        self,
        model_path: str,
        *,
        dtype: str = "auto",
        device: str | None = None,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        batch_size: int = 1,
        **generate_kwargs: Any,
    ) -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}; got {dtype!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1; got {batch_size}")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1; got {max_new_tokens}")
        self.model_path = model_path
        self.local_path = resolve_model_path(model_path)
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.batch_size = batch_size
        self.generate_kwargs = dict(generate_kwargs)
        self.device, self.torch_dtype = _pick_device_dtype(device, dtype)
        self.dtype = dtype
        self.processor = self._load_processor()
        self.model = self._load_model()
        self.modalities = frozenset({"text", "image"} | ({"video"} if self._takes_video() else set()))
        self.interleave = template_interleaves(self.processor)

    # ---------------------------------------------------------------------------------------------- loading

    def _load_processor(self) -> Any:
        from transformers import PreTrainedTokenizerBase

        processor = load_processor(str(self.local_path), local_files_only=True)
        if isinstance(processor, PreTrainedTokenizerBase):
            raise ValueError(f"{self.model_path}: has a tokenizer but no multimodal processor; not a vision-language model")
        tokenizer = processor.tokenizer
        tokenizer.padding_side = "left"  # batched generation appends new tokens on the right
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        if getattr(processor, "chat_template", None) is None:
            if not getattr(tokenizer, "chat_template", None):
                raise ValueError(f"{self.model_path}: neither the processor nor the tokenizer has a chat template")
            processor.chat_template = tokenizer.chat_template
        return processor

    def _load_model(self) -> Any:
        """AutoModelForImageTextToText; AutoModelForMultimodalLM for the few families registered only there."""
        import transformers

        placement = {"device_map": "auto"} if self.device == "auto" else {}
        tried = []
        for auto_name in ("AutoModelForImageTextToText", "AutoModelForMultimodalLM"):
            auto = getattr(transformers, auto_name, None)
            if auto is None:
                continue
            try:
                model = auto.from_pretrained(
                    str(self.local_path), dtype=self.torch_dtype, local_files_only=True, **placement
                )
            except ValueError as exc:  # "Unrecognized configuration class ... for this kind of AutoModel"
                if "Unrecognized configuration class" not in str(exc):
                    raise
                tried.append(auto_name)
                continue
            return (model if placement else model.to(self.device)).eval()
        raise ValueError(f"{self.model_path}: not an image-text-to-text model (no {' or '.join(tried)} class for it)")

    @property
    def input_device(self) -> Any:
        """Where inputs go: the chosen device, or the first device of a model spread with device="auto"."""
        return self.model.device if self.device == "auto" else self.device

    def _takes_video(self) -> bool:
        forward = inspect.signature(self.model.forward).parameters
        return processor_takes_video(self.processor) and "pixel_values_videos" in forward

    def check_supported(self, turns: Sequence[Turn]) -> None:
        """As BaseModel's, with the reason when video or audio cannot reach this model."""
        present = modalities(turns)
        if "video" in present and "video" not in self.modalities:
            why = NO_TORCHVISION if is_image_only(self.processor) else "this model or its processor takes no video"
            raise UnsupportedInputError(f"{self.model_path}: {why}")
        if "audio" in present:
            raise UnsupportedInputError(f"{self.model_path}: audio input is not supported by the local transformers path")
        super().check_supported(turns)

    # ---------------------------------------------------------------------------------------------- generation

    def generate_full(
        self, msgs: Sequence[Any], dataset: str | None = None, params: dict[str, Any] | None = None
    ) -> Generation:
        result = self.generate_batch([msgs], dataset, [params])[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def generate_batch(
        self,
        batch: Sequence[Sequence[Any]],
        dataset: str | None = None,
        params: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[Generation | BaseException]:
        """One left-padded `generate` per `batch_size` messages that share their parameters; a message that fails
        gets its exception."""
        per_message = list(params) if params is not None else [None] * len(batch)
        results: list[Generation | BaseException | None] = [None] * len(batch)
        groups: dict[str, list[tuple[int, list[dict[str, Any]]]]] = {}
        options: dict[str, dict[str, Any]] = {}
        for i, (msgs, message_params) in enumerate(zip(batch, per_message)):
            try:
                key = json.dumps(message_params or {}, sort_keys=True, default=str)
                if key not in options:
                    options[key] = self._generation_options(message_params)
                groups.setdefault(key, []).append((i, self._conversation(self.prepare(msgs))))
            except Exception as exc:  # a bad sample fails alone
                results[i] = exc
        for key, ready in groups.items():
            for start in range(0, len(ready), self.batch_size):
                chunk = ready[start : start + self.batch_size]
                for (i, _), result in zip(chunk, self._run_chunk([conv for _, conv in chunk], options[key])):
                    results[i] = result
        return results  # type: ignore[return-value]

    def _conversation(self, turns: list[Turn]) -> list[dict[str, Any]]:
        return to_hf_conversation(turns, interleave=self.interleave)

    def _run_chunk(
        self, conversations: list[list[dict[str, Any]]], options: dict[str, Any]
    ) -> list[Generation | BaseException]:
        try:
            return self._generate(conversations, options)  # type: ignore[return-value]
        except Exception as exc:
            if len(conversations) == 1:
                return [exc]
        # The padded batch failed as a whole: run the samples one by one so only the bad ones fail.
        out: list[Generation | BaseException] = []
        for conversation in conversations:
            try:
                out.extend(self._generate([conversation], options))
            except Exception as exc:
                out.append(exc)
        return out

    def _generate(self, conversations: list[list[dict[str, Any]]], options: dict[str, Any]) -> list[Generation]:
        import torch

        inputs = self.processor.apply_chat_template(
            conversations,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs={"padding": True},
        )
        inputs = inputs.to(self.input_device, dtype=self.torch_dtype)
        options = dict(options)
        if "seed" in options:
            torch.manual_seed(options.pop("seed"))
        with torch.inference_mode():
            output = self.model.generate(**inputs, **options)
        prompt_len = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_len:]
        texts = self.processor.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        input_counts = inputs["attention_mask"].sum(dim=1).tolist()
        eos_ids = self._eos_ids()
        return [
            Generation(
                text=text.strip(),
                usage=Usage(input_tokens=int(n_in), output_tokens=_count_new_tokens(row.tolist(), eos_ids)),
            )
            for text, n_in, row in zip(texts, input_counts, new_tokens)
        ]

    def _generation_options(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """transformers generate() arguments: the model's settings, then per-request params mapped onto them."""
        params = dict(params or {})
        unsupported = sorted({"presence_penalty", "frequency_penalty"} & set(params))
        if unsupported:
            raise UnsupportedInputError(f"{self.model_path}: transformers generate has no {', '.join(unsupported)}")
        max_new = int(params.pop("max_tokens", self.max_new_tokens))
        temperature = float(params.pop("temperature", self.temperature))
        options: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self.processor.tokenizer.pad_token_id}
        if temperature > 0:
            options.update(do_sample=True, temperature=temperature)
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        options.update(self.generate_kwargs)
        if params.pop("ignore_eos", False):
            options["min_new_tokens"] = max_new
        stop = params.pop("stop", None)
        if stop:
            options.update(stop_strings=[stop] if isinstance(stop, str) else list(stop), tokenizer=self.processor.tokenizer)
        if temperature > 0:
            options.update({k: params.pop(k) for k in ("top_p", "top_k") if k in params})
        else:
            params.pop("top_p", None), params.pop("top_k", None)  # meaningless under greedy decoding
        options.update(params)  # seed, repetition_penalty
        return options

    def _eos_ids(self) -> set[int]:
        """The ids generation stops at: an eos_token_id passed in generate_kwargs, else the generation config's."""
        value = (
            self.generate_kwargs.get("eos_token_id")
            or self.model.generation_config.eos_token_id
            or self.processor.tokenizer.eos_token_id
        )
        if value is None:
            return set()
        return {int(value)} if isinstance(value, int) else {int(v) for v in value}

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "model_path": self.model_path,
            "local_path": str(self.local_path),
            "model_class": type(self.model).__name__,
            "processor_class": type(self.processor).__name__,
            "image_only_processor": is_image_only(self.processor),
            "dtype": self.dtype,
            "torch_dtype": str(self.torch_dtype).removeprefix("torch."),
            "device": self.device,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "do_sample": self.temperature > 0,
            "batch_size": self.batch_size,
            "generate_kwargs": dict(self.generate_kwargs),
            "modalities": sorted(self.modalities),
            "interleave": self.interleave,
        }


def _pick_device_dtype(device: str | None, dtype: str) -> tuple[str, Any]:
    """cuda with bfloat16 when a GPU is there, else cpu with float32; explicit choices win.

    device="auto" spreads the model over the visible GPUs (transformers' device_map="auto", needs accelerate).
    """
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        on_gpu = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
        bf16 = on_gpu and torch.cuda.is_bf16_supported()
        return device, (torch.bfloat16 if bf16 else torch.float16 if on_gpu else torch.float32)
    return device, getattr(torch, dtype)


def _count_new_tokens(row: list[int], eos_ids: set[int]) -> int:
    """Generated tokens up to and including the first end-of-sequence token (the rest is padding)."""
    for position, token in enumerate(row):
        if token in eos_ids:
            return position + 1
    return len(row)


def template_interleaves(processor: Any) -> bool:
    """True when the chat template renders an image placed between two texts between them.

    Renders [text A, image, text B] and [text A, text B]; an interleaving template puts something different
    between A and B in the two renderings. A template that cannot render the probe counts as not interleaving
    (images first is always safe).
    """
    from PIL import Image

    image = Image.new("RGB", (2, 2))

    def between(content: list[dict[str, Any]]) -> str | None:
        text = processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )
        a, b = text.find(_PROBE_A), text.find(_PROBE_B)
        return text[a + len(_PROBE_A) : b] if 0 <= a < b else None

    a, b = {"type": "text", "text": _PROBE_A}, {"type": "text", "text": _PROBE_B}
    try:
        with_image = between([a, {"type": "image", "image": image}, b])
        without = between([a, b])
    except Exception:
        return False
    return with_image is not None and without is not None and with_image != without
