"""Mutation testing of the core modules with mutmut 3 (3.8.1; `pip install mutmut==3.8.1`), one module at a time,
and a per-module table.

    nice -n 19 python tools/mutation_test.py [--only resume secrets ...] [--list] [--survivors] [--keep DIR]
                                             [--minutes N] [--recheck DIR [--retry-timeouts]]
                                             [--timeout-constant S]

For each module in `MODULES` the script copies the tracked tree (`git ls-files`, plus untracked files git does
not ignore) into a fresh temporary folder, writes mutmut's configuration into that copy's pyproject.toml (the
checkout itself is never configured or touched), and runs `mutmut run --max-children 1` there with only that
module mutated and only the test files that cover it selected. It then reads mutmut's per-file results and
prints one row per module: mutants, killed, survived, timeout, no tests (no selected test reaches the mutated
function), other (suspicious, segfault) and the share killed (killed / mutants). `--survivors` prints each
surviving mutant's diff (`mutmut show`), to kill it with a test or list it as equivalent. Too slow for CI: run it
by hand and copy the table into the README. `--minutes N` bounds each module's run: mutmut is stopped after N
minutes and the mutants it had not tried yet are counted as "not tried" (the share killed is then over the
mutants tried). `--recheck DIR` takes the copies an earlier `--keep DIR` run left, brings the checkout's current
tests into them and runs again only the mutants that survived there (or that no test reached): the row is then the
earlier run with those tried against the new tests (adding tests cannot revive a killed mutant; the source mutated
is the one the earlier run copied; mutmut maps each test to the functions it reaches once per test name, so a test
changed under its old name keeps its old map: give it a new name, or run afresh). `--timeout-constant S` gives each
mutant's tests S more seconds before the x10 timeout (see `write_config`); with `--recheck`, `--retry-timeouts`
tries the mutants that timed out again.

A module entry may name functions (mutmut's mangled names, `x_func` or `xǁClassǁmethod`) to mutate only part of
a file, e.g. only the retry policy of vlm/api/http.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# mutmut's exit-code meanings (mutmut/stats.py, 3.x).
KILLED_CODES = {1, 3, 37}
SURVIVED_CODES = {0}
TIMEOUT_CODES = {36, -24, 24, 152, 255}
NO_TESTS_CODES = {5, 33}  # no selected test reaches the mutated function


@dataclass(frozen=True)
class Target:
    key: str  # short name for --only
    path: str  # the module's file, relative to the repo root
    tests: tuple[str, ...]  # test files (or node ids) that cover it
    functions: tuple[str, ...] = field(default=())  # mangled function names to mutate; empty: the whole file
    part: str = ""  # what those functions are, for the table


# the MCQ scorer's tests: the answer reader, the kind and its VLMEvalKit figure are reached through the same runs
MCQ_TESTS: tuple[str, ...] = (
    "tests/vlmkit/scoring/test_scoring_mcq.py",
    "tests/vlmkit/scoring/test_answer_stress.py",
    "tests/vlmkit/scoring/test_choice_judge.py",
    "tests/vlmkit/scoring/test_mcq_reports.py",
    "tests/vlmkit/scoring/test_vlmevalkit_figure_mcq.py",
    "tests/datasets_tsv/kinds/test_prompted_mcq.py",
    "tests/vlmkit/scoring/test_choice_reading_mutants.py",
    "tests/vlmkit/scoring/test_mcq_mutants.py",
    "tests/vlmkit/scoring/test_mcq_figure_mutants.py",
)

# the image pass's own tests (images.py's parts beside image-refs)
IMAGE_PASS_TESTS: tuple[str, ...] = (
    "tests/datasets_tsv/io/test_tsv_images.py",
    "tests/datasets_tsv/io/test_tsv_image_pass_paths.py",
    "tests/datasets_tsv/io/test_image_chains.py",
    "tests/datasets_tsv/io/test_tsv_stale_images.py",
    "tests/datasets_tsv/io/test_tsv_single_read.py",
    "tests/datasets_tsv/io/test_images_mutants.py",
)

MODULES: tuple[Target, ...] = (
    Target(
        "resume",
        "vlmkit/run/resume.py",
        ("tests/vlmkit/run/test_journal_fingerprint.py", "tests/vlmkit/run/test_resume_identity.py"),
        (  # the fingerprint: what a journal's answers depend on
            "x_checkpoint_identity", "x_answer_kwargs", "x_run_fingerprint", "x_same_settings", "x__comparable",
            "x_differences",
        ),
        "fingerprint",
    ),
    Target(
        "secrets",
        "vlmkit/core/secrets.py",
        ("tests/vlmkit/core/test_secrets.py", "tests/vlmkit/core/test_secret_lines.py"),
    ),
    Target(
        "retry",
        "vlm/api/http.py",
        ("tests/vlm/api/test_retry_policy.py", "tests/vlm/api/test_api_model.py"),
        ("x_parse_retry_after", "xǁRetryPolicyǁdelay"),
        "retry policy",
    ),
    Target(
        "perf-metrics",
        "vlmkit/perf/metrics.py",
        (
            "tests/vlmkit/perf/test_perf_stats.py",
            "tests/vlmkit/perf/test_perf_figures.py",
            "tests/vlmkit/perf/test_perf_report.py",
        ),
    ),
    Target(
        "vqa",
        "vlmkit/scoring/kinds/vqa.py",
        (
            "tests/vlmkit/scoring/test_scoring_vqa.py",
            "tests/vlmkit/scoring/test_vqa_rules.py",
            "tests/vlmkit/scoring/test_reading_rules.py",
        ),
    ),
    Target(  # ANLS, moved out of vqa.py (one function for the VQA kind and VLMEvalKit's figure)
        "anls",
        "vlmkit/scoring/common/anls.py",
        (
            "tests/vlmkit/scoring/test_scoring_vqa.py",
            "tests/vlmkit/scoring/test_vqa_rules.py",
            "tests/vlmkit/scoring/test_vqa_vlmevalkit_mutants.py",
        ),
    ),
    Target(
        "yorn",
        "vlmkit/scoring/kinds/yorn.py",
        (
            "tests/vlmkit/scoring/test_scoring_yorn.py",
            "tests/vlmkit/scoring/test_answer_stress.py",
            "tests/vlmkit/scoring/test_reading_rules.py",
            "tests/vlmkit/scoring/test_yorn_reports.py",
            "tests/vlmkit/scoring/test_yorn_ratings.py",
        ),
    ),
    Target(
        "image-refs",
        "datasets_tsv/io/images.py",
        (
            "tests/datasets_tsv/io/test_tsv_images.py",
            "tests/datasets_tsv/io/test_tsv_image_pass_paths.py",
            "tests/datasets_tsv/io/test_image_chains.py",
            "tests/datasets_tsv/io/test_tsv_bad_input.py",
            "tests/datasets_tsv/io/test_tsv_reading.py",
            "tests/datasets_tsv/io/test_images_mutants.py",
        ),
        ("x__stream", "x__resolve_reference", "x__decode_records"),
        "reference pass",
    ),
    Target(
        "choice-reading",
        "vlmkit/scoring/common/choice_reading.py",
        MCQ_TESTS + ("tests/vlmkit/scoring/test_choice_reading_mutants2.py",),
    ),
    Target("mcq", "vlmkit/scoring/kinds/mcq.py", MCQ_TESTS),
    Target("mcq-figure", "vlmkit/scoring/kinds/mcq_figure.py", MCQ_TESTS),
    Target(
        "vlmevalkit-cells",
        "vlmkit/scoring/common/vlmevalkit_cells.py",
        (
            "tests/vlmkit/scoring/test_vlmevalkit_figure_vqa.py",
            "tests/vlmkit/scoring/test_vlmevalkit_figure_mcq.py",
            "tests/datasets_tsv/kinds/test_rule_vqa.py",
            "tests/datasets_tsv/kinds/test_regex_mcq.py",
            "tests/vlmkit/scoring/test_vlmevalkit_cells_mutants.py",
        ),
    ),
    Target(
        "rule-vqa",
        "vlmkit/scoring/kinds/rule_vqa.py",
        (
            "tests/datasets_tsv/kinds/test_rule_vqa.py",
            "tests/vlmkit/scoring/test_vlmevalkit_figure_vqa.py",
            "tests/vlmkit/scoring/test_rule_vqa_mutants.py",
        ),
    ),
    Target(
        "caption",
        "vlmkit/scoring/kinds/caption.py",
        ("tests/datasets_tsv/kinds/test_captions.py", "tests/vlmkit/scoring/test_caption_mutants.py"),
    ),
    Target(
        "regex-mcq",
        "vlmkit/scoring/kinds/regex_mcq.py",
        (
            "tests/datasets_tsv/kinds/test_regex_mcq.py",
            "tests/datasets_tsv/benchmarks/test_mme_realworld_lite.py",
            "tests/vlmkit/scoring/test_vlmevalkit_figure_mcq.py",
            "tests/vlmkit/scoring/test_regex_mcq_mutants.py",
            "tests/vlmkit/scoring/test_regex_mcq_mutants2.py",
        ),
    ),
    Target(
        "tsv-read",
        "datasets_tsv/io/tsv_read.py",
        (
            "tests/datasets_tsv/io/test_tsv_reading.py",
            "tests/datasets_tsv/io/test_tsv_long_fields.py",
            "tests/datasets_tsv/io/test_tsv_bad_input.py",
            "tests/datasets_tsv/io/test_tsv_table_rows.py",
            "tests/datasets_tsv/io/test_tsv_read_mutants.py",
            "tests/datasets_tsv/io/test_tsv_read_mutants2.py",
        ),
    ),
    Target(
        "download",
        "vlmkit/core/files.py",
        ("tests/vlmkit/core/test_files.py", "tests/datasets_tsv/io/test_tsv_download.py",
         "tests/vlmkit/core/test_files_mutants.py"),
        ("x_md5_of", "xǁHashedBlocksǁ__init__", "xǁHashedBlocksǁ_hash", "xǁHashedBlocksǁ_read",
         "xǁHashedBlocksǁ__iter__", "xǁHashedBlocksǁhexdigest", "x__fetch", "x_download_verified"),
        "MD5 and download checks",
    ),
    Target(  # not test_perf_hostile.py: its 24 s of real-time waits make every mutant that hangs the parser cost
        # minutes of timeout; the reader's framing is fed byte by byte in test_wire_mutants.py instead
        "wire",
        "vlmkit/perf/wire.py",
        ("tests/vlmkit/perf/test_perf_wire.py", "tests/vlmkit/perf/test_wire_mutants.py"),
        ("xǁConnectionǁ_feed", "xǁConnectionǁ_head", "x__chunk_size", "x__content_length", "x_request_bytes"),
        "response parsing",
    ),
    Target(
        "ccocr",
        "vlmkit/scoring/benchmarks/ccocr.py",
        ("tests/vlmkit/scoring/test_ccocr.py", "tests/vlmkit/scoring/test_ccocr_kie.py",
         "tests/vlmkit/scoring/test_ccocr_parsing.py", "tests/vlmkit/scoring/test_ccocr_mutants.py"),
    ),
    Target(
        "spatial-mcq",
        "vlmkit/scoring/benchmarks/spatial_mcq.py",
        ("tests/datasets_tsv/benchmarks/test_spatial_mcq.py", "tests/vlmkit/scoring/test_vlmevalkit_figure_mcq.py",
         "tests/vlmkit/scoring/test_spatial_mcq_mutants.py"),
    ),
    Target(
        "text-qa",
        "vlmkit/scoring/kinds/text_qa.py",
        ("tests/vlmkit/scoring/test_scoring_text_qa.py", "tests/vlmkit/run/test_summary_table.py",
         "tests/vlmkit/scoring/test_text_qa_mutants.py", "tests/vlmkit/scoring/test_text_qa_mutants2.py"),
    ),
    Target(
        "shortqa",
        "vlmkit/scoring/kinds/shortqa.py",
        ("tests/vlmkit/scoring/test_scoring_shortqa.py", "tests/datasets_tsv/kinds/test_shortqa.py",
         "tests/vlmkit/scoring/test_shortqa_mutants.py"),
    ),
    Target(
        "grounding",
        "vlmkit/scoring/kinds/grounding.py",
        ("tests/datasets_tsv/kinds/test_bespoke_vqa.py", "tests/vlmkit/scoring/test_grounding_mutants.py"),
    ),
    Target(
        "journal",
        "vlmkit/run/journal.py",
        ("tests/vlmkit/run/test_journal.py", "tests/vlmkit/run/test_journal_damage.py",
         "tests/vlmkit/run/test_journal_mutants.py"),
    ),
    Target(
        "video-mcq",
        "vlmkit/scoring/kinds/video_mcq.py",
        # not test_mvtamperbench.py: its run through a local Qwen2-VL (14 s) would follow every MVBench mutant; its
        # scoring is score_mvbench's, which test_video_mcq_mutants.py scores directly
        ("tests/datasets_tsv/benchmarks/test_video_benchmarks.py",
         "tests/datasets_tsv/benchmarks/test_longvideobench.py", "tests/vlmkit/scoring/test_vlmevalkit_figure_mcq.py",
         "tests/vlmkit/scoring/test_video_mcq_mutants.py"),
    ),
    Target(
        "qa-judge",
        "vlmkit/scoring/kinds/qa_judge.py",
        ("tests/vlmkit/scoring/test_scoring_qa_judge.py", "tests/datasets_tsv/custom/test_qa_judge.py",
         "tests/vlmkit/scoring/test_judge_prompt_fence.py", "tests/vlmkit/scoring/test_qa_judge_mutants.py"),
    ),
    Target(
        "mcq-reports",
        "vlmkit/scoring/kinds/mcq_reports.py",
        ("tests/vlmkit/scoring/test_mcq_reports.py", "tests/vlmkit/scoring/test_intervals.py",
         "tests/datasets_tsv/kinds/test_prompted_mcq.py", "tests/vlmkit/scoring/test_mcq_reports_mutants.py"),
    ),
    # the rest of images.py beside image-refs, in three parts (the whole file with every test that reaches it took
    # over an hour on 2 shared cores); each with the test files that call the image pass itself
    Target(
        "images-decoder",
        "datasets_tsv/io/images.py",
        IMAGE_PASS_TESTS,
        ("xǁ_Decoderǁ__init__", "xǁ_Decoderǁwhere", "xǁ_Decoderǁtarget", "xǁ_Decoderǁindex_stem",
         "xǁ_Decoderǁmaterialise", "xǁ_Decoderǁdigests", "xǁ_Decoderǁdecode", "xǁ_Decoderǁhead",
         "x__needs_full_decode", "x__has_known_signature"),
        "names, suffixes, base64, reuse",
    ),
    Target(
        "images-rows",
        "datasets_tsv/io/images.py",
        IMAGE_PASS_TESTS,
        ("x_decode_images", "x__replayed", "x__decode_file", "x__names", "x__decode_row", "x__existing_files"),
        "rows, lists, existing files, replay",
    ),
    Target(
        "images-writer",
        "datasets_tsv/io/images.py",
        IMAGE_PASS_TESTS,
        ("xǁ_Writerǁ__init__", "xǁ_Writerǁwrite", "xǁ_Writerǁdigest", "xǁ_Writerǁ_raise", "xǁ_Writerǁ_run",
         "xǁ_Writerǁstop"),
        "the writer thread",
    ),
    Target(
        "vqa-vlmevalkit",
        "vlmkit/scoring/kinds/vqa_vlmevalkit.py",
        ("tests/vlmkit/scoring/test_vqa_vlmevalkit_direct.py", "tests/vlmkit/scoring/test_vlmevalkit_figure_vqa.py",
         "tests/vlmkit/scoring/test_vqa_vlmevalkit_mutants.py"),
    ),
    Target(
        "yorn-vlmevalkit",
        "vlmkit/scoring/kinds/yorn_vlmevalkit.py",
        ("tests/vlmkit/scoring/test_yorn_vlmevalkit_direct.py", "tests/vlmkit/scoring/test_vlmevalkit_figure_yorn.py",
         "tests/vlmkit/scoring/test_yorn_vlmevalkit_mutants.py"),
    ),
    Target(
        "yorn-ratings",
        "vlmkit/scoring/kinds/yorn_ratings.py",
        ("tests/vlmkit/scoring/test_yorn_ratings.py", "tests/vlmkit/scoring/test_yorn_reports.py",
         "tests/vlmkit/scoring/test_yorn_ratings_mutants.py"),
    ),
    Target(
        "vlmevalkit-replies",
        "vlmkit/scoring/common/vlmevalkit_replies.py",
        ("tests/vlmkit/scoring/test_vlmevalkit_figure_benchmarks.py",
         "tests/vlmkit/scoring/test_vlmevalkit_replies_mutants.py"),
    ),
    Target(
        "math-answers",
        "vlmkit/scoring/common/math_answers.py",
        ("tests/vlmkit/scoring/test_scoring_mathvision.py", "tests/vlmkit/scoring/test_scoring_mathverse.py",
         "tests/vlmkit/scoring/test_scoring_mathvista.py", "tests/vlmkit/scoring/test_math_answers_mutants.py"),
    ),
    Target(
        "text-norm",
        "vlmkit/scoring/common/text_norm.py",
        ("tests/vlmkit/scoring/test_scoring_vqa.py", "tests/vlmkit/scoring/test_vqa_rules.py",
         "tests/vlmkit/scoring/test_vqa_vlmevalkit_direct.py", "tests/vlmkit/scoring/test_text_norm_mutants.py"),
    ),
    Target(  # the judge path of reading a choice (MCQ and Y/N prompts, replies, rounds, notes)
        "choice-judge",
        "vlmkit/scoring/common/choice_judge.py",
        ("tests/vlmkit/scoring/test_choice_judge.py", "tests/vlmkit/scoring/test_judge_prompt_fence.py",
         "tests/vlmkit/scoring/test_yorn_vlmevalkit_direct.py", "tests/vlmkit/scoring/test_choice_judge_mutants.py"),
    ),
    Target(
        "intervals",
        "vlmkit/scoring/common/intervals.py",
        ("tests/vlmkit/scoring/test_intervals.py", "tests/vlmkit/scoring/test_generic_interval.py",
         "tests/vlmkit/scoring/test_resampled_interval.py", "tests/vlmkit/scoring/test_intervals_mutants.py"),
    ),
    Target(
        "resampled-interval",
        "vlmkit/scoring/common/resampled_interval.py",
        ("tests/vlmkit/scoring/test_resampled_interval.py", "tests/vlmkit/scoring/test_resampled_interval_mutants.py"),
    ),
    Target(
        "pass-at-k",
        "vlmkit/scoring/common/pass_at_k.py",
        ("tests/vlmkit/scoring/test_pass_at_k.py", "tests/vlmkit/scoring/test_pass_at_k_mutants.py"),
    ),
    Target(
        "grouped-intervals",
        "vlmkit/scoring/common/grouped_intervals.py",
        ("tests/vlmkit/scoring/test_intervals.py", "tests/vlmkit/scoring/test_grouped_intervals_mutants.py"),
    ),
    Target(
        "headline-interval",
        "vlmkit/scoring/common/headline_interval.py",
        ("tests/vlmkit/scoring/test_headline_interval_direct.py",
         "tests/vlmkit/scoring/test_headline_interval_mutants.py"),
    ),
    Target(
        "breakdown",
        "vlmkit/scoring/common/breakdown.py",
        ("tests/vlmkit/scoring/test_breakdown.py", "tests/vlmkit/scoring/test_breakdown_mutants.py"),
    ),
    Target(  # ScreenSpot, ScreenSpot_v2, ScreenSpot_Pro, OSWorld_G, VBGD, VenusBench-GD
        "gui-grounding",
        "vlmkit/scoring/benchmarks/gui_grounding.py",
        ("tests/vlmkit/scoring/test_gui_grounding.py", "tests/vlmkit/scoring/test_vbgd_venusbench.py",
         "tests/vlmkit/scoring/test_gui_grounding_mutants.py"),
    ),
    Target(  # the click reader and coordinate conventions of the GUI grounding scorer
        "gui-points",
        "vlmkit/scoring/benchmarks/gui_points.py",
        ("tests/vlmkit/scoring/test_gui_grounding.py", "tests/vlmkit/scoring/test_vbgd_venusbench.py",
         "tests/datasets_tsv/benchmarks/test_gui_coords_per_model.py",
         "tests/vlmkit/scoring/test_gui_points_mutants.py"),
    ),
    Target(  # VCR_EN/ZH_EASY/HARD_100/500/ALL
        "vcr",
        "vlmkit/scoring/benchmarks/vcr.py",
        ("tests/vlmkit/scoring/test_scoring_vcr.py", "tests/datasets_tsv/benchmarks/test_vcr.py",
         "tests/vlmkit/scoring/test_vlmevalkit_figure_benchmarks.py::test_vcr_vlmevalkit_reads_the_reasoning_too",
         "tests/vlmkit/scoring/test_vcr_mutants.py"),
    ),
    Target(  # VCR's spaCy-like tokens (English rules, Chinese characters)
        "vcr-tokens",
        "vlmkit/scoring/benchmarks/vcr_tokens.py",
        ("tests/vlmkit/scoring/test_scoring_vcr.py", "tests/vlmkit/scoring/test_vcr_mutants.py",
         "tests/vlmkit/scoring/test_vcr_tokens_mutants.py"),
    ),
    Target(
        "judged-rows",
        "vlmkit/scoring/common/judged_rows.py",
        ("tests/vlmkit/scoring/test_judged_rows_mutants.py",),
    ),
    Target(
        "fence",
        "vlmkit/scoring/common/fence.py",
        ("tests/vlmkit/scoring/test_judge_prompt_fence.py", "tests/vlmkit/scoring/test_fence_mutants.py"),
    ),
    Target(
        "mean-relative-accuracy",
        "vlmkit/scoring/common/mean_relative_accuracy.py",
        ("tests/vlmkit/scoring/test_mean_relative_accuracy.py",
         "tests/vlmkit/scoring/test_mean_relative_accuracy_mutants.py"),
    ),
    Target(
        "hipho",
        "vlmkit/scoring/benchmarks/hipho.py",
        ("tests/datasets_tsv/benchmarks/test_hipho.py", "tests/vlmkit/scoring/test_hipho_mutants.py"),
    ),
    Target(
        "hipho-answers",
        "vlmkit/scoring/benchmarks/hipho_answers.py",
        ("tests/datasets_tsv/benchmarks/test_hipho.py", "tests/vlmkit/scoring/test_hipho_answers_mutants.py"),
    ),
    Target(
        "hipho-prompts",
        "vlmkit/scoring/benchmarks/hipho_prompts.py",
        ("tests/datasets_tsv/benchmarks/test_hipho.py", "tests/vlmkit/scoring/test_hipho_prompts_mutants.py"),
    ),
    Target(
        "visfactor",
        "vlmkit/scoring/benchmarks/visfactor.py",
        ("tests/vlmkit/scoring/test_visfactor.py", "tests/vlmkit/scoring/test_visfactor_mutants.py"),
    ),
    Target(
        "mathverse",
        "vlmkit/scoring/benchmarks/mathverse.py",
        ("tests/vlmkit/scoring/test_scoring_mathverse.py", "tests/vlmkit/scoring/test_vlmevalkit_figure_benchmarks.py",
         "tests/vlmkit/scoring/test_mathverse_mutants.py"),
    ),
)


def tracked_files(repo: Path) -> list[str]:
    """Files git tracks plus untracked ones it does not ignore (new tests not yet committed)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode()
    return [name for name in out.split("\0") if name and (repo / name).is_file()]


def copy_tree(repo: Path, dest: Path) -> None:
    for name in tracked_files(repo):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)


def toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


_CONFIG_HEAD = "\n\n[tool.mutmut]\n"


def write_config(copy: Path, target: Target, timeout_constant: float = 1.0) -> None:
    """mutmut reads [tool.mutmut] from pyproject.toml; only the temporary copy gets it (written again, not added
    twice, on a recheck). A mutant's tests are stopped (a timeout) after (their measured time + timeout_constant) x
    10 seconds of wall time; tests whose fixtures start and stop servers take longer than their measured time (the
    fixtures' teardown is not in it), and on a loaded machine mutmut's default constant (1 s) times out mutants that
    change nothing."""
    packages = ["datasets_tsv", "vlm", "vlmkit"]
    tests = [t for t in target.tests if (copy / t.split("::")[0]).exists()]
    missing = sorted(set(target.tests) - set(tests))
    if missing:
        print(f"   (not in the tree, skipped: {' '.join(missing)})", file=sys.stderr, flush=True)
    if not tests:  # an empty selection would make mutmut run the whole suite for every mutant
        raise MutmutFailed(f"{target.path}: none of its test files is in the tree")
    # everything else at the top (tools/ holds the mock server some tests start, docs/ files some tests read)
    extra = sorted(p.name for p in copy.iterdir() if p.name not in {*packages, "tests", "mutants", "pyproject.toml"})
    config = (
        _CONFIG_HEAD
        + f"source_paths = {toml_list(packages)}\n"
        f"also_copy = {toml_list(extra)}\n"
        f"only_mutate = {toml_list([target.path])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]\n'
        "timeout_multiplier = 10.0\n"
        f"timeout_constant = {timeout_constant}\n"
    )
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8").split(_CONFIG_HEAD)[0]
    # the project's addopts would be added to every run; mutmut passes its own
    text = text.replace('addopts = "-q"', 'addopts = ""')
    pyproject.write_text(text + config, encoding="utf-8")


def mutant_globs(target: Target) -> list[str]:
    """mutmut's mutant names are `<dotted module>.<mangled function>__mutmut_<n>`."""
    module = target.path.removesuffix(".py").replace("/", ".")
    return [f"{module}.{function}__mutmut_*" for function in target.functions]


def read_results(copy: Path, target: Target) -> dict[str, int | None]:
    meta = copy / "mutants" / (target.path + ".meta")
    if not meta.exists():
        return {}
    codes: dict[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    if target.functions:
        prefixes = tuple(g.removesuffix("*") for g in mutant_globs(target))
        codes = {name: code for name, code in codes.items() if name.startswith(prefixes)}
    return codes


def classify(code: int | None) -> str:
    if code is None:
        return "not tried"
    if code in KILLED_CODES:
        return "killed"
    if code in SURVIVED_CODES:
        return "survived"
    if code in TIMEOUT_CODES:
        return "timeout"
    if code in NO_TESTS_CODES:
        return "no tests"
    return "other"


class MutmutFailed(RuntimeError):
    """mutmut tried no mutant of a module (its log's end says why: usually a selected test failing as it is)."""


def run_bounded(cmd: list[str], *, cwd: Path, env: dict[str, str], log_path: Path, minutes: float | None) -> int:
    """Run mutmut, stopping its whole process group after `minutes` (its results so far stay in the meta files)."""
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=None if minutes is None else minutes * 60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            print(f"   stopped after {minutes:g} minutes", file=sys.stderr, flush=True)
            return 0


def run_target(
    target: Target, *, show_survivors: bool, keep: Path | None, minutes: float | None = None,
    timeout_constant: float = 1.0,
) -> tuple[Counter[str], list[str]]:
    base = Path(tempfile.mkdtemp(prefix="vlmkit-mutation-"))
    copy = base / "tree"
    try:
        copy_tree(REPO, copy)
        write_config(copy, target, timeout_constant)
        env = dict(os.environ)
        env.pop("PYTEST_ADDOPTS", None)
        cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", "1", *mutant_globs(target)]
        log_path = base / "mutmut.log"
        returncode = run_bounded(cmd, cwd=copy, env=env, log_path=log_path, minutes=minutes)
        codes = read_results(copy, target)
        if returncode != 0 and all(code is None for code in codes.values()):
            # nothing was tried: mutmut stops before mutating when the selected tests fail on the unmutated tree
            tail = log_path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")[-3000:]
            raise MutmutFailed(f"mutmut failed on {target.path} (exit {returncode}); its log ends:\n{tail}")
        counts = Counter(classify(code) for code in codes.values())
        counts["mutants"] = len(codes)
        survivors = sorted(name for name, code in codes.items() if classify(code) == "survived")
        if show_survivors:
            for name in survivors:
                diff = subprocess.run(
                    [sys.executable, "-m", "mutmut", "show", name], cwd=copy, env=env, capture_output=True, text=True
                ).stdout
                print(diff.rstrip(), flush=True)
        return counts, survivors
    finally:
        if keep is not None:
            dest = keep / target.key
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(base, dest, symlinks=True)
        shutil.rmtree(base, ignore_errors=True)


def recheck_target(
    target: Target, kept: Path, *, show_survivors: bool, minutes: float | None = None,
    timeout_constant: float = 1.0, retry_timeouts: bool = False,
) -> tuple[Counter[str], list[str]]:
    """Run again, in the copy an earlier `--keep` run left under `kept`, the mutants that survived there (or that no
    selected test reached), with the checkout's current test files brought in."""
    base = kept / target.key
    copy = base / "tree"
    if not (copy / "mutants").is_dir():
        raise MutmutFailed(f"{target.path}: no kept copy at {copy} (run with --keep {kept} first)")
    for name in tracked_files(REPO):
        if name.startswith("tests/"):
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    write_config(copy, target, timeout_constant)
    codes = read_results(copy, target)
    # the survivors, and the mutants no selected test reached then (a new test may reach them now: mutmut collects
    # which tests reach which function again for tests it has not seen)
    again_kinds = ("survived", "no tests", *(("timeout",) if retry_timeouts else ()))
    survivors = [name for name, code in codes.items() if classify(code) in again_kinds]
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    if survivors:
        cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", "1", *survivors]
        run_bounded(cmd, cwd=copy, env=env, log_path=base / "recheck.log", minutes=minutes)
        # mutmut rewrites the file's results when it mutates it again: keep the earlier verdicts, take the new
        # ones only for the survivors it tried again
        again = read_results(copy, target)
        codes.update({name: again[name] for name in survivors if again.get(name) is not None})
        meta = copy / "mutants" / (target.path + ".meta")  # written back, so that a later recheck starts from it
        data = json.loads(meta.read_text(encoding="utf-8"))
        data["exit_code_by_key"].update(codes)
        meta.write_text(json.dumps(data), encoding="utf-8")
    counts = Counter(classify(code) for code in codes.values())
    counts["mutants"] = len(codes)
    left = sorted(name for name, code in codes.items() if classify(code) == "survived")
    if show_survivors:
        for name in left:
            diff = subprocess.run(
                [sys.executable, "-m", "mutmut", "show", name], cwd=copy, env=env, capture_output=True, text=True
            ).stdout
            print(diff.rstrip(), flush=True)
    return counts, left


def format_row(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="KEY", help="run only these modules (keys from --list)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests, then stop")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--keep", type=Path, help="keep each module's temporary copy under this folder")
    parser.add_argument("--minutes", type=float, help="stop each module's run after this many minutes")
    parser.add_argument("--recheck", type=Path, metavar="DIR",
                        help="rerun only the survivors of an earlier --keep DIR run, with the current tests")
    parser.add_argument("--timeout-constant", type=float, default=1.0, metavar="S",
                        help="seconds added to a mutant's measured test time before mutmut's x10 timeout "
                             "(default 1, mutmut's; more for tests whose fixtures start servers)")
    parser.add_argument("--retry-timeouts", action="store_true",
                        help="with --recheck: also rerun the mutants that timed out there")
    args = parser.parse_args(argv)

    targets = list(MODULES)
    if args.only:
        unknown = sorted(set(args.only) - {t.key for t in MODULES})
        if unknown:
            parser.error(f"unknown module key(s) {unknown}; known: {[t.key for t in MODULES]}")
        targets = [t for t in MODULES if t.key in args.only]
    if args.list:
        for t in targets:
            part = f" ({', '.join(t.functions)})" if t.functions else ""
            print(f"{t.key:14s} {t.path}{part}\n{'':14s} tests: {' '.join(t.tests)}")
        return 0

    header = ["module", "mutants", "killed", "survived", "timeout", "no tests", "other", "not tried", "% killed"]
    rows: list[list[str]] = []
    all_survivors: list[str] = []
    failed = False
    for target in targets:
        print(f"== {target.path} ({len(target.tests)} test files)", file=sys.stderr, flush=True)
        name = target.path + (f" ({target.part})" if target.part else "")
        try:
            if args.recheck is not None:
                counts, survivors = recheck_target(
                    target, args.recheck, show_survivors=args.survivors, minutes=args.minutes,
                    timeout_constant=args.timeout_constant, retry_timeouts=args.retry_timeouts,
                )
            else:
                counts, survivors = run_target(
                    target, show_survivors=args.survivors, keep=args.keep, minutes=args.minutes,
                    timeout_constant=args.timeout_constant,
                )
        except MutmutFailed as exc:
            print(exc, file=sys.stderr, flush=True)
            rows.append([name, "-", "-", "-", "-", "-", "-", "-", "failed (see above)"])
            failed = True
            continue
        all_survivors += survivors
        total = counts["mutants"]
        tried = total - counts["not tried"]
        share = f"{100.0 * counts['killed'] / tried:.1f}" if tried else "-"
        rows.append([name, str(total), str(counts["killed"]), str(counts["survived"]), str(counts["timeout"]),
                     str(counts["no tests"]), str(counts["other"]), str(counts["not tried"]), share])
        print(format_row(rows[-1], [len(c) for c in rows[-1]]), file=sys.stderr, flush=True)

    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(format_row(header, widths))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(format_row(row, widths))
    if all_survivors:
        print("\nsurvivors:")
        for name in all_survivors:
            print(f"  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
