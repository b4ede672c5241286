"""Builders of tiny random vision-language models saved to a folder, for tests.

Each `build_tiny_<family>(out_dir) -> out_dir` writes a model, its tokenizer and its processor with
`save_pretrained`, so that `AutoProcessor` / `AutoModelForImageTextToText.from_pretrained(out_dir)` (or the kit's
torchvision-free processor loading) reads them back like a real checkpoint. Weights are random but seeded: the
same call writes the same model. Sizes: language model hidden 64, 2 layers, 4 heads, 2 KV heads; vision tower 32
wide, 2 layers; a byte-level BPE vocabulary of about 400 trained on a small corpus, special tokens first.

Families whose processor declares a video processor need torchvision for it, which is not installed here.
Qwen2-VL, Qwen2.5-VL and Qwen2.5-Omni are saved with the kit's torchvision-free video processor
(`vlm.local.qwen_video`), so processor_config.json holds a `video_processor` section in the Qwen2VLVideoProcessor
format (frames 56x56 .. 112x112 pixels, like the images); SmolVLM, LLaVA-OneVision and InternVL are saved through
the image-only processor of `vlm.local.processors` (no video processor config), and the kit loads them image-only.
LLaVA and Gemma 3 have no video processor and load with plain `AutoProcessor`, which is what `transformers serve`
needs. Qwen2-Audio has a Whisper feature extractor cut to 1 s windows (100 mel frames of 16 bins), so the audio
encoder's `max_source_positions` is 50.

A builder skips the work when `out_dir` already holds a finished build (a marker file is written last).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_SEED = 1234
_MARKER = "tiny_model_build.json"

_CORPUS = (
    "The quick brown fox jumps over the lazy dog. A picture of a red square and a blue circle. "
    "What is shown in the image? Answer with the option letter from the given choices directly. "
    "Describe the image in one sentence. Is there a cat in the picture? Yes or no. "
    "The first image shows a green triangle; the second image shows a yellow star. "
    "Question: how many objects are there? Options: A. one B. two C. three D. four. "
    "user assistant system You are a helpful assistant. Compare the two images. "
    "0 1 2 3 4 5 6 7 8 9 ten eleven twelve hundred thousand"
)


def _train_tokenizer(special_tokens: Sequence[str], vocab_size: int = 400) -> Any:
    """A byte-level BPE `tokenizers.Tokenizer` with the special tokens first (ids 0..n-1)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size + len(special_tokens),
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([_CORPUS] * 4, trainer=trainer)
    return tok


def _fast_tokenizer(
    special_tokens: Sequence[str],
    *,
    bos: str | None,
    eos: str,
    pad: str,
    unk: str | None = None,
    chat_template: str,
    extra: dict[str, str] | None = None,
) -> Any:
    """A `PreTrainedTokenizerFast` wrapping a freshly trained BPE; `extra` names model tokens (image_token=...)."""
    from transformers import PreTrainedTokenizerFast

    named = {bos, eos, pad, unk} | set((extra or {}).values())
    additional = [t for t in special_tokens if t not in named]
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_train_tokenizer(special_tokens),
        bos_token=bos,
        eos_token=eos,
        pad_token=pad,
        unk_token=unk,
        additional_special_tokens=additional or None,
        extra_special_tokens=extra or {},
        chat_template=chat_template,
        model_max_length=4096,
    )
    return tokenizer


def _lm_kwargs(vocab_size: int, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    )
    kwargs.update(overrides)
    return kwargs


def _finished(out_dir: Path) -> bool:
    return (out_dir / _MARKER).is_file()


def _save(out_dir: Path, model_cls: Callable[[Any], Any], config: Any, processor: Any, family: str) -> Path:
    """Seed, build the model from config, save model + processor, write the marker last."""
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(_SEED)
    model = model_cls(config).eval()
    model.generation_config.pad_token_id = config.text_config.pad_token_id if hasattr(config, "text_config") else None
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    (out_dir / _MARKER).write_text(json.dumps({"family": family, "seed": _SEED}))
    return out_dir


# --------------------------------------------------------------------------------------------------- LLaVA

_LLAVA_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] + ' ' }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'image' %}{{ '<image>\n' }}{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] + ' ' }}{% endfor %}"
    "{% endif %}"
    "{% if message['role'] == 'assistant' %}{{ '</s>' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)


def build_tiny_llava(out_dir: Path) -> Path:
    """llava-hf style LLaVA-1.5: CLIP vision tower (28 px, patch 14) + Llama; images-first chat template."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    specials = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
    tokenizer = _fast_tokenizer(
        specials, bos="<s>", eos="</s>", pad="<pad>", unk="<unk>", chat_template=_LLAVA_TEMPLATE,
        extra={"image_token": "<image>"},
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}, do_center_crop=True
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=_LLAVA_TEMPLATE,
        image_token="<image>",
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            image_size=28, patch_size=14, projection_dim=32,
        ),
        text_config=LlamaConfig(**_lm_kwargs(
            len(tokenizer), bos_token_id=ids["<s>"], eos_token_id=ids["</s>"], pad_token_id=ids["<pad>"],
        )),
        image_token_index=ids["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        pad_token_id=ids["<pad>"],
    )
    return _save(out_dir, LlavaForConditionalGeneration, config, processor, "llava")


# --------------------------------------------------------------------------------------------------- Qwen2-VL / Qwen2.5-VL

_QWEN_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
    "<|video_pad|>",
]

_QWEN_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{% elif part['type'] == 'video' %}{{ '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _qwen_parts() -> tuple[Any, dict[str, int], Any]:
    """Tokenizer, its special ids, and the image processor shared by Qwen2-VL and Qwen2.5-VL."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tokenizer = _fast_tokenizer(
        _QWEN_SPECIALS, bos=None, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_QWEN_TEMPLATE,
        extra={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"},
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in _QWEN_SPECIALS}
    # `size` is in pixels: images become 56x56 .. 112x112, sides multiples of 28 (4..16 patches, 1..4 tokens).
    image_processor = Qwen2VLImageProcessorPil(size={"shortest_edge": 56 * 56, "longest_edge": 112 * 112})
    return tokenizer, ids, image_processor


def _qwen_text_kwargs(ids: dict[str, int], vocab_size: int) -> dict[str, Any]:
    # head_dim 16: the three mrope sections must sum to head_dim / 2.
    return _lm_kwargs(
        vocab_size, bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
    )


def _qwen_video_processor() -> Any:
    """The kit's torchvision-free Qwen video processor with the tiny image sizes (saved in Qwen2VLVideoProcessor
    format)."""
    from vlm.local.qwen_video import video_processor_class

    return video_processor_class()(size={"shortest_edge": 56 * 56, "longest_edge": 112 * 112})


def _qwen_processor(processor_cls: type, **parts: Any) -> Any:
    from vlm.local.qwen_video import with_torchvision_free_video

    return with_torchvision_free_video(processor_cls)(video_processor=_qwen_video_processor(), **parts)


def _image_only_processor(processor_cls: type, image_processor: Any, tokenizer: Any, **kwargs: Any) -> Any:
    """The processor as the kit loads it without torchvision (and as `save_pretrained` writes it)."""
    from vlm.local.processors import build_image_only

    return build_image_only(processor_cls, image_processor, tokenizer, **kwargs)


def build_tiny_qwen2_vl(out_dir: Path) -> Path:
    """Qwen2-VL: interleaving chat template, dynamic-resolution vision tower (patch 14, merge 2) + Qwen2 LM."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    tokenizer, ids, image_processor = _qwen_parts()
    processor = _qwen_processor(
        Qwen2VLProcessor, image_processor=image_processor, tokenizer=tokenizer, chat_template=_QWEN_TEMPLATE
    )
    config = Qwen2VLConfig(
        text_config=_qwen_text_kwargs(ids, len(tokenizer)),
        vision_config=dict(
            depth=2, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=2, patch_size=14,
            spatial_merge_size=2, temporal_patch_size=2,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return _save(out_dir, Qwen2VLForConditionalGeneration, config, processor, "qwen2_vl")


def build_tiny_qwen2_5_vl(out_dir: Path) -> Path:
    """Qwen2.5-VL: as Qwen2-VL with the windowed-attention vision tower."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor

    tokenizer, ids, image_processor = _qwen_parts()
    processor = _qwen_processor(
        Qwen2_5_VLProcessor, image_processor=image_processor, tokenizer=tokenizer, chat_template=_QWEN_TEMPLATE
    )
    config = Qwen2_5_VLConfig(
        text_config=_qwen_text_kwargs(ids, len(tokenizer)),
        vision_config=dict(
            depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64, patch_size=14,
            spatial_merge_size=2, temporal_patch_size=2, window_size=56, fullatt_block_indexes=[1],
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return _save(out_dir, Qwen2_5_VLForConditionalGeneration, config, processor, "qwen2_5_vl")


# --------------------------------------------------------------------------------------------------- SmolVLM

_SMOLVLM_TEMPLATE = (
    "<|im_start|>"
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}"
    "{% if message['content'] is string %}{{ ': ' + message['content'] }}{% else %}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% elif part['type'] == 'image' %}{{ '<image>' }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<end_of_utterance>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def build_tiny_smolvlm(out_dir: Path) -> Path:
    """SmolVLM: Idefics3-style image splitting (32 px tiles, 4 tokens each after pixel shuffle) + Llama LM."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMProcessor
    from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil

    grid = [f"<row_{r}_col_{c}>" for r in range(1, 5) for c in range(1, 5)]
    specials = [
        "<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>",
        "<global-img>", *grid,
    ]
    tokenizer = _fast_tokenizer(
        specials, bos="<|im_start|>", eos="<end_of_utterance>", pad="<|endoftext|>", chat_template=_SMOLVLM_TEMPLATE,
        extra={
            "image_token": "<image>", "fake_image_token": "<fake_token_around_image>",
            "global_image_token": "<global-img>", "end_of_utterance_token": "<end_of_utterance>",
        },
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    image_processor = SmolVLMImageProcessorPil(
        size={"longest_edge": 64}, max_image_size={"longest_edge": 32}, do_image_splitting=True
    )
    # image_seq_len = (image_size / patch_size)^2 / scale_factor^2 = (32 / 8)^2 / 4 = 4
    processor = _image_only_processor(
        SmolVLMProcessor, image_processor, tokenizer, chat_template=_SMOLVLM_TEMPLATE, image_seq_len=4
    )
    config = SmolVLMConfig(
        vision_config=dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=32,
            patch_size=8,
        ),
        text_config=dict(model_type="llama", **_lm_kwargs(
            len(tokenizer), bos_token_id=ids["<|im_start|>"], eos_token_id=ids["<end_of_utterance>"],
            pad_token_id=ids["<|endoftext|>"],
        )),
        scale_factor=2,
        image_token_id=ids["<image>"],
    )
    return _save(out_dir, SmolVLMForConditionalGeneration, config, processor, "smolvlm")


# --------------------------------------------------------------------------------------------------- LLaVA-OneVision

_OV_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + ' ' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'image' %}{{ '<image>\n' }}{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'video' %}{{ '<video>\n' }}{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}"
    "{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_llava_onevision(out_dir: Path) -> Path:
    """LLaVA-OneVision: SigLIP tower (28 px tiles, anyres grid) + Qwen2 LM; images-first chat template."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration, LlavaOnevisionProcessor
    from transformers.models.llava_onevision.image_processing_pil_llava_onevision import (
        LlavaOnevisionImageProcessorPil,
    )

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tokenizer = _fast_tokenizer(
        specials, bos=None, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_OV_TEMPLATE,
        extra={"image_token": "<image>", "video_token": "<video>"},
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    pinpoints = [[28, 28], [28, 56], [56, 28], [56, 56]]
    image_processor = LlavaOnevisionImageProcessorPil(
        size={"height": 28, "width": 28}, image_grid_pinpoints=pinpoints, do_pad=True
    )
    processor = _image_only_processor(
        LlavaOnevisionProcessor, image_processor, tokenizer, chat_template=_OV_TEMPLATE, num_image_tokens=4,
        vision_feature_select_strategy="full", vision_aspect_ratio="anyres_max_9",
    )
    config = LlavaOnevisionConfig(
        vision_config=dict(
            model_type="siglip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, image_size=28, patch_size=14,
        ),
        text_config=dict(model_type="qwen2", **_lm_kwargs(
            len(tokenizer), bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        )),
        image_token_index=ids["<image>"],
        video_token_index=ids["<video>"],
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        image_grid_pinpoints=pinpoints,
    )
    return _save(out_dir, LlavaOnevisionForConditionalGeneration, config, processor, "llava_onevision")


# --------------------------------------------------------------------------------------------------- Gemma 3

_GEMMA3_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<start_of_image>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)


def build_tiny_gemma3(out_dir: Path) -> Path:
    """Gemma 3: SigLIP tower (28 px, 4 patches pooled to 4 image tokens) + Gemma 3 LM; interleaving template."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
                "<end_of_image>", "<image_soft_token>"]
    tokenizer = _fast_tokenizer(
        specials, bos="<bos>", eos="<eos>", pad="<pad>", unk="<unk>", chat_template=_GEMMA3_TEMPLATE,
        extra={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"},
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    image_processor = Gemma3ImageProcessorPil(size={"height": 28, "width": 28})
    processor = Gemma3Processor(image_processor, tokenizer, chat_template=_GEMMA3_TEMPLATE, image_seq_length=4)
    config = Gemma3Config(
        text_config=dict(
            model_type="gemma3_text", **_lm_kwargs(
                len(tokenizer), bos_token_id=ids["<bos>"], eos_token_id=[ids["<eos>"], ids["<end_of_turn>"]],
                pad_token_id=ids["<pad>"], head_dim=16, sliding_window=64,
            ),
        ),
        vision_config=dict(
            model_type="siglip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, image_size=28, patch_size=14,
        ),
        mm_tokens_per_image=4,
        boi_token_index=ids["<start_of_image>"],
        eoi_token_index=ids["<end_of_image>"],
        image_token_index=ids["<image_soft_token>"],
    )
    return _save(out_dir, Gemma3ForConditionalGeneration, config, processor, "gemma3")


# --------------------------------------------------------------------------------------------------- InternVL (HF format)

_INTERNVL_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<IMG_CONTEXT>\n' }}"
    "{% elif part['type'] == 'video' %}{{ '<video>\n' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_internvl(out_dir: Path) -> Path:
    """InternVL (-hf format): InternViT tower (56 px, patch 14, pixel shuffle to 4 tokens) + Qwen2 LM."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import InternVLConfig, InternVLForConditionalGeneration, InternVLProcessor
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
    tokenizer = _fast_tokenizer(
        specials, bos=None, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_INTERNVL_TEMPLATE,
        extra={
            "start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
            "video_token": "<video>",
        },
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    image_processor = GotOcr2ImageProcessorPil(size={"height": 56, "width": 56}, crop_to_patches=False)
    processor = _image_only_processor(
        InternVLProcessor, image_processor, tokenizer, chat_template=_INTERNVL_TEMPLATE, image_seq_length=4
    )
    config = InternVLConfig(
        vision_config=dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=[56, 56],
            patch_size=[14, 14],
        ),
        text_config=dict(model_type="qwen2", **_lm_kwargs(
            len(tokenizer), bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        )),
        image_token_id=ids["<IMG_CONTEXT>"],
        image_seq_length=4,
        downsample_ratio=0.5,
    )
    return _save(out_dir, InternVLForConditionalGeneration, config, processor, "internvl")


# --------------------------------------------------------------------------------------------------- Qwen2-Audio

_QWEN_AUDIO_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'audio' %}{% set audio_count.value = audio_count.value + 1 %}"
    "{{ 'Audio ' + audio_count.value|string + ': <|audio_bos|><|AUDIO|><|audio_eos|>\n' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _whisper_features(n_mels: int = 16) -> Any:
    """A Whisper feature extractor with 1 s windows: 100 mel frames of `n_mels` bins at 16 kHz."""
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(feature_size=n_mels, sampling_rate=16000, hop_length=160, chunk_length=1, n_fft=400)


def _audio_encoder_kwargs(n_mels: int = 16) -> dict[str, Any]:
    # max_source_positions * 2 (the first conv's stride) must equal the 100 mel frames of a 1 s window.
    return dict(
        num_mel_bins=n_mels, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
        max_source_positions=50,
    )


def build_tiny_qwen2_audio(out_dir: Path) -> Path:
    """Qwen2-Audio: Whisper-style audio encoder (16 mel bins, 1 s windows -> at most 25 audio tokens) + Qwen2 LM."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
    tokenizer = _fast_tokenizer(
        specials, bos=None, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_QWEN_AUDIO_TEMPLATE,
        extra={"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"},
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in specials}
    processor = Qwen2AudioProcessor(
        feature_extractor=_whisper_features(), tokenizer=tokenizer, chat_template=_QWEN_AUDIO_TEMPLATE
    )
    config = Qwen2AudioConfig(
        audio_config=dict(model_type="qwen2_audio_encoder", **_audio_encoder_kwargs()),
        text_config=dict(model_type="qwen2", **_lm_kwargs(
            len(tokenizer), bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        )),
        audio_token_index=ids["<|AUDIO|>"],
    )
    return _save(out_dir, Qwen2AudioForConditionalGeneration, config, processor, "qwen2_audio")


# --------------------------------------------------------------------------------------------------- Qwen2.5-Omni

_OMNI_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>", "<|IMAGE|>",
    "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>",
]

_OMNI_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'audio' %}{{ '<|audio_bos|><|AUDIO|><|audio_eos|>' }}"
    "{% elif part['type'] == 'image' %}{{ '<|vision_bos|><|IMAGE|><|vision_eos|>' }}"
    "{% elif part['type'] == 'video' %}{{ '<|vision_bos|><|VIDEO|><|vision_eos|>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_qwen2_5_omni(out_dir: Path) -> Path:
    """Qwen2.5-Omni saved with the thinker only (enable_audio_output=False: no talker, no token2wav) and an empty
    `spk_dict.pt` (from_pretrained insists on the file): audio + vision towers + Qwen2.5 LM."""
    out_dir = Path(out_dir)
    if _finished(out_dir):
        return out_dir
    import torch
    from transformers import Qwen2_5OmniConfig, Qwen2_5OmniForConditionalGeneration, Qwen2_5OmniProcessor

    extra = {
        "audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>",
        "image_token": "<|IMAGE|>", "video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>",
        "vision_eos_token": "<|vision_eos|>",
    }
    tokenizer = _fast_tokenizer(
        _OMNI_SPECIALS, bos=None, eos="<|im_end|>", pad="<|endoftext|>", chat_template=_OMNI_TEMPLATE, extra=extra
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in _OMNI_SPECIALS}
    _, _, image_processor = _qwen_parts()
    processor = _qwen_processor(
        Qwen2_5OmniProcessor, image_processor=image_processor, feature_extractor=_whisper_features(),
        tokenizer=tokenizer, chat_template=_OMNI_TEMPLATE,
    )
    text = _lm_kwargs(
        len(tokenizer), bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
    )
    thinker = dict(
        audio_config=dict(**_audio_encoder_kwargs(), n_window=50, output_dim=64),
        vision_config=dict(
            depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64, patch_size=14,
            spatial_merge_size=2, temporal_patch_size=2, window_size=56, fullatt_block_indexes=[1],
        ),
        text_config=text,
        audio_token_index=ids["<|AUDIO|>"],
        image_token_index=ids["<|IMAGE|>"],
        video_token_index=ids["<|VIDEO|>"],
        vision_start_token_id=ids["<|vision_bos|>"],
        vision_end_token_id=ids["<|vision_eos|>"],
        audio_start_token_id=ids["<|audio_bos|>"],
        audio_end_token_id=ids["<|audio_eos|>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    config = Qwen2_5OmniConfig(thinker_config=thinker, enable_audio_output=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(_SEED)
    model = Qwen2_5OmniForConditionalGeneration(config).eval()
    model.thinker.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    torch.save({}, out_dir / "spk_dict.pt")
    (out_dir / _MARKER).write_text(json.dumps({"family": "qwen2_5_omni", "seed": _SEED}))
    return out_dir
