"""The `vlmkit` command. Parsing imports nothing heavy; each subcommand imports what it needs when it runs."""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlmkit.cli.listing import add_list_parser
from vlmkit.perf.cli import add_perf_parser
from vlmkit.report.cli import add_report_parser

if TYPE_CHECKING:
    from vlmkit.run.resolve import ModelOptions


def _run_parser(sub: argparse._SubParsersAction) -> None:
    from vlmkit.cli.exit_codes import epilog

    p = sub.add_parser("run", help="infer and evaluate models on datasets", description="Infer, score, report.",
                       epilog=RUN_EXAMPLES + epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", nargs="+", default=[], metavar="NAME", help="catalog names, $LMUData/<name>.tsv, or .tsv paths")
    p.add_argument("--model", nargs="+", default=[], metavar="NAME", help="registry names, served model ids, or local dirs")
    p.add_argument("--config", type=Path, default=None, help="a JSON/YAML run file (data, model, custom_datasets, options)")
    custom = p.add_argument_group("custom datasets (AISBench / OpenCompass / EvalScope / Ark formats)")
    custom.add_argument("--custom-dataset-path", nargs="+", default=[], metavar="PATH", help=".csv/.jsonl files or EvalScope directories")
    custom.add_argument("--custom-dataset-meta-path", default=None, help="a .meta.json (default: <file>.meta.json beside the file)")
    custom.add_argument("--custom-dataset-data-type", choices=("mcq", "qa"), default=None, help="default: detected (options present -> mcq)")
    custom.add_argument("--custom-dataset-infer-method", default="gen", help="gen (EvalScope's ppl: use --mcq-mode continuation|logits|ppl)")
    custom.add_argument("--few-shot", type=int, default=0, help="few-shot examples from the {subset}_dev file (EvalScope layout)")
    custom.add_argument("--subset", nargs="+", default=None, help="EvalScope subsets (default: every {subset}_val file)")
    custom.add_argument("--seed", type=int, default=0, help="seed of .meta.json shuffle/random sampling")
    custom.add_argument("--qa-metrics", nargs="+", choices=("em", "contains", "bleu", "rouge"), default=["em", "contains"])
    p.add_argument("--mode", choices=("all", "infer", "eval", "perf"), default="all",
                   help="perf: load-test each served model with each dataset at --nproc concurrency (see `vlmkit perf`)")
    p.add_argument("--work-dir", type=Path, default=Path("outputs"), help="results go to WORK_DIR/<model>/ (default: outputs)")
    p.add_argument("--limit", type=int, default=None, help="only the first N rows of each dataset")
    p.add_argument("--nproc", "--api-nproc", type=int, default=4,
                   help="concurrent requests for API models (default 4); under torchrun write --api-nproc: torchrun "
                        "reads any --nproc as its own --nproc-per-node")
    p.add_argument("--batch-size", type=int, default=None,
                   help="batch size for local models (default 8; 64 with --backend vllm, one LLM.chat call per batch)")
    p.add_argument("--max-tokens", type=int, default=None, help="most tokens to generate per answer")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature (default 0: greedy)")
    p.add_argument("--system-prompt", default=None, metavar="TEXT",
                   help="a system turn before each conversation (a row's own system turn wins; local models: "
                        "replaces the preset's; \"\" sends none)")
    from vlmkit.run.frame_budgets import fps_values, nframe_values

    p.add_argument("--nframe", type=nframe_values, default=None, metavar="N[,N..]",
                   help="video: frames sampled per clip (default 8); several (8,16,32): each video dataset runs at "
                        "each, as <dataset>_<N>frame (vlmkit.run.frame_sweep); `vlmkit report` draws score by frames")
    p.add_argument("--fps", type=fps_values, default=None, metavar="F[,F..]",
                   help="video: frames sampled per second (replaces --nframe); several (0.5,1): one run per rate, "
                        "as <dataset>_<F>fps")
    p.add_argument("--video-mode", choices=("frames", "video_url"), default=None,
                   help="served models: video as sampled frames (default) or one video_url part")
    p.add_argument("--data-root", type=Path, default=None, metavar="DIR",
                   help="a local snapshot folder for benchmarks built from one (MVBench, Video-MME)")
    p.add_argument("--coords", choices=("abs", "norm1000", "norm1", "auto"), default=None,
                   help="GUI grounding: read every model's click coordinates as pixels of the Qwen2-VL-resized image "
                        "(abs), 0-1000, 0-1, or auto (as VLMEvalKit reads them); default: each model family's "
                        "convention from its preset (vlm/presets.tsv), else auto")
    p.add_argument("--mcq-mode", choices=("generate", "logits", "continuation", "ppl"), default="generate",
                   help="how rows are answered: generate an answer (default); MCQ and Y/N: logits: the option letter "
                        "the model finds likeliest as its answer (local, --backend vllm, or a served model's "
                        "top_logprobs); continuation: the option text with the highest summed log-probability (also "
                        "acc_norm, normalised by characters; local models); QA and caption datasets, local models: "
                        "ppl: the perplexity of the answer text given the prompt")
    p.add_argument("--repeats", type=int, default=1, metavar="N",
                   help="ask each sample N times (attempt k sends seed k; needs --temperature): mean@N, its spread, "
                        "pass@k and majority vote beside attempt 1's headline (docs/error_bars.md)")
    p.add_argument("--retry-truncated", type=int, default=None, metavar="N",
                   help="ask the replies cut by the token budget (finish_reason length) once more with max_tokens N; "
                        "the headline uses the retried answers, results.json keeps both figures")
    p.add_argument("--prompt-style", choices=("model", "dataset"), default="model",
                   help="model: a local model's own prompts where VLMEvalKit's wrapper has them (default); dataset: "
                        "always the benchmark's prompt")
    p.add_argument("--model-path", default=None, help="local weights directory for a local model")
    p.add_argument("--backend", choices=("transformers", "vllm"), default="transformers",
                   help="local models: transformers (default) or vLLM's offline engine (pip install vllm)")
    p.add_argument("--tensor-parallel", type=int, default=None, metavar="N",
                   help="--backend vllm: GPUs one model is split over (default 1)")
    p.add_argument("--vllm-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="--backend vllm: a vllm.LLM argument, e.g. max_model_len=8192 (repeatable; VALUE read as JSON "
                        "where it parses, else text)")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible base URL (.../v1 or .../chat/completions); replicas of one model: URL1,URL2,... or a file with one URL a line")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY); never written anywhere")
    p.add_argument("--timeout", type=float, default=None,
                   help="served models: seconds to wait for one answer (default 60)")
    p.add_argument("--retries", type=int, default=None,
                   help="served models: extra attempts after a timeout, 429 or 5xx (default 3; 0: one attempt)")
    judge = p.add_argument_group("LLM judge (any OpenAI-compatible model; without --judge: rules alone)")
    judge.add_argument("--judge", default=None, metavar="MODEL",
                       help="judge model id: reads the MCQ/Y-N answers rules cannot, and scores judge-only benchmarks")
    judge.add_argument("--judge-api-base", default=None, metavar="URL",
                       help="the judge's base URL (default: $OPENAI_API_BASE, else https://api.openai.com/v1)")
    judge.add_argument("--judge-api-key", default=None, help="the judge's key (default: $OPENAI_API_KEY); never written")
    judge.add_argument("--judge-nproc", type=int, default=4, help="concurrent judge calls (default 4)")
    judge.add_argument("--judge-timeout", type=float, default=None, help="seconds per judge call (default 60)")
    judge.add_argument("--judge-retries", type=int, default=None,
                       help="extra attempts after a timeout, 429 or 5xx (default 3)")
    rules = p.add_argument_group("how to score a TSV the catalog does not know (or put them in <name>.scoring.json)")
    rules.add_argument("--kind", default=None, help="mcq, yorn, vqa or caption")
    rules.add_argument("--metric", default=None,
                       help="mcq: acc, circular; yorn: acc, mme, pope, hallusion, amber, vsr; vqa: vqa_score, anls, "
                            "relaxed, exact, ocrbench; caption: caption (BLEU/ROUGE-L/CIDEr)")
    rules.add_argument("--like", default=None, metavar="NAME", help="score it by this catalog benchmark's rules (e.g. MME)")
    shards = p.add_argument_group("several processes or hosts (see vlmkit.run.shards; torchrun also works)")
    shards.add_argument("--shard", default=None, metavar="I/N",
                        help="infer shard I of N alone (I from 0 to N-1: rows I, I+N, ...), journalled so that any "
                             "later split reuses every answer; nothing is scored. Run again alone after a failure")
    shards.add_argument("--merge", action="store_true",
                        help="score the shards' answers (asks nothing) when every row has one, else name the missing "
                             "shards and exit 3; with --shard: run the shard, then score if it finished last")
    shards.add_argument("--data-parallel", type=int, default=None, metavar="N",
                        help="local models: N processes on this host, each a --shard i/N with its own GPUs "
                             "(--tensor-parallel T each: the i-th T of them), then scored here; logs in "
                             "WORK_DIR/logs; a rerun asks only what is missing (vlmkit.run.data_parallel)")
    shards.add_argument("--barrier-timeout", type=float, default=None, metavar="SECONDS",
                        help="torchrun: how long rank 0 waits for the other ranks after each dataset before naming the "
                             "missing ones (default 1800: 30 min)")
    p.add_argument("--keep-local-tsv", action="store_true",
                   help="run a local catalog TSV whose MD5 differs from the catalog's (recorded in results.json)")
    p.add_argument("--reuse", action="store_true", help="keep answers journalled under other settings instead of setting them aside")
    p.add_argument("--fuzzy", action="store_true", help="MCQ: Levenshtein fallback for unparsed answers (reported separately)")
    p.add_argument("--lmudata", type=Path, default=None, help="dataset folder (default: $LMUData or ~/LMUData)")
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(func=_cmd_run)


TOP_EXAMPLES = """examples:
  vlmkit run --data vlmkit_demo_mcq --model vlmkit-tiny            the shipped demo, offline
  vlmkit run --data MMBench_DEV_EN --model Qwen2.5-VL-7B-Instruct --api-base http://127.0.0.1:8000/v1
  vlmkit perf --data vlmkit_demo_mcq --model m --api-base http://127.0.0.1:8000/v1 --concurrency 1 8
  vlmkit report --html report.html                                  every run under outputs/ in one page
  vlmkit list datasets --kind mcq --scorable
"""
RUN_EXAMPLES = """examples:
  vlmkit run --data vlmkit_demo_mcq vlmkit_demo_yorn --model vlmkit-tiny --batch-size 16
  vlmkit run --data MMBench_DEV_EN POPE --model served-id --api-base http://127.0.0.1:8000/v1 --nproc 16
  OPENAI_API_KEY=... vlmkit run --data MMVet --model gpt-4o-mini --judge gpt-4o-mini
  vlmkit run --data MyDocs --metric anls --model gpt-4o-mini        a TSV of your own in $LMUData
  vlmkit run --custom-dataset-path quiz.jsonl --model gpt-4o-mini    AISBench/OpenCompass/EvalScope files

"""


def build_parser() -> argparse.ArgumentParser:
    from vlmkit import __version__

    parser = argparse.ArgumentParser(prog="vlmkit", description="Benchmark kit for vision-language models.",
                                     epilog=TOP_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"vlmkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _run_parser(sub)
    add_perf_parser(sub)
    add_report_parser(sub)
    add_list_parser(sub)
    return parser


def _custom_entries(args: argparse.Namespace) -> list[dict]:
    from vlmkit.core.errors import DataError

    if args.custom_dataset_meta_path and len(args.custom_dataset_path) != 1:
        raise DataError("--custom-dataset-meta-path goes with exactly one --custom-dataset-path")
    return [
        {
            "path": path, "meta_path": args.custom_dataset_meta_path, "data_type": args.custom_dataset_data_type,
            "infer_method": args.custom_dataset_infer_method, "few_shot": args.few_shot, "subsets": args.subset,
            "seed": args.seed, "qa_metrics": tuple(args.qa_metrics),
        }
        for path in args.custom_dataset_path
    ]


def _apply_config(args: argparse.Namespace) -> list[dict]:
    """Merge a --config file into args (flags given on the command line win) and return its custom entries."""
    from vlmkit.core.errors import DataError
    from vlmkit.run.config_file import load_run_config

    config = load_run_config(args.config)
    args.data = config.data + args.data
    args.model = config.model + args.model
    parser = build_parser()
    defaults = vars(parser.parse_args(["run"]))
    actions = _run_actions(parser)
    for key, value in config.options.items():
        if key in ("data", "model", "config", "func") or key not in defaults:
            raise DataError(f"{args.config}: options.{key} is not a `vlmkit run` option")
        if key == "api_base" and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = ",".join(value)  # replicas of one model, as `--api-base URL1,URL2` gives them
        if getattr(args, key) == defaults[key]:
            setattr(args, key, _option_value(actions[key], value, f"{args.config}: options.{key}"))
    return config.custom_datasets


def _run_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The `vlmkit run` options by their dest (the spelling a --config file uses)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action for action in sub.choices["run"]._actions}


def _option_value(action: argparse.Action, value: Any, where: str) -> Any:
    """A --config option's value as the flag would have parsed it; DataError naming the key for a wrong type."""
    from vlmkit.core.errors import DataError

    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise DataError(f"{where}: expected true or false, got {value!r}")
        return value
    if action.dest in ("nframe", "fps") and isinstance(value, list):
        value = ",".join(map(str, value))  # a frame-budget sweep written as a YAML list (vlmkit.run.frame_budgets)
    many = action.nargs in ("+", "*")
    if many and not isinstance(value, list):
        value = [value]
    items = value if many else [value]
    kind = action.type or str
    out = []
    for item in items:
        if isinstance(item, (list, dict)) or isinstance(item, bool) or item is None:
            raise DataError(f"{where}: expected {'a list of ' if many else ''}{_type_name(kind)}, got {item!r}")
        try:
            converted = kind(item) if kind is not str else str(item)
        except (TypeError, ValueError) as exc:
            from vlmkit.run.frame_budgets import BudgetError

            why = str(exc) if isinstance(exc, BudgetError) else f"expected {_type_name(kind)}, got {item!r}"
            raise DataError(f"{where}: {why}") from None
        if kind is int and isinstance(item, float) and item != converted:
            raise DataError(f"{where}: expected a whole number, got {item!r}")
        if action.choices is not None and converted not in action.choices:
            raise DataError(f"{where}: must be one of {', '.join(map(str, action.choices))}, got {item!r}")
        out.append(converted)
    return out if many else out[0]


def _type_name(kind: Any) -> str:
    return {int: "a whole number", float: "a number", Path: "a path"}.get(kind, "text")


def _cmd_run(args: argparse.Namespace) -> int:
    from vlmkit.core.errors import DataError
    from vlmkit.cli.exit_codes import STOPPED
    from vlmkit.run.judge import JudgeOptions
    from vlmkit.judging import JudgeStopped
    from vlmkit.run.resolve import ModelOptions
    from vlmkit.run.runner import Runner, RunOptions
    from vlmkit.run.frame_budgets import single, sweep_of

    given = dict(vars(args))  # as typed, before --config is merged: what --data-parallel's children are given
    custom = _apply_config(args) if args.config else []
    custom += _custom_entries(args)
    if not args.model:
        raise DataError("no model: give --model NAME (or `model:` in the --config file)")
    if not args.data and not custom:
        raise DataError("no dataset: give --data NAME or --custom-dataset-path PATH (or list them in --config)")

    model_options = ModelOptions(
        model_path=args.model_path, api_base=args.api_base, api_key=args.api_key,
        max_tokens=args.max_tokens, temperature=args.temperature,
        nframe=single(args.nframe), fps=single(args.fps), video_mode=args.video_mode,
        timeout=args.timeout, retries=args.retries, system_prompt=args.system_prompt,
        backend=args.backend, tensor_parallel=args.tensor_parallel, vllm_args=list(args.vllm_arg),
    )
    budgets = sweep_of(args.nframe, args.fps)  # several --nframe/--fps values: one run per budget
    if budgets and args.mode == "perf":
        raise DataError(f"--{budgets[0].key} with several values is a sweep of `vlmkit run`; it does not go with "
                        "--mode perf: give one value")
    if args.mode == "perf":
        return _run_perf_mode(args, model_options, custom)
    options = RunOptions(
        work_dir=args.work_dir, mode=args.mode, limit=args.limit, nproc=args.nproc,
        batch_size=args.batch_size,
        reuse=args.reuse, fuzzy=args.fuzzy, root=args.lmudata, progress=sys.stderr.isatty(),
        keep_local_tsv=bool(args.keep_local_tsv), kind=args.kind, metric=args.metric, like=args.like,
        prompt_style=args.prompt_style, data_root=args.data_root, coords=args.coords,
        mcq_mode=args.mcq_mode, shard=args.shard, merge=bool(args.merge),
        repeats=args.repeats, retry_truncated=args.retry_truncated,
        **({"barrier_timeout": args.barrier_timeout} if args.barrier_timeout is not None else {}),
    )
    parallel = None
    if args.data_parallel not in (None, 1):  # N children `vlmkit run --shard i/N`, then the merge here
        from vlmkit.run.data_parallel import DataParallel

        parallel = DataParallel.launch(args.data_parallel, given, _run_actions(build_parser()), options,
                                       model_options, args.model)
        options.merge = True
    judge = JudgeOptions(name=args.judge, api_base=args.judge_api_base, api_key=args.judge_api_key,
                         nproc=args.judge_nproc, timeout=args.judge_timeout, retries=args.judge_retries)
    # The modules loaded by now live as long as the command: frozen, they are not walked again by every full
    # collection (one cost 35 ms with pandas loaded, tools/bench_run_loop.py). Thawed after, for callers in-process.
    gc.freeze()
    try:
        if budgets:
            from vlmkit.run.frame_sweep import run_sweep

            outcomes = run_sweep(budgets, options, model_options, judge, args.data, args.model, custom)
        else:
            outcomes = Runner(options, model_options, judge).run(args.data, args.model, custom)
    except JudgeStopped as stop:  # the judge's probe failed before anything was asked
        print(f"vlmkit: error: {stop}", file=sys.stderr)
        return STOPPED
    finally:
        gc.unfreeze()
    if parallel is not None:  # results.json records data_parallel and tensor_parallel
        parallel.record(outcomes)
    return report_outcomes(outcomes)


def report_outcomes(outcomes: list) -> int:
    """The table, each pair's error and scoring-failure summary and its results file on stdout; one line on stderr
    for each pair that stopped or wrote nothing. Returns the exit code (vlmkit.cli.exit_codes)."""
    from vlmkit.cli import exit_codes
    from vlmkit.run.failures import summary_lines
    from vlmkit.run.runner import summary_rows

    print(summary_rows(outcomes))
    for outcome in outcomes:
        label = f"{outcome.model} x {outcome.dataset}"
        for line in summary_lines(label, outcome.errors, outcome.scoring_failures):
            print(line)
        if outcome.evaluation is not None and (bad := outcome.evaluation.counts.get("invalid_target")):
            # a reference the scorer cannot use (an answer that is none of the row's options): said here, not only
            # in results.json; the scorer's note names the rows
            note = next((n for n in outcome.evaluation.notes if n.startswith(f"{bad} row(s)")), None)
            print(f"{label}: {note or f'{bad} row(s) have a reference answer the scorer cannot use (scored as misses)'}")
        if outcome.files.get("results"):
            print(f"{label}: {outcome.files['results']}")
    for outcome in outcomes:
        if outcome.message and outcome.status != "skipped":
            print(f"vlmkit: error: {outcome.message}", file=sys.stderr)
    return exit_codes.worst(exit_codes.FOR_STATUS.get(o.status, exit_codes.SAMPLES_FAILED) for o in outcomes)


def _run_perf_mode(args: argparse.Namespace, model_options: ModelOptions, custom: list[dict]) -> int:
    """`run --mode perf`: one closed-loop level at --nproc per (served model, dataset); see vlmkit.perf.run_mode."""
    from vlmkit.core.errors import DataError
    from vlmkit.perf.options import PerfInputError
    from vlmkit.perf.run_mode import run_perf_mode
    from vlmkit.run.resolve import resolve_model
    from vlmkit.run.inputs import build_datasets

    specs = [resolve_model(name, model_options) for name in args.model]
    try:
        datasets = build_datasets(args.data, custom, root=args.lmudata, keep_local_tsv=bool(args.keep_local_tsv),
                                  kind=args.kind, metric=args.metric, like=args.like, inference_only=True,
                                  data_root=args.data_root)
        results = run_perf_mode(
            specs, datasets, work_dir=args.work_dir, nproc=args.nproc,
            limit=args.limit, max_tokens=args.max_tokens, seed=args.seed,
        )
    except PerfInputError as exc:
        raise DataError(str(exc)) from None
    return 130 if any(r.interrupted for r in results) else 0


def _complete(parser: argparse.ArgumentParser) -> None:
    """Shell completion (argcomplete), only when the shell asks: flags, and catalog and model names after --data /
    --model. Enable it once with `eval "$(register-python-argcomplete vlmkit)"`."""
    from vlmkit.core import config

    if not config.shell_completion_requested():
        return
    try:
        import argcomplete
    except ImportError:  # completion is a convenience: without the package the shell just gets none
        return

    def datasets(**_: object) -> list[str]:
        from datasets_tsv.catalog.entries import known_rows

        return sorted(known_rows())

    def models(**_: object) -> list[str]:
        from vlm.registry import model_registry

        return sorted(entry.name for entry in model_registry())

    for action in _run_actions(parser).values():
        if action.dest == "data":
            action.completer = datasets  # type: ignore[attr-defined]
        elif action.dest == "model":
            action.completer = models  # type: ignore[attr-defined]
    argcomplete.autocomplete(parser)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    _complete(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING, format="%(levelname)s %(message)s")
    from vlmkit.core.errors import user_errors
    from vlmkit.cli.exit_codes import BAD_INPUT, INTERRUPTED

    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted: answers so far are journalled; rerun the same command to resume", file=sys.stderr)
        return INTERRUPTED
    except user_errors() as exc:
        print(f"vlmkit: error: {exc}", file=sys.stderr)
        return BAD_INPUT
    except OSError as exc:
        if exc.errno not in NO_ROOM | NO_PERMISSION:
            raise
        where = exc.filename or "the work dir"
        what = "cannot write" if exc.errno in NO_ROOM else "cannot use"  # a permission error may be a read
        print(f"vlmkit: error: {what} {where} ({exc.strerror}); every answer journalled before this is kept: "
              "make room (or fix the permission) and run the same command again to resume", file=sys.stderr)
        return BAD_INPUT


# The user's to fix: a disk that is full (or a file-size limit reached) or read-only, and a path not permitted.
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
NO_PERMISSION = frozenset({errno.EACCES, errno.EPERM})


if __name__ == "__main__":
    sys.exit(main())
