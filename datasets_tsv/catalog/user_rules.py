"""How a TSV the catalog does not know is scored: the rules the user asks for, or what its columns say.

Rules come from the caller (`build_dataset(..., kind=, metric=, like=)`, i.e. `vlmkit run --kind/--metric/--like`)
or from a sidecar file beside the TSV, `<name>.scoring.json` (e.g. `$LMUData/MyQuiz.scoring.json` for
`$LMUData/MyQuiz.tsv`), a JSON object with the same keys:

    {"kind": "mcq", "metric": "circular"}      {"metric": "anls"}      {"like": "MME"}

- `kind`: mcq, yorn, vqa, caption.
- `metric`: mcq: acc, circular; yorn: acc, mme, pope, hallusion, amber, vsr; vqa: vqa_score, anls, relaxed, exact,
  ocrbench; caption: caption (BLEU-1..4, ROUGE-L, CIDEr; needs `pip install 'vlmkit[captions]'` to score).
  A metric other than `acc` implies its kind, so `{"metric": "anls"}` alone is enough. A metric chooses the scorer
  only: the prompt is the kind's (the question; VQA adds the short-answer line, a caption TSV without `question`
  is asked VLMEvalKit's caption text); AMBER's prompt suffix comes with `like=AMBER`, not with `metric=amber`.
- `like`: a catalog benchmark whose rules (class and options: prompt and scorer) apply; its URL, MD5 and image
  folder do not. It cannot be combined with kind/metric.
Rules given by the caller replace the sidecar's as a whole (the reason line says so). Without any, the kind is
detected from the columns (datasets_tsv.catalog.detect) and the kind's default metric is used, and the reason line says
that it was detected. Any bad value is a one-line error naming where it came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlmkit.core.errors import ConfigError, DataError
from vlmkit.scoring.ids import kind_metrics

KIND_CLASSES = {
    "mcq": "datasets_tsv.kinds.mcq:ImageMCQDataset",
    "yorn": "datasets_tsv.kinds.yorn:ImageYORNDataset",
    "vqa": "datasets_tsv.kinds.vqa:ImageVQADataset",
    "caption": "datasets_tsv.kinds.caption:ImageCaptionDataset",
}
RULE_KINDS = ("mcq", "yorn", "vqa", "caption")
DEFAULT_METRIC = {"mcq": "acc", "yorn": "acc", "vqa": "vqa_score", "caption": "caption"}
SIDECAR_SUFFIX = ".scoring.json"
SIDECAR_KEYS = ("kind", "metric", "like")
# Columns a metric cannot do without, checked when the TSV is opened (so the run fails before inference).
_METRIC_COLUMNS = {
    "mme": ("category",), "ocrbench": ("category",), "hallusion": ("l2-category",), "amber": ("category",),
}  # fmt: skip


@dataclass(frozen=True)
class Rules:
    kind: str | None = None
    metric: str | None = None
    like: str | None = None
    source: str = ""  # "" for the caller's arguments, else the sidecar's path

    def describe(self) -> str:
        """`kind=mcq, metric=circular` or `like=MME`."""
        pairs = (("kind", self.kind), ("metric", self.metric), ("like", self.like))
        return ", ".join(f"{k}={v}" for k, v in pairs if v)


def metrics_by_kind() -> dict[str, tuple[str, ...]]:
    """Kind -> the names --metric takes for it: the scorer-id table's `metric` spellings (vlmkit.scoring.ids)."""
    return {kind: metrics for kind, metrics in kind_metrics().items() if kind in RULE_KINDS}


def metric_kinds() -> dict[str, str]:
    """Metric -> the one kind it implies (`acc` implies none: it is a metric of mcq and yorn)."""
    return {m: k for k, metrics in metrics_by_kind().items() for m in metrics if m != "acc"}


def rules_from(kind: Any, metric: Any, like: Any, *, source: str = "") -> Rules | None:
    """Validated rules (None when nothing is set). Errors name the flag, or the sidecar file and its key."""
    error: type[ValueError] = DataError if source else ConfigError

    def where(key: str) -> str:
        return f"{source}: key {key!r}" if source else f"--{key}"

    for key, value in (("kind", kind), ("metric", metric), ("like", like)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise error(f"{where(key)}: {value!r} is not a name")
    if kind is None and metric is None and like is None:
        return None
    if like is not None and (kind is not None or metric is not None):
        raise error(f"{where('like')}: like takes the whole of a catalog benchmark's rules; give like, or kind/metric")
    if kind is not None and kind not in RULE_KINDS:
        raise error(f"{where('kind')}: unknown kind {kind!r}; choose one of {', '.join(RULE_KINDS)}")
    known = ("acc", *metric_kinds())
    if metric is not None and metric not in known:
        raise error(f"{where('metric')}: unknown metric {metric!r}; choose one of {', '.join(known)}")
    if metric == "acc" and kind is None:
        raise error(f"{where('metric')}: acc is a metric of mcq and yorn; say which with kind")
    if kind is not None and metric is not None and metric not in metrics_by_kind()[kind]:
        choices = ", ".join(metrics_by_kind()[kind]) or "none yet"
        raise error(f"{where('metric')}: {metric} is not a metric of kind {kind} (its metrics: {choices})")
    return Rules(kind, metric, like, source)


def sidecar_path(tsv: Path) -> Path:
    return tsv.parent / f"{tsv.stem}{SIDECAR_SUFFIX}"


def read_sidecar(tsv: Path) -> Rules | None:
    """The rules in `<name>.scoring.json` beside tsv, None when there is no such file."""
    path = sidecar_path(tsv)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: must hold a JSON object with the keys {', '.join(SIDECAR_KEYS)}")
    unknown = sorted(set(data) - set(SIDECAR_KEYS))
    if unknown:
        raise DataError(f"{path}: unknown key {unknown[0]!r} (the keys are {', '.join(SIDECAR_KEYS)})")
    rules = rules_from(data.get("kind"), data.get("metric"), data.get("like"), source=str(path))
    if rules is None:
        raise DataError(f"{path}: sets none of {', '.join(SIDECAR_KEYS)}; delete it or say how to score the file")
    return rules


def kind_metric_options(tsv: Path, rules: Rules) -> tuple[str, dict[str, Any], str]:
    """(class target, constructor options, why) for explicit kind/metric rules (no like)."""
    kind = rules.kind or metric_kinds()[rules.metric]  # type: ignore[index]
    where = rules.source or "the arguments"
    from datasets_tsv.io.tsv_read import read_header  # pandas: only when a dataset is built

    header = read_header(tsv)
    if kind == "mcq" and not {"A", "B"} <= set(header):
        raise DataError(f"{tsv}: kind mcq ({where}) but the file has no option columns A and B")
    metric = rules.metric
    if kind == "caption" and "answer" not in header:
        raise DataError(f"{tsv}: kind caption ({where}) needs an `answer` column (the list of reference captions)")
    for column in _METRIC_COLUMNS.get(metric or "", ()):
        if column not in header:
            raise DataError(f"{tsv}: metric {metric} ({where}) needs a `{column}` column")
    given = f"given {rules.describe()}" if not rules.source else f"from {rules.source} ({rules.describe()})"
    if kind == "mcq":
        if metric is None:
            from datasets_tsv.catalog.detect import detect_with_reason

            _, options, why = detect_with_reason(tsv)
            circular = bool(options.get("circular"))
            return KIND_CLASSES["mcq"], {"circular": circular}, f"{given}; {why.split('; ')[-1]}"
        return KIND_CLASSES["mcq"], {"circular": metric == "circular"}, given
    metric = metric or DEFAULT_METRIC[kind]
    default = "" if rules.metric else f"; {metric} is the {kind} default"
    if kind == "caption":
        return KIND_CLASSES[kind], {}, given + default
    options: dict[str, Any] = {"metric": metric}
    if metric == "ocrbench":
        options["short_answer"] = False  # VLMEvalKit asks OCRBench with the question alone
    return KIND_CLASSES[kind], options, given + default
