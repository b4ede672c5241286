"""The identity of a journal's answers: when a rerun reuses an answer, and when it asks again.

An answer in `journal.jsonl` holds for a rerun when two things match, and nothing else is compared:

1. The pair's fingerprint, the journal's header line (`run_fingerprint`). Held: the model's identity (the name
   typed, its class, the served model id, or a local checkpoint as the names and sizes of its config/weights files,
   so that a copy of the weights elsewhere is the same model), its generation settings (temperature, max_tokens,
   system prompt, extra_body, video sampling, image size limits, ...: every constructor kwarg that is not in
   NOT_ANSWER_KWARGS), the dataset's name and MD5, and a likelihood run's `--mcq-mode`. Not held: where the server is and how it is reached
   (api_base, api_key, timeout, retries, connection pool) and how the work is split (batch_size, device): moving a
   server to another port, or writing `.../v1` instead of `.../v1/chat/completions`, keeps every answer. Headers
   written before these rules (connection settings in them, model classes under their paths before the move to
   vlm/local) still match (`same_settings`).
   A journal whose fingerprint differs is set aside, kept, with the result files made from it, and the pair starts
   afresh (`set_aside_stale`); `--reuse` keeps its answers instead, and `--mode eval` scores them as they are (the
   runner's note says which settings differ).
2. Each record's request (`request_fields`, compared by `same_request`): the prompt as stored (media as paths or
   URLs, data URLs as their sha256), its `prompt_digest` (each local media file by its content, so moving $LMUData
   keeps the answers and a file rewritten in place does not), and the row's own generation parameters. Records
   written before the digest are compared by `prompt_hash` (media by path); a record with neither, written by
   another tool, is taken as it is. A record whose request differs is asked again (the runner says which rows).

Whether `--mode eval` may replace a results.json is decided with the result files (vlmkit.outputs.run_files
.better_results: never by one that holds fewer answers).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlmkit.core.contracts import DatasetIdentity
from vlmkit.core.files import md5_of, move_aside
from vlmkit.core.message import normalise_conversation
from vlmkit.run.journal import Journal

log = logging.getLogger("vlmkit")
# one encoder for the prompt hashes (json.dumps builds a new one per call with sort_keys)
_SORTED = json.JSONEncoder(sort_keys=True)

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


# -- 1. the pair's fingerprint -------------------------------------------------------------------------------------
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


def run_fingerprint(name: str, target: str, kwargs: dict[str, Any], dataset: DatasetIdentity,
                    mcq_mode: str = "generate") -> dict[str, Any]:
    """The journal header of one (model, dataset) pair. A likelihood run (`--mcq-mode logits|continuation`) holds
    its mode, so a rerun in another mode never takes its answers for generated ones (nor the reverse); a generation
    run's header has no `mcq_mode`, as journals written before the flag."""
    fingerprint = {
        "model": name,
        "target": target,
        "model_kwargs": answer_kwargs(kwargs),
        "dataset": dataset.name,
        "dataset_md5": dataset.file_md5,
    }
    if mcq_mode != "generate":
        fingerprint["mcq_mode"] = mcq_mode
    return fingerprint


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


def set_aside_stale(journal: Journal, result_files: Sequence[Path], *, reuse: bool) -> None:
    """A journal written under other settings is moved aside (kept) with the result files made from it, so a score
    file of the earlier settings never stands beside a results.json of these (a run that then scores nothing would
    leave it there, read as current). reuse (`--reuse`): its answers are kept, with a warning."""
    stored = journal.stored_fingerprint()
    if stored is None or same_settings(stored, journal.fingerprint):
        return
    what = ", ".join(differences(stored, journal.fingerprint))
    if reuse:
        log.warning("%s was written under other settings (%s differ); --reuse keeps its answers", journal.path, what)
        return
    aside = journal.set_aside()
    moved = [move_aside(path).name for path in result_files if path.is_file()]
    log.warning("%s was written under other settings (%s differ); moved to %s%s and starting afresh",
                journal.path, what, aside.name, f" (with {', '.join(moved)})" if moved else "")


# -- 2. each record's request --------------------------------------------------------------------------------------
def prompt_for_record(msgs: Sequence[Any]) -> list[dict[str, Any]]:
    """The prompt as stored: media as paths or URLs, data URLs replaced by their sha256 (never base64)."""
    stored = []
    for turn in normalise_conversation(msgs):
        parts = []
        for part in turn["content"]:
            value = part["value"]
            if part["type"] != "text" and value.startswith("data:"):
                value = "sha256:" + hashlib.sha256(value.encode()).hexdigest()
            parts.append({"type": part["type"], "value": value})
        stored.append({"role": turn["role"], "content": parts})
    return stored


def prompt_hash(stored_prompt: list[dict[str, Any]]) -> str:
    """The stored prompt's hash (media by path): what records written before `prompt_digest` are compared by."""
    return hashlib.sha256(_SORTED.encode(stored_prompt).encode()).hexdigest()[:16]


def prompt_digest(stored_prompt: list[dict[str, Any]]) -> str:
    """The prompt's hash with each local media file taken by its content (MD5), not its path: a resume after
    $LMUData or the media moved elsewhere still finds every prompt unchanged, and a file rewritten in place does not."""
    by_content = [
        {"role": turn["role"], "content": [{"type": p["type"], "value": _media_identity(p)} for p in turn["content"]]}
        for turn in stored_prompt
    ]
    return hashlib.sha256(_SORTED.encode(by_content).encode()).hexdigest()[:16]


def _media_identity(part: dict[str, Any]) -> str:
    value = part["value"]
    if part["type"] == "text" or value.startswith(("sha256:", "http://", "https://")):
        return value
    path = Path(value)
    try:
        stat = path.stat()
    except OSError:
        return value  # gone: compared by its path (the model will say what is wrong with it)
    return "md5:" + _file_md5(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=65536)
def _file_md5(path: str, size: int, mtime_ns: int) -> str:  # size and mtime key the cache only
    return md5_of(Path(path))


def request_fields(msgs: Sequence[Any]) -> dict[str, Any]:
    """A record's `prompt`, `prompt_hash` and `prompt_digest`, in that order (the journal's key order)."""
    stored = prompt_for_record(msgs)
    hashed = prompt_hash(stored)
    # without local media files the digest hashes the very same structure as the hash: the same value
    local_media = any(_media_identity(p) != p["value"] for turn in stored for p in turn["content"] if p["type"] != "text")
    return {"prompt": stored, "prompt_hash": hashed, "prompt_digest": prompt_digest(stored) if local_media else hashed}


def same_request(record: dict[str, Any], msgs: Sequence[Any], params: dict[str, Any] | None) -> bool:
    """Whether a journalled answer was asked with the prompt and per-row parameters this run builds for its row:
    by `prompt_digest` (media by content), or for records written before it by `prompt_hash` (media by path). A
    record with neither, written by another tool, is taken as it is."""
    stored = prompt_for_record(msgs)
    if record.get("prompt_digest") is not None:
        if record["prompt_digest"] != prompt_digest(stored):
            return False
    elif record.get("prompt_hash") is not None and record["prompt_hash"] != prompt_hash(stored):
        return False
    params = json.loads(json.dumps(params, default=str)) if params else None
    return (record.get("params") or None) == params
