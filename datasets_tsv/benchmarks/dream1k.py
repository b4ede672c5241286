"""DREAM-1K (VLMEvalKit `DREAM`, vlmeval/dataset/dream.py at e8e78f05) from local copies, scored with an LLM judge.

VLMEvalKit takes `DREAM-1K.tsv` (index, video (`video/<id>`), question, answer (the reference description), events
(JSON, may be empty)) from mjuicem/DREAM-1k-VLMEvalKit and the videos from omni-research/DREAM-1K's `video/video.zip`,
which it unpacks flat into `$LMUData/datasets/DREAM/`. vlmkit reads the TSV from `--data-root DIR` (or the Hugging
Face cache of mjuicem/DREAM-1k-VLMEvalKit) and each video `<id>.mp4` from the first of: `DIR/video/`, `DIR/`,
`$LMUData/datasets/DREAM/` (VLMEvalKit's place) that holds it. Rows: the TSV's, in its order.

Prompt (VLMEvalKit's `build_prompt`): the video (frames), then the question. Frames: VLMEvalKit's rule (frame
int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at the model's --nframe/--fps
(VLMEvalKit: 8 unless told, as vlmkit's default). Scoring: `vlmkit.scoring.benchmarks.dream1k` (needs --judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.dream1k import score_dream1k
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.mmbench_video import JudgedSnapshotVideo
from datasets_tsv.benchmarks.moviechat import NOTE_FRAMES
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv
from datasets_tsv.kinds.video_snapshot import text_part, video_part

NOTE_JUDGE = "judge: the one given with --judge (VLMEvalKit's default gpt-4o); its texts are VLMEvalKit's"


class DREAM1K(JudgedSnapshotVideo):
    """DREAM-1K from local copies (module docstring)."""

    repo_id: ClassVar[str] = "mjuicem/DREAM-1k-VLMEvalKit"
    layout: ClassVar[str] = "DREAM-1K.tsv, and the videos <id>.mp4 (omni-research/DREAM-1K video/video.zip) in video/"
    judge_scorer: ClassVar[str] = "dream1k"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / f"{self.name}.tsv"
        raw = read_snapshot_tsv(path, ("video", "question", "answer"),
                                f"expected {self.layout} in {self.snapshot}")
        if "events" not in raw.columns:
            raw = raw.assign(events="")
        return raw[["index", "video", "question", "answer", "events"]]

    def video_file(self, line: dict[str, Any]) -> Path:
        name = f"{str(line['video']).replace('video/', '')}.mp4"
        places = [self.snapshot / "video" / name, self.snapshot / name, self.root / "datasets" / "DREAM" / name]
        return next((p for p in places if p.is_file()), places[0])

    def missing_hint(self) -> str:
        return (f"unpack omni-research/DREAM-1K's video/video.zip into {self.snapshot / 'video'} (or VLMEvalKit's "
                f"{self.root / 'datasets' / 'DREAM'})")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(str(row["question"]))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_dream1k(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))
