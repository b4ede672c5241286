"""NPMM (NP-hard graph problems drawn as images) as VLMEvalKit scores it: vlmeval/dataset/NPMM.py with the ten
validators of vlmeval/dataset/utils/NPMM/ at e8e78f05.

A row's task is the second `/`-separated part of its `data_source` (rows of other tasks are left out, as VLMEvalKit
leaves them); its `graph` cell (a Python literal) is the instance and `ground_truth` the optimum. The reply's answer
is the text after `Answer:` (the last one; MCP: the first); each task's validator (below, VLMEvalKit's checks in its
order) says whether it is a feasible solution and its value. A feasible row adds its ratio, optimum / value for the
minimisation tasks (NpGcpD, NpMinimumCut, NpTsp, NpVertexCover, NpDominatingSet, NpFeedbackVertexSet) and value /
optimum for the others; an infeasible or failed row adds nothing.
Per task: SR = feasible / rows, AR = summed ratios / rows. Per group (constraint, covering, partitioning, subgraph,
path; two tasks each): the mean over its tasks that have rows; `SR` and `AR` the means over the groups with rows.
Figures are percents rounded to 1 decimal, as VLMEvalKit reports them: `<group>_success_rate`, `<group>_avg_ratio`,
`SR` and the headline `AR`.

Where vlmkit differs: VLMEvalKit's NpMaximumSet reads a bracketed answer with Python's eval(); vlmkit reads it as a
literal (ast.literal_eval), so an expression such as `[1+1]` is infeasible here. A feasible answer of value 0 (or an
optimum of 0 for a maximisation task) stops VLMEvalKit (a division by zero); vlmkit adds ratio 1 when both are 0,
else 0. A graph cell that is no Python literal is refused in one line naming the row, as VLMEvalKit refuses it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale

GROUPS = {
    "constraint": ("NpGcpD", "NpFeedbackVertexSet"),
    "covering": ("NpVertexCover", "NpDominatingSet"),
    "partitioning": ("NpMinimumCut", "NpMaximumCut"),
    "subgraph": ("NpMaximumCliqueProblem", "NpMaximumSet"),
    "path": ("NpTsp", "NpHamiltonianCycle"),
}
MINIMISE = ("NpGcpD", "NpMinimumCut", "NpTsp", "NpVertexCover", "NpDominatingSet", "NpFeedbackVertexSet")
Outcome = tuple[bool, float]  # (feasible, value)
INFEASIBLE: Outcome = (False, 0.0)
_BRACKETED = re.compile(r"[{\[\(]([^)}\]]*)[}\])]")
_LIST = re.compile(r"\[([^\]]*)\]")
_TWO_LISTS = re.compile(r"\[\s*\[([^\]]*)\]\s*,\s*\[([^\]]*)\]\s*\]")


def after_answer(reply: str) -> str | None:
    return reply.split("Answer:")[-1].strip() if "Answer:" in reply else None


def sequence_text(text: str) -> str:
    """The comma-separated items of a path or colouring: inside [...], joined from `a -> b`, or inside the first
    bracket pair (quotes removed); else the text itself."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return text[1:-1]
    if "->" in text:
        return ",".join(node.strip() for node in text.split("->"))
    text = text.replace("'", "").replace('"', "")
    found = _BRACKETED.search(text)
    return found.group(1) if found else text


def listed_vertices(text: str) -> list[int] | None:
    """The distinct vertices of the first [...] (quotes removed), sorted; None when there is no list or an item is
    no integer."""
    found = _LIST.search(text.strip().replace("'", "").replace('"', ""))
    if not found:
        return None
    try:
        return sorted({int(x.strip()) for x in found.group(1).split(",") if x.strip() != ""})
    except ValueError:
        return None


def tsp(graph: dict, reply: str) -> Outcome:
    text = after_answer(reply)
    if text is None:
        return INFEASIBLE
    try:
        path = [int(x.strip()) for x in sequence_text(text).split(",")]
    except ValueError:
        return INFEASIBLE
    n = len(graph)
    if path[0] != path[-1] or len(path) != n + 1:
        return INFEASIBLE
    if len(set(path[:-1])) != n or any(c < 0 or c >= n for c in path[:-1]):
        return INFEASIBLE
    total = 0.0
    for a, b in zip(path, path[1:]):
        try:
            total += graph[str(a)][str(b)]
        except KeyError:
            return INFEASIBLE
    return True, total


def hamiltonian_cycle(graph: dict, reply: str) -> Outcome:
    """Feasible: a closed path, no vertex twice, each step an edge (VLMEvalKit does not check that every vertex is
    visited); value: the path's length in vertices."""
    text = after_answer(reply)
    if text is None:
        return INFEASIBLE
    try:
        path = [int(x.strip()) for x in sequence_text(text).split(",")]
    except ValueError:
        return INFEASIBLE
    if path[0] != path[-1] or len(set(path[:-1])) != len(path) - 1:
        return INFEASIBLE
    for a, b in zip(path, path[1:]):
        if str(a) not in graph or b not in graph[str(a)]:
            return INFEASIBLE
    return True, float(len(path))


def _neighbour_sets(graph: dict) -> tuple[set[int], dict[int, set[int]]]:
    """MCP's view of a graph: integer vertices and symmetric neighbour sets (a weighted dict's 0 is no edge)."""
    vertices: set[int] = set()
    neighbours: dict[int, set[int]] = defaultdict(set)
    for u_raw, adj in graph.items():
        try:
            u = int(u_raw)
        except (TypeError, ValueError, OverflowError):
            continue
        vertices.add(u)
        items = adj.items() if isinstance(adj, dict) else ((v, 1) for v in adj) if isinstance(
            adj, (list, set, tuple)) else ()  # fmt: skip
        for v_raw, weight in items:
            try:
                v = int(v_raw)
            except (TypeError, ValueError, OverflowError):
                continue
            vertices.add(v)
            if not isinstance(weight, (int, float)) or weight != 0:
                neighbours[u].add(v)
                neighbours[v].add(u)
    return vertices, neighbours


def maximum_clique(graph: dict, reply: str) -> Outcome:
    if "Answer:" not in reply:
        return INFEASIBLE
    try:
        clique = ast.literal_eval(reply.split("Answer:", 1)[-1].strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return INFEASIBLE
    if not isinstance(clique, list) or not clique or len(set(clique)) != len(clique):
        return INFEASIBLE
    try:
        members = [int(x) for x in clique]
    except (TypeError, ValueError, OverflowError):
        return INFEASIBLE
    vertices, neighbours = _neighbour_sets(graph)
    if any(u not in vertices for u in members):
        return INFEASIBLE
    chosen = set(members)
    if any(not (chosen - {u}) <= neighbours.get(u, set()) for u in members):
        return INFEASIBLE
    return True, float(len(members))


def minimum_cut(graph: dict, reply: str) -> Outcome:
    """A balanced bisection `[[...], [...]]` of every vertex; value: the weight of the edges across. The graph must
    be weighted adjacency dicts with integer names (VLMEvalKit sums its weights first, failing otherwise)."""
    total = 0
    for u_name, adj in graph.items():
        u = int(u_name)
        for v_name, weight in adj.items():
            if u < int(v_name):
                total += weight
    text = after_answer(reply)
    if text is None or not (text.startswith("[") and text.endswith("]")):
        return INFEASIBLE
    try:
        halves = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return INFEASIBLE
    if not isinstance(halves, list) or len(halves) != 2 or not all(isinstance(h, list) for h in halves):
        return INFEASIBLE
    first, second = set(halves[0]), set(halves[1])
    nodes = {int(k) for k in graph}
    n, diff = len(nodes), abs(len(first) - len(second))
    if first & second or first | second != nodes or not (diff == 0 or (n % 2 == 1 and diff == 1)):
        return INFEASIBLE
    weight = 0.0
    for a in first:
        for b in second:
            try:
                weight += graph[str(a)].get(str(b), 0)
            except KeyError:
                return INFEASIBLE
    return True, weight


def maximum_cut(question: dict, reply: str) -> Outcome:
    if not isinstance(question, dict):
        return INFEASIBLE
    edges, n = question.get("edges", {}), question.get("num_vertices", 0)
    text = after_answer(reply)
    if text is None:
        return INFEASIBLE
    found = _TWO_LISTS.search(text.strip().replace("'", "").replace('"', ""))
    if not found:
        return INFEASIBLE
    try:
        first, second = ({int(x.strip()) for x in found.group(k).strip().split(",") if x.strip() != ""}
                         for k in (1, 2))  # fmt: skip
    except ValueError:
        return INFEASIBLE
    if first & second or first | second != set(range(n)):
        return INFEASIBLE
    value = 0.0
    for key, weight in edges.items():
        u, v = map(int, key.split("-"))
        if (u in first and v in second) or (u in second and v in first):
            value += weight
    return True, value


def maximum_set(graph: dict, reply: str) -> Outcome:
    """An independent set (maximality is not required); value: its size."""
    if "Answer:" not in reply:
        return INFEASIBLE
    part = reply.split("Answer:")[-1].split("\n")[0].strip()
    try:
        if part.startswith("[") and part.endswith("]"):
            chosen = ast.literal_eval(part)
        else:
            chosen = [int(x.strip()) for x in part.replace("[", "").replace("]", "").split(",")]
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return INFEASIBLE
    if not isinstance(chosen, list) or any(str(v) not in graph for v in chosen):
        return INFEASIBLE
    if len(chosen) != len(set(chosen)):
        return INFEASIBLE
    for i, a in enumerate(chosen):
        for b in chosen[i + 1:]:
            if str(b) in graph.get(str(a), {}):
                return INFEASIBLE
    return True, float(len(chosen))


def graph_colouring(graph: dict, reply: str) -> Outcome:
    text = after_answer(reply)
    if text is None:
        return INFEASIBLE
    items = sequence_text(text)
    try:
        colours = [int(x.strip()) for x in items.split(",")] if items.strip() else []
    except ValueError:
        return INFEASIBLE
    if not colours or -1 in colours or len(colours) != len(graph):
        return INFEASIBLE
    for node, neighbours in graph.items():
        colour = colours[int(node)]
        for other in neighbours:
            if colour == colours[int(other)]:
                return INFEASIBLE
    return True, float(len(set(colours)))


def _as_int(v: Any) -> Any:
    return int(v) if isinstance(v, str) else v


def feedback_vertex_set(graph: dict, reply: str) -> Outcome:
    """Vertices whose removal leaves no cycle (VLMEvalKit's DFS with a parent check); value: their count."""
    text = after_answer(reply)
    removed = None if text is None else listed_vertices(text)
    n = len(graph)
    if removed is None or any(v < 0 or v >= n for v in removed):
        return INFEASIBLE
    gone = set(removed)
    adj: dict[int, list[Any]] = defaultdict(list)
    for node, neighbours in graph.items():
        if int(node) in gone:
            continue
        for other in map(_as_int, neighbours):
            if other not in gone:
                adj[int(node)].append(other)
    visited: set[Any] = set()

    def cycle_from(node: Any, parent: Any) -> bool:
        visited.add(node)
        for other in adj.get(node, []):
            if other not in visited:
                if cycle_from(other, node):
                    return True
            elif other != parent:
                return True
        return False

    if any(node in adj and node not in visited and cycle_from(node, -1) for node in range(n)):
        return INFEASIBLE
    return True, float(len(removed))


def dominating_set(graph: dict, reply: str) -> Outcome:
    text = after_answer(reply)
    chosen = None if text is None else listed_vertices(text)
    n = len(graph)
    if chosen is None or any(v < 0 or v >= n for v in chosen):
        return INFEASIBLE
    members = set(chosen)
    for node in range(n):
        if node not in members and not any(_as_int(v) in members for v in graph.get(str(node), [])):
            return INFEASIBLE
    if not chosen and n:
        return INFEASIBLE
    return True, float(len(chosen))


def vertex_cover(graph: dict, reply: str) -> Outcome:
    text = after_answer(reply)
    chosen = None if text is None else listed_vertices(text)
    n = len(graph)
    if chosen is None or any(v < 0 or v >= n for v in chosen):
        return INFEASIBLE
    cover = set(chosen)
    for node, neighbours in graph.items():
        for other in map(_as_int, neighbours):
            if int(node) < other and int(node) not in cover and other not in cover:
                return INFEASIBLE
    if not chosen and any(len(v) > 0 for v in graph.values()):
        return INFEASIBLE
    return True, float(len(chosen))


VALIDATORS: dict[str, Callable[[Any, str], Outcome]] = {
    "NpTsp": tsp, "NpHamiltonianCycle": hamiltonian_cycle, "NpMaximumCliqueProblem": maximum_clique,
    "NpMinimumCut": minimum_cut, "NpMaximumSet": maximum_set, "NpGcpD": graph_colouring,
    "NpFeedbackVertexSet": feedback_vertex_set, "NpDominatingSet": dominating_set, "NpVertexCover": vertex_cover,
    "NpMaximumCut": maximum_cut,
}  # fmt: skip


def validate(task: str, graph: Any, reply: str) -> Outcome:
    """VALIDATORS[task]; an answer a validator cannot handle at all (VLMEvalKit's try around it) is infeasible."""
    try:
        return VALIDATORS[task](graph, reply)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError, ArithmeticError):
        return INFEASIBLE


def ratio(task: str, value: float, optimum: float) -> float:
    numerator, denominator = (optimum, value) if task in MINIMISE else (value, optimum)
    if denominator == 0:
        return 1.0 if numerator == 0 else 0.0
    return numerator / denominator


def figures(tasks: list[str], feasible: list[bool], ratios: list[float]) -> dict[str, float]:
    per_task: dict[str, tuple[float, float]] = {}
    for task in VALIDATORS:
        rows = [i for i, t in enumerate(tasks) if t == task]
        if rows:
            per_task[task] = (sum(feasible[i] for i in rows) / len(rows), sum(ratios[i] for i in rows) / len(rows))
    out: dict[str, float] = {}
    group_sr, group_ar = [], []
    for group, members in GROUPS.items():
        present = [per_task[t] for t in members if t in per_task]
        if present:
            sr, ar = sum(p[0] for p in present) / len(present), sum(p[1] for p in present) / len(present)
            out[f"{group}_success_rate"], out[f"{group}_avg_ratio"] = round(sr * 100, 1), round(ar * 100, 1)
            group_sr.append(sr)
            group_ar.append(ar)
    if group_sr:
        out["SR"] = round(sum(group_sr) / len(group_sr) * 100, 1)
        out["AR"] = round(sum(group_ar) / len(group_ar) * 100, 1)
    return out


def score_npmm(df: pd.DataFrame) -> EvalResult:
    """Score NPMM replies. Columns: `index`, `prediction` (None/NaN = a failed call), `data_source`, `graph`,
    `ground_truth`."""
    what = "NPMM scoring"
    require_columns(df, ("index", "prediction", "data_source", "graph", "ground_truth"), what)
    tasks, feasible, ratios, values, kept, errors = [], [], [], [], [], []
    for row in df.to_dict("records"):
        parts = str(row["data_source"]).split("/")
        task = parts[1] if len(parts) > 1 else ""
        if task not in VALIDATORS:
            continue
        graph = row["graph"]
        if isinstance(graph, str):
            try:
                graph = ast.literal_eval(graph)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
                raise ValueError(f"{what}: row index {row['index']}, field graph: not a Python literal ({exc})"
                                 ) from None  # fmt: skip
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            ok, value = INFEASIBLE
        else:
            ok, value = validate(task, graph, str(row["prediction"]))
        try:
            optimum = float(row["ground_truth"])
        except (TypeError, ValueError):
            raise ValueError(f"{what}: row index {row['index']}, field ground_truth: {row['ground_truth']!r} is not "
                             "a number") from None  # fmt: skip
        kept.append(row["index"])
        tasks.append(task)
        feasible.append(ok)
        values.append(value if ok else None)
        ratios.append(ratio(task, value, optimum) if ok else 0.0)
    if not kept:
        raise ValueError(f"{what}: no row of an NPMM task (data_source `<source>/<task>`, tasks "
                         f"{', '.join(VALIDATORS)})")  # fmt: skip
    metrics = figures(tasks, feasible, ratios)
    notes = [f"{len(errors)} failed call(s) count as infeasible: index {listed(errors)}"] if errors else []
    if len(kept) < len(df):
        notes.append(f"{len(df) - len(kept)} row(s) of another task are left out, as VLMEvalKit leaves them")
    counts = {"total": len(df), "scored": len(kept), "inference_errors": len(errors),
              "by_rule": len(kept) - len(errors), "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": kept, "task": tasks, "feasible": feasible,
                               "value": pd.Series(values, dtype=object), "ratio": ratios})  # fmt: skip
    return EvalResult(
        scorer="npmm", metrics=metrics, primary="AR", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT),
    )  # fmt: skip
