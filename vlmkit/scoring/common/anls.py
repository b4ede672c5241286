"""ANLS, the DocVQA / InfographicVQA row score: one function for vlmkit's VQA kind and VLMEvalKit's figure of it
(they are the same rule)."""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein


def _anls_norm(text: str) -> str:
    return " ".join(str(text).strip().lower().split())


def anls(prediction: str, answers: Sequence[str], threshold: float = 0.5) -> float:
    """Average Normalized Levenshtein Similarity for one row, as the official DocVQA / InfographicVQA script computes
    it (the RRC's evaluation script, rrc.cvc.uab.es/?ch=17 and docvqa.org; VLMEvalKit's anls_compute is the same):
    the edit distance between the lower-cased, whitespace-collapsed texts, divided by the longer of the *raw*
    lengths (unstripped, as `len(text.upper())`); 1 - that, best over the ground truths, kept when >= threshold,
    else 0. So `' New Yrok   '` against `New York` is 1 - 2/12 = 0.8333, not 1 - 2/8 = 0.75: the published DocVQA
    and InfoVQA figures (the challenge's leaderboard and VLMEvalKit's) use these lengths, so vlmkit does too."""
    pred = _anls_norm(prediction)
    raw_pred = len(str(prediction).upper())
    best = 0.0
    for answer in answers:
        gt = _anls_norm(answer)
        length = max(len(str(answer).upper()), raw_pred)
        sim = 1.0 if length == 0 else 1.0 - Levenshtein.distance(gt, pred) / length
        best = max(best, sim)
    return best if best >= threshold else 0.0
