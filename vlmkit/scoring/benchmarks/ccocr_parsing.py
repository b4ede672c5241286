"""CC-OCR's document-parsing track (category `doc_parsing`) as VLMEvalKit scores its documents, formulas and
molecules (vlmeval/dataset/utils/ccocr_evaluator/doc_parsing_evaluator.py `ParsingEvaluator` at e8e78f05).

A row scores 1 - edit distance(reply, answer) / the longer length, both cleaned by the row's `l2-category` (op):
- `doc`: LaTeX preamble commands removed from the reply (`\\documentclass{..}`, `\\usepackage[..]{..}`,
  `\\usepackage{..}`, `\\geometry{..}`, `\\begin{document}`, `\\end{document}`, `\\noindent`); when the reply has a
  ``` fence, the text after the first fence up to the next one (a ```latex fence leaves its `latex` there, as in
  VLMEvalKit); ```latex and ``` removed; spaces and line breaks removed from both.
- `formula`: line breaks and tabs to spaces, ```latex and ``` removed, then spaces removed; the answer's spaces removed.
- `molecular`: line breaks, spaces, `<smiles>` and `</smiles>` removed; the answer's spaces removed.
A failed call scores 0. A sub-dataset's `score` is the mean of its rows; the track's figure `doc_parsing` the mean of
its sub-datasets' scores. Tables (op `table`, TEDS over the HTML tree) are vlmkit.scoring.benchmarks.ccocr_tables'.

Where vlmkit differs: a reply and an answer both empty after cleaning score 1 (VLMEvalKit divides by zero).
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Levenshtein

OPS = ("doc", "formula", "molecular")
LATEX_PREAMBLE = tuple(re.compile(p) for p in (
    r"\\documentclass\{.*?\}", r"\\usepackage\[.*?\]\{.*?\}", r"\\usepackage\{.*?\}", r"\\geometry\{.*?\}",
    r"\\begin\{document\}", r"\\end\{document\}", r"\\noindent",
))  # fmt: skip


def clean_doc(reply: str) -> str:
    for pattern in LATEX_PREAMBLE:
        reply = pattern.sub("", reply)
    fenced = reply.split("```")
    if len(fenced) > 1:
        reply = fenced[1]
    return reply.replace("```latex", "").replace("```", "").replace(" ", "").replace("\n", "")


def cleaned(reply: str, answer: str, op: str) -> tuple[str, str]:
    """(reply, answer) as VLMEvalKit compares them for the op."""
    if op == "doc":
        return clean_doc(reply), answer.replace(" ", "").replace("\n", "")
    if op == "formula":
        reply = reply.replace("\n", " ").replace("```latex", "").replace("```", "").replace("\t", " ")
        return reply.replace(" ", ""), answer.replace(" ", "")
    if op == "molecular":
        reply = reply.replace("\n", "").replace(" ", "").replace("<smiles>", "").replace("</smiles>", "")
        return reply, answer.replace(" ", "")
    raise ValueError(f"document-parsing op {op!r} is not scored by vlmkit (it scores {', '.join(OPS)})")


def parsing_score(reply: str | None, answer: str, op: str) -> float:
    """A row's score; `reply` None for a failed call (0)."""
    if reply is None:
        return 0.0
    mine, gold = cleaned(reply, answer, op)
    longer = max(len(mine), len(gold))
    return 1.0 if longer == 0 else 1 - Levenshtein.distance(mine, gold) / longer
