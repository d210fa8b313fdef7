"""memstor.experiments.memory: parameter validation (before anything runs), the sweep's points, the analysis helpers
on real recorded MLC output (bernep/fiumad, values read by hand), and the figures."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from memstor.analysis import memory
from memstor.errors import UsageError
from memstor.experiments import mlc_loaded_latency as loaded_latency
from memstor.measure import mlc
from memstor.params import load_profile
from memstor.parse.mlc import parse_mlc
from memstor.schema import MLC_COLUMNS

matplotlib.use("Agg")

STANDIN_DIR = Path(__file__).resolve().parent / "data" / "mlc-standin"
BERNEP = "bernep__Advanced-Computer-Systems/Project 3/results"
FIUMAD_IDLE = "fiumad__Advanced-Computer-Systems/proj1/exp1/mlc_idle_latency.txt"


def good(**kw) -> dict:
    p = {"tool": "auto", "mlc_path": "", "traffic": ["R", "W5"], "access_bytes": [64], "delays": [0, 100, 20000],
         "seconds_per_point": 1, "buffer_kib": 65536, "latency_cpu": 0, "load_cpus": "", "profile": "test"}
    p.update(kw)
    return p


# ---------------------------------------------------------------------------------------- validation


def test_profiles_validate():
    for profile in ("quick", "standard", "full"):
        p = loaded_latency.validate_params(load_profile(profile, "mlc-loaded-latency"))
        assert p.profile == profile and p.traffic and p.delays and p.seconds_per_point > 0
        assert p.latency_cpu not in p.load_cpus and p.load_cpus
    std = loaded_latency.validate_params(load_profile("standard", "mlc-loaded-latency"))
    assert std.traffic == ("R", "W3", "W2", "W5", "W6") and std.access_bytes == (64, 256)
    assert std.delays == loaded_latency.MLC_DELAYS and std.buffer_kib == 1048576


def test_validation_normalises():
    p = loaded_latency.validate_params(good(traffic=["r", "w3", 6], access_bytes=[128.0, "256"], tool="MLC", delays=7))
    assert p.traffic == ("R", "W3", "W6") and p.access_bytes == (128, 256) and p.tool == "mlc"
    assert p.delays == (7,)
    cpus = loaded_latency.available_cpus()
    assert p.load_cpus == tuple(c for c in cpus if c != 0)
    defaults = loaded_latency.validate_params({})  # missing keys take the standard profile's values
    assert defaults.delays == loaded_latency.MLC_DELAYS and defaults.seconds_per_point == 2


@pytest.mark.parametrize("override, pattern", [
    ({"traffic": ["R", "W11"]}, r"parameter traffic: unknown traffic code 'W11'; allowed: R \(read-only\), W2"),
    ({"traffic": []}, r"parameter traffic is empty"),
    ({"traffic": ["W5", "w5"]}, r"W5 appears twice"),
    ({"access_bytes": [100]}, r"parameter access_bytes: 100 is not a positive multiple of 64 bytes"),
    ({"access_bytes": [0]}, r"access_bytes: 0 is not a positive multiple of 64"),
    ({"access_bytes": ["big"]}, r"access_bytes: 'big' is not a positive multiple of 64"),
    ({"delays": [0, -5]}, r"parameter delays: -5 is not a whole number >= 0 \(inject delay in cycles\)"),
    ({"delays": [0, 1.5]}, r"delays: 1.5 is not a whole number"),
    ({"delays": [0, 0]}, r"delays: 0 appears twice"),
    ({"seconds_per_point": 0}, r"parameter seconds_per_point=0: expected a number of seconds > 0"),
    ({"seconds_per_point": "fast"}, r"seconds_per_point='fast'"),
    ({"buffer_kib": 0}, r"parameter buffer_kib=0: expected a whole number >= 1"),
    ({"buffer_kib": 10**12}, r"parameter buffer_kib=1000000000000: 1 load threads would need .* GiB"),
    ({"tool": "vtune"}, r"parameter tool='vtune': choose one of auto, mlc, loadlat"),
    ({"latency_cpu": 4096}, r"parameter latency_cpu=4096: not an available CPU; this machine offers CPUs"),
    ({"load_cpus": "0"}, r"load_cpus='0' includes latency_cpu 0"),
    ({"load_cpus": "1-"}, r"load_cpus='1-': expected a CPU list"),
    ({"load_cpus": "4095"}, r"load_cpus: CPU 4095 is not available"),
    ({"colour": "red"}, r"unknown parameter 'colour'; known: access_bytes, buffer_kib"),
])
def test_bad_params_rejected_before_anything_runs(override, pattern, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    monkeypatch.setenv("PATH", f"{STANDIN_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MLC_STANDIN_LOG", str(log))
    with pytest.raises(UsageError, match=pattern) as err:
        loaded_latency.run_loaded_latency(good(**override), data_root=tmp_path / "data", host="h", progress=False)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("mlc-loaded-latency: ")
    assert not log.exists() and not (tmp_path / "data").exists()  # nothing ran, nothing written


def test_mlc_takes_whole_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN_DIR}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UsageError, match=r"seconds_per_point=0.5: Intel MLC takes whole seconds .* tool=loadlat"):
        loaded_latency.run_loaded_latency(good(tool="mlc", seconds_per_point=0.5), data_root=tmp_path, host="h",
                                  progress=False)
    assert not (tmp_path / "raw").exists()


# ------------------------------------------------------------------------------------------- points


def test_points_order_names_and_estimates():
    p = loaded_latency.validate_params(good(traffic=["R", "W6"], access_bytes=[64, 256], delays=[0, 100, 20000],
                                    seconds_per_point=2))
    points = loaded_latency.build_points(p, "loadlat")
    assert [pt.name for pt in points] == [
        "idle-latency", "peak-injection-bandwidth", "loaded-latency_R_l64", "loaded-latency_W6_l64",
        "loaded-latency_R_l256", "loaded-latency_W6_l256"]
    loaded = points[3].params
    assert loaded["mode"] == "loaded_latency" and loaded["traffic"] == "W6" and loaded["access_bytes"] == 64
    assert loaded["delays"] == [0, 100, 20000] and loaded["tool"] == "loadlat"
    assert points[3].est_s == 3 * 2 + mlc.STARTUP_S          # 3 delays x 2 s + start-up
    assert points[1].est_s == 5 * 2 + mlc.STARTUP_S          # five read-write mixes
    assert "traffic" not in points[0].params and "load_cpus" not in points[0].params


# ----------------------------------------------------------------------- analysis on real MLC output


def real_table(real: Path, files: list[str], idle: bool = True) -> pd.DataFrame:
    """A table like run_loaded_latency's, from real recorded MLC files."""
    rows = []
    for f in files + ([FIUMAD_IDLE] if idle else []):
        rows += parse_mlc((real / f).read_text(), f).rows
    df = pd.DataFrame(rows, columns=MLC_COLUMNS)
    df["status"] = "done"
    return df


def test_idle_and_peak_from_real_output(real):
    df = real_table(real, ["fiumad__Advanced-Computer-Systems/proj1/exp1/full_mlc.txt"])
    assert memory.idle_latency_ns(df) == 78.6
    peak = memory.peak_bandwidth_MBps(df)
    assert list(peak.index) == ["read-only", "3:1", "2:1", "1:1", "stream-triad"]
    assert list(peak) == [17602.0, 20384.0, 23013.0, 32980.6, 21714.6]
    assert memory.idle_latency_ns(df.assign(status="failed")) is None


def test_check_table_on_real_mlc_curves(real):
    df = real_table(real, [f"{BERNEP}/mlc_write0_64.txt", f"{BERNEP}/mlc_write25_64.txt"])
    checks = memory.check_table(df).set_index("traffic")
    r = checks.loc["read-only"]
    # bernep -R -l64: bandwidth 906.1 MB/s at delay 9000, 1127.3 at 20000 -> +24.41%, not non-increasing
    assert r["max_bw_increase_pct"] == 24.41 and not r["bw_non_increasing"]
    # latency 66.72 ns at delay 20000 vs idle 78.6 ns (fiumad) -> -15.11%, just outside 15%
    assert r["latency_at_largest_delay_ns"] == 66.72 and r["latency_vs_idle_pct"] == -15.11
    assert not r["latency_near_idle"] and not r["ok"] and r["delays"] == 19
    w3 = checks.loc["3:1"]
    # -W3 -l64: the largest step up is 00000 -> 00002 (36076.5 -> 37058.2 MB/s, +2.72%); 70.62 ns at 20000
    assert w3["max_bw_increase_pct"] == 2.72 and w3["bw_non_increasing"]
    assert w3["latency_vs_idle_pct"] == -10.15 and w3["latency_near_idle"] and w3["ok"]
    no_idle = memory.check_table(real_table(real, [f"{BERNEP}/mlc_write0_64.txt"], idle=False))
    assert no_idle["latency_vs_idle_pct"].isna().all() and not no_idle["ok"].any()


def test_knee_on_real_mlc_curve(real):
    knee = memory.knee_table(real_table(real, [f"{BERNEP}/mlc_write0_64.txt"])).iloc[0]
    # points at <= 25% of 43078.9 MB/s are delays 400..20000; their median latency is 45.41 ns
    assert knee["unloaded_latency_ns"] == 45.41
    assert knee["max_bandwidth_MBps"] == 43078.9 and knee["latency_at_max_bandwidth_ns"] == 111.22
    # highest bandwidth with latency <= 1.25 x 45.41 = 56.76 ns: delay 100, 23523.7 MB/s at 54.89 ns
    assert (knee["knee_delay"], knee["knee_bandwidth_MBps"], knee["knee_latency_ns"]) == (100, 23523.7, 54.89)
    assert knee["knee_share_of_max"] == pytest.approx(23523.7 / 43078.9)


def test_failed_rows_are_ignored_by_analysis(real):
    df = real_table(real, [f"{BERNEP}/mlc_write0_64.txt"])
    failed = pd.DataFrame([{**dict.fromkeys(MLC_COLUMNS), "test": "loaded_latency", "traffic": "1:1",
                            "access_bytes": 64, "status": "failed"}])
    both = pd.concat([df, failed], ignore_index=True)
    assert list(memory.check_table(both)["traffic"]) == ["read-only"]
    assert len(memory.loaded_curves(both)) == 19


# ------------------------------------------------------------------------------------------ figures


def test_figures_have_units_lines_and_idle_marker(real):
    from memstor.report.plots import memory as mplots

    files = [f"{BERNEP}/mlc_write0_64.txt", f"{BERNEP}/mlc_write50_64.txt", f"{BERNEP}/mlc_write0_256.txt"]
    df = real_table(real, files)
    fig = mplots.latency_vs_bandwidth(df)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["access size 64 B", "access size 256 B"]
    for ax in panels:
        assert ax.get_xlabel() == "bandwidth (MB/s, 1 MB = 10^6 B)" and ax.get_ylabel() == "latency (ns)"
        labels = [ln.get_label() for ln in ax.get_lines()]
        assert "idle latency 79 ns" in labels
    lines64 = {ln.get_label(): ln for ln in panels[0].get_lines()}
    assert set(lines64) == {"read-only", "1:1", "idle latency 79 ns"}
    assert len(lines64["read-only"].get_xdata()) == 19 and max(lines64["read-only"].get_xdata()) == 43078.9

    fig2 = mplots.delay_sweep(df)
    titled = [ax for ax in fig2.axes if ax.get_title()]
    assert len(titled) == 4  # (read-only, 1:1) x (64, 256 B); 1:1 at 256 B has no data and says so
    first = titled[0]
    assert first.get_xlabel() == "inject delay (cycles of the delay loop)"
    assert first.get_ylabel() == "bandwidth (MB/s, 1 MB = 10^6 B)"
    twins = [ax for ax in fig2.axes if ax.get_ylabel() == "latency (ns)"]
    assert len(twins) == 3
    fig3 = mplots.peak_bandwidth(df)
    assert fig3.axes[0].get_xlabel() == "bandwidth (MB/s, 1 MB = 10^6 B)"
    empty = mplots.latency_vs_bandwidth(df.assign(status="failed"))
    assert "no loaded latency measured" in [t.get_text() for t in empty.axes[0].texts]
    matplotlib.pyplot.close("all")
