"""ReVSI (VLMEvalKit `ReVSI`, vlmeval/dataset/revsi.py at e8e78f05) from a local snapshot of 3dlg-hcvc/ReVSI.

The snapshot as VLMEvalKit uses it: the `datasets` subset `<frames>` (16_frame, 32_frame, 64_frame or all_frame; its
test split as parquet files in a `<frames>` folder), or the `<frames>.tsv` VLMEvalKit writes beside video.zip on its
first run; `video.zip` unpacked into `revsi_videos/` (`revsi_videos/<frames>/<scene_id>.mp4`). Rows keep the table's
order; `index` is the table's own, else 0..n-1 (VideoBaseDataset's). Reading parquet needs pyarrow; without it, the
TSV VLMEvalKit writes is read.

The subset is a dataset option, `frames` (16, 32, 64 or "all", default "all" as VLMEvalKit's class; its presets are
revsi_{16,32,64,all}_frame): its videos are cut to that many frames, and VLMEvalKit samples N = 16, 32, 64 (all: 128)
of them with the Video-MME rule (frame int(i * n / (N + 1)), i = 1..N); run the model with that --nframe. VLMEvalKit's
ReVSI refuses fps (it always passes fps=-1), so does vlmkit.
Prompt (VLMEvalKit's `build_prompt`; the frames, then this text, stripped): numeric types "These are frames of a
video.\\n<question>\\nAnswer the question using a single integer or decimal number."; MCQ types "These are frames of a
video.\\n<question>\\nOptions:\\n<options, one a line>\\nAnswer with the option's letter from the given choices
directly."
Scoring: ReVSI's own (`vlmkit.scoring.benchmarks.spatial_video`, aggregate "revsi"), fractions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from vlmkit.core.video import FramePlan
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_mcq import parse_option_list
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import inside, judge_not_asked
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import parquet_or_tsv, require_columns
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

NUMBER_TYPES = ("object_counting_single", "object_counting_multiple", "object_abs_distance", "object_size_estimation",
                "room_size_estimation_single", "room_size_estimation_multiple")
MCQ_TYPES = ("object_rel_direction_forward_easy", "object_rel_direction_backward_easy",
             "object_rel_direction_forward_hard", "object_rel_direction_backward_hard", "object_rel_distance_closest",
             "object_rel_distance_farthest", "route_planning")
MERGE = {
    "object_rel_direction": ("object_rel_direction_forward_easy", "object_rel_direction_backward_easy",
                             "object_rel_direction_forward_hard", "object_rel_direction_backward_hard"),
    "object_rel_distance": ("object_rel_distance_closest", "object_rel_distance_farthest"),
    "object_counting": ("object_counting_single", "object_counting_multiple"),
    "room_size_estimation": ("room_size_estimation_single", "room_size_estimation_multiple"),
}
PREFIX = "These are frames of a video."
NUMBER_POST = "Answer the question using a single integer or decimal number."
MCQ_POST = "Answer with the option's letter from the given choices directly."
VIDEOS = "revsi_videos"
FRAMES = {"16": ("16_frame", 16), "32": ("32_frame", 32), "64": ("64_frame", 64), "all": ("all_frame", 128)}
COLUMNS = ("scene_id", "question", "question_type", "ground_truth")
REFUSE_FPS = "VLMEvalKit's ReVSI samples by nframe only (it always passes fps=-1)"


def _options_cell(value: Any) -> Any:
    """The `options` cell as VLMEvalKit serialises it (`repr` of a list of strings)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return repr([str(option) for option in value])
    return "" if value is None else value


class ReVSI(SnapshotVideoDataset):
    """ReVSI from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "3dlg-hcvc/ReVSI"
    layout: ClassVar[str] = ("the subset's parquet (<frames>/test-*.parquet) or VLMEvalKit's <frames>.tsv, and "
                             f"video.zip unpacked into {VIDEOS}/")
    answer_columns: tuple[str, ...] = ("ground_truth", "question_type")
    table_source: str = ""

    def __init__(self, name: str, *, frames: int | str = "all", **kwargs: Any) -> None:
        key = str(frames).removesuffix("_frame")
        if key not in FRAMES:
            raise DatasetError(f"{name}: frames must be 16, 32, 64 or all; got {frames!r}")
        self.subset, self.nframe = FRAMES[key]
        self.notes = (
            f"frames: VLMEvalKit's ReVSI rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N) over the "
            f"{self.subset} videos; VLMEvalKit samples {self.nframe} of them: run the model with --nframe "
            f"{self.nframe}; fps is refused, as VLMEvalKit refuses it; read with opencv where VLMEvalKit uses decord",
            "rule-read only, as VLMEvalKit scores ReVSI (no judge)",
        )
        super().__init__(name, **kwargs)

    def _read_table(self) -> pd.DataFrame:
        parquets = sorted(p for p in self.snapshot.rglob("*.parquet")
                          if self.subset in p.parts and VIDEOS not in p.parts and p.name.startswith("test"))
        raw, path = parquet_or_tsv(parquets, self.snapshot / f"{self.subset}.tsv",
                                   f"{self.snapshot}: no {self.subset} table (expected {self.layout})")
        self.table_source = str(path.relative_to(self.snapshot))
        if path.suffix == ".parquet":
            if "options" in raw.columns:
                raw["options"] = raw["options"].map(_options_cell)
            raw = raw.fillna("")
        return self._rows(raw, path)

    def _rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        require_columns(raw, COLUMNS, path, f"ReVSI has {', '.join(COLUMNS)}, options")
        rows = []
        for pos, row in enumerate(raw.to_dict("records")):
            where = f"{path}: row {pos}"
            try:
                index = int(str(row["index"]).strip()) if "index" in raw.columns else pos
            except ValueError:
                raise DatasetError(f"{where}, field index: {row['index']!r} is not a whole number") from None
            kind = str(row["question_type"])
            if kind not in NUMBER_TYPES + MCQ_TYPES:
                raise DatasetError(f"{where}, field question_type: unknown question type {kind!r}")
            options = str(row.get("options", ""))
            if kind in MCQ_TYPES and parse_option_list(options) is None:
                raise DatasetError(f"{where}, field options: not a list of options")
            video = inside(self.snapshot / VIDEOS / self.subset, f"{row['scene_id']}.mp4", f"{where}, field scene_id")
            rows.append({"index": index, "video": video, "scene_id": str(row["scene_id"]),
                         "question": str(row["question"]), "question_type": kind, "options": options,
                         "ground_truth": str(row["ground_truth"])})
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / VIDEOS / self.subset / str(line["video"])

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        return FramePlan(source=str(self.video_file(line).resolve()), fps_rule=None, refuse_fps=REFUSE_FPS)

    def missing_hint(self) -> str:
        return f"unpack the snapshot's video.zip into {self.snapshot / VIDEOS} (VLMEvalKit does this on its first run)"

    def prompt_text(self, line: dict[str, Any]) -> str:
        if line["question_type"] in NUMBER_TYPES:
            return "\n".join([PREFIX, str(line["question"]), NUMBER_POST]).strip()
        options = "Options:\n" + "\n".join(parse_option_list(line["options"]) or [])
        return "\n".join([PREFIX, str(line["question"]), options, MCQ_POST]).strip()

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        result = score_spatial_video(df, aggregate="revsi", numeric_types=NUMBER_TYPES, merge=MERGE)
        return judge_not_asked(result, judge, "VLMEvalKit scores ReVSI by rule only")

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "revsi", "frames": self.subset}

    def info(self) -> dict[str, Any]:
        return {**super().info(), "table": self.table_source, "nframe": self.nframe}
