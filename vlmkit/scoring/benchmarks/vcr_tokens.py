"""Word tokens for VCR scoring, cut as VLMEvalKit's spaCy pipelines cut them, without spaCy.

VLMEvalKit tokenises VCR answers and predictions with spaCy (`en_core_web_sm`, `zh_core_web_sm`). vlmkit does not
depend on spaCy; `tokenize(text, language)` follows spaCy's rules instead:

- English: spaCy's rule-based English tokenizer. Text is split on white space (one space after a token belongs to
  it; any other white space is a token of its own, a newline included); each piece loses its prefixes (opening
  punctuation, quotes, currency signs, symbols) and suffixes (closing punctuation, quotes, `'s`, units and `%`
  after a number, a final `.` after a lower-case letter, a digit, punctuation or two capitals) one at a time, then
  splits at infixes (`...`, hyphens and `,` `:` `/` `=` between letters, `+ - * ^` between digits, `.` between a
  lower-case and an upper-case letter). Special cases are kept whole or split as spaCy does: contractions
  (`don't` -> `do n't`, `can't` -> `ca n't`, `I'm` -> `I 'm`), abbreviations with periods (`Mr.`, `e.g.`, `a.m.`,
  `Jan.`, `Calif.`, single lower-case letters `a.`), times (`5pm` -> `5 pm`), URLs, a few emoticons.
  Letter classes cover Latin, Greek and Cyrillic. Not reproduced: spaCy's rarer exceptions (most emoticons, some
  slang spellings) and its special-case matching inside affixes; for such pieces the tokens can differ.
- Chinese: one token per character, as spaCy's Chinese tokenizer with its `char` segmenter (white space as for
  English). `zh_core_web_sm` segments words with a trained pkuseg model, which vlmkit does not have: on Chinese
  VCR, exact match and Jaccard are over characters, not pkuseg words (results.json notes say so).

`tokenize(text, language, backend="spacy")` uses spaCy itself when it and the model are installed (VLMEvalKit's
tokens exactly); without them it is a ConfigError naming what to install.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from vlmkit.core.errors import ConfigError

LANGUAGES = ("en", "zh")
BACKENDS = ("rules", "spacy")
SPACY_MODELS = {"en": "en_core_web_sm", "zh": "zh_core_web_sm"}

# spaCy's character lists (spacy/lang/char_classes.py), as regex pieces.
_PUNCT = [
    r"…", r"……", r",", r":", r";", r"\!", r"\?", r"¿", r"؟", r"¡", r"\(", r"\)", r"\[", r"\]", r"\{", r"\}", r"<",
    r">", r"_", r"#", r"\*", r"&", r"。", r"？", r"！", r"，", r"、", r"；", r"：", r"～",
    r"·", r"।", r"،", r"۔", r"؛", r"٪",
]  # fmt: skip
_QUOTES = [
    r"\'", r'\"', r"”", r"“", r"`", r"‘", r"´", r"’", r"‚", r",", r"„", r"»", r"«", r"「", r"」", r"『", r"』", r"（",
    r"）", r"〔", r"〕", r"【", r"】", r"《", r"》", r"〈", r"〉", r"〈", r"〉", r"⟦", r"⟧",
]  # fmt: skip
_CURRENCY = [
    r"\$", r"£", r"€", r"¥", r"฿", r"US\$", r"C\$", r"A\$", r"₽", r"﷼", r"₴", r"₠", r"₡", r"₢", r"₣", r"₤", r"₥",
    r"₦", r"₧", r"₨", r"₩", r"₪", r"₫", r"₭", r"₮", r"₯", r"₰", r"₱", r"₲", r"₳", r"₵", r"₶", r"₷", r"₸", r"₹", r"₺",
    r"₻", r"₼", r"₾", r"₿",
]  # fmt: skip
_UNITS = [
    "km", "km²", "km³", "m", "m²", "m³", "dm", "dm²", "dm³", "cm", "cm²", "cm³", "mm", "mm²", "mm³", "ha", "µm", "nm",
    "yd", "in", "ft", "kg", "g", "mg", "µg", "t", "lb", "oz", "m/s", "km/h", "kmh", "mph", "hPa", "Pa", "mbar", "mb",
    "MB", "kb", "KB", "gb", "GB", "tb", "TB", "T", "G", "M", "K", "%", "км", "км²", "км³", "м", "м²", "м³", "дм",
    "дм²", "дм³", "см", "см²", "см³", "мм", "мм²", "мм³", "нм", "кг", "г", "мг", "м/с", "км/ч", "кПа", "Па", "мбар",
    "Кб", "КБ", "кб", "Мб", "МБ", "мб", "Гб", "ГБ", "гб", "Тб", "ТБ", "тб",
]  # fmt: skip
_ELLIPSES = [r"\.\.+", "…"]
_HYPHENS = "-|–|—|--|---|——|~"
_QUOTE_CLASS = "".join(q.replace("\\", "") for q in _QUOTES)
_PUNCT_CLASS = "".join(re.escape(p.replace("\\", "")) for p in _PUNCT)


@lru_cache(maxsize=1)
def _classes() -> dict[str, str]:
    """Regex character classes (contents, without brackets): lower, upper, alpha, icons (symbols other but °)."""
    lower, upper, other, icons = [], [], [], []
    for code in range(0x20000):
        ch = chr(code)
        cat = unicodedata.category(ch)
        if cat == "So" and ch != "°":
            icons.append(code)
        if code > 0x52F and not 0x1E00 <= code <= 0x1EFF and not 0x2C60 <= code <= 0x2C7F:
            continue  # Latin, Greek, Cyrillic (and their extensions) only, as spaCy's ALPHA
        if cat == "Ll":
            lower.append(code)
        elif cat == "Lu":
            upper.append(code)
        elif cat.startswith("L"):
            other.append(code)
    return {
        "lower": _ranges(lower),
        "upper": _ranges(upper),
        "alpha": _ranges(sorted(lower + upper + other)),
        "icons": _ranges(icons),
    }


def _ranges(codes: list[int]) -> str:
    out: list[str] = []
    start = prev = None
    for code in [*codes, -2]:
        if start is not None and code == prev + 1:  # type: ignore[operator]
            prev = code
            continue
        if start is not None:
            out.append(_esc(start) if start == prev else f"{_esc(start)}-{_esc(prev)}")  # type: ignore[arg-type]
        start = prev = code
    return "".join(out)


def _esc(code: int) -> str:
    return f"\\U{code:08x}"


@lru_cache(maxsize=1)
def _english() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], dict[str, list[str]]]:
    c = _classes()
    lower, upper, alpha, icons = c["lower"], c["upper"], c["alpha"], c["icons"]
    icon = f"[{icons}]"
    prefixes = ["§", "%", "=", "—", "–", r"\+(?![0-9])", *_PUNCT, *_ELLIPSES, *_QUOTES, *_CURRENCY, icon]
    suffixes = [
        *_PUNCT, *_ELLIPSES, *_QUOTES, icon, "'s", "'S", "’s", "’S", "—", "–",
        r"(?<=[0-9])\+",
        r"(?<=°[FfCcKk])\.",
        r"(?<=[0-9])(?:" + "|".join(_CURRENCY) + ")",
        r"(?<=[0-9])(?:" + "|".join(re.escape(u) for u in _UNITS) + ")",
        rf"(?<=[0-9{lower}%²\-\+{_PUNCT_CLASS}{_QUOTE_CLASS}])\.",
        rf"(?<=[{upper}][{upper}])\.",
    ]  # fmt: skip
    infixes = [
        *_ELLIPSES, icon,
        r"(?<=[0-9])[+\-\*^](?=[0-9-])",
        rf"(?<=[{lower}{_QUOTE_CLASS}])\.(?=[{upper}{_QUOTE_CLASS}])",
        rf"(?<=[{alpha}]),(?=[{alpha}])",
        rf"(?<=[{alpha}0-9])(?:{_HYPHENS})(?=[{alpha}])",
        rf"(?<=[{alpha}0-9])[:<>=/](?=[{alpha}])",
    ]  # fmt: skip
    prefix_re = re.compile("|".join("^" + p for p in prefixes))
    suffix_re = re.compile("|".join(s + "$" for s in suffixes))
    infix_re = re.compile("|".join(infixes))
    return prefix_re, suffix_re, infix_re, _english_specials()


def _english_specials() -> dict[str, list[str]]:
    """spaCy's English tokenizer exceptions that VCR text meets: contractions, abbreviations, times, emoticons."""
    exc: dict[str, list[str]] = {}

    def add(orth: str, *pieces: str) -> None:
        exc[orth] = list(pieces) if pieces else [orth]

    def cased(word: str) -> tuple[str, ...]:
        return (word, word.title()) if word != word.title() else (word,)

    for apos in ("'", "’"):
        i_forms = ("i", "I")
        for pron in ("i", "you", "he", "she", "it", "we", "they"):
            for p in i_forms if pron == "i" else cased(pron):
                for tail in ("ll", "d"):
                    add(p + apos + tail, p, apos + tail)
                    add(p + tail, p, tail)
                    add(p + apos + tail + apos + "ve", p, apos + tail, apos + "ve")
                    add(p + tail + "ve", p, tail, "ve")
        for pron in ("i", "you", "we", "they"):
            for p in i_forms if pron == "i" else cased(pron):
                add(p + apos + "ve", p, apos + "ve")
                add(p + "ve", p, "ve")
        for pron in ("he", "she", "it"):
            for p in cased(pron):
                add(p + apos + "s", p, apos + "s")
                add(p + "s", p, "s")
        for pron in ("you", "we", "they"):
            for p in cased(pron):
                add(p + apos + "re", p, apos + "re")
                add(p + "re", p, "re")
        for p in i_forms:
            add(p + apos + "m", p, apos + "m")
            add(p + "m", p, "m")
        for wh in ("who", "what", "when", "where", "why", "how", "there", "that"):
            for w in cased(wh):
                for tail in ("s", "ll", "d", "re", "ve"):
                    add(w + apos + tail, w, apos + tail)
        negations = {
            "ca": "ca", "could": "could", "do": "do", "does": "does", "did": "did", "had": "had", "may": "may",
            "might": "might", "must": "must", "need": "need", "ought": "ought", "sha": "sha", "should": "should",
            "wo": "wo", "would": "would", "ai": "ai", "are": "are", "is": "is", "was": "was", "were": "were",
            "have": "have", "has": "has", "dare": "dare",
        }  # fmt: skip
        for verb in negations:
            for v in cased(verb):
                add(v + "n" + apos + "t", v, "n" + apos + "t")
                add(v + "nt", v, "nt")
                add(v + "n" + apos + "t" + apos + "ve", v, "n" + apos + "t", apos + "ve")
        for verb in ("could", "might", "must", "should", "would"):
            for v in cased(verb):
                add(v + apos + "ve", v, apos + "ve")
                add(v + "ve", v, "ve")
        add("y" + apos + "all", "y" + apos, "all")
        add("Y" + apos + "all", "Y" + apos, "all")
        add(apos + "em")
        add("ma" + apos + "am")
        add("o" + apos + "clock")
        add("O" + apos + "clock")
    for word, a, b in (("cannot", "can", "not"), ("gonna", "gon", "na"), ("gotta", "got", "ta"),
                       ("wanna", "wan", "na"), ("lemme", "lem", "me")):  # fmt: skip
        for w in cased(word):
            add(w, w[: len(a)], w[len(a):])
    for hour in range(1, 13):
        for period in ("a.m.", "am", "p.m.", "pm"):
            add(f"{hour}{period}", str(hour), period)
    abbreviations = (
        "a.m. p.m. Adm. Bros. co. Co. Corp. D.C. Dr. e.g. E.g. E.G. Gen. Gov. i.e. I.e. I.E. Inc. Jr. Ltd. Md. "
        "Messrs. Mo. Mont. Mr. Mrs. Ms. Ph.D. Prof. Rep. Rev. Sen. St. vs. v.s. Mt. Ak. Ala. Apr. Ariz. Ark. Aug. "
        "Calif. Colo. Conn. Dec. Del. Feb. Fla. Ga. Ia. Id. Ill. Ind. Jan. Jul. Jun. Kan. Kans. Ky. La. Mar. Mass. "
        "Mich. Minn. Miss. N.C. N.D. N.H. N.J. N.M. N.Y. Neb. Nebr. Nev. Nov. Oct. Okla. Ore. Pa. S.C. Sep. Sept. "
        "Tenn. Va. Wash. Wis. C++ ... :) :-) :( :-( ;) ;-) :D :P :p <3 =) (: ):"
    )
    for orth in abbreviations.split():
        add(orth)
    for letter in "abcdefghijklmnopqrstuvwxyzäöü":
        add(letter + ".")
    # spaCy leaves these out of its generated contractions: they are words.
    for word in ("Ill", "ill", "Its", "its", "Hell", "hell", "Shell", "shell", "Shed", "shed", "were", "Were",
                 "Well", "well", "Whore", "whore"):  # fmt: skip
        exc.pop(word, None)
    return exc


_URL = re.compile(r"(?i)(?:(?:https?|ftp)://|www\.)\S+$")


def _affixes(
    piece: str, specials: dict[str, list[str]], prefix_re: re.Pattern[str], suffix_re: re.Pattern[str],
    infix_re: re.Pattern[str],
) -> list[str]:
    """One white-space-free piece -> tokens: spaCy's prefix/suffix loop, then special cases, URLs, infixes."""
    if piece in specials:
        return list(specials[piece])
    prefixes: list[str] = []
    suffixes: list[str] = []
    string = piece
    last = -1
    while string and len(string) != last:
        if string in specials:
            break
        last = len(string)
        m = prefix_re.search(string)
        pre = m.end() - m.start() if m else 0
        if pre and string[pre:] in specials:
            prefixes.append(string[:pre])
            string = string[pre:]
            break
        m = suffix_re.search(string[pre:])
        suf = m.end() - m.start() if m else 0
        if suf and string[:-suf] in specials:
            suffixes.append(string[-suf:])
            string = string[:-suf]
            break
        if pre and suf and pre + suf <= len(string):
            prefixes.append(string[:pre])
            suffixes.append(string[-suf:])
            string = string[pre:-suf]
        elif pre:
            prefixes.append(string[:pre])
            string = string[pre:]
        elif suf:
            suffixes.append(string[-suf:])
            string = string[:-suf]
        if string in specials:
            break
    tokens = list(prefixes)
    if string in specials:
        tokens.extend(specials[string])
    elif string and _URL.match(string):
        tokens.append(string)
    elif string:
        start = 0
        for m in infix_re.finditer(string):
            if m.start() == 0:
                continue
            if m.start() != start:
                tokens.append(string[start:m.start()])
            if m.start() != m.end():
                tokens.append(string[m.start():m.end()])
            start = m.end()
        if string[start:]:
            tokens.append(string[start:])
    tokens.extend(reversed(suffixes))
    return tokens


def _white_space_pieces(text: str) -> list[tuple[str, bool]]:
    """(piece, is_space) in order, as spaCy's tokenizer cuts text: a single space after a piece belongs to it, any
    other run of white space is a piece of its own."""
    out: list[tuple[str, bool]] = []
    for m in re.finditer(r"\s+|\S+", text):
        chunk = m.group()
        if not chunk[0].isspace():
            out.append((chunk, False))
            continue
        if m.start() > 0 and chunk[0] == " ":
            chunk = chunk[1:]
        if chunk:
            out.append((chunk, True))
    return out


def english_tokens(text: str) -> list[str]:
    """Tokens of English text as spaCy's English tokenizer cuts them (module docstring)."""
    prefix_re, suffix_re, infix_re, specials = _english()
    tokens: list[str] = []
    for piece, space in _white_space_pieces(text):
        tokens.extend([piece] if space else _affixes(piece, specials, prefix_re, suffix_re, infix_re))
    return tokens


def chinese_tokens(text: str) -> list[str]:
    """One token per character; white space as spaCy's Chinese `char` segmenter leaves it (module docstring)."""
    tokens: list[str] = []
    for piece, space in _white_space_pieces(text):
        tokens.extend([piece] if space else list(piece))
    return tokens


def _spacy_tokenizer(language: str) -> Callable[[str], list[str]]:
    """spaCy's own tokens (VLMEvalKit's pipelines); a ConfigError naming what to install when they are missing."""
    model = SPACY_MODELS[language]
    try:
        import spacy  # type: ignore[import-not-found]
    except ImportError:
        raise ConfigError(
            f"VCR tokenizer 'spacy' needs the spacy package and its {model} pipeline (pip install spacy, then "
            f"python -m spacy download {model}); the default tokenizer 'rules' needs neither"
        ) from None
    try:
        nlp = spacy.load(model)
    except OSError:
        raise ConfigError(
            f"VCR tokenizer 'spacy': the {model} pipeline is not installed (python -m spacy download {model})"
        ) from None
    return lambda text: [token.text for token in nlp(text)]


@lru_cache(maxsize=4)
def tokenizer(language: str, backend: str = "rules") -> Callable[[str], list[str]]:
    """The tokenising function for a language (`en`, `zh`) and backend (`rules`, `spacy`)."""
    if language not in LANGUAGES:
        raise ConfigError(f"VCR language {language!r}: choose one of {', '.join(LANGUAGES)}")
    if backend not in BACKENDS:
        raise ConfigError(f"VCR tokenizer {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend == "spacy":
        return _spacy_tokenizer(language)
    return english_tokens if language == "en" else chinese_tokens


def tokenize(text: str, language: str, backend: str = "rules") -> list[str]:
    """Tokens of text in language (`en` or `zh`), as VLMEvalKit's VCR scorer cuts them (module docstring)."""
    return tokenizer(language, backend)(text)
