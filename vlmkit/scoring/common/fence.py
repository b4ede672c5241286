"""A fence around text vlmkit does not trust (a model's reply) inside a prompt vlmkit writes itself, so that the text
can neither close the fence nor pass for the prompt's own parts (its headings, its reference answer, its rules).

The fence is two lines, `<<<reply TOKEN>>>` before the text and `<<<end of reply TOKEN>>>` after it. TOKEN is derived
from the text: the first 16 hex digits of SHA-256 over a counter and the text, for the first counter whose token
does not occur in the text. So the text never holds the line that closes its fence (it would have to hold its own
digest, and the counter moves on if it ever did), and the same text always gets the same fence: a prompt is the same
on every run, and a judge journal finds its replies again.

Only vlmkit's own prompts are fenced (vlmkit.scoring.kinds.qa_judge). VLMEvalKit's judge prompts stay verbatim,
reply pasted as VLMEvalKit pastes it, so that scores stay comparable with its leaderboards (each such module says so).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass

TOKEN_HEX = 16


@dataclass(frozen=True)
class Fence:
    """The two lines around one text; `wrap` puts them around it."""

    begin: str
    end: str

    def wrap(self, text: str) -> str:
        return f"{self.begin}\n{text}\n{self.end}"


def fence_for(text: str, label: str = "reply") -> Fence:
    """The fence for text (see the module docstring); label names what is fenced (a plain word)."""
    if not re.fullmatch(r"[a-z]+(?: [a-z]+)*", label):
        raise ValueError(f"fence label {label!r}: lower-case words only")
    data = text.encode("utf-8", "surrogatepass")
    for counter in itertools.count():
        token = hashlib.sha256(b"%d\x00" % counter + data).hexdigest()[:TOKEN_HEX]
        if token not in text:
            return Fence(f"<<<{label} {token}>>>", f"<<<end of {label} {token}>>>")
    raise AssertionError("unreachable")  # itertools.count() never ends


def fenced(text: str, label: str = "reply") -> str:
    """text inside its fence."""
    return fence_for(text, label).wrap(text)


def unfence(prompt: str, label: str = "reply") -> str | None:
    """The text fenced in a prompt (the first fence with this label), or None when there is none."""
    name = re.escape(label)
    found = re.search(rf"^<<<{name} ([0-9a-f]{{{TOKEN_HEX}}})>>>\n(.*?)\n<<<end of {name} \1>>>$", prompt,
                      flags=re.DOTALL | re.MULTILINE)
    return found.group(2) if found else None
