"""MLVU_OpenEnded and the combined MLVU (VLMEvalKit `MLVU_OpenEnded`, `MLVU`, vlmeval/dataset/mlvu.py at e8e78f05) from
a local snapshot of MLVU/MVLU, scored with an LLM judge.

MLVU_OpenEnded: `MLVU/json/8_sub_scene.json` and `MLVU/json/9_summary.json` (each a list of {video, duration,
question, answer, scoring_points (sub_scene)}), videos at `MLVU/video/<n>_<task>/<video>`; rows sub_scene then
summary, each file in order, `index` 0..n-1, as VLMEvalKit's `generate_tsv` numbers them. A list of scoring points
is written as Python writes a list (as VLMEvalKit's TSV holds it). Prompt (VLMEvalKit's `build_prompt`): a system
turn "Carefully watch this video ... answer the given questions.", then the video and the question.

MLVU: MLVU_MCQ's rows (datasets_tsv.benchmarks.mlvu) then MLVU_OpenEnded's, `index` 0..n-1 over both (VLMEvalKit's
ConcatVideoDataset), each row asked with its part's prompt. Scoring: the MCQ part by MLVU_MCQ's scorer (the judge
reads the replies its rules cannot, as VLMEvalKit's does), the open part by `vlmkit.scoring.benchmarks.mlvu_open`;
figures: `M-Avg` (percent, 1 decimal, the MCQ tasks), `G-Avg` (points out of 10, 2 decimals, the open tasks) and
each task (MCQ tasks percent, open tasks mean points; VLMEvalKit's table multiplies those by 100 too, this kit
does not). Headline: `M-Avg`; VLMEvalKit's figure rounds as its table does (1 decimal, G-Avg 2).

Frames: VLMEvalKit's MLVU rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames
from frame 0) at the model's --nframe/--fps, from the cache beside the video's frame plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.mlvu_open import OPEN_TASKS, score_mlvu_open
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

from datasets_tsv.benchmarks.mlvu import NOTE_FRAMES, MLVUMCQ, mlvu_task_table
from datasets_tsv.benchmarks.mmbench_video import CombinedSnapshotVideo, JudgedSnapshotVideo
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

SYSTEM = ("Carefully watch this video and pay attention to every detail. "
          "Based on your observations, answer the given questions.")
# (task, json file, video folder under the snapshot): VLMEvalKit's type_data_list, in its order
TASKS: tuple[tuple[str, str, str], ...] = (
    ("sub_scene", "8_sub_scene.json", "MLVU/video/8_sub_scene"),
    ("summary", "9_summary.json", "MLVU/video/9_summary"),
)
FIELDS = ("video", "duration", "question", "answer")
COLUMNS = ["task_type", "prefix", "duration", "video", "question", "answer", "scoring_points"]
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit forces gpt-4-0125, gpt-4-0125-preview, for the "
              "open-ended tasks); its system and user texts are VLMEvalKit's")


def _row(task: str, folder: str, item: Any, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, where)
    return {"task_type": task, "prefix": folder, "duration": item["duration"], "video": str(item["video"]),
            "question": str(item["question"]), "answer": str(item["answer"]),
            "scoring_points": str(item.get("scoring_points", ""))}


class MLVUOpenEnded(JudgedSnapshotVideo):
    """MLVU_OpenEnded from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "MLVU/MVLU"
    layout: ClassVar[str] = "MLVU/json/8_sub_scene.json, MLVU/json/9_summary.json and MLVU/video/<n>_<task>/"
    judge_scorer: ClassVar[str] = "mlvu_open"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "task_type", "question", "scoring_points")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def _read_table(self) -> pd.DataFrame:
        return mlvu_task_table(self, TASKS, _row, COLUMNS)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / str(line["prefix"]) / str(line["video"])

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        user = [video_part(self.prepared_video(row)), text_part(str(row["question"]))]
        return [{"role": "system", "content": [text_part(SYSTEM)]}, {"role": "user", "content": user}]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_mlvu_open(df, judge, what=f"{self.snapshot}: {self.name}")


class MLVU(CombinedSnapshotVideo):
    """MLVU (MLVU_MCQ's rows, then MLVU_OpenEnded's) from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "MLVU/MVLU"
    layout: ClassVar[str] = "MLVU/json/<n>_<task>.json for its 9 tasks and MLVU/video/<n>_<task>/"
    judge_scorer: ClassVar[str] = "mlvu"
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def make_parts(self) -> dict[str, SnapshotVideoDataset]:
        options = {"data_root": self.snapshot, "root": self.root}
        return {"MLVU_MCQ": MLVUMCQ("MLVU_MCQ", **options),
                "MLVU_OpenEnded": MLVUOpenEnded("MLVU_OpenEnded", **options)}

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        results = self.part_results(df, judge)
        return combine(results["MLVU_MCQ"], results["MLVU_OpenEnded"], len(df))


def combine(mcq: EvalResult, open_: EvalResult, total: int) -> EvalResult:
    """MLVU's figures from its two parts' results (module docstring); per-row results keep the parts' indices
    under `part`."""
    open_tasks = [t for t in OPEN_TASKS if t in open_.metrics]
    metrics = {"M-Avg": mcq.metrics["M-Avg"], "G-Avg": open_.metrics["G-Avg"]}
    metrics.update({k: v for k, v in mcq.metrics.items() if k != "M-Avg"})
    metrics.update({t: open_.metrics[t] for t in open_tasks})
    points = Scale(POINTS, out_of=10.0)
    scales = {k: points for k in ("G-Avg", *open_tasks)}
    per_sample = pd.concat([mcq.per_sample.assign(part="MLVU_MCQ"), open_.per_sample.assign(part="MLVU_OpenEnded")],
                           ignore_index=True)
    counts = {"total": total}
    for name, result in (("mcq", mcq), ("open", open_)):
        counts.update({f"{name}_{k}": v for k, v in result.counts.items()})
    figure = None
    if mcq.vlmevalkit is not None and open_.vlmevalkit is not None:
        theirs = {"M-Avg": mcq.vlmevalkit.metrics["M-Avg"], "G-Avg": open_.vlmevalkit.metrics["G-Avg"]}
        theirs.update({k: v for k, v in mcq.vlmevalkit.metrics.items() if k != "M-Avg"})
        theirs.update({t: open_.vlmevalkit.metrics[t] for t in open_tasks if t in open_.vlmevalkit.metrics})
        figure = VlmevalkitFigure(metrics=theirs, primary="M-Avg",
                                  differing=[*mcq.vlmevalkit.differing, *open_.vlmevalkit.differing],
                                  notes=[*mcq.vlmevalkit.notes, *open_.vlmevalkit.notes,
                                         "row indices in the differing rows are each part's own (MLVU_MCQ's, "
                                         "MLVU_OpenEnded's)"])
    return EvalResult(
        scorer="mlvu", metrics=metrics, primary="M-Avg", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts,
        notes=[*mcq.notes, *open_.notes], scale=Scale(PERCENT), metric_scales=scales, vlmevalkit=figure,
    )  # fmt: skip
