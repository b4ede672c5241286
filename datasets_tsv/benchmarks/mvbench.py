"""MVBench and MVBench_MP4 (VLMEvalKit `MVBench`, `MVBench_MP4`, vlmeval/dataset/mvbench.py) from local snapshots
of OpenGVLab/MVBench.

MVBench (branch main) as VLMEvalKit leaves it: `json/<task>.json` for its 20 tasks (each a list of {video, question,
candidates, answer[, start, end]}) and the videos under `video/` (VLMEvalKit unzips `video/*.zip` in place), at
the task's prefix (`video/star/Charades_v1_480/`, `video/clevrer/video_validation/`, ...). Rows come task by task
in VLMEvalKit's order, `index` 0..n-1. Five tasks ask about seconds [start, end] of a longer clip (`bound`), and
Episodic Reasoning's clips are folders of numbered JPEG frames at 3 fps (`data_type` frame). A video missing at
its place is looked for under `video/data0613/` (the snapshot's supplement, which VLMEvalKit moves into place).
Frames (VLMEvalKit's frame path, `get_index`, at e8e78f05), for every model at its --nframe: N segment centres
`int(lo + seg / 2 + round(seg * k))`, `seg = (hi - lo) / N`, over the whole video (lo = 0, hi = last frame) or, for
a bounded row, `lo = max(0, round(start * fps))`, `hi = min(round(end * fps), last)` of the whole video; a frame
folder is numbered from 1 (`00001.jpg`) at 3 fps. The prompt's video part names a file in `$LMUData/videos/<name>/`
with that frame plan beside it (`SnapshotVideoDataset.prepared_video`); a model given the whole video (`video_url`)
gets what VLMEvalKit gives its video models: the bounded seconds cut to an mp4, the frame folder as an mp4 at 3 fps,
a GIF as an mp4 (`vlmkit.core.video_clips`). VLMEvalKit's MVBench refuses --fps (MVBench_MP4 takes it); so does
vlmkit's. VLMEvalKit's frames go through Stack/ToTorchFormatTensor (/255) and ToPILImage (*255), which gives every
byte back unchanged: no resizing, no normalisation.

MVBench_MP4 (branch `video`): `test.json` = {"root": {task: prefix}, "meta": {task: [items]}}, the videos already
cut, at `<prefix>/<video>`.

Prompt (VLMEvalKit's `build_prompt`): a system turn with MVBench's instruction, the user turn: the video,
"Question: <q>\nOptions:\n(A) ..\n(B) ..", "\nOnly give the best option.", then "Best option:(" as an assistant
turn, as VLMEvalKit marks it: a prefill the model continues (`vlmkit.core.message`; served models get
`continue_final_message`, which vLLM and SGLang honour, local models the chat template left open at it). The reply is
the continuation ("A) ..."), which VLMEvalKit's `check_ans` reads from its first word as vlmkit's scorer does.
Scoring: `vlmkit.scoring.kinds.video_mcq.score_mvbench`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.kinds.video_mcq import candidate_list, mvbench_target, score_mvbench
from vlmkit.core.video import FramePlan
from vlmkit.core.video_clips import clip_file, frames_folder_clip

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

SYSTEM = (
    "Carefully watch the video and pay attention to the cause and sequence of events, "
    "the detail and movement of objects, and the action and pose of persons. "
    "Based on your observations, select the best option that accurately addresses the question.\n"
)
ONLY_BEST = "\nOnly give the best option."
ANSWER_START = "Best option:("
FRAME_FPS = 3.0  # VLMEvalKit's frame_fps for frame-folder tasks

# (task, json file, folder under the snapshot, data type, bounded): VLMEvalKit's type_data_list, in its order
TASKS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("Action Sequence", "action_sequence.json", "video/star/Charades_v1_480/", "video", True),
    ("Action Prediction", "action_prediction.json", "video/star/Charades_v1_480/", "video", True),
    ("Action Antonym", "action_antonym.json", "video/ssv2_video/", "video", False),
    ("Fine-grained Action", "fine_grained_action.json", "video/Moments_in_Time_Raw/videos/", "video", False),
    ("Unexpected Action", "unexpected_action.json", "video/FunQA_test/test/", "video", False),
    ("Object Existence", "object_existence.json", "video/clevrer/video_validation/", "video", False),
    ("Object Interaction", "object_interaction.json", "video/star/Charades_v1_480/", "video", True),
    ("Object Shuffle", "object_shuffle.json", "video/perception/videos/", "video", False),
    ("Moving Direction", "moving_direction.json", "video/clevrer/video_validation/", "video", False),
    ("Action Localization", "action_localization.json", "video/sta/sta_video/", "video", True),
    ("Scene Transition", "scene_transition.json", "video/scene_qa/video/", "video", False),
    ("Action Count", "action_count.json", "video/perception/videos/", "video", False),
    ("Moving Count", "moving_count.json", "video/clevrer/video_validation/", "video", False),
    ("Moving Attribute", "moving_attribute.json", "video/clevrer/video_validation/", "video", False),
    ("State Change", "state_change.json", "video/perception/videos/", "video", False),
    ("Fine-grained Pose", "fine_grained_pose.json", "video/nturgbd/", "video", False),
    ("Character Order", "character_order.json", "video/perception/videos/", "video", False),
    ("Egocentric Navigation", "egocentric_navigation.json", "video/vlnqa/", "video", False),
    ("Episodic Reasoning", "episodic_reasoning.json", "video/tvqa/frames_fps3_hq/", "frame", True),
    ("Counterfactual Inference", "counterfactual_inference.json", "video/clevrer/video_validation/", "video", False),
)
NOTE_FRAMES = (
    "frames: VLMEvalKit's MVBench rule (N segment centres of the bounded frames, frame folders from 1 at 3 fps), at "
    "the model's --nframe, for every model (VLMEvalKit gives a video model the cut clip and lets it sample); read "
    "with opencv where VLMEvalKit uses decord, saved as JPEG at PIL's default quality as VLMEvalKit saves them"
)
REFUSE_FPS = "VLMEvalKit's MVBench samples by nframe only (it refuses fps); MVBench_MP4 takes --fps"


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def mvbench_row(task: str, prefix: str, data_type: str, bound: bool, item: Any, where: str) -> dict[str, Any]:
    """One question of an MVBench-style task JSON as a table row (one line naming the item and field where it is
    not one)."""
    snapshot_item(item, ("video", "question", "candidates", "answer"), where)
    candidates = item["candidates"]
    if not isinstance(candidates, list) or not candidates:
        raise DatasetError(f"{where}, field candidates: not a list of options")
    try:
        mvbench_target([str(c) for c in candidates], str(item["answer"]))
    except ValueError as exc:
        raise DatasetError(f"{where}, field answer: {exc}") from None
    start, end = _number(item.get("start")), _number(item.get("end"))
    if bound and (start is None or end is None):
        raise DatasetError(f"{where}: task {task} cuts its videos to [start, end], and this item has no "
                           f"{'start' if start is None else 'end'}")
    return {
        "task_type": task, "prefix": prefix, "data_type": data_type, "bound": bound, "start": start, "end": end,
        "video": str(item["video"]), "question": str(item["question"]), "answer": str(item["answer"]),
        "candidates": json.dumps([str(c) for c in candidates], ensure_ascii=False),
    }  # fmt: skip


class MVBench(SnapshotVideoDataset):
    repo_id: ClassVar[str] = "OpenGVLab/MVBench"
    layout: ClassVar[str] = "json/<task>.json for its 20 tasks and the videos unzipped under video/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        folder = self.snapshot / "json"
        if not folder.is_dir():
            raise DatasetError(f"{folder}: not found; expected the {self.repo_id} snapshot in {self.snapshot} "
                               f"({self.layout})")
        rows = []
        for task, file, prefix, data_type, bound in TASKS:
            path = folder / file
            items = snapshot_json(path, questions=True)
            rows += [mvbench_row(task, prefix, data_type, bound, item, f"{path}: item {i}")
                     for i, item in enumerate(items)]
        return self._indexed(rows)

    @staticmethod
    def _indexed(rows: list[dict[str, Any]]) -> pd.DataFrame:
        data = pd.DataFrame(rows)
        data.insert(0, "index", range(len(data)))
        return data

    def video_file(self, line: dict[str, Any]) -> Path:
        """<prefix>/<video>; else the same place under `video/data0613/`, the supplement VLMEvalKit moves into place."""
        path = self.snapshot / line["prefix"] / line["video"]
        prefix = Path(str(line["prefix"]))
        if not path.exists() and prefix.parts[:1] == ("video",):
            supplement = self.snapshot / "video" / "data0613" / prefix.relative_to("video") / line["video"]
            if supplement.exists():
                return supplement
        return path

    def missing_hint(self) -> str:
        video = self.snapshot / "video"
        return f"unzip the snapshot's video/*.zip into {video} (VLMEvalKit does this on its first run)"

    def question_text(self, line: dict[str, Any]) -> str:
        """`Question: <q>\\nOptions:\\n(A) ..\\n(B) ..` (VLMEvalKit's `qa_template`)."""
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        text = f"Question: {line['question']}\nOptions:\n"
        text += "".join(f"({chr(ord('A') + i)}) {c}\n" for i, c in enumerate(candidates))
        return text.rstrip()

    def clip(self, line: dict[str, Any]) -> Path:
        """The video file a model given the whole video gets for a row (module docstring)."""
        source = self.video_file(line)
        start, end = (_number(line.get("start")), _number(line.get("end"))) if line.get("bound") else (None, None)
        cache = self.cache_dir / str(line["prefix"]).strip("/")
        if line.get("data_type") == "frame":
            return frames_folder_clip(source, fps=FRAME_FPS, start=start, end=end, cache_dir=cache)
        return clip_file(source, start=start, end=end, cache_dir=cache)

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        """VLMEvalKit's `get_index` over the row's whole video (or frame folder), with its bound (module docstring)."""
        bound = None
        if line.get("bound"):
            start, end = _number(line.get("start")), _number(line.get("end"))
            bound = (start, end) if start is not None and end is not None else None
        frames = line.get("data_type") == "frame"
        return FramePlan(rule="segments", source=str(self.video_file(line).resolve()), bound=bound,
                         frame_rate=FRAME_FPS if frames else None, first=1 if frames else 0,
                         fps_rule=self.fps_rule, refuse_fps=REFUSE_FPS if self.fps_rule is None else "")

    fps_rule: ClassVar[str | None] = None
    refuses_fps: ClassVar[str | None] = REFUSE_FPS  # for a check before anything is asked (vlmkit.run.inputs)
    vlmevalkit_rule: ClassVar[str] = ("vlmevalkit MVBench get_index: frame int(lo + seg / 2 + round(seg * k)), "
                                      "seg = (hi - lo) / N, over [start, end] of the whole video")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        video = self.prepared_video(row, shown=self.clip(row))
        user = [video_part(video), text_part(self.question_text(row)), text_part(ONLY_BEST)]
        return [{"role": "system", "content": [text_part(SYSTEM)]}, {"role": "user", "content": user},
                {"role": "assistant", "content": [text_part(ANSWER_START)]}]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_mvbench(df, judge=judge, name=self.name)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mvbench", "rule": "MVBench check_ans, then VLMEvalKit's can_infer"}


class MVBenchMP4(MVBench):
    """MVBench_MP4: the `video` branch of OpenGVLab/MVBench, videos already cut to mp4 (module docstring)."""

    revision: ClassVar[str] = "video"
    fps_rule: ClassVar[str | None] = "vlmevalkit"
    refuses_fps: ClassVar[str | None] = None
    vlmevalkit_rule: ClassVar[str] = ("vlmevalkit MVBench_MP4: frame int(seg / 2 + round(seg * k)), seg = (n - 1) / N; "
                                      "fps: int(i * v / F)")
    layout: ClassVar[str] = "test.json and the mp4 videos under the folders its `root` names"

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / "test.json"
        if not path.is_file():
            raise DatasetError(f"{path}: not found; expected the {self.repo_id} snapshot of branch video in "
                               f"{self.snapshot} ({self.layout})")
        data = snapshot_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("root"), dict) or not isinstance(data.get("meta"),
                                                                                                   dict):
            raise DatasetError(f"{path}: expected an object with `root` and `meta`")
        rows = []
        for task, items in data["meta"].items():
            if task not in data["root"]:
                raise DatasetError(f"{path}: meta task {task!r} has no folder in `root`")
            if not isinstance(items, list):
                raise DatasetError(f"{path}: meta task {task!r}: expected a list of questions")
            rows += [mvbench_row(task, str(data["root"][task]), "video", False, item, f"{path}: {task} item {i}")
                     for i, item in enumerate(items)]
        return self._indexed(rows)

    def missing_hint(self) -> str:
        return f"expected {self.layout}"
