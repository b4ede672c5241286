"""Prompt text of a given length in tokens, made of numbered blocks, so that two prompts that share block ids share
that much prefix, byte for byte (what a server's prefix cache keys on).

No tokenizer is at hand (the server's may be any), so a "token" here is one common English word with its leading
space: " the", " house", ... Such a word is one token in the BPE vocabularies of the usual chat models, so N words
come to about N tokens; the server's usage (prompt_tokens) says the real count, and the summaries that use this
module report it beside the length asked. Block b's words are drawn from WORDS by a 64-bit linear congruential
sequence seeded with b: the same block id always gives the same text, different ids different texts.
"""

from __future__ import annotations

from functools import lru_cache

WORDS = tuple(
    "the of and to in is it you that he was for on are as with his they at be this have from or one had by word but "
    "not what all were we when your can said there use an each which she do how their if will up other about out "
    "many then them these so some her would make like him into time has look two more write go see number no way "
    "could people my than first water been call who oil its now find long down day did get come made may part over "
    "new sound take only little work know place year live me back give most very after thing our just name good "
    "sentence man think say great where help through much before line right too mean old any same tell boy follow "
    "came want show also around form three small set put end does another well large must big even such because "
    "turn here why ask went men read need land different home us move try kind hand picture again change off play "
    "spell air away animal house point page letter mother answer found study still learn should world high every "
    "near add food between own below country plant last school father keep tree never start city earth eye light "
    "thought head under story saw left few while along might close something seem next hard open example begin life "
    "always those both paper together got group often run".split()
)
_A, _C, _MASK = 6364136223846793005, 1442695040888963407, (1 << 64) - 1


def _words(block: int, tokens: int) -> str:
    x = (block * 0x9E3779B97F4A7C15 + 1) & _MASK
    words = []
    n = len(WORDS)
    for _ in range(tokens):
        x = (x * _A + _C) & _MASK
        words.append(WORDS[(x >> 33) % n])
    return " " + " ".join(words)


@lru_cache(maxsize=4096)
def block_words(block: int, tokens: int) -> tuple[str, ...]:
    """Block `block`'s `tokens` words, each with its leading space (cached: blocks are shared)."""
    text = _words(block, tokens)
    return tuple(" " + w for w in text[1:].split(" "))


def prompt_text(blocks: list[int], length: int, block_tokens: int, unique: int) -> str:
    """A prompt of `length` tokens: the words of each listed block in turn (block_tokens each, the last cut to what is
    left), then, past the listed blocks, words that no other prompt has (seeded by `unique`, a negative block id)."""
    parts: list[str] = []
    left = length
    for block in blocks:
        if left <= 0:
            break
        words = block_words(block, block_tokens)
        take = min(block_tokens, left)
        parts.extend(words[:take])
        left -= take
    if left > 0:
        parts.append(_words(-1 - unique, left))
    return "".join(parts)
