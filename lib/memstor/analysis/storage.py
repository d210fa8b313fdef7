"""Storage analysis (pure: DataFrame in, DataFrame out): Little's law, saturation, latency CDFs from
json+ bins (the processed bins tables, memstor.analysis.histograms), printable views. Summaries over
repetitions (n, mean, 95 % CI) are memstor.analysis.summary's."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memstor.analysis.histograms import as_histogram, histogram_cdf, key_text, read_bins, select
from memstor.analysis.hosts import each_host
from memstor.analysis.queueing import littles_law_outstanding, littles_law_residual_pct
from memstor.analysis.summary import observations, summarise, summary_table, with_totals
from memstor.core.errors import MemstorError
from memstor.core.fiohist import merge_bins, ns_to_us, percentiles
from memstor.core.schema import SYNC_ENGINES, truthy
from memstor.core.units import format_size
from memstor.parse.fio import clat_bins, depth_bucket

#: Little's law: flag a point whose X*R differs from the intended outstanding I/O by more than this (%).
LITTLE_TOL_PCT = 5.0
#: Columns of the Little's-law table (one row per run, or per configuration with n), units in the names.
LITTLE_COLUMNS = ["host", "experiment", "config", "point", "rep", "rw", "bs_bytes", "iodepth", "numjobs",
                  "rwmixread", "ioengine", "direct", "spec_point", "direction", "n", "outstanding_io", "iops",
                  "lat_mean_us", "littles_outstanding", "residual_pct", "band_low_io", "band_high_io",
                  "iodepth_level_pct", "depth_reached", "flagged", "reason"]


def _reason(row: dict, residual: float | None, engine: str, direct: Any, tol_pct: float = LITTLE_TOL_PCT) -> str:
    """Why a Little's-law point is flagged ('' when it is not)."""
    if row.get("status") == "failed":
        return f"measurement failed: {row.get('error')}"
    reached = row.get("iodepth_reached")
    if reached is False or (isinstance(reached, (np.bool_,)) and not reached):
        pct = row.get("iodepth_level_pct")
        share = "a few" if pct is None or pd.isna(pct) else f"only {float(pct):.1f}%"
        why = (f"intended depth {int(row['iodepth'])} not reached: {share} of I/Os were submitted in "
               f"fio's iodepth_level bucket {depth_bucket(int(row['iodepth']))}")
        if engine in SYNC_ENGINES:
            why += f"; {engine} is synchronous (1 I/O in flight per job, iodepth ignored)"
        elif not pd.isna(direct) and not truthy(direct):  # unknown (text output): no claim
            why += "; buffered I/O (direct=0): async engines complete in the submitting call"
        else:
            why += "; the engine or the device queue limited the depth"
        return why
    if residual is None or math.isnan(residual):
        return "no IOPS or latency to check"
    if residual < -tol_pct:
        jobs = pd.to_numeric(row.get("numjobs"), errors="coerce")
        uneven = (f"its {int(jobs)} jobs ending at different times (fewer in flight once the first ends), "
                  if not pd.isna(jobs) and jobs > 1 else "")  # S7-bare C-7: the size-bounded QD32x4 write
        return (f"IOPS x mean latency is {residual:+.1f}% below the intended outstanding I/O although the depth "
                f"was reached: fio's own gaps between completion and resubmission (a busy load generator), "
                f"{uneven}or a too-short run; which, these columns do not show")
    if residual > tol_pct:
        return (f"IOPS x mean latency is {residual:+.1f}% above the intended outstanding I/O, more than a closed "
                f"loop of that depth can hold (gaps only lower it): two time bases (fio's IOPS over the job's "
                f"runtime, its latency per I/O from submission) would give this; these columns do not show it")
    return ""


def _judged(obs: pd.DataFrame) -> pd.DataFrame:
    """The rows Little's law judges: a mixed job's read + write total, else its only direction."""
    key = ["host", "experiment", "config", "source", "groupid", "jobname"]
    has_total = obs.groupby(key, dropna=False)["direction"].transform(lambda d: (d == "total").any())
    return obs[(obs["direction"] == "total") | ~has_total.astype(bool)]


def _little_row(row: dict, n_runs: int, tol_pct: float) -> dict:
    """One Little's-law row: N = iodepth x numjobs, X, R, X·R, the residual, the ±tol band, flag, reason."""
    n = float(row["iodepth"]) * float(row["numjobs"])
    x, lat = row.get("iops", math.nan), row.get("lat_mean_us", math.nan)  # missing: NaN (not ok, like None)
    ok = bool(row.get("ok", True)) and not pd.isna(x) and not pd.isna(lat) and float(x) > 0 and n > 0
    xr = littles_law_outstanding(float(x), float(lat)) if ok else math.nan
    res = littles_law_residual_pct(n, float(x), float(lat)) if ok else math.nan
    reached = row.get("iodepth_reached")
    reached = None if reached is None or pd.isna(reached) else truthy(reached)
    probe = dict(row, iodepth_reached=reached, status="done" if ok or row.get("ok", True) else "failed")
    reason = _reason(probe, res if ok else None, str(row.get("ioengine")), row.get("direct"), tol_pct)
    out = {c: row.get(c) for c in LITTLE_COLUMNS}
    out.update(n=n_runs, outstanding_io=n, iops=x if ok else math.nan, lat_mean_us=lat if ok else math.nan,
               littles_outstanding=xr, residual_pct=res, band_low_io=n * (1 - tol_pct / 100),
               band_high_io=n * (1 + tol_pct / 100), depth_reached=reached, flagged=bool(reason), reason=reason,
               spec_point=truthy(row.get("spec_point")))
    return out


def littles_law_table(df: pd.DataFrame, tol_pct: float = LITTLE_TOL_PCT, per: str = "run",
                      data_dir: Path | str | None = None) -> pd.DataFrame:
    """Little's law, N = X·R: for every run (``per="run"``) or configuration (``per="config"``: X and R
    are the means over the same successful runs, n of them) of a fio table (LITTLE_COLUMNS).

    N is the intended outstanding I/O (iodepth x numjobs), X the IOPS (a job's clones summed), R the mean
    total latency (µs); mixed read/write jobs are judged on their read + write totals. residual_pct =
    100 (X·R − N) / N; ``flagged`` when outside ±tol_pct (band_low_io..band_high_io), when fio did not reach the
    intended depth, or when the run failed; ``reason`` says which and why.
    """
    if df.empty:
        return pd.DataFrame(columns=LITTLE_COLUMNS)
    judged = _judged(with_totals(observations(df, data_dir)))
    if per == "run":
        rows = [_little_row(r.to_dict(), 1 if r["ok"] else 0, tol_pct) for _, r in judged.iterrows()]
    elif per == "config":
        summ = summarise(judged)
        groups = judged[judged["ok"]].groupby(["host", "experiment", "config", "direction"], dropna=False)
        depth = {}
        if "iodepth_reached" in judged:  # the depth counts as reached when every run reached it
            for key, g in groups:
                pct = pd.to_numeric(g["iodepth_level_pct"], errors="coerce")
                depth[key] = (None if g["iodepth_reached"].isna().all()
                              else bool(g["iodepth_reached"].fillna(True).map(truthy).all()),
                              None if pct.isna().all() else float(pct.min()))
        rows = []
        for _, r in summ.iterrows():
            d = r.to_dict()
            d["ok"] = d["n"] > 0
            d["point"] = d["rep"] = None  # a configuration, not one run
            d["iodepth_reached"], d["iodepth_level_pct"] = depth.get(
                (d["host"], d["experiment"], d["config"], d["direction"]), (None, None))
            rows.append(_little_row(d, int(d["n"]), tol_pct))
    else:
        raise ValueError(f"per={per!r}: use 'run' or 'config'")
    table = pd.DataFrame(rows, columns=LITTLE_COLUMNS)
    return table.sort_values(["host", "experiment", "spec_point", "rw", "outstanding_io", "rep"], kind="stable",
                             na_position="first").reset_index(drop=True)


def saturation_iodepth(summ: pd.DataFrame, rw: str, frac: float = 0.95) -> int | None:
    """Smallest queue depth (non-spec points of `rw`) whose mean IOPS reaches `frac` of the best; None if
    there is no measurement."""
    s = summ[(summ["rw"] == rw) & (summ["direction"] != "total")]
    if "spec_point" in s.columns:
        s = s[~s["spec_point"].map(truthy)]
    s = s[s["iops"].notna()]
    if s.empty:
        return None
    best = s["iops"].max()
    return int(s[s["iops"] >= frac * best]["iodepth"].min())


def latency_cdf(src: Any, direction: str = "read", jobname: str | None = None) -> pd.DataFrame:
    """Completion-latency CDF from fio json+ bins: columns clat_us (µs), count, cdf (fraction 0..1).

    src: a processed bins table (memstor.analysis.histograms: BIN_COLUMNS rows, e.g. of one raw file), a
    parsed fio document or one job dict (no file is opened here). direction: read, write, trim or total
    (all directions merged). jobname picks a job (default: every job merged). Empty frame when there are
    no bins.
    """
    if isinstance(src, pd.DataFrame):
        rows = select(src, jobname=jobname, direction=direction)
        if jobname is not None and not src.empty and not (src["jobname"].map(key_text) == key_text(jobname)).any():
            raise MemstorError(f"latency_cdf: no job named {jobname!r} in the bins table")
        return histogram_cdf(as_histogram(rows))
    jobs = src["jobs"] if isinstance(src, dict) and "jobs" in src else [src]
    if jobname is not None:
        jobs = [j for j in jobs if j.get("jobname") == jobname]
        if not jobs:
            raise MemstorError(f"latency_cdf: no job named {jobname!r} in the fio output")
    dirs = ["read", "write", "trim"] if direction == "total" else [direction]
    return histogram_cdf(merge_bins(clat_bins(job, d) for job in jobs for d in dirs))


def percentile_from_cdf(cdf: pd.DataFrame, pct: float) -> float:
    """The pct-th percentile (µs) of a :func:`latency_cdf` frame by fio's rule (memstor.core.fiohist);
    NaN for an empty CDF."""
    if cdf.empty:
        return math.nan
    hist = dict(zip(np.rint(cdf["clat_us"].to_numpy(float) * 1000).astype(np.int64), cdf["count"].astype(np.int64)))
    return ns_to_us(percentiles(hist, [pct])[pct])


@each_host
def qd_cdfs(df: pd.DataFrame, data_root: Path | str, frac: float = 0.95) -> pd.DataFrame:
    """Latency CDFs of the queue-depth sweep at QD 1 (lowest depth) and at saturation, per rw, from the
    processed bins table of the sweep under ``data_root`` (memstor.analysis.histograms; none: empty).

    Uses the first successful repetition of each point; columns clat_us, count, cdf, rw, iodepth, label.
    """
    summ = summary_table(df[~df["spec_point"].map(truthy)])
    bins = read_bins(data_root, zip(df["host"], df["experiment"])) if len(df) else None
    frames = []
    for rw in summ["rw"].dropna().unique():
        s = summ[summ["rw"] == rw]
        depths = sorted({int(s["iodepth"].min())} | {q for q in [saturation_iodepth(summ, rw, frac)] if q})
        for qd in depths:
            cand = df[(df["rw"] == rw) & (df["iodepth"] == qd) & ~df["spec_point"].map(truthy)
                      & (df["status"] != "failed")]
            if cand.empty:
                continue
            r = cand.sort_values("rep").iloc[0]
            cdf = histogram_cdf(as_histogram(select(bins, source=r["source"], direction=str(r["direction"]))))
            if cdf.empty:
                continue
            kind = "QD 1" if qd == 1 else ("lowest QD" if qd == depths[0] else "saturation")
            cdf["rw"], cdf["iodepth"] = rw, qd
            cdf["label"] = f"{rw} QD {qd} ({kind})" if kind != "QD 1" else f"{rw} QD 1"
            frames.append(cdf)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["clat_us", "count", "cdf", "rw", "iodepth", "label"])


def _fmt_ci(mean: float, lo: float, hi: float, digits: int) -> str:
    """'mean ± half-width' (95% CI) or just 'mean' when there is no interval."""
    if pd.isna(mean):
        return ""
    if pd.isna(lo) or pd.isna(hi):
        return f"{mean:,.{digits}f}"
    return f"{mean:,.{digits}f} ± {(hi - lo) / 2:,.{digits}f}"


def summary_view(summ: pd.DataFrame) -> pd.DataFrame:
    """A compact, printable view of a summary: one row per configuration x direction, metrics as
    'mean ± 95% CI half-width' strings (units in the headers), n = successful repetitions."""
    if summ.empty:
        return pd.DataFrame()
    out = pd.DataFrame({
        "rw": summ["rw"], "direction": summ["direction"],
        "bs": summ["bs_bytes"].map(lambda b: format_size(int(b)) if not pd.isna(b) else ""),
        "QD": summ["iodepth"], "jobs": summ["numjobs"],
    })
    if "rwmixread" in summ and summ["rwmixread"].notna().any():
        out["read %"] = summ["rwmixread"]
    if "spec_point" in summ and summ["spec_point"].map(truthy).any():
        out["spec point"] = summ["spec_point"].map(lambda v: "yes" if truthy(v) else "")
    for m, label, digits in (("iops", "IOPS", 0), ("bw_MBps", "MB/s", 1), ("lat_mean_us", "mean lat (µs)", 1),
                             ("clat_p50_us", "p50 (µs)", 1), ("clat_p99_us", "p99 (µs)", 1),
                             ("clat_p99_9_us", "p99.9 (µs)", 1)):
        if m in summ:
            out[label] = [_fmt_ci(a, b, c, digits) for a, b, c in
                          zip(summ[m], summ[f"{m}_ci_low"], summ[f"{m}_ci_high"])]
    out["n"] = summ["n"]
    if summ["n_failed"].any():
        out["failed"] = summ["n_failed"]
    return out.reset_index(drop=True)


def failures(df: pd.DataFrame) -> pd.DataFrame:
    """One row per failed point: point, rep, error (empty frame when every point succeeded)."""
    if df.empty or "status" not in df.columns:
        return pd.DataFrame(columns=["point", "rep", "error"])
    bad = df[df["status"] == "failed"].drop_duplicates("point")
    return bad[["point", "rep", "error"]].reset_index(drop=True)


def spec_point_table(df: pd.DataFrame) -> pd.DataFrame:
    """summary_view of the spec-conditions point(s) of the queue-depth sweep (empty without one)."""
    if "spec_point" not in df.columns:
        return pd.DataFrame()
    spec = df[df["spec_point"].map(truthy)]
    return summary_view(summary_table(spec)) if not spec.empty else pd.DataFrame()


@each_host
def best_iops(df: pd.DataFrame, rw: str = "randread") -> dict:
    """The configuration with the highest mean IOPS for `rw` (spec point included): point config,
    iodepth, numjobs, iops (mean over repetitions). Empty dict without a successful measurement."""
    s = summary_table(df[df["rw"] == rw]) if not df.empty else pd.DataFrame()
    if s.empty or s["iops"].isna().all():
        return {}
    r = s.loc[s["iops"].idxmax()]
    return {"config": r["config"], "iodepth": int(r["iodepth"]), "numjobs": int(r["numjobs"]),
            "iops": float(r["iops"]), "iops_ci_low": r["iops_ci_low"], "iops_ci_high": r["iops_ci_high"],
            "n": int(r["n"]), "ioengine": r["ioengine"], "direct": r["direct"]}


def describe_run(df: pd.DataFrame) -> str:
    """One line about a sweep's table: points, repetitions, failures and the engine that ran."""
    if df.empty:
        return "no measurements"
    n_points = df["point"].nunique()
    n_failed = df.loc[df["status"] == "failed", "point"].nunique()
    notes = df["ioengine_note"].dropna()
    engine = notes.iloc[0] if not notes.empty else "?"
    direct = "O_DIRECT" if df["direct"].dropna().map(truthy).all() else "buffered (page cache) for some points"
    return (f"{n_points} points ({df['config'].nunique()} configurations x up to {int(df['rep'].max())} "
            f"repetitions), {n_failed} failed; engine {engine}; {direct}")
