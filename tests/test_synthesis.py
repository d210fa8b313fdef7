"""Synthesis on real data: a dataset imported from the shared fixtures (memstor parse) beside this
machine measured by memstor (a tiny real fio queue-depth sweep). Both must appear side by side."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

matplotlib.use("Agg")

from memstor import cli  # noqa: E402
from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import NoData, load_dataset
from memstor.experiments._provenance import write_metas
from memstor.report import text
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
    from memstor.experiments import load_profile, run_experiment

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
def data(synth_data) -> Path:
    """build_data's data root, measured once per session (conftest.synth_data; test_report uses it too)."""
    return synth_data


@pytest.fixture(scope="module")
def S(data):
    return syn.synthesise(data, SPECS)


@pytest.mark.fio
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


@pytest.mark.fio
def test_headline_numbers_of_the_imported_host_match_the_fixtures(S):
    long = S.headline.set_index(["host", "key"])
    h = long["value"]
    # SOURCES.md: qd128 runs 148527.23 / 148561.76 / 148570.70 IOPS -> their mean, n = 3, with its CI
    x = np.array([148527.229, 148561.762549, 148570.697])
    assert h[(IMPORTED, "best_randread_iops")] == pytest.approx(x.mean(), rel=1e-6)
    best = long.loc[(IMPORTED, "best_randread_iops")]
    assert best["n"] == 3 and best["value_ci_low"] < x.mean() < best["value_ci_high"]
    assert best["detail"] == "QD128x1, io_uring, O_DIRECT, imported, n=3"
    # QD1 4K randread: two jobs (qd_sweep "qd1" x3, qd1_test "randread_qd1" x3) are two configurations,
    # never pooled; the headline is the lower mean latency: qd1 runs 79.0086 / 79.0868 / 79.8225 us
    assert h[(IMPORTED, "qd1_randread_lat_us")] == pytest.approx(np.mean([79.008614514, 79.086756, 79.822488]),
                                                                 rel=1e-5)
    # randwrite QD1: 14796.15 / 14840.92 / 14953.62 ns -> mean
    assert h[(IMPORTED, "qd1_randwrite_lat_us")] == pytest.approx(np.mean([14.796155, 14.840923, 14.953620]),
                                                                  rel=1e-5)
    assert h[(IMPORTED, "idle_latency_ns")] == pytest.approx(89.0)       # icelake idle matrix, local min
    assert h[(IMPORTED, "peak_bw_MBps")] == pytest.approx(351_762.1)      # icelake ALL Reads
    assert h[(IMPORTED, "seq_read_MBps")] > 3000
    assert h[(THIS, "best_randwrite_iops")] > 0
    assert h[(THIS, "qd1_randwrite_lat_us")] > 0
    assert pd.isna(h[(THIS, "best_randread_iops")])  # this host measured no random read: missing, not 0
    table = text.headline_evidence(S.headline, S.validity)
    assert list(table.columns) == ["device", "quantity", "value", "measured as", "trust"]
    assert list(dict.fromkeys(table["device"])) == [IMPORTED, THIS]
    half = stats.t.ppf(0.975, 2) * x.std(ddof=1) / np.sqrt(3)
    best = table[(table["device"] == IMPORTED) & (table["quantity"] == "Best 4K random read (IOPS)")].iloc[0]
    assert best["value"] == f"148,553 ± {half:.1f} (95 %, repetitions)"
    assert best["measured as"] == "QD128x1, io_uring, O_DIRECT, imported, n=3"
    absent = table[(table["device"] == THIS) & (table["quantity"] == "not measured")]["value"].iloc[0]
    assert "sequential read" in absent  # folded into one line, never a 0


@pytest.mark.fio
def test_spec_comparison_uses_the_spec_point_and_flags_conditions(S):
    comp = S.spec
    head = comp[comp["headline"]].set_index("host")
    assert set(head.index) == {IMPORTED, THIS}
    mine = head.loc[THIS]
    assert mine["selection"].startswith("spec-conditions point (QD32x4, ")
    assert mine["measured_conditions"].startswith("QD32x4=128, 4 KiB, 16 MiB file span, fresh, file on a filesystem")
    # this VM's virtio disk is no NVMe device: not the sheet's drive at all (a reviewer: a loop device and a
    # virtio disk set against a 1.6 TB NVMe sheet with no word on it)
    assert mine["flag"] == "differs: span, state, target, interface"
    assert mine["interface"].startswith("differs: not the sheet's drive (not an NVMe device")
    assert mine["ratio"] == pytest.approx(mine["measured"] / 130_000)
    theirs = head.loc[IMPORTED]
    # randwrite 4K QD32 x1: three jobs (mix_R0W100 x3: mean 128668.16, rw_burst 135267.22, rw_steady
    # 112747.12) are three configurations; the best matching one has the highest IOPS: rw_burst, n = 1
    assert theirs["measured"] == pytest.approx(135_267.224426, rel=1e-6)
    assert theirs["ratio"] == pytest.approx(135_267.224426 / 130_000, rel=1e-6) and theirs["n"] == 1
    assert theirs["selection"].startswith("nearest point of the sweeps, no spec-conditions point (QD32x1")
    assert theirs["flag"] == "differs: outstanding, span?, state?, target?"
    assert list(comp["headline"])[:2] == [True, True]
    shown = text.spec_table(comp)
    assert list(shown.columns) == ["host", "spec value", "unit", "measured", "spec", "state", "ratio",
                                   "conditions", "flag"]
    assert mine["state"] == "fresh (file span)" and theirs["state"] == "state ? (span ?)"
    seq = comp[(comp["host"] == THIS) & (comp["id"] == "seqread_series")].iloc[0]
    assert seq["flag"] == "not measured" and pd.isna(seq["measured"])


@pytest.mark.fio
def test_measured_conditions_come_from_table_and_meta(S):
    ds = S.dataset
    pt = S.points[(S.points["host"] == THIS) & S.points["spec_point"]].iloc[0]
    c = syn.measured_conditions(pt, ds.host(THIS))
    assert (c.iodepth, c.numjobs, c.bs_bytes) == (32, 4, 4096)
    assert (c.span, c.span_bytes, c.state, c.target) == ("file", 16 * 2**20, "fresh", "filesystem_file")


@pytest.mark.fio
def test_littles_law_for_every_queue_depth_point(S):
    lit = S.little
    mine = lit[lit["host"] == THIS]
    assert sorted(mine["outstanding_io"]) == [1, 4, 16, 128]
    r = mine.iloc[0]
    assert r["littles_outstanding"] == pytest.approx(r["iops"] * r["lat_mean_us"] * 1e-6)
    assert r["residual_pct"] == pytest.approx(100 * (r["littles_outstanding"] - r["outstanding_io"])
                                              / r["outstanding_io"])
    assert (r["band_low_io"], r["band_high_io"]) == pytest.approx((0.95 * r["outstanding_io"], 1.05 * r["outstanding_io"]))
    assert {"flagged", "reason", "n"} <= set(lit.columns)
    qd = lit[(lit["host"] == IMPORTED) & (lit["rw"] == "randread") & lit["config"].str.startswith("qd")]
    assert sorted(qd["outstanding_io"]) == [1, 2, 4, 8, 16, 32, 64, 128] and (qd["n"] == 3).all()
    assert qd["residual_pct"].abs().max() < 2.0        # real fio keeps Little's law within ~1 %
    # a mixed job is judged on its read + write total, from the same three runs
    mix = lit[(lit["host"] == IMPORTED) & (lit["rw"] == "randrw") & lit["config"].str.startswith("mix_R70W30")]
    assert list(mix["direction"]) == ["total"] and mix["n"].iloc[0] == 3


@pytest.mark.fio
def test_knee_fits_per_host_and_workload(S):
    k = S.knees.set_index(["host", "rw"])
    assert 8 < k.loc[(IMPORTED, "randread"), "N_star_fit"] < 16
    assert k.loc[(IMPORTED, "randread"), "N_range"] == "1-128"
    assert "need >= 3 points" in k.loc[(IMPORTED, "randwrite"), "note"]
    raw, raw_fits = syn.knee_fits(S.qd)  # before the validity gate
    mine = raw.set_index(["host", "rw"]).loc[(THIS, "randwrite")]
    assert mine["points"] == 3 and mine["N_range"] == "1-16"      # the spec point is shown, not fitted
    assert mine["N_star_fit"] == pytest.approx(mine["X_max_fit_iops"] * mine["R_min_fit_us"] * 1e-6)
    assert (IMPORTED, "randread") in S.knee_fits and (THIS, "randwrite") in raw_fits
    # a 3-point fit on this machine's short runs may contradict its data: then the report does not show it,
    # and says why (memstor.analysis.validity.gate)
    gated = k.loc[(THIS, "randwrite")]
    if gated["valid"]:
        assert gated["N_star_fit"] == pytest.approx(mine["N_star_fit"]) and (THIS, "randwrite") in S.knee_fits
    else:
        assert gated["not_valid"].startswith("not valid: ") and gated["N_star_fit"] is None
        assert (THIS, "randwrite") not in S.knee_fits  # the figure draws no gated fit
        assert (S.validity.query("host == @THIS and subject == 'randwrite' and check.str.startswith('knee')")
                ["status"] == "fail").any()
    fit = k.loc[(IMPORTED, "randread")]
    assert fit["N_star_fit_ci_low"] < fit["N_star_fit"] < fit["N_star_fit_ci_high"]
    assert fit["R_min_fit_se_us"] > 0 and fit["X_max_fit_se_iops"] > 0
    assert fit["N_star_bound"] == pytest.approx(fit["X_max_meas_iops"] * fit["R_min_meas_us"] * 1e-6)
    shown = text.knee_display(S.knees)
    assert {"N* fit (I/Os, 95 % CI)", "R_min fit (mean, µs)", "X_fit (IOPS)", "X_best (IOPS)", "R²", "N* bound (I/Os)"} \
        <= set(shown.columns)
    sentences = " ".join(text.knee_sentences(S.knees))
    assert "two-asymptote fit gives N*" in sentences and "closed-system bound gives N*" in sentences


@pytest.mark.fio
def test_memory_fit_of_the_imported_curve(S):
    # issue 16: icelake (hpcleuven) is flat at delays 0-15 (351871.6, 351747.1, 351724.8, 350234.2 MB/s): a
    # plateau. The old open-queue fit over every point reported R² and a knee; now the plateau is detected,
    # the model is fitted below it only, and its peak never lies above the plateau
    row = S.mem.set_index("host").loc[IMPORTED]
    assert row["points"] == 19 and row["traffic"] == "read-only" and row["access_bytes"] == 64
    plateau = [351871.6, 351747.1, 351724.8, 350234.2]
    assert row["saturated"] and row["plateau_points"] == 4 and row["b_sat_MBps"] == pytest.approx(np.mean(plateau))
    assert row["fit_points"] == 15 and row["identifiable"]
    assert row["peak_MBps"] <= row["b_sat_MBps"] and row["peak_MBps_ci_high"] <= row["b_sat_MBps"]
    assert 88 < row["r0_ns"] < 98 and row["r0_ns_ci_low"] < row["r0_ns"] < row["r0_ns_ci_high"]
    # Little's law at the maximum: 351871.6 MB/s / 64 B x 264.04 ns
    assert row["outstanding_at_b_max"] == pytest.approx(351871.6e6 / 64 * 264.04e-9)
    sentence = text.memory_sentences(S.mem)[0]
    assert "R0 = " in sentence and "a plateau at **351,394 MB/s** over 4 of 19 points" in sentence
    assert "R²" not in sentence
    # the per-point roles and Little's law are in the curve table
    pts = S.curves[S.curves["host"] == IMPORTED].set_index("inject_delay")
    assert (pts.loc[[0, 2, 8, 15], "role"] == "plateau").all() and (pts.loc[[50, 20000], "role"] == "fit").all()
    # storage curves through the same analysis: the imported closed sweep (randread) and this machine's
    st = S.storage.set_index(["host", "rw"])
    assert {(IMPORTED, "randread"), (THIS, "randwrite")} <= set(st.index)
    assert (st["kind"] == "closed queue-depth sweep").all() and st.loc[(IMPORTED, "randread"), "r0_us"] > 0
    shown = text.curves_display(S.mem, S.storage)
    assert shown["curve"].str.startswith("memory: ").sum() == 1 and shown["curve"].str.startswith("storage: ").sum() >= 2


@pytest.mark.fio
def test_figures_show_every_host(S):
    fig = figs.queue_depth_figure(S.qd, S.knee_fits)
    labels = {t.get_text() for leg in fig.legends for t in leg.get_texts()}
    assert {IMPORTED, THIS} <= labels
    for ax in fig.axes:
        if ax.get_visible() and ax.has_data():
            assert "(" in ax.get_xlabel() and "(" in ax.get_ylabel()      # units on every axis
    spec = figs.spec_figure(S.spec)
    ax = spec.axes[0]
    # a host whose ratios are not comparable (this machine's virtual disk: not the sheet's drive) draws no bar
    # (R-loop X.1); the others do
    drawn = set(S.spec.loc[S.spec["ratio"].notna() & S.spec["comparable"].fillna(True).astype(bool), "host"])
    assert {t.get_text() for t in ax.get_legend().get_texts()} == drawn and IMPORTED in drawn
    assert "ratio" in ax.get_xlabel()
    mem = figs.memory_figure(S.curves, S.mem_fits)
    assert [a.get_title() for a in mem.axes if a.get_visible()] == [IMPORTED]
    assert "ns" in mem.axes[0].get_ylabel() and "GB/s" in mem.axes[0].get_xlabel()
    sto = figs.storage_curve_figure(S.storage_fits)
    assert any("µs" in a.get_ylabel() and "IOPS" in a.get_xlabel() for a in sto.axes if a.get_visible())
    bs = figs.block_size_figure(S.points)
    assert bs is not None and (any(IMPORTED in t.get_text() for a in bs.axes if a.get_legend()
                                   for t in a.get_legend().get_texts()) or IMPORTED in bs.get_suptitle())
    lit = figs.littles_law_figure(S.little)
    assert {t.get_text() for t in lit.axes[0].get_legend().get_texts()} >= {f"{IMPORTED}, randread",
                                                                             f"{THIS}, randwrite"}
    import matplotlib.pyplot as plt
    plt.close("all")


@pytest.mark.fio
def test_systems_provenance_and_commands(S):
    sysinfo = text.systems_table(S.dataset).set_index("property")
    assert sysinfo.loc["Data", IMPORTED] == "imported (memstor parse)"
    assert sysinfo.loc["Data", THIS] == "measured by memstor"
    assert sysinfo.loc["fio", IMPORTED] == "fio-3.36"
    assert sysinfo.loc["Logical CPUs", THIS] not in ("–", "")
    prov = syn.provenance(S.dataset).set_index(["host", "table"])
    assert prov.loc[(THIS, "fio-queue-depth.csv"), "points"] == 4
    assert prov.loc[(THIS, "fio-queue-depth.csv"), "failed"] == 0
    assert prov.loc[(IMPORTED, "fio.csv"), "tools"] == "fio-3.36"
    cmds = text.commands(S.dataset, width=86)
    assert len(cmds) == 1 and cmds[0]["host"] == THIS and cmds[0]["points"] == 4
    assert "fio" in cmds[0]["command"] and "--rw=randwrite" in cmds[0]["command"]
    assert {"iodepth", "numjobs", "spec_point"} <= set(cmds[0]["varies"])


def test_no_data_and_bad_tables_give_one_line(tmp_path):
    with pytest.raises(NoData) as exc:
        load_dataset(tmp_path)
    assert "memstor parse" in str(exc.value) and "\n" not in str(exc.value)
    host = tmp_path / "processed" / "broken"
    host.mkdir(parents=True)
    (host / "fio.csv").write_text("", encoding="utf-8")
    with pytest.raises(NoData):
        load_dataset(tmp_path)
    good = tmp_path / "processed" / "ok"
    good.mkdir()
    pd.DataFrame([{"host": "x", "rw": "randread", "direction": "read", "bs_bytes": 4096, "iodepth": 1,
                   "numjobs": 1, "iops": 1000.0, "lat_mean_us": 999.0, "error": 0}]).to_csv(good / "fio.csv")
    ds = load_dataset(tmp_path)
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
    ds = load_dataset(tmp_path)
    assert ds.fio["ok"].tolist() == [True, False]
    pts = syn.fio_summary(ds)
    assert pts["iodepth"].tolist() == [1, 4] and pts["n"].tolist() == [1, 0] and pd.isna(pts["iops"].iloc[1])
    assert syn.provenance(ds).iloc[0]["failed"] == 1


@pytest.mark.fio
def test_methods_describe_exactly_the_points_in_the_tables(data, tmp_path):
    """A raw point of an earlier run with other settings (still on disk, never removed) is not counted
    in the methods section: its meta is left out of the provenance and the commands."""
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    raw = copy / "raw" / THIS / "fio-queue-depth"
    meta = next(raw.glob("*.meta.json"))
    old = json.loads(meta.read_text())
    old.update(point="randwrite-bs4k-qd1-nj1-io_uring-d1-t10-r2-f4g-rep1", start_time="2020-01-01T00:00:00Z")
    (raw / f"{old['point']}.meta.json").write_text(json.dumps(old))
    write_metas(copy, "fio-queue-depth")  # what the next `memstor run` does: provenance copied beside the tables
    ds = load_dataset(copy)
    h = ds.host(THIS)
    assert len(h.metas) == 4 and h.metas_not_shown == 1
    assert all(not str(m.get("start_time", "")).startswith("2020") for m in h.metas)
    assert text.commands(ds)[0]["points"] == 4


@pytest.mark.fio
def test_processed_alone_keeps_the_methods_and_provenance(data, tmp_path):
    """The points' provenance is written beside the tables (<experiment>-metas.json): a copied processed/
    folder gives the same methods section (commands, counts) and provenance table as the full data root."""
    import shutil

    alone = tmp_path / "alone"
    shutil.copytree(data / "processed", alone / "processed")
    full_ds, alone_ds = load_dataset(data), load_dataset(alone)
    def counts(ds):  # the commands name the paths they ran with; the rest must be the same
        return [{k: v for k, v in c.items() if k != "command"} for c in text.commands(ds)]

    assert counts(alone_ds) == counts(full_ds) and counts(alone_ds)[0]["points"] > 0
    assert all(c["command"].startswith("/") and "fio" in c["command"] for c in text.commands(alone_ds))
    pd.testing.assert_frame_equal(syn.provenance(alone_ds), syn.provenance(full_ds))
    assert all(not str(m["meta_path"]).startswith("/") for h in alone_ds.hosts for m in h.metas)
