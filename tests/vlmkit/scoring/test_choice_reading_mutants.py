"""Cases that pin the answer reader's rules where mutation testing found them loose (tools/mutation_test.py).

VLMEvalKit's rule is checked against a second implementation written here from its `can_infer` (matching_util.py
at the pinned commit: option inference, then text inference); vlmkit's own reader against the rules its module
docstring states, one reply per rule, the expected letter and method worked out by hand.
"""

from __future__ import annotations

import random
import re

import pytest

from vlmkit.scoring.common.choice_reading import (
    ChoiceReader,
    extract_choice,
    read_choice,
    vlmevalkit_choice,
    vlmevalkit_read,
)

ANIMALS = {"A": "cat", "B": "dog", "C": "cow"}

# -------------------------------------------------------------------------------- VLMEvalKit's can_infer, again

_REFUSALS = (
    "Sorry, I can't help with images of people yet.", "I can't process this file.",
    "I'm sorry, but without the image provided", "Cannot determine the answer",
)


def reference_can_infer(answer: str, choices: dict[str, str]) -> str | None:
    """VLMEvalKit's can_infer with VERBOSE unset, False written as None."""

    def option() -> str | None:
        if "Failed to obtain answer via API" in answer:
            return None
        if any(r in answer for r in _REFUSALS):
            return "Z"
        mod = answer
        for ch in ".()[],:;!*#{}":
            mod = mod.replace(ch, " ")
        words = mod.split()
        named = [c for c in choices if c in words]
        if len(named) == 1:
            if words.index(named[0]) > len(words) - 5:
                return named[0]
        elif not named and "Z" in words:
            return "Z"
        m = re.search(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**", answer)
        if m and m.group(1).upper() in choices:
            return m.group(1).upper()
        return None

    got = option()
    if got:
        return got
    low = answer.lower()
    if len(low) > 2 * sum(len(v) for v in choices.values()):
        return None
    cands = [k for k, v in choices.items() if v.lower() in low]
    return cands[0] if len(cands) == 1 else None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("B is my final pick", None),  # 5 words, B first: index 0 is not > 5 - 5; too long for text inference
        ("B is my pick", "B"),  # 4 words: index 0 > -1
        ("Well, B is my pick", "B"),  # index 1 > 0
        ("Failed to obtain answer via API. B", None),  # the marker stops option inference; text: too long
        ("Failed to obtain answer via API", None),
        ("The answer is D", None),  # D is no option here: the verbose rule needs it among the choices
        ("The correct answer is **B** since", "B"),
        ("Z", "Z"),
        ("I can't process this file. B", "Z"),
        ("a dog!", "B"),  # text inference: 6 characters, at most 2 x 9
        ("it is a dog, ok", "B"),  # 15 characters: within 18
        ("it is a dog, okay!!", None),  # 19 characters: more than 2 x 9
        ("dog and cat", None),  # two option texts
    ],
)
def test_vlmevalkit_rule_cases_worked_from_its_source(reply, expected):
    assert reference_can_infer(reply, dict(ANIMALS)) == expected  # the second implementation agrees with the hand
    assert vlmevalkit_read(reply, dict(ANIMALS)) == expected
    assert vlmevalkit_choice(reply, ANIMALS) == expected


def test_text_inference_length_limit_is_exclusive():
    choices = {"A": "ab", "B": "cd"}  # 2 x 4 = 8 characters at most
    assert vlmevalkit_read("xx ab xx", choices) == "A"  # exactly 8
    assert vlmevalkit_read("xx ab xxx", choices) is None  # 9
    assert vlmevalkit_read("xxx ab xxx", choices) is None  # 10


def test_vlmevalkit_rule_equals_the_second_implementation_on_random_replies():
    rng = random.Random(31)
    words = ["A", "B", "C", "D", "Z", "a", "b", "the", "answer", "is", "correct", "cat", "dog", "cow", "(B)", "[C]",
             "**A**", "B.", "C,", "maybe", "not", "Failed to obtain answer via API", "Cannot determine the answer",
             "I", "think", "so", "!", ":", "{A}", "#"]
    option_sets = [dict(ANIMALS), {"A": "cat", "B": "dog"}, {"A": "red dog", "B": "dog", "C": "x", "D": "the"}]
    for _ in range(3000):
        reply = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.3:
            reply = reply.replace(" ", "")
        choices = rng.choice(option_sets)
        assert vlmevalkit_read(reply, dict(choices)) == reference_can_infer(reply, dict(choices)), (reply, choices)


def test_read_row_gives_vlmevalkits_reading_of_the_whole_prediction_each_time():
    reader = ChoiceReader()
    for _ in range(2):  # the second time from the reader's cache
        assert reader.read_row("Failed to obtain answer via API. B", ANIMALS) == (
            None, "unparsed", "Failed to obtain answer via API. B", None
        )
        assert reader.read_row("The correct answer is **B** since", ANIMALS)[3] == "B"


# --------------------------------------------------------------------------------------------- vlmkit's reader


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # strong mentions (`option B`, `choice B`, `(B)`, `[B]`, `选项B`, `B选项`, `B.`/`B)`/`B:` opening a line) are
        # read wherever they stand; the reply has more than three words after the letter, so only strength reads it
        ("Option B for the animal in this picture here.", "B"),
        ("I like option B for the animal in this picture here.", "B"),
        ("I like choice (B for the animal in this picture here.", "B"),
        ("The photo suggests (B) for the animal shown here.", "B"),
        ("The photo suggests [B] for the animal shown here.", "B"),
        ("我觉得 B选项 more likely fits the photo here", "B"),
        ("Reasoning first.\nB) matches the ears and the tail shown here", "B"),
        ("Reasoning first.\nB: matches the ears and the tail shown here", "B"),
        ("Reasoning first.\nB. matches the ears and the tail shown here", "B"),
        # the same letters not strong: mid-line, half-bracketed, or after other text on their line
        ("I like B for the animal in this picture here.", None),
        ("The photo suggests B) for the animal shown here.", None),
        ("The photo suggests (B for the animal shown here.", None),
        ("The photo suggests B] for the animal shown here.", None),
        ("Reasoning first.\n1 B) matches the ears and the tail shown here", None),
        ("Reasoning first. Then B) matches the ears and the tail shown here\nmore text follows here", None),
        ("Reasoning first.\nThen B: matches the ears and the tail shown here", None),
        # among the last four words (VLMEvalKit's window): the letter and at most three words after it
        ("Looking closely at the photo B fits this one", "B"),
        ("Looking closely at the photo B fits this one well", None),
        # a letter's own option text beside it does not stop the cue; another letter's text does
        ("The dog looks like option B in this picture here", "B"),
        ("The cat looks like option B in this picture here", None),
    ],
)
def test_a_lone_letter_is_read_when_strong_or_near_the_end(reply, expected):
    assert extract_choice(reply, ANIMALS) == ((expected, "cue") if expected else (None, "unparsed"))


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The answer is dog.", ("B", "marker")),
        ("Answer: dog", ("B", "marker")),
        ("The answer is the dog", ("B", "marker")),
        ("The answer is dog or something similar", ("B", "marker")),  # no other option offered
        ("The answer is dog or cat.", (None, "unparsed")),  # two options offered: a hedge
        ("The answer is dog / cow here", (None, "unparsed")),
        ("The answer is dog; cat is wrong", ("B", "marker")),
    ],
)
def test_an_option_text_after_an_answer_phrase(reply, expected):
    assert extract_choice(reply, ANIMALS) == expected


def test_fuzzy_is_off_unless_asked_and_a_missing_prediction_is_unparsed():
    reply = "dgo"  # one edit from "dog": only the fuzzy step reads it
    assert read_choice(reply, ANIMALS) == (None, "unparsed")
    assert extract_choice(reply, ANIMALS) == (None, "unparsed")
    assert read_choice(reply, ANIMALS, fuzzy=True) == ("B", "fuzzy")
    for missing in (None, float("nan")):
        assert extract_choice(missing, ANIMALS) == (None, "unparsed")
        assert extract_choice(missing, ANIMALS, fuzzy=True) == (None, "unparsed")


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        ("The answer is b.", ANIMALS, ("B", "marker")),  # a lower-case letter ending the reply's sentence
        ("The answer is A dog.", ANIMALS, ("B", "marker")),  # `A` the article: the option text is read
        ("I think it's A. The answer is B or C", ANIMALS, (None, "unparsed")),  # the last phrase hedges
        ("Not A, C, D", {k: f"text {k}" for k in "ABCD"}, (None, "unparsed")),  # every letter eliminated
        ("The picture shows X clearly", {"W": "w1", "X": "x1"}, ("X", "cue")),  # only A and I can be words
    ],
)
def test_answer_phrases_letters_and_eliminations(reply, options, expected):
    assert extract_choice(reply, options) == expected


def _clause_start_by_hand(text: str, pos: int) -> int:
    """After the last `.`, `;`, `!`, `?` or new line before pos (the texts below use no other clause ends)."""
    return max((i + 1 for i, ch in enumerate(text[:pos]) if ch in ".;!?\n"), default=0)


@pytest.mark.parametrize(
    ("text", "letter", "negated"),
    [
        ("We rule out A, C, D here", "D", True),  # commas between eliminated letters are filler
        ("We rule out A,C,D here", "D", True),
        ("Not A. B fits", "B", False),  # a new sentence: the negation's clause has ended
        ("It is not A; B", "B", False),
        ("It is not A or B", "B", True),
        ("Not the big red B", "B", False),  # two other words between: the negation does not reach
        ("Not the red B", "B", True),
        ("B is wrong", "B", True),
        ("So B is right", "B", False),
    ],
)
def test_negation_reach_worked_by_hand(text, letter, negated):
    from vlmkit.scoring.common.choice_reading import _negated

    start = text.rindex(letter)
    assert _negated(text, start, start + 1) is negated
    # the clause start found inside equals one given from outside (as the reader gives it)
    assert _negated(text, start, start + 1, _clause_start_by_hand(text, start)) is negated


def test_clean_options_keeps_single_letters_in_order_past_other_keys():
    from vlmkit.scoring.common.choice_reading import clean_options

    assert clean_options({"B": "z", "AB": "y", "0": "w", "A": "x", "C": " ", "D": None, "a": "q"}) == {
        "A": "x", "B": "z",
    }


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        # the longer option text wins over one inside it
        ("It is a red dog.", {"A": "dog", "B": "red dog"}, ("B", "marker")),
        # a letter that opens or ends an option's text is that text, not a letter
        ("We see many B cells here", {"A": "T cells", "B": "B cells"}, ("B", "option_text")),
        ("I see Point A here", {"A": "Point B", "B": "Point A"}, ("B", "option_text")),
        # a connective (`so`) reads only a letter after it: the option text is then read as a mention
        ("I looked, so the dog is cute", ANIMALS, ("B", "option_text")),
        # `might be E`: E is no option, so it hedges nothing
        ("The answer is B, though it might be E", ANIMALS, ("B", "marker")),
        ("The answer is B, though it might be C", ANIMALS, (None, "unparsed")),
        # an answer phrase after `whether` is no answer: the lone letter near the end is the cue
        ("I am not sure whether the answer is B", ANIMALS, ("B", "cue")),
        # `A` the article and `Figure C` the label are skipped, and the letters after them still read
        ("A red circle is shown and B fits", {"A": "x1", "B": "y1"}, ("B", "cue")),
        ("Figure C is blurry but B fits", ANIMALS, ("B", "cue")),
        # a letter with a verdict after it is eliminated, whatever opens its clause
        ("So B is wrong", ANIMALS, (None, "unparsed")),
    ],
)
def test_option_texts_connectives_hedges_and_labels(reply, options, expected):
    assert extract_choice(reply, options) == expected


@pytest.mark.parametrize(
    ("text", "letter", "negated"),
    [
        ("It is not the option B", "B", True),  # filler words (`the`, `option`) do not count as other words
        ("Not x y B", "B", False),  # two other words do
        ("Not A, so B", "B", False),  # `so` asserts anew
        ("Not A, it B", "B", False),
    ],
)
def test_more_negation_reach(text, letter, negated):
    from vlmkit.scoring.common.choice_reading import _negated

    start = text.rindex(letter)
    assert _negated(text, start, start + 1) is negated


_CLAUSE_ENDS = re.compile(r"[.;!?\n。；！？]|\bbut\b|\bhowever\b|但是|而是")


def test_clause_start_equals_a_plain_scan_of_the_text_before():
    """_Reply.clause_start(pos) (one scan of the whole text, then a search) equals the end of the last clause end
    found in text[:pos] alone, at every position, `but`/`however` cut at pos included."""
    from vlmkit.scoring.common.choice_reading import _Reply

    texts = [
        "A but B however C.", "but B", "however, C", "it's butter; but not A", "x.y!z?w\nv", "A is it but",
        "no但是B而是C。D", "abut buts however however", "but", "a however", "B; but. however! B",
        "butter", "howevermore", "x butter", "x howevermore",
    ]
    for text in texts:
        reply = _Reply(text, {})
        for pos in range(len(text) + 1):
            ends = [m.end() for m in _CLAUSE_ENDS.finditer(text[:pos])]
            assert reply.clause_start(pos) == (ends[-1] if ends else 0), (text, pos)

NINE = dict(zip("ABCDEFGHI", ["cat", "dog", "cow", "ant", "bee", "fox", "gnu", "hen", "ink"]))


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        # step 1, exact: the letter with its own text (article ignored) ...
        ("B. the dog", ANIMALS, ("B", "exact")),
        ("the dog (B)", ANIMALS, ("B", "exact")),
        # ... with another option's text: unread without punctuation, and `cat (B)` names two options
        ("B cat", ANIMALS, (None, "unparsed")),
        ("cat (B)", ANIMALS, (None, "unparsed")),
        # `I` the pronoun (an option letter here), then an option's text: that text is the reading
        ("I cat.", NINE, ("A", "option_text")),
        # step 2, tagged: a tag that cannot be read leaves the reply unread, whatever follows it
        ("<answer>maybe</answer> B", ANIMALS, (None, "unparsed")),
        # step 4, final_line: after a reasoning line, a last line that is an exact reply; one that is not is no answer
        ("Let me think.\nB", ANIMALS, ("B", "final_line")),
        ("Thinking about it.\nB cat", ANIMALS, (None, "unparsed")),
        # answer phrases: a negated one (`不选A`) is skipped, the others still count
        ("选B，不选A", ANIMALS, ("B", "marker")),
        ("我不选A，选B", ANIMALS, ("B", "marker")),
        # `B is correct` hedged by `whether` just before it is no answer phrase
        ("Whether B is correct I cannot say", ANIMALS, (None, "unparsed")),
        ("I am not sure whether B is correct", ANIMALS, ("B", "cue")),
        # an answer phrase followed by other options offered in a list is no answer ...
        ("Answer: B. Each option: (A) cat (C) cow", ANIMALS, (None, "unparsed")),
        # ... but the same letter again, a letter that is no option, or options named before it leave it read
        ("The answer is (B). Option (B) fits.", ANIMALS, ("B", "marker")),
        ("The answer is B; compare (E) with B here", ANIMALS, ("B", "marker")),
        ("I doubt A. The answer is B; see (E).", ANIMALS, ("B", "marker")),
        ("(A) is a cat. The answer is B", ANIMALS, ("B", "marker")),
    ],
)
def test_each_step_on_a_reply_that_needs_it(reply, options, expected):
    assert extract_choice(reply, options) == expected


def test_one_reader_over_many_rows_reads_each_as_a_fresh_reader_would():
    """ChoiceReader keeps a reply's readings by the part of the options it can see; reading replies again under
    other options (texts that do or do not touch the reply) must give what a fresh read gives."""
    rng = random.Random(7)
    replies = ["It is a dog", "dog", "The answer is the cat.", "B. the dog", "the cow (C)", "<answer>dog</answer>",
               "I think so.\ncat", "Not the dog, the cow", "a red dog", "B", "(C) because", "It has B cells"]
    texts = ["cat", "dog", "cow", "red dog", "B cells", "the dog", "bird", "fish", "cat."]
    reader = ChoiceReader()
    for _ in range(600):
        letters = "ABC" if rng.random() < 0.7 else "ABCD"
        options = dict(zip(letters, rng.sample(texts, len(letters))))
        reply = rng.choice(replies)
        assert reader.read(reply, options) == read_choice(reply, dict(options)), (reply, options)
        assert reader.read_row(reply, options)[:2] == read_choice(reply, dict(options))
