"""`vlmkit report`: the subcommand's flags (argparse only at import: `vlmkit --help` stays fast) and its entry.

Where things go: the table is printed and written as report.csv and report.md into --out (default: the first
WORK_DIR, beside the runs it lists); --html writes the page where it says. Video benchmarks run at several frame
budgets add the score-by-frames table (printed, in report.md, and as frame_curves.csv; a line chart on the page:
vlmkit.report.frame_curve); runs that differ in how the video reaches the model add the video-modes section
(vlmkit.report.video_modes). --diff prints the changed samples (and,
with --html, writes a page of the two runs with the changes on top); it writes no csv or md. --explain prints, for
one run, how far each difference from VLMEvalKit moves its score (vlmkit.report.explain); it writes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DIFF_ROWS = 200  # --diff: changed samples printed unless --max-rows says otherwise

DESCRIPTION = (
    "Read every results.json under the work dirs (<work>/<model>/<dataset>/results.json; runs set aside as "
    "results.staleN.json too with --all) and print the primary metric of each model x dataset on its own scale, "
    "with n and status; write it as report.csv and report.md; --html writes one self-contained page with the "
    "leaderboard, each run's breakdown, a sample browser and the perf runs. A video benchmark run at several frame "
    "budgets (vlmkit run --nframe 8,16,32) adds its score by frames per model (table, frame_curves.csv, a chart on "
    "the page); runs of one benchmark in --video-mode frames and video_url, or by a served and a local model, add "
    "a section comparing them (paired test). --diff A B lists the samples whose "
    "verdict changed between two runs of one dataset. --explain RUN says, for one run, how far each difference from "
    "VLMEvalKit moves the score: the answer reading, the prompt family, the preset and the judge."
)
EPILOG = (
    "Marks: `0.8100*` a partial run (failed samples count as misses); no value: the run was not scored (its status "
    "says why); `(inferred)` after a scale: an older results.json, its scale read from the scorer's name. "
    "`vlmevalkit`: the figure VLMEvalKit would print for the same replies, on the same scale (blank where the scorer "
    "does not compute it). Example: vlmkit report outputs/Qwen2-VL-2B/MMStar --explain. "
    "Exit codes: 0 written (or printed); 2 bad input (nothing found, an unreadable run, --diff across datasets, "
    "--explain with --diff or --html)."
)


def add_report_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="table of every model x dataset run, an HTML page of samples, a diff of two runs",
        description=DESCRIPTION, epilog=EPILOG,
    )
    p.add_argument("work_dirs", nargs="*", type=Path, default=[Path("outputs")], metavar="WORK_DIR",
                   help="folders to search for results.json (default: outputs)")
    p.add_argument("--models", nargs="+", default=None, metavar="NAME", help="only these models (shell patterns: 'Qwen*')")
    p.add_argument("--datasets", nargs="+", default=None, metavar="NAME", help="only these datasets (shell patterns)")
    p.add_argument("--all", action="store_true", dest="every_run",
                   help="every run, also earlier ones set aside (default: the latest of each pair by completed_at)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where report.csv and report.md go (default: the first WORK_DIR)")
    p.add_argument("--html", type=Path, default=None, metavar="PATH", help="also write one self-contained HTML page")
    p.add_argument("--samples", choices=("all", "wrong", "none"), default="all",
                   help="samples the page embeds per run: all (default), wrong (every one not right), none")
    p.add_argument("--thumb-size", type=int, default=None, metavar="PX",
                   help="longer side of the page's image thumbnails (default: the largest of 160 to 64 px that keeps "
                   "the page near 9.6 MB; 0: none, the page shows image paths)")
    p.add_argument("--diff", nargs=2, default=None, metavar=("RUN_A", "RUN_B"),
                   help="two run folders or results.json files of one dataset: the samples whose verdict changed")
    p.add_argument("--explain", nargs="?", const=True, default=None, metavar="RUN",
                   help="for one run (a run folder or results.json; or the one WORK_DIR given), how far each "
                   "difference from VLMEvalKit moves its score: reading, prompt family, preset, judge. Prints only. "
                   "Example: vlmkit report --explain outputs/Qwen2-VL-2B/MMStar")
    p.add_argument("--max-rows", type=int, default=None, metavar="N",
                   help="most rows printed: --diff's changed samples (default 200; the page has them all), "
                   "--explain's rows read differently (default 10); 0: all")
    p.set_defaults(func=run_report_command)


def run_report_command(args: argparse.Namespace) -> int:
    """Exit codes: 0 done; 2 bad input (one line on stderr)."""
    import sys

    from vlmkit.report.runs import ReportInputError

    if args.thumb_size is not None and args.thumb_size < 0:
        print("vlmkit report: error: --thumb-size must be 0 or more", file=sys.stderr)
        return 2
    if args.max_rows is not None and args.max_rows < 0:
        print("vlmkit report: error: --max-rows must be 0 or more", file=sys.stderr)
        return 2
    if args.explain is not None and (args.diff or args.html):
        other = "--diff" if args.diff else "--html"
        print(f"vlmkit report: error: --explain prints one run; it does not go with {other}", file=sys.stderr)
        return 2
    try:
        if args.explain is not None:
            return _explain(args)
        return _diff(args) if args.diff else _table(args)
    except ReportInputError as exc:
        print(f"vlmkit report: error: {exc}", file=sys.stderr)
        return 2


def _nothing_found(args: argparse.Namespace) -> str:
    where = ", ".join(map(str, args.work_dirs))
    filters = " ".join(
        f"--{name} {' '.join(values)}" for name, values in (("models", args.models), ("datasets", args.datasets)) if values
    )
    return f"no results.json under {where}" + (f" matching {filters}" if filters else "")


def _table(args: argparse.Namespace) -> int:
    from vlmkit.core.files import write_text_atomic
    from vlmkit.report.export import console, write_tables
    from vlmkit.report.frame_curve import CSV_NAME, curves_console, curves_csv, curves_markdown, frame_curves
    from vlmkit.report.runs import ReportInputError, collect_runs
    from vlmkit.report.table import leaderboard
    from vlmkit.report.video_modes import modes_console, modes_markdown, video_mode_comparisons

    warnings: list[str] = []
    # every run, also those set aside: the curves and the video modes compare runs of one pair at other settings
    every = collect_runs(args.work_dirs, models=args.models, datasets=args.datasets, every_run=True,
                         warnings=warnings)
    runs = every if args.every_run else [r for r in every if r.latest]
    _warn(warnings)
    if not runs:
        raise ReportInputError(_nothing_found(args))
    rows = leaderboard(runs)
    curves, modes = frame_curves(every), video_mode_comparisons(every)
    print(console(rows, with_file=args.every_run))
    for section in (curves_console(curves), modes_console(modes)):
        if section:
            print(f"\n{section}")
    root = args.work_dirs[0]
    out_dir = args.out or (root if root.is_dir() else root.parent)
    csv_path, md_path = write_tables(rows, out_dir, with_file=args.every_run,
                                     sections=curves_markdown(curves) + modes_markdown(modes))
    written = [csv_path, md_path]
    if curves:
        written.append(out_dir / CSV_NAME)
        write_text_atomic(written[-1], curves_csv(curves))
    print(f"\nwritten: {', '.join(map(str, written))}")
    if args.html:
        from vlmkit.report.perf_runs import collect_perf

        perf = collect_perf(args.work_dirs, models=args.models, datasets=args.datasets)
        _write_html(args, rows, perf=perf, frame_curves=curves, video_modes=modes)
    return 0


def _warn(warnings: list[str]) -> None:
    import sys

    for warning in warnings:
        print(f"vlmkit report: warning: {warning}", file=sys.stderr)


def _diff(args: argparse.Namespace) -> int:
    from vlmkit.report.diff import diff_runs, diff_text
    from vlmkit.report.runs import resolve_run
    from vlmkit.report.table import leaderboard

    warnings: list[str] = []
    a, b = (resolve_run(spec, warnings) for spec in args.diff)
    _warn(warnings)
    diff = diff_runs(a, b)
    most = DIFF_ROWS if args.max_rows is None else args.max_rows or None
    print(diff_text(diff, most=most))
    if args.html:
        _write_html(args, leaderboard([a, b]), diff=diff)
    return 0


def _explain(args: argparse.Namespace) -> int:
    from vlmkit.report.explain import MOST_ROWS, explain
    from vlmkit.report.runs import ReportInputError, resolve_run

    spec = args.explain
    if spec is True:  # `--explain` after the run: the one WORK_DIR given names it
        if len(args.work_dirs) != 1:
            raise ReportInputError("--explain needs one run: give a run folder or results.json")
        spec = str(args.work_dirs[0])
    warnings: list[str] = []
    run = resolve_run(spec, warnings)
    _warn(warnings)
    most = MOST_ROWS if args.max_rows is None else args.max_rows or None
    print(explain(run, most_rows=most))
    return 0


def _write_html(args: argparse.Namespace, rows: list, **extra: object) -> None:
    from vlmkit.report.page import build_payload, write_page
    from vlmkit.report.thumbs import Thumbnails

    thumbs = Thumbnails(args.thumb_size)
    sources = [str(p) for p in (args.diff or args.work_dirs)]
    payload = build_payload(rows, samples=args.samples, thumbs=thumbs, sources=sources, **extra)  # type: ignore[arg-type]
    size = write_page(args.html, payload)
    embedded = sum(len(r["samples"] or []) for r in payload["runs"])
    print(f"page: {args.html} ({size / 1e6:.1f} MB; {embedded} samples, {len(thumbs.urls)} thumbnails"
          + (f" at {thumbs.size} px)" if thumbs.urls else ")"))


def main(argv: list[str] | None = None) -> int:
    """`python -m vlmkit.report.cli report ...`: the subcommand on its own (vlmkit.cli.main registers the same parser)."""
    parser = argparse.ArgumentParser(prog="vlmkit")
    add_report_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
