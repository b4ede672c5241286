"""`torchrun ... -m vlmkit.cli run ...` needs no `--`: torchrun's own parser (which reads every argument, those after
the script too, and takes any unambiguous prefix of its options as that option) takes none of `vlmkit run`'s flags for
its own. `--nproc` is the one exception, spelled `--api-nproc` under torchrun (its help says so)."""

from __future__ import annotations

import argparse

import pytest

from vlmkit.cli.main import _run_actions, build_parser

torchrun = pytest.importorskip("torch.distributed.run")

# torchrun reads --nproc as an abbreviation of its --nproc-per-node (ambiguous with --nproc_per_node): vlmkit's
# same option is also spelled --api-nproc, VLMEvalKit's name for it
TORCHRUN_SPELLING = {"--nproc": "--api-nproc"}


def run_flags() -> list[tuple[str, argparse.Action]]:
    return [(flag, action) for action in _run_actions(build_parser()).values() for flag in action.option_strings
            if flag.startswith("--") and flag != "--help"]


def test_every_vlmkit_run_flag_reaches_vlmkit_through_torchrun():
    parser = torchrun.get_args_parser()
    checked = 0
    for flag, action in run_flags():
        if flag in TORCHRUN_SPELLING:
            continue
        script_args = ["run", flag] if action.nargs == 0 else ["run", flag, "1"]
        parsed = parser.parse_args(["--nproc-per-node", "2", "-m", "vlmkit.cli", *script_args])
        assert parsed.training_script == "vlmkit.cli" and parsed.training_script_args == script_args, flag
        assert parsed.nproc_per_node == "2", flag  # nothing of vlmkit's was read as torchrun's
        checked += 1
    assert checked > 40  # every flag, not a handful


def test_the_torchrun_spelling_is_the_same_option():
    parser = build_parser()
    for flag, spelling in TORCHRUN_SPELLING.items():
        assert vars(parser.parse_args(["run", flag, "7"])) == vars(parser.parse_args(["run", spelling, "7"]))
    assert "torchrun" in next(a.help for a in _run_actions(parser).values() if "--api-nproc" in a.option_strings)


def test_shard_flags_parse():
    args = build_parser().parse_args(["run", "--shard", "1/4", "--merge", "--barrier-timeout", "90"])
    assert (args.shard, args.merge, args.barrier_timeout) == ("1/4", True, 90.0)
    assert build_parser().parse_args(["run"]).barrier_timeout is None  # RunOptions' default (30 min) applies
