"""The dataset a perf run draws its requests from: a catalog name, a TSV, or a custom .jsonl/.csv file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlmkit.perf.options import PerfInputError

CUSTOM_SUFFIXES = (".jsonl", ".csv")


def load_dataset(data: str, *, meta: str | None = None, seed: int = 0, root: Path | None = None,
                 score: bool = False) -> Any:
    """A custom dataset (datasets_tsv.custom, with its `.meta.json`) for a .jsonl/.csv path; otherwise a catalog
    name, `$LMUData/<name>.tsv` or a .tsv path through datasets_tsv.catalog.registry.build_dataset. `score`
    (--score): the benchmark must be scorable without a judge (a judge- or prompt-only catalog row is refused)."""
    if Path(data).suffix.lower() in CUSTOM_SUFFIXES:
        if not Path(data).is_file():
            raise PerfInputError(f"--data {data}: no such file")
        try:
            from datasets_tsv.custom import build_custom_dataset
        except ImportError as exc:
            raise PerfInputError(f"--data {data}: custom .jsonl/.csv datasets need datasets_tsv.custom ({exc})") from None
        try:
            return build_custom_dataset(data, meta_path=meta, seed=seed)
        except ValueError as exc:  # the custom reader's errors name the file, row and field
            raise PerfInputError(str(exc)) from None
    if meta is not None:
        raise PerfInputError("--meta applies to custom .jsonl/.csv datasets; a TSV dataset takes none")
    from datasets_tsv.catalog.registry import build_dataset

    # prompts only: a judge-scored benchmark is a source too, unless its answers are to be scored
    if not score:
        return build_dataset(data, root=root, inference_only=True)
    from datasets_tsv.catalog.registry import NotScorableError

    try:
        return build_dataset(data, root=root)
    except NotScorableError as exc:  # perf has no judge
        why = re.split(r": pass --judge|; run it with --mode infer", str(exc))[0]
        raise PerfInputError(f"--score: {why}; vlmkit perf scores by rules only (no judge)") from None


def load_source(args: Any, options: Any) -> Any:
    """What the run's requests are built from, as the `vlmkit perf` flags name it: `--data`, the conversations of
    `--sessions`, the timestamped requests of `--trace`, or the generated rows of `--synthetic-image`/`--synthetic-video` (exactly one)."""
    synthetic = args.synthetic_image is not None or args.synthetic_video is not None
    given = [name for name, on in (("--data", args.data is not None), ("--synthetic-image/--synthetic-video", synthetic),
                                   ("--sessions", getattr(args, "sessions", None) is not None),
                                   ("--trace", getattr(args, "trace", None) is not None)) if on]
    if len(given) > 1:
        raise PerfInputError(f"{' and '.join(given)} are {len(given)} sources of requests: give one")
    if getattr(args, "prefix_tokens", None) is not None and given and given[0] in ("--sessions", "--trace"):
        raise PerfInputError(f"--prefix-share does not apply to {given[0]}: "
                             + ("a conversation's history is its shared prefix" if given[0] == "--sessions"
                                else "the trace's hash_ids say which prefixes are shared"))
    if getattr(args, "trace", None) is not None:
        from vlmkit.perf.trace import TraceSource, read_trace

        if args.trace_block_tokens < 1:
            raise PerfInputError(f"--trace-block-tokens must be >= 1, got {args.trace_block_tokens}")
        return TraceSource(args.trace, read_trace(args.trace), args.trace_block_tokens)
    if getattr(args, "sessions", None) is not None:
        from vlmkit.perf.sessions import SessionsSource, read_sessions

        return SessionsSource(args.sessions, read_sessions(args.sessions))
    if synthetic:
        from vlmkit.perf.synthetic import SyntheticDataset, parse_image_spec, parse_video_spec, synthetic_rows

        image = parse_image_spec(args.synthetic_image) if args.synthetic_image is not None else None
        video = parse_video_spec(args.synthetic_video) if args.synthetic_video is not None else None
        return SyntheticDataset(synthetic_rows(options.num_requests, options.warmup), image=image, video=video,
                                seed=options.seed)
    if args.data is None and getattr(args, "prefix_tokens", None) is not None:  # text rows behind the prefixes
        from vlmkit.perf.synthetic import SyntheticDataset, synthetic_rows

        return SyntheticDataset(synthetic_rows(options.num_requests, options.warmup), seed=options.seed, text_only=True)
    if args.data is None:
        raise PerfInputError("no requests to send: give --data, --sessions, --trace, or --synthetic-image/--synthetic-video")
    return load_dataset(args.data, meta=args.meta, seed=args.seed, root=args.lmudata,
                        score=bool(getattr(args, "score", False)))


def close_source(source: Any) -> None:
    """Remove what a source generated for the run (a synthetic dataset's video files)."""
    close = getattr(source, "close", None)
    if callable(close):
        close()
