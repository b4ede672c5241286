"""The journal's fingerprint holds what answers depend on, and nothing about where the server is."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

from vlmkit.run.resume import answer_kwargs, checkpoint_identity, differences, run_fingerprint, same_settings

DATASET = SimpleNamespace(name="MyYN", file_md5="0" * 32)


def fingerprint(**kwargs):
    return run_fingerprint("served", "vlm.api.openai_compat:OpenAICompatModel", {"model": "m", **kwargs}, DATASET)


def test_connection_settings_are_not_part_of_it():
    here = fingerprint(api_base="http://127.0.0.1:8000/v1", api_key="sk-a", timeout=60.0, retries=3, max_tokens=16)
    there = fingerprint(api_base="http://10.0.0.2:9000/v1/chat/completions", api_key="sk-b", timeout=5.0, retries=0,
                        pool_size=8, max_tokens=16)
    assert here == there and same_settings(here, there)
    assert "sk-a" not in str(here)


def test_generation_settings_and_the_dataset_are():
    base = fingerprint(max_tokens=16, temperature=0.0)
    assert not same_settings(base, fingerprint(max_tokens=32, temperature=0.0))
    assert not same_settings(base, fingerprint(max_tokens=16, temperature=0.0, system_prompt="Be brief."))
    assert not same_settings(base, fingerprint(max_tokens=16, temperature=0.0, extra_body={"top_k": 1}))
    other_data = run_fingerprint("served", base["target"], {"model": "m", "max_tokens": 16, "temperature": 0.0},
                                 SimpleNamespace(name="MyYN", file_md5="1" * 32))
    assert differences(base, other_data) == ["dataset_md5"]
    assert differences(base, fingerprint(max_tokens=32, temperature=0.0)) == ["max_tokens"]


def test_a_journal_written_before_still_matches():
    """Headers written when the fingerprint still held api_base and the like are compared without them."""
    old = fingerprint(max_tokens=16)
    old["model_kwargs"]["api_base"] = "http://127.0.0.1:1234/v1"
    assert same_settings(old, fingerprint(max_tokens=16))
    assert not same_settings(None, fingerprint(max_tokens=16))


def test_a_journal_written_before_the_model_classes_moved_still_matches():
    """vlm/hf became vlm/local: a header naming a class by its old path is the same model, another class is not."""
    now = run_fingerprint("vlmkit-tiny", "vlm.local.generic:HFVisionModel", {"model_path": "x"}, DATASET)
    before = {**now, "target": "vlm.hf.generic:HFVisionModel"}
    assert same_settings(before, now) and differences(before, now) == []
    assert not same_settings({**now, "target": "vlm.hf.audio_models:HFAudioModel"}, now)
    assert not same_settings({**now, "target": "my_models:HFVisionModel"}, now)


def test_a_local_checkpoint_is_its_files_not_its_path(tmp_path):
    ckpt = tmp_path / "a" / "ckpt"
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text('{"model_type": "llava"}')
    (ckpt / "model.safetensors").write_bytes(b"\0" * 64)
    (ckpt / "README.md").write_text("notes")
    copy = tmp_path / "b" / "moved"
    shutil.copytree(ckpt, copy)
    assert checkpoint_identity(str(ckpt)) == ["config.json:23", "model.safetensors:64"]
    assert answer_kwargs({"model_path": str(ckpt), "device": "cuda:0"}) == answer_kwargs({"model_path": str(copy)})
    (copy / "model.safetensors").write_bytes(b"\0" * 65)  # other weights
    assert answer_kwargs({"model_path": str(ckpt)}) != answer_kwargs({"model_path": str(copy)})
    assert checkpoint_identity("Qwen/Qwen2.5-VL-7B-Instruct") == "Qwen/Qwen2.5-VL-7B-Instruct"
