"""QBench_Video_VQA and the combined QBench_Video (VLMEvalKit `QBench_Video_VQA`, `QBench_Video`,
vlmeval/dataset/qbench_video.py at e8e78f05) from a local snapshot of zhangzicheng/Q-Bench-Video, scored with an LLM
judge.

QBench_Video_VQA: `qbenchvideo_single_VQA.tsv` (index, video, video_path, question, answer, dimensions) and the
videos of `video.zip` unpacked at each row's `video_path` under the snapshot. Prompt (VLMEvalKit's frames prompt):
its frames text ("\\nYou will receive <N> distinct frames ... based on your observations.\\n"), the question, then the
video. <N> is the dataset's `nframe` (8 by default: run the model with the same --nframe), as for QBench_Video_MCQ;
`nframe=None` sends VLMEvalKit's text for video models ("several distinct frames"). Scoring:
`vlmkit.scoring.benchmarks.qbench_video_vqa`.

QBench_Video: QBench_Video_MCQ's rows (datasets_tsv.benchmarks.qbench_video) then QBench_Video_VQA's, `index` 0..n-1
over both (VLMEvalKit's ConcatVideoDataset). Figures are percent per question type (VLMEvalKit's table: sum of
scores / rows x 100, and `open_ended`, whose scores are out of 2, halved), and `Overall`: every row's score as a
share of its most (1 for MCQ, 2 for VQA), x 100 (VLMEvalKit's table has no overall). VLMEvalKit's figure rounds to 1
decimal as its table does.

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.qbench_video_vqa import score_qbench_video_vqa
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

from datasets_tsv.benchmarks.mmbench_video import CombinedSnapshotVideo, JudgedSnapshotVideo
from datasets_tsv.benchmarks.qbench_video import DEFAULT_NFRAME, NOTE_FRAMES, QBenchVideoMCQ, QBenchVideoSnapshot
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TSV = "qbenchvideo_single_VQA.tsv"
FRAMES_TEXT = (
    "\nYou will receive {} distinct frames that have been uniformly sampled from a video sequence, arranged in the "
    "same temporal order as they appear in the video.\nPlease analyze these frames and provide a detailed and "
    "accurate answer from the perspective of visual quality based on your observations.\n"
)
VIDEO_TEXT = FRAMES_TEXT.replace("{}", "several")
NOTE_JUDGE = "judge: the one given with --judge (VLMEvalKit's default gpt-4o-0806); its texts are VLMEvalKit's"


class QBenchVideoVQA(QBenchVideoSnapshot, JudgedSnapshotVideo):
    """QBench_Video_VQA from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "zhangzicheng/Q-Bench-Video"
    layout: ClassVar[str] = f"{TSV} and the videos of video.zip unpacked under video/"
    judge_scorer: ClassVar[str] = "qbench_video_vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question", "dimensions")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def _read_table(self) -> pd.DataFrame:
        raw = read_snapshot_tsv(self.snapshot / TSV, ("video", "video_path", "question", "answer", "dimensions"),
                                f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        return raw[["index", "video", "video_path", "question", "answer", "dimensions"]]

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        lead = FRAMES_TEXT.format(self.nframe) if self.nframe is not None else VIDEO_TEXT
        return [text_part(lead), text_part(str(row["question"])), video_part(self.prepared_video(row))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_qbench_video_vqa(df, judge, what=str(self.snapshot / TSV))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "prompt_nframe": self.nframe}


class QBenchVideo(CombinedSnapshotVideo):
    """QBench_Video (QBench_Video_MCQ's rows, then QBench_Video_VQA's) from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "zhangzicheng/Q-Bench-Video"
    layout: ClassVar[str] = "qbenchvideo_single_MCQ.tsv, qbenchvideo_single_VQA.tsv and video/ (from video.zip)"
    judge_scorer: ClassVar[str] = "qbench_video_all"
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def __init__(self, name: str, *, nframe: int | None = DEFAULT_NFRAME, **options: Any) -> None:
        self.nframe = nframe
        self.prompt_sampling = {"nframe": nframe} if nframe is not None else None  # the count the prompt names
        super().__init__(name, **options)

    def make_parts(self) -> dict[str, SnapshotVideoDataset]:
        options = {"data_root": self.snapshot, "root": self.root, "nframe": self.nframe}
        return {"QBench_Video_MCQ": QBenchVideoMCQ("QBench_Video_MCQ", **options),
                "QBench_Video_VQA": QBenchVideoVQA("QBench_Video_VQA", **options)}

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        shares, theirs, types, indices, tops = [], [], [], [], []
        notes: list[str] = []
        for name, result in self.part_results(df, judge).items():
            top = 1.0 if name == "QBench_Video_MCQ" else 2.0
            for record in result.per_sample.to_dict("records"):
                mine = float(record["hit"]) if "hit" in record else float(record["score"])
                shares.append(mine)
                theirs.append(float(record["vlmevalkit_score"]))
                types.append(str(record["question_type"]))
                indices.append(f"{name}:{record['index']}")
                tops.append(top)
            notes += [f"{name}: {note}" for note in result.notes]
        metrics = qbench_table(shares, tops, types)
        figure = VlmevalkitFigure(
            metrics={k: round(v, 1) for k, v in qbench_table(theirs, tops, types).items()}, primary="Overall",
            differing=[ReadingDifference(i, s, t, s, t) for i, s, t in zip(indices, shares, theirs) if s != t],
            notes=["VLMEvalKit's QBench_Video table: percent per question type with 1 decimal, open_ended halved; "
                   "it has no overall (this figure's is computed the same way as vlmkit's)"],
        )
        per_sample = pd.DataFrame({"index": indices, "score": shares, "out_of": tops, "question_type": types,
                                   "vlmevalkit_score": theirs})
        return EvalResult(scorer="qbench_video_all", metrics=metrics, primary="Overall", per_sample=per_sample,
                          table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc",
                          counts={"total": len(per_sample), "scored": len(per_sample)}, notes=notes,
                          scale=Scale(PERCENT), vlmevalkit=figure)


def qbench_table(scores: list[float], tops: list[float], types: list[str]) -> dict[str, float]:
    """`Overall` (each row's score over its most, mean x 100) and per question type sum / rows x 100, a VQA type
    (scores out of 2) halved."""
    metrics = {"Overall": 100.0 * sum(s / t for s, t in zip(scores, tops)) / len(scores)}
    for kind in dict.fromkeys(types):
        picked = [(s, t) for s, t, k in zip(scores, tops, types) if k == kind]
        metrics[kind] = 100.0 * sum(s for s, _ in picked) / len(picked) / max(t for _, t in picked)
    return metrics
