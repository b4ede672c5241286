"""VLMEvalKit's figure for Y/N benchmarks (vlmeval/dataset/image_yorn.py and utils/yorn.py at VLMEVALKIT_COMMIT),
computed on the replies vlmkit scored and kept beside vlmkit's (`EvalResult.vlmevalkit`).

VLMEvalKit reads each reply, as its xlsx round trip leaves it (an empty or `None` reply is the text `nan`), with its
Y/N rule (`vlmevalkit_yes_no`: the word yes without no, or the reverse); with a judge, every reply that rule leaves
Unknown goes to the judge (its prompt, 5 rounds at temperatures 0..2), replies vlmkit read by its own rules
included. A row is right when its `answer` cell equals the reading exactly (AMBER: ignoring case). The report
(MME, POPE, HallusionBench, AMBER, VSR, plain accuracy) is vlmkit's own, given these rows: the aggregation is the same
(tests/vlmkit/scoring/test_yorn_reports.py). A failed call is a miss on both sides and never listed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_cells_of
from vlmkit.scoring.common.choice_judge import YORN_TEMPERATURES, Judged, ask_judge, row_keys, yorn_judge_prompt
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.common.vlmevalkit_cells import NAN_TEXT, is_nan_cell, nan_note, vlmevalkit_texts
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

Rating = Callable[[pd.DataFrame, list[str]], tuple[dict[str, float], pd.DataFrame, str]]


def yorn_figure(
    df: pd.DataFrame,
    per_sample: pd.DataFrame,
    *,
    read: Callable[[Any], str],
    rate: Rating,
    judge: Judge | None,
    asked: Mapping[int, tuple[str, Judged]],
    ignore_case: bool,
    unknown: str,
) -> VlmevalkitFigure:
    """VLMEvalKit's figure. `read`: its Y/N rule; `rate(rows, notes)`: the report vlmkit computes from per-row
    `index`, `extracted`, `hit`, `target`; `asked`: vlmkit's own judge verdicts by row position, with the prompt each
    was asked with (reused where VLMEvalKit's prompt is the same); `ignore_case`: AMBER's answer comparison."""
    preds = df["prediction"].tolist()
    cells = vlmevalkit_cells_of(preds)
    answers = vlmevalkit_texts(df["answer"].tolist())
    extracted = [unknown if cell is None else read(str(cell)) for cell in cells]
    notes: list[str] = []
    if judge is not None:
        extracted, more = _judged(df, cells, extracted, judge, asked, read, unknown)
        if more:
            notes.append(
                f"{more} reply/replies VLMEvalKit's rule leaves Unknown and vlmkit read were asked of the judge for "
                "this figure (VLMEvalKit sends every such reply to its judge)"
            )
    hits, targets = [], []
    for cell, answer, got in zip(cells, answers, extracted, strict=True):
        targets.append(answer if answer in ("Yes", "No") else None)
        same = answer.lower() == got.lower() if ignore_case else answer == got
        hits.append(cell is not None and same)
    rows = pd.DataFrame({"index": df["index"].tolist(), "extracted": extracted, "hit": hits, "target": targets})
    metrics, _table, primary = rate(rows, [])
    differing: list[ReadingDifference] = []
    nan_rows = []
    mine = per_sample["extracted"].tolist()
    my_hits = per_sample["hit"].tolist()
    for pos, (index, pred, cell) in enumerate(zip(df["index"].tolist(), preds, cells, strict=True)):
        if cell is None:
            continue
        if mine[pos] != extracted[pos] or bool(my_hits[pos]) != hits[pos]:
            differing.append(ReadingDifference(index, mine[pos], extracted[pos], float(my_hits[pos]), float(hits[pos])))
            if is_nan_cell(cell) and str(pred).strip().lower() != NAN_TEXT:
                nan_rows.append(index)
    if nan_rows:
        notes.append(nan_note(nan_rows, "reads the reply given"))
    return VlmevalkitFigure(metrics=metrics, primary=primary, differing=differing, notes=notes)


def _judged(
    df: pd.DataFrame,
    cells: list[Any],
    extracted: list[str],
    judge: Judge,
    asked: Mapping[int, tuple[str, Judged]],
    read: Callable[[Any], str],
    unknown: str,
) -> tuple[list[str], int]:
    """The readings after VLMEvalKit's judge step, and how many rows had to be asked anew for it."""
    out = list(extracted)
    ask = [i for i, (cell, got) in enumerate(zip(cells, extracted, strict=True)) if cell is not None and got == unknown]
    if not ask or "question" not in df.columns:
        return out, 0
    questions = df["question"].tolist()
    prompts = {i: yorn_judge_prompt(cell_text(questions[i]) or "", str(cells[i])) for i in ask}
    fresh: dict[int, str] = {}
    for i in ask:
        known = asked.get(i)
        if known is not None and known[0] == prompts[i]:
            out[i] = known[1].value or unknown
        else:
            fresh[i] = prompts[i]
    if fresh:
        keys = row_keys([df["index"].iloc[i] for i in fresh])
        position = dict(zip(keys, fresh, strict=True))

        def read_reply(_key: str, reply: str) -> str | None:
            value = read(reply)
            return None if value == unknown else value

        verdicts = ask_judge(judge, {key: fresh[i] for key, i in position.items()}, read_reply, YORN_TEMPERATURES)
        for key, verdict in verdicts.items():
            out[position[key]] = verdict.value or unknown
    return out, len(fresh)
