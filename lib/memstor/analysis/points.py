"""The fio points every storage table starts from (pure: a loaded data set in, DataFrames out): the one
summary of every device's fio rows, the closed-loop sweep points, the queue-depth sweep configurations of
the knee and the curves, and the words that say which configuration a number comes from.

Used by memstor.analysis.synthesis (headline, spec comparison, knee) and memstor.analysis.load_latency (the
closed loop beside the open loop). Units are in the column names (``_us``, ``_MBps`` = 10^6 bytes/s, ``iops``).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis import steady_state
from memstor.analysis.dataset import Dataset
from memstor.analysis.summary import summary_table
from memstor.core.schema import missing, truthy


def fio_summary(ds: Dataset) -> pd.DataFrame:
    """The one summary of every device's fio rows (memstor.analysis.summary.summary_table): one row per
    device x experiment x configuration x direction with n, means and 95 % CIs (``report/tables/summary.csv``)."""
    summ = summary_table(ds.fio, ds.data_dir)
    summ["spec_point"] = summ["spec_point"].map(truthy)
    return summ


def preferred(sel: pd.DataFrame) -> pd.DataFrame:
    """Candidates ordered for a headline: O_DIRECT first (the device, not the page cache), then the
    queue-depth sweep, then more repetitions."""
    return sel.assign(_d=-sel["direct"].fillna(-1), _q=(sel["experiment"] != "fio-queue-depth").astype(int),
                      _n=-sel["n"]).sort_values(["_d", "_q", "_n"], kind="stable").drop(columns=["_d", "_q", "_n"])


def select_points(pts: pd.DataFrame, host: str, rw: str, bs: int | None = 4096, direction: str | None = None):
    """Points of `host` for a single-direction workload `rw` (direction = read/write from rw)."""
    direction = direction or ("write" if "write" in rw else "read")
    sel = pts[(pts["host"] == host) & (pts["rw"] == rw) & (pts["direction"] == direction)]
    if bs is not None:
        sel = sel[sel["bs_bytes"] == bs]
    return sel


def _qd_text(row) -> str:
    """'QD32x4' for a point row."""
    return f"QD{int(row['iodepth'])}x{int(row['numjobs'])}"


def config_text(row) -> str:
    """The configuration a number comes from: 'QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=3'
    ('?' for what the data does not say)."""
    d = row["direct"]
    direct = {1: "O_DIRECT", 0: "buffered"}.get(-1 if missing(d) else int(d), "direct ?")
    engine = row["ioengine"] if isinstance(row["ioengine"], str) and row["ioengine"] else "engine ?"
    return f"{_qd_text(row)}, {engine}, {direct}, {row['experiment']}, n={int(row['n'])}"


#: Experiments whose points are not closed-loop sweep points: the steady-state rounds (a trajectory of
#: states: its number is the window average, memstor.analysis.steady_state.verdict_table) and the
#: open-loop rate points (rate-limited by design: never a "best" IOPS; memstor.analysis.openloop) and the
#: write-saturation runs (a burst and a cliff averaged: their numbers are levels, memstor.analysis.wsat) and
#: the SNIA PTS tests (segments, transitions and mixes with their own analyses: memstor.analysis.pts_*).
NOT_SWEEPS = (steady_state.EXPERIMENT, "fio-load-latency", "fio-write-saturation", "fio-pts-hir", "fio-pts-xsr",
              "fio-pts-cbw", "fio-pts-dirth", "mixed-load-map")


def sweep_points(pts: pd.DataFrame) -> pd.DataFrame:
    """Rows of the closed-loop sweeps only (see NOT_SWEEPS)."""
    return pts[~pts["experiment"].isin(NOT_SWEEPS)]


def qd_points(ds: Dataset, pts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Queue-depth sweep configurations: 4K randread/randwrite per device (fio_summary rows, n > 0).

    Devices with a fio-queue-depth table use only that table; imported devices use the 4K random points
    of one engine, O_DIRECT setting and table (the preferred one, see preferred), so that different
    setups never mix in one curve. Adds ``in_sweep``: the configuration enters the fit (every N = iodepth
    x numjobs once: of several with the same N the one with most runs, then fewest jobs; spec-conditions
    points are shown, not fitted)."""
    pts = fio_summary(ds) if pts is None else pts
    out = []
    for host in ds.host_names:
        hp = pts[(pts["host"] == host) & (pts["bs_bytes"] == 4096) & (pts["n"] > 0)]
        if (hp["experiment"] == "fio-queue-depth").any():
            hp = hp[hp["experiment"] == "fio-queue-depth"]
        for rw, direction in (("randread", "read"), ("randwrite", "write")):
            sel = hp[(hp["rw"] == rw) & (hp["direction"] == direction) & hp["iops"].notna()].copy()
            if sel.empty:
                continue
            first = preferred(sel).iloc[0]
            setup = ["ioengine", "direct", "experiment"]
            sel = sel[(sel[setup].fillna("?").astype(str) == first[setup].fillna("?").astype(str)).all(axis=1)]
            sel["in_sweep"] = False
            nonspec = sel[~sel["spec_point"]].sort_values(["outstanding_io", "n", "numjobs"],
                                                          ascending=[True, False, True])
            sel.loc[nonspec.drop_duplicates("outstanding_io").index, "in_sweep"] = True
            out.append(sel)
    if not out:
        return pd.DataFrame(columns=[*pts.columns, "in_sweep"])
    return pd.concat(out, ignore_index=True).sort_values(["host", "rw", "outstanding_io"]).reset_index(drop=True)


def with_best_measured(knees: pd.DataFrame, qd: pd.DataFrame) -> pd.DataFrame:
    """The knee table with the closed-system bound from the experiment's highest IOPS: ``X_best_iops`` (IOPS) the
    most any point of the host x workload's sweep measured, its own one-job points and its spec-conditions point
    (QD32x4) alike, ``X_best_at`` ('QD32x4', where), and ``N_star_bound`` = X_best_iops x R_min_meas_us (I/Os in
    flight). X_best is at most the ceiling, so the bound is a lower one on the knee N* (equal where the sweep
    levelled off). ``X_max_meas_iops`` stays the one-job sweep's highest (what the fit saw)."""
    if knees is None or knees.empty or qd is None or qd.empty:
        return knees
    out = knees.copy()
    best, at = [], []
    for _, k in out.iterrows():
        g = qd[(qd["host"].astype(str) == str(k["host"])) & (qd["rw"] == k["rw"]) & qd["iops"].notna()]
        top = g.loc[g["iops"].idxmax()] if len(g) else None
        best.append(float(top["iops"]) if top is not None else float("nan"))
        at.append(f"QD{int(top['iodepth'])}x{int(top['numjobs'])}" if top is not None else "")
    out["X_best_iops"], out["X_best_at"] = best, at
    if "R_min_meas_us" in out.columns:
        out["N_star_bound"] = out["X_best_iops"] * pd.to_numeric(out["R_min_meas_us"], errors="coerce") / 1e6
        out["bound_void"] = [_latency_fell(k, qd) for _, k in out.iterrows()]
        out.loc[out["bound_void"] != "", "N_star_bound"] = float("nan")
    return out


def _latency_fell(k: pd.Series, qd: pd.DataFrame) -> str:
    """Why X_best x R(N_min) bounds no knee ('' where it does): the bound needs R(N_min) to be the latency without
    queueing (the fit's R_min, which every N at or below the knee shares), so a larger N of the one-job sweep with a
    lower mean latency voids it (R-1cpu M4: randwrite 125.5 us at N = 1, 107.6 us at N = 4: 'N* >= 10.04' was no
    bound). µs."""
    need = {"in_sweep", "outstanding_io", "lat_mean_us"}
    if not need <= set(qd.columns) or pd.isna(pd.to_numeric(k.get("R_min_meas_us"), errors="coerce")):
        return ""
    g = qd[(qd["host"].astype(str) == str(k["host"])) & (qd["rw"] == k["rw"]) & qd["in_sweep"].astype(bool)]
    g = g[g["lat_mean_us"].notna()].sort_values("outstanding_io")
    if len(g) < 2:
        return ""
    low = g.iloc[1:].loc[lambda d: d["lat_mean_us"] < float(k["R_min_meas_us"])]
    if low.empty:
        return ""
    at = low.loc[low["lat_mean_us"].idxmin()]
    return (f"the mean latency fell from {float(k['R_min_meas_us']):,.1f} µs at N = {int(g['outstanding_io'].iloc[0])} "
            f"to {float(at['lat_mean_us']):,.1f} µs at N = {int(at['outstanding_io'])}, so the latency at the "
            "smallest N is not the latency without queueing that the bound needs")
