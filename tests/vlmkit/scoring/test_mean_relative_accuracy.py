"""Mean Relative Accuracy and the spatial number reader, checked against values worked by hand and against
numpy's linspace (VLMEvalKit builds its thresholds with it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlmkit.scoring.common.mean_relative_accuracy import (VLMEVALKIT_THRESHOLDS, mean_relative_accuracy,
                                                          mra_thresholds, to_number)


def test_thresholds_are_numpy_linspace_of_ten_points():
    expected = np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))
    assert len(VLMEVALKIT_THRESHOLDS) == 10
    assert list(VLMEVALKIT_THRESHOLDS) == [float(x) for x in expected]  # bit-equal, boundaries included


@pytest.mark.parametrize("prediction, answer, expected", [
    (10.0, 10.0, 1.0),  # error 0 passes all ten thresholds
    (12.0, 10.0, 0.6),  # error 0.2: 1-t is >= 0.2 for t = .50 .. .75; 1-0.8 = 0.19999999999999996 fails
    (11.0, 10.0, 0.9),  # error 0.1 <= 1-0.9 = 0.10000000000000009; only t = 0.95 fails
    (15.0, 10.0, 0.1),  # error 0.5: only t = 0.50 (0.5 <= 0.5)
    (5.0, 10.0, 0.1),   # error 0.5 below the answer: the same
    (16.0, 10.0, 0.0),  # error 0.6: none
    (0.3, 0.0, 0.5),    # answer 0: absolute error 0.3; 1-0.7 = 0.30000000000000004 passes, 0.25 fails
    (-4.0, -4.0, 1.0),
])
def test_values_worked_by_hand(prediction, answer, expected):
    assert mean_relative_accuracy(prediction, answer) == pytest.approx(expected)


def test_nan_and_infinity_score_zero():
    assert mean_relative_accuracy(float("nan"), 3.0) == 0.0
    assert mean_relative_accuracy(float("inf"), 3.0) == 0.0


def test_custom_thresholds_and_builder():
    assert mean_relative_accuracy(12.0, 10.0, thresholds=(0.5, 0.9)) == 0.5
    assert mra_thresholds(0.5, 0.7, 0.1) == tuple(float(x) for x in np.linspace(0.5, 0.7, int((0.7 - 0.5) / 0.1 + 2)))
    with pytest.raises(ValueError):
        mean_relative_accuracy(1.0, 1.0, thresholds=())


def test_random_pairs_agree_with_a_numpy_implementation():
    rng = np.random.default_rng(7)
    conf = np.linspace(0.5, 0.95, 10)
    for _ in range(300):
        answer = float(rng.choice([0.0, rng.uniform(-20, 20), float(rng.integers(0, 30))]))
        prediction = answer + float(rng.choice([0.0, rng.normal(0, 3), round(rng.uniform(-1, 1), 2)]))
        error = abs(prediction - answer) if answer == 0 else abs((prediction - answer) / answer)
        assert mean_relative_accuracy(prediction, answer) == float((error <= (1 - conf)).astype(float).mean())


@pytest.mark.parametrize("reply, expected", [
    ("3", 3.0),
    ("The room is about 4.5 meters long.", 4.5),
    ("There are three chairs.", 3.0),                              # number word
    ("Twenty", 20.0),
    ("<answer>7 m</answer> but maybe 9", 7.0),                      # tagged answer wins
    ("<think>maybe 2 or 5</think>The answer is 6", 6.0),           # last number after </think>
    ("<think>it is 2 or 5</think>I am not sure", 5.0),             # tail without numbers: last of the whole text
    ("<think>2 and 2</think>no idea", 2.0),                         # one distinct number
    ("between 1.5e2 and -3", -3.0),
    ("[4, 5]", 4.0),                                                # list literal: first item
    ("[four metres]", None),                                        # bracketed text that is no literal
    ("no number here", None),
    ("", None),
    ("\u200b1\u200b2", 12.0),                                       # zero-width characters removed
    (".5", 0.5),
    (None, None),
    (float("nan"), None),
    ([8, 9], 8.0),
    ([], None),
])
def test_to_number_reads_as_vlmevalkit(reply, expected):
    assert to_number(reply) == expected


def test_twenty_one_reads_the_number_after_the_word():
    # "twenty-one" -> "20-1" (both words replaced) -> numbers ["20", "-1"] -> last is -1
    assert to_number("twenty-one") == -1.0


def test_scores_are_finite_fractions():
    for value in (0.0, 0.1, 1.0, 2.5, 1e9):
        score = mean_relative_accuracy(value, 1.0)
        assert 0.0 <= score <= 1.0 and math.isfinite(score)
