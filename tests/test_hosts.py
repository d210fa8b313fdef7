"""Nothing pooled across devices (memstor.analysis.hosts): a fleet run's table holds several hosts, and the
experiment notebooks' one-device summaries and figures must describe each host on its own. Found by running
`make all HOSTS=…` on two namespace hosts: notebook 30's read/write figure crashed on the two hosts' rows,
notebook 10 pooled the two machines' idle latencies as "n = 2, repetitions" and notebook 40's CDFs and best
IOPS mixed them."""

from __future__ import annotations

import matplotlib
import pandas as pd

from memstor.analysis import hosts, memory, storage
from memstor.report import memory_text
from memstor.report.plots import memory as mplots
from memstor.report.plots import save_figures
from memstor.report.plots import storage as splots

matplotlib.use("Agg")


def idle_rows(host: str, ns: float, huge: bool = True) -> dict:
    return {"host": host, "test": "idle_latency", "latency_ns": ns, "huge_pages": huge, "pages": "2M" if huge else "4K",
            "status": "done", "ok": True, "traffic": "", "source": f"{host}.txt", "run": 1}


def test_each_host_keeps_one_device_as_it_was_and_splits_several():
    @hosts.each_host
    def mean_of(t: pd.DataFrame, scale=1.0):
        return pd.DataFrame({"v": [t["v"].mean() * scale]})

    one = pd.DataFrame({"host": ["a", "a"], "v": [1.0, 3.0]})
    assert mean_of(one).to_dict("list") == {"v": [2.0]}
    two = pd.DataFrame({"host": ["a", "a", "b"], "v": [1.0, 3.0, 10.0]})
    assert mean_of(two, scale=2).to_dict("list") == {"host": ["a", "b"], "v": [4.0, 20.0]}

    @hosts.each_host
    def text(t):
        return f"{len(t)} rows"

    assert text(two) == "**a**: 2 rows\n\n**b**: 1 rows" and text(one) == "2 rows"
    assert hosts.by_host(pd.DataFrame({"v": [1]}))[0][0] == "" and hosts.hosts_of(two) == ["a", "b"]


def test_idle_latency_of_two_machines_is_not_pooled_as_repetitions():
    df = pd.DataFrame([idle_rows("node1", 150.0), idle_rows("node2", 250.0)])
    table = memory.idle_table(df)
    assert list(table["host"]) == ["node1", "node2"] and list(table["n"]) == [1, 1]
    assert list(table["latency_ns"]) == [150.0, 250.0]
    assert memory.idle_table(df[df["host"] == "node1"])["n"].tolist() == [1]  # one host: as before
    assert memory.idle_latency_ns(df) == {"node1": 150.0, "node2": 250.0}  # never one number for two machines
    assert memory_text.page_walk_text(df).startswith("**node1**: ")


def test_a_figure_of_several_hosts_is_one_figure_per_host(tmp_path):
    rows = []
    for host, scale in (("node1", 1.0), ("node2", 2.0)):
        for mix in (100, 50, 0):
            for d in ("read", "write", "total"):
                rows.append({"host": host, "rw": "randrw", "rwmixread": mix, "bs_bytes": 4096, "direction": d,
                             "iops": scale * 1000.0, "lat_mean_us": 100.0, "config": f"c{mix}", "n": 1})
    summ = pd.DataFrame(rows)
    figs = splots.rw_ratio(summ)  # crashed with two hosts' rows ("cannot reindex on duplicate labels")
    assert sorted(figs) == ["node1", "node2"]
    assert figs["node2"]._suptitle.get_text().startswith("node2")
    single = splots.rw_ratio(summ[summ["host"] == "node1"])
    assert not isinstance(single, dict)
    paths = save_figures(tmp_path, "fio-rw-ratio", mix=figs, one=single)
    assert sorted(p.name for p in paths) == ["fio-rw-ratio-mix-node1.png", "fio-rw-ratio-mix-node2.png",
                                              "fio-rw-ratio-one.png"]
    peak = pd.DataFrame([{**idle_rows(h, 0.0), "test": "peak_injection_bandwidth", "traffic": "read-only",
                          "bandwidth_MBps": bw} for h, bw in (("node1", 10_000.0), ("node2", 20_000.0))])
    assert memory.peak_bandwidth_MBps(peak).to_dict() == {("node1", "read-only"): 10_000.0,
                                                          ("node2", "read-only"): 20_000.0}
    assert sorted(mplots.peak_bandwidth(peak)) == ["node1", "node2"]


def test_best_iops_per_host():
    df = pd.DataFrame([{"host": h, "rw": "randread", "iodepth": qd, "numjobs": 1, "iops": iops, "status": "done",
                        "config": f"{h}-{qd}", "direction": "read"}
                       for h, qd, iops in (("a", 1, 100.0), ("a", 8, 500.0), ("b", 1, 200.0), ("b", 8, 900.0))])
    best = storage.best_iops(df, "randread")
    assert {h: (b["iodepth"], b["iops"]) for h, b in best.items()} == {"a": (8, 500.0), "b": (8, 900.0)}
    assert storage.best_iops(df[df["host"] == "a"], "randread")["iops"] == 500.0
