"""MVTamperBench, MVTamperBenchStart and MVTamperBenchEnd (VLMEvalKit `MVTamperBench`, vlmeval/dataset/tamperbench.py
at e8e78f05) from local snapshots of Srikant86/MVTamperBench, Srikant86/MVTamperBenchStart and
Srikant86/MVTamperBenchEnd.

The snapshot as VLMEvalKit reads it: MVBench's layout (`json/<task>.json`, the videos unzipped under `video/` at the
task's prefix, a missing one looked for under `video/data0613/`), for 19 of MVBench's tasks (no Fine-grained Pose;
Episodic Reasoning's clips are videos under `video/tvqa/frames_fps3/`), each item with a `tamper_type` (`original`,
`masking`, ...) and a Yes/No answer among its candidates. Rows come task by task in VLMEvalKit's order, `index`
0..n-1; as VLMEvalKit's `generate_tsv` does, an item whose video is not in the snapshot is left out (`info()
["left_out"]` counts them; a snapshot with none of its videos is an error naming the folder).

Frames (VLMEvalKit's frame path: MVBench's `get_index` with no bound, `read_video`): N segment centres
`int(seg / 2 + round(seg * k))`, `seg = (n - 1) / N`, over the whole video, at the model's --nframe (VLMEvalKit's
names: MVTamperBench_8frame, ...). VLMEvalKit refuses --fps here; so does vlmkit. A model given the whole video
(`video_url`) gets the file itself (VLMEvalKit converts WebM to mp4 first).
Prompt (VLMEvalKit's `build_prompt`): a system turn "Carefully watch the video and pay attention to the cause and
sequence of events, " (its SYS, cut short there), the user turn: "Question: <q>\\nOptions:\\n(A) ..\\n(B) ..", then
the video (the question comes first here, unlike MVBench), "\\nOnly give the best option.", and "Best option:(" as an
assistant turn (a prefill, as for MVBench).
Scoring: `vlmkit.scoring.benchmarks.mvtamperbench`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.mvtamperbench import score_mvtamperbench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.mvbench import ANSWER_START, ONLY_BEST, MVBench, mvbench_row
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import snapshot_json, text_part, video_part

SYSTEM = "Carefully watch the video and pay attention to the cause and sequence of events, "

# (task, json file, folder under the snapshot): VLMEvalKit's MVTamperBench type_data_list, in its order; every task
# is data type `video` with no bound there
TASKS: tuple[tuple[str, str, str], ...] = (
    ("Action Sequence", "action_sequence.json", "video/star/Charades_v1_480/"),
    ("Action Prediction", "action_prediction.json", "video/star/Charades_v1_480/"),
    ("Action Antonym", "action_antonym.json", "video/ssv2_video/"),
    ("Fine-grained Action", "fine_grained_action.json", "video/Moments_in_Time_Raw/videos/"),
    ("Unexpected Action", "unexpected_action.json", "video/FunQA_test/test/"),
    ("Object Existence", "object_existence.json", "video/clevrer/video_validation/"),
    ("Object Interaction", "object_interaction.json", "video/star/Charades_v1_480/"),
    ("Object Shuffle", "object_shuffle.json", "video/perception/videos/"),
    ("Moving Direction", "moving_direction.json", "video/clevrer/video_validation/"),
    ("Action Localization", "action_localization.json", "video/sta/sta_video/"),
    ("Scene Transition", "scene_transition.json", "video/scene_qa/video/"),
    ("Action Count", "action_count.json", "video/perception/videos/"),
    ("Moving Count", "moving_count.json", "video/clevrer/video_validation/"),
    ("Moving Attribute", "moving_attribute.json", "video/clevrer/video_validation/"),
    ("State Change", "state_change.json", "video/perception/videos/"),
    ("Character Order", "character_order.json", "video/perception/videos/"),
    ("Egocentric Navigation", "egocentric_navigation.json", "video/vlnqa/"),
    ("Episodic Reasoning", "episodic_reasoning.json", "video/tvqa/frames_fps3/"),
    ("Counterfactual Inference", "counterfactual_inference.json", "video/clevrer/video_validation/"),
)
NOTE_FRAMES = (
    "frames: VLMEvalKit's MVTamperBench rule (MVBench's get_index with no bound: N segment centres of the whole "
    "video) at the model's --nframe, for every model (VLMEvalKit gives a video model the file, WebM converted to mp4); "
    "read with opencv where VLMEvalKit uses decord; --fps is refused, as VLMEvalKit refuses it"
)
NOTE_LEFT_OUT = ("items whose video is not in the snapshot are left out, as VLMEvalKit's generate_tsv leaves them "
                 "out (info()['left_out'] counts them)")
REFUSE_FPS = "VLMEvalKit's MVTamperBench samples by nframe only (it refuses fps)"


class MVTamperBench(MVBench):
    """MVTamperBench from a local snapshot (module docstring); MVTamperBenchStart/End differ in the repository."""

    repo_id: ClassVar[str] = "Srikant86/MVTamperBench"
    layout: ClassVar[str] = "json/<task>.json for its 19 tasks and the videos unzipped under video/"
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_LEFT_OUT)
    fps_rule: ClassVar[str | None] = None
    refuses_fps: ClassVar[str | None] = REFUSE_FPS
    vlmevalkit_rule: ClassVar[str] = ("vlmevalkit MVTamperBench get_index: frame int(seg / 2 + round(seg * k)), "
                                      "seg = (n - 1) / N, over the whole video")
    left_out: int = 0

    def _read_table(self) -> pd.DataFrame:
        folder = self.snapshot / "json"
        if not folder.is_dir():
            raise DatasetError(f"{folder}: not found; expected the {self.repo_id} snapshot in {self.snapshot} "
                               f"({self.layout})")
        rows: list[dict[str, Any]] = []
        for task, file, prefix in TASKS:
            path = folder / file
            items = snapshot_json(path, questions=True)
            for i, item in enumerate(items):
                where = f"{path}: item {i}"
                row = mvbench_row(task, prefix, "video", False, item, where)
                if not item.get("tamper_type"):
                    raise DatasetError(f"{where}, field tamper_type: missing")
                if not self.video_file(row).exists():
                    self.left_out += 1
                    continue
                tamper = str(item["tamper_type"])
                rows.append({**row, "tamper_type": tamper, "task_tamper_type": f"{task}_{tamper}"})
        if not rows and self.left_out:
            raise DatasetError(f"{self.snapshot / 'video'}: none of the {self.left_out} questions' videos is there; "
                               f"{self.missing_hint()}")
        return self._indexed(rows)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        video = self.prepared_video(row, shown=self.clip(row))
        user = [text_part(self.question_text(row)), video_part(video), text_part(ONLY_BEST)]
        return [{"role": "system", "content": [text_part(SYSTEM)]}, {"role": "user", "content": user},
                {"role": "assistant", "content": [text_part(ANSWER_START)]}]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_mvtamperbench(df, judge=judge, name=self.name)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mvtamperbench", "rule": "MVBench check_ans, then VLMEvalKit's can_infer"}

    def info(self) -> dict[str, Any]:
        return {**super().info(), "left_out": self.left_out}


class MVTamperBenchStart(MVTamperBench):
    repo_id: ClassVar[str] = "Srikant86/MVTamperBenchStart"


class MVTamperBenchEnd(MVTamperBench):
    repo_id: ClassVar[str] = "Srikant86/MVTamperBenchEnd"

