"""Model names users type -> model class + default kwargs. Built on first use; importing this imports no model.

Adding a model: one class, plus one `add` line here (and its VLMEvalKit preset in `presets.tsv`, where it has one).
Each entry says what it is (`provider`): `api`, a served model (it takes --api-base, --api-key, --max-tokens and the
API options, and `vlmkit perf` load-tests it with the headers of its class's `auth_headers`), or `local`, the kit's
local weights (they take the run's local options and --backend vllm). An API provider with another auth header is its
class (a subclass of the OpenAI-compatible one overriding `auth_headers`) and its line here:

    registry.add("acme-large", "vlm.api.acme:AcmeModel", "Acme chat completions", provider=API, model="large")

The run and perf name no class: they ask `is_api` / `is_local` of an entry, and the functions below for the classes
a name outside the registry runs on (`api_class_target`, `local_class_for`, `vllm_target`).

Each local family is listed with the modalities it takes through the kit (`vlmkit list models` shows them; video:
the family's own video input, or sampled frames as images for families that have none); a loaded checkpoint declares
what reaches it on this machine (`modalities` of the instance: some processors' video input needs torchvision).
A local entry carries its preset (`vlm.presets`) as the `preset` kwarg, so that the run fingerprint and results.json
hold the values used; an alias takes the preset of the checkpoint it names.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from vlmkit.core.registry import API, LOCAL, Entry, Registry, import_target, require_modules

# The kit's classes, named here only: the run and perf ask the functions below (and each entry's `provider`).
_GENERIC = "vlm.local.generic:HFVisionModel"
_AUDIO = "vlm.local.audio_models:HFAudioModel"
_VLLM = "vlm.local.vllm_engine:VLLMModel"  # --backend vllm: the same local names on vLLM's offline engine
_OPENAI = "vlm.api.openai_compat:OpenAICompatModel"
# What the local classes import when they load weights (lazily, inside their constructors): the `local` extra.
_LOCAL_MODULES = ("torch", "transformers")

_VISION = ("text", "image", "video")
# Local families: (Hugging Face org/pattern, sizes, class, modalities the family takes).
_HF_FAMILIES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("Qwen/Qwen2-VL-{}-Instruct", ("2B", "7B", "72B"), _GENERIC, _VISION),
    ("Qwen/Qwen2.5-VL-{}-Instruct", ("3B", "7B", "32B", "72B"), _GENERIC, _VISION),
    ("llava-hf/llava-1.5-{}-hf", ("7b", "13b"), _GENERIC, _VISION),
    ("llava-hf/llava-onevision-qwen2-{}-ov-hf", ("0.5b", "7b", "72b"), _GENERIC, _VISION),
    ("HuggingFaceTB/SmolVLM-{}", ("256M-Instruct", "500M-Instruct", "Instruct"), _GENERIC, _VISION),
    ("OpenGVLab/InternVL3-{}-hf", ("1B", "2B", "8B", "14B", "38B", "78B"), _GENERIC, _VISION),
    ("google/gemma-3-{}-it", ("4b", "12b", "27b"), _GENERIC, _VISION),
    ("Qwen/Qwen2-Audio-{}-Instruct", ("7B",), _AUDIO, ("text", "audio")),
    ("Qwen/Qwen2.5-Omni-{}", ("3B", "7B"), _AUDIO, ("text", "image", "video", "audio")),
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
    ("qwen2-audio", "Qwen/Qwen2-Audio-7B-Instruct"),
    ("qwen2.5-omni", "Qwen/Qwen2.5-Omni-7B"),
    ("qwen-omni", "Qwen/Qwen2.5-Omni-7B"),
)

# A local checkpoint the registry does not name (a folder, or --model-path under a new name) runs on the generic
# class unless its config.json's model_type needs another one.
_CLASS_FOR_MODEL_TYPE = {"qwen2_audio": _AUDIO, "qwen2_5_omni": _AUDIO}

_API_MODELS: tuple[str, ...] = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano")


def is_api(entry: Entry) -> bool:
    """A served model's entry: it takes --api-base and the API options, and `vlmkit perf` can load-test it."""
    return entry.provider == API


def is_local(entry: Entry) -> bool:
    """An entry of the kit's local weights: it takes the run's local options (and owns prompts through its preset)."""
    return entry.provider == LOCAL


def api_class_target() -> str:
    """The class ("module:Class") a served model runs on when its name is no API entry of the registry
    (`--api-base URL` with any name): OpenAI-compatible chat completions."""
    return _OPENAI


def api_urls(api_base: str) -> tuple[str, str]:
    """(base URL, chat-completions URL) as the API classes read --api-base; ConfigError (a ValueError, one line)
    for a base they refuse. Imports the API module on call."""
    from vlm.api.openai_compat import chat_completions_url

    return chat_completions_url(api_base)


def api_server_urls(api_base: str) -> list[tuple[str, str]]:
    """(base URL, chat-completions URL) of every server an --api-base names (one URL, `URL1,URL2,...` or a file with
    one URL a line; vlm.api.urls). ConfigError (a ValueError, one line) for one the API classes refuse."""
    from vlm.api.urls import replica_urls

    return replica_urls(api_base)


def default_api_base() -> str:
    """The base URL an API class uses when neither --api-base nor $OPENAI_API_BASE gives one."""
    from vlm.api.openai_compat import DEFAULT_API_BASE

    return DEFAULT_API_BASE


def vllm_target() -> str:
    """The class ("module:Class") that runs a local entry's kwargs on vLLM's offline engine (--backend vllm)."""
    return _VLLM


def check_vllm_installed() -> None:
    """ConfigError (one line naming the install) when vLLM cannot be imported (RegistryError naming the extra when
    the local engines' own dependencies are missing)."""
    import_target(_VLLM.split(":", 1)[0] + ":check_vllm_installed", what="the vLLM backend")()


def check_local_installed(name: str) -> None:
    """RegistryError (one line naming the extra to install) when the local classes' dependencies cannot be imported:
    an API-only install (`pip install -e .`) given a local model name hears it before anything runs."""
    require_modules(_LOCAL_MODULES, what=f"model {name!r} (local weights)")


def local_class_for(model_dir: str | Path) -> str:
    """The class ("module:Class") for a local checkpoint folder the registry does not name: by its config.json's
    model_type; the generic class when there is none (loading then says what is wrong)."""
    try:
        model_type = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return _GENERIC
    return _CLASS_FOR_MODEL_TYPE.get(model_type, _GENERIC) if isinstance(model_type, str) else _GENERIC


@lru_cache(maxsize=1)
def model_registry() -> Registry:
    from vlm.presets import model_presets

    presets = model_presets()
    registry = Registry("model")
    targets: dict[str, tuple[str, tuple[str, ...]]] = {}

    def defaults(repo: str) -> dict:
        preset = presets.get(repo.split("/", 1)[1])
        return {"model_path": repo, **({"preset": preset.as_kwarg()} if preset is not None else {})}

    for pattern, sizes, target, takes in _HF_FAMILIES:
        for size in sizes:
            repo = pattern.format(size)
            targets[repo] = (target, takes)
            registry.add(repo.split("/", 1)[1], target, f"local transformers ({', '.join(takes)}): {repo}",
                         provider=LOCAL, **defaults(repo))
    for alias, repo in _HF_ALIASES:
        target, takes = targets[repo]
        registry.add(alias, target, f"alias of {repo.split('/', 1)[1]} ({', '.join(takes)})", provider=LOCAL,
                     **defaults(repo))
    tiny = Path(__file__).resolve().parent / "weights" / "vlmkit_tiny"
    # No cap of its own: its generation_config.json says max_new_tokens 8 (its longest answer, "triangle vs square:
    # Yes", is 6 tokens), which the local path honours unless --max-tokens is given.
    registry.add("vlmkit-tiny", _GENERIC, "the tiny demo VLM shipped with vlmkit (tools/train_demo_model.py)",
                 provider=LOCAL, model_path=str(tiny))
    for name in _API_MODELS:
        registry.add(name, _OPENAI, "OpenAI chat completions", provider=API, model=name)
    return registry
