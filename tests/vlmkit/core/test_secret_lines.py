"""vlmkit.core.secrets beyond the command line: `one_line` (outside text quoted in one line, scrubbed before it
is cut) and secret flags whose value itself holds '='. Expected strings written out by hand."""

from __future__ import annotations

from vlmkit.core.secrets import one_line, redacted_argv


def test_one_line_collapses_white_space_and_keeps_short_text_whole() -> None:
    assert one_line("  a\n\tb   c \r\n", 100) == "a b c"
    assert one_line("exactly ten", 11) == "exactly ten"  # at the limit: whole, no dots
    assert one_line("", 5) == ""
    assert one_line(404, 10) == "404"  # anything, as text


def test_one_line_cuts_to_the_limit_with_dots() -> None:
    assert one_line("abcdefghijkl", 11) == "abcdefgh..."  # 8 characters + "..." = 11
    assert len(one_line("x" * 500, 300)) == 300


def test_one_line_scrubs_before_cutting() -> None:
    key = "sk-0123456789abcdef"
    # cut first, the key's first 10 characters would survive; scrubbed first, none of it does
    text = one_line(f"bad key {key} given", 16, [key])
    assert text == "bad key *** g..." and "sk-" not in text
    assert one_line(f"key={key}", 100, [None, "", key]) == "key=***"


def test_a_secret_flag_value_holding_equals_signs_is_hidden_whole() -> None:
    assert redacted_argv(["--api-key=ab=cd", "--model", "m"]) == ["--api-key=***", "--model", "m"]
    assert redacted_argv(["--judge-api-k=x=y=z"]) == ["--judge-api-k=***"]
    assert redacted_argv(["--api-key", "a=b", "--max-tokens=8"]) == ["--api-key", "***", "--max-tokens=8"]
