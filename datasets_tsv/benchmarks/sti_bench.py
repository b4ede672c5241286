"""STI-Bench (VLMEvalKit `STIBench`, vlmeval/dataset/stibench.py at e8e78f05): spatial-temporal questions on videos.

Rows: the EASI TSV (`datasets_tsv.benchmarks.spatial_video`: index, video, question, time_start, time_end, options
(a list literal), answer (a letter), task_type); videos: `<snapshot>/<video>` of MINT-SJTU/STI-Bench, its zips
unpacked in place.

Frames: np.linspace(0, n - 1, N, dtype=int) at --nframe N; VLMEvalKit's fps rule at --fps (rule "linspace").
Prompt (VLMEvalKit's `build_prompt`; the frames, then this text): "Answer the question below based on the frames
provided, which are sampled at about <r> FPS.\\nQuestion: From <time_start> seconds to <time_end> seconds. <question>
\\n<options as `A text`, one a line>\\nPlease output only the option you choose!", where r is `N / (n / v)` for N
frames of a video of n frames at v fps (`{:.2f}`), or the --fps value. The prompt is built before the model samples
its frames, so the dataset is told the setting: `nframe` (default 30, VLMEvalKit's STI-Bench_30frame, the paper's
setting) or `fps`; run the model with the same --nframe / --fps. time_start / time_end are printed as pandas reads
the TSV (a column of whole numbers as `3`, any other numeric column as `3.0`).
Scoring: pooled accuracy by task_type (`vlmkit.scoring.benchmarks.spatial_video`), VLMEvalKit's category order.
"""

from __future__ import annotations

from pathlib import Path
from string import ascii_uppercase
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.video import check_sampling, probe_video
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import SpatialVideoDataset, judge_not_asked
from datasets_tsv.benchmarks.vsi_bench import NO_JUDGE_NOTE
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import text_part, video_part

CATEGORIES = ("Dimensional Measurement", "Spatial Relation", "3D Video Grounding", "Displacement & Path Length",
              "Speed & Acceleration", "Ego-Centric Orientation", "Trajectory Description", "Pose Estimation")
NOTE_FRAMES = ("frames: VLMEvalKit's STI-Bench rule (np.linspace(0, n - 1, N, dtype=int); fps F: int(n / v * F) frames "
               "int(i * v / F)) at the model's --nframe/--fps; the prompt's 'sampled at about ... FPS' is worked out "
               "for the dataset's nframe/fps option (default 30 frames): give the model the same --nframe/--fps; read "
               "with opencv where VLMEvalKit uses decord")


def pandas_texts(values: list[str]) -> list[str]:
    """How `str()` shows the cells of a column pandas read as numbers: a column of whole numbers as ints, else as
    floats (`3.0`); a column that is not all numbers as it is."""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return list(values)
    if all(str(v).strip().lstrip("+-").isdigit() for v in values):
        return [str(int(v)) for v in values]
    return [str(n) for n in numbers]


class STIBench(SpatialVideoDataset):
    """STI-Bench from its EASI TSV and a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "MINT-SJTU/STI-Bench"
    layout: ClassVar[str] = "the videos of the snapshot's zips unpacked in place"
    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "time_start", "time_end", "options", "answer",
                                          "task_type")
    answer_columns: tuple[str, ...] = ("answer", "task_type")
    notes: tuple[str, ...] = (NOTE_FRAMES, NO_JUDGE_NOTE)

    def __init__(self, name: str, *, nframe: int | None = None, fps: float | None = None, **kwargs: Any) -> None:
        try:
            self.sampling = check_sampling(30 if nframe is None and fps is None else nframe, fps)
        except ValueError as exc:
            raise DatasetError(f"{name}: {exc}") from None
        self.prompt_sampling = self.sampling  # the prompt's FPS is worked out for it: a model sampling others is refused
        super().__init__(name, **kwargs)

    def _read_table(self) -> pd.DataFrame:
        table = super()._read_table()
        for column in ("time_start", "time_end"):
            table[column] = pandas_texts(table[column].tolist())
        return table

    def check_row(self, row: dict[str, Any], where: str) -> None:
        if len(self.options(row, "options", where)) > len(ascii_uppercase):
            raise DatasetError(f"{where}, field options: more than {len(ascii_uppercase)} options")

    def sample_rate(self, video: Path) -> float | None:
        """VLMEvalKit's sample_fps: the --fps, or N frames over the video's duration (None without one)."""
        if "fps" in self.sampling:
            return self.sampling["fps"]
        facts = probe_video(video)
        duration = facts["total_frames"] / facts["video_fps"] if facts["video_fps"] > 0 else 0.0
        return self.sampling["nframe"] / duration if duration > 0 else None

    def prompt_text(self, line: dict[str, Any]) -> str:
        options = self.options(line, "options")
        option_text = "\n".join(f"{ascii_uppercase[i]} {option}" for i, option in enumerate(options))
        question = f"From {line['time_start']} seconds to {line['time_end']} seconds. {line['question']}\n{option_text}"
        rate = self.sample_rate(self.video_file(line))
        fps_text = (f"which are sampled at about {rate:.2f} FPS.\n" if rate is not None
                    else "which are sampled at an unspecified frame rate.\n")
        return (f"Answer the question below based on the frames provided, {fps_text}Question: {question}\n"
                "Please output only the option you choose!")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        result = score_spatial_video(df, aggregate="pooled", group="task_type", order=CATEGORIES)
        return judge_not_asked(result, judge, NO_JUDGE_NOTE)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "pooled", "groups": ["task_type"], **self.sampling}
