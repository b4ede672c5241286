"""Model names users type -> model class + default kwargs. Built on first use; importing this imports no model.

Adding a model: one class, plus one `add` line here.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from vlmkit.registry import Registry

HF_MODEL = "vlm.hf.generic:HFVisionModel"
API_MODEL = "vlm.api.openai_compat:OpenAICompatModel"

# Local families served by the generic transformers path: (Hugging Face org/prefix, sizes).
_HF_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Qwen/Qwen2-VL-{}-Instruct", ("2B", "7B", "72B")),
    ("Qwen/Qwen2.5-VL-{}-Instruct", ("3B", "7B", "32B", "72B")),
    ("llava-hf/llava-1.5-{}-hf", ("7b", "13b")),
    ("llava-hf/llava-onevision-qwen2-{}-ov-hf", ("0.5b", "7b", "72b")),
    ("HuggingFaceTB/SmolVLM-{}", ("256M-Instruct", "500M-Instruct", "Instruct")),
    ("OpenGVLab/InternVL3-{}-hf", ("1B", "2B", "8B", "14B", "38B", "78B")),
    ("google/gemma-3-{}-it", ("4b", "12b", "27b")),
)

# Short names users type for a family's usual size.
_HF_ALIASES: tuple[tuple[str, str], ...] = (
    ("qwen-vl", "Qwen/Qwen2.5-VL-7B-Instruct"),
    ("qwen2-vl", "Qwen/Qwen2-VL-7B-Instruct"),
    ("qwen2.5-vl", "Qwen/Qwen2.5-VL-7B-Instruct"),
    ("llava", "llava-hf/llava-1.5-7b-hf"),
    ("llava-onevision", "llava-hf/llava-onevision-qwen2-7b-ov-hf"),
    ("smolvlm", "HuggingFaceTB/SmolVLM-Instruct"),
    ("internvl", "OpenGVLab/InternVL3-8B-hf"),
    ("gemma3", "google/gemma-3-4b-it"),
)

_API_MODELS: tuple[str, ...] = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano")


@lru_cache(maxsize=1)
def model_registry() -> Registry:
    registry = Registry("model")
    for pattern, sizes in _HF_FAMILIES:
        for size in sizes:
            repo = pattern.format(size)
            registry.add(repo.split("/", 1)[1], HF_MODEL, f"local transformers: {repo}", model_path=repo)
    for alias, repo in _HF_ALIASES:
        registry.add(alias, HF_MODEL, f"alias of {repo.split('/', 1)[1]}", model_path=repo)
    tiny = Path(__file__).resolve().parent / "weights" / "vlmkit_tiny"
    # Its longest answer ("triangle vs square: Yes") is 6 tokens; the cap keeps a model that sees no picture it knows
    # (the grey-picture control) from generating 512 tokens a row.
    registry.add("vlmkit-tiny", HF_MODEL, "the tiny demo VLM shipped with vlmkit (tools/train_demo_model.py)",
                 model_path=str(tiny), max_new_tokens=8)
    for name in _API_MODELS:
        registry.add(name, API_MODEL, "OpenAI chat completions", model=name)
    return registry
