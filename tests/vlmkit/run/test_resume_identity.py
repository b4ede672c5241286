"""The journal header's exact shape and the warnings that name what changed, with hand-written fingerprints: the
keys a header holds, values that are not plain JSON, and settings present on one side only."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from vlmkit.run.resume import answer_kwargs, differences, run_fingerprint, same_settings


def test_a_header_holds_exactly_these_keys() -> None:
    dataset = SimpleNamespace(name="MyYN", file_md5="ab" * 16)
    header = run_fingerprint("served", "vlm.api.openai_compat:OpenAICompatModel",
                             {"model": "m", "max_tokens": 8, "api_key": "sk-x"}, dataset)
    assert header == {
        "model": "served",
        "target": "vlm.api.openai_compat:OpenAICompatModel",
        "model_kwargs": {"model": "m", "max_tokens": 8},
        "dataset": "MyYN",
        "dataset_md5": "ab" * 16,
    }


def test_values_that_are_not_json_are_kept_as_text() -> None:
    kwargs = {"model": "m", "cache_dir": Path("/models/cache"), "sizes": (1, 2), "api_base": "http://x"}
    assert answer_kwargs(kwargs) == {"model": "m", "cache_dir": "/models/cache", "sizes": [1, 2]}


def test_differences_name_a_setting_present_on_one_side_only() -> None:
    base = {"model": "a", "target": "t", "model_kwargs": {"max_tokens": 8}, "dataset": "D", "dataset_md5": "0"}
    assert differences(base, dict(base)) == []
    added = {**base, "model_kwargs": {"max_tokens": 8, "temperature": 0.5}}
    assert differences(base, added) == ["temperature"] and differences(added, base) == ["temperature"]
    no_md5 = {k: v for k, v in base.items() if k != "dataset_md5"}
    assert differences(no_md5, base) == ["dataset_md5"] and differences(base, no_md5) == ["dataset_md5"]
    assert not same_settings(no_md5, base)
    # several at once, top-level names first (sorted), then the model's settings (sorted)
    other = {**base, "model": "b", "dataset": "E", "model_kwargs": {"max_tokens": 9, "top_p": 0.9}}
    assert differences(base, other) == ["dataset", "model", "max_tokens", "top_p"]


def test_differences_when_model_kwargs_are_not_a_mapping() -> None:
    base = {"model": "a", "target": "t", "model_kwargs": {"max_tokens": 8}}
    broken = {**base, "model_kwargs": None}
    assert differences(base, broken) == ["max_tokens"]  # None reads as no settings at all
    odd = {**base, "model_kwargs": ["max_tokens", 8]}
    assert differences(base, odd) == ["model_kwargs"]
    assert differences(odd, odd) == []
    assert differences(None, base) == ["no readable header"]
    assert not same_settings(None, base)
