"""datasets_tsv.benchmarks.muirbench called directly: VLMEvalKit's MUIRBench text and the images placed at the
`<image>` placeholders (extra placeholders and extra images dropped, no placeholder: images first). Expected parts
written out by hand."""

from __future__ import annotations

from datasets_tsv.benchmarks.muirbench import muir_prompt, place_images


def _img(path: str) -> dict:
    return {"type": "image", "value": path}


def _txt(text: str) -> dict:
    return {"type": "text", "value": text}


def test_muir_prompt_text() -> None:
    assert muir_prompt("Which is red?", [("A", "left"), ("B", "right")]) == (
        "Which is red?\nA. left\nB. right\nAnswer with the option's letter from the given choices directly.")
    assert muir_prompt("Describe.", []) == "Describe.\n"


def test_images_go_to_their_placeholders_in_order() -> None:
    assert place_images("Compare <image> with <image>: same?", ["a.png", "b.png"]) == [
        _txt("Compare "), _img("a.png"), _txt(" with "), _img("b.png"), _txt(": same?")]
    # adjacent placeholders: no empty text between them; a placeholder first: no empty text before it
    assert place_images("<image><image> which?", ["a.png", "b.png"]) == [
        _img("a.png"), _img("b.png"), _txt(" which?")]


def test_extra_placeholders_and_extra_images_are_dropped() -> None:
    assert place_images("x <image> y <image> z", ["a.png"]) == [_txt("x "), _img("a.png"), _txt(" y "), _txt(" z")]
    assert place_images("x <image> y", ["a.png", "b.png"]) == [_txt("x "), _img("a.png"), _txt(" y")]


def test_no_placeholder_puts_the_images_first() -> None:
    assert place_images("plain", ["a.png", "b.png"]) == [_img("a.png"), _img("b.png"), _txt("plain")]
    assert place_images("plain", []) == [_txt("plain")]
