"""A --config run file is read as carefully as the flags: YAML aliases (the "billion laughs" bomb) are refused before
anything expands, and an option of the wrong type is one line naming the key, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vlmkit.cli.main import _apply_config, build_parser
from vlmkit.core.errors import DataError
from vlmkit.run.config_file import load_run_config

BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
       for i in range(8)]
    + ["data: *i", "model: [m]"]
)


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path):
    path = tmp_path / "run.yaml"
    path.write_text(BOMB)  # 10**9 strings once expanded
    with pytest.raises(DataError, match=r"line 2: YAML aliases \(\*a\) are not accepted"):
        load_run_config(path)


def test_an_anchor_without_an_alias_is_plain_yaml(tmp_path: Path):
    path = tmp_path / "run.yaml"
    path.write_text("data: &d [A, B]\nmodel: [m]\n")
    assert load_run_config(path).data == ["A", "B"]


def _args(tmp_path: Path, options: str):
    path = tmp_path / "run.yaml"
    path.write_text(f"data: [D]\nmodel: [m]\noptions:\n{options}")
    args = build_parser().parse_args(["run", "--config", str(path)])
    _apply_config(args)
    return args


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("  api_base: [1, 2]\n", "options.api_base: expected text, got [1, 2]"),
        ("  nproc: many\n", "options.nproc: expected a whole number, got 'many'"),
        ("  nproc: 2.5\n", "options.nproc: expected a whole number, got 2.5"),
        ("  temperature: {a: 1}\n", "options.temperature: expected a number, got {'a': 1}"),
        ("  keep_local_tsv: 'yes'\n", "options.keep_local_tsv: expected true or false, got 'yes'"),
        ("  mode: everything\n", "options.mode: must be one of all, infer, eval, perf, got 'everything'"),
        ("  qa_metrics: [em, [x]]\n", "options.qa_metrics: expected a list of text, got ['x']"),
    ],
)
def test_a_wrong_type_names_the_key(tmp_path: Path, options: str, message: str):
    with pytest.raises(DataError) as info:
        _args(tmp_path, options)
    assert str(info.value) == f"{tmp_path / 'run.yaml'}: {message}"


def test_right_types_become_what_the_flags_give(tmp_path: Path):
    args = _args(tmp_path, "  nproc: 8\n  temperature: 0\n  work_dir: out\n  api_base: http://h/v1\n"
                           "  qa_metrics: em\n  keep_local_tsv: true\n")
    assert (args.nproc, args.temperature, args.work_dir, args.api_base) == (8, 0.0, Path("out"), "http://h/v1")
    assert args.qa_metrics == ["em"] and args.keep_local_tsv is True


def test_api_base_may_list_the_replicas_of_one_model(tmp_path: Path):
    args = _args(tmp_path, "  api_base: [http://a/v1, http://b/v1]\n")
    assert args.api_base == "http://a/v1,http://b/v1"


def test_the_command_prints_one_line(tmp_path: Path):
    path = tmp_path / "run.yaml"
    path.write_text("data: [D]\nmodel: [m]\noptions:\n  api_base: [1, 2]\n")
    result = subprocess.run([sys.executable, "-m", "vlmkit", "run", "--config", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0
    assert "options.api_base: expected text" in result.stderr


def test_a_frame_budget_sweep_may_be_a_yaml_list(tmp_path: Path):
    """`nframe: [8, 16]` is what `--nframe 8,16` gives; a bad budget keeps the sweep's own one-line reason."""
    flag = build_parser().parse_args(["run", "--nframe", "8,16"]).nframe
    assert _args(tmp_path, "  nframe: [8, 16]\n").nframe == flag
    assert _args(tmp_path, "  fps: [0.5, 1]\n").fps == build_parser().parse_args(["run", "--fps", "0.5,1"]).fps
    with pytest.raises(DataError) as info:
        _args(tmp_path, "  nframe: [8, 0]\n")
    assert str(info.value).startswith(f"{tmp_path / 'run.yaml'}: options.nframe: --nframe takes whole numbers")
