"""OpenAICompatModel against a real third-party server: `transformers serve` on a tiny random LLaVA, on CPU.

The server is started once for the module and terminated in teardown. The test is skipped only when
`transformers serve` is not installed (no transformers CLI or no fastapi/uvicorn); any other failure fails.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from PIL import Image

from vlm.api.openai_compat import OpenAICompatModel

STARTUP_TIMEOUT_S = 90.0
MAX_TOKENS = 8


def _serve_executable() -> str | None:
    if importlib.util.find_spec("transformers") is None:
        return None
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        return None
    beside = Path(sys.executable).parent / "transformers"
    return str(beside) if beside.is_file() else shutil.which("transformers")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path: Path, n: int = 3000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else "(no log)"


@pytest.fixture(scope="module")
def served_llava(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(api_base, served model path) of a running `transformers serve`."""
    exe = _serve_executable()
    if exe is None:
        pytest.skip("`transformers serve` is unavailable (needs transformers with fastapi and uvicorn: transformers[serving])")
    from tests.tiny_models import build_tiny_llava

    root = tmp_path_factory.mktemp("transformers_serve")
    model_dir = build_tiny_llava(root / "tiny-llava").resolve()
    cache = root / "hf_cache"
    cache.mkdir()
    port = _free_port()
    log_path = root / "serve.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(cache))
    command = [exe, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited with code {proc.returncode}:\n{_tail(log_path)}")
            try:
                if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve not healthy after {STARTUP_TIMEOUT_S:g} s:\n{_tail(log_path)}")
            time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1", str(model_dir)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture(scope="module")
def model(served_llava: tuple[str, str]) -> OpenAICompatModel:
    api_base, model_path = served_llava
    return OpenAICompatModel(model_path, api_base=api_base, max_tokens=MAX_TOKENS, timeout=120, retries=0)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve_images") / "red.png"
    Image.new("RGB", (40, 30), (220, 20, 20)).save(path)
    return path


def _check(generation, model_path: str) -> None:
    assert isinstance(generation.text, str)
    assert generation.usage is not None
    assert generation.usage.input_tokens > 0
    assert 0 < generation.usage.output_tokens <= MAX_TOKENS
    assert model_path in str(generation.extra["response_model"])


def test_image_and_text(model: OpenAICompatModel, served_llava: tuple[str, str], image: Path) -> None:
    generation = model.generate_full([str(image), "What is shown in the image?"])
    _check(generation, served_llava[1])


def test_text_only(model: OpenAICompatModel, served_llava: tuple[str, str]) -> None:
    generation = model.generate_full(["What is shown in the image?"])
    _check(generation, served_llava[1])


def test_the_image_reaches_the_model(model: OpenAICompatModel, image: Path) -> None:
    """The same question costs more prompt tokens with the image: the server expanded it into image tokens."""
    with_image = model.generate_full([str(image), "Describe the image in one sentence."])
    without = model.generate_full(["Describe the image in one sentence."])
    assert with_image.usage is not None and without.usage is not None
    assert with_image.usage.input_tokens > without.usage.input_tokens


def test_system_turn_and_multi_turn(model: OpenAICompatModel, served_llava: tuple[str, str]) -> None:
    conversation = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Is there a cat in the picture?"},
        {"role": "assistant", "content": "No."},
        {"role": "user", "content": "Yes or no: a dog?"},
    ]
    _check(model.generate_full(conversation), served_llava[1])
