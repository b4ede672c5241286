"""The command line and any text lose every API key before they are written."""

from vlmkit.core.secrets import redacted_argv, scrub


def test_flag_values_are_masked_in_every_spelling():
    argv = ["vlmkit", "run", "--api-key", "sk-one", "--judge-api-key=sk-two", "--api-k", "sk-three", "--model", "m"]
    assert redacted_argv(argv) == [
        "vlmkit", "run", "--api-key", "***", "--judge-api-key=***", "--api-k", "***", "--model", "m",
    ]


def test_a_known_secret_is_scrubbed_wherever_it_appears():
    argv = ["vlmkit", "run", "--api-base", "http://h/v1?key=sk-xyz", "--model", "sk-xyz"]
    assert redacted_argv(argv, ["sk-xyz", None, ""]) == ["vlmkit", "run", "--api-base", "http://h/v1?key=***", "--model", "***"]


def test_other_flags_are_kept():
    argv = ["vlmkit", "run", "--api-base", "http://h/v1", "--a", "x", "--api", "y", "--judge", "gpt", "--judge-api-base", "u"]
    assert redacted_argv(argv) == argv


def test_scrub():
    assert scrub("Bearer sk-1 and sk-1", ["sk-1"]) == "Bearer *** and ***"
    assert scrub("nothing", [None, ""]) == "nothing"
