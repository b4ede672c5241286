"""CC-OCR's table parsing (category `doc_parsing`, `l2-category` `table`) as VLMEvalKit scores it: TEDS, the tree edit
distance based similarity of PubTabNet (vlmeval/dataset/utils/ccocr_evaluator/doc_parsing_evaluator.py, `TEDS` and
`ParsingEvaluator.eval_table` at e8e78f05).

The reply is cleaned as VLMEvalKit cleans it: the LaTeX preamble commands removed (ccocr_parsing.LATEX_PREAMBLE),
the text after the first ```html fence kept when there is one, every ``` removed, then every space and line break
removed and `，` made `,`; the answer loses its spaces and line breaks. Removing the spaces also joins a cell's
attributes to its tag (`<td colspan="2">` becomes `<tdcolspan="2">`), so what lxml's HTML parser recovers from that
markup decides the tree, as in VLMEvalKit: that is why the parse is lxml's and not a parser of vlmkit's own.
Both are wrapped in `<html><body>..</body></html>` and parsed (comments dropped); with no `table` child of the body
on either side the row scores 0. Otherwise the first table of each becomes a tree: a `td` is a leaf holding its
colspan, rowspan and its content's tokens (the characters of its text, `<tag>`/`</tag>` for the elements inside it
and their tails); any other element is a node with its children. APTED's edit distance with insert and delete cost 1
and a rename cost of 1 when tag, colspan or rowspan differ, else for two `td` the token edit distance over the longer
token count (0 when both are empty). TEDS = 1 - distance / the larger count of elements under the two tables.

Where vlmkit differs: two tables with no element under them score 1 (VLMEvalKit divides by zero); a colspan or
rowspan that is not an integer is compared as its text (VLMEvalKit's int() fails on it).

The libraries are optional: lxml (the HTML parse) and apted (the tree edit distance), `pip install 'vlmkit[ocr]'`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

from vlmkit.scoring.benchmarks.ccocr_parsing import LATEX_PREAMBLE

INSTALL_HINT = "pip install 'vlmkit[ocr]'"
TABLE_OP = "table"


def missing_library() -> str | None:
    """One line saying what to install for table parsing, or None when lxml and apted import."""
    for module in ("lxml.html", "apted"):
        try:
            importlib.import_module(module)
        except ImportError:
            return (f"CC-OCR table parsing (TEDS) needs lxml and apted, and {module.split('.')[0]} is not installed: "
                    f"{INSTALL_HINT}")  # fmt: skip
    return None


def clean_table_reply(reply: str) -> str:
    for pattern in LATEX_PREAMBLE:
        reply = pattern.sub("", reply)
    fenced = reply.split("```html")
    if len(fenced) > 1:
        reply = fenced[1]
    return reply.replace("```", "").replace(" ", "").replace("\n", "").replace("，", ",")


def clean_table_answer(answer: str) -> str:
    return answer.replace(" ", "").replace("\n", "")


@dataclass
class TableNode:
    """A node of the tree APTED compares: a `td` carries its spans and content tokens, other tags only children."""

    tag: str
    colspan: int | str | None = None
    rowspan: int | str | None = None
    content: list[str] | None = None
    children: list[TableNode] = field(default_factory=list)


def _span(value: str) -> int | str:
    try:
        return int(value)
    except ValueError:
        return value


def cell_tokens(node: Any) -> list[str]:
    """The tokens of an element: `<tag>`, its text's characters, its children's tokens, `</tag>` (none for `unk`),
    and its tail's characters unless it is a `td`."""
    out = [f"<{node.tag}>"]
    if node.text is not None:
        out += list(node.text)
    for child in node:
        out += cell_tokens(child)
    if node.tag != "unk":
        out.append(f"</{node.tag}>")
    if node.tag != "td" and node.tail is not None:
        out += list(node.tail)
    return out


def table_tree(node: Any) -> TableNode:
    if node.tag == "td":
        return TableNode("td", _span(node.attrib.get("colspan", "1")), _span(node.attrib.get("rowspan", "1")),
                         cell_tokens(node)[1:-1])  # fmt: skip
    return TableNode(str(node.tag), children=[table_tree(child) for child in node])


def _rename_cost(a: TableNode, b: TableNode) -> float:
    if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
        return 1.0
    if a.tag == "td" and (a.content or b.content):
        mine, gold = a.content or [], b.content or []
        return Levenshtein.distance(mine, gold) / max(len(mine), len(gold))
    return 0.0


def teds(reply_html: str, answer_html: str) -> float:
    """TEDS of two HTML documents (module docstring), in [0, 1]."""
    from apted import APTED, Config
    from lxml import html

    class _Costs(Config):  # type: ignore[misc]
        def rename(self, node1: TableNode, node2: TableNode) -> float:
            return _rename_cost(node1, node2)

    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    mine, gold = html.fromstring(reply_html, parser=parser), html.fromstring(answer_html, parser=parser)
    mine_tables, gold_tables = mine.xpath("body/table"), gold.xpath("body/table")
    if not mine_tables or not gold_tables:
        return 0.0
    mine, gold = mine_tables[0], gold_tables[0]
    n_nodes = max(len(mine.xpath(".//*")), len(gold.xpath(".//*")))
    distance = APTED(table_tree(mine), table_tree(gold), _Costs()).compute_edit_distance()
    if n_nodes == 0:
        return 1.0 if distance == 0 else 0.0
    return 1.0 - float(distance) / n_nodes


def table_score(reply: str | None, answer: str) -> float:
    """A table row's score: TEDS of the cleaned reply and answer; `reply` None for a failed call (0)."""
    if reply is None:
        return 0.0
    missing = missing_library()
    if missing:
        raise ValueError(missing)
    body = "<html><body>{}</body></html>"
    return teds(body.format(clean_table_reply(reply)), body.format(clean_table_answer(answer)))
