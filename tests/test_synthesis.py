"""Synthesis on real data: a dataset imported from the shared fixtures (memstor parse) beside this
machine measured by memstor (a tiny real fio queue-depth sweep). Both must appear side by side."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from memstor import cli  # noqa: E402
from memstor.analysis import synthesis as syn
from memstor.report.plots import synthesis as figs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "data" / "specs"
AIALRA_SSD = "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project3 SSD/results"
ICELAKE = "hpcleuven__VscDocumentation/source/leuven/tier2_hardware/icelake_mlc.txt"
IMPORTED = "aialra-ssd"
THIS = "thismachine"


def build_data(root: Path, real: Path, with_this_machine: bool = True) -> Path:
    """A data root with an imported host (real fixtures via `memstor parse -o`) and, optionally, this
    machine measured by memstor's own fio queue-depth sweep (1 s points, 16 MiB test file)."""
    from memstor.experiments import run_experiment
    from memstor.params import load_profile

    data = root / "data"
    out = data / "processed" / IMPORTED
    rc = cli.main(["parse", str(real / AIALRA_SSD), str(real / ICELAKE), "-o", str(out)])
    assert rc == 0 and (out / "fio.csv").is_file() and (out / "mlc.csv").is_file()
    if with_this_machine:
        params = load_profile("quick", "fio-queue-depth", {
            "runtime_s": 1, "ramp_s": 0, "file_size": "16m", "rw": ["randwrite"], "iodepth": [1, 4, 16]})
        run_experiment("fio-queue-depth", params, data_root=data, host=THIS, progress=False)
    return data


@pytest.fixture(scope="module")
def data(real, tmp_path_factory) -> Path:
    return build_data(tmp_path_factory.mktemp("synth"), real)


@pytest.fixture(scope="module")
def S(data):
    return syn.synthesise(data, SPECS)


def test_both_hosts_are_loaded_with_their_tables(S, data):
    ds = S.dataset
    assert ds.host_names == [IMPORTED, THIS]
    assert ds.host(IMPORTED).tables == ["fio.csv", "mlc.csv"]
    assert ds.host(THIS).tables == ["fio-queue-depth.csv"]
    assert ds.host(THIS).sysinfo is not None and ds.host(IMPORTED).sysinfo is None
    metas = ds.host(THIS).metas
    assert len(metas) == 4 and all(m["experiment"] == "fio-queue-depth" for m in metas)
    assert set(ds.fio["host"]) == {IMPORTED, THIS}
    assert ds.problems == []


def test_headline_numbers_of_the_imported_host_match_the_fixtures(S):
    h = S.headline.set_index(["host", "key"])["value"]
    # SOURCES.md: qd128 runs 148527.23 / 148561.76 / 148570.70 IOPS -> median
    assert h[(IMPORTED, "best_randread_iops")] == pytest.approx(148_561.762549, rel=1e-6)
    # QD1 4K randread: qd_sweep qd1 x3 + qd1_test x3 -> median of six mean latencies (us)
    assert h[(IMPORTED, "qd1_randread_lat_us")] == pytest.approx((79.407695281 + 79.699319714) / 2, rel=1e-6)
    # randwrite QD1: 14796.15 / 14840.92 / 14953.62 ns -> median
    assert h[(IMPORTED, "qd1_randwrite_lat_us")] == pytest.approx(14.840922903, rel=1e-6)
    assert h[(IMPORTED, "idle_latency_ns")] == pytest.approx(89.0)       # icelake idle matrix, local min
    assert h[(IMPORTED, "peak_bw_MBps")] == pytest.approx(351_762.1)      # icelake ALL Reads
    assert h[(IMPORTED, "seq_read_MBps")] > 3000
    assert h[(THIS, "best_randwrite_iops")] > 0
    assert h[(THIS, "qd1_randwrite_lat_us")] > 0
    assert pd.isna(h[(THIS, "best_randread_iops")])  # this host measured no random read: missing, not 0
    table = syn.headline_table(S.headline)
    assert list(table.columns) == ["metric", IMPORTED, THIS]
    assert table.loc[table["metric"] == "Best 4K random read (IOPS)", IMPORTED].iloc[0] == "148,562 (at QD128x1)"
    assert table.loc[table["metric"] == "Sequential read (MB/s)", THIS].iloc[0] == "–"


def test_spec_comparison_uses_the_spec_point_and_flags_conditions(S):
    comp = S.spec
    head = comp[comp["headline"]].set_index("host")
    assert set(head.index) == {IMPORTED, THIS}
    mine = head.loc[THIS]
    assert mine["selection"] == "spec-conditions point (QD32x4)"
    assert mine["measured_conditions"].startswith("QD32x4=128, 4 KiB, 16 MiB file span, fresh, file on a filesystem")
    assert mine["flag"] == "differs: span, state, target"
    assert mine["ratio"] == pytest.approx(mine["measured"] / 130_000)
    theirs = head.loc[IMPORTED]
    # randwrite 4K QD32 x1 runs: 130728.74, 154276.66, 100999.07, 135267.22, 112747.12 -> median
    assert theirs["measured"] == pytest.approx(130_728.742375, rel=1e-6)
    assert theirs["ratio"] == pytest.approx(130_728.742375 / 130_000, rel=1e-6)
    assert theirs["selection"].startswith("best matching point, no spec-conditions point (QD32x1")
    assert theirs["flag"] == "differs: outstanding, span?, state?, target?"
    assert list(comp["headline"])[:2] == [True, True]
    shown = syn.spec_table(comp)
    assert list(shown.columns) == ["host", "spec value", "unit", "measured", "spec", "ratio",
                                   "conditions", "flag"]
    seq = comp[(comp["host"] == THIS) & (comp["id"] == "seqread_series")].iloc[0]
    assert seq["flag"] == "not measured" and pd.isna(seq["measured"])


def test_measured_conditions_come_from_table_and_meta(S):
    ds = S.dataset
    pt = S.points[(S.points["host"] == THIS) & S.points["spec_point"]].iloc[0]
    c = syn.measured_conditions(pt, ds.host(THIS))
    assert (c.iodepth, c.numjobs, c.bs_bytes) == (32, 4, 4096)
    assert (c.span, c.span_bytes, c.state, c.target) == ("file", 16 * 2**20, "fresh", "filesystem_file")


def test_littles_law_for_every_queue_depth_point(S):
    lit = S.little
    mine = lit[lit["host"] == THIS]
    assert sorted(mine["N_outstanding"]) == [1, 4, 16, 128]
    r = mine.iloc[0]
    assert r["XR_outstanding"] == pytest.approx(r["X_iops"] * r["R_mean_us"] * 1e-6)
    assert r["residual_pct"] == pytest.approx(100 * (r["XR_outstanding"] - r["N_outstanding"]) / r["N_outstanding"])
    theirs = lit[(lit["host"] == IMPORTED) & (lit["rw"] == "randread")]
    assert sorted(theirs["N_outstanding"]) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert theirs["residual_pct"].abs().max() < 2.0        # real fio keeps Little's law within ~1 %


def test_knee_fits_per_host_and_workload(S):
    k = S.knees.set_index(["host", "rw"])
    assert 8 < k.loc[(IMPORTED, "randread"), "N_star_fit"] < 16
    assert k.loc[(IMPORTED, "randread"), "N_range"] == "1-128"
    assert "need >= 3 points" in k.loc[(IMPORTED, "randwrite"), "note"]
    mine = k.loc[(THIS, "randwrite")]
    assert mine["points"] == 3 and mine["N_range"] == "1-16"      # the spec point is shown, not fitted
    assert mine["N_star_fit"] == pytest.approx(mine["X_max_fit_iops"] * mine["R_min_fit_us"] * 1e-6)
    assert (IMPORTED, "randread") in S.knee_fits and (THIS, "randwrite") in S.knee_fits
    shown = syn.knee_display(S.knees)
    assert {"N* fit (I/Os)", "R_min fit (µs)", "X_max fit (IOPS)", "R²"} <= set(shown.columns)
    text = " ".join(syn.knee_sentences(S.knees))
    assert f"{k.loc[(IMPORTED, 'randread'), 'N_star_fit']:.1f} I/Os in flight" in text


def test_memory_fit_of_the_imported_curve(S):
    m = S.mem.set_index("host")
    assert list(m.index) == [IMPORTED]
    row = m.loc[IMPORTED]
    assert row["points"] == 19 and row["traffic"] == "read-only" and row["r2"] > 0.99
    assert 88 < row["R0_ns"] < 98 and row["knee_reached"]
    assert "R0 = " in syn.memory_sentences(S.mem)[0]


def test_figures_show_every_host(S):
    fig = figs.queue_depth_figure(S.qd, S.knee_fits)
    labels = {t.get_text() for leg in fig.legends for t in leg.get_texts()}
    assert {IMPORTED, THIS} <= labels
    for ax in fig.axes:
        if ax.get_visible() and ax.has_data():
            assert "(" in ax.get_xlabel() and "(" in ax.get_ylabel()      # units on every axis
    spec = figs.spec_figure(S.spec)
    ax = spec.axes[0]
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {IMPORTED, THIS}
    assert "ratio" in ax.get_xlabel()
    mem = figs.memory_figure(S.curves, S.mem_fits)
    assert [a.get_title() for a in mem.axes if a.get_visible()] == [IMPORTED]
    assert "ns" in mem.axes[0].get_ylabel() and "GB/s" in mem.axes[0].get_xlabel()
    bs = figs.block_size_figure(S.points)
    assert bs is not None and any(IMPORTED in t.get_text() for a in bs.axes if a.get_legend()
                                  for t in a.get_legend().get_texts())
    lit = figs.littles_law_figure(S.little)
    assert {t.get_text() for t in lit.axes[0].get_legend().get_texts()} >= {f"{IMPORTED}, randread",
                                                                             f"{THIS}, randwrite"}
    import matplotlib.pyplot as plt
    plt.close("all")


def test_systems_provenance_and_commands(S):
    sysinfo = syn.systems_table(S.dataset).set_index("property")
    assert sysinfo.loc["Data", IMPORTED] == "imported (memstor parse)"
    assert sysinfo.loc["Data", THIS] == "measured by memstor"
    assert sysinfo.loc["fio", IMPORTED] == "fio-3.36"
    assert sysinfo.loc["Logical CPUs", THIS] not in ("–", "")
    prov = syn.provenance(S.dataset).set_index(["host", "table"])
    assert prov.loc[(THIS, "fio-queue-depth.csv"), "points"] == 4
    assert prov.loc[(THIS, "fio-queue-depth.csv"), "failed"] == 0
    assert prov.loc[(IMPORTED, "fio.csv"), "tools"] == "fio-3.36"
    cmds = syn.commands(S.dataset, width=86)
    assert len(cmds) == 1 and cmds[0]["host"] == THIS and cmds[0]["points"] == 4
    assert "fio" in cmds[0]["command"] and "--rw=randwrite" in cmds[0]["command"]
    assert {"iodepth", "numjobs", "spec_point"} <= set(cmds[0]["varies"])


def test_no_data_and_bad_tables_give_one_line(tmp_path):
    with pytest.raises(syn.NoData) as exc:
        syn.load_dataset(tmp_path)
    assert "memstor parse" in str(exc.value) and "\n" not in str(exc.value)
    host = tmp_path / "processed" / "broken"
    host.mkdir(parents=True)
    (host / "fio.csv").write_text("", encoding="utf-8")
    with pytest.raises(syn.NoData):
        syn.load_dataset(tmp_path)
    good = tmp_path / "processed" / "ok"
    good.mkdir()
    pd.DataFrame([{"host": "x", "rw": "randread", "direction": "read", "bs_bytes": 4096, "iodepth": 1,
                   "numjobs": 1, "iops": 1000.0, "lat_mean_us": 999.0, "error": 0}]).to_csv(good / "fio.csv")
    ds = syn.load_dataset(tmp_path)
    assert ds.host_names == ["ok"]
    assert any("broken/fio.csv: empty file" in p for p in ds.problems)


def test_failed_points_never_enter_a_number(tmp_path):
    host = tmp_path / "processed" / "h"
    host.mkdir(parents=True)
    rows = [
        {"rw": "randread", "direction": "read", "bs_bytes": 4096, "iodepth": 1, "numjobs": 1, "iops": 5000.0,
         "lat_mean_us": 200.0, "error": 0, "status": "done", "point": "a"},
        {"rw": "randread", "direction": "read", "bs_bytes": 4096, "iodepth": 4, "numjobs": 1, "iops": None,
         "lat_mean_us": None, "error": "fio: error 5", "status": "failed", "point": "b"},
    ]
    pd.DataFrame(rows).to_csv(host / "fio-queue-depth.csv", index=False)
    (host / "sysinfo.json").write_text(json.dumps({"cpu": {"model": "X"}}), encoding="utf-8")
    ds = syn.load_dataset(tmp_path)
    assert ds.fio["ok"].tolist() == [True, False]
    pts = syn.point_medians(ds.fio)
    assert pts["iodepth"].tolist() == [1]
    assert syn.provenance(ds).iloc[0]["failed"] == 1
