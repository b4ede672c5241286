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
    with pytest.raises(RegistryError, match=r"Did you mean MMBench_DEV_EN \(names are case-sensitive\)\?"):
        registry.get("mmbench_dev_en")


def benchmarks() -> Registry:
    """MMBench_DEV_EN and MMBench_dev_en are two benchmarks (VLMEvalKit's and Parrot's), equal but for case."""
    registry = Registry("dataset")
    registry.add("MMBench_DEV_EN", "collections:OrderedDict", "MMBench v1.0 dev, English")
    registry.add("MMBench_DEV_EN_V11", "collections:OrderedDict", "MMBench v1.1 dev, English")
    registry.add("MMBench_dev_en", "collections:OrderedDict", "Parrot's multilingual MMBench, en")
    registry.add("MMBench_DEV_CN", "collections:OrderedDict", "MMBench v1.0 dev, Chinese")
    registry.add("POPE", "collections:OrderedDict", "object hallucination")
    return registry


def message_for(registry: Registry, name: str) -> str:
    with pytest.raises(RegistryError) as caught:
        registry.get(name)
    return str(caught.value)


def test_a_name_equal_but_for_case_is_suggested_first_and_said_plainly():
    registry = benchmarks()
    # Only one name is `pope` in another case: said plainly, nothing else is close (POPE is 4 letters).
    assert message_for(registry, "pope") == ("unknown dataset 'pope'. Did you mean POPE (names are case-sensitive)? "
                                             "(`vlmkit list datasets` shows them all)")
    # Two are: both, in the registry's order and told apart, before the close ones (compared case-insensitively:
    # mmbench_dev_cn is one letter off, mmbench_dev_en_v11 four added).
    message = message_for(registry, "mmbench_dev_en")
    assert message == (
        "unknown dataset 'mmbench_dev_en'. Did you mean MMBench_DEV_EN (MMBench v1.0 dev, English) or MMBench_dev_en "
        "(Parrot's multilingual MMBench, en) (names are case-sensitive)? Also close: MMBench_DEV_CN, "
        "MMBench_DEV_EN_V11. (`vlmkit list datasets` shows them all)"
    )


def test_close_names_are_compared_whatever_the_case():
    registry = benchmarks()
    # `mmbench_dev_em` is one letter from MMBench_DEV_EN and MMBench_dev_en once case is set aside; the tie goes to
    # the one closer as typed (lower case: MMBench_dev_en), then the registry's order.
    assert "Did you mean: MMBench_dev_en, MMBench_DEV_EN, MMBench_DEV_CN?" in message_for(registry, "mmbench_dev_em")
    assert "Did you mean: MMBench_DEV_EN, MMBench_dev_en, MMBench_DEV_CN?" in message_for(registry, "MMBench_DEV_EM")
    assert "Did you mean" not in message_for(registry, "ChartQA_TEST")


def test_suggestions_split_same_case_from_close_names():
    from vlmkit.core.registry import suggestions

    names = ["qwen-vl", "Qwen-VL", "qwen2-vl", "llava"]
    assert suggestions("QWEN-VL", names) == (["qwen-vl", "Qwen-VL"], ["qwen2-vl"])
    assert suggestions("llava", names) == ([], [])  # itself is no suggestion: `get` finds it
    assert suggestions("lava", names, cutoff=0.99) == ([], [])


def test_missing_optional_dependency_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "needs_cv.py").write_text("import cv2_not_installed_here\nclass X: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry("model")
    registry.add("m", "needs_cv:X")
    with pytest.raises(RegistryError, match="needs the optional dependency 'cv2_not_installed_here'"):
        registry.build("m")


def test_a_missing_optional_module_names_the_command_that_installs_it(monkeypatch):
    from vlmkit.core.registry import require_modules

    require_modules(["json", "csv"], what="x")  # present: nothing said
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails here as on an API-only install
    with pytest.raises(RegistryError) as caught:
        require_modules(["json", "torch", "transformers"], what="model 'm' (local weights)")
    assert str(caught.value) == ("model 'm' (local weights) needs the optional dependency 'torch', which is not "
                                 'installed: pip install torch==2.13.0, then pip install -e ".[local]"')
    with pytest.raises(RegistryError, match=r"'no_such_module_here', which is not installed: pip install "
                                            r"no_such_module_here$"):
        require_modules(["no_such_module_here"], what="m")


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
