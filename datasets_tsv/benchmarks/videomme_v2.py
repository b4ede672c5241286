"""Video-MME-v2 (VLMEvalKit `VideoMMEv2`, vlmeval/dataset/videommev2.py at e8e78f05) from a local snapshot of
MME-Benchmarks/Video-MME-v2, without subtitles (VLMEvalKit's `Video-MME-v2_64frame` and `_1fps`).

The snapshot as VLMEvalKit leaves it: `test.parquet` (video_id, url, group_type, group_structure, question_id,
question, options, answer, level, second_head, third_head) and the videos of `videos/*.zip` unpacked flat under
`video/<id>.mp4`, the id zero-padded to 3 digits (`1` -> `001.mp4`). The table is read from the parquet when pandas
has a parquet engine, else from the `Video-MME-v2.tsv` VLMEvalKit writes into the snapshot on its first run (same
rows, same order); `info()["table_source"]` says which. Rows: `index` 0..n-1 in parquet order; questions come in
groups of four consecutive rows, which the score needs whole.

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps (VLMEvalKit runs it at 64 frames or 1 fps), from the cache beside the video's frame plan.
Prompt (VLMEvalKit's `build_prompt` without subtitles or reasoning): the video, "These are the frames of a video.",
then "Question: <question>\\n<options>\\n" followed by its instruction ("Select the best answer ... (A, B, C, D, E, F,
G, or H) of the correct option."). VLMEvalKit asks a video model for about 448x448 pixels a frame (its
resized_height/width hints); vlmkit sends the file as it is.
Scoring: `vlmkit.scoring.benchmarks.videomme_v2`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.videomme_v2 import score_videomme_v2
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.parquet_snapshot_video import ParquetSnapshotVideo
from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns
from datasets_tsv.kinds.video_snapshot import text_part, video_part

PARQUET = "test.parquet"
VLMEVALKIT_TSV = "Video-MME-v2.tsv"
FRAMES_TEXT = "These are the frames of a video."
INSTRUCTION = ("Select the best answer to the following multiple-choice question based on the video. "
               "Respond with only the letter (A, B, C, D, E, F, G, or H) of the correct option.")
COLUMNS = ("question", "options", "answer", "group_type", "group_structure", "level", "second_head", "third_head")
NOTE_FRAMES = (
    "frames: VLMEvalKit's Video-MME-v2 rule (frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) frames from "
    "frame 0) at the model's --nframe/--fps (VLMEvalKit runs it at 64 frames or 1 fps), for every model; read with "
    "opencv where VLMEvalKit uses decord; a video model gets the file without VLMEvalKit's 448x448-area resize hint"
)


class VideoMMEv2(ParquetSnapshotVideo):
    """Video-MME-v2 from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "MME-Benchmarks/Video-MME-v2"
    layout: ClassVar[str] = f"{PARQUET} (or VLMEvalKit's {VLMEVALKIT_TSV}) and video/<id>.mp4"
    parquet: ClassVar[str] = PARQUET
    vlmevalkit_tsv: ClassVar[str] = VLMEVALKIT_TSV
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        require_columns(raw, ("index", "video", *COLUMNS), path, f"Video-MME-v2 has video_id, {', '.join(COLUMNS)}")
        rows = []
        for pos, index, row in indexed_rows(raw, path):
            try:
                video = str(int(float(row["video"]))).zfill(3)
            except (TypeError, ValueError):
                raise DatasetError(f"{path}: row {pos}, field video: {row['video']!r} is not a whole number") from None
            rows.append({"index": index, "video": video, **{c: str(row[c]) for c in COLUMNS}})
        if len(rows) % 4:
            raise DatasetError(f"{path}: {len(rows)} rows; Video-MME-v2's questions come in groups of 4 rows")
        return pd.DataFrame(rows)

    def missing_hint(self) -> str:
        return (f"unpack the snapshot's videos/*.zip flat into {self.snapshot / 'video'} (VLMEvalKit does this on its "
                "first run)")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        question = "Question: {}\n".format(str(row["question"]) + "\n" + str(row["options"]))
        return [video_part(self.prepared_video(row)), text_part(FRAMES_TEXT), text_part(question + INSTRUCTION)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_videomme_v2(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "videomme_v2", "letter_rule": "Video-MME-v2 regex (first A-H after answer prefixes)"}
