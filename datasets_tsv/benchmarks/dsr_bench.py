"""DSRBench (VLMEvalKit `DSRBench`, vlmeval/dataset/dsrbench.py at e8e78f05): dynamic spatial reasoning on videos.

Rows: the EASI TSV (`datasets_tsv.benchmarks.spatial_video`: index, video, question, options (a JSON or Python list of
`A. text` lines), answer (a letter), task_type); videos: EASI hosts them for DSR-Bench, in the
lmms-lab-si/EASI-Leaderboard-Data snapshot as `raw_data/dsr-bench.zip`, unpacked in place
(`<snapshot>/raw_data/dsr-bench/<video>`); that snapshot also holds DSRBench.tsv, which is read when $LMUData has none.

Frames: np.linspace(0, n - 1, N, dtype=int) at --nframe N; VLMEvalKit's fps rule at --fps (rule "linspace");
VLMEvalKit names its settings DSRBench_{64,32,30}frame and DSRBench_1fps (the paper's).
Prompt (VLMEvalKit's `build_prompt`): Video-MME's frames text ("\\nThese are the frames of a video. Select the best
answer ... of the correct option.\\n"), the video, then "Question: <question>\\n<options, one a line>\\nAnswer: ".
Scoring: pooled accuracy by task_type (`vlmkit.scoring.benchmarks.spatial_video`), VLMEvalKit's category order.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import SpatialVideoDataset, judge_not_asked
from datasets_tsv.benchmarks.videomme import FRAMES_PROMPT
from datasets_tsv.benchmarks.vsi_bench import NO_JUDGE_NOTE
from datasets_tsv.kinds.video_snapshot import text_part, video_part

CATEGORIES = ("abs_dis", "abs_dir", "abs_ori", "abs_spd", "abs_spd_comp", "abs_dir_pred", "rel_dis", "rel_dir",
              "rel_ori", "rel_spd", "rel_spd_comp", "rel_dir_pred", "non_temp")
NOTE_FRAMES = ("frames: VLMEvalKit's DSRBench rule (np.linspace(0, n - 1, N, dtype=int); fps F: int(n / v * F) frames "
               "int(i * v / F)) at the model's --nframe/--fps, for every model; read with opencv where VLMEvalKit uses "
               "decord")


class DSRBench(SpatialVideoDataset):
    """DSRBench from its EASI TSV and the EASI snapshot's videos (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab-si/EASI-Leaderboard-Data"
    layout: ClassVar[str] = "raw_data/dsr-bench.zip unpacked in place (raw_data/dsr-bench/<video>)"
    video_root: ClassVar[str] = "raw_data/dsr-bench"
    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "options", "answer", "task_type")
    answer_columns: tuple[str, ...] = ("answer", "task_type")
    notes: tuple[str, ...] = (NOTE_FRAMES, NO_JUDGE_NOTE)

    def check_row(self, row: dict[str, Any], where: str) -> None:
        self.options(row, "options", where)

    def question_text(self, line: dict[str, Any]) -> str:
        question = str(line["question"]) + "\n" + "\n".join(self.options(line, "options"))
        return f"Question: {question}\nAnswer: "

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [text_part(FRAMES_PROMPT), video_part(self.prepared_video(row)), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        result = score_spatial_video(df, aggregate="pooled", group="task_type", order=CATEGORIES)
        return judge_not_asked(result, judge, NO_JUDGE_NOTE)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "pooled", "groups": ["task_type"]}
