"""fence.py against hashlib directly (mutation round 4): the token is the first 16 hex digits of SHA-256 over
`<counter>\\0<text>`, the counter moving on while the text holds the token; labels; unfence's first match."""

from __future__ import annotations

import hashlib

import pytest

from vlmkit.scoring.common.fence import TOKEN_HEX, Fence, fence_for, fenced, unfence


def token(counter: int, text: str) -> str:
    return hashlib.sha256(f"{counter}\x00".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def test_the_token_is_the_digest_written_out() -> None:
    assert TOKEN_HEX == 16
    text = "The answer is B."
    t = token(0, text)
    assert fence_for(text) == Fence(f"<<<reply {t}>>>", f"<<<end of reply {t}>>>")
    assert fenced(text, "model answer") == f"<<<model answer {t}>>>\n{text}\n<<<end of model answer {t}>>>"
    lone = "\ud800 half a pair"
    assert fence_for(lone).begin == f"<<<reply {token(0, lone)}>>>"


def test_counter_one_when_counter_zero_is_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a 1-digit token (patched), texts holding their counter-0 digit are common: the counter moves on."""
    import vlmkit.scoring.common.fence as fence_module

    monkeypatch.setattr(fence_module, "TOKEN_HEX", 1)
    checked = 0
    for i in range(200):
        text = f"row {i} " + "0123456789abcde"[: i % 9]
        digits = [hashlib.sha256(f"{c}\x00{text}".encode()).hexdigest()[:1] for c in range(40)]
        expected = next(d for d in digits if d not in text)
        assert fence_module.fence_for(text).begin == f"<<<reply {expected}>>>"
        checked += digits[0] in text
    assert checked > 10  # the moving-on path was taken many times


@pytest.mark.parametrize("label", ["Reply", "reply ", " reply", "two  spaces", "re-ply", "", "reply\n"])
def test_labels_are_lower_case_words(label: str) -> None:
    with pytest.raises(ValueError, match=r"^fence label .*: lower-case words only$"):
        fence_for("x", label)


def test_unfence_finds_the_first_fence_of_its_label() -> None:
    one, two = fenced("first\nline", "reply"), fenced("second", "reply")
    other = fenced("other", "reference answer")
    prompt = f"Intro\n{other}\n{one}\nmiddle\n{two}\nEnd"
    assert unfence(prompt) == "first\nline"
    assert unfence(prompt, "reference answer") == "other"
    assert unfence(prompt, "answer") is None
    assert unfence("no fence here") is None
    # an end line of another token does not close the fence
    t = token(0, "a")
    broken = f"<<<reply {t}>>>\na\n<<<end of reply {'0' * 16}>>>"
    assert unfence(broken) is None
    # the fence lines must be whole lines
    assert unfence(f"x<<<reply {t}>>>\na\n<<<end of reply {t}>>>") is None
    assert unfence(f"<<<reply {t}>>>\na\n<<<end of reply {t}>>>") == "a"
    # a label with regex characters is escaped: 'a.b' is not a valid label, but unfence takes any text
    assert unfence(f"<<<x.y {t}>>>\na\n<<<end of x.y {t}>>>", "x.y") == "a"
    assert unfence(f"<<<xzy {t}>>>\na\n<<<end of xzy {t}>>>", "x.y") is None
    # the token is exactly 16 hex digits
    assert unfence(f"<<<reply {t}0>>>\na\n<<<end of reply {t}0>>>") is None


def test_fenced_defaults_to_reply() -> None:
    t = token(0, "text")
    assert fenced("text") == f"<<<reply {t}>>>\ntext\n<<<end of reply {t}>>>"
