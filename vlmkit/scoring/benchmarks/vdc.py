"""VDC's scorer, and the caption-QA scoring Video_MMLU_CAP shares with it (VLMEvalKit `VDC.evaluate`,
`Video_MMLU_CAP.evaluate`, utils/vdc.py and utils/video_mmlu.py at e8e78f05).

The model writes a caption; each caption row carries a list of {question, answer}. For every question the judge is
asked twice, as VLMEvalKit asks it: (1) with `SYSTEM_ANSWER` (system) and `USER_ANSWER` (the caption and the
question) it answers the question from the caption; (2) with the benchmark's scoring system text (VDC's
`SYSTEM_SCORE`; Video-MMLU's in vlmkit.scoring.benchmarks.video_mmlu) and MovieChat1k's yes/score text
(vlmkit.scoring.benchmarks.moviechat.judge_prompt: the question, the correct answer, the judge's answer) it judges
that answer, read as MovieChat1k's verdicts are (a dict with `pred` and `score`; literals only, never eval()).
Temperature 0, one ask each.

Figures per question (`verdict_figures`): `Overall` and one per group (VDC: caption_type short, detailed,
background, main_object, camera; Video-MMLU: discipline), the share of questions judged `yes` (a question without a
verdict counts as not correct: no caption, an unread reply, a failed call), and `score/...`, the mean 0-5 score of
the questions with one.

Where VLMEvalKit cannot be followed: its evaluate keys both judge stages by the caption row's `index`, which every
question of a row shares, so each row keeps one answer and one verdict (whichever of its questions' calls finished
last in its thread pool), and the verdict of a row's question is asked with another question's answer. Its figures
therefore depend on thread timing; vlmkit judges every question with its own answer and gives no VLMEvalKit figure
(a note says why). The model's prompt there is `random.choice` of a list (unseeded); vlmkit picks from the same
list by a choice seeded with the row's index (`caption_prompt`).
"""

from __future__ import annotations

import ast
import random
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.moviechat import judge_prompt as verdict_prompt
from vlmkit.scoring.benchmarks.moviechat import read_verdict, verdict_columns, verdict_figures, verdict_result
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult

__all__ = ["CAPTION_PROMPTS", "SYSTEM_ANSWER", "SYSTEM_SCORE", "USER_ANSWER", "caption_prompt", "caption_questions",
           "score_caption_qa", "score_vdc"]

SCORER = "vdc"
CAPTION_TYPES = ("short", "detailed", "background", "main_object", "camera")
SYSTEM_SCORE = """You are an intelligent chatbot designed for evaluating the correctness of generative outputs for question-answer pairs.
Your task is to compare the predicted answer with the correct answer and determine if they match meaningfully. Here's how you can accomplish the task:
------
##INSTRUCTIONS:
- Focus on the meaningful match between the predicted answer and the correct answer.
- Consider synonyms or paraphrases as valid matches.
- Evaluate the correctness of the prediction compared to the answer.
"""  # noqa: E501

SYSTEM_ANSWER = """You are an intelligent chatbot designed for providing accurate answers to questions related to the content based on a detailed description of a video or image.
Here's how you can accomplish the task:
------
##INSTRUCTIONS:
- Read the detailed description carefully.
- Answer the question only based on the detailed description.
- The answer should be a short sentence or phrase.
"""  # noqa: E501

USER_ANSWER = """Please provide accurate answers to questions related to the content based on a detailed description of a video or image:

detailed description: {pred_cap}
question: {q}

DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide short but accurate answer."""  # noqa: E501

# VLMEvalKit's prompt lists (vlmeval/dataset/vdc.py), by caption type; any other type takes the camera list
_SHORT: tuple[str, ...] = (
    "Write a one-sentence summary of the video.",
    "Summarize the video in one concise sentence.",
    "Provide a brief description of the video in one sentence.",
    "Describe the main action in the video in one sentence.",
    "What is the video about? Summarize it in one sentence.",
    "In one sentence, summarize the key visual elements of the video.",
    "Provide a one-sentence summary that captures the main subject and action in the video.",
    "Write a concise one-sentence description that encapsulates the essence of the video.",
    "Describe the main theme or action of the video in a single sentence.",
    "What is happening in the video? Provide a one-sentence summary.",
    "Given these frames, write a brief one-sentence summary that captures the essence of the video's visual and artistic style.",
    "Summarize the key visual and thematic elements of the video in one concise sentence.",
    "Provide a one-sentence description that highlights the main subject and action depicted in the video.",
    "In one sentence, describe the primary visual and artistic elements of the video.",
    "Write a concise one-sentence summary that encapsulates the main action and visual style of the video.",
    "Briefly one-sentence Summary of the visual, Photographic and artistic style.",
)  # noqa: E501

_DETAILED: tuple[str, ...] = (
    "The images are given containing equally spaced video frames. Please imagine the video based on the sequence of frames, and provide a faithfully detailed description of this video in more than three sentences.",
    "You are given a sequence of equally spaced video frames. Based on these frames, imagine the full video and provide a detailed description of what is happening in more than three sentences.",
    "The following set contains equally spaced video frames. Imagine the video from which these frames were taken and describe it in detail in at least three sentences.",
    "Below are equally spaced frames from a video. Use these frames to visualize the entire video and provide a detailed description in more than three sentences.",
    "A sequence of equally spaced video frames is presented. Please imagine the full video and write a faithfully detailed description of the events in more than three sentences.",
    "The images provided include equally spaced frames from a video. Based on these frames, imagine the video and describe it comprehensively in at least three sentences.",
    "You are given equally spaced frames from a video. Use these frames to envision the entire video and provide a detailed description of the events in more than three sentences.",
    "The sequence includes equally spaced frames from a video. Imagine the full video based on these frames and provide a detailed description in more than three sentences.",
    "The provided images contain equally spaced frames from a video. Visualize the video from these frames and describe it in detail in more than three sentences.",
    "Here are equally spaced frames from a video. Based on these frames, imagine the video and provide a detailed, faithful description of it in more than three sentences.",
    "The set of images includes equally spaced video frames. Please imagine the video these frames come from and describe it comprehensively in at least three sentences.",
    "Describe the video based on these frames in a few sentences.",
    "What is happening in the video shown in these frames?",
    "Explain the video using these frames.",
    "Imagine the video from these frames and describe it in detail in a few sentences.",
    "Based on these frames, provide a narrative of the video in more than three sentences.",
    "Describe the events in the video shown by these frames in at least three sentences.",
    "Visualize the video from these frames and explain what is happening in more than three sentences.",
    "Describe the sequence of events in the video depicted by these frames in a detailed manner.",
    "Given these equally spaced frames, imagine the entire video and provide a detailed description of the events, including the setting, characters, and actions, in more than three sentences.",
    "Visualize the video based on these frames and write a comprehensive description of what happens, describing the beginning, middle, and end in at least three sentences.",
    "Using these frames as a reference, imagine the full video and provide a thorough description of the plot, including key details and actions, in more than three sentences.",
    "Based on the sequence of these frames, describe the entire video in detail, mentioning important aspects such as the context, movements, and transitions in more than three sentences.",
    "Imagine the video that corresponds to these frames and provide an elaborate description, covering the storyline, visual elements, and any notable features in at least three sentences.",
)  # noqa: E501

_BACKGROUND: tuple[str, ...] = (
    "The images are given containing equally spaced video frames.Summary of the background. This should also include the objects, location, weather, and time.",
    "Describe the background, including objects, location, weather, and time.",
    "Summarize the background setting of the video based on these frames.",
    "What is the environment like in these frames?",
    "Describe the location and weather in these frames.",
    "What background objects and settings are visible in these frames?",
    "Summarize the background of the video, including details about the location, objects, weather, and time.",
    "Describe the environment shown in these frames, covering objects, location, weather, and time.",
    "Provide a detailed background description based on these frames, mentioning objects, location, weather, and time.",
    "Explain the setting of the video, focusing on the background elements like objects, location, weather, and time.",
    "Describe the overall environment in these frames, including details about objects, location, weather, and time.",
    "Given these equally spaced frames, provide a comprehensive background description, covering the objects, location, weather, and time of day.",
    "Imagine the environment from these frames and write a detailed description of the background, including objects, location, weather, and time.",
    "Based on these frames, describe the setting in detail, mentioning the objects present, the specific location, the weather conditions, and the time of day.",
    "Provide an elaborate background description based on these frames, covering all aspects of the environment such as objects, location, weather, and time.",
    "Using these frames as a reference, give a thorough description of the background, including details about the objects, location, weather, and time.",
)  # noqa: E501

_MAIN_OBJECT: tuple[str, ...] = (
    "Description of the main subject actions or status sequence. This suggests including the main subjects (person, object, animal, or none) and their attributes, their action, their position, and movements during the video frames.",
    "Describe the main subject's actions and movements.",
    "What is the main object doing in these frames?",
    "Summarize the primary subject's attributes and actions.",
    "Describe the main subject's position and movements.",
    "What actions does the main object take in these frames?",
    "Describe the main subject, including their attributes and movements throughout the video.",
    "Provide a detailed description of the main object's actions and positions in these frames.",
    "Summarize the main subject's actions, attributes, and movements during the video.",
    "Describe the primary subject's movements and actions in detail.",
    "What are the main object's attributes and how do they move throughout the video?",
    "Given these equally spaced frames, provide a comprehensive description of the main subject, including their attributes, actions, positions, and movements.",
    "Describe the primary object or subject in the video, detailing their attributes, actions, positions, and movements in these frames.",
    "Based on these frames, provide a detailed description of the main subject, including their attributes, actions, positions, and how they navigate through the video.",
    "Using these frames, describe the main subject's attributes, actions, and movements, detailing their positions and how they interact with the environment.",
    "Provide an elaborate description of the main object in the video, covering their attributes, actions, positions, and movements as shown in these frames.",
)  # noqa: E501

_CAMERA: tuple[str, ...] = (
    "Summary of the view shot, camera movement and changes in shooting angles in the sequence of video frames.",
    "Describe the camera movements in these frames.",
    "What are the camera angles and movements throughout the video?",
    "Summarize the camera actions and perspectives.",
    "Describe any camera zooms, pans, or angle changes.",
    "What camera movements are present in these frames?",
    "Describe the camera's movements, including pans, zooms, and angle changes in these frames.",
    "Summarize the camera actions and changes in shooting angles during the video.",
    "Provide a detailed description of the camera's movements and perspectives.",
    "Describe the camera's actions and how it follows the main subject.",
    "What are the camera movements and angle shifts in these frames?",
    "Given these equally spaced frames, provide a comprehensive description of the camera's movements, including any pans, zooms, and changes in shooting angles.",
    "Describe the camera's movements and angles in detail, explaining how it follows the main subject and changes perspectives.",
    "Based on these frames, provide a detailed description of the camera's actions, including any pans, zooms, angle shifts, and how it captures the scene.",
    "Using these frames, describe the camera's movements, including its tracking of the main subject, changes in angles, and any zooms or pans.",
    "Provide an elaborate description of the camera movements, covering pans, zooms, and changes in shooting angles as shown in these frames.",
)  # noqa: E501

CAPTION_PROMPTS: dict[str, tuple[str, ...]] = {
    "short": _SHORT, "detailed": _DETAILED, "background": _BACKGROUND, "main_object": _MAIN_OBJECT, "camera": _CAMERA,
}


def caption_prompt(prompts: Sequence[str], seed: str) -> str:
    """One of VLMEvalKit's prompts, chosen by a choice seeded with `seed` (the dataset name and row index)."""
    return random.Random(seed).choice(list(prompts))


def caption_questions(cell: Any, where: str) -> list[tuple[str, str]]:
    """A caption row's `question` cell: a list (or its Python literal) of {question, answer}; one line naming the
    row and field otherwise."""
    value = cell
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ValueError(f"{where}: not a list of {{question, answer}}") from None
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where}: not a list of {{question, answer}}")
    out = []
    for item in value:
        if not isinstance(item, dict) or "question" not in item or "answer" not in item:
            raise ValueError(f"{where}: an entry is not a {{question, answer}}: {item!r}")
        out.append((str(item["question"]), str(item["answer"])))
    return out


def score_caption_qa(df: pd.DataFrame, judge: Judge, *, group_column: str, groups: Sequence[str],
                     score_system: str, scorer: str, what: str) -> EvalResult:
    """The two judge stages over every question of every caption (module docstring). Columns: index, prediction,
    question (the list of {question, answer}), `group_column`. Rows whose group is outside `groups` count in no
    figure (as in VLMEvalKit)."""
    records, keys = keyed_records(df, ("index", "prediction", "question", group_column), what)
    items: list[tuple[int, str, str, str]] = []  # (row position, key, question, answer)
    for pos, (key, row) in enumerate(zip(keys, records)):
        for j, (q, a) in enumerate(caption_questions(row["question"], f"{what}: row index {row['index']}, "
                                                                      "field `question`")):
            items.append((pos, f"{key}#{j}", q, a))
    row_groups = [required_text(r, group_column, what).lower() for r in records]
    asked = [(pos, k, q, a) for pos, k, q, a in items if not failed_call(records[pos]["prediction"])]
    answers = judge_rounds(judge, {k: USER_ANSWER.format(pred_cap=str(records[pos]["prediction"]), q=q)
                                   for pos, k, q, _ in asked}, lambda _k, reply: reply,
                           system=SYSTEM_ANSWER) if asked else {}
    to_score = {k: verdict_prompt(q, a, answers[k].value or "") for _, k, q, a in asked
                if answers[k].error is None}
    verdicts_by_key = judge_rounds(judge, to_score, lambda _k, reply: read_verdict(reply),
                                   system=score_system) if to_score else {}
    verdicts, methods, item_groups = [], [], []
    for pos, k, _, _ in items:
        item_groups.append(row_groups[pos])
        outcome = verdicts_by_key.get(k)
        if k not in answers:
            methods.append(INFERENCE_ERROR)
        elif answers[k].error is not None or (outcome is not None and outcome.error is not None):
            methods.append(JUDGE_ERROR)
        else:
            methods.append(UNREAD if outcome is None or outcome.value is None else JUDGE)
        verdicts.append(outcome.value if outcome is not None else None)
    names = list(dict.fromkeys(g for g in item_groups if g in groups))
    metrics = verdict_figures(item_groups, verdicts, names, every_row=True)
    per_sample = pd.DataFrame({
        "index": [records[pos]["index"] for pos, *_ in items], "question": [q for _, _, q, _ in items],
        "group": item_groups, **verdict_columns(verdicts), "method": methods,
        "judge_answer": pd.Series([answers[k].last_reply if k in answers else None for _, k, _, _ in items],
                                  dtype=object),
    })  # fmt: skip
    counts = {"total": len(records), "questions": len(items), "scored": len(items), "by_judge": methods.count(JUDGE),
              "unread": methods.count(UNREAD), "judge_errors": methods.count(JUDGE_ERROR),
              "inference_errors": methods.count(INFERENCE_ERROR)}
    notes = [f"each caption's questions answered from the caption and then judged by {judge.name} with VLMEvalKit's "
             "texts; figures per question",
             "no VLMEvalKit figure: its evaluate keys both judge stages by the caption row's index, shared by the "
             "row's questions, so it keeps one answer and one verdict per row, whichever call finished last in its "
             "thread pool (its figures depend on thread timing)"]
    others = sorted({g for g in row_groups if g not in groups})
    if others:
        notes.append(f"rows of {group_column} {', '.join(others)} count in no figure (as in VLMEvalKit)")
    notes += method_notes(per_sample, {
        UNREAD: "the judge's verdict is not a dict with pred and score: no verdict",
        JUDGE_ERROR: "a judge call failed: no verdict this run, asked again on the next run",
        INFERENCE_ERROR: "no caption: its questions are not asked, no verdict",
    })
    return verdict_result(scorer, per_sample=per_sample, group_column=group_column, names=names, metrics=metrics,
                          counts=counts, notes=notes)


def score_vdc(df: pd.DataFrame, judge: Judge, *, what: str = "VDC") -> EvalResult:
    """VDC: caption QA by caption_type (module docstring)."""
    return score_caption_qa(df, judge, group_column="caption_type", groups=CAPTION_TYPES, score_system=SYSTEM_SCORE,
                            scorer=SCORER, what=what)
