"""The rows of `catalog.tsv`: every benchmark vlmkit knows by name, scorable or not (no dataset classes imported).

Columns (tab-separated, one benchmark per line, `#` lines and blank lines ignored):

- name        VLMEvalKit's name for the benchmark (unique).
- kind        mcq, yorn, vqa, caption, shortqa, multi-turn, other (VLMEvalKit's task kind) or video.
- status      ok     - vlmkit scores it by VLMEvalKit's rules (`scorer` names vlmkit's scorer); a run with --judge
                       also asks the judge for the answers no rule can read where VLMEvalKit does (judge optional);
              judge  - vlmkit scores it with an LLM judge, as VLMEvalKit does: a run needs --judge (without one it is
                       refused in one line, except for inference only, `--mode infer`);
              prompt - VLMEvalKit's scorer is not in vlmkit yet, its prompt is (`class`): inference only;
              todo   - VLMEvalKit's scorer (or its data layout) is not in vlmkit yet: building it is refused.
- scorer      status ok: a catalog spelling of the scorer-id table (vlmkit/scoring/scorer_ids.tsv), or a scorer
              registered by its module vlmkit/scoring/benchmarks/<scorer>.py; otherwise VLMEvalKit's scorer in words.
- judge       VLMEvalKit's need of an LLM judge: none, optional (asked only for answers its rules cannot parse;
              vlmkit scores by the rules alone) or required.
- rows        the number of rows of the TSV when known (blank otherwise).
- class       "module:Class" building the dataset (required for ok, judge and prompt; empty for todo).
- kwargs      a JSON object of constructor options (circular, metric, image_folder, ...).
- url, md5    where the TSV is downloaded from and its MD5 (blank: none known / not checked).
- description one line for `vlmkit list datasets` (searched by `--search`).
- notes       where vlmkit deliberately differs from VLMEvalKit or VLMEvalKit's entry is defective; written into
              results.json notes of every run of the benchmark ("; " separates several). A note that says what
              VLMEvalKit does describes its code at the pinned commit
              (vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT).
- vlmevalkit_type   VLMEvalKit's dataset TYPE for the benchmark (what its `DATASET_TYPE` gives the model wrappers:
              MCQ, Y/N, VQA, MCQ_MMMU_Pro, MMERealWorld, Short, Video-MCQ, ...), read from the TYPE of the class that
              serves the rows; several joined by `+` where VLMEvalKit asks the wrappers per row under the
              sub-benchmarks' names (MLVU, TempCompass). The model families of vlm/prompts decide who writes the
              prompt from it (DatasetInfo.vlmevalkit_type), as VLMEvalKit's `use_custom_prompt` does.
- vlmevalkit_prompt `wrapper`: VLMEvalKit asks the model wrapper's `use_custom_prompt`; `dataset`: the class sets
              `force_use_dataset_prompt` and its own prompt is sent whatever the model (MMESCI).
Rows of the packaged catalog fill both; a user catalog (or an older layout) may leave them out: the dataset's kind
then stands for its type.

Text-only benchmarks (MMLU, GSM8K, ARC, ...; not VLMEvalKit's names) are rows of their own table, TEXT_TABLE beside
catalog.tsv, in the same columns with kind `text` (`text_rows`); the registry builds names of both (`known_rows`).

The older six-column layout (name, class, url, md5, kwargs, description) is still read (tests and user catalogs
written for it): its rows are `ok` when they have a class.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from vlmkit.scoring.ids import catalog_kinds, module_scorer

COLUMNS = ("name", "kind", "status", "scorer", "judge", "rows", "class", "kwargs", "url", "md5", "description", "notes")
VLMEVALKIT_COLUMNS = ("vlmevalkit_type", "vlmevalkit_prompt")  # optional: the packaged catalog fills them
REQUIRED_COLUMNS = ("name", "class", "url", "md5", "kwargs", "description")
KINDS = ("mcq", "yorn", "vqa", "caption", "shortqa", "multi-turn", "other", "video", "text")  # text: TEXT_TABLE's rows
STATUSES = ("ok", "judge", "prompt", "todo")
JUDGE_NEEDS = ("none", "optional", "required")
PROMPT_OWNERS = ("wrapper", "dataset")  # vlmevalkit_prompt
_MD5 = re.compile(r"[0-9a-f]{32}")
_TYPE = re.compile(r"[A-Za-z][\w/-]*(\+[A-Za-z][\w/-]*)*")  # a TYPE, or several joined by '+'


class CatalogError(ValueError):
    """A malformed catalog row; the text names the source, the line and the field."""


@dataclass(frozen=True)
class CatalogRow:
    name: str
    kind: str
    status: str
    scorer: str
    judge: str
    rows: int | None
    cls: str  # "module:Class", or "" when vlmkit cannot build it
    kwargs: dict[str, Any] = field(default_factory=dict)
    url: str = ""
    md5: str = ""
    description: str = ""
    notes: tuple[str, ...] = ()
    # facts about VLMEvalKit, not how vlmkit builds the row (a row proposed without them is the same row)
    vlmevalkit_type: str | None = field(default=None, compare=False)  # its dataset TYPE (None: the kind stands for it)
    vlmevalkit_prompt: str = field(default="wrapper", compare=False)  # "dataset": it forces the dataset's prompt

    @property
    def scorable(self) -> bool:
        """vlmkit scores it (with --judge for status judge)."""
        return self.status in ("ok", "judge")

    def build_kwargs(self) -> dict[str, Any]:
        """The constructor options with the download source (url/md5) added, as the dataset class takes them."""
        out = dict(self.kwargs)
        if self.url:
            out["url"] = self.url
        if self.md5:
            out["md5"] = self.md5
        return out

    def scorer_label(self) -> str:
        """The scorer as listings show it: vlmkit's scorer, `judge: ...` or `not yet: ...`."""
        if self.status == "ok" or (self.status == "judge" and "judge" in self.scorer.lower()):
            return self.scorer
        return f"{'judge' if self.status == 'judge' else 'not yet'}: {self.scorer}"

    def refusal(self, *, inference_only: bool = False, judge: bool = False) -> str | None:
        """Why this benchmark cannot be built (one line), or None when it can: `judge` rows with a judge (or for
        inference only), `prompt` rows for inference only."""
        if self.status == "ok":
            return None
        if self.status == "judge":
            if judge or inference_only:
                return None
            return (
                f"{self.name} is scored by an LLM judge ({self.scorer}): pass --judge MODEL --judge-api-base URL (any "
                "OpenAI-compatible server), or --mode infer to collect the answers only"
            )
        if self.status == "prompt":
            if inference_only:
                return None
            return (
                f"{self.name} is scored in VLMEvalKit by {self.scorer}, which vlmkit does not have yet; run it with "
                "--mode infer to collect the answers"
            )
        return f"{self.name} is not scorable by vlmkit yet (VLMEvalKit: {self.scorer}); it is listed so you know"


def parse_rows(text: str, source: str = "catalog.tsv") -> list[CatalogRow]:
    """The catalog's rows; a malformed row is a CatalogError naming its line and field. Checks the values of
    every column (not the classes: see tests/datasets_tsv/catalog/test_catalog.py, which imports and builds them)."""
    numbered = enumerate(text.splitlines(), start=1)
    lines = [(no, line) for no, line in numbered if line.strip() and not line.startswith("#")]
    if not lines:
        raise CatalogError(f"{source}: empty (no header)")
    reader = csv.reader(io.StringIO("\n".join(line for _, line in lines)), delimiter="\t", quoting=csv.QUOTE_NONE)
    records = list(reader)
    header = records[0]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS + VLMEVALKIT_COLUMNS]
    if missing or unknown or len(set(header)) != len(header):
        raise CatalogError(f"{source}: columns must be {', '.join(COLUMNS)} (and optionally "
                           f"{', '.join(VLMEVALKIT_COLUMNS)}); got {', '.join(header)}")
    rows: list[CatalogRow] = []
    seen: dict[str, int] = {}
    for (line_no, _), record in zip(lines[1:], records[1:], strict=True):
        if len(record) != len(header):
            raise CatalogError(f"{source}: line {line_no}: {len(record)} fields, the header has {len(header)}")
        row = _row(dict(zip(header, record, strict=True)), source, line_no)
        if row.name in seen:
            raise CatalogError(f"{source}: line {line_no}, field name: {row.name} repeats line {seen[row.name]}")
        seen[row.name] = line_no
        rows.append(row)
    return rows


def _row(cells: dict[str, str], source: str, line_no: int) -> CatalogRow:
    def bad(column: str, why: str) -> CatalogError:
        return CatalogError(f"{source}: line {line_no}, field {column}: {why}")

    name = cells["name"].strip()
    if not name or any(c in name for c in "/\\ \t") or name in (".", ".."):
        raise bad("name", f"{name!r} is not a dataset name (no spaces or path separators)")
    cls = cells["class"].strip()
    if cls and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", cls):
        raise bad("class", f"{cls!r} is not 'module:Class'")
    try:
        kwargs = json.loads(cells["kwargs"] or "{}")
    except ValueError as exc:
        raise bad("kwargs", f"not JSON ({exc})") from None
    if not isinstance(kwargs, dict):
        raise bad("kwargs", "must be a JSON object")
    reserved = sorted({"url", "md5", "root", "progress", "keep_local_tsv", "tsv_path"} & set(kwargs))
    if reserved:
        raise bad("kwargs", f"{', '.join(reserved)} belong in their own column or are set by vlmkit")
    url, md5 = cells["url"].strip(), cells["md5"].strip()
    if url and not re.fullmatch(r"https?://\S+", url):
        raise bad("url", f"{url!r} is not an http(s) URL")
    if md5 and not _MD5.fullmatch(md5):
        raise bad("md5", f"{md5!r} is not 32 lower-case hex digits")
    if "status" not in cells:  # the older six-column layout
        status = "ok" if cls else "todo"
        return CatalogRow(name, "", status, "", "none", None, cls, kwargs, url, md5, cells["description"].strip())
    kind, status, scorer, judge = (cells[c].strip() for c in ("kind", "status", "scorer", "judge"))
    if kind not in KINDS:
        raise bad("kind", f"{kind!r}; choose one of {', '.join(KINDS)}")
    if status not in STATUSES:
        raise bad("status", f"{status!r}; choose one of {', '.join(STATUSES)}")
    if judge not in JUDGE_NEEDS:
        raise bad("judge", f"{judge!r}; choose one of {', '.join(JUDGE_NEEDS)}")
    if status == "ok":
        scorers = catalog_kinds()  # the scorer-id table's catalog spellings, and the kind each scores
        if scorer not in scorers and not module_scorer(scorer):
            raise bad("scorer", f"{scorer!r} is not a vlmkit scorer ({', '.join(scorers)})")
        if scorer in scorers and scorers[scorer] != kind:
            raise bad("scorer", f"{scorer} scores {scorers[scorer]} benchmarks, not {kind}")
        if not cls:
            raise bad("class", "a benchmark vlmkit scores needs its class")
        if judge == "required":
            raise bad("status", "a benchmark that requires a judge cannot be ok")
    elif not scorer:
        raise bad("scorer", "say how VLMEvalKit scores it")
    if status == "judge" and judge != "required":
        raise bad("judge", "status judge means VLMEvalKit requires a judge")
    if status in ("judge", "prompt") and not cls:
        raise bad("class", f"a {status} benchmark is built for its prompt: give its class")
    if status == "todo" and cls:
        raise bad("class", "a todo benchmark is never built; leave its class empty")
    rows_text = cells["rows"].strip()
    if rows_text and not rows_text.isdigit():
        raise bad("rows", f"{rows_text!r} is not a whole number")
    notes = tuple(n.strip() for n in cells.get("notes", "").split("; ") if n.strip())
    vlmevalkit_type = cells.get("vlmevalkit_type", "").strip()
    if vlmevalkit_type and not _TYPE.fullmatch(vlmevalkit_type):
        raise bad("vlmevalkit_type", f"{vlmevalkit_type!r} is not a VLMEvalKit TYPE (e.g. MCQ, Y/N, VQA, Video-MCQ)")
    vlmevalkit_prompt = cells.get("vlmevalkit_prompt", "").strip() or "wrapper"
    if vlmevalkit_prompt not in PROMPT_OWNERS:
        raise bad("vlmevalkit_prompt", f"{vlmevalkit_prompt!r}; choose one of {', '.join(PROMPT_OWNERS)}")
    return CatalogRow(
        name, kind, status, scorer, judge, int(rows_text) if rows_text else None, cls, kwargs, url, md5,
        cells["description"].strip(), notes, vlmevalkit_type or None, vlmevalkit_prompt,
    )  # fmt: skip


@lru_cache(maxsize=1)
def catalog_rows() -> dict[str, CatalogRow]:
    """The packaged catalog's rows by name (read on first call, then cached; no dataset class is imported)."""
    text = resources.files("datasets_tsv.catalog").joinpath("catalog.tsv").read_text(encoding="utf-8")
    return {row.name: row for row in parse_rows(text)}


TEXT_TABLE = "text_benchmarks.tsv"  # the text-only benchmarks (datasets_tsv/benchmarks/text), beside catalog.tsv


@lru_cache(maxsize=1)
def text_rows() -> dict[str, CatalogRow]:
    """The text-only benchmarks' rows by name (TEXT_TABLE; read on first call, then cached). Kept apart from
    `catalog_rows`, which holds VLMEvalKit's names only."""
    text = resources.files("datasets_tsv.catalog").joinpath(TEXT_TABLE).read_text(encoding="utf-8")
    return {row.name: row for row in parse_rows(text, TEXT_TABLE)}


def known_rows() -> dict[str, CatalogRow]:
    """Every name the registry builds: the catalog's rows, then the text-only table's (a name in both is a
    CatalogError: one table must give it up)."""
    catalog, texts = catalog_rows(), text_rows()
    clash = sorted(set(catalog) & set(texts))
    if clash:
        raise CatalogError(f"{TEXT_TABLE}: {', '.join(clash)} also in catalog.tsv; a name belongs to one table")
    return {**catalog, **texts}
