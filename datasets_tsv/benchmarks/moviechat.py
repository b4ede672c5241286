"""MovieChat1k (VLMEvalKit `MovieChat1k`, vlmeval/dataset/moviechat1k.py at e8e78f05) from a local snapshot of
Enxin/VLMEval-MovieChat1k, scored by an LLM judge.

The snapshot as VLMEvalKit leaves it: `MovieChat1k.tsv` (index, video, question, answer, mode (global or
breakpoint), ...) and the videos of its tar parts unpacked under `videos/` (VLMEvalKit's frame path reads
`videos/<video>.mp4`; a `video` value that already ends in its extension is found as `videos/<video>`). Rows: the
TSV's, in its order. VLMEvalKit's `subset` and `limit` options are dataset options here too (subset: all, global,
breakpoint; limit: a share of the rows (0 < limit <= 1) or a row count, the first rows kept).

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps. Prompt (VLMEvalKit's `build_prompt_nopack`): the video (frames), then the question.
Scoring: `vlmkit.scoring.benchmarks.moviechat` (needs --judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.moviechat import score_moviechat
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.mmbench_video import JudgedSnapshotVideo
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv
from datasets_tsv.kinds.video_snapshot import text_part, video_part

SUBSETS = ("all", "global", "breakpoint")
NOTE_FRAMES = (
    "frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) frames from frame 0) at "
    "the model's --nframe/--fps, for every model (VLMEvalKit gives a video model the file); read with opencv where "
    "VLMEvalKit uses decord"
)
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit accepts only chatgpt-0125, gpt-3.5-turbo-0125); its "
              "prompt is VLMEvalKit's")


def first_rows(table: pd.DataFrame, column: str, subset: str, limit: float) -> pd.DataFrame:
    """VLMEvalKit's `subset` and `limit` options: the rows whose `column` is `subset` (all: every row), then the
    first int(limit x rows) of them (0 < limit <= 1) or the first `limit` rows."""
    if subset != "all":
        table = table[table[column] == subset]
    keep = int(limit * len(table)) if limit <= 1.0 else int(limit)
    return table.iloc[:keep].reset_index(drop=True)


def check_limit(name: str, limit: Any) -> None:
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit <= 0:
        raise DatasetError(f"{name}: limit must be a share (0 < limit <= 1) or a row count; got {limit!r}")


class MovieChat1k(JudgedSnapshotVideo):
    """MovieChat1k from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "Enxin/VLMEval-MovieChat1k"
    layout: ClassVar[str] = "MovieChat1k.tsv and videos/<video>.mp4 (unpacked from its tar parts)"
    judge_scorer: ClassVar[str] = "moviechat"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question", "mode")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def __init__(self, name: str, *, subset: str = "all", limit: float = 1.0, **options: Any) -> None:
        if subset not in SUBSETS:
            raise DatasetError(f"{name}: subset must be one of {', '.join(SUBSETS)}; got {subset!r}")
        check_limit(name, limit)
        self.subset, self.limit = subset, limit
        super().__init__(name, **options)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / f"{self.name}.tsv"
        raw = read_snapshot_tsv(path, ("video", "question", "answer", "mode"),
                                f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        return first_rows(raw[["index", "video", "question", "answer", "mode"]], "mode", self.subset, self.limit)

    def video_file(self, line: dict[str, Any]) -> Path:
        folder = self.snapshot / "videos"
        plain = folder / f"{line['video']}.mp4"
        given = folder / str(line["video"])
        return given if not plain.exists() and given.suffix and given.is_file() else plain

    def missing_hint(self) -> str:
        return (f"join and unpack the snapshot's videos tar parts into {self.snapshot} (VLMEvalKit does this on its "
                "first run)")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(str(row["question"]))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_moviechat(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "subset": self.subset, "limit": self.limit}
