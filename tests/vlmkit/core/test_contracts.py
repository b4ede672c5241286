"""The model contract as the run asks it (vlmkit.core.contracts.ModelView): a class with only `generate` gets every
optional member's default, a class with its own members is asked through them, and BaseModel's defaults are the
same functions."""

from __future__ import annotations

from typing import Any

import pytest

from vlm.base import BaseModel
from vlmkit.core.contracts import (
    DatasetInfo,
    ModelView,
    class_settings,
    model_view,
    no_custom_prompt,
    owns_prompts,
)
from vlmkit.core.model_calls import Generation, UnsupportedInputError, Usage

INFO = DatasetInfo(name="MyMCQ", kind="mcq", images=lambda line: [])


class OnlyGenerate:
    """A user's own class: no BaseModel, nothing but generate."""

    def generate(self, msgs: Any, dataset: Any = None) -> str:
        text = " ".join(str(m) for m in msgs)
        if "boom" in text:
            raise ValueError("cannot answer boom")
        return f"{dataset}:{text}"


class Served:
    """Another user class that has every optional member of its own."""

    is_api = True
    modalities = frozenset({"text"})
    model = "served-id"

    def __init__(self) -> None:
        self.closed = 0

    def generate(self, msgs: Any, dataset: Any = None) -> str:
        return "unused"

    def generate_full(self, msgs: Any, dataset: Any = None, params: dict | None = None) -> Generation:
        return Generation(text=f"full {params}", usage=Usage(1, 2, 0))

    def generate_batch(self, batch: Any, dataset: Any = None, params: Any = None) -> list:
        return [Generation(text=f"batch {len(batch)}") for _ in batch]

    def use_custom_prompt(self, dataset: DatasetInfo) -> bool:
        return dataset.kind == "mcq"

    def build_prompt(self, line: dict, dataset: DatasetInfo) -> list:
        return [{"type": "text", "value": f"own {line['question']}"}]

    def probe(self) -> dict:
        return {"models": ["served-id"]}

    def close(self) -> None:
        self.closed += 1

    def settings(self) -> dict:
        return {"mine": True}


def test_a_class_with_only_generate_gets_every_default():
    model = OnlyGenerate()
    view = model_view(model)
    assert view.inner is model and model_view(view) is view
    assert view.generate(["a"], "D") == "D:a"
    one = view.generate_full(["a", "b"], "D")
    assert isinstance(one, Generation) and (one.text, one.usage) == ("D:a b", None)
    with pytest.raises(UnsupportedInputError, match=r"OnlyGenerate implements only generate\(\).*\['max_tokens'\]"):
        view.generate_full(["a"], "D", {"max_tokens": 3})
    results = view.generate_batch([["x"], ["boom"], ["y"]], "D", [None, None, {"temperature": 0}])
    assert results[0].text == "D:x"
    assert isinstance(results[1], ValueError)  # the failing message holds its exception, the others still ran
    assert isinstance(results[2], UnsupportedInputError)  # a parameter it cannot apply fails that message only
    assert view.generate_batch([["p"], ["q"]]) == [Generation(text="None:p"), Generation(text="None:q")]
    assert view.is_api is False and view.modalities == frozenset({"text", "image"})
    assert view.probe is None
    assert view.use_custom_prompt(INFO) is False
    with pytest.raises(NotImplementedError, match="OnlyGenerate.build_prompt"):
        view.build_prompt({"question": "q"}, INFO)
    view.close()  # nothing to release: harmless, twice too
    view.close()
    assert view.settings() == {"class": f"{__name__}.OnlyGenerate"}
    assert view.model_id == "OnlyGenerate" and view.class_name == "OnlyGenerate"


def test_a_class_with_its_own_members_is_asked_through_them():
    model = Served()
    view = ModelView(model)
    assert view.generate_full(["a"], "D", {"max_tokens": 2}).text == "full {'max_tokens': 2}"
    assert [r.text for r in view.generate_batch([["a"], ["b"], ["c"]])] == ["batch 3"] * 3
    assert view.is_api is True and view.modalities == frozenset({"text"})
    assert view.probe is not None and view.probe() == {"models": ["served-id"]}
    assert view.use_custom_prompt(INFO) is True
    assert view.use_custom_prompt(DatasetInfo("MyYN", "yorn", images=lambda line: [])) is False
    assert view.build_prompt({"question": "q"}, INFO) == [{"type": "text", "value": "own q"}]
    view.close()
    assert model.closed == 1
    assert view.settings() == {"mine": True}
    assert view.model_id == "served-id"


def test_the_hot_paths_are_the_models_own_methods():
    """No layer between the run and a model that has them: the view holds the model's bound methods."""
    model = Served()
    view = ModelView(model)
    assert view.generate_full == model.generate_full and view.generate_batch == model.generate_batch


class Echo(BaseModel):
    def generate(self, msgs: Any, dataset: Any = None) -> str:
        return "echo"


class OwnPrompts(Echo):
    def use_custom_prompt(self, dataset: DatasetInfo) -> bool:
        return True


class PlainWithPrompts(OnlyGenerate):
    def use_custom_prompt(self, dataset: DatasetInfo) -> bool:
        return True


def test_owning_prompts_is_read_from_the_class():
    assert not owns_prompts(Echo) and not owns_prompts(BaseModel)  # BaseModel's default is the contract's
    assert owns_prompts(OwnPrompts)
    assert not owns_prompts(OnlyGenerate)
    assert owns_prompts(PlainWithPrompts)
    assert BaseModel.use_custom_prompt is no_custom_prompt


def test_base_model_and_the_view_give_the_same_defaults():
    model = Echo()
    view = ModelView(model)
    assert model.settings() == view.settings() == class_settings(model) == {"class": f"{__name__}.Echo"}
    with pytest.raises(UnsupportedInputError, match="Echo implements only generate"):
        model.generate_full(["a"], None, {"top_p": 0.5})
    assert [r.text for r in model.generate_batch([["a"], ["b"]])] == ["echo", "echo"]
    assert model.use_custom_prompt(INFO) is False and view.use_custom_prompt(INFO) is False
