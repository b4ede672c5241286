"""The VSI family (VLMEvalKit `VsiBench`, `VsiSuperRecall`, `VsiSuperCount`, vlmeval/dataset/vsibench.py at e8e78f05):
VSI-Bench and VSI-Bench-Debiased, VsiSuperRecall_{10,30,60,120,240}mins, VsiSuperCount_{10,30,60,120}mins.

Rows: the EASI TSV (`datasets_tsv.benchmarks.spatial_video`); videos: `<snapshot>/<video>` of nyu-visionx/VSI-Bench,
nyu-visionx/VSI-SUPER-Recall or nyu-visionx/VSI-SUPER-Count, their zips unpacked in place (VLMEvalKit does that on its
first run; only the duration's zip is needed, e.g. `10mins.zip`).

Frames: VSI-Bench's `uniform_tail` (np.linspace(0, n - 1, N, dtype=int), then the last frame when it is not taken,
at --fps too), VSI-SUPER's plain linspace; VLMEvalKit names its settings `<name>_{128,64,32,16}frame` and `_{2,1}fps`.
Prompts (VLMEvalKit's frame mode: the frames, then one text; vlmkit sends the video part, then that text):
- VSI-Bench: "These are frames of a video.", the question, [the candidates, one a line, and "Answer with the option's
  letter from the given choices directly." | "Answer briefly and directly in one float number."], joined by newlines.
- VSI-SUPER-Recall: question.strip() + "\\nOptions:\\n" + the options, one a line, + "\\nAnswer with the option's
  letter from the given choices directly."
- VSI-SUPER-Count: "These are frames of a video.\\n" + question.strip() + "\\nPlease answer the question using a single
  word or phrase."; the `*_streaming` rows are left out, as VLMEvalKit leaves them out.
Scoring: `vlmkit.scoring.benchmarks.spatial_video` (VSI-Bench and Count: per question type, MRA for numbers, Overall
the mean of the type figures; Recall: pooled accuracy per question_type).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import SpatialVideoDataset, judge_not_asked
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import text_part, video_part

PRE_PROMPT = "These are frames of a video."
MCQ_POST_PROMPT = "Answer with the option's letter from the given choices directly."
NUMBER_POST_PROMPT = "Answer briefly and directly in one float number."
MCQ_TYPES = ("obj_appearance_order", "object_rel_direction_easy", "object_rel_direction_hard",
             "object_rel_direction_medium", "object_rel_distance", "route_planning")
NUMBER_TYPES = ("object_abs_distance", "object_size_estimation", "object_counting", "room_size_estimation")
REL_DIRECTION = ("object_rel_direction_easy", "object_rel_direction_medium", "object_rel_direction_hard")
TABLE_ORDER = ("object_counting", "object_abs_distance", "object_size_estimation", "room_size_estimation",
               "object_rel_distance", "object_rel_direction", "route_planning", "obj_appearance_order")
RECALL_POST_PROMPT = "\nAnswer with the option's letter from the given choices directly."
COUNT_PRE_PROMPT = "These are frames of a video.\n"
COUNT_POST_PROMPT = "\nPlease answer the question using a single word or phrase."
NO_JUDGE_NOTE = ("rule-read only (VLMEvalKit's spatial_bench rules, as with --judge exact_matching); VLMEvalKit's "
                 "default for these MCQ/VQA types asks gpt-4o-mini to extract the answer and falls back to the rules "
                 "only when no judge works; a judge given to vlmkit is not asked")
NOTE_FRAMES_VSI = ("frames: VLMEvalKit's VSI-Bench rule (uniform_tail: np.linspace(0, n - 1, N, dtype=int), then frame "
                   "n - 1 when not taken, at --fps too) at the model's --nframe/--fps, for every model; read with "
                   "opencv where VLMEvalKit uses decord; the video goes before the text as VLMEvalKit's frames do")
NOTE_FRAMES_SUPER = ("frames: VLMEvalKit's VSI-SUPER rule (np.linspace(0, n - 1, N, dtype=int); fps F: int(n / v * F) "
                     "frames int(i * v / F)) at the model's --nframe/--fps, for every model; read with opencv where "
                     "VLMEvalKit uses decord")


class _Rules:
    """The judge note every VSI class shares."""

    def judged(self, result: EvalResult, judge: Judge | None) -> EvalResult:
        return judge_not_asked(result, judge, NO_JUDGE_NOTE)


class VsiBench(_Rules, SpatialVideoDataset):
    """VSI-Bench / VSI-Bench-Debiased (module docstring)."""

    repo_id: ClassVar[str] = "nyu-visionx/VSI-Bench"
    layout: ClassVar[str] = "the scene videos unpacked from arkitscenes.zip, scannet.zip and scannetpp.zip"
    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "question_type", "answer")
    frame_rule: ClassVar[str] = "linspace_tail"
    answer_columns: tuple[str, ...] = ("answer", "question_type")
    notes: tuple[str, ...] = (NOTE_FRAMES_VSI, NO_JUDGE_NOTE)

    def check_row(self, row: dict[str, Any], where: str) -> None:
        kind = row["question_type"]
        if kind not in MCQ_TYPES + NUMBER_TYPES:
            raise DatasetError(f"{where}, field question_type: unknown question type {kind!r}")
        if kind in MCQ_TYPES:
            self.options(row, "candidates", where)

    def prompt_text(self, line: dict[str, Any]) -> str:
        parts = [PRE_PROMPT, str(line["question"])]
        if line["question_type"] in MCQ_TYPES:
            parts += ["\n".join(self.options(line, "candidates")), MCQ_POST_PROMPT]
        else:
            parts += [NUMBER_POST_PROMPT]
        return "\n".join(parts)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return self.judged(score_spatial_video(df, aggregate="per_type", numeric_types=NUMBER_TYPES,
                                               merge={"object_rel_direction": REL_DIRECTION}, order=TABLE_ORDER), judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "per_type", "numbers": "MRA over 0.50..0.95"}


class VsiSuperRecall(_Rules, SpatialVideoDataset):
    """VsiSuperRecall_<d>mins (module docstring)."""

    repo_id: ClassVar[str] = "nyu-visionx/VSI-SUPER-Recall"
    layout: ClassVar[str] = "the videos of the duration's zip (e.g. 10mins.zip) unpacked in place"
    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "question_type", "options", "answer")
    answer_columns: tuple[str, ...] = ("answer", "question_type")
    notes: tuple[str, ...] = (NOTE_FRAMES_SUPER, NO_JUDGE_NOTE)

    def check_row(self, row: dict[str, Any], where: str) -> None:
        self.options(row, "options", where)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return (str(line["question"]).strip() + "\nOptions:\n" + "\n".join(self.options(line, "options"))
                + RECALL_POST_PROMPT)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return self.judged(score_spatial_video(df, aggregate="pooled", group="question_type"), judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "pooled", "groups": ["question_type"]}


class VsiSuperCount(_Rules, SpatialVideoDataset):
    """VsiSuperCount_<d>mins, without its streaming rows (module docstring)."""

    repo_id: ClassVar[str] = "nyu-visionx/VSI-SUPER-Count"
    layout: ClassVar[str] = "the videos of the duration's zips (e.g. 10mins*.zip) unpacked in place"
    columns: ClassVar[tuple[str, ...]] = ("index", "video", "question", "question_type", "answer")
    answer_columns: tuple[str, ...] = ("answer", "question_type")
    notes: tuple[str, ...] = (NOTE_FRAMES_SUPER, NO_JUDGE_NOTE,
                              "the *_streaming rows are left out, as VLMEvalKit leaves them out")

    def keep_row(self, row: dict[str, Any]) -> bool:
        return "_streaming" not in str(row["question_type"])

    def prompt_text(self, line: dict[str, Any]) -> str:
        return COUNT_PRE_PROMPT + str(line["question"]).strip() + COUNT_POST_PROMPT

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        types = tuple(sorted({str(t) for t in df["question_type"]}))
        return self.judged(score_spatial_video(df, aggregate="per_type", numeric_types=types), judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "per_type", "numbers": "MRA over 0.50..0.95"}
