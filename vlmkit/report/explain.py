"""`vlmkit report --explain RUN`: for one run, how far each difference from VLMEvalKit moves the score.

Four sections, each read from the run's results.json (and its predictions.jsonl for the judge):
- reading: vlmkit's headline against the figure VLMEvalKit would print for the same replies (`scoring.vlmevalkit`),
  the difference in points (percentage points on a fraction or percent scale), the rows the two read differently
  with both readings, and the figure's notes (NaN replies, rows counted twice, ...), with the pinned commit;
- prompt family: who wrote the prompts (`run.prompts_from`), the model's family and preset, and what VLMEvalKit does
  where results.json records it (`model.settings.preset.vlmeval_prompt`, `dataset.vlmevalkit_type` and
  `dataset.vlmevalkit_prompt` from the catalog, `run.vlmevalkit_prompts_from`);
- preset / generation settings: `model.settings` as run, and the preset values this run replaced;
- judge: the `judge` block, the scorer's counts of who read each row, and the headline without the judge where the
  files allow it (vlmkit.report.judge_effect).
What the files cannot tell is said plainly: a prompt or preset difference needs a rerun to be measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vlmkit.report.export import fixed_width
from vlmkit.report.judge_effect import judge_effect
from vlmkit.report.runs import Run
from vlmkit.report.table import display_value
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale

MOST_ROWS = 10  # differing rows printed unless --max-rows says otherwise
CELL_WIDTH = 40  # a reading longer than this is cut in the rows table
# model.settings keys that change answers, in the order shown (the rest, device or timeout, change none).
SETTING_KEYS = (
    "temperature", "top_p", "top_k", "do_sample", "max_tokens", "max_new_tokens", "repetition_penalty",
    "system_prompt", "img_max_side", "image_pixel_limits", "min_pixels", "max_pixels", "nframe", "fps", "video_mode",
    "extra_body", "generate_kwargs",
)  # fmt: skip
JUDGE_COUNTS = ("by_rule", "by_judge", "unread", "judge_errors", "judge_asked")


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    effect: str = "cannot be told from the files"  # how far this difference moves the headline, for the summary

    def text(self) -> str:
        return "\n".join([self.title, *(f"  {line}" for line in self.lines)])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def points_apart(a: float, b: float, scale: Scale | None) -> str:
    """a - b as a reader compares scores: percentage points on a fraction or percent scale, else the scale's own
    points (`+2.00 percentage points`)."""
    if scale is not None and scale.kind == FRACTION:
        return f"{(a - b) * 100:+.2f} percentage points"
    if scale is not None and scale.kind == PERCENT:
        return f"{a - b:+.2f} percentage points"
    return f"{a - b:+.2f} points" if scale is not None else f"{a - b:+g} (scale unknown)"


def _on_scale(value: float | None, scale: Scale | None) -> str:
    if value is None:
        return "-"
    return scale.format(value) if scale is not None else f"{value:g}"


def _cell(value: Any) -> str:
    text = "-" if value is None else str(value).replace("\n", " ")
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


# -- reading ----------------------------------------------------------------------------------------------------------
def reading(run: Run, most_rows: int | None = MOST_ROWS) -> Section:
    section = Section("Reading: vlmkit's answer reading against VLMEvalKit's rules, on the same replies")
    lines = section.lines
    block = run.vlmevalkit
    if run.value is None:
        lines.append(f"no scored figure (status {run.status}): nothing to compare")
        section.effect = "no scored figure"
        return section
    if block is None:
        lines.append(f"VLMEvalKit's figure: not computed (scorer `{run.scorer or '-'}` wrote no scoring.vlmevalkit "
                     "for this run), so the reading difference cannot be told from the files")
        section.effect = "cannot be told (VLMEvalKit's figure not computed for this run)"
        differs = (run.scoring.get("counts") or {}).get("differs_from_vlmevalkit")
        if isinstance(differs, int) and not isinstance(differs, bool):
            lines.append(f"the scorer counts {differs} row(s) VLMEvalKit's rules would read differently "
                         "(scoring.counts.differs_from_vlmevalkit)")
        return section
    lines.append(f"VLMEvalKit's code: {run.vlmevalkit_source}")
    name, theirs = run.vlmevalkit_metric, run.vlmevalkit_value
    scale = run.vlmevalkit_scale
    metrics = run.scoring.get("metrics") or {}
    ours = _number(metrics.get(name)) if name else None
    if name == run.metric:
        ours = run.value
    lines.append(f"vlmkit      {run.metric}: {display_value(run)}")
    if name != run.metric:
        lines.append(f"VLMEvalKit reports another headline, {name}; vlmkit's {name}: {_on_scale(ours, scale)}")
    lines.append(f"VLMEvalKit  {name}: {_on_scale(theirs, scale)}")
    if ours is not None and theirs is not None:
        section.effect = points_apart(ours, theirs, scale) + (f" (on {name})" if name != run.metric else "")
        lines.append(f"difference (vlmkit - VLMEvalKit) on {name}: {points_apart(ours, theirs, scale)}")
    else:
        lines.append("difference: cannot be told (one of the two figures is missing)")
    lines += _other_figures(run, name)
    lines += _differing_rows(run, block, most_rows)
    notes = block.get("notes") if isinstance(block.get("notes"), list) else []
    if notes:
        lines.append("notes:")
        lines += [f"  - {note}" for note in notes]
    return section


def _other_figures(run: Run, headline: str | None) -> list[str]:
    """The figures both report, other than the headline, whose values differ."""
    ours = run.scoring.get("metrics") or {}
    theirs = (run.vlmevalkit or {}).get("metrics")
    if not isinstance(theirs, dict):
        return []
    rows = []
    for name, value in theirs.items():
        a, b = _number(ours.get(name)), _number(value)
        if name == headline or a is None or b is None or a == b:
            continue
        scale = run.figure_scale(name)
        rows.append([name, _on_scale(a, scale), _on_scale(b, scale), points_apart(a, b, scale)])
    if not rows:
        return []
    table = fixed_width(["figure", "vlmkit", "VLMEvalKit", "difference"], rows, {1, 2})
    return ["other figures that differ:", *(f"  {line}" for line in table.splitlines())]


def _differing_rows(run: Run, block: dict[str, Any], most_rows: int | None) -> list[str]:
    count = run.vlmevalkit_differing
    listed = [r for r in block.get("rows") or [] if isinstance(r, dict)]
    of = f" of {run.n}" if run.n is not None else ""
    if count is None:
        count = len(listed)
    lines = [f"rows read differently: {count}{of}" + _who_scores_higher(listed)]
    if not listed:
        return lines
    shown = listed if most_rows is None else listed[:most_rows]
    scored = any("vlmkit_score" in r or "vlmevalkit_score" in r for r in shown)
    header = ["index", "vlmkit", "VLMEvalKit"] + (["vlmkit score", "VLMEvalKit score"] if scored else [])
    body = [[_cell(r.get("index")), _cell(r.get("vlmkit")), _cell(r.get("vlmevalkit"))]
            + ([_cell(r.get("vlmkit_score")), _cell(r.get("vlmevalkit_score"))] if scored else []) for r in shown]
    more = count - len(shown)
    lines.append(f"the first {len(shown)}, with both readings:" if more > 0 else "with both readings:")
    lines += [f"  {line}" for line in fixed_width(header, body, {3, 4} if scored else set()).splitlines()]
    if more > 0:
        lines.append(f"  ... and {more} more ({len(listed)} listed in results.json scoring.vlmevalkit.rows; "
                     "--max-rows 0 prints every one listed)")
    return lines


def _who_scores_higher(rows: list[dict[str, Any]]) -> str:
    pairs = [(_number(r.get("vlmkit_score")), _number(r.get("vlmevalkit_score"))) for r in rows]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        return ""
    higher = sum(a > b for a, b in pairs)
    lower = sum(a < b for a, b in pairs)
    return (f" (of the {len(pairs)} listed with scores: vlmkit scores higher on {higher}, VLMEvalKit on {lower}, "
            f"equal on {len(pairs) - higher - lower})")


# -- prompt family ----------------------------------------------------------------------------------------------------
def _settings(run: Run) -> dict[str, Any]:
    settings = run.results.model.get("settings")
    return settings if isinstance(settings, dict) else {}


def prompt_family(run: Run) -> Section:
    section = Section("Prompt family: who wrote the prompts")
    lines = section.lines
    block = run.results.run
    if "prompts_from" not in block:
        lines.append("this run: not recorded (results.json written before `run.prompts_from` was)")
    elif block["prompts_from"] is None:
        lines.append("this run: asked the model nothing (scored answers already journalled), so it wrote no prompt")
    elif block["prompts_from"] == "dataset":
        lines.append("this run: the benchmark's own prompt (run.prompts_from: dataset)")
    else:
        lines.append(f"this run: the model's own prompt, {block['prompts_from']} (run.prompts_from)")
    if block.get("prompt_style"):
        lines.append(f"--prompt-style {block['prompt_style']}")
    settings = _settings(run)
    family = settings.get("prompt_family")
    if isinstance(family, dict):
        own = family.get("own_prompts")
        lines.append(f"the model's prompt family: {family.get('name')}"
                     + {True: " (writes its own prompts for some benchmarks)",
                        False: " (no prompts of its own: the benchmark's prompt)"}.get(own, ""))
    preset = settings.get("preset")
    vlmeval_prompt = preset.get("vlmeval_prompt") if isinstance(preset, dict) else None
    if vlmeval_prompt == "dataset":
        lines.append(f"VLMEvalKit ({preset.get('vlmeval') or preset.get('name')}): the benchmark's prompt for every "
                     "dataset (preset vlmeval_prompt: dataset)")
    elif vlmeval_prompt == "model":
        lines.append(f"VLMEvalKit ({preset.get('vlmeval') or preset.get('name')}): its wrapper writes its own prompt "
                     "for some benchmarks (preset vlmeval_prompt: model)")
    dataset = run.results.dataset
    if dataset.get("vlmevalkit_type"):
        lines.append(f"VLMEvalKit's dataset TYPE: {dataset['vlmevalkit_type']} (what its model wrappers decide "
                     "their prompt from)")
    if dataset.get("vlmevalkit_prompt") == "dataset":
        lines.append("VLMEvalKit forces this benchmark's own prompt whatever the model (dataset.vlmevalkit_prompt)")
    if block.get("prompt_style") == "dataset" and vlmeval_prompt == "model":
        lines.append("this run forced the benchmark's prompt (--prompt-style dataset) where VLMEvalKit lets the "
                     "model's wrapper choose")
    theirs = block.get("vlmevalkit_prompts_from")
    if isinstance(theirs, str):
        same = theirs == block.get("prompts_from")
        lines.append(f"VLMEvalKit for this benchmark: {theirs} ({'the same' if same else 'not the same'} as this run)")
    else:
        lines.append("what VLMEvalKit would do for this benchmark: not recorded in results.json")
    lines.append("effect on the score: cannot be measured from the files; it needs a rerun with the other prompt "
                 "(--prompt-style dataset or model) and a comparison of the two runs (vlmkit report --diff A B)")
    section.effect = "needs a rerun to be measured"
    return section


# -- preset / generation settings -------------------------------------------------------------------------------------
def _shown(value: Any) -> str:
    return "unset" if value is None else repr(value) if isinstance(value, str) else str(value)


def generation_settings(run: Run) -> Section:
    section = Section("Preset / generation settings, as run")
    lines = section.lines
    settings = _settings(run)
    source = "model.settings"
    if not settings:
        settings, source = run.results.model.get("kwargs") or {}, "model.kwargs"
    found = [(key, settings[key]) for key in SETTING_KEYS if key in settings]
    if found:
        lines.append(f"{source}: " + ", ".join(f"{key} {_shown(value)}" for key, value in found))
    else:
        lines.append("no generation settings recorded in results.json")
    generation = settings.get("generation")
    if isinstance(generation, dict):
        passed = generation.get("passed")
        if isinstance(passed, dict) and passed:
            lines.append("passed to generate: " + ", ".join(f"{k} {_shown(v)}" for k, v in passed.items()))
        if generation.get("max_new_tokens_source"):
            lines.append(f"max_new_tokens from: {generation['max_new_tokens_source']}")
    family = settings.get("prompt_family")
    per_dataset = family.get("dataset_image_settings") if isinstance(family, dict) else None
    if isinstance(per_dataset, dict) and run.dataset in per_dataset:
        lines.append(f"the family's image settings for {run.dataset}: {per_dataset[run.dataset]}")
    lines += _preset_lines(settings.get("preset"), settings)
    lines.append("effect on the score: cannot be measured from the files; it needs a rerun with the other settings")
    section.effect = "needs a rerun to be measured"
    return section


def _preset_lines(preset: Any, settings: dict[str, Any]) -> list[str]:
    if not isinstance(preset, dict):
        return ["preset: none (no VLMEvalKit preset applies to this model; its settings are the ones above)"]
    values = preset.get("values") if isinstance(preset.get("values"), dict) else {}
    lines = [f"preset: {preset.get('name')} (VLMEvalKit's {preset.get('vlmeval') or 'wrapper defaults'}): "
             + (", ".join(f"{k} {_shown(v)}" for k, v in values.items()) or "no values")]
    overridden = [str(k) for k in preset.get("overridden") or []]
    if overridden:
        lines.append("this run replaced the preset's " + ", ".join(
            f"{k} ({_shown(values.get(k))} -> {_shown(settings.get(k))})" for k in overridden)
            + ": VLMEvalKit runs the preset's values")
    else:
        lines.append("this run kept every preset value (as VLMEvalKit runs it)")
    return lines


# -- judge ------------------------------------------------------------------------------------------------------------
def judge(run: Run) -> Section:
    section = Section("Judge: the rows an LLM judge decided")
    lines = section.lines
    block = run.results.judge
    judged_run = bool(block.get("name"))
    if judged_run:
        lines.append(f"judge: {block.get('name')}" + (f" at {block['base_url']}" if block.get("base_url") else "")
                     + "; " + ", ".join(f"{k.replace('_', ' ')} {block[k]}"
                                        for k in ("replies", "asked_this_run", "from_journal", "errors") if k in block))
    else:
        lines.append("no judge: rules alone" + (f" ({block['note']})" if block.get("note") else ""))
    counts = run.scoring.get("counts") or {}
    found = [(k, counts[k]) for k in JUDGE_COUNTS if k in counts]
    if found:
        lines.append("rows read: " + ", ".join(f"{k} {v}" for k, v in found) + " (scoring.counts)")
    effect = judge_effect(run, judged_run=judged_run)
    scale = run.scale
    if effect.why:
        lines.append(f"without the judge: cannot be told ({effect.why})")
    elif judged_run and run.value is not None and effect.without is not None:
        credit = f"{effect.judged_credit:g}"
        lines.append(f"without the judge: {_on_scale(effect.without, scale)} (rules alone: the {effect.judged} row(s) "
                     f"the judge read count as misses; they scored {credit} of {effect.judged})")
        section.effect = points_apart(run.value, effect.without, scale)
        lines.append(f"the judge moves the score by {section.effect}")
    elif effect.at_most is not None and run.value is not None:
        section.effect = f"no judge; one could add at most {points_apart(effect.at_most, run.value, scale)}"
        lines.append(f"a judge could add at most {points_apart(effect.at_most, run.value, scale)} "
                     f"({effect.unread} unread row(s) of {effect.rows}, each a miss now)")
    return section


def explain(run: Run, most_rows: int | None = MOST_ROWS) -> str:
    """The whole explanation of one run, as printed."""
    head = (f"{run.label}: {run.status}; {run.metric or '-'} {display_value(run) or '(no value)'}"
            + (f" ({run.scale.label()})" if run.scale else "") + f"\n{run.path}")
    sections = [reading(run, most_rows), prompt_family(run), generation_settings(run), judge(run)]
    summary = Section("How far each moves the score", [
        f"{name}: {section.effect}" for name, section in zip(("reading", "prompt family", "preset", "judge"), sections)
    ])
    return "\n\n".join([head, *(s.text() for s in sections), summary.text()])
