"""What a journal's answers depend on, and nothing else: the fingerprint in its header line.

Held: the model's identity (the name typed, its class, the served model id, or a local checkpoint as the names and
sizes of its config/weights files, so that a copy of the weights elsewhere is the same model), its generation
settings (temperature, max_tokens, system prompt, extra_body, video sampling, image size limits, ...: every
constructor kwarg that is not in NOT_ANSWER_KWARGS) and how prompts are built (the dataset's name and MD5; each
journalled row also keeps its own `prompt_hash`, compared on resume).

Not held: where the server is and how it is reached (api_base, api_key, timeout, retries, connection pool),
and how the work is split (batch_size, device). Moving a server to another port, or writing `.../v1` instead of
`.../v1/chat/completions`, keeps every answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Model kwargs that never change an answer (a journal written under other values of these is the same run).
NOT_ANSWER_KWARGS = frozenset(
    {"api_base", "api_key", "timeout", "retries", "backoff", "pool_size", "batch_size", "device"}
)
# Model classes that moved when the house was laid out in floors (vlm/hf -> vlm/local): a journal written under the
# old path is the same model, so its answers are kept.
MOVED_TARGETS = {
    "vlm.hf.generic:HFVisionModel": "vlm.local.generic:HFVisionModel",
    "vlm.hf.audio_models:HFAudioModel": "vlm.local.audio_models:HFAudioModel",
    "vlm.vllm_engine:VLLMModel": "vlm.local.vllm_engine:VLLMModel",
}
# A local checkpoint's files that decide its answers (configs, weights, tokenizer, chat template).
CHECKPOINT_SUFFIXES = frozenset(
    {".json", ".safetensors", ".bin", ".pt", ".pth", ".model", ".txt", ".tiktoken", ".jinja"}
)


def checkpoint_identity(model_path: str) -> str | list[str]:
    """A local checkpoint directory as `name:size` of its config/weights files (sorted); anything else (a hub id)
    as given."""
    path = Path(model_path).expanduser()
    if not path.is_dir():
        return model_path
    files = [p for p in path.iterdir() if p.is_file() and p.suffix.lower() in CHECKPOINT_SUFFIXES]
    return sorted(f"{p.name}:{p.stat().st_size}" for p in files)


def answer_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The model kwargs that change answers, as plain JSON values (a local `model_path` as its checkpoint files)."""
    kept = {k: v for k, v in kwargs.items() if k not in NOT_ANSWER_KWARGS}
    if isinstance(kept.get("model_path"), str):
        kept["model_path"] = checkpoint_identity(kept["model_path"])
    return json.loads(json.dumps(kept, default=str, sort_keys=True))


def run_fingerprint(name: str, target: str, kwargs: dict[str, Any], dataset: Any) -> dict[str, Any]:
    """The journal header of one (model, dataset) pair."""
    return {
        "model": name,
        "target": target,
        "model_kwargs": answer_kwargs(kwargs),
        "dataset": dataset.name,
        "dataset_md5": dataset.file_md5,
    }


def same_settings(stored: dict[str, Any] | None, current: dict[str, Any]) -> bool:
    """Whether a journal's stored fingerprint describes the same answers as `current`. Journals written before
    the fingerprint left out the connection settings still match (those keys are ignored on both sides)."""
    return stored is not None and _comparable(stored) == _comparable(current)


def _comparable(fingerprint: dict[str, Any]) -> dict[str, Any]:
    out = dict(fingerprint)
    if isinstance(out.get("target"), str):
        out["target"] = MOVED_TARGETS.get(out["target"], out["target"])
    kwargs = out.get("model_kwargs")
    if isinstance(kwargs, dict):
        out["model_kwargs"] = {k: v for k, v in kwargs.items() if k not in NOT_ANSWER_KWARGS}
    return out


def differences(stored: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    """The settings that differ between two fingerprints (`max_tokens`, `dataset_md5`, ...), for a warning."""
    if stored is None:
        return ["no readable header"]
    a, b = _comparable(stored), _comparable(current)
    names = [k for k in sorted(set(a) | set(b)) if k != "model_kwargs" and a.get(k) != b.get(k)]
    ka, kb = a.get("model_kwargs") or {}, b.get("model_kwargs") or {}
    if isinstance(ka, dict) and isinstance(kb, dict):
        names += [k for k in sorted(set(ka) | set(kb)) if ka.get(k) != kb.get(k)]
    elif ka != kb:
        names.append("model_kwargs")
    return names
