"""The catalog knows every name VLMEvalKit downloads at the pinned commit (a checked-in list read from its dataset
classes), each scorable or saying in one line why not; given a clone of VLMEvalKit's repository
(`VLMEVALKIT_REPO=/path/to/VLMEvalKit` or its .git folder), the list is checked against the DATASET_URL keys of its
classes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import NotScorableError, build_dataset
from vlmkit.scoring.vlmevalkit_figure import VLMEVALKIT_COMMIT

NAMES_FILE = Path(__file__).with_name("vlmevalkit_names_e8e78f05.txt")
VLMKIT_OWN = {"vlmkit_demo_mcq", "vlmkit_demo_vqa", "vlmkit_demo_yorn", "Video-MME_0.5fps_subs",
              "Video-MME_8frame_subs"}  # fmt: skip
MORE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "vlmevalkit_catalog_more.tsv"


def listed_names() -> set[str]:
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_the_list_is_of_the_pinned_commit():
    assert VLMEVALKIT_COMMIT.startswith("e8e78f05")
    assert len(listed_names()) == 547


def test_the_catalog_has_every_name_vlmevalkit_downloads_and_no_other():
    assert set(catalog_rows()) - VLMKIT_OWN == listed_names()


def test_every_name_is_scorable_or_says_why_not_in_one_line(lmu_root: Path):
    rows = catalog_rows()
    for name in sorted(listed_names()):
        row = rows[name]
        if row.status in ("todo", "prompt"):
            with pytest.raises(NotScorableError) as caught:
                build_dataset(name, root=lmu_root, progress=False)
            assert name in str(caught.value) and "\n" not in str(caught.value)
            assert row.scorer in str(caught.value)  # how VLMEvalKit scores it, in words


def test_the_more_names_of_issue_30_have_vlmevalkits_type():
    if not MORE.is_file():
        pytest.skip("shared/reference/vlmevalkit_catalog_more.tsv is not beside this checkout")
    rows = catalog_rows()
    lines = MORE.read_text(encoding="utf-8").splitlines()[1:]
    assert len(lines) == 197
    for line in lines:
        name, _, _, _, vtype, _ = line.split("\t")
        assert rows[name].vlmevalkit_type == (vtype or "MCQ"), name  # no TYPE: DATASET_TYPE's default, MCQ


def code_names(repo: str) -> set[str]:
    """The keys of every `DATASET_URL = {...}` literal in VLMEvalKit's dataset modules at the pinned commit."""
    git = ["git", "-C", repo]
    files = subprocess.run([*git, "ls-tree", "-r", "--name-only", VLMEVALKIT_COMMIT, "vlmeval/dataset"],
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    names: set[str] = set()
    for path in (f for f in files if f.endswith(".py")):
        source = subprocess.run([*git, "show", f"{VLMEVALKIT_COMMIT}:{path}"], capture_output=True, text=True,
                                check=True).stdout  # fmt: skip
        for match in re.finditer(r"DATASET_URL\s*=\s*\{", source):
            depth, end = 0, match.end() - 1
            for end in range(match.end() - 1, len(source)):
                depth += {"{": 1, "}": -1}.get(source[end], 0)
                if depth == 0:
                    break
            names.update(re.findall(r"^\s*['\"]([^'\"]+)['\"]\s*:", source[match.end() - 1 : end + 1], re.M))
    return names


def test_the_list_holds_the_dataset_url_keys_of_vlmevalkits_classes():
    repo = os.environ.get("VLMEVALKIT_REPO")
    if not repo:
        pytest.skip("set VLMEVALKIT_REPO to a clone of open-compass/VLMEvalKit to check the list against its code")
    try:
        found = code_names(repo)
    except subprocess.CalledProcessError:
        pytest.skip(f"VLMEvalKit's repository here lacks commit {VLMEVALKIT_COMMIT}")
    assert len(found) > 300
    assert found <= listed_names()
