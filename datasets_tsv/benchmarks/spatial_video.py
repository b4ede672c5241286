"""What VLMEvalKit's EASI spatial video benchmarks share (VSI-Bench, VSI-SUPER, STI-Bench, DSRBench, SiteBenchVideo at
e8e78f05): the rows come from a TSV that VLMEvalKit downloads from lmms-lab-si/EASI-Leaderboard-Data (its catalog's
URL and MD5), the videos from a Hugging Face dataset snapshot, each row's `video` a path inside that snapshot.

vlmkit reads the rows from `$LMUData/<name>.tsv` (where VLMEvalKit and vlmkit keep TSVs), else from the snapshot
folder (`<name>.tsv`, or the URL's file name: DSRBench's snapshot is the EASI repository itself), else downloads the
TSV from the catalog's URL into `$LMUData/<name>.tsv`, MD5-verified as every catalog TSV is. The videos are never
downloaded: they are read from the snapshot (`--data-root DIR`, or the Hugging Face cache), as for every video
benchmark (`datasets_tsv.kinds.video_snapshot`). A `$LMUData` TSV whose MD5 differs from the catalog's is an error
naming both, unless `keep_local_tsv` (--keep-local-tsv) accepts it; a TSV in the snapshot is the user's copy: its MD5
is recorded in info() (with `md5_mismatch_accepted` when it differs), not required.

Frames: these classes sample `np.linspace(0, n - 1, N, dtype=int)` at --nframe N (VSI-Bench also appends the last
frame when it is not taken, its `uniform_tail`); at --fps F, VLMEvalKit's fps rule (`vlmkit.core.video`, rules
"linspace" and "linspace_tail"). A subclass says its rule (`frame_rule`), its columns, its prompt and its scoring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.files import download_verified, md5_of
from vlmkit.core.video import FramePlan
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_mcq import parse_option_list
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import indexed_rows, read_text_table, require_columns
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset

FRAME_RULES = {
    "linspace": "linspace: frames np.linspace(0, n - 1, N, dtype=int); fps F: int(n / v * F) frames int(i * v / F)",
    "linspace_tail": ("linspace_tail: frames np.linspace(0, n - 1, N, dtype=int), then frame n - 1 when not taken; "
                      "fps F: int(n / v * F) frames int(i * v / F), then frame n - 1 when not taken"),
}


def judge_not_asked(result: EvalResult, judge: Judge | None, why: str) -> EvalResult:
    """`result` of a benchmark VLMEvalKit scores by rule only, with a note saying why the judge given (if any) was
    not asked."""
    if judge is not None:
        result.notes.append("a judge was given and not asked: " + why)
    return result


def inside(root: Path, relative: str, where: str) -> str:
    """`relative` when it names a path inside `root`, else one clear error line."""
    if not relative or Path(relative).is_absolute() or not (root / relative).resolve().is_relative_to(root.resolve()):
        raise DatasetError(f"{where}: {relative!r} is not a path inside {root}")
    return relative


class SpatialVideoDataset(SnapshotVideoDataset):
    """An EASI spatial video benchmark: rows from its TSV, videos from a snapshot (module docstring)."""

    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "answer")
    frame_rule: ClassVar[str] = "linspace"
    video_column: ClassVar[str | None] = "video"  # None: the rows name frame files, not a video (MMSI-Video-Bench)
    video_root: ClassVar[str] = ""  # the folder of the snapshot the `video` paths are relative to

    def __init__(self, name: str, *, url: str | None = None, md5: str | None = None, keep_local_tsv: bool = False,
                 progress: bool = True, root: Path | None = None, **kwargs: Any) -> None:
        self.tsv_url = url or None
        self.tsv_md5 = md5 or None
        self.keep_local_tsv = bool(keep_local_tsv)
        self.md5_mismatch_accepted = False
        self.tsv_file: Path | None = None
        self.tsv_file_md5: str | None = None
        super().__init__(name, url=url, md5=md5, keep_local_tsv=keep_local_tsv, progress=progress, root=root,
                         **kwargs)

    # -- the table ----------------------------------------------------------------------------------------------
    def _tsv_path(self) -> tuple[Path, bool]:
        """(the TSV, whether it is the user's snapshot copy)."""
        local = self.root / f"{self.name}.tsv"
        if local.is_file():
            return local, False
        names = [f"{self.name}.tsv"] + ([self.tsv_url.rsplit("/", 1)[-1].split("?", 1)[0]] if self.tsv_url else [])
        for name in dict.fromkeys(names):
            if (self.snapshot / name).is_file():
                return self.snapshot / name, True
        if self.tsv_url:
            download_verified(self.tsv_url, local, self.tsv_md5, progress=self.progress)
            return local, False
        raise DatasetError(f"{local}: not found, and {self.name} has no download URL; place its TSV there")

    def _read_table(self) -> pd.DataFrame:
        path, in_snapshot = self._tsv_path()
        self.tsv_file = path
        actual = self.tsv_file_md5 = md5_of(path)
        if in_snapshot:  # the snapshot's own copy: its MD5 is recorded (info), not required, as for Video-TT's TSV
            self.md5_mismatch_accepted = self.tsv_md5 is not None and actual != self.tsv_md5
        elif self.tsv_md5 is not None and actual != self.tsv_md5:
            if not self.keep_local_tsv:
                raise DatasetError(f"{path}: MD5 {actual} differs from the catalog's {self.tsv_md5} for {self.name}; "
                                   "the file is left as it is. Move it away to download the catalog's copy, or pass "
                                   "--keep-local-tsv (keep_local_tsv=True) to evaluate this file as it is")
            self.md5_mismatch_accepted = True
        raw = read_text_table(path)
        require_columns(raw, self.columns, path, f"{self.name} has {', '.join(self.columns)}")
        rows = []
        for pos, index, row in indexed_rows(raw, path):
            where = f"{path}: row {pos}"
            kept = self.keep_row(row)
            if not kept:
                continue
            rows.append({**{k: str(v) for k, v in row.items()}, "index": index})
            if self.video_column is not None:
                video = str(row[self.video_column]).strip()
                if self.video_column != "video":  # VLMEvalKit joins it to the snapshot with leading slashes removed
                    video = video.lstrip("/\\")
                rows[-1]["video"] = inside(self.videos, video, f"{where}, field {self.video_column}")
            self.check_row(rows[-1], where)
        columns = ["index", *raw.columns, *(["video"] if self.video_column is not None else [])]
        return pd.DataFrame(rows, columns=list(dict.fromkeys(columns)))

    def keep_row(self, row: dict[str, Any]) -> bool:
        """Whether a TSV row is part of the benchmark (VSI-SUPER-Count leaves out its streaming rows)."""
        return True

    def check_row(self, row: dict[str, Any], where: str) -> None:
        """One clear line for a row the prompt or the scorer cannot use (`where`: the file and row)."""

    def options(self, line: dict[str, Any], column: str, where: str | None = None) -> list[str]:
        """A row's option list (a Python or JSON list literal, as VLMEvalKit's literal_eval / json.loads read it);
        one line naming the row (`where`, else the dataset and index) and the field when it is not one."""
        got = parse_option_list(line.get(column))
        if got is None:
            raise DatasetError(f"{where or self.name + ': index ' + str(line.get('index'))}, field {column}: "
                               "not a list of options")
        return got

    # -- videos and frames ----------------------------------------------------------------------------------------
    @property
    def videos(self) -> Path:
        """The folder the rows' video paths are relative to."""
        return self.snapshot / self.video_root if self.video_root else self.snapshot

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.videos / str(line["video"])

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        return FramePlan(rule=self.frame_rule, fps_rule=self.frame_rule, source=str(self.video_file(line).resolve()))

    @property
    def vlmevalkit_rule(self) -> str:  # type: ignore[override]
        return FRAME_RULES[self.frame_rule]

    def missing_hint(self) -> str:
        return f"unpack the snapshot's zips into {self.snapshot} (VLMEvalKit does this on its first run); {self.layout}"

    def info(self) -> dict[str, Any]:
        out = super().info()
        out["tsv"] = str(self.tsv_file)
        out["tsv_md5"] = self.tsv_file_md5
        if self.md5_mismatch_accepted:
            out["md5_mismatch_accepted"] = True
            out["catalog_md5"] = self.tsv_md5
        return out
