"""VCR's English tokens on spaCy's tokenizer exceptions (contractions, abbreviations, times, emoticons), as spaCy's
en_core_web_sm splits them (worked from spaCy's English tokenizer_exceptions, not from this module's table).

The token tables are built once per process (lru_cache). mutmut runs each mutant in a process forked after its clean
run built them, so a change to how they are built is seen only where a test builds them again: the fixture below
does, for the tests of this file."""

from __future__ import annotations

import pytest

from vlmkit.scoring.benchmarks import vcr_tokens
from vlmkit.scoring.benchmarks.vcr_tokens import english_tokens


@pytest.fixture(autouse=True)
def tables_built_afresh():
    for cached in (vcr_tokens._english, vcr_tokens._classes, vcr_tokens.tokenizer):
        cached.cache_clear()
    yield


def test_contractions_split_as_spacy_splits_them():
    cases = {
        "I'm": ["I", "'m"], "I’m": ["I", "’m"], "won't": ["wo", "n't"], "can't": ["ca", "n't"],
        "She'll": ["She", "'ll"], "wouldn't've": ["would", "n't", "'ve"], "y'all": ["y'", "all"],
        "o'clock": ["o'clock"], "itll": ["it", "ll"],
    }
    assert {text: english_tokens(text) for text in cases} == cases


def test_abbreviations_times_and_emoticons_stay_whole():
    cases = {
        "Mr.": ["Mr."], "e.g.": ["e.g."], "U.S.": ["U.S."], "Jan.": ["Jan."], "vs.": ["vs."],
        "Dr. Smith": ["Dr.", "Smith"], "10a.m.": ["10", "a.m."], "5pm": ["5", "pm"], ":)": [":)"], "<3": ["<3"],
        "naïve café": ["naïve", "café"], "3.14%": ["3.14", "%"],
    }
    assert {text: english_tokens(text) for text in cases} == cases


NEGATED = ["ca", "could", "do", "does", "did", "had", "may", "might", "must", "need", "ought", "sha", "should", "wo",
           "would", "ai", "are", "is", "was", "were", "have", "has", "dare"]  # fmt: skip


def test_every_negated_verb_splits_off_its_nt_in_both_cases():
    for verb in NEGATED:
        for v in (verb, verb.title()):
            assert english_tokens(f"{v}n't") == [v, "n't"], v
            assert english_tokens(f"{v}n’t") == [v, "n’t"], v
            assert english_tokens(f"{v}nt") == [v, "nt"], v
            assert english_tokens(f"{v}n't've") == [v, "n't", "'ve"], v


def test_pronoun_contractions_and_the_words_spacy_keeps_whole():
    for pron in ("you", "You", "we", "We", "they", "They"):
        assert english_tokens(f"{pron}'re") == [pron, "'re"] and english_tokens(f"{pron}'ve") == [pron, "'ve"]
    for pron in ("he", "He", "she", "She", "it", "It"):
        assert english_tokens(f"{pron}'s") == [pron, "'s"] and english_tokens(f"{pron}'d've") == [pron, "'d", "'ve"]
    for pron in ("i", "I", "you", "he", "she", "it", "we", "they"):
        assert english_tokens(f"{pron}'ll") == [pron, "'ll"] and english_tokens(f"{pron}dve") == [pron, "d", "ve"]
    for wh in ("who", "What", "when", "Where", "why", "How", "there", "That"):
        assert english_tokens(f"{wh}'ll") == [wh, "'ll"] and english_tokens(f"{wh}'ve") == [wh, "'ve"]
    for verb in ("could", "Might", "must", "Should", "would"):
        assert english_tokens(f"{verb}'ve") == [verb, "'ve"] and english_tokens(f"{verb}ve") == [verb, "ve"]
    for word in ("Ill", "ill", "Its", "its", "Hell", "hell", "Shell", "shell", "Shed", "shed", "were", "Were",
                 "Well", "well", "Whore", "whore"):  # fmt: skip
        assert english_tokens(word) == [word]
    for word, pieces in {"cannot": ["can", "not"], "Gonna": ["Gon", "na"], "gotta": ["got", "ta"],
                         "wanna": ["wan", "na"], "Lemme": ["Lem", "me"], "'em": ["'em"], "ma'am": ["ma'am"],
                         "O'clock": ["O'clock"], "Y'all": ["Y'", "all"], "12p.m.": ["12", "p.m."],
                         "1am": ["1", "am"]}.items():  # fmt: skip
        assert english_tokens(word) == pieces, word


def test_lowercase_forms_abbreviations_and_initials_are_exceptions_too():
    cases = {
        "i've": ["i", "'ve"], "ive": ["i", "ve"], "Im": ["I", "m"], "im": ["i", "m"], "hes": ["he", "s"],
        "Shes": ["She", "s"], "that'll": ["that", "'ll"], "how'll": ["how", "'ll"], "where'll": ["where", "'ll"],
        "what'll": ["what", "'ll"], "should've": ["should", "'ve"], "might've": ["might", "'ve"],
        "gonna": ["gon", "na"], "o’clock": ["o’clock"], "ma’am": ["ma’am"], "’em": ["’em"],
        "Adm.": ["Adm."], "Messrs.": ["Messrs."], "Calif.": ["Calif."], "Mich.": ["Mich."], "Tenn.": ["Tenn."],
        "b.": ["b."], "ü.": ["ü."],
    }
    assert {text: english_tokens(text) for text in cases} == cases


def test_question_word_and_pronoun_forms_without_a_suffix_rule():
    # `'d` and `'re` are no suffix of spaCy's rules: only the exceptions split them; `'s` would split anyway
    cases = {"who'd": ["who", "'d"], "who're": ["who", "'re"], "Where'd": ["Where", "'d"], "youre": ["you", "re"],
             "Theyre": ["They", "re"], "shes": ["she", "s"]}  # fmt: skip
    assert {text: english_tokens(text) for text in cases} == cases
