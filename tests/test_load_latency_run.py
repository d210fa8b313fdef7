"""fio-load-latency with ``generator: fio`` (the option that keeps fio's rate mode; the default, ioarrive, is
tests/test_load_latency_ioarrive.py), the real fio on a small test file: X_max (probe or the queue-depth table),
offered rates split over jobs, the flags, the raw logs and the per-second table, the SLO answer checked by an
independent interpolation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import load_latency
from memstor.core.errors import UsageError
from memstor.experiments import fio_load_latency as fll
from memstor.experiments import load_profile, run_experiment
from memstor.measure.fio_facts import fio_facts
from reliability_helpers import manifest_of, meta_of

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make env installs it)")
HOST = "llhost"
TINY = {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "rw": ["randread"], "utilisation_pct": [20, 60, 95],
        "probe_iodepth": 8, "probe_numjobs": 1, "slo_p99_us": [300, 100000], "generator": "fio"}
SPECS = Path(__file__).resolve().parents[1] / "data" / "specs"


def params(**over) -> dict:
    return load_profile("quick", fll.EXPERIMENT, {**TINY, **over})


def raw(data: Path) -> Path:
    return data / "raw" / HOST / fll.EXPERIMENT


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One real run (probe for X_max, three offered rates) and a rerun of it: (data root, table, rerun)."""
    if FIO is None:
        pytest.skip("fio is not installed")
    data = tmp_path_factory.mktemp("ll") / "data"
    table = run_experiment(fll.EXPERIMENT, params(), data_root=data, host=HOST, progress=False)
    def files():  # every raw file, the manifest included (a run that measures nothing writes nothing)
        return {p.name: p.stat().st_mtime_ns for p in raw(data).glob("*.json")}

    before = files()
    again = run_experiment(fll.EXPERIMENT, params(), data_root=data, host=HOST, progress=False)
    after = files()
    return data, table, again, (before == after) or sorted(k for k in set(before) | set(after)
                                                           if before.get(k) != after.get(k))


@needs_fio
@pytest.mark.fio
def test_probe_then_offered_rates_with_flags_that_match_the_numbers(measured):
    data, table, _, _ = measured
    probe = table[table["phase"] == "probe"]
    rates = table[table["phase"] == "rate"].sort_values("utilisation_pct")
    assert len(probe) == 1 and probe["status"].iloc[0] == "done"
    x_max = float(probe["iops"].iloc[0])
    assert list(rates["utilisation_pct"]) == [20, 60, 95] and (rates["status"] == "done").all()
    assert rates["x_max_iops"].tolist() == pytest.approx([round(x_max, 1)] * 3)
    assert rates["x_max_source"].str.startswith("probe at QD8x1").all()
    # offered = what the split asks: jobs x integer per-job rate, within 1 % of the share of X_max
    assert (rates["offered_iops"] / (rates["utilisation_pct"] / 100 * x_max)).between(0.99, 1.01).all()
    assert (rates["rate_per_job_iops"] * rates["numjobs"] <= rates["offered_iops"] * 1.01).all()
    # the acceptance: not overloaded <=> achieved within 5 % of offered (and the flag says so)
    ratio = rates["achieved_iops"] / rates["offered_iops"]
    assert (rates["overloaded"] == (ratio < fll.OVERLOAD_RATIO)).all()
    # within 5 %, or within the Poisson count's 3-sigma band where a short run's count is small (CI 2026-11-29:
    # 1.054 at u20 of a tiny run): the achieved rate of N Poisson arrivals is noisy by 1 / sqrt(N)
    count = rates["offered_iops"] * pd.to_numeric(rates["runtime_s"], errors="coerce")
    band = np.fmax(0.05, 3 / np.sqrt(count))  # no runtime recorded: the 5 % alone
    held = ~rates["overloaded"].astype(bool)
    assert ((ratio - 1).abs() <= band)[held].all(), list(zip(ratio[held], count[held], band[held]))
    assert rates["achieved_pct"].tolist() == pytest.approx((100 * ratio).tolist())
    # total-latency percentiles from the json+ lat_ns bins: ordered, and the total >= completion
    assert (rates["lat_p50_us"] <= rates["lat_p99_us"]).all() and (rates["lat_p99_us"] <= rates["lat_p99_9_us"]).all()
    assert (rates["lat_p99_us"] >= rates["clat_p99_us"] * 0.999).all()
    assert (rates["submit_mode"] == "inline").all()  # offload is never used (memstor.measure.openloop.OFFLOAD_WHY)
    # measured where this fio writes iolog times (3.31+), else not checked (empty), never guessed
    assert rates["open_loop"].notna().all() if fio_facts().iolog_timestamps else rates["open_loop"].isna().all()
    assert rates["ceiling_reached"].notna().all() and rates["config"].is_unique


@needs_fio
@pytest.mark.fio
def test_fio_latency_target_cross_check_point(measured):
    data, table, _, _ = measured
    lt = table[table["phase"] == "lt"]
    assert len(lt) == 1 and lt["status"].iloc[0] == "done" and lt["latency_target_us"].iloc[0] == 300
    assert 1 <= lt["latency_depth"].iloc[0] <= TINY["probe_iodepth"] and lt["achieved_iops"].iloc[0] > 0
    cmd = " ".join(meta_of(raw(data))[lt["point"].iloc[0]]["command"])
    assert "--latency_target=300us" in cmd and "--latency_percentile=99" in cmd and "--latency_window=500ms" in cmd


@needs_fio
@pytest.mark.fio
def test_every_rate_point_keeps_its_logs_raw_and_gives_seconds(measured):
    data, table, _, _ = measured
    rates = table[table["phase"] == "rate"]
    for point in rates["point"]:
        files = raw(data) / f"{point}.files"
        names = sorted(p.name for p in files.iterdir())
        assert any("_iops." in n for n in names) and any("_clat_hist." in n or "_hist." in n for n in names), names
        meta = meta_of(raw(data))[point]
        cmd = " ".join(meta["command"])
        assert "--rate_process=poisson" in cmd and f"--rate_iops={int(rates.set_index('point').loc[point, 'rate_per_job_iops'])}" in cmd
    sec = pd.read_csv(data / "processed" / HOST / f"{fll.SECONDS_TABLE}.csv")
    assert list(sec.columns) == fll.SECOND_COLUMNS and set(sec["point"]) == set(rates["point"])
    full = sec[sec["iops"].notna()]
    assert len(full) >= len(rates)  # at least one whole second per point
    # the per-second IOPS agree with the point's own IOPS (same run, 1-s windows)
    for point, g in full.groupby("point"):
        achieved = float(rates.set_index("point").loc[point, "achieved_iops"])
        assert g["iops"].mean() == pytest.approx(achieved, rel=0.15)


@needs_fio
@pytest.mark.fio
def test_a_rerun_measures_nothing(measured):
    data, table, again, untouched = measured
    assert untouched is True, f"changed by the rerun: {untouched}"
    man = manifest_of(raw(data))
    # as the first run left it: the probe point is `cached` in its second sweep (the rates), the others done
    assert {p["status"] for p in man["points"]} == {"done", "cached"}
    cols = ["point", "achieved_iops", "lat_p99_us"]
    pd.testing.assert_frame_equal(table[cols].reset_index(drop=True), again[cols].reset_index(drop=True))


def independent_slo(x: np.ndarray, p99: np.ndarray, over: np.ndarray, target: float) -> tuple[float | None, bool]:
    """The SLO answer computed here: walk the points by rate; the first miss (or overloaded point) ends it."""
    order = np.argsort(x)
    x, p99, over = x[order], p99[order], over[order]
    for i in range(len(x)):
        if over[i] or p99[i] > target:
            if i == 0:
                return None, False
            if over[i]:
                return float(x[i - 1]), False
            return float(np.interp(target, [p99[i - 1], p99[i]], [x[i - 1], x[i]])), False
    return float(x[-1]), True


@needs_fio
@pytest.mark.fio
def test_slo_table_agrees_with_an_independent_interpolation(measured):
    from memstor.analysis.synthesis import synthesise
    from memstor.report.tables import write_tables

    data, table, _, _ = measured
    S = synthesise(data, SPECS, TINY["slo_p99_us"])
    write_tables(S, data.parent / "tables")
    shown = pd.read_csv(data.parent / "tables" / "slo.csv", keep_default_na=False, na_values=[""])
    assert list(shown.columns)[:5] == ["host", "rw", "target_p99_us", "max_iops", "censored"]
    # the SLO answer as computed; the table shows it only where the open loop held (memstor.analysis
    # .validity.gate): a loop that was not open on this machine empties it, with the reason
    slo = load_latency.slo(S.load, TINY["slo_p99_us"], S.dataset.fio)
    for (_, got), (_, row) in zip(shown.iterrows(), slo.iterrows()):
        if got["valid"]:
            assert got["max_iops"] == pytest.approx(row["max_iops"], nan_ok=True)
        else:
            assert pd.isna(got["max_iops"]) and got["not_valid"].startswith("not valid: ")
    rates = table[table["phase"] == "rate"]
    # the answer rests on the points whose loop held (load_latency.held_slo): flag true, achieved within +-5 %
    held = (rates["open_loop"].map(lambda v: str(v) == "True") & ((rates["achieved_pct"] - 100).abs() <= 5)).to_numpy()
    x, p99 = rates["achieved_iops"].to_numpy(float)[held], rates["lat_p99_us"].to_numpy(float)[held]
    over = rates["overloaded"].astype(bool).to_numpy()[held]
    assert len(slo) == 2
    for _, row in slo.iterrows():
        assert row["held_points"] == held.sum() and row["points"] == len(rates)
        if not held.any():
            assert pd.isna(row["max_iops"])
            continue
        want, censored = independent_slo(x, p99, over, row["target_p99_us"])
        if want is None:
            assert pd.isna(row["max_iops"])
        elif held.all():
            assert bool(row["censored"]) == censored and row["max_iops"] == pytest.approx(want, rel=0.05)
        else:  # a rate that did not hold may cut the answer to a lower bound: the last held rate that met it
            assert row["max_iops"] <= want * 1.0001 and (row["censored"] or row["max_iops"] == pytest.approx(want))
    # the 100 ms target is met at every held point on this machine unless one was overloaded
    big = slo[slo["target_p99_us"] == 100000].iloc[0]
    assert not held.any() or bool(big["censored"]) == (not over.any() or not held.all())
    load = pd.read_csv(data.parent / "tables" / "load_latency.csv")
    assert len(load) == 3 and (load["host"] == HOST).all()
    # the cross-check: fio's own latency_target search at the first target, beside the SLO answer
    lt = table[table["phase"] == "lt"].iloc[0]
    first = slo[slo["target_p99_us"] == TINY["slo_p99_us"][0]].iloc[0]
    assert first["fio_latency_depth"] == lt["latency_depth"]
    own_p99 = lt["lat_p99_us"] if pd.notna(lt["lat_p99_us"]) else lt["clat_p99_us"]
    assert first["fio_latency_target_p99_us"] == pytest.approx(own_p99)
    assert pd.isna(slo[slo["target_p99_us"] == 100000].iloc[0]["fio_latency_target_iops"])  # no lt point at it
    if own_p99 > TINY["slo_p99_us"][0]:  # fio's search missed its own target (a loaded machine): no answer shown
        assert pd.isna(first["fio_latency_target_iops"]) and pd.isna(first["ratio_to_fio"])
        return
    depth, iodepth = int(lt["latency_depth"]), int(lt["iodepth"])
    if depth < iodepth and depth & (depth - 1) == 0:  # the run ended while fio still doubled: cut off, no answer
        assert pd.isna(first["fio_latency_target_iops"]) and first["fio_latency_cut_off_s"] > 0
        return
    assert pd.isna(first["fio_latency_cut_off_s"])
    assert first["fio_latency_target_iops"] == pytest.approx(lt["achieved_iops"])
    if not pd.isna(first["max_iops"]):
        assert first["ratio_to_fio"] == pytest.approx(first["max_iops"] / lt["achieved_iops"])


@needs_fio
@pytest.mark.fio
def test_x_max_comes_from_the_queue_depth_table_when_there_is_one(tmp_path):
    data = tmp_path / "data"
    proc = data / "processed" / HOST
    proc.mkdir(parents=True)
    pd.DataFrame([{"rw": "randread", "direction": "read", "bs_bytes": 4096, "status": "done", "iops": v,
                   "iodepth": qd, "numjobs": 1} for v, qd in ((3000.0, 1), (9000.0, 8), (8000.0, 32))]
                 ).to_csv(proc / "fio-queue-depth.csv", index=False)
    table = run_experiment(fll.EXPERIMENT, params(utilisation_pct=[50]), data_root=data, host=HOST, progress=False)
    assert set(table["phase"]) == {"rate", "lt"}  # no probe
    row = table[table["phase"] == "rate"].iloc[0]
    assert row["x_max_iops"] == 9000.0 and row["x_max_source"].startswith("fio-queue-depth table: best of 3 runs (QD8x1)")
    assert row["offered_iops"] == pytest.approx(4500, rel=0.01)


@pytest.mark.parametrize("over, param", [
    ({"utilisation_pct": [0]}, "utilisation_pct"),
    ({"utilisation_pct": [120]}, "utilisation_pct"),
    ({"utilisation_pct": [50, 50]}, "utilisation_pct"),
    ({"slo_p99_us": [-1]}, "slo_p99_us"),
    ({"iodepth": 0}, "iodepth"),
    ({"x_max_iops": -5}, "x_max_iops"),
])
def test_bad_parameters_are_refused_naming_the_parameter(over, param):
    with pytest.raises(UsageError, match=param):
        fll.validate(params(**over))


@pytest.mark.fio
def test_manifest_records_the_submit_mode_decision(measured):
    data, _, _, _ = measured
    info = json.loads((raw(data) / "manifest.json").read_text())["sysinfo"]
    assert info["submit_mode"] == "inline" and "offload not used" in info["submit_mode_why"]
    assert info["max_job_rate_iops"] >= 1 and info["qd1_latency_us"] > 0
    # the decision is kept beside the raw points (the rate split, so the point names, depend on it)
    kept = json.loads((raw(data) / fll.SUBMIT_MODE_FILE).read_text())
    assert kept["mode"] == info["submit_mode"] and kept["why"] == info["submit_mode_why"]


@needs_fio
@pytest.mark.fio
def test_a_broken_log_loses_only_its_per_second_rows(measured, tmp_path, capsys):
    data, table, _, _ = measured
    copy = tmp_path / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("scratch"))  # a copied test file is refused
    point = table[table["phase"] == "rate"]["point"].iloc[0]
    for log in (raw(copy) / f"{point}.files").glob("*_iops.*.log"):
        log.write_text("this is not a fio log\n")
    again = run_experiment(fll.EXPERIMENT, params(), data_root=copy, host=HOST, progress=False)
    assert (again["status"] == "done").all()  # the point's own numbers stand
    assert f"{point}: no per-second series" in capsys.readouterr().err
    sec = pd.read_csv(copy / "processed" / HOST / f"{fll.SECONDS_TABLE}.csv")
    assert point not in set(sec["point"]) and len(set(sec["point"])) == 2
