"""Local audio-language models: Qwen2-Audio, and the thinker (text generator) of Qwen2.5-Omni.

Both run on the generic path of `vlm.local.generic.HFVisionModel` (chat template, left-padded batches, usage); the
waveform is read with `vlmkit.core.audio` (mono, resampled to the feature extractor's rate, 16 kHz for both) and
passed to the processor as an array, which turns it into log-mel features and expands the audio tokens.
What differs per family:
- Qwen2-Audio (`qwen2_audio`): nothing beyond the generic path (`AutoModelForMultimodalLM` loads it). Its
  Whisper feature extractor covers 30 s: longer audio is cut there by the processor, as in transformers.
  It takes text and audio only (an image or video part fails with `UnsupportedInputError`).
- Qwen2.5-Omni (`qwen2_5_omni`): the checkpoint holds thinker, talker and token2wav; only the thinker is loaded
  (`enable_audio_output=False`: no talker, no speech output) and used for `generate`. It takes text, image,
  audio and video; video goes through the kit's torchvision-free Qwen video processor, and the processor's
  `video_second_per_grid` (which transformers computes from a fixed 2 fps) is set from each video's real
  sampled frame rate, as Qwen2.5-VL does with `second_per_grid_ts`.
`HFAudioModel` refuses, at construction, a checkpoint that takes no audio.
"""

from __future__ import annotations

from typing import Any

from vlm.local.generic import HFVisionModel

OMNI_MODEL_TYPES = frozenset({"qwen2_5_omni"})


class HFAudioModel(HFVisionModel):
    """A local model that takes audio (Qwen2-Audio, Qwen2.5-Omni thinker); arguments as `HFVisionModel`."""

    def __init__(self, model_path: str, **kwargs: Any) -> None:
        super().__init__(model_path, **kwargs)
        if "audio" not in self.modalities:
            raise ValueError(
                f"{model_path}: this checkpoint takes no audio (model type {self.model_type}); "
                "use HFVisionModel for vision-language models"
            )

    def _load_model(self) -> Any:
        if self.model_type not in OMNI_MODEL_TYPES:
            return super()._load_model()
        from transformers import Qwen2_5OmniForConditionalGeneration

        placement = {"device_map": "auto"} if self.device == "auto" else {}
        full = Qwen2_5OmniForConditionalGeneration.from_pretrained(
            str(self.local_path), dtype=self.torch_dtype, local_files_only=True, enable_audio_output=False, **placement
        )
        thinker = full.thinker
        return (thinker if placement else thinker.to(self.device)).eval()

    def _model_inputs(self, conversations: list[tuple[list[dict[str, Any]], list[Any]]],
                      images_kwargs: dict[str, Any] | None = None) -> Any:
        inputs = super()._model_inputs(conversations, images_kwargs)
        metadata = [m for _, metas in conversations for m in metas]
        if metadata and "video_second_per_grid" in inputs:
            import torch

            temporal = self.processor.video_processor.temporal_patch_size
            per_grid = [temporal / m.sampled_fps for m in metadata]
            inputs["video_second_per_grid"] = torch.tensor(per_grid, dtype=torch.float32)
        return inputs

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "omni_thinker_only": self.model_type in OMNI_MODEL_TYPES}
