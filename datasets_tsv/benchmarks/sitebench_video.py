"""SiteBenchVideo (VLMEvalKit `SiteBenchVideo`, vlmeval/dataset/sitebench.py at e8e78f05): SITE-Bench's video
questions.

Rows: the EASI TSV (`datasets_tsv.benchmarks.spatial_video`: index, video_path (relative to the snapshot), question,
candidates (a list literal of option texts), answer (a letter), category); videos: `<snapshot>/<video_path>` of
franky-veteran/SITE-Bench, its zips unpacked in place (VLMEvalKit does this on its first run).

Frames: np.linspace(0, n - 1, N, dtype=int) at --nframe N; VLMEvalKit's fps rule at --fps (rule "linspace");
VLMEvalKit names its settings SiteBenchVideo_{64,32}frame and SiteBenchVideo_1fps.
Prompt (VLMEvalKit's `build_prompt`, the SITE paper's; the frames, then this text): "Select the best answer to the
following multiple-choice question based on the video. Respond with only the letter of the correct option.\\n
Question: <question>\\nOptions:\\nA: <option>\\n...\\nGive me the answer letter directly. The best answer is:".
Scoring: SITE's (`vlmkit.scoring.benchmarks.spatial_video`, pooled, with class-adjusted accuracy): `Overall`
(VLMEvalKit's `overall_accuracy`), `overall_caa`, then `{category}_accuracy` and `{category}_caa` (VLMEvalKit lists
only its six categories; vlmkit lists every category present, its six first).
"""

from __future__ import annotations

from string import ascii_uppercase
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import SpatialVideoDataset, judge_not_asked
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import text_part, video_part

CATEGORIES = ("counting & existence", "object localization & positioning", "3d information understanding",
              "multi-view & cross-image reasoning", "spatial relationship reasoning",
              "movement prediction & navigation")
PRE_PROMPT = ("Select the best answer to the following multiple-choice question based on the video. "
              "Respond with only the letter of the correct option.")
POST_PROMPT = "Give me the answer letter directly. The best answer is:"
RULES_NOTE = ("rule-read (VLMEvalKit's spatial_bench rules), as VLMEvalKit scores it: its type Video-MCQ gets no judge "
              "from run.py")
NOTE_FRAMES = ("frames: VLMEvalKit's SiteBenchVideo rule (np.linspace(0, n - 1, N, dtype=int); fps F: int(n / v * F) "
               "frames int(i * v / F)) at the model's --nframe/--fps, for every model; read with opencv where "
               "VLMEvalKit uses decord")


class SiteBenchVideo(SpatialVideoDataset):
    """SiteBenchVideo from its EASI TSV and a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "franky-veteran/SITE-Bench"
    layout: ClassVar[str] = "the videos of the snapshot's zips unpacked in place (<video_path>)"
    video_column: ClassVar[str | None] = "video_path"
    columns: ClassVar[tuple[str, ...]] = ("index", "video_path", "question", "candidates", "answer")
    notes: tuple[str, ...] = (NOTE_FRAMES, RULES_NOTE)

    def check_row(self, row: dict[str, Any], where: str) -> None:
        if len(self.options(row, "candidates", where)) > len(ascii_uppercase):
            raise DatasetError(f"{where}, field candidates: more than {len(ascii_uppercase)} options")

    def prompt_text(self, line: dict[str, Any]) -> str:
        options = "\n".join(f"{label}: {text}" for label, text in zip(ascii_uppercase,
                                                                      self.options(line, "candidates")))
        return PRE_PROMPT + "\n" + "Question: " + str(line["question"]) + "\n" + "Options:\n" + options + "\n" + \
            POST_PROMPT

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        result = score_spatial_video(df, aggregate="pooled", group="category", order=CATEGORIES, caa=True)
        return judge_not_asked(result, judge, RULES_NOTE)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "pooled", "groups": ["category"], "caa": True}
