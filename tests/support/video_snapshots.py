"""Miniature snapshots of the video benchmarks, in the layouts VLMEvalKit leaves on disk, with generated videos.

- `write_videomme(root, rows)`: lmms-lab/Video-MME after VLMEvalKit's first run: `Video-MME.tsv` (its columns,
  `candidates` as the Python list literal pandas writes) and `video/<videoID>.mp4`. (The parquet needs pyarrow,
  which this environment lacks; VLMEvalKit's TSV holds the same rows.)
- `write_mvbench(root, items)`: OpenGVLab/MVBench with its videos unzipped: `json/<task>.json` for all 20 tasks
  (tasks not given hold no question) and each item's video at its task's folder; Episodic Reasoning's clips are
  folders of numbered JPEG frames.
- `write_mvbench_mp4(root, items)`: the `video` branch: `test.json` {root, meta} and the mp4s.
- `hub_snapshot(cache, repo_id, revision)`: an empty snapshot folder in huggingface_hub's cache layout.
Videos are solid-colour frames (`tests.support.media_files.write_video`): frame i has palette colour i % 16, so a decoded
frame says which frame it was (`nearest_frame`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tests.support.media_files import frame_colour, write_video

MVBENCH_FILES = {
    "Action Sequence": ("action_sequence.json", "video/star/Charades_v1_480/"),
    "Action Prediction": ("action_prediction.json", "video/star/Charades_v1_480/"),
    "Action Antonym": ("action_antonym.json", "video/ssv2_video/"),
    "Fine-grained Action": ("fine_grained_action.json", "video/Moments_in_Time_Raw/videos/"),
    "Unexpected Action": ("unexpected_action.json", "video/FunQA_test/test/"),
    "Object Existence": ("object_existence.json", "video/clevrer/video_validation/"),
    "Object Interaction": ("object_interaction.json", "video/star/Charades_v1_480/"),
    "Object Shuffle": ("object_shuffle.json", "video/perception/videos/"),
    "Moving Direction": ("moving_direction.json", "video/clevrer/video_validation/"),
    "Action Localization": ("action_localization.json", "video/sta/sta_video/"),
    "Scene Transition": ("scene_transition.json", "video/scene_qa/video/"),
    "Action Count": ("action_count.json", "video/perception/videos/"),
    "Moving Count": ("moving_count.json", "video/clevrer/video_validation/"),
    "Moving Attribute": ("moving_attribute.json", "video/clevrer/video_validation/"),
    "State Change": ("state_change.json", "video/perception/videos/"),
    "Fine-grained Pose": ("fine_grained_pose.json", "video/nturgbd/"),
    "Character Order": ("character_order.json", "video/perception/videos/"),
    "Egocentric Navigation": ("egocentric_navigation.json", "video/vlnqa/"),
    "Episodic Reasoning": ("episodic_reasoning.json", "video/tvqa/frames_fps3_hq/"),
    "Counterfactual Inference": ("counterfactual_inference.json", "video/clevrer/video_validation/"),
}
FRAME_TASK = "Episodic Reasoning"


def write_clip(path: Path, frames: int, fps: float = 8.0, size: tuple[int, int] = (64, 48)) -> Path:
    """A video of solid palette-colour frames: mp4 (mp4v), or WebM (VP8) for a .webm name, as MVBench's ssv2 clips."""
    if path.suffix.lower() != ".webm":
        return write_video(path, frames=frames, fps=fps, size=size)
    import cv2

    width, height = size
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"VP80"), fps, (width, height))
    assert writer.isOpened(), "opencv cannot write VP8 WebM here"
    for i in range(frames):
        r, g, b = frame_colour(i)
        writer.write(np.full((height, width, 3), (b, g, r), dtype=np.uint8))
    writer.release()
    return path


def write_frames_folder(folder: Path, frames: int, size: tuple[int, int] = (64, 48)) -> Path:
    """A folder of JPEG frames 00001.jpg.. (frame k has palette colour k - 1)."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    width, height = size
    for k in range(1, frames + 1):
        r, g, b = frame_colour(k - 1)
        cv2.imwrite(str(folder / f"{k:05d}.jpg"), np.full((height, width, 3), (b, g, r), dtype=np.uint8))
    return folder


def write_videomme(root: Path, rows: list[dict[str, Any]], *, frames: dict[str, int] | None = None) -> Path:
    """rows: {video, duration, domain, sub_category, task_type, question, candidates (list), answer}; each distinct
    video is written with frames[video] frames (16 by default) at 8 fps."""
    import pandas as pd

    (root / "video").mkdir(parents=True, exist_ok=True)
    table = []
    for i, row in enumerate(rows):
        table.append({
            "index": i, "video": row["video"], "video_path": f"./video/{row['video']}.mp4",
            "duration": row["duration"], "domain": row["domain"], "candidates": repr(list(row["candidates"])),
            "sub_category": row["sub_category"], "task_type": row["task_type"],
            "subtitle_path": f"./subtitle/{row['video']}.srt", "question": row["question"], "answer": row["answer"],
        })  # fmt: skip
    pd.DataFrame(table).to_csv(root / "Video-MME.tsv", sep="\t", index=False)
    for video in dict.fromkeys(row["video"] for row in rows):
        write_video(root / "video" / f"{video}.mp4", frames=(frames or {}).get(video, 16), fps=8.0)
    return root


def write_mvbench(root: Path, items: dict[str, list[dict[str, Any]]], *, frames: int = 32) -> Path:
    """items: task -> list of {video, question, candidates, answer[, start, end]}. Videos have `frames` frames at
    8 fps; the frame task's clips are folders of 12 JPEG frames."""
    (root / "json").mkdir(parents=True, exist_ok=True)
    for task, (file, prefix) in MVBENCH_FILES.items():
        given = items.get(task, [])
        (root / "json" / file).write_text(json.dumps(given))
        for item in given:
            target = root / prefix / item["video"]
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if task == FRAME_TASK:
                write_frames_folder(target, 12)
            else:
                write_clip(target, frames=frames, fps=8.0)
    return root


def write_mvbench_mp4(root: Path, items: dict[str, list[dict[str, Any]]], folders: dict[str, str]) -> Path:
    """The `video` branch: test.json {root: task -> folder, meta: task -> items} and 16-frame mp4s."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "test.json").write_text(json.dumps({"root": folders, "meta": items}))
    for task, given in items.items():
        for item in given:
            target = root / folders[task] / item["video"]
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                write_clip(target, frames=16, fps=8.0)
    return root


def hub_snapshot(cache: Path, repo_id: str, revision: str = "main", commit: str = "0123abcd" * 5) -> Path:
    """An empty snapshot folder of a dataset repo in huggingface_hub's cache layout (refs/<revision> -> commit)."""
    base = cache / f"datasets--{repo_id.replace('/', '--')}"
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / revision).write_text(commit)
    folder = base / "snapshots" / commit
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_ONE_QUESTION = {"video": "one.mp4", "question": "What happens?", "candidates": ["sitting", "running"],
                 "answer": "running"}


def minimal_snapshot(target: str, folder: Path) -> Path | None:
    """The smallest snapshot (one question) the video catalog class `target` ("module:Class") builds from, for tests
    that build every catalog row (pass it as data_root); None for a class that is not one of these."""
    module, name = target.rsplit(":", 1)
    if module not in ("datasets_tsv.benchmarks.videomme", "datasets_tsv.benchmarks.mvbench",
                      "datasets_tsv.benchmarks.longvideobench"):
        return None
    if name == "VideoMME":
        row = {"video": "one", "duration": "short", "domain": "Knowledge", "sub_category": "Astronomy",
               "task_type": "Counting Problem", "question": "How many?", "candidates": ["A. 1", "B. 2", "C. 3", "D. 4"],
               "answer": "B"}
        return write_videomme(folder, [row])
    if name == "MVBench":
        return write_mvbench(folder, {"Action Antonym": [_ONE_QUESTION]})
    if name == "LongVideoBench":
        (folder / "videos").mkdir(parents=True, exist_ok=True)
        (folder / "lvb_val.json").write_text(json.dumps([{
            "video_id": "one", "video_path": "one.mp4", "question": "What happens?", "candidates": ["sitting", "running"],
            "correct_choice": 1, "duration_group": 15, "question_category": "S2E",
        }]))  # fmt: skip
        write_clip(folder / "videos" / "one.mp4", frames=16)
        return folder
    if name == "MVBenchMP4":
        return write_mvbench_mp4(folder, {"Action Count": [_ONE_QUESTION]}, {"Action Count": "perception/videos/"})
    return None
