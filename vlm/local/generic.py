"""The generic local transformers VLM: AutoProcessor + AutoModelForImageTextToText + the processor's chat template.

One path serves most families (Qwen2-VL, Qwen2.5-VL, LLaVA, LLaVA-OneVision, SmolVLM/Idefics3, InternVL-hf,
Gemma 3, Qwen2-Audio, ...). Batches are one left-padded `generate` call; decoding is greedy unless
`temperature > 0`, and greedy means plain greedy: the checkpoint's generation_config.json adds no sampling or
penalty setting (`vlm.local.decoding` says what is kept from it; `settings()["generation"]` records both).
A `stop` parameter ends an answer as servers do: the text is cut before the first stop string, and the output
tokens are counted up to the one that completed it (or the eos token), never the padding of a batch after it.
`close()` drops the model and processor so that the next model of a run has the memory.

Capabilities are declared per loaded checkpoint (instance attributes over the class ones):
- image: when the processor has an image processor.
- video (`video_input` in settings), frames sampled with `vlmkit.core.video` (`nframe`, or `fps`):
  - "native": the model's own video input. Qwen2-VL / Qwen2.5-VL / Qwen2.5-Omni always go through the kit's
    torchvision-free video processor (`vlm.local.qwen_video`: pixel_values_videos + video_grid_thw, video tokens
    expanded by the real processor class); other families (LLaVA-OneVision, ...) when their processor holds a
    real video processor (torchvision installed). Either way the sampled frames and their metadata are passed in.
  - "frames": the sampled frames as consecutive images, for families with no video input (LLaVA-1.5, Gemma 3,
    ...), or for any family with `video_as_images=True`.
  - none: families that take video natively but cannot here (their video processor needs torchvision: SmolVLM,
    LLaVA-OneVision, InternVL, ... without it). A video part then fails with `UnsupportedInputError` naming the
    reason, before anything runs; `video_as_images=True` sends frames as images instead. Never a silent drop.
- audio: when the processor has an audio feature extractor and an audio token and the model takes
  `input_features` (Qwen2-Audio, Qwen2.5-Omni thinker): the waveform is read with `vlmkit.core.audio`, mixed to mono and
  resampled to the feature extractor's rate. Elsewhere a message with audio fails with `UnsupportedInputError`.
- interleave: probed from the chat template (does an image between two texts render between them?); a
  template that puts images first gets messages reordered with `vlmkit.core.message.images_first`.

A VLMEvalKit preset (`preset=`, from `vlm/presets.tsv` through the registry) sets the image resolution limits of
the processor, generation defaults under the user's settings and a default system prompt (`vlm.local.model_preset`);
`settings()["preset"]` records it, with the values the user overrode. The preset's prompt family (`vlm.prompts`,
named by its prompt_style) answers `use_custom_prompt` / `build_prompt` for Python users (the runner asks the family
itself, without loading weights) and may set image-processor arguments per dataset (`processor_kwargs(dataset)`,
e.g. Qwen2-VL's OCRBench min_pixels): `generate*(..., dataset=NAME)` applies them to that call only.
`settings()["prompt_family"]` records the family (None: the dataset's prompts, no per-dataset settings).

The class is this module; the jobs around it live apart: loading and placement (`vlm.local.loading`), what a loaded
checkpoint takes (`vlm.local.capabilities`), generate() arguments, answer decoding and the generation record
(`vlm.local.decoding`), likelihood scoring of options and continuations (`vlm.local.likelihood`: `option_logprobs*`,
`continuation_logprobs*`), presets (`vlm.local.model_preset`), processors without torchvision (`vlm.local.processors`,
`vlm.local.qwen_video`).

torch and transformers are imported when a model is built, not when this module is imported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from vlm.local.answer_budget import answer_budget
from vlm.base import BaseModel, batch_or_each
from vlm.local import decoding, likelihood
from vlm.local.capabilities import (
    audio_probe,
    audio_rate,
    takes_images,
    template_interleaves,
    video_input,
    video_processor_name,
)
from vlm.local.loading import (
    load_chat_processor,
    load_image_text_model,
    model_type,
    pick_device_dtype,
    resolve_model_path,
)
from vlm.local.model_preset import (
    apply_pixel_limits,
    image_call_kwargs,
    pixel_limits_in_use,
    preset_defaults,
    preset_values,
    with_system_turn,
)  # fmt: skip
from vlm.local.processors import is_image_only, placeholder_tokens
from vlm.local.qwen_video import video_metadata
from vlm.local.args import check_local_args
from vlm.prompts import family_record, prompts_for
from vlmkit.core.audio import read_audio
from vlmkit.core.model_calls import Generation, UnsupportedInputError
from vlmkit.formats.transformers_chat import template_flags, to_hf_conversation
from vlmkit.core.message import Turn, modalities, prefill_text
from vlmkit.core.contracts import dataset_info
from vlmkit.core.video import DEFAULT_NFRAME, check_sampling, sample_frames


class HFVisionModel(BaseModel):
    """A local vision-language model loaded with transformers from a folder or the Hugging Face cache.

    model_path: a model folder or a Hugging Face repo id (looked up in the hub cache, never downloaded).
    dtype: "auto" (bfloat16 on a GPU that has it, float16 on other GPUs, float32 on CPU) or a torch dtype name.
    device: None (cuda when available, else cpu), "cpu", "cuda", "cuda:N", or "auto" (spread over GPUs).
    max_new_tokens: the most new tokens per answer; None: the checkpoint's max_new_tokens when its
        generation_config.json sets one, else 512 (`vlm.local.decoding`).
    temperature: plain greedy decoding when 0 (no setting of the checkpoint's generation_config.json added),
        temperature sampling otherwise.
    batch_size: the most messages in one padded `generate`; `generate_batch` splits longer lists.
    nframe, fps: how video frames are sampled (`vlmkit.core.video`): nframe evenly spaced frames, or, when fps is
        given, one frame per 1/fps seconds (fps replaces nframe, which is then recorded as None).
    video_as_images: send a video as its sampled frames (consecutive images) even where the family has its own
        video input.
    system_prompt: a system turn sent before each conversation that has none (None: the preset's, if any; "":
        none). A row's own system turn wins.
    preset: VLMEvalKit's preset for this model (`vlm.presets.Preset.as_kwarg()`): image resolution limits,
        generation defaults (max_new_tokens when none is given, repetition_penalty, ... when not passed by name),
        a default system prompt; its prompt_style names the prompt family (`vlm.prompts`) whose prompts and
        per-dataset image settings this model uses.
    generate_kwargs: passed on to `model.generate` (e.g. top_p, repetition_penalty): the only way, with a row's
        parameters and a preset, to add a decoding setting.
    """

    modalities = frozenset({"text", "image"})
    interleave = True

    def __init__(
        self,
        model_path: str,
        *,
        dtype: str = "auto",
        device: str | None = None,
        max_new_tokens: int | None = None,
        temperature: float = 0.0,
        batch_size: int = 1,
        nframe: int | None = DEFAULT_NFRAME,
        fps: float | None = None,
        video_as_images: bool = False,
        system_prompt: str | None = None,
        preset: dict[str, Any] | None = None,
        **generate_kwargs: Any,
    ) -> None:
        check_local_args(dtype, batch_size, max_new_tokens)
        self.nframe = None if fps is not None else nframe
        self.fps = fps
        self._sampling = check_sampling(self.nframe, self.fps)
        self.video_as_images = bool(video_as_images)
        self.model_path = model_path
        self.local_path = resolve_model_path(model_path)
        self.model_type = model_type(str(self.local_path))
        self.temperature = float(temperature)
        self.batch_size = batch_size
        self.preset = preset
        values = preset_values(preset)
        self.prompts = prompts_for(preset)
        defaults = preset_defaults(values, max_new_tokens=max_new_tokens, system_prompt=system_prompt,
                                   sampling=generate_kwargs)
        self._preset_overridden = defaults.overridden
        self.system_prompt = defaults.system_prompt
        self.generate_kwargs = defaults.sampling
        self.device, self.torch_dtype = pick_device_dtype(device, dtype)
        self.dtype = dtype
        self.processor = self._load_processor()
        self.placeholders = placeholder_tokens(self.processor)
        apply_pixel_limits(self.processor, values, f"{model_path} (preset {(preset or {}).get('name')})")
        self.pixel_limits = pixel_limits_in_use(self.processor)
        self.model = self._load_model()
        self._setup_generation(max_new_tokens, values.get("max_new_tokens"))
        self.video_input, self._no_video_reason = video_input(self.processor, self.model, self.video_as_images)
        self.audio_rate = audio_rate(self.processor, self.model)
        takes = {"text"} | ({"image"} if takes_images(self.processor) else set())
        takes |= {"video"} if self.video_input else set()
        takes |= {"audio"} if self.audio_rate else set()
        self.modalities = frozenset(takes)
        probe = None if "image" in takes or "audio" not in takes else audio_probe()
        self.interleave = template_interleaves(self.processor, probe)
        self._loaded = {
            "model_class": type(self.model).__name__,
            "processor_class": type(self.processor).__name__,
            "image_only_processor": is_image_only(self.processor),
            "video_processor": video_processor_name(self.processor) if self.video_input == "native" else None,
        }

    def _setup_generation(self, max_new_tokens: int | None, preset_max: int | None = None) -> None:
        """The kit's own decoding settings over the checkpoint's generation config (policy: `vlm.local.decoding`); the
        answer budget: the user's, else the preset's, else the checkpoint's, else the default."""
        checkpoint = decoding.checkpoint_values(getattr(self.model, "generation_config", None))
        self.max_new_tokens, self.max_new_tokens_source = answer_budget(max_new_tokens, preset_max, checkpoint)
        self._pad_id = self.processor.tokenizer.pad_token_id
        self._eos = decoding.stop_token_ids(checkpoint.get("eos_token_id"), self.processor.tokenizer.eos_token_id)
        self._checkpoint_kept, self._checkpoint_overridden = decoding.split_checkpoint(
            checkpoint, self._generation_options()
        )
        self.model.generation_config = decoding.kept_config(self._checkpoint_kept)

    # ---------------------------------------------------------------------------------------------- loading

    def _load_processor(self) -> Any:
        """The processor, ready for batched chat generation (`vlm.local.loading.load_chat_processor`)."""
        return load_chat_processor(str(self.local_path), model_type=self.model_type, model_path=self.model_path)

    def _load_model(self) -> Any:
        """The model, placed and in eval mode (`vlm.local.loading.load_image_text_model`); subclasses load other
        classes here."""
        return load_image_text_model(
            str(self.local_path), model_type=self.model_type, model_path=self.model_path, device=self.device,
            torch_dtype=self.torch_dtype,
        )

    @property
    def input_device(self) -> Any:
        """Where inputs go: the chosen device, or the first device of a model spread with device="auto"."""
        return self.model.device if self.device == "auto" else self.device

    def check_supported(self, turns: Sequence[Turn]) -> None:
        """As BaseModel's, with the reason when video or audio cannot reach this model."""
        present = modalities(turns)
        if "video" in present and "video" not in self.modalities:
            raise UnsupportedInputError(f"{self.model_path}: video input: {self._no_video_reason}")
        if "audio" in present and "audio" not in self.modalities:
            raise UnsupportedInputError(
                f"{self.model_path}: audio input is not supported by this model (its processor has no audio "
                "feature extractor); use an audio model such as Qwen2-Audio or Qwen2.5-Omni"
            )
        super().check_supported(turns)

    # ---------------------------------------------------------------------------------------------- prompts

    def use_custom_prompt(self, dataset: Any) -> bool:
        """Whether the preset's prompt family writes its own prompt for this dataset (a vlmkit.core.contracts.DatasetInfo,
        or a dataset object with name, kind and image_paths); False without a family."""
        return self.prompts is not None and bool(self.prompts.use_custom_prompt(dataset_info(dataset)))

    def build_prompt(self, line: dict[str, Any], dataset: Any = None) -> list[Any]:
        """The family's prompt for the row (use_custom_prompt must have said yes)."""
        if self.prompts is None:
            raise NotImplementedError(f"{self.model_path}: no prompt family (preset prompt_style dataset or no preset)")
        return self.prompts.build_prompt(line, dataset_info(dataset))

    def dataset_image_kwargs(self, dataset: str | None) -> dict[str, Any]:
        """The image processor's arguments for generating on this dataset (by name): the prompt family's
        `processor_kwargs(dataset)`, merged with the pixel limits in use (`vlm.local.model_preset.image_call_kwargs`);
        {} for a dataset the family does not name, or without a family."""
        hook = getattr(self.prompts, "processor_kwargs", None)
        settings = hook(str(dataset) if dataset is not None else None) if callable(hook) else None
        where = f"{self.model_path} (prompt family {(self.preset or {}).get('prompt_style')}, dataset {dataset})"
        return image_call_kwargs(self.processor, settings, where)

    # ---------------------------------------------------------------------------------------------- generation

    def generate_batch(
        self,
        batch: Sequence[Sequence[Any]],
        dataset: str | None = None,
        params: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[Generation | BaseException]:
        """One left-padded `generate` per `batch_size` messages that share their parameters; a message that fails
        gets its exception."""
        if self.model is None:
            raise RuntimeError(f"{self.model_path}: this model was closed; build it again to generate")
        per_message = list(params) if params is not None else [None] * len(batch)
        results: list[Generation | BaseException | None] = [None] * len(batch)
        images_kwargs = self.dataset_image_kwargs(dataset)
        # grouped by parameters and by prefill: one padded call renders its conversations the same way
        groups: dict[tuple[str, bool], list[tuple[int, tuple[list[dict[str, Any]], list[Any]]]]] = {}
        options: dict[str, dict[str, Any]] = {}
        for i, (msgs, message_params) in enumerate(zip(batch, per_message)):
            try:
                key = json.dumps(message_params or {}, sort_keys=True, default=str)
                if key not in options:
                    options[key] = self._generation_options(message_params)
                conversation = self._conversation(self.prepare(msgs))
                groups.setdefault((key, prefill_text(conversation[0]) is not None), []).append((i, conversation))
            except Exception as exc:  # a bad sample fails alone
                results[i] = exc
        for (key, _), ready in groups.items():
            for start in range(0, len(ready), self.batch_size):
                chunk = ready[start : start + self.batch_size]
                conversations = [conv for _, conv in chunk]
                for (i, _), result in zip(chunk, self._run_chunk(conversations, options[key], images_kwargs)):
                    results[i] = result
        return results  # type: ignore[return-value]

    def _conversation(self, turns: list[Turn]) -> tuple[list[dict[str, Any]], list[Any]]:
        """(transformers conversation with video/audio loaded, the metadata of its native videos in order)."""
        metadata: list[Any] = []

        def video_items(value: str) -> list[dict[str, Any]]:
            sampled = sample_frames(value, **self._sampling)
            if self.video_input == "native":
                metadata.append(video_metadata(sampled))
                return [{"type": "video", "video": sampled.array()}]
            return [{"type": "image", "image": frame} for frame in sampled.frames]

        def audio_item(value: str) -> dict[str, Any]:
            return {"type": "audio", "audio": read_audio(value, rate=self.audio_rate).samples}

        conversation = to_hf_conversation(
            with_system_turn(turns, self.system_prompt), interleave=self.interleave, video_items=video_items,
            audio_item=audio_item, placeholders=self.placeholders,
        )
        return conversation, metadata

    def _run_chunk(
        self, conversations: list[tuple[list[dict[str, Any]], list[Any]]], options: dict[str, Any],
        images_kwargs: dict[str, Any] | None = None,
    ) -> list[Generation | BaseException]:
        # a padded batch that fails as a whole is run again one sample at a time, so only the bad ones fail
        return batch_or_each(conversations, lambda chunk: self._generate(chunk, options, images_kwargs))

    def _model_inputs(
        self, conversations: list[tuple[list[dict[str, Any]], list[Any]]], images_kwargs: dict[str, Any] | None = None
    ) -> Any:
        """The processor's tensors for a padded batch (frames' metadata passed along when there are videos; the
        per-dataset image settings of this call, `dataset_image_kwargs`, to the image processor only)."""
        processor_kwargs: dict[str, Any] = {"padding": True}
        if images_kwargs:
            processor_kwargs["images_kwargs"] = dict(images_kwargs)
        metadata = [m for _, metas in conversations for m in metas]
        if metadata:
            processor_kwargs.update(video_metadata=metadata, do_sample_frames=False)
        rendered = [conversation for conversation, _ in conversations]
        return self.processor.apply_chat_template(
            rendered,
            **template_flags(rendered),  # a prefill is continued, else the generation prompt is added
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs=processor_kwargs,
        )

    def _generate(
        self, conversations: list[tuple[list[dict[str, Any]], list[Any]]], options: dict[str, Any],
        images_kwargs: dict[str, Any] | None = None,
    ) -> list[Generation]:
        import torch

        # (a subclass that overrides _model_inputs with one argument still works for datasets with no settings)
        batch = self._model_inputs(conversations, images_kwargs) if images_kwargs else self._model_inputs(conversations)
        inputs = batch.to(self.input_device, dtype=self.torch_dtype)
        options = dict(options)
        if "seed" in options:
            torch.manual_seed(options.pop("seed"))
        with torch.inference_mode():
            output = self.model.generate(**inputs, **options)
        prompt_len = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_len:].tolist()
        input_counts = inputs["attention_mask"].sum(dim=1).tolist()
        return decoding.answers(self.processor.tokenizer, new_tokens, input_counts, options)

    def _generation_options(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """transformers generate() arguments: the model's settings, then per-request params mapped onto them
        (`vlm.local.decoding.generate_options`)."""
        return decoding.generate_options(
            params, max_new_tokens=self.max_new_tokens, temperature=self.temperature, pad_id=self._pad_id,
            eos=self._eos, generate_kwargs=self.generate_kwargs, tokenizer=getattr(self.processor, "tokenizer", None),
            where=self.model_path,
        )

    # ---------------------------------------------------------------------------------------------- likelihood

    def option_logprobs(
        self, msgs: Sequence[Any], letters: Sequence[str], dataset: str | None = None
    ) -> dict[str, float]:
        """Letter mode for one message: the log-probability of each option letter written as the answer.

        The prompt is generation's (chat template with its generation prompt, the dataset's image settings); each
        letter is tokenised as generation would write it there (`vlm.local.likelihood`). Y/N: letters
        ["Yes", "No"]. Raises what the row raised."""
        result = self.option_logprobs_batch([msgs], [letters], dataset)[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def option_logprobs_batch(
        self, batch: Sequence[Sequence[Any]], letters_per_row: Sequence[Sequence[str]], dataset: str | None = None
    ) -> list[dict[str, float] | BaseException]:
        """Letter mode for many messages. Rows whose options are one token each: one left-padded forward pass per
        `batch_size` rows (images encoded once per row); a row with a longer option: scored as continuations (its
        prompt once, `continuation_logprobs`). A row that fails gets its exception, the others run."""
        self._check_open()
        if len(letters_per_row) != len(batch):
            raise ValueError(f"{len(batch)} messages but {len(letters_per_row)} lists of letters")
        images_kwargs = self.dataset_image_kwargs(dataset)
        results: list[dict[str, float] | BaseException | None] = [None] * len(batch)
        ready: list[tuple[int, tuple[tuple[list[dict[str, Any]], list[Any]], dict[str, list[int]]]]] = []
        for i, (msgs, letters) in enumerate(zip(batch, letters_per_row)):
            try:
                conversation = self._conversation(self.prepare(msgs))
                tokens = likelihood.option_token_ids(self.processor.tokenizer, self._prompt_text(conversation), letters)
                if likelihood.one_pass(tokens):
                    ready.append((i, (conversation, tokens)))
                else:
                    results[i] = self._score_continuations(conversation, tokens, images_kwargs)
            except Exception as exc:  # a bad row fails alone
                results[i] = exc
        for start in range(0, len(ready), self.batch_size):
            chunk = ready[start : start + self.batch_size]
            scored = batch_or_each([item for _, item in chunk], lambda items: self._score_options(items, images_kwargs))
            for (i, _), result in zip(chunk, scored):
                results[i] = result
        return results  # type: ignore[return-value]

    def option_tokens(self, msgs: Sequence[Any], letters: Sequence[str]) -> dict[str, list[int]]:
        """The answer tokens each option letter is scored by after this message's prompt (`vlm.local.likelihood`);
        all of one token means the letter mode's one-pass path."""
        conversation = self._conversation(self.prepare(msgs))
        return likelihood.option_token_ids(self.processor.tokenizer, self._prompt_text(conversation), letters)

    def continuation_logprobs(
        self, msgs: Sequence[Any], continuations: Sequence[str], dataset: str | None = None
    ) -> list[tuple[float, int]]:
        """Continuation mode for one message: (summed log-probability, token count) of each continuation written
        after generation's prompt. The prompt and its images run once; each continuation reuses the prompt's
        key/value cache. Length-normalise with `vlm.local.likelihood.length_normalised` (by characters, as
        lm-evaluation-harness's acc_norm)."""
        self._check_open()
        conversation = self._conversation(self.prepare(msgs))
        text = self._prompt_text(conversation)
        ids = [likelihood.answer_token_ids(self.processor.tokenizer, text, c) for c in continuations]
        inputs = self._device_inputs([conversation], self.dataset_image_kwargs(dataset))
        return likelihood.continuation_scores(self.model, inputs, ids, self._pad_id)

    def continuation_logprobs_batch(
        self, batch: Sequence[Sequence[Any]], continuations_per_row: Sequence[Sequence[str]], dataset: str | None = None
    ) -> list[list[tuple[float, int]] | BaseException]:
        """`continuation_logprobs` for each message in turn; a row that fails gets its exception."""
        if len(continuations_per_row) != len(batch):
            raise ValueError(f"{len(batch)} messages but {len(continuations_per_row)} lists of continuations")
        results: list[list[tuple[float, int]] | BaseException] = []
        for msgs, continuations in zip(batch, continuations_per_row):
            try:
                results.append(self.continuation_logprobs(msgs, continuations, dataset))
            except Exception as exc:  # a bad row fails alone
                results.append(exc)
        return results

    def _score_options(
        self, items: list[tuple[tuple[list[dict[str, Any]], list[Any]], dict[str, list[int]]]],
        images_kwargs: dict[str, Any] | None,
    ) -> list[dict[str, float]]:
        inputs = self._device_inputs([conversation for conversation, _ in items], images_kwargs)
        logprobs, _ = likelihood.prompt_pass(self.model, inputs, self._pad_id)
        return [{letter: float(row[ids[0]]) for letter, ids in tokens.items()} for row, (_, tokens) in
                zip(logprobs, items)]

    def _score_continuations(
        self, conversation: tuple[list[dict[str, Any]], list[Any]], tokens: dict[str, list[int]],
        images_kwargs: dict[str, Any] | None,
    ) -> dict[str, float]:
        """A letter-mode row with an option of several tokens: each option's summed log-probability."""
        inputs = self._device_inputs([conversation], images_kwargs)
        scores = likelihood.continuation_scores(self.model, inputs, list(tokens.values()), self._pad_id)
        return {letter: logprob for letter, (logprob, _) in zip(tokens, scores)}

    def _prompt_text(self, conversation: tuple[list[dict[str, Any]], list[Any]]) -> str:
        """The rendered chat template with its generation prompt, or open at its prefill (placeholders unexpanded), as
        generation renders it."""
        text = self.processor.apply_chat_template(conversation[0], **template_flags([conversation[0]]), tokenize=False)
        return text[0] if isinstance(text, list) else text

    def _device_inputs(
        self, conversations: list[tuple[list[dict[str, Any]], list[Any]]], images_kwargs: dict[str, Any] | None
    ) -> Any:
        """The processor's tensors for a padded batch, on the model's input device (as `_generate` prepares them)."""
        batch = self._model_inputs(conversations, images_kwargs) if images_kwargs else self._model_inputs(conversations)
        return batch.to(self.input_device, dtype=self.torch_dtype)

    def _check_open(self) -> None:
        if self.model is None:
            raise RuntimeError(f"{self.model_path}: this model was closed; build it again to score")

    # ---------------------------------------------------------------------------------------------- records

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "model_path": self.model_path,
            "local_path": str(self.local_path),
            "model_class": self._loaded["model_class"],
            "processor_class": self._loaded["processor_class"],
            "image_only_processor": self._loaded["image_only_processor"],
            "video_input": self.video_input,
            "video_processor": self._loaded["video_processor"],
            "nframe": self.nframe,
            "fps": self.fps,
            "video_as_images": self.video_as_images,
            "audio_sample_rate": self.audio_rate,
            "dtype": self.dtype,
            "torch_dtype": str(self.torch_dtype).removeprefix("torch."),
            "device": self.device,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "do_sample": self.temperature > 0,
            "batch_size": self.batch_size,
            "generate_kwargs": dict(self.generate_kwargs),
            "generation": self.generation_record(),
            "system_prompt": self.system_prompt,
            "image_pixel_limits": self.pixel_limits,
            "preset": self.preset_record(),
            "prompt_family": family_record(self.prompts),
            "modalities": sorted(self.modalities),
            "interleave": self.interleave,
        }

    def preset_record(self) -> dict[str, Any] | None:
        """The preset used (name, VLMEvalKit's name, prompt styles, values) and `overridden`: the preset values the
        user's settings replaced; None without a preset."""
        if self.preset is None:
            return None
        return {**self.preset, "overridden": list(self._preset_overridden)}

    def generation_record(self) -> dict[str, Any]:
        """What generate is asked for: the generate() arguments passed, where max_new_tokens came from, and the
        checkpoint's settings kept and overridden (`vlm.local.decoding.generation_record` says what each field holds)."""
        return decoding.generation_record(
            self._generation_options(), self._checkpoint_kept, self._checkpoint_overridden, self.max_new_tokens_source
        )

    # ---------------------------------------------------------------------------------------------- release

    def close(self) -> None:
        """Drop the model, its processor and their tensors so their memory (GPU included) can be reclaimed.

        The object keeps its settings() but cannot generate afterwards. Calling close() again does nothing."""
        import gc

        import torch

        if getattr(self, "model", None) is None and getattr(self, "processor", None) is None:
            return
        self.model = None
        self.processor = None
        gc.collect()  # transformers modules hold reference cycles: collect them before the CUDA cache is emptied
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
