"""The one "missing" rule (core.schema.missing) and the one number/interval formatting (core.fmt)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memstor.core import fmt
from memstor.core.schema import missing


@pytest.mark.parametrize("value", [None, float("nan"), np.nan, pd.NA, pd.NaT, "", "  ", float("inf"), -np.inf])
def test_missing_values(value):
    assert missing(value)


@pytest.mark.parametrize("value", [0, 0.0, -1, 1.5, np.float64(3), np.int64(0), "x", "0", True])
def test_present_values(value):
    assert not missing(value)


def test_numbers_and_intervals_show_missing_as_a_dash():
    assert fmt.fmt_number(None) == "–" and fmt.fmt_number(float("nan")) == "–" and fmt.fmt_number(pd.NA) == "–"
    assert fmt.fmt_number(12345.6) == "12,346" and fmt.fmt_number(123.4) == "123"
    assert fmt.fmt_number(12.34) == "12.3" and fmt.fmt_number(1.234) == "1.23" and fmt.fmt_number(0.01234) == "0.0123"
    assert fmt.fmt_ci(100.0, 90.0, 110.0) == "100 ± 10.0"
    assert fmt.fmt_ci(100.0, None, 110.0) == "100"
    assert fmt.fmt_interval(100.0, 90.0, 110.0) == "100 [90.0, 110]"
    assert fmt.fmt_interval(float("nan"), 1, 2) == "–"
    assert fmt.fmt_se(5.0, 0.5) == "5.00 ± 0.5" and fmt.fmt_se(5.0, np.nan) == "5.00"
    assert fmt.fixed(1234.5678, 1) == "1,234.6" and fmt.fixed(np.inf, 1) == "–"
    assert fmt.ci_text(95.5, 92.6, 98.4, 1, "ns") == "95.5 ns [92.6, 98.4]"
    assert fmt.ci_text(95.5, None, 98.4, 1, "ns") == "95.5 ns"
    assert fmt.md_escape("a_b*c") == "a\\_b\\*c"
