"""From what a user typed to a model or dataset: registry names, `--model-path`, `--api-base`.

This is the one place (with runner/perf/cli) that reaches the model and dataset packages, and it reaches them
through their registries only: which class a name runs on, and whether it is served (`api`) or the kit's local
weights (`local`), is what its registry entry says (`vlmkit.core.registry.Entry.provider`); no class is named here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core import config
from vlmkit.core.cells import whole_number
from vlmkit.core.errors import ConfigError
from vlmkit.core.registry import API, LOCAL, Entry, RegistryError, import_target

BACKENDS = ("transformers", "vllm")
_SECRET_KEYS = frozenset({"api_key"})


def _number(value: Any) -> bool:
    """A finite int or float (not a bool, not a string)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class ModelOptions:
    """What the command line (or a Python caller) says about how to build a model."""

    model_path: str | None = None
    api_base: str | None = None
    api_key: str | None = None  # never written anywhere; see ModelSpec.public_kwargs
    max_tokens: int | None = None
    temperature: float | None = None
    nframe: int | None = None  # video frames per clip (default: the model's, 8)
    fps: float | None = None  # video frames per second; replaces nframe
    video_mode: str | None = None  # API models: "frames" (default) or "video_url"
    timeout: float | None = None  # API models: seconds to wait for one answer (default: the model's, 60)
    retries: int | None = None  # API models: extra attempts after a retryable failure (default: the model's, 3)
    system_prompt: str | None = None  # a system turn before each conversation that has none ("" sends none)
    backend: str = "transformers"  # local models: "transformers" or "vllm" (vLLM's offline engine)
    tensor_parallel: int | None = None  # --backend vllm: GPUs one model is split over
    vllm_args: list[str] = field(default_factory=list)  # --backend vllm: "KEY=VALUE" vllm.LLM arguments
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """ConfigError (one line naming the flag) for a value that cannot work."""
        if self.timeout is not None and not (_number(self.timeout) and self.timeout > 0):
            raise ConfigError(f"--timeout must be a number of seconds above 0; got {self.timeout!r}")
        if self.retries is not None and (whole_number(self.retries) is None or whole_number(self.retries) < 0):
            raise ConfigError(f"--retries must be a whole number, 0 or more; got {self.retries!r}")
        if self.max_tokens is not None and (whole_number(self.max_tokens) is None or whole_number(self.max_tokens) < 1):
            raise ConfigError(f"--max-tokens must be a whole number, 1 or more; got {self.max_tokens!r}")
        if self.temperature is not None and not (_number(self.temperature) and self.temperature >= 0):
            raise ConfigError(f"--temperature must be a number, 0 or more; got {self.temperature!r}")
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise ConfigError(f"--system-prompt must be text; got {type(self.system_prompt).__name__}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}; got {self.backend!r}")
        if self.tensor_parallel is not None:
            if whole_number(self.tensor_parallel) is None or whole_number(self.tensor_parallel) < 1:
                raise ConfigError(f"--tensor-parallel must be a whole number, 1 or more; got {self.tensor_parallel!r}")
            if self.backend != "vllm":
                raise ConfigError("--tensor-parallel is for --backend vllm (the transformers path places a model "
                                  "with device='auto')")
        if self.vllm_args and self.backend != "vllm":
            raise ConfigError("--vllm-arg is for --backend vllm")
        self.engine_kwargs()  # a malformed --vllm-arg fails here, in one line

    def engine_kwargs(self) -> dict[str, Any]:
        """--vllm-arg KEY=VALUE pairs as vllm.LLM keyword arguments (VALUE read as JSON where it parses)."""
        kwargs: dict[str, Any] = {}
        for item in self.vllm_args:
            key, sep, text = str(item).partition("=")
            if not sep or not key.strip().isidentifier():
                raise ConfigError(f"--vllm-arg takes KEY=VALUE (a vllm.LLM argument, e.g. max_model_len=8192); got {item!r}")
            try:
                kwargs[key.strip()] = json.loads(text)
            except ValueError:
                kwargs[key.strip()] = text
        return kwargs

    def api_kwargs(self) -> dict[str, Any]:
        """The connection settings only API models take (timeout, retries), where given."""
        kwargs: dict[str, Any] = {}
        if self.timeout is not None:
            kwargs["timeout"] = float(self.timeout)
        if self.retries is not None:
            kwargs["retries"] = whole_number(self.retries)
        return kwargs

    def video_kwargs(self, *, api: bool) -> dict[str, Any]:
        """The video-sampling kwargs both model kinds take (and video_mode, which only API models take)."""
        kwargs: dict[str, Any] = {}
        if self.nframe is not None:
            kwargs["nframe"] = self.nframe
        if self.fps is not None:
            kwargs["fps"] = self.fps
        if api and self.video_mode is not None:
            kwargs["video_mode"] = self.video_mode
        return kwargs


@dataclass
class ModelSpec:
    name: str  # what the user typed; names the output folder
    target: str  # "module:Class"
    kwargs: dict[str, Any]
    provider: str = ""  # API or LOCAL, as the registry says of the class; "" for a user's own class

    @property
    def is_api(self) -> bool:
        """A served model (it takes the API options; `--mode perf` can load-test it)."""
        return self.provider == API

    @property
    def is_local(self) -> bool:
        """One of the kit's local classes (they take batch_size and a device from the run)."""
        return self.provider == LOCAL

    def public_kwargs(self) -> dict[str, Any]:
        """The kwargs without secrets, for fingerprints and results.json."""
        return {k: v for k, v in self.kwargs.items() if k not in _SECRET_KEYS}

    def build(self, **run_kwargs: Any) -> Any:
        """The model instance; run_kwargs are settings of this run that leave answers unchanged (batching, pools)."""
        return import_target(self.target, what=f"model {self.name!r}")(**self.kwargs, **run_kwargs)


def check_api_base(api_base: str, where: str = "--api-base") -> None:
    """ConfigError (one line) for a base URL the API model would refuse (no scheme, credentials in it).

    The rule lives with the API model, reached through the model registry (`vlm.registry.api_urls`)."""
    from vlm.registry import api_urls

    try:
        api_urls(api_base)
    except ConfigError as exc:  # already names --api-base, and never echoes a URL that holds credentials
        if where == "--api-base":
            raise
        raise ConfigError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def resolve_model(name: str, options: ModelOptions | None = None, *, scoring_only: bool = False) -> ModelSpec:
    """Registry name, alias, Hugging Face repo id, local path or served model name -> class and kwargs.

    - `--api-base URL` (or a registry API entry): an OpenAI-compatible model; NAME is the served model id.
    - a registry name (or the repo id of a registry checkpoint, `Qwen/Qwen2.5-VL-7B-Instruct`): its class, defaults
      and VLMEvalKit preset (`vlm/presets.tsv`); `--model-path DIR` loads the weights from DIR instead.
    - `--model-path DIR` under a name the registry does not know, or an existing directory: a local transformers
      model (the class its config.json's model_type needs: Qwen2-Audio and Qwen2.5-Omni take the audio class),
      with no preset.
    `--max-tokens` and `--system-prompt` win over a preset's max_new_tokens and system prompt.
    `--backend vllm` runs a local name or folder on vLLM's offline engine (`vlm.registry.vllm_target()`, same kwargs,
    `--tensor-parallel N` as tensor_parallel_size); it refuses served models and a missing vLLM in one line.
    A local model on an install without the `local` extra (torch, transformers) is refused here, in one line naming
    the install, before anything runs.

    scoring_only (`--mode eval`: journalled answers are scored and no model is asked): a name the registry does not
    know, given with no --api-base, --model-path or folder, is the served model it was when it answered; its spec
    (and so the journal fingerprint, which ignores where the server is) is the infer run's, with no URL needed. Nor
    does a local model need torch then.
    """
    from vlm.registry import api_class_target, check_local_installed, is_api, local_class_for, model_registry

    options = options or ModelOptions()
    options.check()
    registry = model_registry()
    entry: Entry | None = registry.get(name) if name in registry else _entry_for_repo(registry, name)

    was_served = (scoring_only and entry is None and not options.model_path and options.backend == "transformers"
                  and not Path(name).is_dir())
    if options.api_base or (entry is not None and is_api(entry)) or was_served:
        if options.backend == "vllm":
            raise ConfigError(f"--backend vllm runs local weights; {name} is a served model (--api-base or an API "
                              "entry): drop --backend vllm (a `vllm serve` server is reached with --api-base)")
        kwargs: dict[str, Any] = {"model": entry.kwargs.get("model", name) if entry else name}
        kwargs["api_base"] = options.api_base or config.openai_api_base()
        if kwargs["api_base"] is not None:
            check_api_base(kwargs["api_base"], "--api-base" if options.api_base else "$OPENAI_API_BASE")
        kwargs["api_key"] = options.api_key or config.openai_api_key()
        if options.max_tokens is not None:
            kwargs["max_tokens"] = options.max_tokens
        if options.temperature is not None:
            kwargs["temperature"] = options.temperature
        if options.system_prompt is not None:
            kwargs["system_prompt"] = options.system_prompt
        kwargs.update(options.api_kwargs())
        target = entry.target if entry is not None and is_api(entry) else api_class_target()
        return ModelSpec(name, target, {**kwargs, **options.video_kwargs(api=True), **options.extra}, API)

    if options.model_path or entry is not None or Path(name).is_dir():
        kwargs = dict(entry.kwargs) if entry is not None else {}
        if options.model_path:
            kwargs["model_path"] = options.model_path
        elif entry is None:
            kwargs["model_path"] = str(Path(name).resolve())
        target = entry.target if entry is not None else local_class_for(kwargs["model_path"])
        provider = entry.provider if entry is not None else LOCAL
        if options.video_mode == "video_url":
            raise RegistryError(f"--video-mode video_url is for served models (--api-base); {name} is local and takes video in its own format")
        if provider == LOCAL:  # a user's own class takes only what its registry entry gives it
            if options.max_tokens is not None:
                kwargs["max_new_tokens"] = options.max_tokens
            if options.temperature is not None:
                kwargs["temperature"] = options.temperature
            if options.system_prompt is not None:
                kwargs["system_prompt"] = options.system_prompt
            kwargs.update(options.video_kwargs(api=False))
        if provider == LOCAL and not scoring_only:
            check_local_installed(name)
        if options.backend == "vllm":
            target, kwargs = _on_vllm(name, target, provider, kwargs, options)
        return ModelSpec(name, target, {**kwargs, **options.extra}, provider)

    raise RegistryError(
        registry.unknown_message(name)
        + " For a served model pass --api-base URL; for local weights pass --model-path DIR."
    )


def _on_vllm(name: str, target: str, provider: str, kwargs: dict[str, Any],
             options: ModelOptions) -> tuple[str, dict[str, Any]]:
    """The vLLM class with the local kwargs (model_path, preset, generation settings, video sampling): the same
    registry names and folders as the transformers path. ConfigError when vLLM is missing or the class is a user's."""
    from vlm.registry import check_vllm_installed, vllm_target

    if provider != LOCAL:
        raise ConfigError(f"--backend vllm runs the kit's local models; {name} is {target}")
    check_vllm_installed()
    kwargs = dict(kwargs)
    if options.tensor_parallel is not None:
        kwargs["tensor_parallel_size"] = whole_number(options.tensor_parallel)
    if options.vllm_args:
        kwargs["engine_kwargs"] = {**kwargs.get("engine_kwargs", {}), **options.engine_kwargs()}
    return vllm_target(), kwargs


def _entry_for_repo(registry: Any, name: str) -> Entry | None:
    """The registry entry of a checkpoint typed as its Hugging Face repo id (`Qwen/Qwen2-Audio-7B-Instruct`): the
    one named by the id's last part, when its model_path is that id. A local folder of that name is the folder."""
    if name.count("/") != 1 or Path(name).exists():
        return None
    short = name.split("/", 1)[1]
    entry = registry.get(short) if short in registry else None
    return entry if entry is not None and entry.kwargs.get("model_path") == name else None
