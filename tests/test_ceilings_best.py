"""The ceilings table's 'best measured' is the best figure whose own checks held (issue 38, workstream B; S6-bare
M-4), from the bare run's rows in tests/data/ceilings-m4 (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.ceilings import ceiling_use

DATA = Path(__file__).parent / "data" / "ceilings-m4"


def table(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-bare.csv")


def use(validity: pd.DataFrame | None) -> pd.DataFrame:
    c = table("ceilings")
    return ceiling_use(c, table("headline"), table("summary"), table("memory_fit"), validity).set_index("what")


def test_a_point_whose_own_check_failed_is_not_the_best_measured_and_is_named_as_left_out():
    """S6-bare M-4: 'storage interface ... 2,627 (fio-write-saturation, write 128 KiB QD32x4)' came from a run whose
    wsat_series failed (1 whole second of 2, fio's runtime 1.64 s); 'DRAM peak ... 25,206 (write-only-nt)' from a
    curve whose B_max run failed the memory gate. Now the best that held, the higher one named as left out."""
    u = use(table("validity"))
    st = u.loc["storage interface"]
    assert st["measured"] == pytest.approx(2206.7, abs=1)          # randwrite 1 MiB QD32x1, fio-block-size
    assert "fio-block-size" in st["measured_as"]
    assert "higher, left out: 2,627 MB/s (fio-write-saturation, write 128 KiB QD32x4 (write): wsat_series " \
        "failed)" in st["measured_as"]
    dram = u.loc["DRAM peak"]
    assert dram["measured"] == pytest.approx(21822.8)             # the stream-triad headline (gate passed)
    assert "25,206 MB/s (loaded-latency curve write-only-nt" in dram["measured_as"]
    assert "15,549" not in dram["measured_as"]                     # below the best: not a 'higher' one
    # the other side: the 4 KiB randwrite run only warned (15 whole seconds): a warning leaves a point in
    assert "280" not in st["measured_as"]
    nothing_failed = use(None).loc["storage interface"]
    assert nothing_failed["measured"] == pytest.approx(2626.9, abs=1) and "left out" not in \
        nothing_failed["measured_as"]
