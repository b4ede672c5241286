"""CC-OCR's key information extraction track (category `kie`) as VLMEvalKit scores it
(vlmeval/dataset/utils/ccocr_evaluator/kie_evaluator.py, Donut's metric, at e8e78f05).

A row: the reply is read as JSON (`read_reply`: the text inside a ```json ... ``` fence when the reply has one, line
breaks removed, `json.loads`; anything that fails is no prediction, `{}`); the answer cell likewise (JSON, else a
Python literal). Every text value of a dict, and of a dict inside a list, is normalised (`normalize_text`:
full-width characters to half-width, `、` to `,`, spaces between CJK characters and between CJK and Latin/digits
removed, one space after `, . ! ? : ;` not preceded by a digit and none before, a space between digits and letters,
runs of white space to one); a text directly inside a list is not (VLMEvalKit's rule).
Both are then put in a canonical shape (`canonical`: dict keys sorted by length then text, empty values dropped,
every value a list, leaves trimmed texts) and scored two ways:
- fields (`field_counts`): the (dotted key path, value) pairs of the two; a reply pair found among the answer's is a
  true positive (taken out), any other a false positive, an answer pair left a false negative. A sub-dataset's
  `f1_score` = TP / (TP + (FP + FN) / 2 + 1e-6), pooled over its rows.
- tree (`tree_accuracy`): the normalised tree edit distance accuracy max(0, 1 - TED(reply, answer) / TED(empty,
  answer)) over the trees of the two (key nodes, `<subtree>` nodes for dicts in lists, `<leaf>` value nodes);
  inserting or removing a leaf costs its text's length, another node 1; changing a leaf into a leaf costs the edit
  distance of their texts, a leaf into another node 1 + the leaf's length, two other nodes 0 or 1. A sub-dataset's
  `acc` = the sum of its rows' accuracies / (rows + 1e-6); its `response_success_ratio` = rows with a reply /
  (rows + 1e-9). The track's figure `kie` is the mean `acc` of its sub-datasets.
The tree edit distance is Zhang and Shasha's algorithm (`tree_distance`), the one VLMEvalKit's `zss` package runs.

Where vlmkit differs: an answer cell that is neither JSON nor a Python literal is an error naming the row (VLMEvalKit
first tries json_repair on it); an answer whose tree is empty makes VLMEvalKit divide by zero: vlmkit scores such a
row 1 when the reply is empty too, else 0.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

LEAF, SUBTREE, ROOT = "<leaf>", "<subtree>", "<root>"
_FENCED = re.compile(r"```json(.*?)```", re.DOTALL)


# -- reading ----------------------------------------------------------------------------------------------------
def read_reply(text: str) -> Any | None:
    """VLMEvalKit's `post_process_to_json`: the reply's JSON value, None when there is none."""
    if "```json" in text:
        found = _FENCED.search(text)
        if found is None:
            return None
        body = found.group(1).strip().replace("\n", "")
    else:
        body = text.strip().replace("\n", "")
    try:
        return json.loads(body)
    except ValueError:
        return None


def read_answer(cell: Any, where: str) -> Any:
    """An answer cell as a dict or list (JSON, else a Python literal); ValueError naming `where` otherwise."""
    if isinstance(cell, (dict, list)):
        return cell
    text = str(cell)
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, (dict, list)):
            return value
    raise ValueError(f"{where}: not a JSON object or list: {text[:80]!r}")


def halfwidth(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if code == 0x3000:
            code = 0x20
        elif 0xFF01 <= code <= 0xFF5E:
            code -= 0xFEE0
        out.append(chr(code))
    return "".join(out).replace("、", ",")


_CJK = "\u4e00-\u9fff"
_SPACING = (
    (re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])"), ""),
    (re.compile(rf"(?<=[{_CJK}])\s+(?=[a-zA-Z0-9])"), ""),
    (re.compile(rf"(?<=[a-zA-Z0-9])\s+(?=[{_CJK}])"), ""),
    (re.compile(r"(?<![0-9])\s*([,.!?:;])\s*"), r"\1 "),
    (re.compile(r"(?<=[0-9])(?=[a-zA-Z])"), " "),
    (re.compile(r"(?<=[a-zA-Z])(?=[0-9])"), " "),
    (re.compile(r"\s+"), " "),
)


def normalize_text(text: str) -> str:
    text = halfwidth(str(text))
    for pattern, repl in _SPACING:
        text = pattern.sub(repl, text)
    return text


def normalize_values(value: Any) -> Any:
    """VLMEvalKit's `normalize_values_of_nested_dict`: texts of dicts normalised, texts directly in lists not."""
    if isinstance(value, dict):
        return {k: normalize_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize_values(v) if isinstance(v, dict) else v for v in value]
    if isinstance(value, str):
        return normalize_text(value)
    return value


def canonical(value: Any) -> Any:
    """VLMEvalKit's `normalize_dict`: a dict (keys by length then text, empty values dropped, values lists) or a
    list (of canonical dicts, or of trimmed non-empty texts of the str/int/float items)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key in sorted(value, key=lambda k: (len(k), k)):
            inner = canonical(value[key])
            if inner:
                out[key] = inner if isinstance(inner, list) else [inner]
        return out
    if isinstance(value, list):
        if all(isinstance(item, dict) for item in value):
            return [c for c in (canonical(item) for item in value) if c]
        return [str(item).strip() for item in value if type(item) in (str, int, float) and str(item).strip()]
    return [str(value).strip()]


# -- fields -------------------------------------------------------------------------------------------------------
def flatten(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if type(value) is dict:
        return [pair for k, v in value.items() for pair in flatten(v, f"{key}.{k}" if key else k)]
    if type(value) is list:
        return [pair for item in value for pair in flatten(item, key)]
    return [(key, value)]


def field_counts(pred: Any, answer: Any) -> tuple[int, int]:
    """(true positives, false positives + false negatives) of the two's (key path, value) pairs."""
    mine, gold = flatten(canonical(pred)), flatten(canonical(answer))
    tp = wrong = 0
    for pair in mine:
        if pair in gold:
            tp += 1
            gold.remove(pair)
        else:
            wrong += 1
    return tp, wrong + len(gold)


# -- trees --------------------------------------------------------------------------------------------------------
@dataclass
class Node:
    label: str
    kids: list[Node]


def tree(value: Any, name: str = ROOT) -> Node:
    """VLMEvalKit's `construct_tree_from_dict` of a canonical value."""
    if isinstance(value, dict):
        return Node(name, [tree(v, k) for k, v in value.items()])
    if all(isinstance(item, dict) for item in value):
        return Node(name, [tree(item, SUBTREE) for item in value])
    return Node(name, [Node(f"{LEAF}{item}", []) for item in value])


def node_cost(node: Node) -> int:
    """Inserting or removing a node: a leaf's text length, else 1."""
    return len(node.label.replace(LEAF, "")) if LEAF in node.label else 1


def change_cost(a: Node, b: Node) -> int:
    a_leaf, b_leaf = LEAF in a.label, LEAF in b.label
    if a_leaf and b_leaf:
        return Levenshtein.distance(a.label.replace(LEAF, ""), b.label.replace(LEAF, ""))
    if a_leaf or b_leaf:
        return 1 + len((a if a_leaf else b).label.replace(LEAF, ""))
    return int(a.label != b.label)


def _postorder(root: Node) -> tuple[list[Node], list[int], list[int]]:
    """Nodes in postorder, each one's leftmost leaf (a postorder position), and the key roots."""
    nodes: list[Node] = []
    leftmost: list[int] = []

    def walk(node: Node) -> int:
        first = None
        for kid in node.kids:
            kid_left = walk(kid)
            first = kid_left if first is None else first
        nodes.append(node)
        leftmost.append(len(nodes) - 1 if first is None else first)
        return leftmost[-1]

    walk(root)
    last_with: dict[int, int] = {}
    for pos, left in enumerate(leftmost):
        last_with[left] = pos
    return nodes, leftmost, sorted(last_with.values())


def tree_distance(a: Node, b: Node, insert: Callable[[Node], int] = node_cost,
                  remove: Callable[[Node], int] = node_cost,
                  change: Callable[[Node, Node], int] = change_cost) -> int:  # fmt: skip
    """The least cost of removals from `a`, insertions into `b` and changes turning `a` into `b` (Zhang-Shasha)."""
    an, al, akeys = _postorder(a)
    bn, bl, bkeys = _postorder(b)
    dist = [[0] * len(bn) for _ in an]
    for i in akeys:
        for j in bkeys:
            ioff, joff = al[i] - 1, bl[j] - 1
            rows, cols = i - al[i] + 2, j - bl[j] + 2
            fd = [[0] * cols for _ in range(rows)]
            for x in range(1, rows):
                fd[x][0] = fd[x - 1][0] + remove(an[x + ioff])
            for y in range(1, cols):
                fd[0][y] = fd[0][y - 1] + insert(bn[y + joff])
            for x in range(1, rows):
                for y in range(1, cols):
                    p, q = x + ioff, y + joff
                    gone, added = fd[x - 1][y] + remove(an[p]), fd[x][y - 1] + insert(bn[q])
                    if al[p] == al[i] and bl[q] == bl[j]:
                        fd[x][y] = min(gone, added, fd[x - 1][y - 1] + change(an[p], bn[q]))
                        dist[p][q] = fd[x][y]
                    else:
                        fd[x][y] = min(gone, added, fd[al[p] - 1 - ioff][bl[q] - 1 - joff] + dist[p][q])
    return dist[-1][-1]


def tree_accuracy(pred: Any, answer: Any) -> float:
    gold = tree(canonical(answer))
    mine = tree_distance(tree(canonical(pred)), gold)
    whole = tree_distance(tree(canonical({})), gold)
    if whole == 0:  # an empty answer: VLMEvalKit divides by zero here (module docstring)
        return 1.0 if mine == 0 else 0.0
    return max(0.0, 1 - mine / whole)


# -- rows and sub-datasets ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KieRow:
    tp: int
    wrong: int  # false positives + false negatives
    acc: float
    responded: bool  # the row has a reply (not a failed call)


def kie_row(reply: str | None, answer: Any, where: str) -> KieRow:
    """One row's counts: `reply` None for a failed call (no prediction, as an unreadable reply)."""
    gold = normalize_values(read_answer(answer, where))
    parsed = read_reply(reply) if reply is not None else None
    pred = {} if parsed is None else normalize_values(parsed)
    tp, wrong = field_counts(pred, gold)
    return KieRow(tp, wrong, tree_accuracy(pred, gold), reply is not None)


def kie_summary(rows: Sequence[KieRow]) -> dict[str, float]:
    """A sub-dataset's figures, as VLMEvalKit's KieEvaluator summary names them."""
    tp, wrong = sum(r.tp for r in rows), sum(r.wrong for r in rows)
    return {"f1_score": tp / (tp + wrong / 2 + 1e-6), "acc": sum(r.acc for r in rows) / (len(rows) + 1e-6),
            "response_success_ratio": sum(r.responded for r in rows) / (len(rows) + 1e-9)}  # fmt: skip
