"""Video benchmarks built from a Hugging Face dataset snapshot rather than one TSV (Video-MME, MVBench, LongVideoBench).

VLMEvalKit downloads such a benchmark with `snapshot_download`, unpacks its zips inside the snapshot and writes a
TSV there. vlmkit never downloads these (tens of GB): it reads a snapshot the user already has, from
- `--data-root DIR` (`data_root=`): the snapshot folder itself (a `snapshot_download(..., local_dir=DIR)` copy, or
  any folder in the repository's layout), or
- the Hugging Face cache (`vlmkit.core.config.hf_hub_cache()`): `datasets--<org>--<name>/snapshots/<commit>` named by
  `refs/<revision>`, found without network.
A missing snapshot, or a file a row needs, is a one-line DatasetError naming the folder or file and what was
expected there; every row's video is checked when the dataset is built, so a run never starts on a snapshot
whose zips were not unpacked.

`SnapshotVideoDataset` gives the runner what it uses of a TSVDataset: `name`, `kind` ("video"), `data` (one row per
question, `index` 0..n-1 in VLMEvalKit's order), `build_prompt(line)` (parts with a `video` part: a local file;
the model samples its frames, by its `--nframe`/`--fps`), `evaluate(predictions, fuzzy=, judge=)`, `info()`,
`notes`, `scorer_params()`, `image_paths(line)` (none: frames are the model's), `file_md5` (the MD5 of the table as
TSV text, so a changed snapshot changes the journal's fingerprint). A subclass reads its table (`_read_table`),
says where a row's video is (`video_file`), and builds the prompt and the score.

Frames as VLMEvalKit samples them: the video part of a row names a file in the dataset's folder
(`$LMUData/videos/<name>/`, `prepared_video`): a link to the snapshot's video (or the clip cut from it) with a frame
plan beside it (`vlmkit.core.video.FramePlan`: VLMEvalKit's rule for this benchmark, the bound, the frame rate of
frame folders). Every model that samples the file follows the plan, at its own --nframe/--fps, and reads the frames
from the cache kept beside it (decoded once per video content and sampling, reused by every model and rerun).
`sampler="centre"` (a dataset option) plans vlmkit's earlier centre-of-stretch rule instead; `info()["frames"]` says
which rule and decoder were used.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.core.config import hf_hub_cache, lmu_data_root
from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.core.video import FramePlan, write_plan
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.table import TableRows
from datasets_tsv.io.tsv_read import DatasetError

__all__ = ["SnapshotVideoDataset", "find_snapshot"]


def find_snapshot(repo_id: str, revision: str = "main", cache: Path | None = None) -> Path | None:
    """The cached snapshot folder of a dataset repo (huggingface_hub's cache layout, read without network), or
    None when the cache does not hold it."""
    base = (cache if cache is not None else hf_hub_cache()) / f"datasets--{repo_id.replace('/', '--')}"
    ref = base / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    folder = base / "snapshots" / commit
    return folder if folder.is_dir() else None


def snapshot_json(path: Path, *, questions: bool = False, missing: str | None = None) -> Any:
    """A snapshot's JSON file, read; one line naming the file when it is missing (`missing`: what the snapshot should
    hold there), not JSON, or (`questions`) not a list of questions."""
    if not path.is_file():
        raise DatasetError(f"{path}: not found" + (f"; {missing}" if missing else ""))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from None
    if questions and not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of questions")
    return data


class SnapshotVideoDataset(TableRows):
    """A video MCQ benchmark read from a local snapshot folder (module docstring).

    root: `$LMUData` (clips made for bounded or frame-folder rows go to root/videos/<name>/ unless `cache_dir`);
    data_root: the snapshot folder (else the Hugging Face cache, `hub_cache` or vlmkit.core.config.hf_hub_cache()).
    url, md5, keep_local_tsv, progress: taken because the catalog passes them to every class; nothing is downloaded.
    """

    kind: ClassVar[str] = "video"
    takes_data_root: ClassVar[bool] = True
    repo_id: ClassVar[str] = ""
    revision: ClassVar[str] = "main"
    layout: ClassVar[str] = ""  # what the snapshot folder holds, for error messages
    notes: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        *,
        data_root: Path | str | None = None,
        root: Path | None = None,
        progress: bool = True,
        keep_local_tsv: bool = False,
        url: str | None = None,
        md5: str | None = None,
        cache_dir: Path | str | None = None,
        hub_cache: Path | str | None = None,
        sampler: str = "vlmevalkit",
    ) -> None:
        if sampler not in ("vlmevalkit", "centre"):
            raise DatasetError(f"{name}: sampler must be vlmevalkit or centre; got {sampler!r}")
        self.sampler = sampler
        self.name = name
        self.root = Path(root).expanduser() if root is not None else lmu_data_root()
        self.progress = progress
        self.snapshot = self._locate(data_root, Path(hub_cache).expanduser() if hub_cache else None)
        # converted clips (bounded segments, frame folders, GIFs) go beside the decoded images of TSV benchmarks
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else self.root / "videos" / name
        self.data = self._read_table()
        if self.data.empty:
            raise DatasetError(f"{self.snapshot}: {name} has no rows")
        self._keys = [index_key(v) for v in self.data["index"]]
        self._position = {key: pos for pos, key in enumerate(self._keys)}
        self._records = None
        self._check_videos()
        self.file_md5 = hashlib.md5(self._table_text().encode()).hexdigest()

    # -- the snapshot -------------------------------------------------------------------------------------------
    def _locate(self, data_root: Path | str | None, hub_cache: Path | None) -> Path:
        if data_root is not None:
            folder = Path(data_root).expanduser()
            if not folder.is_dir():
                raise DatasetError(f"--data-root {folder}: no such folder (expected the {self.repo_id} snapshot: "
                                   f"{self.layout})")
            return folder
        found = find_snapshot(self.repo_id, self.revision, hub_cache)
        if found is None:
            cache = hub_cache if hub_cache is not None else hf_hub_cache()
            revision = "" if self.revision == "main" else f" --revision {self.revision}"
            raise DatasetError(
                f"{self.name}: no local snapshot of {self.repo_id} (looked in {cache}); pass --data-root DIR (a folder "
                f"holding {self.layout}), or download it with `hf download {self.repo_id} --repo-type dataset"
                f"{revision}`"
            )
        return found

    def _read_table(self) -> pd.DataFrame:
        raise NotImplementedError

    def video_file(self, line: dict[str, Any]) -> Path:
        """Where a row's video (file, or frame folder) is in the snapshot."""
        raise NotImplementedError

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        """How the frames of a row's video are sampled (VLMEvalKit's Video-MME rule unless a benchmark says more)."""
        return FramePlan(source=str(self.video_file(line).resolve()))

    def prepared_video(self, line: dict[str, Any], shown: Path | None = None) -> Path:
        """The file the row's video part names, with its frame plan beside it (module docstring): a link, in the
        dataset's folder, named by the plan, to `shown` (the file a model that takes the whole video gets: a clip
        cut from the source), by default the source itself."""
        plan = self.frame_plan(line)
        target = shown if shown is not None else Path(plan.source) if plan.source else self.video_file(line)
        if self.sampler == "centre":  # vlmkit's earlier rule, over the file a video model gets (a bounded clip)
            plan = FramePlan(rule="centre", source=str(target.resolve()), fps_rule="centre")
        ident = json.dumps([plan.to_json(), str(target.resolve())], sort_keys=True)
        digest = hashlib.sha1(ident.encode()).hexdigest()[:10]
        link = self.cache_dir / "links" / f"{target.stem[:60]}-{digest}{target.suffix}"
        _link(target, link)
        write_plan(link, plan)
        return link

    def frames_info(self) -> dict[str, Any]:
        """What info() says of the frames: the rule, the decoder, where the cache is."""
        sampler = ("centre: frame floor((k + 0.5) * n / N) of the file a video model gets" if self.sampler == "centre"
                   else self.vlmevalkit_rule)
        return {"sampler": sampler, "decoder": "opencv", "cache": str(self.cache_dir / "links" / ".frames")}

    vlmevalkit_rule: ClassVar[str] = "vlmevalkit: frame int(i * n / (N + 1)), i = 1..N; fps: int(i * v / F)"

    def _check_videos(self) -> None:
        missing = [(pos, path) for pos, line in enumerate(self.data.to_dict("records"))
                   if not (path := self.video_file(line)).exists()]
        if missing:
            pos, path = missing[0]
            more = f" ({len(missing)} of {len(self.data)} rows' videos are missing)" if len(missing) > 1 else ""
            index = self.data["index"].iloc[pos]
            raise DatasetError(f"{path}: missing, needed by {self.name} row {pos} (index {index}){more}; "
                               f"{self.missing_hint()}")

    def missing_hint(self) -> str:
        """What to do when videos are missing (the layout the snapshot should have)."""
        return f"expected {self.layout}"

    def _table_text(self) -> str:
        buffer = io.StringIO()
        self.data.to_csv(buffer, sep="\t", index=False)
        return buffer.getvalue()

    # -- rows -----------------------------------------------------------------------------------------------------
    @property
    def source_file(self) -> Path:
        return self.snapshot

    @property
    def source(self) -> Path:
        return self.snapshot

    def _row(self, line: dict[str, Any] | int) -> tuple[int, dict[str, Any]]:
        if isinstance(line, (int, np.integer)) and not isinstance(line, bool):
            pos = int(line) % len(self) if -len(self) <= int(line) < len(self) else None
            if pos is None:
                raise IndexError(f"{self.name}: row {line} out of range ({len(self)} rows)")
            return pos, self.line(pos)
        key = index_key(line.get("index"))
        if key not in self._position:
            raise DatasetError(f"{self.name}: no row with index {line.get('index')!r}")
        return self._position[key], self.line(self._position[key])

    def image_paths(self, line: dict[str, Any] | int) -> list[str]:
        """No images: a row's frames are sampled by the model from its video."""
        return []

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        raise NotImplementedError

    # -- scoring --------------------------------------------------------------------------------------------------
    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        """Score predictions (this table plus `prediction`, None where inference failed); `fuzzy` has no effect
        (the benchmark's own rules read the replies); `judge` reads the replies no rule reads."""
        for column in ("index", "prediction", *self.answer_columns):
            if column not in predictions.columns:
                raise DatasetError(f"the predictions: missing column `{column}`, needed to evaluate {self.name}")
        try:
            return self._score(predictions.copy(), judge=judge)
        except ValueError as exc:
            raise DatasetError(str(exc)) from None

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        raise NotImplementedError

    def scorer_params(self) -> dict[str, Any]:
        return {}

    def info(self) -> dict[str, Any]:
        cls = type(self)
        return {
            "name": self.name,
            "kind": self.kind,
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "source": f"Hugging Face dataset {self.repo_id}" + ("" if self.revision == "main" else f"@{self.revision}"),
            "snapshot": str(self.snapshot),
            "md5": self.file_md5,
            "md5_source": "table",  # the MD5 of the rows as TSV text (no TSV file is downloaded)
            "n_total": len(self),
            "clip_cache": str(self.cache_dir),
            "frames": self.frames_info(),
            "scorer": self.scorer_params(),
            "scorer_reason": self.scorer_reason,
            "notes": list(self.notes),
        }


def _link(source: Path, target: Path) -> None:
    """target -> source: a symbolic link, else a hard link, else a copy (left alone when it already points there)."""
    if target.is_symlink() and os.path.realpath(target) == os.path.realpath(source):
        return
    if target.exists() and not target.is_symlink() and target.stat().st_size == source.stat().st_size and \
            target.stat().st_mtime_ns >= source.stat().st_mtime_ns:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.part-{os.getpid()}")
    if partial.exists() or partial.is_symlink():
        partial.unlink()
    try:
        partial.symlink_to(source.resolve(), target_is_directory=source.is_dir())
    except OSError:
        try:
            os.link(source, partial)
        except OSError:
            shutil.copyfile(source, partial)
    os.replace(partial, target)


def text_part(value: str) -> Part:
    return {"type": "text", "value": value}


def video_part(path: Path | str) -> Part:
    return {"type": "video", "value": str(path)}
