"""`vlmkit run --mcq-mode logits|continuation`: MCQ and Y/N answered by likelihood, not generation (issue 28).

What a row is asked (`row_choices`): an MCQ row's options are its option letters (the A-Z columns it fills) and their
texts; a Y/N row's are "Yes" and "No". The prompt is the one generation uses; the model's likelihood methods
(vlm.local.generic.HFVisionModel) then score each option:
- logits: `option_logprobs_batch`, the log-probability of each option letter ("A", "Yes") written as the answer;
- continuation: `continuation_logprobs_batch`, the summed log-probability of each option's text (an MCQ option's
  text, "Yes"/"No") written after the prompt, with its token count; `normalised` divides it by the text's
  characters, as lm-evaluation-harness's acc_norm does.
The prediction is the letter of the highest figure (ties: the first option), so every scorer and circular evaluation
read it unchanged; continuation mode's prediction is the raw sum's argmax (lm-eval's acc) and `choice_norm` the
normalised one's (acc_norm). A record's `extra["likelihood"]` keeps the figures (`likelihood_extra`).

`scoring.likelihood` in results.json (`likelihood_summary`): the mode and, in continuation mode, `acc` and `acc_norm`
per row (a row scores when its chosen letter equals its answer; rows without an answer count as misses), fractions
of the rows that have a target, beside the benchmark's own headline (which may be circular).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from datasets_tsv.kinds.mcq import row_options
from vlmkit.core.errors import ConfigError
from vlmkit.core.model_calls import Generation

MCQ_MODES = ("generate", "logits", "continuation")
KINDS = ("mcq", "yorn")  # the kinds whose answer is one of a row's options
YORN_CHOICES = {"Yes": "Yes", "No": "No"}
METHODS = {"logits": "option_logprobs_batch", "continuation": "continuation_logprobs_batch"}


def check_mode(mode: str) -> None:
    """ConfigError (one line) for a mode that is not one of MCQ_MODES."""
    if mode not in MCQ_MODES:
        raise ConfigError(f"--mcq-mode must be one of {', '.join(MCQ_MODES)}, got {mode!r}")


def refusal(mode: str, *, dataset: str | None = None, kind: str | None = None, model: str | None = None,
            model_class: Any = None, served: bool = False) -> str | None:
    """Why this mode cannot run on a dataset (its kind) or a model (its class), in one line; None when it can."""
    if mode == "generate":
        return None
    if dataset is not None and kind not in KINDS:
        return (f"--mcq-mode {mode}: {dataset} is a {kind or 'untyped'} dataset; likelihood scoring takes MCQ or "
                "Y/N datasets only (use --mcq-mode generate)")
    if model is not None and served:
        return (f"--mcq-mode {mode}: {model} is a served model; the served letter mode (logprobs from the server) is "
                "not available yet: run a local model, or --mcq-mode generate")
    if model is not None and not callable(getattr(model_class, METHODS[mode], None)):
        name = getattr(model_class, "__name__", str(model_class))
        return (f"--mcq-mode {mode}: {model} ({name}) has no {METHODS[mode]}; likelihood scoring needs a local "
                "transformers model (use --mcq-mode generate)")
    return None


def row_choices(kind: str, line: Mapping[str, Any]) -> dict[str, str]:
    """letter -> text of the options a row is scored on: an MCQ row's filled option columns, Y/N's Yes and No.
    ValueError (naming the row) for an MCQ row with no option."""
    if kind == "yorn":
        return dict(YORN_CHOICES)
    choices = dict(row_options(dict(line)))
    if not choices:
        raise ValueError(f"row index {line.get('index')!r}: no option column (A, B, ...) is filled; nothing to score")
    return choices


def first_argmax(scores: Mapping[str, float]) -> str:
    """The key of the highest figure; on a tie the first in order (the first option)."""
    best: str | None = None
    for letter, value in scores.items():
        if best is None or value > scores[best]:
            best = letter
    if best is None:
        raise ValueError("no options were scored")
    return best


def likelihood_extra(mode: str, choices: Mapping[str, str], scored: Any) -> dict[str, Any]:
    """The record's `extra["likelihood"]` from what the model returned for one row.

    logits: scored is {letter: logprob}; continuation: [(summed logprob, tokens)] in the choices' order."""
    if mode == "logits":
        logprobs = {letter: float(scored[letter]) for letter in choices}
        return {"mode": mode, "logprobs": logprobs}
    if len(scored) != len(choices):
        raise ValueError(f"{len(choices)} options but {len(scored)} scores")
    logprobs = {letter: float(lp) for letter, (lp, _) in zip(choices, scored)}
    tokens = {letter: int(n) for letter, (_, n) in zip(choices, scored)}
    normalised = {letter: logprobs[letter] / len(text) if text else float("-inf") for letter, text in choices.items()}
    return {"mode": mode, "logprobs": logprobs, "tokens": tokens, "normalised": normalised,
            "choice_norm": first_argmax(normalised)}


def ask_batch(model: Any, mode: str, dataset: str) -> Callable[[Sequence[Any]], list[Generation | BaseException]]:
    """The batch call run_local makes instead of generate_batch: each task (`msgs`, `choices`) scored by the model's
    likelihood method; the answer is the argmax letter, the figures in `extra`. A row that fails gets its error."""

    def ask(tasks: Sequence[Any]) -> list[Generation | BaseException]:
        msgs = [t.msgs for t in tasks]
        if mode == "logits":
            scored = model.option_logprobs_batch(msgs, [list(t.choices) for t in tasks], dataset)
        else:
            scored = model.continuation_logprobs_batch(msgs, [list(t.choices.values()) for t in tasks], dataset)
        out: list[Generation | BaseException] = []
        for task, result in zip(tasks, scored):
            if isinstance(result, BaseException):
                out.append(result)
                continue
            try:
                extra = likelihood_extra(mode, task.choices, result)
                out.append(Generation(text=first_argmax(extra["logprobs"]), extra={"likelihood": extra}))
            except Exception as exc:  # a malformed score fails its row alone
                out.append(exc)
        return out

    return ask


def likelihood_summary(mode: str, records: Any, keys: Sequence[str], answers: Sequence[Any]) -> dict[str, Any]:
    """`scoring.likelihood`: the mode; in continuation mode per-row acc (raw argmax) and acc_norm (normalised argmax)
    over the rows with a target, from the records' `extra["likelihood"]`."""
    summary: dict[str, Any] = {"mode": mode}
    if mode != "continuation":
        return summary
    n = hits = hits_norm = 0
    for key, answer in zip(keys, answers):
        if answer is None or (isinstance(answer, float) and answer != answer) or str(answer).strip() == "":
            continue
        n += 1
        record = records.get(key)
        found = ((record or {}).get("extra") or {}).get("likelihood") if record and record.get("error") is None else None
        if not found:
            continue
        target = str(answer).strip().casefold()  # a Y/N answer may be written "yes"
        hits += first_argmax(found["logprobs"]).casefold() == target
        hits_norm += str(found.get("choice_norm")).casefold() == target
    summary.update(n=n, acc=hits / n if n else None, acc_norm=hits_norm / n if n else None)
    return summary
