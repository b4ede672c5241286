"""vlmkit.perf.run_mode.perf_options_for called directly: the perf options of one (served model, dataset) pair
of `vlmkit run --mode perf`, and the one-line refusal of a local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlmkit.core.errors import DataError
from vlmkit.perf.run_mode import perf_options_for
from vlmkit.run.resolve import API, LOCAL, ModelSpec


def test_a_served_models_options(tmp_path: Path) -> None:
    spec = ModelSpec("my model", "vlm.api.openai_compat:OpenAICompatModel",
                     {"model": "served-id", "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-t",
                      "system_prompt": "Be brief.", "video_mode": "video_url", "nframe": 4}, API)
    options = perf_options_for(spec, work_dir=tmp_path, dataset="MME", nproc=3, limit=10, max_tokens=32, seed=5)
    assert (options.model, options.api_base, options.api_key) == ("served-id", "http://127.0.0.1:9/v1", "sk-t")
    assert options.api_class == "vlm.api.openai_compat:OpenAICompatModel"
    assert (options.concurrency, options.num_requests, options.max_tokens, options.seed) == ([3], 10, 32, 5)
    assert (options.video_mode, options.nframe, options.system_prompt) == ("video_url", 4, "Be brief.")
    assert options.out_dir.parents[2] == tmp_path  # WORK_DIR/<model folder>/MME/perf
    assert options.out_dir.parts[-2:] == ("MME", "perf")


def test_defaults_when_the_run_gives_none(tmp_path: Path) -> None:
    spec = ModelSpec("m", "vlm.api.openai_compat:OpenAICompatModel", {"model": "x"}, API)
    options = perf_options_for(spec, work_dir=tmp_path, dataset="D", nproc=1, limit=None, max_tokens=None)
    assert options.max_tokens == 256 and options.num_requests is None
    assert (options.video_mode, options.nframe, options.system_prompt) == ("frames", 8, None)
    assert options.api_base.startswith("http")  # the API classes' default base URL
    assert options.out_dir == tmp_path / "m" / "D" / "perf"


def test_a_local_model_is_refused(tmp_path: Path) -> None:
    spec = ModelSpec("tiny", "vlm.local.generic:HFVisionModel", {"model_path": "x"}, LOCAL)
    with pytest.raises(DataError, match=r"^--mode perf load-tests a served model; tiny is local: give --api-base URL"):
        perf_options_for(spec, work_dir=tmp_path, dataset="D", nproc=1, limit=None, max_tokens=None)
