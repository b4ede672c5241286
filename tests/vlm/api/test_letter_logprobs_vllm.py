"""The served letter mode against a real vLLM server (issue 28): the demo MCQ's rows scored through the server's
top_logprobs give the figures the local transformers path computes, on the shipped vlmkit-tiny.

vlmkit-tiny answers with the option's word, never a letter (" purple" is one token; " B" is two), so the options
asked are the rows' option words: each is then one token, as letters are for the usual chat models. The server is
started once for the module by tools/check_vllm.py's Server (the interpreter from VLMKIT_TEST_VLLM_PYTHON, the weights'
renamed copy, the torchvision stand-in); without an interpreter that has vLLM the module is skipped, and
`pytest -rs` prints why. Starting vLLM takes a minute or more on a shared CPU."""

from __future__ import annotations

import math
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.vlm.local.test_vllm_backend import NO_VLLM, TINY, VLLM_PYTHON, _check_vllm_tool
from vlm.api.letter_logprobs import NO_OPTION_LISTED, ask_letters_batch
from vlm.api.openai_compat import OpenAICompatModel

pytestmark = pytest.mark.skipif(VLLM_PYTHON is None, reason=f"served letter mode against vLLM: {NO_VLLM}")

ROWS = 24
TOL = 1e-3  # the same float32 weights; vLLM's CPU kernels and transformers' differ by rounding only


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tool = _check_vllm_tool()
    root = tmp_path_factory.mktemp("served_letters")
    weights, _ = tool.served_copy(TINY, root / "weights")
    running = tool.Server(python=VLLM_PYTHON, model_dir=weights, log_path=root / "vllm.log", shim_dir=root / "shim")
    try:
        running.start()
    except RuntimeError as exc:
        running.stop()
        pytest.fail(f"{exc}; log tail: {running.log_text()[-2000:]}")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[list[str]], list[list[str]]]:
    import vlmkit

    dataset = vlmkit.build_dataset("vlmkit_demo_mcq", root=tmp_path_factory.mktemp("LMUData"), progress=False)
    msgs, letters, words = [], [], []
    for pos in range(ROWS):
        line = dataset.data.iloc[pos]
        filled = [L for L in string.ascii_uppercase if L in line and isinstance(line[L], str) and line[L].strip()]
        msgs.append(dataset.build_prompt(pos))
        letters.append(filled)
        words.append([str(line[L]) for L in filled])
    return msgs, letters, words


def test_served_figures_equal_the_local_path(server: Any, rows: tuple[list[Any], Any, Any]) -> None:
    import torch

    from vlm.local.generic import HFVisionModel

    msgs, _, words = rows
    served = OpenAICompatModel(_check_vllm_tool().SERVED_NAME, api_base=server.api_base, retries=0, timeout=300)
    try:
        got = ask_letters_batch(served, msgs, words, workers=4)
    finally:
        served.close()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    local = HFVisionModel(str(TINY), batch_size=8)
    try:
        expected = local.option_logprobs_batch(msgs, words)
    finally:
        local.close()
        torch.set_num_threads(before)
    listed = 0
    for mine, theirs in zip(got, expected):
        assert not isinstance(mine, BaseException), mine
        for word, figure in mine.logprobs.items():
            if figure != -math.inf:
                listed += 1
                assert figure == pytest.approx(theirs[word], abs=TOL)
            else:  # outside the top 20: then below the 20th figure listed
                assert theirs[word] <= mine.floor + TOL
        assert max(mine.logprobs, key=mine.logprobs.get) == max(theirs, key=theirs.get)
    assert listed >= 3 * ROWS  # most options are listed


def test_a_model_that_never_writes_a_letter_first_fails_its_rows(server: Any, rows: tuple[list[Any], Any, Any]
                                                                 ) -> None:
    msgs, letters, _ = rows
    served = OpenAICompatModel(_check_vllm_tool().SERVED_NAME, api_base=server.api_base, retries=0, timeout=300)
    try:
        got = ask_letters_batch(served, msgs[:4], letters[:4], workers=4)
    finally:
        served.close()
    assert all(getattr(r, "kind", None) == NO_OPTION_LISTED for r in got), got  # never a guessed letter
