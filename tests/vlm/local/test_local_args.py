"""The argument checks both local engines share (`vlm.local.args`): the same one-line refusal, before any loading."""

from __future__ import annotations

import pytest

from vlm.local.generic import HFVisionModel
from vlm.local.args import check_local_args
from vlm.local.vllm_engine import VLLMModel

BAD = [
    ({"dtype": "half"}, "dtype must be one of auto, bfloat16, float16, float32; got 'half'"),
    ({"batch_size": 0}, "batch_size must be at least 1; got 0"),
    ({"max_new_tokens": 0}, "max_new_tokens must be at least 1; got 0"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
@pytest.mark.parametrize("engine", [HFVisionModel, VLLMModel])
def test_both_engines_refuse_bad_arguments_alike(engine: type, kwargs: dict, message: str) -> None:
    # the path does not exist: the check must come first (no lookup, no vLLM import)
    with pytest.raises(ValueError) as caught:
        engine("/no/such/model", **kwargs)
    assert str(caught.value) == message


def test_good_arguments_pass() -> None:
    for dtype in ("auto", "bfloat16", "float16", "float32"):
        check_local_args(dtype, 1, None)
    check_local_args("auto", 64, 1)
