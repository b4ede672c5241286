"""A conversation that ends with an assistant turn is a prefill the model continues (VLMEvalKit's role='assistant'
text, MVBench's "Best option:("): what a served model is sent, what a local model's chat template renders, and a
conversation without one sent exactly as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import FaultServer, chat_reply, script
from tests.support.tiny_models import build_tiny_llava
from vlm.api.http import encode_body
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.message import normalise_conversation
from vlmkit.core.model_calls import ModelCallError
from vlmkit.formats.openai_chat import prefill_fields, to_openai_messages
from vlmkit.formats.transformers_chat import template_flags, to_hf_conversation

SYSTEM = "Watch carefully."
QUESTION = "Question: which?\nOptions:\n(A) red\n(B) blue"
PREFILLED = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": [{"type": "text", "value": QUESTION},
                                 {"type": "text", "value": "\nOnly give the best option."}]},
    {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]},
]
PLAIN = PREFILLED[:2]


# ------------------------------------------------------------------------------------------------- conversion
def test_openai_messages_end_with_the_prefill_as_an_assistant_string() -> None:
    messages = to_openai_messages(PREFILLED)
    assert messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION + "\n\nOnly give the best option."},
        {"role": "assistant", "content": "Best option:("},  # a string: SGLang continues only a string
    ]
    assert prefill_fields(normalise_conversation(PREFILLED)) == {
        "continue_final_message": True, "add_generation_prompt": False,
    }
    assert prefill_fields(messages) == prefill_fields(normalise_conversation(PREFILLED))  # the messages say as much
    assert prefill_fields(normalise_conversation(PLAIN)) == {} == prefill_fields(to_openai_messages(PLAIN))
    assert prefill_fields(normalise_conversation(["just a question"])) == {}


def test_template_flags_continue_a_prefill_and_refuse_a_mixed_batch() -> None:
    prefilled, plain = to_hf_conversation(PREFILLED), to_hf_conversation(PLAIN)
    assert prefilled[-1] == {"role": "assistant", "content": [{"type": "text", "text": "Best option:("}]}
    assert template_flags([prefilled]) == {"add_generation_prompt": False, "continue_final_message": True}
    assert template_flags([plain, plain]) == {"add_generation_prompt": True, "continue_final_message": False}
    with pytest.raises(ValueError, match="all end with a prefill"):
        template_flags([prefilled, plain])
    # OpenAI messages (vLLM's LLM.chat takes the same flags)
    assert template_flags([to_openai_messages(PREFILLED)]) == template_flags([prefilled])


# ------------------------------------------------------------------------------------------------- served model
def test_a_served_model_gets_the_prefill_as_vlmevalkits_wrappers_send_it() -> None:
    """By default the prefill is the last assistant message and nothing more (VLMEvalKit's API wrappers; OpenAI and
    `transformers serve` refuse the continue fields); continue_prefill=True asks vLLM/SGLang to continue it."""
    with FaultServer(script(chat_reply("A) red"), chat_reply("A) red"))) as server:
        plain = OpenAICompatModel("served", api_base=server.base_url, api_key="k", max_tokens=8)
        reply = plain.generate(PREFILLED)
        continuing = OpenAICompatModel("served", api_base=server.base_url, api_key="k", max_tokens=8,
                                       continue_prefill=True)
        continuing.generate(PREFILLED)
        first, second = (r.body for r in server.requests)
    assert reply == "A) red"  # the reply as the server gives it, the prefill not pasted in front
    assert first["messages"][-1] == {"role": "assistant", "content": "Best option:("}
    assert first["messages"][1]["role"] == "user"
    assert "continue_final_message" not in first and "add_generation_prompt" not in first
    assert second["messages"] == first["messages"]
    assert second["continue_final_message"] is True and second["add_generation_prompt"] is False


def test_a_conversation_without_a_prefill_is_sent_byte_for_byte_as_before() -> None:
    with FaultServer(script(chat_reply("A"))) as server:
        model = OpenAICompatModel("served", api_base=server.base_url, api_key="k", max_tokens=8)
        model.generate(PLAIN)
        raw = server.requests[0].raw
    expected = {  # the body written out by hand: no prefill field, no assistant message
        "model": "served",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": QUESTION + "\n\nOnly give the best option."},
        ],
        "temperature": 0.0,
        "max_tokens": 8,
    }
    assert raw == encode_body(expected)


def test_transformers_serve_answers_the_prefill_and_refuses_the_continue_fields_loudly(
        served_llava: tuple[str, str]) -> None:
    """`transformers serve` answers a conversation ending with an assistant message (the default); asked to continue
    it (continue_prefill=True) it refuses the fields with a 422: the row fails, never a prediction."""
    api_base, served = served_llava
    model = OpenAICompatModel(served, api_base=api_base, api_key="k", max_tokens=2, retries=0)
    assert isinstance(model.generate(PREFILLED), str)
    continuing = OpenAICompatModel(served, api_base=api_base, api_key="k", max_tokens=2, retries=0,
                                   continue_prefill=True)
    with pytest.raises(ModelCallError, match="422|Unexpected fields"):
        continuing.generate(PREFILLED)
    model.close()
    continuing.close()


# ------------------------------------------------------------------------------------------------- local model
@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import torch

    from vlm.local.generic import HFVisionModel

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices gain nothing from threads on a shared machine
    model_dir: Path = build_tiny_llava(tmp_path_factory.mktemp("prefill") / "llava")
    model = HFVisionModel(str(model_dir), dtype="float32", device="cpu", max_new_tokens=6, batch_size=2,
                          system_prompt="")
    yield model
    model.close()
    torch.set_num_threads(threads)


def _raw_continuation(model: Any, prompt_text: str) -> str:
    """Greedy new text after `prompt_text`, tokenised and generated by transformers alone (no kit code)."""
    import torch

    tokenizer = model.processor.tokenizer
    ids = tokenizer(prompt_text, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out = model.model.generate(**ids, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id,
                                   eos_token_id=tokenizer.eos_token_id)
    return tokenizer.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=True).strip()


def test_a_local_model_renders_the_prefill_open_and_continues_it(tiny_llava: Any) -> None:
    # the tiny LLaVA template (tests/support/tiny_models.py), worked by hand: a text part renders "<text> " (a turn's
    # texts joined by newlines: the template cannot interleave, vlmkit.core.message.images_first), an
    # assistant turn is closed by "</s>", the generation prompt is "ASSISTANT:"; a system turn has no role label
    user = f"USER: {QUESTION}\n\nOnly give the best option. "  # texts joined: this template puts images first
    prefilled_text = f"{SYSTEM} {user}ASSISTANT: Best option:("
    plain_text = f"{SYSTEM} {user}ASSISTANT:"
    model = tiny_llava
    assert model._prompt_text(model._conversation(model.prepare(PREFILLED))) == prefilled_text
    assert model._prompt_text(model._conversation(model.prepare(PLAIN))) == plain_text
    # a batch mixing both: each generated as its own prompt text alone would be (prefilled rows batched apart)
    replies = model.generate_batch([PREFILLED, PLAIN, PREFILLED])
    texts = [r.text for r in replies]
    assert texts[0] == texts[2] == _raw_continuation(model, prefilled_text)
    assert texts[1] == _raw_continuation(model, plain_text)
