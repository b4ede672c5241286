"""Reading the chosen option out of a multiple-choice reply, as a careful person would.

`extract_choice(prediction, options)` reads only the answer part of the reply (the text after the last `</think>`),
normalised (NFKC, so full-width `Ｂ` and `（Ｃ）` read as `B` and `(C)`; markdown `*`, `_`, `` ` `` and heading marks
dropped), and tries, in order (the method names are what per-sample records and counts show):

1. exact       - the whole reply is a letter (`B`, `b`, `(B)`, `[B]`, `B.`, `Option B`, `B选项`), the letter with
                 its own option text (`B. dog`, `(b) dog`, `dog (B)`), or one option's text alone (`a dog`). A
                 letter with another option's text is `leading` after punctuation (`B) cat`: the letter was
                 chosen), the pronoun or article and that text for `I` and `A` (`I dog`: option_text; `A dog.`
                 alone is that option's text, exact), else unread (`B cat`).
2. tagged      - the last `<answer>...</answer>`, `\\boxed{...}` or JSON `"answer": "..."`, itself read by these
                 steps; a tag that cannot be read leaves the reply unread.
3. marker      - the last answer phrase followed by a letter or an option text: `The answer is (b)`, `Answer: C`,
                 `答案：B`, `正确答案是 B`, `I choose D`, `I'd say B`, `it's B`, `so the answer is B`, `B is correct`,
                 `选B`. `The answer is not A` has no letter after the phrase and does not count; `The answer is A
                 or B` is a hedge and leaves the reply unread, as does `it might be C` beside another letter.
4. final_line  - after reasoning, a last line that is itself an exact reply (`...\\n\\nB`, `...\\n**B. dog**`).
5. leading     - the reply starts with a letter and a separator (`B. The animal has floppy ears ...`, `D, since`,
                 `(A) because`), and no other option letter is named later except in a negation.
6. cue         - exactly one option letter is named anywhere outside negations (`not A but B`: B), as a strong
                 mention (`option B`, `(B)`) or among the last four words (VLMEvalKit's window), and no option text
                 of another letter is named.
7. option_text - no letter is named and exactly one option's text is (`It is a fish.`), not negated
                 (`It is not a cat.` is unread), as a whole word (`category` does not name `cat`).
8. fuzzy       - only when asked: the smallest Levenshtein distance between the reply and `L`, the option text or
                 `L. text`; ties go to the alphabetically first letter. Not part of VLMEvalKit; counted apart.

Otherwise `(None, "unparsed")`: the reply goes to the judge when there is one. What is never read as a letter: `A`
or `I` used as an English word (`A red circle.` reads the option text "red circle" if there is one, else nothing),
a letter inside a word or inside an option's text (`Point A` is option B's text when B is "Point A"), `N/A`, a
negated or eliminated letter (`Not C.`, `A is wrong`, `rule out A and C`), and two letters offered together
(`A or B`, `B/C`, `either B or C`). Only letters whose option text is present and non-empty count.

`vlmevalkit_choice` is VLMEvalKit's own rule (`can_infer`: option inference, then text inference; facts section 2),
kept faithfully for the per-run count of rows where the two readings differ and to read a judge's reply as
VLMEvalKit reads it.

`ChoiceReader` reads a whole table (score_mcq makes one per call) exactly as `read_choice` and `vlmevalkit_read` read
each row: what does not depend on the options (answer part, normalised text, answer phrases, letters named, clause
bounds) is worked out once per distinct prediction, and a reading is kept by the reply and the part of the options it
can see (`_Reply.options_key`), so a reply met again under options that differ only in texts it never names is not
read again.
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from vlmkit.core.cells import is_missing
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

METHODS = ("exact", "tagged", "marker", "final_line", "leading", "cue", "option_text", "fuzzy", "unparsed")
RULE_METHODS = frozenset(METHODS) - {"unparsed"}
LETTERS = frozenset(string.ascii_uppercase)
_HEDGE = "hedge"  # what an answer phrase offering two letters reads as: the reply is unread

# VLMEvalKit's refusal phrases (its can_infer_option answers `Z` for them).
REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_VLM_PUNCT = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
_VLM_VERBOSE_RE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def clean_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Keep single upper-case letters whose text is present and non-empty, in letter order."""
    out: dict[str, str] = {}
    for key in sorted(options):
        if key not in LETTERS:
            continue
        text = cell_text(options[key])
        if text is not None and text.strip():
            out[key] = text
    return out


# --- VLMEvalKit's rule ----------------------------------------------------------------------------------------


def vlmevalkit_choice(prediction: Any, options: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's `can_infer(prediction, choices)` (env VERBOSE unset): a letter, `Z` (its "no option" answer: a
    refusal phrase, or a stray `Z` token), or None where it infers nothing. `options`: the row's option cells (those
    with blank text are left out, as everywhere in vlmkit; VLMEvalKit keeps any cell that is not NaN)."""
    if is_missing(prediction):
        return None
    return vlmevalkit_read(str(prediction), clean_options(options))


def vlmevalkit_read(answer: str, choices: dict[str, str]) -> str | None:
    """vlmevalkit_choice for options already cleaned (clean_options) and a prediction that is a string."""
    return _vlm_read(_VlmReply(answer), choices)


class _VlmReply:
    """What VLMEvalKit's rule looks at in a reply, whatever the options: worked out once per distinct reply."""

    __slots__ = ("failed", "low", "refusal", "token_set", "tokens", "verbose")

    def __init__(self, answer: str) -> None:
        self.failed = VLMEVALKIT_FAIL_MARKER in answer
        self.refusal = any(r in answer for r in REFUSALS)
        self.tokens = answer.translate(_VLM_PUNCT).split()
        self.token_set = frozenset(self.tokens)
        m = _VLM_VERBOSE_RE.search(answer)
        self.verbose = m.group(1).upper() if m else None
        self.low = answer.lower()


def _vlm_read(reply: _VlmReply, choices: dict[str, str]) -> str | None:
    if not reply.failed:  # can_infer_option; with the marker it infers nothing, text goes on
        if reply.refusal:
            return "Z"
        tokens = reply.tokens
        present = [c for c in choices if c in reply.token_set]
        if len(present) == 1:
            if tokens.index(present[0]) > len(tokens) - 5:
                return present[0]
        elif not present and "Z" in reply.token_set:
            return "Z"
        if reply.verbose is not None and reply.verbose in choices:
            return reply.verbose
    # can_infer_text: the answer at most twice the options' total length, exactly one option text inside it
    low = reply.low
    if len(low) > 2 * sum(map(len, choices.values())):
        return None
    cands = [c for c, t in choices.items() if t.lower() in low]
    return cands[0] if len(cands) == 1 else None


# --- normalisation --------------------------------------------------------------------------------------------

_MARKDOWN_RE = re.compile(r"[*`]+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|^\s*#+\s*", re.M)
_BRACKETS = str.maketrans({"【": "[", "】": "]", "「": '"', "」": '"', "『": '"', "』": '"', "《": "<", "》": ">"})
_ARTICLE_RE = re.compile(r"^(?:a|an|the)\s+")


def normalise(text: str) -> str:
    """NFKC (full width -> ASCII), CJK brackets as ASCII ones, markdown emphasis and heading marks dropped."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_BRACKETS)
    if "*" in text or "`" in text or "_" in text or "#" in text:  # every markdown mark holds one of them
        text = _MARKDOWN_RE.sub("", text)
    return text.strip()


@lru_cache(maxsize=8192)
def _norm_text(text: str) -> str:
    """An option text or a reply as compared with option texts: lower case, single spaces, no closing stop."""
    text = " ".join(normalise(text).lower().split())
    return text.strip(" .。!！")


@lru_cache(maxsize=8192)
def _bare(text: str) -> str:
    """_norm_text without a leading article or surrounding brackets/quotes."""
    text = _norm_text(text).strip("()[]\"' ")
    return _ARTICLE_RE.sub("", text)


class _Options:
    """A row's options with what reading needs: letters, normalised texts and their mentions in a text (worked out
    on first use: most replies are read without them)."""

    __slots__ = ("_bare", "_by_length", "_norm", "_spans", "_spans_of", "letters")

    def __init__(self, options: dict[str, str]) -> None:
        self.letters = options
        self._norm: dict[str, str] | None = None
        self._bare: dict[str, str] = {}
        self._by_length: list[tuple[str, str]] | None = None
        self._spans_of: str | None = None  # the text whose spans are in _spans
        self._spans: list[tuple[int, int, str]] = []

    def _texts(self) -> dict[str, str]:
        self._norm = {k: _norm_text(v) for k, v in self.letters.items()}
        self._bare = {k: _bare(v) for k, v in self.letters.items()}
        return self._norm

    def text_letter(self, norm: str, bare: str) -> str | None:
        """The letter whose option text is a text of _norm_text `norm` and _bare `bare` (the whole text; article and
        closing stop ignored); None when none or several are."""
        norms = self._norm if self._norm is not None else self._texts()
        bares = self._bare
        hit = None
        for k in self.letters:
            if norm == norms[k] or (bare and bare == bares[k]):
                if hit is not None:
                    return None
                hit = k
        return hit

    def text_spans(self, low: str) -> list[tuple[int, int, str]]:
        """(start, end, letter) of whole-word option-text mentions in the lower-cased reply, longest texts first,
        never overlapping. A plural `s` is allowed after a text that ends in a letter."""
        if low is self._spans_of:
            return self._spans
        if self._by_length is None:
            norms = self._norm if self._norm is not None else self._texts()
            self._by_length = sorted(((t, k) for k, t in norms.items() if t), key=lambda p: -len(p[0]))
        spans: list[tuple[int, int, str]] = []
        for text, letter in self._by_length:
            if text not in low:  # every match of its pattern holds the text itself
                continue
            for m in _text_pattern(text).finditer(low):
                if not any(s < m.end() and m.start() < e for s, e, _ in spans):
                    spans.append((m.start(), m.end(), letter))
        spans.sort()
        self._spans_of, self._spans = low, spans
        return spans


_DECIMAL_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?")


@lru_cache(maxsize=8192)
def _text_pattern(text: str) -> re.Pattern[str]:
    """Whole-word matching of an option text (digits: `2` is not in `12` nor in `2.5`; words: `cat` not in `category`,
    `cats` allowed). A number names the same value written with trailing zeros: `3.5` is in `3.50 m`, `3` in
    `3.0`."""
    body = re.escape(text)
    if _DECIMAL_RE.fullmatch(text):
        body += "0*" if "." in text else r"(?:\.0+)?"
    before = r"(?<![0-9a-z\u00c0-\u024f])(?<![0-9][.,])" if text[0].isalnum() and text[0].isascii() else ""
    after = ""
    if text[-1].isascii() and text[-1].isalpha():
        after = r"(?:e?s)?(?![0-9a-z\u00c0-\u024f])"
    elif text[-1].isascii() and text[-1].isdigit():
        after = r"(?![0-9])(?![.,][0-9])"
    return re.compile(before + body + after)


# --- step 1: exact --------------------------------------------------------------------------------------------

_LETTER_ONLY_RE = re.compile(
    r"(?:(?i:option|choice|answer)\s*[:：]?\s*|选项\s*)?[(\[<{]?\s*([A-Za-z])\s*[)\]>}]?(?:\s*选项)?[\s.。:!?)]*"
)
_LETTER_TEXT_RE = re.compile(r"[(\[]?\s*([A-Za-z])\s*(?:([)\]]|[.:)：\-–—=])|(\s))\s*(.+)", re.S)
_TEXT_LETTER_RE = re.compile(r"(.+?)\s*[(\[]([A-Z])[)\]][\s.。]*", re.S)


def _exact(reply: _Reply, opts: _Options) -> tuple[str | None, str] | None:
    """(letter, method) when the whole reply is an exact answer; None when it is not."""
    only, norm, bare, letter_text, text_letter = reply.exact_parts()
    if only is not None and only in opts.letters:
        return only, "exact"
    letter = opts.text_letter(norm, bare)
    if letter is not None:
        return letter, "exact"
    if only is not None:  # a letter that is not an option (`E` of four options), and no option's text either
        return None, "unparsed"
    if letter_text is not None:
        raw, punct, rest_norm, rest_bare = letter_text
        named = opts.text_letter(rest_norm, rest_bare)
        letter = raw.upper()
        if letter in opts.letters and named is not None:
            if named == letter:
                return letter, "exact"
            if punct and raw.isupper():  # `B) cat`: the letter is what was chosen
                return letter, "leading"
            if raw in "AI" and raw.isupper():  # `I dog`: the pronoun (or article), then an option's text
                return named, "option_text"
            return None, "unparsed"
    if text_letter is not None:
        letter, before_norm, before_bare = text_letter
        if letter in opts.letters and opts.text_letter(before_norm, before_bare) == letter:
            return letter, "exact"  # `dog (B)`
    return None


# --- step 2: tagged -------------------------------------------------------------------------------------------

_ANSWER_TAG_RE = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_BOXED_RE = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_LATEX_TEXT_RE = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_JSON_ANSWER_RE = re.compile(r"""["']answer["']\s*:\s*["']([^"']*)["']""", re.I)


def tagged_answer(text: str) -> str | None:
    """The inside of the last `<answer>` tag, `\\boxed{}` or JSON `answer` field; None when there is none."""
    for pattern in (_ANSWER_TAG_RE, _BOXED_RE, _JSON_ANSWER_RE):
        found = pattern.findall(text)
        if found:
            inner = found[-1]
            return _LATEX_TEXT_RE.sub(r"\1", inner).strip().strip("$").strip()
    return None


# --- mentions: letters and option texts named in the reply, and whether they are negated ------------------------

_LETTER_RE = re.compile(r"(?<![A-Za-z0-9'’])([A-Z])(?![A-Za-z0-9'’])")
_NA_RE = re.compile(r"\bN/A\b|\bn/a\b|\bE\. ?coli\b")
# a letter right after one of these words is a name (`vitamin C`, `plan B`, `labeled C`), not an option
_LABEL_BEFORE_RE = re.compile(
    r"(?i)\b(?:vitamins?|hepatitis|type|plan|grade|figure|fig\.|section|point|region|area|label(?:l?ed)?|marked|called|"
    r"named|letter|class|group|row|column|part|panel|model|size|blood|line|angle|side|vertex|node|chapter|appendix|"
    r"exhibit|version|team|player|mr\.?|ms\.?|dr\.?)\s*$"
)
_WORD_AFTER_RE = re.compile(r"\s+([A-Za-z]+)")
# words after `A` / `I` that make them a letter rather than the article / the pronoun
_LETTER_FOLLOWERS = frozenset(
    "is was would seems appears because since as and or but not should must could might may looks best fits matches "
    "correct right wrong incorrect then so option choice only nor".split()
)
_NEGATORS = re.compile(
    r"(?i:\b(?:not|never|cannot|neither|nor|without|except|unlike|excluding|exclude|eliminate|eliminating|"
    r"eliminated|rule\s+out|ruling\s+out|rather\s+than|instead\s+of|other\s+than)\b|n't\b|\bno\b(?!\s*[,.!:;])|"
    r"不是|不|非|没有|排除)"
)
_CLAUSE_END = re.compile(r"[.;!?\n。；！？]|\bbut\b|\bhowever\b|但是|而是")
_CLAUSE_WORD_RE = re.compile(r"\bbut\b|\bhowever\b")  # _CLAUSE_END's words, whose closing \b depends on what follows
_ASSERTIONS = frozenset("it it's is are so but 是 而是".split())  # a new assertion ends a negation's reach
_FILLER = frozenset("a an the and or nor option options choice choices , ( ) [ ]".split())
_NEG_AFTER_RE = re.compile(
    r"(?i)^(?:\s*(?:,|\band\b|\bor\b|\bnor\b|\boption\b|(?-i:[A-Z])(?![A-Za-z])|\(|\)))*\s*"
    r"(?:is|are|was|were|seems?|looks?)\s+"
    r"(?:(?:definitely|clearly|also|obviously)\s+)?(?:wrong|incorrect|false|not\b|ruled\s+out|eliminated|excluded|"
    r"impossible|unlikely)|^(?:\s*(?:,|\band\b|\bor\b|(?-i:[A-Z])(?![A-Za-z])))*\s*can\s+be\s+"
    r"(?:ruled\s+out|eliminated|excluded)|"
    r"^\s*(?:选项)?\s*(?:错误|不对|不正确|排除)"
)


def _negated(text: str, start: int, end: int, clause_start: int | None = None) -> bool:
    """Whether the mention text[start:end] is negated or eliminated: a negation shortly before it in its clause
    (`not A`, `rule out A and C`, `不是猫`, `isn't a cat`), or a verdict after it (`A is wrong`, `A, B are wrong`).
    `clause_start`: where its clause starts (_Reply.clause_start), found here when not given."""
    if clause_start is None:
        clause_start = 0
        for m in _CLAUSE_END.finditer(text, 0, start):
            clause_start = m.end()
    before = text[clause_start:start]
    last = None
    for m in _NEGATORS.finditer(before):
        last = m
    if last is not None:
        between = before[last.end() :].replace(",", " , ").split()
        others = [w for w in between if w.lower() not in _FILLER and not (len(w) == 1 and w.isupper())]
        if len(others) <= 1 and not any(w.lower() in _ASSERTIONS for w in others):
            return True
    return bool(_NEG_AFTER_RE.match(text[end : end + 80]))


def _is_word_letter(text: str, letter: str, end: int) -> bool:
    """`A` the article or `I` the pronoun (ending at `end`), not a letter: followed by a word that does not go with
    a letter (`A red circle`, `I think`; but `A is correct`, `A because ...`)."""
    if letter not in "AI":
        return False
    after = _WORD_AFTER_RE.match(text, end)
    return bool(after) and after.group(1).lower() not in _LETTER_FOLLOWERS


def _strong(text: str, start: int, end: int) -> bool:
    """`option B`, `choice B`, `(B)`, `[B]`, `选项B`, `B选项`, or `B.`/`B)`/`B:` opening a line."""
    before, after = text[max(0, start - 8) : start], text[end : end + 3]
    if re.search(r"(?i)(?:option|choice)\s*[(\[]?$|选项\s*$", before) or after.startswith("选项"):
        return True
    if before.endswith(("(", "[")) and after.startswith((")", "]")):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip() and bool(re.match(r"[.):]", after))


def _letter_mentions(reply: _Reply, opts: _Options) -> list[tuple[int, int, str, bool]]:
    """Letter mentions as (start, end, letter, strong): options' letters, neither negated, nor `A`/`I` used as
    words, nor inside an option text or `N/A`."""
    found = reply.letter_candidates()
    if not found:
        return []
    letters = opts.letters
    spans = opts.text_spans(reply.low())
    return [c for c in found if c[2] in letters and not any(a <= c[0] < b for a, b, _ in spans)]


def _text_mentions(reply: _Reply, opts: _Options) -> list[tuple[int, int, str]]:
    """Option-text mentions as (start, end, letter), negated ones left out."""
    return [(s, e, k) for s, e, k in opts.text_spans(reply.low()) if not reply.negated(s, e)]


# --- step 3: answer phrases -----------------------------------------------------------------------------------

# The lookahead admits exactly the characters an answer phrase can start with (a word start and one of the English
# phrases' first letters, case-insensitively as the phrases match them, or a Chinese phrase's first character): it
# changes no match, it only lets the scan skip every other position at once.
_MARKERS = re.compile(
    r"(?=\b(?i:[abcfhilmoprstw])|[正答选我应故所])(?:"
    r"(?i:\b(?:(?:the|my|final|correct|right|best|only)\s+)*(?:answer|option|choice|fit|match|one|selection)\b"
    r"\s*(?:\bis\b|\bwould\s+be\b|\bshould\s+be\b|\bmust\s+be\b|\bwill\s+be\b|[:=\-–—])"
    r"|\banswer\s*[:：]|\bselected\s*:"
    r"|\b(?:i|i'd|i'll|we|let's|let\s+us)\s+(?:would\s+|will\s+|shall\s+)?(?:choose|chose|pick|select|go\s+with|"
    r"go\s+for|opt\s+for|say)\b"
    r"|\b(?:it|this|that)\s*(?:\bis\b|'s|’s|\bwould\s+be\b|\bshould\s+be\b|\bmust\s+be\b|\bwill\s+be\b)"
    r"|(?P<conn>\b(?:so|thus|hence|therefore)\b,?(?:\s+(?:it's|it\s+is|we\s+get))?"
    r"|\b(?:i\s+think|i\s+believe|i\s+guess|probably|leaving|which\s+leaves|leaves)\b))"
    r"|(?:正确)?(?:答案|选项)\s*(?:应该|应)?\s*(?:是|为|為|选)?\s*[:：]?|(?:我|应该|应|故|所以)?(?:选择|选)\s*[:：]?"
    r")"
)
_AFTER_MARKER_RE = re.compile(r"[\s:：\-–—=,]*(?:(?i:option|choice)\s*|选项\s*)?")
_MARKER_LETTER_RE = re.compile(r"([(\[]\s*([A-Za-z])\s*[)\]]|([A-Za-z]))(?![A-Za-z0-9'’])")
_LOWER_OK_AFTER = re.compile(r"\s*(?:$|[.,;:!?)\]。，]|\n)")
_HEDGE_AFTER_RE = re.compile(
    r"(?i)^\s*[)\]]?\s*(?:,\s*)?(?:or|/|and|和|或|、|及)\s*(?:option\s*|选项)?\s*[(\[]?\s*[A-Z](?![A-Za-z0-9])"
)
# (the lookahead admits exactly the characters a match starts with: the scan skips every other position at once)
_HEDGE_BEFORE_RE = re.compile(r"(?i)(?=\b[wenub]|[不或])(?:\b(?:whether|either|not\s+sure|unsure|between)\b|不确定|或者)")
_POSTFIX_RE = re.compile(
    r"(?<![A-Za-z0-9'’])(?:(?i:option|choice)\s*|选项\s*)?[(\[]?([A-Z])[)\]]?\s*(?:"
    r"(?i:is|would\s+be|seems|appears\s+to\s+be|must\s+be|should\s+be|might\s+be|could\s+be|may\s+be)\s+"
    r"(?i:(?:the\s+|my\s+)?(?:correct|right|best|true|answer|most\s+\w+|only\s+correct)\b)"
    r"|(?i:fits\s+best|is\s+my\s+(?:answer|choice))|正确|是对的|是正确的|对)"
)
_MODAL_HEDGE_RE = re.compile(
    r"(?i)\b(?:might|could|may)\s+(?:also\s+)?be\s+(?:option\s+)?[(\[]?([A-Z])(?![A-Za-z0-9'’])"
)


_NOT_BEFORE_RE = re.compile(r"(?i)(?:\bnot|n't|不)\s*$")
_SEG_ARTICLE_RE = re.compile(r"(?:a|an|the)\s+")
_SEG_HEDGE_RE = re.compile(r"\s*,?\s*(?:or|/|and)\s")


def _read_after_marker(reply: _Reply, pos: int, opts: _Options, letter_only: bool = False) -> str | None:
    """What an answer phrase ending at `pos` names: a letter, an option text (not after a connective such as `so`,
    which reads only a letter), _HEDGE, or None."""
    letter, verdict, start = reply.after_marker(pos)
    if letter is not None and letter in opts.letters:
        return verdict
    if letter_only:
        return None
    seg, offset = reply.segment(start)
    spans = opts.text_spans(seg)
    for s, e, letter in spans:
        if s == offset:
            if _SEG_HEDGE_RE.match(seg[e:]) and any(s2 > e for s2, _, k in spans if k != letter):
                return _HEDGE
            return letter
    return None


def _marker(reply: _Reply, opts: _Options) -> tuple[str | None, int]:
    """(the last answer phrase's letter, where it is named); _HEDGE when that phrase offers two letters or another
    letter is offered as a possibility (`might be C`); (None, -1) when no phrase names an option."""
    readings: list[tuple[int, str]] = []
    for end, connective in reply.markers():
        got = _read_after_marker(reply, end, opts, letter_only=connective)
        if got is not None:
            readings.append((end, got))
    letters = opts.letters
    for start, letter in reply.postfixes():
        if letter in letters:
            readings.append((start, letter))
    if not readings:
        return None, -1
    pos, found = max(readings)
    if found in letters and any(h != found and h in letters for h in reply.modal_hedges()):
        return _HEDGE, pos
    return found, pos


# --- steps 5-7: leading letter, lone mention, option text -----------------------------------------------------

_LEADING_RE = re.compile(
    r"(?:(?i:option|choice)\s*)?(?:[(\[]\s*([A-Za-z])\s*[)\]]|([A-Z])(?=\s*(?:[.:)：,\-–—]|\n|$)))"
)


def _leading(reply: _Reply, opts: _Options, letters: list[tuple[int, int, str, bool]]) -> str | None:
    lead = reply.leading()
    if lead is None:
        return None
    letter, end = lead
    if letter not in opts.letters:
        return None
    if any(k != letter for s, _, k, _ in letters if s >= end):
        return None
    return letter


def _cue(text: str, letters: list[tuple[int, int, str, bool]], texts: list[tuple[int, int, str]]) -> str | None:
    named = {k for _, _, k, _ in letters}
    if len(named) != 1:
        return None
    letter = named.pop()
    if any(k != letter for _, _, k in texts):
        return None
    tail = len(text[letters[-1][1] :].translate(_VLM_PUNCT).split())
    return letter if any(strong for *_, strong in letters) or tail <= 3 else None


# --- the reader ---------------------------------------------------------------------------------------------

_UNSET: Any = object()
_POOL_SIZE = 4096  # distinct replies a ChoiceReader keeps (a pool that fills is emptied: memory stays bounded)


class _Reply:
    """A normalised reply and what reading it needs that does not depend on the options, each part worked out on
    first use and kept: a reply met again is read against other options without scanning it again."""

    __slots__ = (
        "_after", "_clause_ends", "_exact", "_last", "_leading", "_letters", "_low", "_markers", "_modal", "_negated",
        "_pool", "_postfixes", "_segments", "_tagged", "_touch", "readings", "text",
    )  # fmt: skip

    def __init__(self, text: str, pool: dict[str, _Reply]) -> None:
        self.text = text
        self._pool = pool
        self._low: str | None = None
        self._exact: Any = None
        self._tagged: Any = _UNSET
        self._markers: list[tuple[int, bool]] | None = None
        self._after: dict[int, tuple[str | None, str | None, int]] = {}
        self._segments: dict[int, tuple[str, int]] = {}
        self._postfixes: list[tuple[int, str]] | None = None
        self._modal: frozenset[str] | None = None
        self._letters: list[tuple[int, int, str, bool]] | None = None
        self._negated: dict[tuple[int, int], bool] = {}
        self._clause_ends: list[int] | None = None
        self._last: Any = _UNSET
        self._leading: Any = _UNSET
        self._touch: tuple[frozenset[str], frozenset[str], str, str | None] | None = None
        self.readings: dict[tuple[Any, ...], tuple[str | None, str]] = {}  # _read's result by options_key

    def low(self) -> str:
        if self._low is None:
            self._low = self.text.lower()
        return self._low

    def exact_parts(self) -> tuple[str | None, str, str, tuple[str, str, str, str] | None, tuple[str, str, str] | None]:
        """(the letter when the whole reply is one, its _norm_text, its _bare, (letter, punctuation, the rest's
        _norm_text, _bare) for `B. text`, (letter, the text's _norm_text, _bare) for `text (B)`)."""
        if self._exact is None:
            text = self.text
            m = _LETTER_ONLY_RE.fullmatch(text)
            lt = _LETTER_TEXT_RE.fullmatch(text)
            tl = _TEXT_LETTER_RE.fullmatch(text)
            self._exact = (
                m.group(1).upper() if m else None,
                _norm_text(text),
                _bare(text),
                (lt.group(1), lt.group(2), _norm_text(lt.group(4)), _bare(lt.group(4))) if lt else None,
                (tl.group(2), _norm_text(tl.group(1)), _bare(tl.group(1))) if tl else None,
            )
        return self._exact

    def tagged(self) -> _Reply | None:
        """The normalised inside of the last answer tag (tagged_answer), or None."""
        if self._tagged is _UNSET:
            inner = tagged_answer(self.text)
            self._tagged = None if inner is None else _reply(self._pool, normalise(inner))
        return self._tagged

    def markers(self) -> list[tuple[int, bool]]:
        """(end, whether a connective such as `so`) of each answer phrase not hedged or negated in its clause."""
        if self._markers is None:
            text = self.text
            found = []
            for m in _MARKERS.finditer(text):
                clause = text[self.clause_start(m.start()) : m.start()]
                # a match of _NOT_BEFORE_RE ends the clause but for white space: it starts at most 3 before that
                if _HEDGE_BEFORE_RE.search(clause) or _NOT_BEFORE_RE.search(clause, max(0, len(clause.rstrip()) - 3)):
                    continue
                found.append((m.end(), m.group("conn") is not None))
            self._markers = found
        return self._markers

    def after_marker(self, pos: int) -> tuple[str | None, str | None, int]:
        """(the letter named right after an answer phrase ending at `pos`, what the phrase then reads: that letter,
        _HEDGE or None; where what follows the phrase starts). The letter is None where none is named."""
        got = self._after.get(pos)
        if got is None:
            text = self.text
            m = _AFTER_MARKER_RE.match(text, pos)
            start = m.end() if m else pos
            letter = verdict = None
            lm = _MARKER_LETTER_RE.match(text, start)
            if lm:
                raw = lm.group(2) or lm.group(3)
                bracketed = lm.group(2) is not None
                rest = text[lm.end() :]
                ok = raw.isupper() or bracketed or _LOWER_OK_AFTER.match(rest)
                if ok and raw.isupper() and not bracketed and _is_word_letter(text, raw, lm.end()):
                    ok = False
                if ok:
                    letter = raw.upper()
                    if _HEDGE_AFTER_RE.match(rest):
                        verdict = _HEDGE
                    elif not _NEG_AFTER_RE.match(rest):
                        verdict = letter
            got = self._after[pos] = (letter, verdict, start)
        return got

    def segment(self, start: int) -> tuple[str, int]:
        """(the lower-cased 200 characters from `start`, where an option text would start in it: after an article)."""
        got = self._segments.get(start)
        if got is None:
            seg = self.low()[start : start + 200]
            article = _SEG_ARTICLE_RE.match(seg)
            got = self._segments[start] = (seg, article.end() if article else 0)
        return got

    def postfixes(self) -> list[tuple[int, str]]:
        """(start, letter) of each `B is correct` not hedged just before."""
        if self._postfixes is None:
            text = self.text
            self._postfixes = [
                (m.start(), m.group(1))
                for m in _POSTFIX_RE.finditer(text)
                if not _HEDGE_BEFORE_RE.search(text[max(0, m.start() - 30) : m.start()])
            ]
        return self._postfixes

    def modal_hedges(self) -> frozenset[str]:
        """The letters offered as a possibility (`might be C`)."""
        if self._modal is None:
            self._modal = frozenset(h.group(1) for h in _MODAL_HEDGE_RE.finditer(self.text))
        return self._modal

    def letter_candidates(self) -> list[tuple[int, int, str, bool]]:
        """(start, end, letter, strong) of each upper-case letter named that is not negated, not `A`/`I` used as a
        word, not a label (`vitamin C`) and not in `N/A`; whether it is an option, or inside one's text, is the
        options' to say."""
        if self._letters is None:
            text = self.text
            na = [m.span() for m in _NA_RE.finditer(text)]
            found = []
            for m in _LETTER_RE.finditer(text):
                s, e = m.span()
                if any(a <= s < b for a, b in na) or _is_word_letter(text, m[1], e):
                    continue
                if _LABEL_BEFORE_RE.search(text, max(0, s - 20), s):
                    continue
                if not self.negated(s, e):
                    found.append((s, e, m.group(1), _strong(text, s, e)))
            self._letters = found
        return self._letters

    def negated(self, start: int, end: int) -> bool:
        got = self._negated.get((start, end))
        if got is None:
            got = self._negated[(start, end)] = _negated(self.text, start, end, self.clause_start(start))
        return got

    def clause_start(self, pos: int) -> int:
        """Where the clause holding `pos` starts: the end of the last _CLAUSE_END match in text[:pos] (0 when none),
        as `_CLAUSE_END.finditer(text, 0, pos)` finds it, from one scan of the whole text. The matches ending by
        `pos` are the same in both scans, but for `but`/`however` ending right at `pos`: cut there, its closing
        `\\b` holds whatever follows in the whole text."""
        if self._clause_ends is None:
            self._clause_ends = [c.end() for c in _CLAUSE_END.finditer(self.text)]
        text = self.text
        if (pos >= 3 and _CLAUSE_WORD_RE.fullmatch(text, pos - 3, pos)) or (
            pos >= 7 and _CLAUSE_WORD_RE.fullmatch(text, pos - 7, pos)
        ):
            return pos
        i = bisect_right(self._clause_ends, pos)
        return self._clause_ends[i - 1] if i else 0

    def last_line(self) -> _Reply | None:
        """The last non-blank line (stripped) when there are several, else None."""
        if self._last is _UNSET:
            lines = [line.strip() for line in self.text.splitlines() if line.strip()]
            self._last = _reply(self._pool, lines[-1]) if len(lines) > 1 else None
        return self._last

    def leading(self) -> tuple[str, int] | None:
        """(the upper-cased letter the reply starts with, where it ends) for `B.`, `(b)`, `D,`; None otherwise."""
        if self._leading is _UNSET:
            m = _LEADING_RE.match(self.text)
            if not m or _NA_RE.match(self.text):
                self._leading = None
            else:
                self._leading = ((m.group(1) or m.group(2)).upper(), m.end())
        return self._leading


    def options_key(self, options: dict[str, str], texts: dict[str, tuple[str, str]]) -> tuple[Any, ...]:
        """What `_read(self, _Options(options))` depends on: the letters in their order, and the letter, _norm_text
        and _bare of each option text that touches the reply. An option touches it when its normalised text is the
        whole of a piece that `_exact` compares with option texts (the reply, `B. <rest>`, `<text> (B)`, the
        same in the tagged answer and in the last lines), or its bare text is such a piece's non-empty bare text,
        or its normalised text occurs in the lower-cased reply or tagged answer (every text mention, and every
        segment after an answer phrase, lies there). An option that touches nothing is named by no piece and
        mentioned nowhere: reading never sees its text, so two option sets with the same key read the same.
        `texts`: a cache of (_norm_text, _bare) by option text."""
        if self._touch is None:
            norms: set[str] = set()
            bares: set[str] = set()
            parts = [self, self.last_line()]
            inner = self.tagged()
            if inner is not None:
                parts += [inner, inner.last_line()]
            for part in parts:
                if part is None:
                    continue
                _, norm, bare, letter_text, text_letter = part.exact_parts()
                pieces = [(norm, bare)]
                if letter_text is not None:
                    pieces.append(letter_text[2:])
                if text_letter is not None:
                    pieces.append(text_letter[1:])
                for norm, bare in pieces:
                    norms.add(norm)
                    if bare:
                        bares.add(bare)
            self._touch = (frozenset(norms), frozenset(bares), self.low(), None if inner is None else inner.low())
        norms_in, bares_in, low, inner_low = self._touch
        touching = []
        for letter, text in options.items():
            got = texts.get(text)
            if got is None:
                if len(texts) >= _POOL_SIZE:
                    texts.clear()
                got = texts[text] = (_norm_text(text), _bare(text))
            norm, bare = got
            if norm in norms_in or bare in bares_in or norm in low or (inner_low is not None and norm in inner_low):
                touching.append((letter, norm, bare))
        return tuple(options), tuple(touching)


def _reply(pool: dict[str, _Reply], text: str) -> _Reply:
    got = pool.get(text)
    if got is None:
        if len(pool) >= _POOL_SIZE:
            pool.clear()
        got = pool[text] = _Reply(text, pool)
    return got


def _read(reply: _Reply, opts: _Options, allow_tags: bool = True) -> tuple[str | None, str]:
    if not reply.text:
        return None, "unparsed"
    exact = _exact(reply, opts)
    if exact is not None:
        return exact
    if allow_tags:
        inner = reply.tagged()
        if inner is not None:
            letter, _ = _read(inner, opts, allow_tags=False)
            return (letter, "tagged") if letter is not None else (None, "unparsed")
    marked, pos = _marker(reply, opts)
    if marked is not None:
        if marked == _HEDGE:
            return None, "unparsed"
        # an answer phrase followed by other letters offered in a list (`each option: (A) ... (B) ...`) is no answer
        # (the options only remove candidates: where no candidate is such a letter, none of the mentions is)
        if any(k != marked and strong and s > pos for s, _, k, strong in reply.letter_candidates()) and any(
            k != marked and strong and s > pos for s, _, k, strong in _letter_mentions(reply, opts)
        ):
            return None, "unparsed"
        return marked, "marker"
    last = reply.last_line()
    if last is not None:
        got = _exact(last, opts)
        if got is not None and got[0] is not None:
            return got[0], "final_line"
    letters = _letter_mentions(reply, opts)
    letter = _leading(reply, opts, letters)
    if letter is not None:
        return letter, "leading"
    if letters:
        letter = _cue(reply.text, letters, _text_mentions(reply, opts))
        return (letter, "cue") if letter is not None else (None, "unparsed")
    named = {k for _, _, k in _text_mentions(reply, opts)}
    if len(named) == 1:
        return named.pop(), "option_text"
    return None, "unparsed"


def _fuzzy(pred: str, options: dict[str, str]) -> str | None:
    best: tuple[int, str] | None = None
    for letter, text in options.items():
        dist = min(Levenshtein.distance(pred, cand) for cand in (letter, text, f"{letter}. {text}"))
        if best is None or (dist, letter) < best:
            best = (dist, letter)
    return best[1] if best else None


_BARE_LETTER_RE = re.compile(r"\s*\(?([A-Z])\)?[.:)]?\s*")  # the commonest reply: read before anything else


class _Prediction:
    """A prediction as the reader keeps it: the bare letter the whole of it is (or None), the normalised reply to
    read (None when nothing can be: a failed call, an empty answer, a refusal), its answer part, and VLMEvalKit's
    view of it (on first use)."""

    __slots__ = ("answer", "bare", "reply", "vlm")

    def __init__(self, prediction: str, replies: dict[str, _Reply]) -> None:
        self.answer = answer_part(prediction)
        self.bare: str | None = None
        self.reply: _Reply | None = None
        self.vlm: _VlmReply | None = None
        if VLMEVALKIT_FAIL_MARKER in prediction:
            return
        bare = _BARE_LETTER_RE.fullmatch(prediction)
        self.bare = bare.group(1) if bare else None
        reply = normalise(self.answer)
        if reply and not any(r in reply for r in REFUSALS):
            self.reply = _reply(replies, reply)


class ChoiceReader:
    """Reads many predictions (score_mcq makes one per call) exactly as `read_choice` and `vlmevalkit_read` do, but
    what does not depend on the options (a prediction's answer part, normalised text, answer phrases, letters
    named, ...) is worked out once per distinct prediction, and a reading is kept by the reply and the part of the
    options it can see (_Reply.options_key): a reply met again under options that differ only in texts it never
    names is not read again."""

    def __init__(self, fuzzy: bool = False) -> None:
        self.fuzzy = fuzzy
        self._predictions: dict[str, _Prediction] = {}
        self._replies: dict[str, _Reply] = {}
        self._texts: dict[str, tuple[str, str]] = {}  # (_norm_text, _bare) of each option text met

    def _prediction(self, prediction: str) -> _Prediction:
        got = self._predictions.get(prediction)
        if got is None:
            if len(self._predictions) >= _POOL_SIZE:
                self._predictions.clear()
            got = self._predictions[prediction] = _Prediction(prediction, self._replies)
        return got

    def _read(self, pred: _Prediction, options: dict[str, str]) -> tuple[str | None, str]:
        if not options:
            return None, "unparsed"
        bare = pred.bare
        if bare is not None and bare in options:
            return bare, "exact"
        reply = pred.reply
        if reply is None:
            return None, "unparsed"
        key = reply.options_key(options, self._texts)
        got = reply.readings.get(key)
        if got is None:
            got = reply.readings[key] = _read(reply, _Options(options))
        if got[0] is None and self.fuzzy:
            letter = _fuzzy(reply.text, options)
            if letter is not None:
                return letter, "fuzzy"
        return got

    def read(self, prediction: str, options: dict[str, str]) -> tuple[str | None, str]:
        """read_choice(prediction, options, self.fuzzy)."""
        return self._read(self._prediction(prediction), options)

    def read_row(self, prediction: str, options: dict[str, str]) -> tuple[str | None, str, str, str | None]:
        """(letter, method) as `read`, the answer part (vlmkit.core.reasoning.answer_part) and VLMEvalKit's reading
        (vlmevalkit_read) of one prediction."""
        pred = self._prediction(prediction)
        letter, method = self._read(pred, options)
        vlm = pred.vlm
        if vlm is None:
            vlm = pred.vlm = _VlmReply(prediction)
        return letter, method, pred.answer, _vlm_read(vlm, options)


def read_choice(prediction: str, options: dict[str, str], fuzzy: bool = False) -> tuple[str | None, str]:
    """extract_choice for options already cleaned (clean_options) and a prediction that is a string."""
    return ChoiceReader(fuzzy).read(prediction, options)


def extract_choice(prediction: Any, options: Mapping[str, Any], fuzzy: bool = False) -> tuple[str | None, str]:
    """(letter or None, method); method is one of METHODS. See the module docstring for the rules."""
    if is_missing(prediction):
        return None, "unparsed"
    return read_choice(str(prediction), clean_options(options), fuzzy)

