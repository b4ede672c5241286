"""vlm.prompts.common called directly: the dataset types VLMEvalKit's wrappers test, a row's question, options and
hint (missing exactly as pandas says), the CJK test and the base family's answers."""

from __future__ import annotations

import math

import pytest

from vlm.prompts.common import (
    PromptFamily,
    has_cjk,
    images_then_text,
    row_hint,
    row_options,
    row_question,
    vlmeval_type,
)
from vlmkit.core.contracts import DatasetInfo


def _info(kind: str, name: str = "D") -> DatasetInfo:
    return DatasetInfo(name, kind, lambda line: [])


def test_vlmeval_types() -> None:
    assert [vlmeval_type(_info(k)) for k in ("mcq", "yorn", "vqa", "shortqa", "caption")] == [
        "MCQ", "Y/N", "VQA", None, None]


def test_row_question() -> None:
    assert row_question({"question": "Why?"}, _info("vqa")) == "Why?"
    assert row_question({"question": 42}, _info("vqa")) == "42"
    assert row_question({"prompt": "P"}, _info("vqa"), field="prompt") == "P"
    for blank in (None, math.nan, "", "   "):
        with pytest.raises(ValueError, match=r"^MyData, row index 7, field question: empty$"):
            row_question({"index": 7, "question": blank}, _info("vqa", "MyData"))


def test_row_options_and_hint() -> None:
    line = {"index": 1, "A": "cat", "B": math.nan, "C": "", "D": 0, "a": "lower", "question": "q", "hint": math.nan}
    # B is missing (NaN); an empty string and 0 are values (pd.isna says no); lower-case keys are not options
    assert row_options(line) == {"A": "cat", "C": "", "D": 0}
    assert list(row_options({"C": "z", "A": "x"})) == ["A", "C"]  # in letter order
    assert row_hint(line) is None and row_hint({}) is None and row_hint({"hint": None}) is None
    assert row_hint({"hint": "look left"}) == "look left"


def test_cjk_is_the_unified_ideograph_block() -> None:
    assert has_cjk("图中是什么") and has_cjk("a 一 b") and has_cjk("\u9fff")
    assert not has_cjk("What is it?") and not has_cjk("カタカナ") and not has_cjk("\u4dff")


def test_images_then_text() -> None:
    assert images_then_text(["a.png", "b.jpg"], "Q") == [
        {"type": "image", "value": "a.png"}, {"type": "image", "value": "b.jpg"}, {"type": "text", "value": "Q"}]
    assert images_then_text([], "Q") == [{"type": "text", "value": "Q"}]


def test_the_base_family() -> None:
    family = PromptFamily({"max_new_tokens": 8}, own_prompts=0)  # type: ignore[arg-type]
    assert family.values == {"max_new_tokens": 8} and family.own_prompts is False
    assert family.use_custom_prompt(_info("mcq")) is False and family.processor_kwargs("MME") == {}
    assert family.describe() == {"name": "", "own_prompts": False}
    assert PromptFamily().values == {} and PromptFamily().own_prompts is True
    with pytest.raises(NotImplementedError, match="PromptFamily writes no prompt for D"):
        family.build_prompt({}, _info("mcq"))
