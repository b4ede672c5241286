"""`vlmkit list datasets|models` fit the terminal: its width on a terminal, 100 columns off one (a pipe, a file),
whole lines with --wide. The scorer and description columns are cut with an ellipsis; the name column never."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from vlmkit.cli.listing import dataset_lines, fit_table, model_lines

ELLIPSIS = "…"


def vlmkit_list(*args: str) -> subprocess.CompletedProcess:
    """`python -m vlmkit list ARGS` with stdout a pipe (not a terminal)."""
    return subprocess.run([sys.executable, "-m", "vlmkit", "list", *args], capture_output=True, text=True,
                          timeout=120, check=True)


def on_a_terminal(columns: int, *args: str) -> list[str]:
    """`python -m vlmkit list ARGS` with stdout a pseudo-terminal that $COLUMNS says is `columns` wide."""
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "vlmkit", "list", *args], stdout=child, stderr=subprocess.DEVNULL,
                            env={**os.environ, "COLUMNS": str(columns)})
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed its end (Linux says EIO)
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(main)
        assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n").splitlines()


def cut_or_whole(shown: str, full: str) -> bool:
    """shown is full, or a prefix of it ending in the ellipsis."""
    if shown == full:
        return True
    return shown.endswith(ELLIPSIS) and full.startswith(shown[:-1].rstrip()) and len(shown) < len(full)


def test_a_hand_worked_table():
    table = [("NAME", "DESCRIPTION"), ("a", "0123456789abcdefghij"), ("long-name", "short")]
    # NAME column 9 wide, two spaces, so 9 of 20 columns are left for the description: cut to 12, the least width a
    # cut column keeps, and the line overflows to 23 rather than cut the name.
    assert fit_table(table, 20, cut=(1,)) == ["NAME       DESCRIPTION", "a          0123456789a…", "long-name  short"]
    assert fit_table(table, 25, cut=(1,)) == ["NAME       DESCRIPTION", "a          0123456789abc…",
                                              "long-name  short"]
    assert fit_table(table, 31, cut=(1,)) == fit_table(table, None) == [
        "NAME       DESCRIPTION", "a          0123456789abcdefghij", "long-name  short"]


def test_two_cut_columns_share_the_room_to_hide_the_least_text():
    # 85 columns less the name column (1) and two gaps of two leave 80 for the scorer and the description.
    # Scorer 20 and description 60 hide 40 - 20 + 1 = 21 characters (one row's scorer); scorer 21 / description 59
    # hide 20 + 2 * 2 = 24; scorer 12 / description 60 (the rest unused) hide 29; scorer 40 / description 40 hide
    # 2 * 21 = 42. So 20 and 60.
    table = [("n", "s" * 12, "d" * 60), ("m", "t" * 40, "e" * 60)]
    lines = fit_table(table, 85, cut=(1, 2))
    assert lines == ["n  " + "s" * 12 + " " * 8 + "  " + "d" * 60, "m  " + "t" * 19 + ELLIPSIS + "  " + "e" * 60]
    assert max(map(len, lines)) == 85


@pytest.mark.parametrize("width", [100, 120, 160])
def test_every_dataset_line_fits_and_keeps_its_name_whole(width):
    rows = list(catalog_rows().values())
    lines = dataset_lines(width=width)
    assert max(map(len, lines)) <= width
    body = lines[1 : 1 + len(rows)]
    for line, row in zip(body, rows, strict=True):
        assert line.startswith(row.name + " ")  # the name whole, then the other columns
        assert cut_or_whole(line.rstrip().split("  ")[-1].strip(), row.description or "-") or not row.description
    assert any(ELLIPSIS in line for line in body)  # the catalog's descriptions do not fit 160 columns
    assert "--wide prints whole lines" in " ".join(lines[1 + len(rows):])


def test_wide_and_no_width_are_whole_lines():
    whole = dataset_lines()
    assert max(map(len, whole)) > 200 and not any(ELLIPSIS in line for line in whole)
    assert "MMBench v1.0 dev, English (4329 rows incl. circular copies)" in whole[1]


def test_off_a_terminal_lines_are_100_columns_and_wide_gives_them_whole():
    datasets = vlmkit_list("datasets").stdout.splitlines()
    models = vlmkit_list("models").stdout.splitlines()
    assert max(map(len, datasets)) <= 100 and max(map(len, models)) <= 100
    assert datasets[1].startswith("MMBench_DEV_EN ") and ELLIPSIS in datasets[1]
    assert any(line.startswith("llava-onevision-qwen2-0.5b-ov-hf ") for line in models)  # the longest name, whole
    wide = vlmkit_list("datasets", "--wide").stdout.splitlines()
    assert wide == dataset_lines()
    assert vlmkit_list("models", "--wide").stdout.splitlines() == model_lines()


def test_on_a_terminal_lines_fit_its_width():
    lines = on_a_terminal(130, "datasets")
    assert lines == dataset_lines(width=130)
    assert 100 < max(map(len, lines)) <= 130  # its own width, not the 100 used off a terminal
    models = on_a_terminal(70, "models")
    assert models == model_lines(width=70) and max(map(len, models)) <= 70
