"""`TableRows.line` builds its rows column by column; they must be what `DataFrame.to_dict("records")` gives."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from datasets_tsv.io.table import _records


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and (a is b or a == b)


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"index": [0, 1, 2], "score": [1.5, np.nan, 2.0], "question": ["a", None, "NA"],
                      "flag": [True, False, True], "when": pd.to_datetime(["2020-01-01", None, "2021-02-03"]),
                      "mixed": pd.Series([None, "x", 3], dtype=object),
                      "text": pd.Series(["x", None, "NA"], dtype=pd.StringDtype(na_value=np.nan))}),
        pd.DataFrame({"text": pd.Series(["x", None, "y"], dtype=pd.StringDtype(na_value=pd.NA))}),
        pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64"), "c": pd.Categorical(["x", "y", "x"])}),
        pd.DataFrame([[1, 2, 3]] * 3, columns=["a", "a", "b"]),
        pd.DataFrame(index=range(3)),
    ],
    ids=["numpy-and-str-dtypes", "string-with-NA", "extension-dtypes", "repeated-names", "no-columns"],
)
@pytest.mark.filterwarnings("ignore:DataFrame columns are not unique")
def test_rows_are_to_dict_records(frame):
    expected = frame.to_dict("records")
    got = _records(frame)
    assert len(got) == len(frame)
    for want, have in zip(expected, got, strict=True):
        assert list(want) == list(have)
        assert all(same(want[k], have[k]) for k in want), (want, have)
