"""Video-TT (VLMEvalKit `VideoTT`, vlmeval/dataset/videott.py at e8e78f05) from a local snapshot of lmms-lab/video-tt.

The snapshot as VLMEvalKit leaves it: `data/test-00000-of-00001.parquet` (the questions: video_id, duration,
question, question_prompt (the option lines), capability, answer (a letter)) and the videos of its zips unpacked
flat under `video/<video_id>.mp4`. The table is read from the parquet when pandas has a parquet engine, else from
the `Video-TT.tsv` VLMEvalKit writes into the snapshot on its first run (same rows, same order); `info()
["table_source"]` says which. Rows: `index` 0..n-1 in parquet order.

Frames: VLMEvalKit's Video-MME rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from
frame 0) at the model's --nframe/--fps (VLMEvalKit's names: Video_TT_16frame, _32frame, _64frame), from the cache
beside the video's frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`): the video, Video-MME's frames text ("\\nThese are the frames of a video. ...
correct option.\\n"), then "Question: <question>\\n<question_prompt>\\nAnswer: ". VLMEvalKit's empty system text
part is left out. Scoring: `vlmkit.scoring.benchmarks.video_tt`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_tt import score_video_tt
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.videomme import FRAMES_PROMPT
from datasets_tsv.kinds.parquet_snapshot_video import ParquetSnapshotVideo
from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns
from datasets_tsv.kinds.video_snapshot import text_part, video_part

PARQUET = "data/test-00000-of-00001.parquet"
VLMEVALKIT_TSV = "Video-TT.tsv"
COLUMNS = ("question", "question_prompt", "capability", "answer")
NOTE_FRAMES = (
    "frames: VLMEvalKit's Video-TT rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps (VLMEvalKit runs it at 16, 32 or 64 frames), for every "
    "model; read with opencv where VLMEvalKit uses decord; VLMEvalKit's empty system text part is left out"
)


class VideoTT(ParquetSnapshotVideo):
    """Video-TT from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab/video-tt"
    layout: ClassVar[str] = f"{PARQUET} (or VLMEvalKit's {VLMEVALKIT_TSV}) and video/<video_id>.mp4"
    parquet: ClassVar[str] = PARQUET
    vlmevalkit_tsv: ClassVar[str] = VLMEVALKIT_TSV
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        require_columns(raw, ("index", "video", *COLUMNS), path, f"Video-TT has video_id, {', '.join(COLUMNS)}")
        rows = []
        for _, index, row in indexed_rows(raw, path):
            rows.append({"index": index, "video": str(row["video"]), "question": str(row["question"]),
                         "question_prompt": str(row["question_prompt"]), "capability": str(row["capability"]),
                         "answer": str(row["answer"]).strip()})
        return pd.DataFrame(rows)

    def missing_hint(self) -> str:
        return (f"unpack the snapshot's video zips into {self.snapshot / 'video'} (VLMEvalKit does this on its first "
                "run)")

    def question_text(self, line: dict[str, Any]) -> str:
        """`Question: <question>\\n<question_prompt>\\nAnswer: ` (VLMEvalKit's text)."""
        return "Question: {}\nAnswer: ".format(f"{line['question']}\n{line['question_prompt']}")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(FRAMES_PROMPT), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_video_tt(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "video_tt", "letter_rule": "Video-MME regex (first A-D after answer prefixes)"}
