import subprocess
import sys

import pytest

from vlmkit.core.registry import Registry, RegistryError


def test_lazy_build_with_defaults_and_overrides():
    registry = Registry("thing")
    registry.add("od", "collections:OrderedDict", a=1)
    built = registry.build("od", b=2)
    assert dict(built) == {"a": 1, "b": 2}


def test_unknown_name_suggests_close_ones():
    registry = Registry("dataset")
    registry.add("MMBench_DEV_EN", "collections:OrderedDict")
    registry.add("MMBench_DEV_CN", "collections:OrderedDict")
    with pytest.raises(RegistryError, match="Did you mean: MMBench_DEV_EN"):
        registry.get("MMBench_DEV_EM")
    with pytest.raises(RegistryError, match="Did you mean: MMBench_DEV_EN"):
        registry.get("mmbench_dev_en")


def test_missing_optional_dependency_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "needs_cv.py").write_text("import cv2_not_installed_here\nclass X: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry("model")
    registry.add("m", "needs_cv:X")
    with pytest.raises(RegistryError, match="needs the optional dependency 'cv2_not_installed_here'"):
        registry.build("m")


def test_duplicate_and_malformed_entries_are_refused():
    registry = Registry("model")
    registry.add("a", "x:Y")
    with pytest.raises(ValueError):
        registry.add("a", "x:Z")
    with pytest.raises(ValueError):
        registry.add("b", "no_colon")


def test_listing_models_imports_no_torch():
    code = "import sys; from vlm.registry import model_registry; model_registry(); import vlmkit.cli.main; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_an_entry_says_what_it_is_and_an_unknown_provider_is_refused():
    registry = Registry("model")
    registry.add("served", "collections:OrderedDict", "a served one", provider="api", model="x")
    registry.add("mine", "collections:OrderedDict")
    assert registry.get("served").provider == "api" and registry.get("served").kwargs == {"model": "x"}
    assert registry.get("mine").provider == ""  # a user's class: it takes only its entry's kwargs
    with pytest.raises(ValueError, match="provider must be one of api, local"):
        registry.add("odd", "collections:OrderedDict", provider="cloud")


# The kit's classes, written out as results.json names them (`model.target`).
GENERIC = "vlm.local.generic:HFVisionModel"
AUDIO = "vlm.local.audio_models:HFAudioModel"
OPENAI = "vlm.api.openai_compat:OpenAICompatModel"


def test_every_model_entry_says_api_or_local_and_runs_on_the_kit_class_it_did():
    from vlm.registry import api_class_target, is_api, is_local, model_registry, vllm_target

    entries = list(model_registry())
    served = {e.name for e in entries if is_api(e)}
    assert served == {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"}
    assert all(e.target == OPENAI and e.kwargs == {"model": e.name} for e in entries if is_api(e))
    local = [e for e in entries if is_local(e)]
    assert len(local) + len(served) == len(entries)  # no entry without a provider
    audio = {e.name for e in local if e.target == AUDIO}
    assert audio == {"Qwen2-Audio-7B-Instruct", "Qwen2.5-Omni-3B", "Qwen2.5-Omni-7B", "qwen2-audio", "qwen2.5-omni",
                     "qwen-omni"}
    assert all(e.target == GENERIC for e in local if e.name not in audio)
    assert api_class_target() == OPENAI and vllm_target() == "vlm.local.vllm_engine:VLLMModel"


def test_local_class_for_reads_the_folders_model_type(tmp_path):
    from vlm.registry import local_class_for

    for folder, config, expected in (("audio", '{"model_type": "qwen2_audio"}', AUDIO),
                                     ("omni", '{"model_type": "qwen2_5_omni"}', AUDIO),
                                     ("vl", '{"model_type": "qwen2_vl"}', GENERIC), ("broken", "{", GENERIC)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.json").write_text(config)
        assert local_class_for(tmp_path / folder) == expected, folder
    assert local_class_for(tmp_path / "missing") == GENERIC
