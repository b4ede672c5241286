"""`vlmkit run --kind caption` on a user's TSV through the CLI: scored with BLEU/ROUGE-L/CIDEr, and refused before
anything is asked when the caption library cannot be imported."""

from __future__ import annotations

import json

import pytest

from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.support.run_helpers import chat_only, chat_requests, run_served, stderr_lines
from tests.support.servers import FaultServer, chat_reply

CAPTIONS = {"red": "a red square", "blue": "a blue square"}


def _write_captions(lmu):
    rows = [{"index": i, "image": b64(image_bytes(c)), "answer": str([f"a {c} square", f"{c} picture"])}
            for i, c in enumerate(CAPTIONS)]
    return write_tsv(lmu / "MyCaps.tsv", rows)


def test_kind_caption_scores_a_user_tsv_with_the_coco_metrics(tmp_path):
    pytest.importorskip("pycocoevalcap.cider.cider", reason="the optional `captions` extra (pycocoevalcap)")
    lmu, work = tmp_path / "lmu", tmp_path / "work"
    lmu.mkdir()
    _write_captions(lmu)
    with FaultServer(chat_only(lambda request: chat_reply("a red square"))) as server:
        result = run_served(server.base_url, work, lmu, "--kind", "caption", data="MyCaps")
    assert result.returncode == 0, result.stderr
    assert "MyCaps: scorer caption: given kind=caption" in result.stdout  # the one line saying which rules, and why
    scoring = json.loads((work / "served" / "MyCaps" / "results.json").read_text())["scoring"]
    metrics = scoring["metrics"]
    assert set(metrics) == {"Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L", "CIDEr"}  # VLMEvalKit's names
    # Both rows answer "a red square". Row 0 has it as a reference (3 of 3 words match); row 1's best reference is
    # "a blue square" (2 of 3 words, longest common subsequence "a square"). BLEU-1 = 5/6 (corpus counts, equal
    # lengths so no brevity penalty); ROUGE-L = mean(1, 2/3) (P = R = 2/3 gives F = 2/3 for any beta).
    assert metrics["Bleu_1"] == pytest.approx(500 / 6, abs=1e-6)
    assert metrics["ROUGE_L"] == pytest.approx(250 / 3, abs=1e-6)
    assert scoring["primary_metric"]["name"] == "CIDEr"


def test_a_missing_caption_library_stops_the_run_before_the_model_is_asked(tmp_path):
    lmu, work, blocker = tmp_path / "lmu", tmp_path / "work", tmp_path / "blocker"
    lmu.mkdir()
    _write_captions(lmu)
    (blocker / "pycocoevalcap").mkdir(parents=True)  # an installed-but-broken library: its import fails for real
    (blocker / "pycocoevalcap" / "__init__.py").write_text("raise ImportError('pycocoevalcap is broken here')\n")
    with FaultServer(chat_only(lambda request: chat_reply("a red square"))) as server:
        from tests.support.run_helpers import vlmkit_cli

        result = vlmkit_cli("run", "--data", "MyCaps", "--model", "served", "--api-base", server.base_url,
                            "--work-dir", str(work), "--kind", "caption",
                            env={"LMUData": str(lmu), "PYTHONPATH": f"{blocker}:{_repo_path()}"})
        asked = chat_requests(server.requests)
    assert result.returncode == 2, result.stderr
    (line,) = stderr_lines(result)
    assert line.startswith("vlmkit: error: MyCaps: caption scoring") and "pip install 'vlmkit[captions]'" in line
    assert asked == []


def _repo_path() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])
