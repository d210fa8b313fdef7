"""Synthesis across devices (pure analysis of a loaded data root, memstor.analysis.dataset): headline
numbers, spec comparison under matched conditions, Little's law, queueing fits, memory curves (provenance:
memstor.analysis.provenance, re-exported).

Every folder under ``processed/`` is one host (one device under test) and appears side by side with the
others in every table. Units are in the column names (``_us``, ``_ns``, ``_MBps`` = 10^6 bytes/s, ``iops``).
Failed points (status failed or fio error set) never enter a number; they are counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis import (
    adaptive_grid,
    ceilings,
    hierarchy,
    load_latency,
    memory,
    memory_figures,
    mixed_load,
    openloop_families,
    pts_demand,
    pts_recovery,
    queueing,
    read_ratio,
    reference_curves,
    specs,
    steady_state,
    wsat,
)
from memstor.analysis.conditions import measured_conditions
from memstor.analysis.dataset import Dataset, HostData, load_dataset
from memstor.analysis.drive import drive_table, interface_check
from memstor.analysis.histograms import read_bins
from memstor.analysis.memory_fit import annotate_points
from memstor.analysis.points import (
    NOT_SWEEPS,
    config_text,
    fio_summary,
    preferred,
    qd_points,
    select_points,
    sweep_points,
    with_best_measured,
)
from memstor.analysis.profile_settings import slo_targets
from memstor.analysis.provenance import provenance  # noqa: F401 (re-exported: the notebook and tests call syn.provenance)
from memstor.analysis.storage import littles_law_table
from memstor.analysis.storage_fit import OPEN as OPEN_CURVE
from memstor.analysis.storage_fit import storage_fit_table
from memstor.analysis.validity import gate, validity_table
from memstor.analysis.validity.targets import on_target
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing
from memstor.core.units import size_text

#: The mixed-load map's experiment (memstor.experiments.mixed_load_map: experiments are above analysis).
MIXED = "mixed-load-map"

#: The fio points' names, re-exported: callers (notebooks, the CLI, the report) read them here.
__all__ = ["NOT_SWEEPS", "config_text", "fio_summary", "qd_points", "sweep_points"]

# -------------------------------------------------------------------------------------- headlines

HEADLINE_METRICS = [
    ("idle_latency_ns", "Idle memory mean latency", "ns"),
    ("peak_bw_MBps", "Peak memory bandwidth", "MB/s"),
    ("qd1_randread_lat_us", "4K QD1 random read mean latency", "µs"),
    ("qd1_randwrite_lat_us", "4K QD1 random write mean latency", "µs"),
    ("best_randread_iops", "Best 4K random read", "IOPS"),
    ("best_randwrite_iops", "Best 4K random write", "IOPS"),
    ("ss_randwrite_iops", "Steady-state 4K random write", "IOPS"),
    ("seq_read_MBps", "Sequential read", "MB/s"),
    ("seq_write_MBps", "Sequential write", "MB/s"),
]


def _value(row, metric: str) -> tuple:
    """(value, detail, ci_low, ci_high, n, ci_method) of a summary row's metric for the headline table
    (ci_method: how its interval was made, ``repetitions`` or ``batch-means``; "" without one)."""
    lo, hi = row.get(f"{metric}_ci_low"), row.get(f"{metric}_ci_high")
    method = "" if missing(lo) else str(row.get("ci_method") or "")
    return (float(row[metric]), config_text(row), lo, hi, int(row["n"]), method)


def headline_long(ds: Dataset, pts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Headline numbers per device, long form: host, key, metric, unit, value, detail (the configuration
    it comes from: QD, engine, O_DIRECT, experiment, n), value_ci_low, value_ci_high (95 %), n, ci_method
    (``repetitions``: between runs, n >= 2; ``batch-means``: the single run's own interval; "" without), ci_note
    (a memory value without an interval: why, from its rows, e.g. 'correlated (lag-1 bandwidth 0.53 ...)'), gate,
    gate_detail (a memory value's runs under the quality gate: memory_figures.gate_outcome; '' for fio's)."""
    pts = sweep_points(fio_summary(ds) if pts is None else pts)
    pts = pts[pts["n"] > 0]
    none = (None, "", None, None, None, "")
    verdicts = steady_state.verdict_table(ds.fio).set_index("host")
    rows = []
    for host in ds.host_names:
        vals: dict = {}
        notes: dict = {}  # why a memory value has no interval (its rows' ci_note: correlated sub-windows, ...)
        gates: dict = {}
        for key, pick, cands in (("idle_latency_ns", memory_figures.headline_idle, memory_figures.idle_candidates),
                                 ("peak_bw_MBps", memory_figures.headline_bandwidth,
                                  memory_figures.bandwidth_candidates)):
            c = pick(cands(ds.mlc, host))
            notes[key] = "" if c is None or c["ci_low"] is not None else c.get("ci_note", "")
            gates[key] = (c or {}).get("gate", ""), (c or {}).get("gate_detail", "")  # memory_figures.gate_outcome
            vals[key] = none if c is None else (c["value"], f"{c['tool']}: {c['measurement']}", c["ci_low"],
                                                c["ci_high"], c["n"], c["ci_method"] if c["ci_low"] is not None else "")
        for rw in ("randread", "randwrite"):
            sel = select_points(pts, host, rw)
            q1 = sel[(sel["iodepth"] == 1) & (sel["numjobs"] == 1) & sel["lat_mean_us"].notna()]
            q1 = q1[q1["direct"].fillna(-1) == q1["direct"].fillna(-1).max()]  # O_DIRECT when there is one
            vals[f"qd1_{rw}_lat_us"] = (_value(q1.loc[q1["lat_mean_us"].idxmin()], "lat_mean_us")
                                       if not q1.empty else none)
            sel = sel[sel["iops"].notna()]
            vals[f"best_{rw}_iops"] = (_with_state(_value(r := sel.loc[sel["iops"].idxmax()], "iops"), r, ds.host(host))
                                       if not sel.empty else none)
        for rw, key in (("read", "seq_read_MBps"), ("write", "seq_write_MBps")):
            sel = select_points(pts, host, rw, bs=None)
            sel = sel[sel["bw_MBps"].notna()]
            if sel.empty:
                vals[key] = none
            else:
                r = sel.loc[sel["bw_MBps"].idxmax()]
                val = _with_state(_value(r, "bw_MBps"), r, ds.host(host))
                vals[key] = (val[0], f"bs {size_text(int(r['bs_bytes']))}, {val[1]}", *val[2:])
        vals["ss_randwrite_iops"] = _steady_headline(verdicts.loc[host]) if host in verdicts.index else none
        for key, label, unit in HEADLINE_METRICS:
            value, detail, lo, hi, n, method = vals[key]
            rows.append({"host": host, "key": key, "metric": label, "unit": unit, "value": value,
                         "detail": detail, "value_ci_low": lo, "value_ci_high": hi, "n": n, "ci_method": method,
                         "ci_note": notes.get(key, ""), **dict(zip(("gate", "gate_detail"), gates.get(key, ("", ""))))})
    return pd.DataFrame(rows).astype({"n": "Int64"})


def _with_state(val: tuple, point: pd.Series, host: HostData) -> tuple:
    """A sweep headline's (value, detail, ...) with its drive state and span after the configuration: '..., n=1,
    fresh, 256 MiB of the device' (nineteenth reads S19-1cpu 4, S19-loop 5: 'Best 4K random write 278,954' over 256
    MiB of a fresh device beside 65,267-94,977 IOPS over all of it after preconditioning, said only on page 5).
    Imported points, whose state the data does not say, keep the configuration alone."""
    c = measured_conditions(point, host)
    if c.state != "fresh":
        return val
    return (val[0], f"{val[1]}, fresh, {specs.span_text(c)}", *val[2:])


def _steady_headline(v: pd.Series) -> tuple:
    """(value, detail, ci_low, ci_high, n, ci_method) of the steady-state headline: the window average IOPS of one
    run (n = 1: its rounds are not repetitions). The detail names the span, the window and its rounds' length, not a
    state: that is the validity checks' to say (memstor.analysis.validity.gate.gate_steady; page 1's trust, label)."""
    if missing(v["window_avg_iops"]):
        return (None, "", None, None, None, "")
    secs = "" if missing(v.get("round_s")) else f" of {fmt_number(v['round_s'])} s"
    rule = (f"PTS window rule met at round {int(v['ss_round'])}" if bool(v["ss_achieved"])
            else f"PTS window rule not met ({v['verdict']})")
    span = f", {size_text(int(v['span_bytes']))} file" if v.get("span") == "file" and not missing(
        v.get("span_bytes")) else ""  # part of the configuration (S6-bare M-2)
    return (float(v["window_avg_iops"]), f"{v['workload']}{span}, {rule}, average of window rounds "
            f"{int(v['window_first'])}-{int(v['window_last'])}{secs} (one run)", None, None, 1, "")


def _spec_point_choice(pts: pd.DataFrame, host: str, sv: specs.SpecValue) -> tuple[pd.Series | None, str]:
    """The measured point to compare with spec value `sv`, and how it was chosen.

    4K random IOPS: the spec-conditions point (spec_point true) when present, else the point with the
    same rw and block size and the outstanding I/O closest to the spec's (log scale). MB/s: same rw,
    closest block size, then closest outstanding I/O."""
    sc = sv.conditions
    cands = select_points(pts, host, sv.rw, bs=None)
    cands = cands[cands["n"] > 0]
    if cands.empty:
        return None, ""
    if sv.metric == "iops" and sc.bs_bytes:
        same_bs = cands[cands["bs_bytes"] == sc.bs_bytes]
        spec_pts = same_bs[same_bs["spec_point"]]
        if not spec_pts.empty:
            r = preferred(spec_pts).iloc[0]
            return r, f"spec-conditions point ({config_text(r)})"
        if not same_bs.empty:
            cands = same_bs
    target_n = sc.outstanding or 1
    target_bs = sc.bs_bytes or 131072
    d = cands.assign(
        _dbs=(np.log2(cands["bs_bytes"].astype(float)) - math.log2(target_bs)).abs(),
        _dn=(np.log2(cands["outstanding_io"].astype(float)) - math.log2(target_n)).abs(),
        _dj=(cands["numjobs"] != (sc.numjobs or 1)).astype(int),
        _d=-cands["direct"].fillna(-1),
        _neg=-cands[sv.metric],
    ).sort_values(["_dbs", "_dn", "_dj", "_d", "_neg"])
    r = d.iloc[0]
    how = "nearest point of the sweeps" + ("" if sv.metric != "iops" else ", no spec-conditions point")
    apart = [what for what, off in ((size_text(target_bs), r["_dbs"] > 0), (f"{target_n} outstanding I/Os",
                                                                             r["_dn"] > 0)) if off]
    gap = f"; the spec's {' and '.join(apart)} {'are' if len(apart) > 1 else 'is'} not in them" if apart else ""
    return r, f"{how} ({config_text(r)}, bs {size_text(int(r['bs_bytes']))}{gap})"


def _steady_choice(verdicts: pd.DataFrame, host: str, sv: specs.SpecValue) -> pd.Series | None:
    """The steady-state verdict of `host` that measures spec value `sv` (IOPS of the same rw and block
    size, with a window to average), else None."""
    sel = verdicts[(verdicts["host"] == host) & (verdicts["rw"] == sv.rw) & verdicts["window_avg_iops"].notna()]
    if sv.metric != "iops" or sel.empty:
        return None
    if sv.conditions.bs_bytes and not (sel["bs_bytes"] == sv.conditions.bs_bytes).any():
        return None
    return sel.iloc[0]


def _wsat_choice(runs: pd.DataFrame | None, host: str, sv: specs.SpecValue) -> pd.Series | None:
    """The write-saturation run of `host` that measures spec value `sv` (a write of the same rw and block
    size with a sustained level after at least one cliff), else None: a sustained-write figure is compared
    with the level after the cliff, never the burst. A run without a cliff measured no state after one (its
    one level is the burst for all it wrote): the spec value then takes the ordinary rule (the spec-conditions
    point), not a row that says "sustained (after the write cliff)"."""
    if runs is None or runs.empty or sv.rw not in ("write", "randwrite"):
        return None
    sel = runs[(runs["host"] == host) & (runs["rw"] == sv.rw) & runs["sustained_MBps"].notna()
               & (pd.to_numeric(runs["cliffs"], errors="coerce").fillna(0) > 0)]
    if sv.conditions.bs_bytes:
        sel = sel[sel["bs_bytes"] == sv.conditions.bs_bytes]
    return sel.iloc[0] if len(sel) else None


def wsat_compare(sv: specs.SpecValue, w: pd.Series, fio_row: pd.Series | None, device: str, host: str) -> dict:
    """The spec-comparison row of a write-saturation run: its sustained level (MB/s or IOPS) with the
    burst level and the cliffs named in the selection."""
    full = w["span"] == "full_device"
    cond = specs.Conditions(
        iodepth=None if fio_row is None else int(fio_row["iodepth"]),
        numjobs=None if fio_row is None else int(fio_row["numjobs"]),
        bs_bytes=int(w["bs_bytes"]), span="full_device" if full else "file",
        span_bytes=None if full or missing(w["span_bytes"]) else int(w["span_bytes"]), state=specs.SUSTAINED,
        target="raw_device" if full else "filesystem_file", mb="decimal")
    value = float(w["sustained_iops"] if sv.metric == "iops" else w["sustained_MBps"])
    cliffs = int(w["cliffs"])
    how = (f"write saturation: the sustained level after {cliffs} cliff{'s' if cliffs != 1 else ''} (burst "
           f"{fmt_number(w['burst_MBps'])} MB/s)")
    row = specs.compare(sv, value, cond, device=device, host=host, selection=how)
    scale = 1.0 if sv.metric != "iops" else 1e6 / float(w["bs_bytes"])
    lo, hi = w["sustained_MBps_ci_low"], w["sustained_MBps_ci_high"]
    row.update(measured_ci_low=None if missing(lo) else float(lo) * scale,
               measured_ci_high=None if missing(hi) else float(hi) * scale, n=1)
    return row


def steady_conditions(v: pd.Series) -> specs.Conditions:
    """Measured conditions of a steady-state verdict (memstor.analysis.steady_state.verdict_table row):
    its outstanding I/O and block size, the span (test file or whole raw device) and the state: steady
    state only when the window rule was met and the trace is valid (memstor.analysis.validity.gate)."""
    full, region = v["span"] == "full_device", v["span"] == "region"  # region: part of a raw device (S12-loop 1)
    return specs.Conditions(
        iodepth=int(v["iodepth"]), numjobs=int(v["numjobs"]), bs_bytes=int(v["bs_bytes"]),
        span="full_device" if full else "region" if region else "file",
        span_bytes=None if full else int(v["span_bytes"]), state=_steady_state(v),
        target="raw_device" if full or region else "filesystem_file", mb="decimal")


def _steady_state(v: pd.Series) -> str:
    """The measured state of a verdict row: steady state only where the window rule was met and the gate lets it
    stand (``valid`` and ``steady_shown`` not False: numpy's False is not Python's, so compared by value);
    'steady state not shown' where the rule was met but not the checks; 'not achieved' where it was not met."""
    if not bool(v["ss_achieved"]):
        return specs.NOT_STEADY
    stands = all(missing(v.get(c)) or bool(v.get(c)) for c in ("valid", "steady_shown"))
    return "steady_state" if stands else specs.NOT_SHOWN


def steady_compare(sv: specs.SpecValue, v: pd.Series, device: str, host: str) -> dict:
    """The spec-comparison row of a steady-state verdict: its window average (IOPS, one run: n = 1) with the state
    it shows (:func:`_steady_state`); withheld (no measured value, the flag says why) where the run is not valid
    (memstor.analysis.validity.gate.gate_steady: a failed check)."""
    window = f"window rounds {int(v['window_first'])}-{int(v['window_last'])}"
    if not missing(v.get("valid")) and not bool(v.get("valid")):
        row = specs.compare(sv, None, None, device=device, host=host)
        row.update(flag="withheld: the steady-state run is not valid", state="not valid",
                   selection=f"withheld: {v['verdict']}; {str(v.get('not_valid') or '').removeprefix('not valid: ')}",
                   measured_ci_low=None, measured_ci_high=None, n=None)
        return row
    row = specs.compare(sv, float(v["window_avg_iops"]), steady_conditions(v), device=device, host=host,
                        selection=f"steady state: {v['verdict']}; average of {window} (one run)")
    row.update(measured_ci_low=None, measured_ci_high=None, n=1)
    return row


def _with_interface(comp: pd.DataFrame, ds: Dataset, sheets: list) -> pd.DataFrame:
    """comp with ``interface``: the drive's PCIe link against the sheet's interface (memstor.analysis.drive
    .interface_check: 'matched', 'differs: ...' or 'not available (...)'); a measured row whose link differs
    gets 'interface' added to its flag; ``comparable`` False where the target is not an NVMe device (a virtual
    disk, a loop device: not the sheet's drive at all, so its ratio compares two different things)."""
    links = interface_check(ds, sheets)
    if links.empty:
        return comp.assign(interface="not available (no drive record)", comparable=True)
    comp = comp.merge(links[["host", "device", "flag"]].rename(columns={"flag": "interface"}),
                      on=["host", "device"], how="left")
    comp["interface"] = comp["interface"].fillna("not available (no drive record)")
    # a target that is not an NVMe device (a virtual disk, a loop device) is not the sheet's drive at all
    not_nvme = comp["interface"].str.contains("not an NVMe device", regex=False)
    comp.loc[not_nvme, "interface"] = comp.loc[not_nvme, "interface"].str.replace(
        "not available (", "differs: not the sheet's drive (", n=1, regex=False)
    comp["comparable"] = ~not_nvme
    differs = comp["interface"].str.startswith("differs") & comp["measured"].notna()
    comp.loc[differs, "flag"] = comp.loc[differs, "flag"].map(
        lambda f: "differs: interface" if f == "matched" else f"{f}, interface")
    comp.loc[differs, "n_differ"] = comp.loc[differs, "n_differ"] + 1
    return comp


def spec_comparison(ds: Dataset, sheets: list, pts: pd.DataFrame | None = None,
                    verdicts: pd.DataFrame | None = None, wsat_runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Measured vs spec for every host x spec value: measured, spec, ratio, both conditions, flag.

    A device with a fio-steady-state run is compared on its window average for the spec values it measures
    (same rw and block size, IOPS): the state reads "steady state (file span)" or "... (full device)", and
    the state condition matches only when the window rule was met (verdicts: the steady-state table, default
    computed from ds; a gated one marks an invalid trace, which then does not count as steady).

    A write (sequential or random) that a write-saturation run measured (same rw and block size; after the
    steady state for random-write IOPS) is compared on the run's sustained level after the cliff, never
    its burst (wsat_runs: memstor.analysis.wsat.wsat_table; the selection names the cliffs and the burst).

    The drive's PCIe link is checked against the sheet's interface (column ``interface``; a mismatch adds
    'interface' to the flag).

    Columns: host, device, id, metric, unit, measured, spec, ratio (measured / spec), measured_conditions, state,
    spec_conditions, flag ('matched' or 'differs: ...'), n_differ, selection, headline, measured_ci_low,
    measured_ci_high, n, interface. Headline rows
    first. Hosts without any fio measurement are left out."""
    pts = sweep_points(fio_summary(ds) if pts is None else pts)
    verdicts = steady_state.verdict_table(ds.fio) if verdicts is None else verdicts
    rows = []
    for h in ds.hosts:
        if pts[pts["host"] == h.name].empty and verdicts[verdicts["host"] == h.name].empty:
            continue
        for sheet in sheets:
            for sv in sheet.values:
                v = _steady_choice(verdicts, h.name, sv)
                if v is not None:
                    rows.append(steady_compare(sv, v, sheet.device, h.name))
                    continue
                w = _wsat_choice(wsat_runs, h.name, sv)
                if w is not None:
                    f = ds.fio[(ds.fio["host"] == h.name) & (ds.fio["point"] == w["point"])]
                    rows.append(wsat_compare(sv, w, f.iloc[0] if len(f) else None, sheet.device, h.name))
                    continue
                r, how = _spec_point_choice(pts, h.name, sv)
                how += wsat.no_cliff_words(wsat_runs, h.name, sv.rw, sv.conditions.bs_bytes) if "not in" in how else ""
                measured = None if r is None else float(r[sv.metric])
                cond = None if r is None else measured_conditions(r, h)
                row = specs.compare(sv, measured, cond, device=sheet.device, host=h.name, selection=how)
                row.update(measured_ci_low=None if r is None else r.get(f"{sv.metric}_ci_low"),
                           measured_ci_high=None if r is None else r.get(f"{sv.metric}_ci_high"),
                           n=None if r is None else int(r["n"]))
                rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = _with_interface(df, ds, sheets)
    df["_order"] = (~df["headline"]).astype(int)
    return df.sort_values(["_order", "device", "host"], kind="stable").drop(columns="_order").reset_index(drop=True)


def littles_law(ds: Dataset) -> pd.DataFrame:
    """Little's law for every fio configuration of every device (memstor.analysis.storage.littles_law_table
    per configuration): X and R are means over the same successful runs, mixed jobs judged on their
    read + write totals, with the ±5 % band, the flag and the reason."""
    fio = ds.fio
    # open loops (fio-load-latency, the mixed-load map): N is not iodepth x jobs (validity's littles_law judges
    # them against their cap instead)
    closed = fio[~fio["experiment"].isin(["fio-load-latency", MIXED])] if "experiment" in fio else fio
    return littles_law_table(closed, per="config", data_dir=ds.data_dir)


def knee_fits(qd: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Fit X(N) <= min(N / R_min, X_max) and N* = X_max R_min per host x workload (the sweep points).

    Returns (table, fits) where fits maps (host, rw) -> queueing.KneeFit. Table columns (queueing.KNEE_COLUMNS, all
    on every row, NaN where a sweep could not be fitted: its note says why): host, rw, points, N_range, the
    two-asymptote fit (R_min_fit_us ± R_min_fit_se_us, X_max_fit_iops ± X_max_fit_se_iops, N_star_fit with its 95 %
    interval N_star_fit_ci_low/high, r2) and the closed-system bound from the measured inputs (R_min_meas_us:
    latency at the smallest N, X_max_meas_iops: highest IOPS, N_star_bound = their product), saturated, note."""
    rows, fits = [], {}
    for (host, rw), g in qd[qd["in_sweep"].astype(bool)].groupby(["host", "rw"], sort=True):
        base = {"host": host, "rw": rw, "points": int(len(g)),
                "N_range": f"{int(g['outstanding_io'].min())}-{int(g['outstanding_io'].max())}"}
        try:
            f = queueing.fit_closed_bounds(g["outstanding_io"], g["iops"], g["lat_mean_us"])
        except ValueError as err:
            rows.append({**base, "note": str(err)})
            continue
        fits[(host, rw)] = f
        note = "" if f.saturated else "sweep ends below the knee: X_max is a lower estimate"
        if missing(f.r2) or f.r2 < 0.5:
            note = "poor fit (R² < 0.5): the points do not follow the two asymptotes; read N* with care"
        rows.append({**base, "R_min_fit_us": f.r_min_us, "X_max_fit_iops": f.x_max_iops, "N_star_fit": f.n_star,
                     "r2": f.r2, "R_min_meas_us": f.r_min_measured_us, "X_max_meas_iops": f.x_max_measured_iops,
                     "N_star_bound": f.n_star_measured, "saturated": f.saturated, "note": note,
                     "R_min_fit_se_us": f.r_min_se_us, "X_max_fit_se_iops": f.x_max_se_iops,
                     "N_star_fit_ci_low": f.n_star_ci_low, "N_star_fit_ci_high": f.n_star_ci_high})
    return pd.DataFrame(rows, columns=queueing.KNEE_COLUMNS), fits


def memory_curves(mlc: pd.DataFrame) -> pd.DataFrame:
    """Loaded-latency curves of every host (memstor.analysis.memory.curve_table): one row per curve x inject
    delay with the curve's identity (host, tool, traffic, access_bytes, load_threads, buffer_kib, random,
    load_random, huge_pages; unknown = NaN, never guessed), ``pages``, ``origin`` (the source file when the
    identity is incomplete, so files that may differ are never pooled), the ``curve`` label, and over
    repetitions ``n``, mean and 95 % interval of latency_ns and bandwidth_MBps."""
    ok = mlc[mlc["ok"]] if "ok" in mlc.columns else mlc
    return memory.curve_table(ok)


def memory_fits(curves: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The latency–throughput analysis of every loaded-latency curve (memstor.analysis.curves via
    memstor.analysis.memory.fit_table): saturation (plateau, hook), the open-queue model R0 + a·ρ/(1 − ρ)
    fitted only below the plateau with 95 % intervals and an identifiability flag, the held-out check and
    the family metrics. One row per device × curve (``report/tables/memory_fit.csv``, columns
    memstor.analysis.memory.FIT_COLUMNS).

    Returns (table, fits); fits maps (host, curve label) -> memstor.analysis.curves.CurveFit."""
    return memory.fit_table(curves)


def storage_fits(qd: pd.DataFrame, load: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The same analysis for the storage curves: each device × workload's closed queue-depth sweep (the
    points in the sweep of :func:`qd_points`) and open loop (memstor.analysis.load_latency.curve_table).
    One row per device × curve (``report/tables/storage_fit.csv``, columns
    memstor.analysis.storage_fit.STORAGE_FIT_COLUMNS: IOPS and µs). Returns (table, fits); fits maps
    (host, kind, rw) -> memstor.analysis.curves.CurveFit."""
    return storage_fit_table(qd, load)


@dataclass
class Synthesis:
    """Every table of the report, computed once from a data root and the spec sheets."""

    dataset: Dataset
    sheets: list
    points: pd.DataFrame
    headline: pd.DataFrame
    spec: pd.DataFrame
    qd: pd.DataFrame
    little: pd.DataFrame
    knees: pd.DataFrame
    knee_fits: dict
    curves: pd.DataFrame
    mem: pd.DataFrame         # memory_fit: one row per device x loaded-latency curve (analysis.curves)
    mem_fits: dict            # (host, curve) -> analysis.curves.CurveFit
    steady: pd.DataFrame
    drive: pd.DataFrame
    interface: pd.DataFrame
    load: pd.DataFrame        # open-loop curves (memstor.analysis.load_latency.curve_table)
    slo: pd.DataFrame         # highest IOPS meeting each p99 target
    load_models: pd.DataFrame  # queueing models against the open-loop points
    unloaded: pd.DataFrame    # unloaded latency and the low-rate anomaly per device x workload
    storage: pd.DataFrame = None  # storage_fit: one row per device x storage curve (closed sweep, open loop)
    storage_fits: dict | None = None  # (host, kind, rw) -> analysis.curves.CurveFit
    pacing: pd.DataFrame = None   # fixed vs exponential pacing of the memory load at the same bandwidth
    grid: pd.DataFrame = None     # the points of every adaptive queue-depth grid and why they were added
    mem_sections: pd.DataFrame = None  # NUMA latency/bandwidth matrices, max bandwidth, cache-to-cache latency
    cluster: pd.DataFrame = None  # fleet runs: per grid point, the hosts' summed throughput and merged percentiles
    validity: pd.DataFrame | None = None  # host x check x subject: did each analysis's preconditions hold (validity)
    memory_figures: pd.DataFrame | None = None  # every idle-latency and peak-bandwidth measurement, the headline's marked
    wsat: pd.DataFrame | None = None          # write saturation: one row per run, burst and sustained levels (wsat)
    wsat_cliffs: pd.DataFrame | None = None   # every cliff of every write-saturation run, with its thermal verdict
    thermal: pd.DataFrame | None = None       # drive temperatures during the write-saturation runs
    wsat_seconds: pd.DataFrame | None = None  # the per-second series of the write-saturation runs (the plots)
    ceilings: pd.DataFrame | None = None      # DRAM peak and storage interface per device, beside the best measured
    above_ceiling: pd.DataFrame | None = None  # storage points faster than their link: not the drive
    working_set: pd.DataFrame | None = None   # memory hierarchy: latency against the buffer size (hierarchy)
    cache_levels: pd.DataFrame | None = None  # the levels found in it, beside the kernel's cache sizes, and the TLB cost
    mlp: pd.DataFrame | None = None           # memory-level parallelism: chains x threads, Little's law
    read_ratio: pd.DataFrame | None = None    # memory curves by DRAM read share (families), from memory_fit
    reference: pd.DataFrame | None = None     # the published platforms (Mess) nearest to each host's curve
    reference_curves: pd.DataFrame | None = None  # those platforms' published points (reference_curves)
    hir: pd.DataFrame | None = None           # SNIA PTS host idle recovery: IOPS per wait state against the baseline
    xsr: pd.DataFrame | None = None           # SNIA PTS cross-stimulus recovery: levels and settle time per transition
    cbw: pd.DataFrame | None = None           # SNIA PTS composite block-size workload: one row per T x Q point
    dirth: pd.DataFrame | None = None         # SNIA PTS demand intensity: T x Q matrix, max / min / optimal roles
    dirth_histograms: pd.DataFrame | None = None  # response-time histograms at the min, mid, optimal and max points
    mixed: pd.DataFrame | None = None         # mixed-load map: one row per cell x direction (mixed_load's cell table)
    capacity: pd.DataFrame | None = None      # its read capacity per device x write rate x read p99 target


def synthesise(data_dir: Path | str, specs_dir: Path | str | None = None, targets_us: list[float] | None = None,
               kinds: dict[str, str] | None = None, dram: dict | None = None,
               mixed_targets_us: list[float] | None = None) -> Synthesis:
    """Load every host under ``<data_dir>/processed`` and the spec sheets (``specs_dir``, default the shipped
    ones: memstor.core.resources), and compute every table.
    targets_us: the SLO answer's p99 targets in µs (default memstor.analysis.profile_settings.slo_targets); kinds: the experiment
    tables to read (memstor.analysis.dataset.load_dataset; the registry's, memstor.experiments.kinds());
    dram: the DRAM ceiling's ``memory_channels`` / ``memory_mts`` (memstor.analysis.profile_settings.dram_overrides), replacing SMBIOS;
    mixed_targets_us: the read p99 targets (µs) of the mixed-load map's capacity (default: the default profile's)."""
    ds = on_target(load_dataset(data_dir, kinds))
    sheets = specs.load_specs(specs_dir)
    pts = fio_summary(ds)
    qd = qd_points(ds, sweep_points(pts))
    knees, kfits = knee_fits(qd)
    knees = with_best_measured(knees, qd)  # X_best: the experiment's highest IOPS, any job count
    curves = memory_curves(ds.mlc)
    mem, mfits = memory_fits(curves)
    curves = annotate_points(curves, mfits)
    curves_ol = load_latency.curve_table(ds.fio, ds.side_table(load_latency.SECONDS), ds.usable_cpus())
    storage, sfits = storage_fits(qd, curves_ol)
    headline, steady = headline_long(ds, pts), steady_state.verdict_table(ds.fio)
    w_runs, w_seconds, w_thermal = ds.fio[ds.fio["table"] == wsat.EXPERIMENT], ds.side_table(wsat.SECONDS), \
        ds.side_table(wsat.THERMAL)
    w_cliffs = wsat.wsat_cliffs(w_runs, w_seconds, w_thermal)
    w_table = wsat.wsat_table(w_runs, w_seconds, w_cliffs, ds.metas)
    drives = drive_table(ds)
    ceil = ceilings.ceilings_table({h.name: h.sysinfo for h in ds.hosts}, drives, **(dram or {}))
    mixed_targets_us = slo_targets(experiment=MIXED) if mixed_targets_us is None else mixed_targets_us
    mixed = mixed_load.map_tables(ds.fio, mixed_targets_us)
    valid = validity_table(fio=ds.fio, mlc=ds.mlc, points=pts, knees=knees, load=curves_ol, steady=steady,
                           headline=headline, storage=storage, mem=mem, curves=curves, storage_fits=sfits,
                           mem_fits=mfits, sysinfo={h.name: h.sysinfo for h in ds.hosts}, wsat=w_table,
                           ceilings=ceil, qd=qd, metas=ds.metas, mixed=mixed["mixed"],
                           hir_seconds=ds.side_table("fio-pts-hir-seconds"))
    # no finding without its preconditions (nor an SLO answer the mixed map's held cells contradict): emptied, why
    slo, models = gate.gate_open_loop(openloop_families.cross_slo(
        load_latency.slo(curves_ol, slo_targets() if targets_us is None else targets_us, ds.fio), curves_ol,
        mixed["mixed"]), load_latency.models(ds, curves_ol), valid)
    steady, knees = gate.gate_steady(steady, valid), gate.gate_knees(knees, valid)
    mlp = hierarchy.mlp_table(ds.mlc)
    w_table = gate.gate_wsat(w_table, valid)
    mixed = mixed_load.map_tables(ds.fio, mixed_targets_us, gate.generator_failed(valid, MIXED))  # S19-1cpu 1
    storage, sfits = gate.gate_open_curves(storage, sfits, valid, OPEN_CURVE)
    kfits = {key: fit for key, fit in kfits.items() if key in gate.valid_keys(knees)}  # the figure draws these
    return Synthesis(
        dataset=ds, sheets=sheets, points=pts, headline=headline,
        spec=spec_comparison(ds, sheets, ceilings.within_ceiling(pts, ceil), steady, w_table), qd=qd,
        little=littles_law(ds), knees=knees, knee_fits=kfits,
        curves=curves, mem=mem, mem_fits=mfits, steady=steady,
        drive=drives, interface=interface_check(ds, sheets), load=gate.gate_open_curve_table(curves_ol, valid),
        slo=slo, load_models=models, unloaded=load_latency.unloaded(curves_ol),
        storage=storage, storage_fits=sfits, pacing=memory.pacing_table(curves),
        mem_sections=memory.sections_table(ds.mlc),
        grid=adaptive_grid.grid_table(ds.fio, pts), cluster=ds.cluster, validity=valid,
        memory_figures=(figs := memory_figures.memory_figures(ds.mlc)), wsat=w_table, wsat_cliffs=w_cliffs,
        thermal=wsat.thermal_table(w_thermal), wsat_seconds=wsat.mark_whole(w_runs, w_seconds),
        ceilings=ceilings.ceiling_use(ceil, headline, pts, mem, valid, mlp, figs), above_ceiling=ceilings.above_ceiling(sweep_points(pts), ceil),
        working_set=hierarchy.working_set_table(ds.mlc),
        cache_levels=hierarchy.cache_levels(ds.mlc, {h.name: (h.sysinfo or {}).get("caches") for h in ds.hosts}),
        mlp=mlp, **read_ratio.family_tables(curves, mem, reference_curves.load_mess_curves()),
        hir=pts_recovery.hir_table(ds.fio[ds.fio["table"] == "fio-pts-hir"], ds.side_table("fio-pts-hir-seconds")),
        xsr=pts_recovery.xsr_table(ds.side_table("fio-pts-xsr-seconds"), ds.fio[ds.fio["table"] == "fio-pts-xsr"]),
        **demand_tables(ds),
        **mixed,
    )


def demand_tables(ds: Dataset) -> dict:
    """The SNIA PTS CBW and DIRTH tables (memstor.analysis.pts_demand) with their json+ bins (processed)."""
    cbw_rows, dirth_rows = (ds.fio[ds.fio["table"] == t] for t in ("fio-pts-cbw", "fio-pts-dirth"))
    bins = read_bins(ds.data_dir, [(h, t) for h, t in zip(ds.fio["host"], ds.fio["table"])
                                   if t in ("fio-pts-cbw", "fio-pts-dirth")])
    dirth = pts_demand.dirth_table(dirth_rows, bins=bins)
    return {"cbw": pts_demand.cbw_table(cbw_rows, bins), "dirth": dirth,
            "dirth_histograms": pts_demand.dirth_histograms(bins, dirth, dirth_rows)}
