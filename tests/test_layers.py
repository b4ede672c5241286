"""The floors of the house (docs/architecture.md) as a contract: a module imports only its own floor and the floors
below it, wherever the import statement stands (module level or inside a function, since a lazy import is still a
dependency). `vlm` and `datasets_tsv` never import each other, and the report reads only the outputs schema, the
scales and the core."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vlmkit", "vlm", "datasets_tsv")

# Lowest first. A module's floor is that of the longest prefix listed here.
FLOORS: dict[str, int] = {
    "vlmkit": 0,  # the package root: __version__ and a lazy public API, importable from anywhere
    "vlmkit.core": 0,
    "vlmkit.formats": 1,
    "vlmkit.scoring": 2,
    "vlmkit.judging": 2,
    "vlm": 3,
    "datasets_tsv": 3,
    "vlmkit.outputs": 4,
    "vlmkit.run": 5,
    "vlmkit.perf": 6,
    "vlmkit.report": 7,
    "vlmkit.cli": 8,
    "vlmkit.api": 9,  # the public API: reaches every floor, imported lazily by the package root
    "vlmkit.__main__": 9,
}
# Whole packages that stand on one floor but must not see each other.
APART = (("vlm", "datasets_tsv"),)
# What the report may read besides itself.
REPORT_READS = ("vlmkit.core", "vlmkit.outputs.schema", "vlmkit.outputs.layout", "vlmkit.scoring.scales")
# The package root forwards its public names to vlmkit.api on first use (a function-level import of the top floor):
# it is imported from every floor for __version__, and holds nothing else.
ENTRY_POINTS = ("vlmkit",)


def floor_of(module: str) -> int:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len, default=None)
    if best is None:
        raise KeyError(f"{module} is on no floor: add its package to FLOORS")
    return FLOORS[best]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the three packages in one file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from pkg import submodule` depends on pkg.submodule
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names] if name in PACKAGES or \
                name.count(".") >= 1 else [(node.lineno, name)]
    return [(line, name) for line, name in found if name.split(".")[0] in PACKAGES]


def _owner(name: str, known: set[str]) -> str:
    """The longest known module that `name` is, or holds (`pkg.mod.attr` -> `pkg.mod`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def _public_name(target: str, known: set[str]) -> bool:
    """`from vlmkit import evaluate`: a name of the package root's lazy public API, which is the top floor."""
    head, _, name = target.partition(".")
    return head == "vlmkit" and "." not in name and name not in ("", "__version__") and target not in known \
        and not any(k.startswith(target + ".") or k == target for k in known | set(FLOORS))


def violations(root: Path) -> list[str]:
    files = [p for pkg in PACKAGES if (root / pkg).is_dir() for p in sorted((root / pkg).rglob("*.py"))]
    modules = {module_name(p, root): p for p in files}
    known = set(modules)
    found = []
    for module, path in modules.items():
        if module in ENTRY_POINTS:
            continue
        for line, target in imports_of(path, module):
            target = "vlmkit.api" if _public_name(target, known) else _owner(target, known) or target
            where = f"{path.relative_to(root)}:{line}: {module} imports {target}"
            if floor_of(target) > floor_of(module):
                found.append(f"{where} (floor {floor_of(target)} above floor {floor_of(module)})")
            for a, b in APART:
                top, other = module.split(".")[0], target.split(".")[0]
                if {top, other} == {a, b}:
                    found.append(f"{where} ({a} and {b} never import each other)")
            if module.startswith("vlmkit.report") and not target.startswith("vlmkit.report") and target != "vlmkit" \
                    and not any(target == r or target.startswith(r + ".") for r in REPORT_READS):
                found.append(f"{where} (the report reads only {', '.join(REPORT_READS)})")
    return found


def test_every_module_stands_on_its_floor() -> None:
    assert violations(ROOT) == []


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # a lower floor importing a higher one, at module level and inside a function
        ({"vlmkit/core/message.py": "from vlmkit.run.runner import Runner\n"}, "floor 5 above floor 0"),
        ({"vlmkit/scoring/mcq.py": "def f():\n    import vlm.base\n"}, "floor 3 above floor 2"),
        ({"vlmkit/core/media.py": "from vlmkit.outputs import writers\n"}, "floor 4 above floor 0"),
        ({"vlmkit/core/x.py": "from ..run import runner\n"}, "floor 5 above floor 0"),
        # the two packages on floor 3
        ({"vlm/base.py": "from datasets_tsv.kinds.base import TSVDataset\n"}, "never import each other"),
        ({"datasets_tsv/kinds/base.py": "import vlm.registry\n"}, "never import each other"),
        # the report reading a run's internals
        ({"vlmkit/report/page.py": "from vlmkit.run.journal import Journal\n"}, "the report reads only"),
        # the public API, even through the package root's lazy names
        ({"vlmkit/run/runner.py": "from vlmkit import evaluate\n"}, "floor 9 above floor 5"),
    ],
)
def test_the_checker_catches_a_floor_broken(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    found = violations(_package(tmp_path, files))
    assert len(found) == 1 and expected in found[0], found


def test_the_checker_lets_a_floor_import_itself_and_below(tmp_path: Path) -> None:
    files = {
        "vlmkit/run/runner.py": "from vlmkit.outputs import writers\nimport vlm.base\nfrom vlmkit.core.cells import x\n",
        "vlmkit/report/page.py": "from vlmkit.scoring.scales import PERCENT\nfrom vlmkit.outputs.schema import Results\n",
        "vlm/base.py": "from vlmkit.formats.openai_chat import to_openai\n",
    }
    assert violations(_package(tmp_path, files)) == []


def test_every_module_has_a_floor() -> None:
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            floor_of(module_name(path, ROOT))
