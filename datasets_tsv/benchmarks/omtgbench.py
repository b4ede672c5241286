"""OMTGBench (VLMEvalKit `OMTGBench`, vlmeval/dataset/omtgbench.py at e8e78f05) from a local snapshot of
insomnia7/omtg_bench.

The snapshot as VLMEvalKit reads it: `OMTGBench.tsv` (video, question, answer (the segments in words); `index` when
present, else 0..n-1) and `videos.zip` unpacked beside it, the videos at `videos/<video>.mp4`.

Frames: VLMEvalKit's rule at the model's --nframe/--fps (frame int(i * n / (N + 1)), i = 1..N; at --fps F,
int(n / v * F) frames int(i * v / F) from frame 0). VLMEvalKit samples OMTGBench at 2 fps unless told otherwise
(OMTGBench_1fps, _2fps): run the model with --fps 2 for its setting. No timestamps are sent with the frames, as in
VLMEvalKit.
Prompt (VLMEvalKit's `build_prompt`): the video, then the row's question as it is.
Scoring: `vlmkit.scoring.benchmarks.omtgbench`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.omtgbench import score_omtgbench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns, snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TSV = "OMTGBench.tsv"
COLUMNS = ("video", "question", "answer")
NOTE_FRAMES = (
    "frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) frames from frame 0) at "
    "the model's --nframe/--fps (VLMEvalKit samples OMTGBench at 2 fps unless told: run it with --fps 2), read with "
    "opencv where VLMEvalKit uses decord"
)


class OMTGBench(SnapshotVideoDataset):
    """OMTGBench from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "insomnia7/omtg_bench"
    layout: ClassVar[str] = f"{TSV} and videos.zip unpacked under videos/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TSV
        raw = snapshot_tsv(path, f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        require_columns(raw, COLUMNS, path, f"OMTGBench has {', '.join(COLUMNS)}")
        rows = []
        for _, index, row in indexed_rows(raw, path):
            rows.append({"index": index, **{c: str(row[c]) for c in COLUMNS}})
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / f"{line['video']}.mp4"

    def missing_hint(self) -> str:
        return f"unzip the snapshot's videos.zip in {self.snapshot} (VLMEvalKit does this on its first run)"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(str(row["question"]))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_omtgbench(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "omtgbench", "rule": "OMTGBench segments, one-to-many matching",
                "thresholds": [0.3, 0.5, 0.7]}
