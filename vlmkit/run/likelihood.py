"""`vlmkit run --mcq-mode logits|continuation|ppl`: rows answered by likelihood, not generation (issue 28).

What a row is asked (`row_choices`): an MCQ row's options are its option letters (the A-Z columns it fills) and their
texts; a Y/N row's are "Yes" and "No". The prompt is the one generation uses; the model's likelihood methods
(vlm.local.generic.HFVisionModel; vlm.local.vllm_engine.VLLMModel for --backend vllm) then score each option:
- logits: `option_logprobs_batch`, the log-probability of each option letter ("A", "Yes") written as the answer;
- continuation: `continuation_logprobs_batch`, the summed log-probability of each option's text (an MCQ option's
  text, "Yes"/"No") written after the prompt, with its token count; `normalised` divides it by the text's
  characters, as lm-evaluation-harness's acc_norm does.
The prediction is the letter of the highest figure (ties: the first option), so every scorer and circular evaluation
read it unchanged; continuation mode's prediction is the raw sum's argmax (lm-eval's acc) and `choice_norm` the
normalised one's (acc_norm). A record's `extra["likelihood"]` keeps the figures (`likelihood_extra`).

Served models (`--mcq-mode logits` only; vlm.api.letter_logprobs): each row is asked for one token with its
top_logprobs, `--nproc` rows at once (`served_ask_batch`); the first row is asked alone first (`run_served`), and a
server that gives no log-probabilities stops the pair in one line before any other row is asked. A letter absent from
the server's top list scores -inf: the record keeps null for it and names it in `missing`. Continuation and ppl are
refused for served models in one line (chat servers give no log-probabilities of the prompt's own tokens).

Perplexity (`--mcq-mode ppl`; decided: one flag says how rows are answered, and perplexity is the third likelihood
reading, so it is a value of the same flag rather than a second flag): for QA and caption datasets (PPL_KINDS) on a
local model, each row's reference answers (`answer`, a list literal for captions: every reference) are scored as
continuations of the prompt; the row's perplexity is exp of its token-weighted mean negative log-likelihood, and the
overall figure exp of the token-weighted mean over every scored row (`perplexity_summary`, `perplexity_result`: the
headline, lower is better). The row's prediction is its perplexity written as text; its figures are in `extra`.

`scoring.likelihood` in results.json (`likelihood_summary`): the mode and, in continuation mode, `acc` and `acc_norm`
per row (a row scores when its chosen letter equals its answer; rows without an answer count as misses), fractions
of the rows that have a target, beside the benchmark's own headline (which may be circular).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from datasets_tsv.kinds.mcq import row_options
from vlm.api.letter_logprobs import NO_LOGPROBS, LetterLogprobs, ask_letters_batch
from vlmkit.core.errors import ConfigError
from vlmkit.core.model_calls import Generation, ModelCallError
from vlmkit.run.failures import RunStopped, with_hint

MCQ_MODES = ("generate", "logits", "continuation", "ppl")
KINDS = ("mcq", "yorn")  # the kinds whose answer is one of a row's options
PPL_KINDS = ("qa", "caption")  # the kinds whose answer is a text to take the perplexity of (custom QA, captions)
YORN_CHOICES = {"Yes": "Yes", "No": "No"}
METHODS = {"logits": "option_logprobs_batch", "continuation": "continuation_logprobs_batch",
           "ppl": "continuation_logprobs_batch"}


def check_mode(mode: str) -> None:
    """ConfigError (one line) for a mode that is not one of MCQ_MODES."""
    if mode not in MCQ_MODES:
        raise ConfigError(f"--mcq-mode must be one of {', '.join(MCQ_MODES)}, got {mode!r}")


def refusal(mode: str, *, dataset: str | None = None, kind: str | None = None, model: str | None = None,
            model_class: Any = None, served: bool = False) -> str | None:
    """Why this mode cannot run on a dataset (its kind) or a model (its class), in one line; None when it can."""
    if mode == "generate":
        return None
    if dataset is not None and mode == "ppl" and kind not in PPL_KINDS:
        return (f"--mcq-mode ppl: {dataset} is a {kind or 'untyped'} dataset; perplexity takes QA or caption datasets "
                "(an answer text per row; use --mcq-mode generate)")
    if dataset is not None and mode != "ppl" and kind not in KINDS:
        return (f"--mcq-mode {mode}: {dataset} is a {kind or 'untyped'} dataset; likelihood scoring takes MCQ or "
                "Y/N datasets only (use --mcq-mode generate)")
    if model is not None and served and mode != "logits":
        return (f"--mcq-mode {mode}: {model} is a served model, and chat servers give no log-probabilities of the "
                "prompt's own tokens: use --mcq-mode logits (the first token's top_logprobs), a local model, or "
                "--mcq-mode generate")
    if model is not None and served:
        return None  # the letter mode through the server's top_logprobs (vlm.api.letter_logprobs)
    if model is not None and not callable(getattr(model_class, METHODS[mode], None)):
        name = getattr(model_class, "__name__", str(model_class))
        return (f"--mcq-mode {mode}: {model} ({name}) has no {METHODS[mode]}; likelihood scoring needs a local "
                "transformers model (use --mcq-mode generate)")
    return None


def row_choices(kind: str, line: Mapping[str, Any]) -> dict[str, str]:
    """letter -> text of the options a row is scored on: an MCQ row's filled option columns, Y/N's Yes and No; for a
    QA or caption row (--mcq-mode ppl) its references, keyed "1", "2", ... ValueError (naming the row) for an MCQ row
    with no option; DataError for a QA/caption row with no answer text."""
    if kind == "yorn":
        return dict(YORN_CHOICES)
    if kind in PPL_KINDS:
        from vlmkit.scoring.kinds.caption import caption_references  # a list literal or one text; blanks dropped

        refs = caption_references(line.get("answer"), f"row index {line.get('index')!r}, field answer")
        return {str(i): ref for i, ref in enumerate(refs, 1)}
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
    if mode == "ppl":
        return perplexity_extra(choices, scored)
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
        elif mode == "ppl":
            scored = model.continuation_logprobs_batch(msgs, [list(t.choices.values()) for t in tasks], dataset)
            return [r if isinstance(r, BaseException) else _guarded(lambda r=r, t=t: _ppl_generation(t.choices, r))
                    for t, r in zip(tasks, scored)]
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
    over the rows with a target, from the records' `extra["likelihood"]`; in ppl mode `perplexity_summary`; in the
    letter mode through a server, how many rows had an option outside its top list (`rows_with_unlisted_options`)."""
    if mode == "ppl":
        return perplexity_summary(records, keys)
    summary: dict[str, Any] = {"mode": mode}
    if mode != "continuation":
        unlisted = sum(bool((_found(records.get(key)) or {}).get("missing")) for key in keys)
        if unlisted:  # a served model's top list left some option out: its figure is unknown (scored -inf)
            summary["rows_with_unlisted_options"] = unlisted
        return summary
    n = hits = hits_norm = 0
    for key, answer in zip(keys, answers):
        if answer is None or (isinstance(answer, float) and answer != answer) or str(answer).strip() == "":
            continue
        n += 1
        found = _found(records.get(key))
        if not found:
            continue
        target = str(answer).strip().casefold()  # a Y/N answer may be written "yes"
        hits += first_argmax(found["logprobs"]).casefold() == target
        hits_norm += str(found.get("choice_norm")).casefold() == target
    summary.update(n=n, acc=hits / n if n else None, acc_norm=hits_norm / n if n else None)
    return summary


def _found(record: Any) -> dict[str, Any] | None:
    """A record's `extra["likelihood"]`, None for a failed record or one without it."""
    if not record or record.get("error") is not None:
        return None
    found = (record.get("extra") or {}).get("likelihood")
    return found if isinstance(found, dict) else None


# ------------------------------------------------------------------------------------------------------ perplexity

def _guarded(make: Callable[[], Generation]) -> Generation | BaseException:
    try:
        return make()
    except Exception as exc:  # a malformed score fails its row alone
        return exc


def perplexity_extra(references: Mapping[str, str], scored: Sequence[tuple[float, int]]) -> dict[str, Any]:
    """A ppl row's `extra["likelihood"]`: each reference's summed log-probability and token count, and the row's
    token-weighted figures over all of them (`nll` per token, `ppl` = exp(nll))."""
    if len(scored) != len(references):
        raise ValueError(f"{len(references)} references but {len(scored)} scores")
    logprobs = {key: float(lp) for key, (lp, _) in zip(references, scored)}
    tokens = {key: int(n) for key, (_, n) in zip(references, scored)}
    total = sum(tokens.values())
    if total <= 0:
        raise ValueError("the references have no tokens to take a perplexity of")
    nll = -sum(logprobs.values()) / total
    return {"mode": "ppl", "logprobs": logprobs, "tokens": tokens, "nll": nll, "ppl": _exp(nll)}


def _exp(nll: float) -> float:
    """exp(nll), inf past what a float holds (a model that finds the text impossible)."""
    return math.exp(nll) if nll < 709 else math.inf


def _ppl_generation(references: Mapping[str, str], scored: Sequence[tuple[float, int]]) -> Generation:
    extra = perplexity_extra(references, scored)
    return Generation(text=f"{extra['ppl']:.6g}", extra={"likelihood": extra})


def _ppl_figures(records: Any, keys: Sequence[str]) -> tuple[list[tuple[str, float, int]], int]:
    """(key, summed log-probability, tokens) of each scored ppl row, and how many rows had none."""
    rows: list[tuple[str, float, int]] = []
    unscored = 0
    for key in keys:
        found = _found(records.get(key))
        if not found or found.get("mode") != "ppl":
            unscored += 1
            continue
        rows.append((key, sum(v for v in found["logprobs"].values() if v is not None), sum(found["tokens"].values())))
    return rows, unscored


def perplexity_summary(records: Any, keys: Sequence[str]) -> dict[str, Any]:
    """`scoring.likelihood` of a ppl run: rows scored, tokens, the token-weighted mean negative log-likelihood and its
    exp (the perplexity over every scored row, each token counting once), and the rows without a figure."""
    rows, unscored = _ppl_figures(records, keys)
    tokens = sum(n for _, _, n in rows)
    nll = -sum(lp for _, lp, _ in rows) / tokens if tokens else None
    return {"mode": "ppl", "rows": len(rows), "unscored": unscored, "tokens": tokens, "nll": nll,
            "ppl": _exp(nll) if nll is not None else None}


def perplexity_result(records: Any, keys: Sequence[str]) -> Any:
    """The EvalResult of a ppl run (what the runner writes instead of the dataset's own scoring, whose metrics read
    generated text): `ppl` the headline (lower is better), `nll` per token, `tokens`; per-sample `ppl` and `nll`."""
    import pandas as pd

    from vlmkit.scoring.ids import POINTS
    from vlmkit.scoring.result import EvalResult
    from vlmkit.scoring.scales import Scale

    rows, unscored = _ppl_figures(records, keys)
    summary = perplexity_summary(records, keys)
    per_sample = pd.DataFrame({"index": [k for k, _, _ in rows],
                               "nll": [-lp / n if n else None for _, lp, n in rows],
                               "ppl": [_exp(-lp / n) if n else None for _, lp, n in rows]})
    metrics = {"ppl": summary["ppl"], "nll": summary["nll"], "tokens": float(summary["tokens"])}
    if summary["ppl"] is None:
        metrics = {}
    return EvalResult(
        scorer="perplexity", metrics=metrics, primary="ppl", per_sample=per_sample,
        counts={"total": len(keys), "scored": len(rows), "inference_errors": unscored},
        notes=["perplexity of the answer text given the prompt: exp of the token-weighted mean negative "
               "log-likelihood over every scored row (lower is better)"],
        scale=Scale(POINTS, higher_is_better=False),
    )


# ------------------------------------------------------------------------------------------------- served letters

def served_extra(choices: Mapping[str, str], scored: LetterLogprobs) -> dict[str, Any]:
    """A served row's `extra["likelihood"]`: each option's figure (null where the server's top list did not name it:
    -inf for the argmax), the options missing, the lowest figure listed, the token the server wrote."""
    return {"mode": "logits", "source": "top_logprobs",
            "logprobs": {k: (v if math.isfinite(v) else None) for k, v in scored.logprobs.items() if k in choices},
            "missing": list(scored.missing), "floor": scored.floor, "first_token": scored.first_token,
            "listed": scored.listed}


def served_ask_batch(model: Any, dataset: str, workers: int) -> Callable[[Sequence[Any]], list[Generation | BaseException]]:
    """The batch call for a served model in the letter mode: each task's letters read from the server's
    top_logprobs (vlm.api.letter_logprobs), `workers` requests at once; the answer is the argmax letter."""

    def ask(tasks: Sequence[Any]) -> list[Generation | BaseException]:
        scored = ask_letters_batch(model, [t.msgs for t in tasks], [list(t.choices) for t in tasks], dataset, workers)
        out: list[Generation | BaseException] = []
        for task, result in zip(tasks, scored):
            if isinstance(result, BaseException):
                out.append(result)
                continue
            letter = first_argmax({k: result.logprobs[k] for k in task.choices})
            out.append(Generation(text=letter, usage=result.usage, latency_ms=result.latency_ms,
                                  extra={"likelihood": served_extra(task.choices, result)}))
        return out

    return ask


def run_served(model: Any, tasks: Sequence[Any], journal: Any, *, dataset: str, nproc: int, desc: str,
               progress: bool = True) -> int:
    """The letter mode on a served model (what the runner calls instead of run_api): the first task is asked alone,
    and a server that gives no log-probabilities, or refuses the request in a way every row would meet (HTTP 400,
    401, 403, 404, 422), stops the pair (RunStopped, one line) before any other row is asked;
    then every task, `nproc` at once, journalled as they come (the first one's answer is not asked again). Returns
    the error count."""
    from vlmkit.core.contracts import model_view
    from vlmkit.run.inference import run_local

    tasks = list(tasks)
    if not tasks:
        return 0
    inner = model_view(model).inner
    ask = served_ask_batch(inner, dataset, max(1, nproc))
    first = ask(tasks[:1])[0]
    if isinstance(first, ModelCallError) and (first.kind == NO_LOGPROBS or first.fatal):
        # no logprobs, or a refusal every row would meet again (a wrong model id, a refused key): one line, now
        raise RunStopped(with_hint(f"stopped before asking anything else: {first}"))

    def ask_once(batch: Sequence[Any]) -> list[Generation | BaseException]:
        fresh = [t for t in batch if t is not tasks[0]]
        answers = iter(ask(fresh) if fresh else [])
        return [first if t is tasks[0] else next(answers) for t in batch]

    return run_local(model, tasks, journal, dataset=dataset, batch_size=max(1, nproc) * 4, desc=desc,
                     progress=progress, by_length=False, ask=ask_once)
