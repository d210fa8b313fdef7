"""The synthesis notebook's explorer (issue 17): the choices offered come from the data, a choice selects
exactly the matching points of the chosen devices, a widget change redraws the figure, and the exported
report leaves the explorer out."""

from __future__ import annotations

import json
from types import SimpleNamespace

import nbformat
import pandas as pd
import pytest

from conftest import ROOT
from memstor.report import explore as ex


def _synthesis() -> SimpleNamespace:
    qd = pd.DataFrame([
        dict(host=h, rw=rw, bs_bytes=4096, outstanding_io=n, iops=k * n * 1000.0, bw_MBps=k * n * 4.096,
             lat_mean_us=100.0 + n, clat_p99_us=200.0 + 2 * n, clat_p99_9_us=300.0 + 3 * n, in_sweep=n != 128)
        for h, k in (("a", 1.0), ("b", 2.0)) for rw in ("randread", "randwrite") for n in (1, 4, 16, 128)])
    load = pd.DataFrame([dict(host="a", rw="randread", offered_iops=o, achieved_iops=o * 0.99, lat_mean_us=90.0 + o / 100,
                              lat_p99_us=150.0, lat_p99_9_us=180.0) for o in (1000, 5000)])
    curves = pd.DataFrame([dict(host="b", curve="read-only, 64 B", inject_delay=d, bandwidth_MBps=1e4 / (1 + d),
                                latency_ns=100.0 + 1000 / (1 + d)) for d in (0, 10, 100)])
    return SimpleNamespace(qd=qd, load=load, curves=curves)


def test_choices_come_from_the_data():
    S = _synthesis()
    assert list(ex.sources(S)) == ["qd", "load", "memory"]
    assert ex.devices(S, "qd") == ["a", "b"] and ex.devices(S, "load") == ["a"] and ex.devices(S, "memory") == ["b"]
    assert ex.workloads(S, "qd") == ["randread, 4 KiB", "randwrite, 4 KiB"]
    assert ex.workloads(S, "memory", ["a"]) == []
    empty = SimpleNamespace(qd=pd.DataFrame(), load=None, curves=pd.DataFrame())
    assert ex.sources(empty) == {}


def test_selection_is_the_chosen_devices_and_workload_only():
    S = _synthesis()
    sel = ex.selection(S, "qd", ["b"], "randwrite, 4 KiB", "mean latency vs IOPS")
    # device b, randwrite, the sweep's own points (the spec-conditions point at 128 is not in the sweep)
    assert sel["host"].unique().tolist() == ["b"] and sel["x"].tolist() == [2000.0, 8000.0, 32000.0]
    assert sel["y"].tolist() == [101.0, 104.0, 116.0]
    both = ex.selection(S, "qd", ["a", "b"], "randread, 4 KiB", "IOPS vs outstanding I/O")
    assert len(both) == 6 and sorted(both["x"].unique()) == [1, 4, 16]


def test_a_widget_change_redraws_the_figure():
    pytest.importorskip("ipympl", reason="ipympl is not installed (make env installs requirements.txt)")
    e = ex.Explorer(_synthesis())
    assert e.source.value == "qd" and e.devices.value == ("a", "b") and e.drawn == 6
    assert e.ax.get_ylabel() == "mean latency (µs)" and len(e.ax.lines) == 2
    e.metric.value = "p99 latency vs IOPS"
    assert e.ax.get_ylabel() == "p99 completion latency (µs)" and e.ax.get_yscale() == "log"
    assert "<b>p99 latency vs IOPS</b>" in e.caption.value
    e.devices.value = ("b",)
    assert len(e.ax.lines) == 1 and e.drawn == 3 and "devices: b;" in e.caption.value
    e.source.value = "memory"
    assert e.devices.options == ("b",) and e.workload.value == "read-only, 64 B"
    assert e.ax.get_xlabel() == "bandwidth (MB/s, 10^6 B/s)" and e.drawn == 3


def test_no_data_says_so():
    pytest.importorskip("ipympl", reason="ipympl is not installed (make env installs requirements.txt)")
    e = ex.Explorer(SimpleNamespace(qd=pd.DataFrame(), load=pd.DataFrame(), curves=pd.DataFrame()))
    assert "No storage or memory results" in e.widget.children[0].value


def test_the_report_leaves_the_explorer_out():
    from memstor.report.export import _prepare

    nb = nbformat.read(ROOT / "notebooks" / "90-synthesis.ipynb", as_version=4)
    tagged = [c for c in nb.cells if ex.EXPLORE_TAG in c.metadata.get("tags", [])]
    assert len(tagged) == 2 and "Explorer(S)" in tagged[1].source
    prepared, _ = _prepare(nb)
    assert len(prepared.cells) == len(nb.cells) - 2
    assert not any("Explorer" in c.source for c in prepared.cells)
    assert json.dumps(nb.metadata["kernelspec"]) == json.dumps(prepared.metadata["kernelspec"])
