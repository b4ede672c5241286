"""QBench_Video_MCQ (VLMEvalKit `QBench_Video_MCQ`, vlmeval/dataset/qbench_video.py at e8e78f05) from a local
snapshot of zhangzicheng/Q-Bench-Video.

The snapshot as VLMEvalKit reads it: `qbenchvideo_single_MCQ.tsv` (video, video_path, question (with its option
lines), answer (`L. text`), dimensions; `index` when present, else 0..n-1) and the videos of `video.zip` unpacked
in place, at each row's `video_path` (`./video/...`) under the snapshot.

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps, from the cache beside the video's frame plan.
Prompt (VLMEvalKit's `build_prompt`): its frames text ("\\nYou will receive N distinct frames that have been
uniformly sampled ... based on your observations.\\n"), the question, the video, then its answer format text
("\\nPlease answer the question in the following format: ... beyond this.\\n"). VLMEvalKit writes in N the number of
frames it took; the dataset does not know the model's sampling, so N is the dataset's `nframe` (8 unless the catalog
or the caller says otherwise): run the model with the same --nframe. `nframe=None` sends VLMEvalKit's text for video
models ("several distinct frames") instead.
Scoring: `vlmkit.scoring.benchmarks.qbench_video`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.qbench_video import score_qbench_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns, snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TSV = "qbenchvideo_single_MCQ.tsv"
COLUMNS = ("video", "video_path", "question", "answer", "dimensions")
FRAMES_TEXT = (
    "\nYou will receive {} distinct frames that have been uniformly sampled from a video sequence, arranged in the "
    "same temporal order as they appear in the video.\nPlease analyze these frames and answer the question based on "
    "your observations.\n"
)
VIDEO_TEXT = FRAMES_TEXT.replace("{}", "several")
POST_PROMPT = ("\nPlease answer the question in the following format: the uppercase letter of the correct answer "
               "option itself.\nPlease do not add any other answers beyond this.\n")
DEFAULT_NFRAME = 8
NOTE_FRAMES = (
    "frames: VLMEvalKit's QBench_Video rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, for every model; read with opencv where VLMEvalKit uses "
    "decord; the prompt's frame count is the dataset's nframe (8 by default), not the model's: run the model with "
    "the same --nframe"
)


class QBenchVideoSnapshot(SnapshotVideoDataset):
    """What QBench_Video_MCQ and QBench_Video_VQA share: the `nframe` option (the frame count their prompts name) and
    the videos at the TSV's `video_path`."""

    def __init__(self, name: str, *, nframe: int | None = DEFAULT_NFRAME, **options: Any) -> None:
        if nframe is not None and (not isinstance(nframe, int) or isinstance(nframe, bool) or nframe < 1):
            raise DatasetError(f"{name}: nframe must be a whole number of frames, or null; got {nframe!r}")
        self.nframe = nframe
        # the frames the prompt names; a run whose model samples others is refused (vlmkit.run.inputs.check_frames)
        self.prompt_sampling = {"nframe": nframe} if nframe is not None else None
        super().__init__(name, **options)

    def video_file(self, line: dict[str, Any]) -> Path:
        return Path(os.path.normpath(self.snapshot / str(line["video_path"])))

    def missing_hint(self) -> str:
        return f"unzip the snapshot's video.zip in {self.snapshot} (VLMEvalKit does this on its first run)"


class QBenchVideoMCQ(QBenchVideoSnapshot):
    """QBench_Video_MCQ from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "zhangzicheng/Q-Bench-Video"
    layout: ClassVar[str] = f"{TSV} and the videos of video.zip unpacked under video/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TSV
        raw = snapshot_tsv(path, f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        require_columns(raw, COLUMNS, path, f"QBench_Video_MCQ has {', '.join(COLUMNS)}")
        rows = []
        for pos, index, row in indexed_rows(raw, path):
            if "." not in str(row["answer"]):
                raise DatasetError(f"{path}: row {pos}, field answer: {row['answer']!r} is not `L. text`")
            rows.append({"index": index, **{c: str(row[c]) for c in COLUMNS}})
        return pd.DataFrame(rows)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        lead = FRAMES_TEXT.format(self.nframe) if self.nframe is not None else VIDEO_TEXT
        return [text_part(lead), text_part(str(row["question"])), video_part(self.prepared_video(row)),
                text_part(POST_PROMPT)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_qbench_video(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "qbench_video", "rule": "QBench check_ans_mcq", "prompt_nframe": self.nframe}
