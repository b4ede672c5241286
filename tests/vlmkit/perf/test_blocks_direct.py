"""vlmkit.perf.blocks: prompts of N "tokens" (common words) from numbered blocks, so that prompts listing the same
block ids share that prefix byte for byte. Checked by properties (lengths, shared prefixes, words from WORDS) and by a
second implementation of the block's word sequence written here with plain modular arithmetic."""

from __future__ import annotations

from vlmkit.perf.blocks import WORDS, block_words, prompt_text


def _second_words(block: int, tokens: int) -> list[str]:
    """The 64-bit linear congruential sequence the module docstring names, seeded with the block id, written with
    `% 2**64` and `// 2**33` instead of masks and shifts."""
    m = 2**64
    x = (block * 0x9E3779B97F4A7C15 + 1) % m
    out = []
    for _ in range(tokens):
        x = (x * 6364136223846793005 + 1442695040888963407) % m
        out.append(WORDS[(x // 2**33) % len(WORDS)])
    return out


def _words_of(text: str) -> list[str]:
    assert text.startswith(" ") and "  " not in text  # every word has its one leading space
    return text[1:].split(" ")


def test_the_word_list_has_no_repeats_and_no_spaces():
    assert len(WORDS) == len(set(WORDS)) and all(w and " " not in w for w in WORDS)


def test_a_block_is_the_seeded_sequence_and_its_prefixes_agree():
    for block in (0, 1, 7, 12345, -1, -4):
        assert [w[1:] for w in block_words(block, 20)] == _second_words(block, 20)
        assert all(w.startswith(" ") for w in block_words(block, 20))
        assert block_words(block, 5) == block_words(block, 20)[:5]
    assert block_words(1, 20) != block_words(2, 20)


def test_a_prompt_has_the_length_asked_with_every_block_in_turn_and_the_last_cut():
    text = prompt_text([3, 9], 7, block_tokens=5, unique=0)
    assert _words_of(text) == _second_words(3, 5) + _second_words(9, 2)
    # fewer tokens than the first block: that block cut
    assert _words_of(prompt_text([3, 9], 3, block_tokens=5, unique=0)) == _second_words(3, 3)
    # past the listed blocks: words seeded by -1 - unique
    assert _words_of(prompt_text([3], 8, block_tokens=5, unique=4)) == _second_words(3, 5) + _second_words(-5, 3)
    assert _words_of(prompt_text([], 6, block_tokens=5, unique=0)) == _second_words(-1, 6)
    assert prompt_text([3, 9], 0, block_tokens=5, unique=0) == ""


def test_prompts_sharing_block_ids_share_exactly_that_prefix():
    a = prompt_text([1, 2, 10], 40, block_tokens=8, unique=0)
    b = prompt_text([1, 2, 11], 40, block_tokens=8, unique=1)
    shared = "".join(block_words(1, 8) + block_words(2, 8))
    assert a.startswith(shared) and b.startswith(shared)
    assert a[len(shared):] != b[len(shared):]
    assert len(_words_of(a)) == len(_words_of(b)) == 40
    # the same blocks and the same unique seed: the same prompt
    assert prompt_text([1, 2], 30, block_tokens=8, unique=3) == prompt_text([1, 2], 30, block_tokens=8, unique=3)
    assert prompt_text([1, 2], 30, block_tokens=8, unique=3) != prompt_text([1, 2], 30, block_tokens=8, unique=2)
