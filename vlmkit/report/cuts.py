"""Long texts cut to a sample's share of the page (`vlmkit report --html`).

A reply of 50 MB would make a 50 MB page. Each sample gets a budget of bytes for its texts (prompt, reply,
reasoning, judge's analysis, error, extracted answer, target; vlmkit.report.page chooses it from how many samples
the page holds), shared fairly: texts that fit their share are kept whole, and what they leave goes to the long
ones, each cut at a character boundary and ended with a note (within its share) of how much was cut and where the
whole text is (the run's predictions.jsonl, the record with that index). Sizes are UTF-8 bytes: what the text
costs in the page.
"""

from __future__ import annotations

from typing import Any

CUT_MARK = "\n[… {more:,} more characters cut here; the whole text is in {path}, the record with index {index}]"


def fair_shares(sizes: list[int], budget: int) -> list[int]:
    """Bytes each text may keep: the smallest first, each at most an even part of what is left, so that texts
    that fit are whole and the long ones share the rest equally. The shares add up to at most budget."""
    shares = [0] * len(sizes)
    left = max(0, budget)
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for done, pos in enumerate(order):
        shares[pos] = min(sizes[pos], left // (len(order) - done))
        left -= shares[pos]
    return shares


def utf8_size(text: str, cap: int) -> int:
    """The text's size in UTF-8 bytes, or cap + 1 for anything larger than cap (without encoding a huge text:
    a text of more characters than cap has more bytes than cap)."""
    if len(text) > cap:
        return cap + 1
    return len(text.encode("utf-8", "surrogatepass"))


def head(text: str, size: int) -> str:
    """The longest start of text that fits in size UTF-8 bytes (never half a character)."""
    return text[:size].encode("utf-8", "surrogatepass")[:size].decode("utf-8", "ignore")


def cut_texts(texts: dict[str, Any], budget: int, *, path: str, index: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """texts (key -> str, or anything else, kept as it is) with the strings cut to fair shares of budget bytes,
    the note included (so the texts stay within budget unless a share is smaller than its note); and, for each key
    cut, the whole text's length in characters."""
    keys = [k for k, v in texts.items() if isinstance(v, str)]
    sizes = [utf8_size(texts[k], budget) for k in keys]
    if sum(sizes) <= budget:
        return texts, {}
    out, lengths = dict(texts), {}
    for key, size, share in zip(keys, sizes, fair_shares(sizes, budget)):
        if share < size:
            text = texts[key]
            mark = utf8_size(CUT_MARK.format(more=len(text), path=path, index=index), budget)  # the note's share
            kept = head(text, max(0, share - mark))
            out[key] = kept + CUT_MARK.format(more=len(text) - len(kept), path=path, index=index)
            lengths[key] = len(text)
    return out, lengths
