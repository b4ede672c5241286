"""V2P-Bench (VLMEvalKit `V2PBench`, vlmeval/dataset/v2pbench.py at e8e78f05) from a local snapshot of
gaotiexinqu/V2P-Bench.

The snapshot as VLMEvalKit leaves it: `V2P-Bench.tsv` (index, video_path, frame_path, question (with its option
lines), answer (a letter), dimension (1..16), duration (seconds)), the video zips unpacked under
`videos/<video_path>` and `vp_frames.zip` under `frames/<frame_path>` (the frame carrying the visual prompt).

Frames: VLMEvalKit's Video-MME rule (VideoBaseDataset: frame int(i * n / (N + 1)), i = 1..N; at --fps F,
int(n / v * F) frames from frame 0) at the model's --nframe/--fps, from the cache beside the video's frame plan.
Prompt (VLMEvalKit's `build_prompt_nopack` for a video model): the question with its multiple-choice line
("\\nGive only your option letter that accurately addresses the question, no other words."), the video, then the
visual-prompt frame. vlmkit sends this order to every model; VLMEvalKit's frame mode (its "You will be provided with
N separate frames" text, the frames, the image, the question) looks for the video at `<root>/<video_path>.mp4`, not
under the `videos/` folder its video mode reads; vlmkit reads `videos/<video_path>` for both.
Scoring: `vlmkit.scoring.benchmarks.v2p_bench`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.v2p_bench import dimension_number, score_v2p_bench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError, read_header, read_table
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TABLE = "V2P-Bench.tsv"
COLUMNS = ("index", "video_path", "frame_path", "question", "answer", "dimension", "duration")
MULTI_CHOICE = "\nGive only your option letter that accurately addresses the question, no other words."
NOTE_FRAMES = (
    "frames: VLMEvalKit's V2P-Bench rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, for every model; read with opencv where VLMEvalKit uses "
    "decord; the prompt is VLMEvalKit's video-model order (question, video, visual-prompt frame) for every model"
)


def _inside(root: Path, relative: str, where: str) -> str:
    """`relative` when it names a path inside `root`, else one clear error line."""
    if not relative or Path(relative).is_absolute() or not (root / relative).resolve().is_relative_to(root.resolve()):
        raise DatasetError(f"{where}: {relative!r} is not a path inside {root}")
    return relative


class V2PBench(SnapshotVideoDataset):
    """V2P-Bench from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "gaotiexinqu/V2P-Bench"
    layout: ClassVar[str] = f"{TABLE}, videos/<video_path> and frames/<frame_path>"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TABLE
        if not path.is_file():
            raise DatasetError(f"{path}: not found; expected the {self.repo_id} snapshot in {self.snapshot} "
                               f"({self.layout})")
        raw = read_table(path, skip="", text_columns=frozenset(read_header(path))).fillna("")
        missing = [c for c in COLUMNS if c not in raw.columns]
        if missing:
            raise DatasetError(f"{path}: missing column `{missing[0]}` (V2P-Bench has {', '.join(COLUMNS)})")
        rows = []
        for pos, row in enumerate(raw.to_dict("records")):
            where = f"{path}: row {pos}"
            try:
                index, duration = int(row["index"]), float(row["duration"])
            except (TypeError, ValueError):
                raise DatasetError(f"{where}, field index/duration: {row['index']!r}/{row['duration']!r} is not a "
                                   "number") from None
            dimension = dimension_number(row["dimension"])
            if dimension is None:
                raise DatasetError(f"{where}, field dimension: {row['dimension']!r} is not a whole number 1..16")
            rows.append({
                "index": index, "video_path": _inside(self.snapshot / "videos", str(row["video_path"]), f"{where}, "
                                                      "field video_path"),
                "frame_path": _inside(self.snapshot / "frames", str(row["frame_path"]), f"{where}, field frame_path"),
                "question": str(row["question"]), "answer": str(row["answer"]).strip(), "dimension": dimension,
                "duration": duration,
            })  # fmt: skip
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / str(line["video_path"])

    def prompt_frame(self, line: dict[str, Any]) -> Path:
        """The row's visual-prompt frame (`frames/<frame_path>`)."""
        path = self.snapshot / "frames" / str(line["frame_path"])
        if not path.is_file():
            raise DatasetError(f"{path}: missing, needed by {self.name} index {line['index']}; unpack the snapshot's "
                               f"vp_frames.zip into {self.snapshot} (VLMEvalKit does this on its first run)")
        return path

    def missing_hint(self) -> str:
        return (f"unpack the snapshot's video zips into {self.snapshot / 'videos'} (VLMEvalKit does this on its first "
                "run)")

    def question_text(self, line: dict[str, Any]) -> str:
        return str(line["question"]) + MULTI_CHOICE

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [text_part(self.question_text(row)), video_part(self.prepared_video(row)),
                {"type": "image", "value": str(self.prompt_frame(row))}]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_v2p_bench(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "v2p_bench", "letter_rule": "think blocks removed, then the Video-MME regex (first A-D)"}
