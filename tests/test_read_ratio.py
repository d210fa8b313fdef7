"""The read-ratio family (memstor.analysis.read_ratio) on real MLC curves (bernep's -R, -W3, -W5, -W6 at 64 and
256 B, tests/data/real), the published platforms nearest to them (Mess, shipped), their report text and figure."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from memstor.analysis import read_ratio
from memstor.analysis.memory_curves import curve_table
from memstor.analysis.memory_fit import memory_fit_table
from memstor.analysis.reference_curves import load_mess_curves
from memstor.core.schema import MLC_COLUMNS
from memstor.parse.mlc import parse_mlc
from memstor.report import text
from memstor.report.plots import read_ratio as rfigs

BERNEP = "bernep__Advanced-Computer-Systems/Project 3/results"
FILES = [f"mlc_write{w}_{size}.txt" for size in (64, 256) for w in (0, 25, 50, 100)]
#: What memstor records beside each row when it measured the curves itself (one configuration for all).
SETTINGS = {"host": "bernep", "tool": "mlc", "load_threads": 7.0, "buffer_kib": 200000.0, "random": True,
            "load_random": False, "huge_pages": False, "pacing": "fixed"}


def bernep(real, **settings) -> pd.DataFrame:
    rows = []
    for f in FILES:
        rows += parse_mlc((real / BERNEP / f).read_text(), f).rows
    return pd.DataFrame(rows, columns=MLC_COLUMNS).assign(status="done", **settings)


@pytest.fixture(scope="module")
def family(real):
    curves = curve_table(bernep(real, **SETTINGS))
    mem, _ = memory_fit_table(curves)
    return curves, mem


def test_families_by_dram_read_share(family):
    curves, mem = family
    t = read_ratio.read_ratio_table(mem)
    assert list(t.columns) == read_ratio.READ_RATIO_COLUMNS
    assert list(t["family"].unique()) == [1, 2] and set(t["family_size"]) == {4}
    first = t[t["family"] == 1]
    assert set(first["access_bytes"]) == {64}
    # -R 100 %, -W3 3:1 plain 80 %, -W5 1:1 plain 2/3, -W6 non-temporal writes 0 %: highest first
    assert first["traffic"].tolist() == ["read-only", "3:1", "1:1", "write-only-nt"]
    assert first["dram_read_pct_est"].tolist() == pytest.approx([100, 80, 200 / 3, 0])
    assert first["mix_read_pct"].tolist() == pytest.approx([100, 75, 50, 0])
    # the figures are memory_fit's, row for row (one analysis, not a second one)
    fit = mem.set_index("curve")
    for _, r in t.iterrows():
        assert r["b_max_MBps"] == fit.at[r["curve"], "b_max_MBps"]
        assert r["r0_ns"] == fit.at[r["curve"], "r0_ns"] or (math.isnan(r["r0_ns"]) and math.isnan(fit.at[r["curve"], "r0_ns"]))


def test_imported_curves_of_unknown_settings_make_no_family_but_meet_the_published_ones(real):
    curves = curve_table(bernep(real))  # as `memstor parse` reads them: settings unknown
    mem, _ = memory_fit_table(curves)
    assert len(mem) == 8 and read_ratio.read_ratio_table(mem).empty
    assert read_ratio.read_ratio_table(None).empty
    near = read_ratio.reference_table(curves, mem, load_mess_curves())
    assert len(near) == 3 and near["load_threads"].isna().all()
    (said,) = text.read_ratio_sentences(read_ratio.read_ratio_table(mem), near)
    assert "an unknown number of load threads (imported data)" in said


def test_nearest_published_platforms_recomputed_independently(family):
    curves, mem = family
    published = load_mess_curves()
    near = read_ratio.reference_table(curves, mem, published)
    assert list(near.columns) == read_ratio.REFERENCE_MATCH_COLUMNS
    assert near["rank"].tolist() == [1, 2, 3] and near["distance"].is_monotonic_increasing
    mine = curves[(curves["traffic"] == "read-only") & (curves["access_bytes"] == 64)]
    idle = mine.loc[mine["bandwidth_MBps"].idxmin(), "latency_ns"]
    peak = mine["bandwidth_MBps"].max()
    distances = {}
    at_peak = mine.sort_values("bandwidth_MBps")["latency_ns"].iloc[-1]     # the host's latency at its peak
    for platform, g in published.groupby("platform"):
        top = g[g["read_share_pct"] == g["read_share_pct"].max()].sort_values("bandwidth_MBps")
        if top["bandwidth_MBps"].max() < peak:                               # could not deliver it: how short
            loaded = math.log(peak / top["bandwidth_MBps"].max())
        else:                                                               # its latency at the host's peak
            loaded = math.log(np.interp(peak, top["bandwidth_MBps"], top["latency_ns"]) / at_peak)
        distances[platform] = math.hypot(math.log(top["latency_ns"].iloc[0] / idle), loaded)
    best = sorted(distances, key=distances.get)[:3]
    assert near["platform"].tolist() == best
    assert near["distance"].tolist() == pytest.approx([distances[p] for p in best])
    assert set(near["load_threads"]) == {7.0} and near["cpu"].notna().all()


def test_report_text_and_figure(family):
    curves, mem = family
    t = read_ratio.read_ratio_table(mem)
    near = read_ratio.reference_table(curves, mem, load_mess_curves())
    shown = text.read_ratio_display(t)
    assert len(shown) == 8 and shown["DRAM reads"].tolist()[:4] == ["100 %", "80 %", "67 %", "0 %"]
    assert "device" not in shown.columns
    said = text.read_ratio_sentences(t, near)
    first = t.iloc[0]
    assert f"{first['b_max_MBps']:,.0f} MB/s at 100 % DRAM reads" in said[0]
    assert "BSD-3-Clause" in said[-1] and near["platform"].iloc[0] in said[-1]
    published = load_mess_curves()
    fig = rfigs.family_figure(t, curves, near, published[published["platform"].isin(near["platform"])])
    try:
        panels = [ax for ax in fig.axes if ax.get_title()]
        assert len(panels) == 4 and panels[0].get_title().startswith("this machine")
        assert len(panels[0].get_lines()) == 4  # the 64 B family: four read shares
        assert panels[-1].get_xlabel() == "bandwidth (GB/s)"  # 2 x 2: the bottom row names it
        assert any(line.get_label() == "this machine, read-only" for line in panels[1].get_lines())
    finally:
        plt.close(fig)
    assert rfigs.family_figure(t[t["traffic"] == "read-only"].assign(family_size=1), curves) is None
    assert "Mess (Esmaili-Dokht et al., MICRO 2024), BSD-3-Clause" in rfigs.nearest_caption(near)
    assert rfigs.nearest_caption(None) == ""
