"""The answer reader's rules at the places a fourth mutation run (tools/mutation_test.py, target choice-reading)
found unguarded: option texts that are only brackets, markdown marks alone, a box's `$`, nested tags, letters right
beside option texts, lists after an answer phrase, negated answer phrases, and a reader shared across rows.

Each expected reading is worked by hand from the rules the module docstring states (method names included: a
reading that lands on the right letter by a later step is a different reading).
"""

from __future__ import annotations

import pytest

from vlmkit.scoring.common.choice_reading import ChoiceReader, _negated, extract_choice, read_choice

ANIMALS = {"A": "cat", "B": "dog", "C": "cow"}
BLANK = {"A": "cat", "B": "( )"}  # a fill-in option whose text is only a pair of brackets (its bare text is empty)
# 24 options A-X, B's text `cat`: `X` is a letter of the options that is neither `A` nor `I`
MANY = {**{chr(ord("A") + i): f"item {i}" for i in range(24)}, "B": "cat"}


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        # step 1, exact: an option's text compared whole (its normalised text, even where its bare text is empty)
        ("( )", BLANK, ("B", "exact")),
        ("B. ( )", BLANK, ("B", "exact")),  # the letter with its own text
        ("( ) (B)", BLANK, ("B", "exact")),  # the text, then its letter
        # a letter with another option's text and no punctuation is unread (`A` or `I` there is a word)
        ("X cat", MANY, (None, "unparsed")),
        # markdown marks are dropped whichever one the reply holds
        ("__B__", ANIMALS, ("B", "exact")),
        ("`B`", ANIMALS, ("B", "exact")),
        ("# B", ANIMALS, ("B", "exact")),
        # step 2, tagged: the tag's inside, `$` and white space stripped from its ends only
        ("<answer>XXL</answer>", {"A": "XL", "B": "XXL"}, ("B", "tagged")),
        ("\\boxed{$5$}", {"A": "$5", "B": "5"}, ("B", "tagged")),
        # a tag's inside is read by the other steps, not for a tag of its own: `A or ...` there is a hedge
        ("<answer>A or \\boxed{B}</answer>", ANIMALS, (None, "unparsed")),
        # step 3, marker: an answer phrase followed by a list naming other letters is no answer
        ("The answer is B. Each option: (A) cat, (C) cow.", ANIMALS, (None, "unparsed")),
        ("The answer is B. The list: (A) cat, (C) cow.", ANIMALS, (None, "unparsed")),  # B itself not listed
        # a negated answer phrase at a line's start does not count (and `not ... A` eliminates A)
        ("C is wrong.\nNot the answer: A", ANIMALS, (None, "unparsed")),
        # step 5, leading: another letter named right after the leading one
        ("(B)C", ANIMALS, (None, "unparsed")),
        # step 6, cue: `B)` opening the last of several lines is a strong mention, however far the reply goes on
        ("Looking at the picture.\nThe ears are long.\nB) because it has the long floppy ears", ANIMALS,
         ("B", "cue")),  # fmt: skip
        # a letter that ends an option's text is that text; one right after a text is a letter of its own
        ("We take Route A.", {"A": "cat", "B": "Route A"}, ("B", "option_text")),
        ("y-C", {"A": "cat", "B": "y-", "C": "cow"}, (None, "unparsed")),  # text B and letter C: two answers
        # two option texts that touch are both mentioned (they do not overlap)
        ("cat-dog", {"A": "cat", "B": "-dog"}, (None, "unparsed")),
        ("dog-cat", {"A": "dog-", "B": "cat"}, (None, "unparsed")),
    ],
)
def test_reading_rules_at_their_edges(reply, options, expected):
    assert extract_choice(reply, options) == expected


def test_no_options_read_nothing():
    assert read_choice("B", {}) == (None, "unparsed")
    assert extract_choice("B", {"A": " ", "B": None}) == (None, "unparsed")  # blank options are left out


@pytest.mark.parametrize(
    ("text", "letter", "negated"),
    [
        ("Not A. B fits", "A", True),  # the clause ends after the mention, not before it
        ("We rule out B, C, D here", "D", True),  # letters between the negation and the mention are filler
        ("We rule out B, C, D here", "B", True),
    ],
)
def test_negation_with_the_clause_found_inside(text, letter, negated):
    start = text.index(letter)
    assert _negated(text, start, start + 1) is negated


@pytest.mark.parametrize(
    ("reply", "rows"),
    [
        # touching option B only by its normalised text (the reply's inner spaces differ, its bare text is empty)
        ("(   )", [({"A": "cat", "B": "( )"}, ("B", "exact")), ({"A": "cat", "B": "dog"}, (None, "unparsed"))]),
        # options that differ only in a text the reply names
        ("It is a dog, not a cow.", [({"A": "dog", "B": "fish"}, ("A", "marker")),
                                     ({"A": "cow", "B": "fish"}, (None, "unparsed"))]),  # fmt: skip
        # the whole reply is option A's text in one row and not in the next
        ("big   dog", [({"A": "big dog", "B": "cat"}, ("A", "exact")), ({"A": "small dog", "B": "cat"},
                                                                        (None, "unparsed"))]),  # fmt: skip
        # an option text equal to a piece of the reply: the rest after `B.` (leading), then the whole reply (exact)
        ("B. (   )", [({"A": "( )", "B": "dog"}, ("B", "leading")), ({"A": "b. ( )", "B": "dog"}, ("A", "exact"))]),
        # two bracket-only texts (empty bare texts), the tag's inside and the last line, spaced unlike the reply
        ("<answer>[  ]</answer>\n(   )", [({"A": "[ ]", "B": "dog"}, ("A", "tagged")),
                                          ({"A": "( )", "B": "dog"}, (None, "unparsed"))]),  # fmt: skip
        # an option text named only inside the tag once its LaTeX command is dropped
        ("<answer>\\text{very} big dog</answer>", [({"A": "very big", "B": "cat"}, ("A", "tagged")),
                                                    ({"A": "y big", "B": "cat"}, (None, "unparsed"))]),  # fmt: skip
    ],
)
def test_one_reader_for_all_rows_reads_each_as_a_fresh_one(reply, rows):
    reader = ChoiceReader()
    for options, expected in rows:
        assert read_choice(reply, options) == expected  # a fresh reader
        assert reader.read(reply, options) == expected  # one reader for every row
    for options, expected in reversed(rows):
        assert reader.read(reply, options) == expected
