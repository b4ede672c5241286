import pytest

from vlmkit.registry import RegistryError
from vlmkit.resolve import API_TARGET, HF_TARGET, ModelOptions, model_folder_name, resolve_model


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
    from vlmkit.errors import ConfigError

    with pytest.raises(ConfigError, match=flag):
        resolve_model("served", options)


def test_a_bad_base_from_the_environment_names_the_variable(monkeypatch):
    from vlmkit.errors import ConfigError

    monkeypatch.setenv("OPENAI_API_BASE", "localhost:8000")
    with pytest.raises(ConfigError, match=r"\$OPENAI_API_BASE"):
        resolve_model("gpt-4o-mini")
