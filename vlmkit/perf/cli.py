"""`vlmkit perf`: the subcommand's flags (argparse only at import: `vlmkit --help` stays fast) and its entry."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_perf_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "perf",
        help="load-test an OpenAI-compatible streaming service",
        description="Load-test an OpenAI-compatible chat-completions service with requests built from a dataset: "
        "TTFT, TPOT, ITL, E2EL, throughput, errors, goodput; JSON, CSV, per-request JSONL and plots.",
        epilog="Exit codes: 0 every level ran at the load asked; 2 bad input; 3 a --workers process failed (figures "
        "written, marked with the load they were measured at); 130 cut short by Ctrl-C.",
    )
    p.add_argument("--model", required=True, help="the model id the server serves, or a registry API name (`vlmkit "
                   "list models`: its model id and its class's auth header, as `vlmkit run` sends them)")
    p.add_argument("--api-base", default=None, help="base URL (.../v1) or the full .../chat/completions URL (default: "
                   "$OPENAI_API_BASE); several, comma-separated, share the load (least in flight first; each server's "
                   "counts and figures in the summary)")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY); never written anywhere")
    p.add_argument("--data", default=None, metavar="NAME|PATH", help="catalog name, .tsv, or custom .jsonl/.csv (mm_custom too); "
                   "or no dataset with --synthetic-image/--synthetic-video")
    p.add_argument("--synthetic-image", default=None, metavar="WxH[,COUNT]", help="no dataset: each request carries COUNT "
                   "(default 1) images of WxH random pixels (JPEG) and a short text; deterministic by --seed")
    p.add_argument("--synthetic-video", default=None, metavar="WxHxFRAMES", help="no dataset: each request carries one "
                   "video of FRAMES random WxH frames (MJPG, 8 fps), sent as --video-mode says; with --synthetic-image "
                   "both")
    p.add_argument("--sessions", default=None, metavar="FILE", help="multi-turn conversations (Ark `messages` or "
                   "ShareGPT `conversations` jsonl, images included): each turn sent when the previous answer ended, "
                   "the history growing; --concurrency counts conversations at once, --num-requests sessions")
    p.add_argument("--think-time", type=float, default=0.0, metavar="S", help="--sessions: seconds between an answer "
                   "and the next turn (default 0)")
    p.add_argument("--trace", default=None, metavar="FILE", help="replay a timestamped trace (Mooncake jsonl: timestamp "
                   "ms, input_length, output_length, hash_ids) on its own schedule; the summary says how far the sent "
                   "schedule drifted from it")
    p.add_argument("--trace-speed", type=float, nargs="+", default=None, metavar="X", help="--trace: compress time X "
                   "times (2: twice as fast); several values: one level each (default 1)")
    p.add_argument("--trace-block-tokens", type=int, default=512, metavar="N", help="--trace: tokens per hash id "
                   "block (default 512, as Mooncake)")
    p.add_argument("--prefix-share", type=float, default=None, metavar="P", help="the fraction P (0..1) of requests "
                   "that start with one shared prefix of --prefix-tokens tokens; the others start with a prefix of "
                   "their own, as long: TTFT of the two apart in the summary (no source needed: text rows then)")
    p.add_argument("--prefix-tokens", type=int, default=None, metavar="N", help="length of the prefix of "
                   "--prefix-share, in tokens (about one word each)")
    p.add_argument("--metrics-url", default=None, metavar="URL", help="the server's Prometheus /metrics, sampled during "
                   "each level (queue, running, KV-cache use, prefix-cache hit rate of vLLM and SGLang) and put beside "
                   "the client's figures")
    p.add_argument("--metrics-interval", type=float, default=1.0, metavar="S", help="--metrics-url: seconds between "
                   "samples (default 1)")
    p.add_argument("--meta", default=None, metavar="PATH", help=".meta.json for a custom dataset (default: <data>.meta.json beside it)")
    load = p.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=int, nargs="+", default=None, metavar="N", help="closed loop; several values run a sweep (default 1)")
    load.add_argument("--request-rate", type=float, nargs="+", default=None, metavar="R", help="open loop: requests/s with Poisson arrivals; several values run a sweep")
    p.add_argument("--burstiness", type=float, default=1.0, help="open loop: gamma shape of the gaps (1 = Poisson; <1 burstier)")
    p.add_argument("--max-concurrency", type=int, default=None, help="open loop: most requests in flight")
    p.add_argument("--num-requests", type=int, default=None, help="requests per level (default: one per dataset row)")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="seconds per level (with --num-requests: whichever ends first)")
    p.add_argument("--warmup", type=int, default=0, metavar="K", help="requests sent first at each level and left out of every figure")
    p.add_argument("--max-tokens", type=int, default=None, help="max_tokens of a request whose row sets none (default 256)")
    p.add_argument("--ignore-eos", action="store_true", help="send ignore_eos: true (vLLM, SGLang) so answers run to max_tokens")
    p.add_argument("--media-mode", choices=("data-url", "file-url"), default="data-url", help="images (and video/audio URLs) as base64 data URLs or file:// URLs")
    p.add_argument("--video-mode", choices=("frames", "video_url"), default="frames", help="video as sampled frames or one video_url part")
    p.add_argument("--audio-mode", choices=("input_audio", "audio_url"), default="input_audio", help="audio as input_audio (base64) or an audio_url part")
    p.add_argument("--nframe", type=int, default=8, help="frames per video with --video-mode frames (default 8)")
    p.add_argument("--system-prompt", default=None, metavar="TEXT", help="a system turn before each prompt that has none (as `vlmkit run --system-prompt`)")
    p.add_argument("--slo", nargs="+", default=None, metavar="NAME:MS|METRIC_STAT<=LIMIT", help="goodput limits per "
                   "request, e.g. ttft:500 tpot:50 e2el:10000; and/or targets on a level's figures, e.g. "
                   '"ttft_p99<=500ms,tpot_p99<=50ms" (METRIC ttft|tpot|itl|e2el, STAT mean|median|p90|p95|p99|max, '
                   "ms or s), which --search-rate holds")
    p.add_argument("--search-rate", action="store_true", help="find the highest request rate at which every --slo "
                   "target holds: open-loop probes, doubling then bisecting (see the search flags); a plot of the "
                   "figures against the rate with the targets")
    p.add_argument("--search-min-rate", type=float, default=1.0, metavar="R", help="--search-rate: first rate (default 1/s)")
    p.add_argument("--search-max-rate", type=float, default=1024.0, metavar="R", help="--search-rate: highest rate tried (default 1024/s)")
    p.add_argument("--search-precision", type=float, default=0.05, metavar="F", help="--search-rate: stop when the "
                   "passing and failing rates are within this fraction (default 0.05)")
    p.add_argument("--search-max-probes", type=int, default=16, metavar="N", help="--search-rate: most probes (default 16)")
    p.add_argument("--search-requests", type=int, default=100, metavar="N", help="--search-rate: fewest requests a probe (default 100)")
    p.add_argument("--search-probe-s", type=float, default=20.0, metavar="S", help="--search-rate: fewest seconds of "
                   "arrivals a probe (default 20)")
    p.add_argument("--score", action="store_true", help="score each level's answers with the dataset's own scorer and "
                   "report accuracy against the load (timeouts, errors and cut-off replies count as misses; --data "
                   "with a scorable benchmark only)")
    p.add_argument("--workers", type=int, default=1, help="client processes sharing the load (one per core for high concurrency)")
    p.add_argument("--read-times", action="store_true", help="time each chunk when the client reads it, not when the kernel received it (SO_TIMESTAMPNS)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-request timeout in seconds (default 300)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="output folder (default outputs/perf/<model>/<timestamp>)")
    p.add_argument("--seed", type=int, default=0, help="seed of the arrival schedule and of dataset sampling")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--lmudata", type=Path, default=None, help="dataset folder (default: $LMUData or ~/LMUData)")
    p.set_defaults(func=run_perf_command)


def run_perf_command(args: argparse.Namespace) -> int:
    """Exit codes: 0 when every level ran at the load asked (failed requests are figures in the report), 2 on bad
    input (one line), 3 when a --workers process failed (the files are written; the levels it hit are marked with
    the load they were measured at), 130 when cut short by Ctrl-C."""
    import sys

    from vlmkit.core import config
    from vlmkit.core.errors import user_errors
    from vlmkit.perf.options import DEFAULT_MAX_TOKENS, PerfInputError, PerfOptions, parse_slo, split_slo
    from vlmkit.perf.search import SearchSettings, parse_target

    try:
        goodput, targets = split_slo(args.slo)
        api_base = args.api_base or config.openai_api_base()
        if not api_base:
            raise PerfInputError("--api-base is required (or set OPENAI_API_BASE)")
        model, api_class = served_model(args.model, api_base)
        options = PerfOptions(
            model=model,
            api_base=api_base,
            api_key=args.api_key if args.api_key is not None else config.openai_api_key(),
            api_class=api_class,
            concurrency=args.concurrency,
            request_rate=args.request_rate,
            burstiness=args.burstiness,
            max_concurrency=args.max_concurrency,
            num_requests=args.num_requests,
            duration=args.duration,
            warmup=args.warmup,
            max_tokens=args.max_tokens if args.max_tokens is not None else DEFAULT_MAX_TOKENS,
            ignore_eos=args.ignore_eos,
            media_mode=args.media_mode,
            video_mode=args.video_mode,
            audio_mode=args.audio_mode,
            nframe=args.nframe,
            system_prompt=args.system_prompt,
            slo=parse_slo(goodput),
            slo_targets=[parse_target(t) for t in targets],
            search=SearchSettings(args.search_min_rate, args.search_max_rate, args.search_precision,
                                  args.search_max_probes, args.search_requests, args.search_probe_s)
            if args.search_rate else None,
            workers=args.workers,
            read_times=args.read_times,
            timeout=args.timeout,
            out_dir=args.out,
            seed=args.seed,
            plots=not args.no_plots,
            think_time=args.think_time,
            prefix_share=args.prefix_share,
            prefix_tokens=args.prefix_tokens,
            metrics_url=args.metrics_url,
            metrics_interval=args.metrics_interval,
            trace_speed=(args.trace_speed or [1.0]) if args.trace is not None else None,
            score=args.score,
        )
        if args.trace_speed is not None and args.trace is None:
            raise PerfInputError("--trace-speed applies to --trace")
        from vlmkit.perf.options import check_options

        check_options(options)  # before the dataset is read: bad flags fail fast
        from vlmkit.perf.api import run_perf
        from vlmkit.perf.source import close_source, load_source

        dataset = load_source(args, options)
        try:
            result = run_perf(dataset, options)
        finally:
            close_source(dataset)
    except PerfInputError as exc:
        print(f"vlmkit perf: error: {exc}", file=sys.stderr)
        return 2
    except user_errors() as exc:
        print(f"vlmkit perf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vlmkit perf: interrupted before measuring began; nothing was written", file=sys.stderr)
        return 130
    if result.interrupted:
        print(f"vlmkit perf: {result.summary['notes'][0]}; written to {result.out_dir}", file=sys.stderr)
        return 130
    if result.worker_failures:
        levels = sorted({f["level"] for f in result.worker_failures}, key=[lv["label"] for lv in result.levels].index)
        print(f"vlmkit perf: {len(result.worker_failures)} worker process(es) failed at {', '.join(levels)}: those "
              f"figures were measured at a lower load than asked (see the WARNING lines); written to {result.out_dir}",
              file=sys.stderr)
        return 3
    return 0


def served_model(name: str, api_base: str) -> tuple[str, str]:
    """(the model id asked for, its class "module:Class") of `--model NAME` at `api_base`, resolved as `vlmkit run
    --model NAME --api-base URL` resolves it: a registry API entry's model id and class, else NAME on the registry's
    API class. ConfigError (one line) for a base URL the API classes refuse."""
    from vlmkit.run.resolve import ModelOptions, resolve_model

    spec = resolve_model(name, ModelOptions(api_base=api_base))
    return spec.kwargs["model"], spec.target


def main(argv: list[str] | None = None) -> int:
    """`python -m vlmkit.perf.cli perf ...`: the subcommand on its own (vlmkit.cli.main registers the same parser)."""
    parser = argparse.ArgumentParser(prog="vlmkit")
    add_perf_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
