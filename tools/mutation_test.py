"""Mutation testing of the core modules with mutmut 3 (3.8.1; `pip install mutmut==3.8.1`), one module at a time,
and a per-module table.

    nice -n 19 python tools/mutation_test.py [--only resume secrets ...] [--list] [--survivors] [--keep DIR]

For each module in `MODULES` the script copies the tracked tree (`git ls-files`, plus untracked files git does
not ignore) into a fresh temporary folder, writes mutmut's configuration into that copy's pyproject.toml (the
checkout itself is never configured or touched), and runs `mutmut run --max-children 1` there with only that
module mutated and only the test files that cover it selected. It then reads mutmut's per-file results and
prints one row per module: mutants, killed, survived, timeout, no tests (no selected test reaches the mutated
function), other (suspicious, segfault) and the share killed (killed / mutants). `--survivors` prints each
surviving mutant's diff (`mutmut show`), to kill it with a test or list it as equivalent. Too slow for CI: run it
by hand and copy the table into the README.

A module entry may name functions (mutmut's mangled names, `x_func` or `xǁClassǁmethod`) to mutate only part of
a file, e.g. only the retry policy of vlm/api/http.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# mutmut's exit-code meanings (mutmut/stats.py, 3.x).
KILLED_CODES = {1, 3, 37}
SURVIVED_CODES = {0}
TIMEOUT_CODES = {36, -24, 24, 152, 255}
NO_TESTS_CODES = {5, 33}  # no selected test reaches the mutated function


@dataclass(frozen=True)
class Target:
    key: str  # short name for --only
    path: str  # the module's file, relative to the repo root
    tests: tuple[str, ...]  # test files (or node ids) that cover it
    functions: tuple[str, ...] = field(default=())  # mangled function names to mutate; empty: the whole file
    part: str = ""  # what those functions are, for the table


MODULES: tuple[Target, ...] = (
    Target(
        "resume",
        "vlmkit/run/resume.py",
        ("tests/vlmkit/run/test_journal_fingerprint.py", "tests/vlmkit/run/test_resume_identity.py"),
        (  # the fingerprint: what a journal's answers depend on
            "x_checkpoint_identity", "x_answer_kwargs", "x_run_fingerprint", "x_same_settings", "x__comparable",
            "x_differences",
        ),
        "fingerprint",
    ),
    Target(
        "secrets",
        "vlmkit/core/secrets.py",
        ("tests/vlmkit/core/test_secrets.py", "tests/vlmkit/core/test_secret_lines.py"),
    ),
    Target(
        "retry",
        "vlm/api/http.py",
        ("tests/vlm/api/test_retry_policy.py", "tests/vlm/api/test_api_model.py"),
        ("x_parse_retry_after", "xǁRetryPolicyǁdelay"),
        "retry policy",
    ),
    Target(
        "perf-metrics",
        "vlmkit/perf/metrics.py",
        (
            "tests/vlmkit/perf/test_perf_stats.py",
            "tests/vlmkit/perf/test_perf_figures.py",
            "tests/vlmkit/perf/test_perf_report.py",
        ),
    ),
    Target(
        "vqa",
        "vlmkit/scoring/kinds/vqa.py",
        (
            "tests/vlmkit/scoring/test_scoring_vqa.py",
            "tests/vlmkit/scoring/test_vqa_rules.py",
            "tests/vlmkit/scoring/test_reading_rules.py",
        ),
    ),
    Target(
        "yorn",
        "vlmkit/scoring/kinds/yorn.py",
        (
            "tests/vlmkit/scoring/test_scoring_yorn.py",
            "tests/vlmkit/scoring/test_answer_stress.py",
            "tests/vlmkit/scoring/test_reading_rules.py",
            "tests/vlmkit/scoring/test_yorn_reports.py",
            "tests/vlmkit/scoring/test_yorn_ratings.py",
        ),
    ),
    Target(
        "image-refs",
        "datasets_tsv/io/images.py",
        (
            "tests/datasets_tsv/io/test_tsv_images.py",
            "tests/datasets_tsv/io/test_tsv_image_pass_paths.py",
            "tests/datasets_tsv/io/test_image_chains.py",
            "tests/datasets_tsv/io/test_tsv_bad_input.py",
            "tests/datasets_tsv/io/test_tsv_reading.py",
        ),
        ("x__stream", "x__resolve_reference", "x__decode_records"),
        "reference pass",
    ),
    Target(  # the whole file: over an hour on 2 shared cores
        "images",
        "datasets_tsv/io/images.py",
        (
            "tests/datasets_tsv/io/test_tsv_images.py",
            "tests/datasets_tsv/io/test_tsv_image_pass_paths.py",
            "tests/datasets_tsv/io/test_image_chains.py",
            "tests/datasets_tsv/io/test_tsv_bad_input.py",
            "tests/datasets_tsv/io/test_tsv_reading.py",
            "tests/datasets_tsv/io/test_tsv_single_read.py",
            "tests/datasets_tsv/io/test_tsv_stale_images.py",
            "tests/datasets_tsv/io/test_tsv_permissions.py",
            "tests/datasets_tsv/io/test_tsv_bomb_row.py",
            "tests/datasets_tsv/io/test_tsv_long_fields.py",
            "tests/datasets_tsv/io/test_snapshot_images.py",
        ),
    ),
)


def tracked_files(repo: Path) -> list[str]:
    """Files git tracks plus untracked ones it does not ignore (new tests not yet committed)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode()
    return [name for name in out.split("\0") if name and (repo / name).is_file()]


def copy_tree(repo: Path, dest: Path) -> None:
    for name in tracked_files(repo):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)


def toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def write_config(copy: Path, target: Target) -> None:
    """mutmut reads [tool.mutmut] from pyproject.toml; only the temporary copy gets it."""
    packages = ["datasets_tsv", "vlm", "vlmkit"]
    tests = [t for t in target.tests if (copy / t.split("::")[0]).exists()]
    missing = sorted(set(target.tests) - set(tests))
    if missing:
        print(f"   (not in the tree, skipped: {' '.join(missing)})", file=sys.stderr, flush=True)
    if not tests:  # an empty selection would make mutmut run the whole suite for every mutant
        raise MutmutFailed(f"{target.path}: none of its test files is in the tree")
    # everything else at the top (tools/ holds the mock server some tests start, docs/ files some tests read)
    extra = sorted(p.name for p in copy.iterdir() if p.name not in {*packages, "tests", "mutants", "pyproject.toml"})
    config = (
        "\n\n[tool.mutmut]\n"
        f"source_paths = {toml_list(packages)}\n"
        f"also_copy = {toml_list(extra)}\n"
        f"only_mutate = {toml_list([target.path])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]\n'
        "timeout_multiplier = 10.0\n"
    )
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    # the project's addopts would be added to every run; mutmut passes its own
    text = text.replace('addopts = "-q"', 'addopts = ""')
    pyproject.write_text(text + config, encoding="utf-8")


def mutant_globs(target: Target) -> list[str]:
    """mutmut's mutant names are `<dotted module>.<mangled function>__mutmut_<n>`."""
    module = target.path.removesuffix(".py").replace("/", ".")
    return [f"{module}.{function}__mutmut_*" for function in target.functions]


def read_results(copy: Path, target: Target) -> dict[str, int | None]:
    meta = copy / "mutants" / (target.path + ".meta")
    if not meta.exists():
        return {}
    codes: dict[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    if target.functions:
        prefixes = tuple(g.removesuffix("*") for g in mutant_globs(target))
        codes = {name: code for name, code in codes.items() if name.startswith(prefixes)}
    return codes


def classify(code: int | None) -> str:
    if code in KILLED_CODES:
        return "killed"
    if code in SURVIVED_CODES:
        return "survived"
    if code in TIMEOUT_CODES:
        return "timeout"
    if code in NO_TESTS_CODES:
        return "no tests"
    return "other"


class MutmutFailed(RuntimeError):
    """mutmut tried no mutant of a module (its log's end says why: usually a selected test failing as it is)."""


def run_target(target: Target, *, show_survivors: bool, keep: Path | None) -> tuple[Counter[str], list[str]]:
    base = Path(tempfile.mkdtemp(prefix="vlmkit-mutation-"))
    copy = base / "tree"
    try:
        copy_tree(REPO, copy)
        write_config(copy, target)
        env = dict(os.environ)
        env.pop("PYTEST_ADDOPTS", None)
        cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", "1", *mutant_globs(target)]
        log_path = base / "mutmut.log"
        with open(log_path, "w", encoding="utf-8") as log:
            proc = subprocess.run(cmd, cwd=copy, env=env, stdout=log, stderr=subprocess.STDOUT)
        codes = read_results(copy, target)
        if proc.returncode != 0 and all(code is None for code in codes.values()):
            # nothing was tried: mutmut stops before mutating when the selected tests fail on the unmutated tree
            tail = log_path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")[-3000:]
            raise MutmutFailed(f"mutmut failed on {target.path} (exit {proc.returncode}); its log ends:\n{tail}")
        counts = Counter(classify(code) for code in codes.values())
        counts["mutants"] = len(codes)
        survivors = sorted(name for name, code in codes.items() if classify(code) == "survived")
        if show_survivors:
            for name in survivors:
                diff = subprocess.run(
                    [sys.executable, "-m", "mutmut", "show", name], cwd=copy, env=env, capture_output=True, text=True
                ).stdout
                print(diff.rstrip(), flush=True)
        return counts, survivors
    finally:
        if keep is not None:
            dest = keep / target.key
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(base, dest, symlinks=True)
        shutil.rmtree(base, ignore_errors=True)


def format_row(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="KEY", help="run only these modules (keys from --list)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests, then stop")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--keep", type=Path, help="keep each module's temporary copy under this folder")
    args = parser.parse_args(argv)

    targets = list(MODULES)
    if args.only:
        unknown = sorted(set(args.only) - {t.key for t in MODULES})
        if unknown:
            parser.error(f"unknown module key(s) {unknown}; known: {[t.key for t in MODULES]}")
        targets = [t for t in MODULES if t.key in args.only]
    if args.list:
        for t in targets:
            part = f" ({', '.join(t.functions)})" if t.functions else ""
            print(f"{t.key:14s} {t.path}{part}\n{'':14s} tests: {' '.join(t.tests)}")
        return 0

    header = ["module", "mutants", "killed", "survived", "timeout", "no tests", "other", "% killed"]
    rows: list[list[str]] = []
    all_survivors: list[str] = []
    failed = False
    for target in targets:
        print(f"== {target.path} ({len(target.tests)} test files)", file=sys.stderr, flush=True)
        name = target.path + (f" ({target.part})" if target.part else "")
        try:
            counts, survivors = run_target(target, show_survivors=args.survivors, keep=args.keep)
        except MutmutFailed as exc:
            print(exc, file=sys.stderr, flush=True)
            rows.append([name, "-", "-", "-", "-", "-", "-", "failed (see above)"])
            failed = True
            continue
        all_survivors += survivors
        total = counts["mutants"]
        share = f"{100.0 * counts['killed'] / total:.1f}" if total else "-"
        rows.append([name, str(total), str(counts["killed"]), str(counts["survived"]), str(counts["timeout"]),
                     str(counts["no tests"]), str(counts["other"]), share])
        print(format_row(rows[-1], [len(c) for c in rows[-1]]), file=sys.stderr, flush=True)

    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(format_row(header, widths))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(format_row(row, widths))
    if all_survivors:
        print("\nsurvivors:")
        for name in all_survivors:
            print(f"  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
