import pytest

from vlmkit.core.errors import ConfigError
from vlmkit.core.registry import RegistryError
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.outputs.layout import model_folder_name

# The classes as results.json names them (`model.target`), written out: a renamed class shows here.
API_TARGET = "vlm.api.openai_compat:OpenAICompatModel"
HF_TARGET = "vlm.local.generic:HFVisionModel"
VLLM_TARGET = "vlm.local.vllm_engine:VLLMModel"


def test_alias_resolves_to_the_generic_local_path():
    spec = resolve_model("qwen-vl")
    assert spec.target == HF_TARGET
    assert spec.kwargs["model_path"] == "Qwen/Qwen2.5-VL-7B-Instruct"


def test_api_base_makes_any_name_a_served_model_and_hides_the_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = resolve_model("my-served-model", ModelOptions(api_base="http://127.0.0.1:9/v1", api_key="sk-secret", max_tokens=7))
    assert spec.target == API_TARGET and spec.is_api
    assert spec.kwargs == {"model": "my-served-model", "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-secret", "max_tokens": 7}
    assert "api_key" not in spec.public_kwargs()


def test_key_and_base_come_from_the_usual_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/v1")
    spec = resolve_model("gpt-4o-mini")
    assert spec.kwargs["api_key"] == "sk-env" and spec.kwargs["api_base"] == "http://127.0.0.1:9/v1"


def test_model_path_and_local_dirs(tmp_path):
    spec = resolve_model("mine", ModelOptions(model_path=str(tmp_path), max_tokens=5))
    assert spec.target == HF_TARGET and spec.kwargs == {"model_path": str(tmp_path), "max_new_tokens": 5}
    assert resolve_model(str(tmp_path)).kwargs["model_path"] == str(tmp_path.resolve())


def test_unknown_model_says_what_to_do():
    with pytest.raises(RegistryError, match=r"Did you mean: qwen-vl.*--api-base URL.*--model-path DIR"):
        resolve_model("qwen-v")


def test_folder_names_are_safe():
    assert model_folder_name("Qwen/Qwen2.5-VL-7B-Instruct") == "Qwen2.5-VL-7B-Instruct"
    assert model_folder_name("../../etc/x y") == "x_y"


def test_video_sampling_options_reach_both_model_kinds(tmp_path):
    api = resolve_model("served", ModelOptions(api_base="http://127.0.0.1:9/v1", fps=2.0, video_mode="video_url"))
    assert api.kwargs["fps"] == 2.0 and api.kwargs["video_mode"] == "video_url" and "nframe" not in api.kwargs
    local = resolve_model("mine", ModelOptions(model_path=str(tmp_path), nframe=4))
    assert local.kwargs["nframe"] == 4 and "video_mode" not in local.kwargs
    with pytest.raises(RegistryError, match="video_url is for served models"):
        resolve_model("mine", ModelOptions(model_path=str(tmp_path), video_mode="video_url"))


def test_timeout_and_retries_reach_api_models_only(tmp_path):
    api = resolve_model("served", ModelOptions(api_base="http://127.0.0.1:9/v1", timeout=5, retries=0))
    assert api.kwargs["timeout"] == 5.0 and api.kwargs["retries"] == 0
    model = api.build()
    assert model.settings()["timeout"] == 5.0 and model.settings()["retries"] == 0
    local = resolve_model("mine", ModelOptions(model_path=str(tmp_path), timeout=5, retries=0))
    assert "timeout" not in local.kwargs and "retries" not in local.kwargs


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (ModelOptions(api_base="http://127.0.0.1:9/v1", timeout=0), "--timeout"),
        (ModelOptions(api_base="http://127.0.0.1:9/v1", timeout="30"), "--timeout"),
        (ModelOptions(api_base="http://127.0.0.1:9/v1", retries=-1), "--retries"),
        (ModelOptions(api_base="http://127.0.0.1:9/v1", retries=1.5), "--retries"),
        (ModelOptions(api_base="http://127.0.0.1:9/v1", max_tokens=0), "--max-tokens"),
        (ModelOptions(api_base="127.0.0.1:8000"), "--api-base"),
        (ModelOptions(api_base="ftp://127.0.0.1:8000/v1"), "--api-base"),
    ],
)
def test_settings_that_cannot_work_are_config_errors(options, flag):
    from vlmkit.core.errors import ConfigError

    with pytest.raises(ConfigError, match=flag):
        resolve_model("served", options)


def test_a_bad_base_from_the_environment_names_the_variable(monkeypatch):
    from vlmkit.core.errors import ConfigError

    monkeypatch.setenv("OPENAI_API_BASE", "localhost:8000")
    with pytest.raises(ConfigError, match=r"\$OPENAI_API_BASE"):
        resolve_model("gpt-4o-mini")


# --backend vllm -----------------------------------------------------------------------------------------------------


@pytest.fixture
def vllm_importable(monkeypatch):
    """`importlib.util.find_spec("vllm")` finds a module (the real one where installed, else an empty stand-in): what
    resolve checks before it picks the vLLM class. Nothing here builds a model."""
    import importlib.machinery
    import importlib.util
    import sys
    import types

    if importlib.util.find_spec("vllm") is None:
        stand_in = types.ModuleType("vllm")
        stand_in.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
        monkeypatch.setitem(sys.modules, "vllm", stand_in)


def test_backend_vllm_runs_the_same_local_names_on_the_vllm_class(vllm_importable, tmp_path):
    on_hf = resolve_model("qwen-vl", ModelOptions(max_tokens=16, system_prompt="Be brief.", nframe=4))
    on_vllm = resolve_model("qwen-vl", ModelOptions(max_tokens=16, system_prompt="Be brief.", nframe=4,
                                                    backend="vllm", tensor_parallel=2))
    assert on_vllm.target == VLLM_TARGET and on_vllm.is_local and not on_vllm.is_api
    # the same kwargs (model_path, the preset that names the model's prompts, generation settings), plus the GPUs
    assert on_vllm.kwargs == {**on_hf.kwargs, "tensor_parallel_size": 2}
    assert on_vllm.kwargs["preset"]["name"] == "Qwen2.5-VL-7B-Instruct"
    folder = resolve_model("mine", ModelOptions(model_path=str(tmp_path), backend="vllm"))
    assert folder.target == VLLM_TARGET and folder.kwargs == {"model_path": str(tmp_path)}


@pytest.mark.parametrize("options", [ModelOptions(backend="vllm"),
                                     ModelOptions(backend="vllm", api_base="http://127.0.0.1:9/v1")])
def test_backend_vllm_refuses_served_models_in_one_line(vllm_importable, options):
    from vlmkit.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"--backend vllm runs local weights; gpt-4o-mini is a served model") as caught:
        resolve_model("gpt-4o-mini", options)
    assert "\n" not in str(caught.value)


def test_backend_vllm_without_vllm_names_the_install_command(monkeypatch):
    import sys

    from vlmkit.core.errors import ConfigError

    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` fails, installed or not
    with pytest.raises(ConfigError) as caught:
        resolve_model("vlmkit-tiny", ModelOptions(backend="vllm"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("--backend vllm needs vLLM")
    assert "`pip install vllm`" in message and 'README section "--backend vllm"' in message


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (ModelOptions(backend="tensorrt"), "--backend must be one of transformers, vllm"),
        (ModelOptions(backend="vllm", tensor_parallel=0), "--tensor-parallel must be a whole number"),
        (ModelOptions(tensor_parallel=2), "--tensor-parallel is for --backend vllm"),
    ],
)
def test_backend_settings_that_cannot_work_are_config_errors(options, match):
    from vlmkit.core.errors import ConfigError

    with pytest.raises(ConfigError, match=match):
        resolve_model("vlmkit-tiny", options)


def test_vllm_args_become_engine_kwargs_read_as_json_where_they_parse():
    options = ModelOptions(backend="vllm", vllm_args=["max_model_len=8192", "enforce_eager=true", "quantization=fp8",
                                                      "limit_mm_per_prompt={\"image\": 4}"])
    options.check()
    assert options.engine_kwargs() == {"max_model_len": 8192, "enforce_eager": True, "quantization": "fp8",
                                       "limit_mm_per_prompt": {"image": 4}}


@pytest.mark.parametrize(("backend", "args", "message"), [
    ("transformers", ["max_model_len=8192"], "--vllm-arg is for --backend vllm"),
    ("vllm", ["max_model_len"], "--vllm-arg takes KEY=VALUE"),
    ("vllm", ["max model len=1"], "--vllm-arg takes KEY=VALUE"),
])
def test_a_vllm_arg_that_cannot_work_is_one_line(backend, args, message):
    with pytest.raises(ConfigError, match=message) as caught:
        ModelOptions(backend=backend, vllm_args=args).check()
    assert "\n" not in str(caught.value)


def test_resolve_names_no_model_class() -> None:
    """Which class a name runs on is the model registry's to say: resolve.py holds no "vlm...:Class" string."""
    import ast
    import re

    import vlmkit.run.resolve as resolve

    tree = ast.parse(open(resolve.__file__, encoding="utf-8").read())
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert [s for s in strings if re.search(r"\bvlm\.[\w.]+:\w+", s)] == []


# --mode eval, and an install without the `local` extra ------------------------------------------------------------


def fingerprint(spec) -> dict:
    """The journal header the runner writes for spec on a dataset `D` (vlmkit.run.resume.run_fingerprint)."""
    from types import SimpleNamespace

    from vlmkit.run.resume import run_fingerprint

    return run_fingerprint(spec.name, spec.target, spec.kwargs, SimpleNamespace(name="D", file_md5="0" * 32))


def test_eval_takes_a_served_name_without_its_url_as_the_infer_run_did(monkeypatch):
    from vlmkit.run.resume import same_settings

    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    asked = resolve_model("my-served", ModelOptions(api_base="http://127.0.0.1:9/v1", max_tokens=7, temperature=0.5))
    scored = resolve_model("my-served", ModelOptions(max_tokens=7, temperature=0.5), scoring_only=True)
    assert scored.is_api and scored.target == asked.target == API_TARGET
    assert {k: v for k, v in scored.kwargs.items() if k != "api_base"} == {
        "model": "my-served", "api_key": asked.kwargs["api_key"], "max_tokens": 7, "temperature": 0.5}
    assert same_settings(fingerprint(asked), fingerprint(scored))  # the journal's answers are the ones scored
    # other generation settings are another journal (the runner then warns, and scores it as it is)
    assert not same_settings(fingerprint(asked), fingerprint(
        resolve_model("my-served", ModelOptions(max_tokens=8, temperature=0.5), scoring_only=True)))
    with pytest.raises(RegistryError, match=r"unknown model 'my-served'.*--api-base URL"):
        resolve_model("my-served", ModelOptions(max_tokens=7))  # asking it would need the URL


def test_eval_leaves_local_names_and_folders_local(tmp_path):
    assert resolve_model("vlmkit-tiny", scoring_only=True).is_local
    assert resolve_model("mine", ModelOptions(model_path=str(tmp_path)), scoring_only=True).is_local
    assert resolve_model(str(tmp_path), scoring_only=True).kwargs == {"model_path": str(tmp_path.resolve())}


@pytest.mark.parametrize(("blocked", "install"), [
    (("torch", "transformers"), 'pip install torch==2.13.0, then pip install -e ".[local]"'),
    (("transformers",), 'pip install -e ".[local]"'),
])
def test_a_local_name_without_the_local_extra_is_one_line_naming_it(monkeypatch, tmp_path, blocked, install):
    import sys

    for module in blocked:  # `import torch` fails as on `pip install -e .`
        monkeypatch.setitem(sys.modules, module, None)
    for name, options in (("vlmkit-tiny", ModelOptions()), ("mine", ModelOptions(model_path=str(tmp_path)))):
        with pytest.raises(RegistryError) as caught:
            resolve_model(name, options)
        assert str(caught.value) == (f"model {name!r} (local weights) needs the optional dependency {blocked[0]!r}, "
                                     f"which is not installed: {install}")
    assert resolve_model("vlmkit-tiny", scoring_only=True).is_local  # scoring journalled answers loads no weights
    assert resolve_model("m", ModelOptions(api_base="http://127.0.0.1:9/v1")).is_api  # served models need neither
