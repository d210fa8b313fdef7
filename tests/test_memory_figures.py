"""One definition per memory quantity (issue 27, item 4): every idle-latency and peak-bandwidth measurement
of a device in one table, each named for what it is, the headline's marked, nothing pooled across node
pairs or traffics."""

from __future__ import annotations

import pandas as pd
import pytest

from memstor.analysis import memory_figures as mf
from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import Dataset, HostData, _normalise_fio
from memstor.core.schema import FIO_COLUMNS
from memstor.report import text


def _empty_fio() -> pd.DataFrame:
    return _normalise_fio(pd.DataFrame(columns=FIO_COLUMNS), "", "")


def rows(**kw) -> dict:
    base = {"host": "h", "ok": True, "status": "done", "tool": "loadlat", "tool_version": "0.4", "traffic": None,
            "inject_delay": None, "huge_pages": None, "src_node": None, "dst_node": None, "latency_ns": None,
            "bandwidth_MBps": None, "pages": None}
    base.update(kw)
    return base


def mlc_frame() -> pd.DataFrame:
    return pd.DataFrame([
        rows(test="idle_latency", huge_pages=True, latency_ns=155.0, pages="2M (THP, 100 %)"),
        rows(test="idle_latency", huge_pages=False, latency_ns=185.0),
        rows(test="latency_matrix", src_node=0, dst_node=0, latency_ns=199.0),
        rows(test="latency_matrix", src_node=1, dst_node=1, latency_ns=158.0),
        rows(test="latency_matrix", src_node=0, dst_node=1, latency_ns=260.0),   # remote: not an idle figure
        rows(test="loaded_latency", traffic="read-only", inject_delay=20000, latency_ns=160.0, bandwidth_MBps=900.0),
        rows(test="loaded_latency", traffic="1:1", inject_delay=20000, latency_ns=170.0, bandwidth_MBps=800.0),
        rows(test="loaded_latency", traffic="read-only", inject_delay=0, latency_ns=400.0, bandwidth_MBps=30000.0),
        rows(test="peak_injection_bandwidth", traffic="read-only", bandwidth_MBps=26000.0),
        rows(test="peak_injection_bandwidth", traffic="stream-triad", bandwidth_MBps=40080.0),
        rows(test="max_bandwidth", traffic="1:1", bandwidth_MBps=35000.0),
    ])


def test_every_measurement_named_and_the_headline_marked():
    figs = mf.memory_figures(mlc_frame())
    idle = figs[figs["quantity"] == "idle latency"]
    assert idle["measurement"].tolist() == [
        "idle, huge pages (2M (THP, 100 %))", "idle, 4 KiB pages", "matrix, local node 1", "matrix, local node 0",
        "loaded, lightest load (delay 20000, read-only)"]  # the lowest traffic's: closest to an idle chase
    assert idle["value"].tolist() == [155.0, 185.0, 158.0, 199.0, 160.0]  # one per node, never pooled
    assert idle["role"].tolist() == ["headline"] + ["also measured"] * 4
    bw = figs[figs["quantity"] == "peak bandwidth"]
    head = bw[bw["role"] == "headline"]
    assert head["measurement"].tolist() == [f"peak injection, {mf.BYTES_COUNTED['stream-triad']}"] and head["value"].iloc[0] == 40080.0
    assert "loaded latency, highest (read-only)" in bw["measurement"].tolist()
    assert set(figs["tool"]) == {"loadlat v0.4"} and set(figs["unit"]) == {"ns", "MB/s"}


def idle(mlc) -> tuple:
    c = mf.headline_idle(mf.idle_candidates(mlc, "h"))
    return (None, "") if c is None else (c["value"], f"{c['tool']}: {c['measurement']}")


def peak(mlc) -> tuple:
    c = mf.headline_bandwidth(mf.bandwidth_candidates(mlc, "h"))
    return (None, "") if c is None else (c["value"], f"{c['tool']}: {c['measurement']}")


def test_the_headline_takes_the_same_figure_names_it_and_keeps_its_interval():
    mlc = mlc_frame()
    assert idle(mlc) == (155.0, "loadlat v0.4: idle, huge pages (2M (THP, 100 %))")
    assert peak(mlc) == (40080.0, f"loadlat v0.4: peak injection, {mf.BYTES_COUNTED['stream-triad']}")
    # without idle tests and huge pages: the lowest local matrix entry, then the lightest load
    no_idle = mlc[mlc["test"] != "idle_latency"]
    assert idle(no_idle)[0] == 158.0
    assert idle(no_idle[no_idle["test"] == "loaded_latency"])[0] == 160.0
    assert peak(mlc[mlc["test"] == "loaded_latency"])[0] == 30000.0
    assert idle(mlc.iloc[0:0]) == (None, "")
    # the headline row carries the candidate's interval: two runs of the idle test, n = 2, repetitions
    two = pd.concat([mlc, mlc.iloc[[0]].assign(latency_ns=165.0)], ignore_index=True)
    ds = Dataset(data_dir=None, hosts=[HostData(name="h")], fio=_empty_fio(), mlc=two)
    row = syn.headline_long(ds).set_index("key").loc["idle_latency_ns"]
    assert row["value"] == 160.0 and row["n"] == 2 and row["ci_method"] == "repetitions"
    assert row["value_ci_low"] < 155.0 and row["value_ci_high"] > 165.0


def test_display_shows_value_interval_and_role():
    two = pd.concat([mlc_frame(), mlc_frame().iloc[:2]], ignore_index=True)  # two runs of the idle tests
    shown = text.memory_figures_display(mf.memory_figures(two))
    assert list(shown.columns) == ["quantity", "measured as", "tool", "value [95 % interval]", "n", "gate", "used as"]
    first = shown.iloc[0]
    assert first["quantity"] == "idle mean latency (ns)" and first["n"] == "2" and first["used as"] == "the headline"
    assert first["value [95 % interval]"] == "155 [155, 155]"   # two equal runs: a zero-width interval
    assert text.memory_figures_display(None).empty and mf.memory_figures(None).empty


@pytest.mark.parametrize("drop", ["host", "test"])
def test_tables_without_the_columns_give_an_empty_table(drop):
    assert mf.memory_figures(mlc_frame().drop(columns=drop)).empty
