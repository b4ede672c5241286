"""A run described in a file (JSON or YAML) instead of flags, and the custom-dataset entries of a run.

    data: [MMBench_DEV_EN, POPE]           # catalog names or TSVs, like --data
    model: [gpt-4o-mini]                   # like --model
    custom_datasets:                       # like --custom-dataset-path (AISBench's entry shape)
      - path: data/test_mcq.csv
        data_type: mcq                     # optional: mcq | qa (detected when absent)
        meta_path: data/test_mcq.meta.json # optional (default: <file>.meta.json beside it)
        infer_method: gen
        few_shot: 0
        subsets: [example]                 # EvalScope directories only
    options: {nproc: 8, max_tokens: 512}   # any `vlmkit run` option, spelled with underscores
                                           # (timeout, retries, keep_local_tsv, api_base, api_key, ...)

Flags given on the command line win over the file; lists from both are joined. An `api_key` given here is used like
--api-key: it reaches no file vlmkit writes and no log line (results.json records the command line with it masked).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core.errors import DataError

CUSTOM_KEYS = frozenset({"path", "meta_path", "data_type", "infer_method", "few_shot", "subsets", "seed", "qa_metrics"})
TOP_KEYS = frozenset({"data", "model", "custom_datasets", "options"})


@dataclass
class RunConfig:
    data: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    custom_datasets: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        return [value]
    if isinstance(value, list):
        return value
    raise DataError(f"{where}: expected a list, got {type(value).__name__}")


def custom_entry(raw: Any, where: str, base: Path | None = None) -> dict[str, Any]:
    """A checked custom-dataset entry; relative paths resolve against base (the config file's folder)."""
    entry = {"path": raw} if isinstance(raw, str) else raw
    if not isinstance(entry, dict) or "path" not in entry:
        raise DataError(f"{where}: a custom dataset entry needs a `path`")
    unknown = sorted(set(entry) - CUSTOM_KEYS)
    if unknown:
        raise DataError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(CUSTOM_KEYS))}")
    entry = dict(entry)
    for key in ("path", "meta_path"):
        if entry.get(key) is not None and base is not None and not Path(entry[key]).expanduser().is_absolute():
            entry[key] = str(base / entry[key])
    if isinstance(entry.get("subsets"), str):
        entry["subsets"] = [entry["subsets"]]
    return entry


def _load_yaml(text: str, path: Path) -> Any:
    """YAML without aliases: a run file never needs `*name`, and nested aliases ("a billion laughs") expand to
    gigabytes when the values are read, so they are refused before anything is built."""
    import yaml

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            raise DataError(f"{path}: line {mark.line + 1}: YAML aliases (*{event.anchor}) are not accepted in a "
                            "run file; write the value out")
    return yaml.safe_load(text)


def load_run_config(path: Path) -> RunConfig:
    """Read a JSON (.json) or YAML (.yaml/.yml) run file; errors name the file and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        if path.suffix.lower() == ".json":
            raw = json.loads(text)
        else:
            raw = _load_yaml(text, path)
    except DataError:
        raise
    except Exception as exc:  # json.JSONDecodeError, yaml.YAMLError
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise DataError(f"{path}: not valid {kind} ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path}: the top level must be a mapping with keys {', '.join(sorted(TOP_KEYS))}")
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise DataError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOP_KEYS))}")
    options = raw.get("options") or {}
    if not isinstance(options, dict):
        raise DataError(f"{path}: `options` must be a mapping")
    return RunConfig(
        data=[str(d) for d in _as_list(raw.get("data"), f"{path}: data")],
        model=[str(m) for m in _as_list(raw.get("model"), f"{path}: model")],
        custom_datasets=[
            custom_entry(e, f"{path}: custom_datasets[{i}]", path.parent)
            for i, e in enumerate(_as_list(raw.get("custom_datasets"), f"{path}: custom_datasets"))
        ],
        options=options,
    )
