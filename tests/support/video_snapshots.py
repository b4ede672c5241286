"""Miniature snapshots of the video benchmarks, in the layouts VLMEvalKit leaves on disk, with generated videos.

- `write_videomme(root, rows)`: lmms-lab/Video-MME after VLMEvalKit's first run: `Video-MME.tsv` (its columns,
  `candidates` as the Python list literal pandas writes) and `video/<videoID>.mp4`. (The parquet needs pyarrow,
  which this environment lacks; VLMEvalKit's TSV holds the same rows.)
- `write_mvbench(root, items)`: OpenGVLab/MVBench with its videos unzipped: `json/<task>.json` for all 20 tasks
  (tasks not given hold no question) and each item's video at its task's folder; Episodic Reasoning's clips are
  folders of numbered JPEG frames.
- `write_mvbench_mp4(root, items)`: the `video` branch: `test.json` {root, meta} and the mp4s.
- `write_mlvu(root, items)`: MLVU/MVLU: `MLVU/json/<n>_<task>.json` for its 7 MCQ tasks and the videos at
  `MLVU/video/<n>_<task>/<video>` (indexed videos: `tests.support.indexed_video`).
- `write_tempcompass(root, items)`: lmms-lab/TempCompass after VLMEvalKit's first run: `multi-choice.json`,
  `caption_matching.json`, `yes_no.json` and `videos/<video_id>.mp4` (indexed videos).
- `write_video_holmes(root, items)`: TencentARC/Video-Holmes: `test_Video-Holmes.json` and `video/<video ID>.mp4`.
- `write_video_tt(root, rows)`: lmms-lab/video-tt after VLMEvalKit's first run: `Video-TT.tsv` (its columns) and
  `video/<video>.mp4` (indexed videos).
- `write_worldsense(root, data)`: honglyhly/WorldSense: `worldsense_qa.json` and `videos/<video>.mp4`.
- `write_v2p_bench(root, rows)`: gaotiexinqu/V2P-Bench after VLMEvalKit's first run: `V2P-Bench.tsv` (its columns),
  `videos/<video_path>` (indexed videos) and `frames/<frame_path>` (a PNG each).
- `write_mvu_eval(root, annos)`: MVU-Eval-Team/MVU-Eval-Data as VLMEvalKit leaves it: the annotation JSON and
  the videos flat beside it (indexed videos).
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
from tests.support.tsvs import write_tsv

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
# VLMEvalKit's MLVU_MCQ tasks in its order: json file `<n>_<task>.json`, videos under `MLVU/video/<n>_<task>/`
MLVU_TASKS = ("plotQA", "needle", "ego", "count", "order", "anomaly_reco", "topic_reasoning")


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


def write_mlvu(root: Path, items: dict[str, list[dict[str, Any]]], *, frames: dict[str, int] | None = None) -> Path:
    """items: task -> list of {video, duration, question, candidates, answer}; each video is an indexed video
    (frame i shows number i) with frames[video] frames (50 by default) at 10 fps."""
    from tests.support.indexed_video import write_indexed_video

    (root / "MLVU" / "json").mkdir(parents=True, exist_ok=True)
    for number, task in enumerate(MLVU_TASKS, start=1):
        given = items.get(task, [])
        (root / "MLVU" / "json" / f"{number}_{task}.json").write_text(json.dumps(given))
        for item in given:
            target = root / "MLVU" / "video" / f"{number}_{task}" / item["video"]
            if not target.exists():
                write_indexed_video(target, frames=(frames or {}).get(item["video"], 50), fps=10.0)
    return root


def write_tempcompass(root: Path, items: dict[str, list[dict[str, Any]]], *,
                      frames: dict[str, int] | None = None) -> Path:
    """items: task (multi-choice, caption_matching, yes_no) -> list of {video_id, question, answer, dim} (yes_no.json
    only when given); each video is an
    indexed video with frames[video_id] frames (50 by default) at 10 fps."""
    from tests.support.indexed_video import write_indexed_video

    (root / "videos").mkdir(parents=True, exist_ok=True)
    for task in ("multi-choice", "caption_matching", "yes_no"):
        if task not in items and task == "yes_no":
            continue
        (root / f"{task}.json").write_text(json.dumps(items.get(task, [])))
        for item in items.get(task, []):
            target = root / "videos" / f"{item['video_id']}.mp4"
            if not target.exists():
                write_indexed_video(target, frames=(frames or {}).get(item["video_id"], 50), fps=10.0)
    return root


def write_video_holmes(root: Path, items: list[dict[str, Any]], *, frames: dict[str, int] | None = None) -> Path:
    """items: VLMEvalKit's json records ({"video ID", "Question", "Options", "Answer", "Question Type", ...}); each
    video is an indexed video with frames[video ID] frames (50 by default) at 10 fps."""
    from tests.support.indexed_video import write_indexed_video

    (root / "video").mkdir(parents=True, exist_ok=True)
    (root / "test_Video-Holmes.json").write_text(json.dumps(items))
    for video in dict.fromkeys(item["video ID"] for item in items):
        target = root / "video" / f"{video}.mp4"
        if not target.exists():
            write_indexed_video(target, frames=(frames or {}).get(video, 50), fps=10.0)
    return root


def write_video_tt(root: Path, rows: list[dict[str, Any]], *, frames: dict[str, int] | None = None) -> Path:
    """rows: {video, duration, question, question_prompt, capability, answer}; VLMEvalKit's TSV columns; each video
    an indexed video with frames[video] frames (50 by default) at 10 fps."""
    import pandas as pd

    from tests.support.indexed_video import write_indexed_video

    (root / "video").mkdir(parents=True, exist_ok=True)
    table = [{"index": i, "video": r["video"], "video_path": f"./video/{r['video']}.mp4", "duration": r["duration"],
              "question": r["question"], "question_prompt": r["question_prompt"], "capability": r["capability"],
              "answer": r["answer"]} for i, r in enumerate(rows)]
    pd.DataFrame(table).to_csv(root / "Video-TT.tsv", sep="\t", index=False)
    for video in dict.fromkeys(r["video"] for r in rows):
        write_indexed_video(root / "video" / f"{video}.mp4", frames=(frames or {}).get(video, 50), fps=10.0)
    return root


def write_worldsense(root: Path, data: dict[str, Any], *, frames: dict[str, int] | None = None) -> Path:
    """data: VLMEvalKit's worldsense_qa.json object (video -> {duration, ..., task1: {...}}); each video an indexed
    video with frames[video] frames (50 by default) at 10 fps."""
    from tests.support.indexed_video import write_indexed_video

    (root / "videos").mkdir(parents=True, exist_ok=True)
    (root / "worldsense_qa.json").write_text(json.dumps(data))
    for video in data:
        write_indexed_video(root / "videos" / f"{video}.mp4", frames=(frames or {}).get(video, 50), fps=10.0)
    return root


def write_v2p_bench(root: Path, rows: list[dict[str, Any]], *, frames: dict[str, int] | None = None) -> Path:
    """rows: {video_path, frame_path, question, answer, dimension, duration}; VLMEvalKit's TSV columns; each video an
    indexed video with frames[video_path] frames (50 by default) at 10 fps, each frame_path a small PNG."""
    import pandas as pd
    from PIL import Image

    from tests.support.indexed_video import write_indexed_video

    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"index": i, **r} for i, r in enumerate(rows)]).to_csv(root / "V2P-Bench.tsv", sep="\t", index=False)
    for video in dict.fromkeys(r["video_path"] for r in rows):
        (root / "videos" / video).parent.mkdir(parents=True, exist_ok=True)
        write_indexed_video(root / "videos" / video, frames=(frames or {}).get(video, 50), fps=10.0)
    for frame in dict.fromkeys(r["frame_path"] for r in rows):
        (root / "frames" / frame).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (16, 16), (200, 30, 30)).save(root / "frames" / frame)
    return root


def write_mvu_eval(root: Path, annos: dict[str, Any], *, frames: dict[str, int] | None = None) -> Path:
    """annos: VLMEvalKit's annotation object (index -> {video_paths, question, options, ground_truth, task}); each
    video `<id>.mp4` flat in root (id: the path without .mp4 and video/), frames[id] frames (50 by default), 10 fps."""
    from tests.support.indexed_video import write_indexed_video

    root.mkdir(parents=True, exist_ok=True)
    (root / "MVU_Eval_QAs.json").write_text(json.dumps(annos))
    ids = [v.replace(".mp4", "").replace("video/", "") for item in annos.values() for v in item["video_paths"]]
    for video in dict.fromkeys(ids):
        write_indexed_video(root / f"{video}.mp4", frames=(frames or {}).get(video, 50), fps=10.0)
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
    made = _snapshot_from_benchmark_tests(module, name, target, folder)
    if made is not None:
        return made
    if module not in ("datasets_tsv.benchmarks.videomme", "datasets_tsv.benchmarks.mvbench",
                      "datasets_tsv.benchmarks.longvideobench", "datasets_tsv.benchmarks.mlvu",
                      "datasets_tsv.benchmarks.tempcompass", "datasets_tsv.benchmarks.video_holmes",
                      "datasets_tsv.benchmarks.video_tt", "datasets_tsv.benchmarks.worldsense",
                      "datasets_tsv.benchmarks.v2p_bench", "datasets_tsv.benchmarks.mvu_eval"):
        return _minimal_spatial_snapshot(name, folder)
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
    if name == "MLVUMCQ":
        return write_mlvu(folder, {"count": [{**_ONE_QUESTION, "duration": 5.0}]}, frames={"one.mp4": 16})
    if name == "TempCompassMCQ":
        item = {"video_id": "one", "question": "What happens?\nA. sitting\nB. running", "answer": "B. running",
                "dim": "action"}
        return write_tempcompass(folder, {"multi-choice": [item]}, frames={"one": 16})
    if name == "TempCompassYorN":
        item = {"video_id": "one", "question": "Is the man running?", "answer": "yes", "dim": "action"}
        return write_tempcompass(folder, {"yes_no": [item]}, frames={"one": 16})
    if name == "VideoHolmes":
        item = {"video ID": "one", "Question": "What happens?", "Options": {"A": "sitting", "B": "running"},
                "Answer": "B", "Question ID": "1", "Question Type": "SR"}
        return write_video_holmes(folder, [item], frames={"one": 16})
    if name == "VideoTT":
        row = {"video": "one", "duration": 1.6, "question": "What happens?",
               "question_prompt": "A. sitting\nB. running", "capability": "Plot Attribute", "answer": "B"}
        return write_video_tt(folder, [row], frames={"one": 16})
    if name == "WorldSense":
        task = {"question": "What happens?", "candidates": ["A. sitting", "B. running"], "answer": "B",
                "task_domain": "Recognition", "task_type": "Action Recognition"}
        return write_worldsense(folder, {"one": {"duration": "<1min", "domain": "Sports", "sub_category": "Football",
                                                 "audio_class": ["Speech"], "video_caption": "", "task1": task}},
                                frames={"one": 16})
    if name == "V2PBench":
        row = {"video_path": "MVBench/one.mp4", "frame_path": "one.png", "question": "What happens?\nA. sitting\n"
               "B. running", "answer": "B", "dimension": 1, "duration": 1.6}
        return write_v2p_bench(folder, [row], frames={"MVBench/one.mp4": 16})
    if name == "MVUEval":
        item = {"video_paths": ["video/one.mp4"], "question": "What happens?", "options": ["A. sitting", "B. running"],
                "ground_truth": "B", "task": "Counting"}
        return write_mvu_eval(folder, {"0": item}, frames={"one": 16})
    if name == "MVBenchMP4":
        return write_mvbench_mp4(folder, {"Action Count": [_ONE_QUESTION]}, {"Action Count": "perception/videos/"})
    return None


_SPATIAL_OPTIONS = "['A. left', 'B. right']"
_SPATIAL_ROWS = {  # class -> (its video's path in the snapshot, the TSV row's own fields)
    "VsiBench": ("arkitscenes/one.mp4", {"question_type": "route_planning", "candidates": _SPATIAL_OPTIONS}),
    "VsiSuperRecall": ("10mins/one.mp4", {"question_type": "recall", "options": _SPATIAL_OPTIONS}),
    "VsiSuperCount": ("10mins/one.mp4", {"question_type": "count", "answer": "3"}),
    "STIBench": ("videos/one.mp4", {"time_start": 0, "time_end": 1, "options": "['left', 'right']",
                                    "task_type": "Spatial Relation"}),
    "DSRBench": ("raw_data/dsr-bench/one.mp4", {"options": _SPATIAL_OPTIONS, "task_type": "abs_dir"}),
    "SiteBenchVideo": ("videos/one.mp4", {"candidates": "['left', 'right']", "category": "counting & existence"}),
}


def _minimal_spatial_snapshot(name: str, folder: Path) -> Path | None:
    """The one-question snapshot of a spatial video class (datasets_tsv.benchmarks.{vsi_bench, sti_bench, dsr_bench,
    sitebench_video, revsi, mmsi_video}); the EASI TSV is named after the folder (the catalog test names the folder
    after the row, and these classes read `<snapshot>/<name>.tsv`). None for any other class."""
    if name == "ReVSI":
        write_tsv(folder / "all_frame.tsv", [{"scene_id": "one", "question": "Where is it?",
                                              "question_type": "route_planning", "ground_truth": "A",
                                              "options": _SPATIAL_OPTIONS}])
        (folder / "revsi_videos" / "all_frame").mkdir(parents=True, exist_ok=True)
        write_clip(folder / "revsi_videos" / "all_frame" / "one.mp4", frames=16)
        return folder
    if name == "MMSIVideoBench":
        write_tsv(folder / f"{folder.name}.tsv", [{
            "index": 0, "system_prompt": "", "task_prompt": "", "user_prompt": "<video> Where is it?",
            "format_prompt": "", "image_path": "[['frames/one/00001.jpg']]", "video_fps": 1.0, "ref_images": "[]",
            "answer": "A", "task_type": "Planning", "sub_task_type": "Planning"}])
        write_frames_folder(folder / "frames" / "one", frames=1)
        return folder
    if name not in _SPATIAL_ROWS:
        return None
    video, fields = _SPATIAL_ROWS[name]
    column = "video_path" if name == "SiteBenchVideo" else "video"
    row = {"index": 0, "question": "Where is it?", "answer": "A", **fields,
           column: video.removeprefix("raw_data/dsr-bench/")}
    write_tsv(folder / f"{folder.name}.tsv", [row])
    (folder / video).parent.mkdir(parents=True, exist_ok=True)
    write_clip(folder / video, frames=16)
    return folder


def _snapshot_from_benchmark_tests(module: str, name: str, target: str, folder: Path) -> Path | None:
    """The one-question snapshots that the benchmark test modules write in each benchmark's real layout (imported
    here, when asked, so that a new benchmark's layout is written once, beside its own tests)."""
    from tests.datasets_tsv.benchmarks import (test_av_speakerbench, test_cgbench_mcq, test_egoexobench,
                                               test_mvtamperbench, test_omtgbench, test_qbench_video,
                                               test_videomme_v2, test_videommmu)
    from tests.datasets_tsv.benchmarks.test_mmbench_video import minimal_judged_snapshot

    made = minimal_judged_snapshot(target, folder)
    if made is not None:
        return made
    if module == "datasets_tsv.benchmarks.cgbench_mcq":
        return test_cgbench_mcq.write_one_question(
            folder, "cgbench_mini.json" if name == "CGBenchMCQGroundingMini" else "cgbench.json")
    one = {"datasets_tsv.benchmarks.mvtamperbench": test_mvtamperbench.write_one_question,
           "datasets_tsv.benchmarks.videomme_v2": test_videomme_v2.write_one_question,
           "datasets_tsv.benchmarks.qbench_video": test_qbench_video.write_one_question,
           "datasets_tsv.benchmarks.av_speakerbench": test_av_speakerbench.write_one_question,
           "datasets_tsv.benchmarks.omtgbench": test_omtgbench.write_one_question,
           "datasets_tsv.benchmarks.videommmu": test_videommmu.write_one_question,
           "datasets_tsv.benchmarks.egoexobench": test_egoexobench.write_one_question}
    return one[module](folder) if module in one else None
