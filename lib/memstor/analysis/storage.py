"""Storage analysis (pure: DataFrame in, DataFrame out): totals of mixed jobs, summaries over
repetitions (n, mean, 95 % CI), Little's law, saturation, latency CDFs from json+ bins."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memstor.errors import MemstorError
from memstor.parse.fio import depth_bucket
from memstor.schema import FIO_LAT_COLUMNS, SYNC_ENGINES

#: Little's law: flag a point whose X*R differs from the intended outstanding I/O by more than this (%).
LITTLE_TOL_PCT = 5.0
#: Metrics summarised over repetitions (units in the names).
METRICS = ("iops", "bw_MBps", "lat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99_9_us")

#: Columns that describe a configuration (carried into summaries).
DESCRIPTORS = ("experiment", "rw", "pattern", "bs_bytes", "iodepth", "numjobs", "outstanding_io",
               "rwmixread", "ioengine", "direct", "spec_point")


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of measurements that succeeded (status done, no error)."""
    if "status" in df.columns:
        df = df[df["status"].fillna("done") == "done"]
    return df


def with_totals(df: pd.DataFrame) -> pd.DataFrame:
    """df plus one direction ``"total"`` row per measured point (read + write of the same fio run).

    IOPS, MB/s and total_ios are summed; lat_mean_us is the I/O-weighted mean of the directions (exact);
    percentiles, stddev, min/max are left empty when more than one direction did I/O (not derivable).
    Failed points get no total row.
    """
    good = ok_rows(df)
    good = good[good["direction"].isin(["read", "write", "trim"])]
    totals = []
    for _, g in good.groupby("point", sort=False):
        first = g.iloc[0].to_dict()
        active = g[pd.to_numeric(g["total_ios"], errors="coerce").fillna(0) > 0]
        row = dict(first)
        row["direction"] = "total"
        row["iops"] = pd.to_numeric(g["iops"], errors="coerce").sum()
        row["bw_MBps"] = pd.to_numeric(g["bw_MBps"], errors="coerce").sum()
        n = pd.to_numeric(g["total_ios"], errors="coerce").fillna(0)
        row["total_ios"] = int(n.sum())
        if len(active) == 1:
            for k in FIO_LAT_COLUMNS:
                row[k] = active.iloc[0][k]
        else:
            for k in FIO_LAT_COLUMNS:
                row[k] = np.nan
            lat = pd.to_numeric(g["lat_mean_us"], errors="coerce")
            mask = (n > 0) & lat.notna()
            if mask.any():
                row["lat_mean_us"] = float((lat[mask] * n[mask]).sum() / n[mask].sum())
        totals.append(row)
    if not totals:
        return df.copy()
    return pd.concat([df, pd.DataFrame(totals, columns=df.columns)], ignore_index=True)


def ci95(values: Sequence[float]) -> tuple[float, float, float, int]:
    """(mean, low, high, n) with the 95% Student-t confidence interval of the mean (NaN bounds if n < 2)."""
    x = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    from scipy import stats  # slow first import: only when there is an interval to compute

    sem = float(stats.sem(x))
    if sem == 0:
        return mean, mean, mean, n
    lo, hi = stats.t.interval(0.95, n - 1, loc=mean, scale=sem)
    return mean, float(lo), float(hi), n


def summary(df: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Per configuration x direction: <metric>_mean, <metric>_ci95_low, <metric>_ci95_high over the
    successful repetitions, n (successful repetitions) and n_failed. Units as in the metric names."""
    if df.empty:
        return pd.DataFrame()
    key = ["config", "direction"]
    out = []
    for (cfg, direction), g in df.groupby(key, sort=False, dropna=False):
        good = ok_rows(g)
        row: dict = {"config": cfg, "direction": direction}
        for d in DESCRIPTORS:
            if d in g.columns:
                row[d] = g.iloc[0][d]
        row["n"] = int(good["point"].nunique()) if "point" in good.columns else len(good)
        row["n_failed"] = int(g["point"].nunique() - row["n"]) if "point" in g.columns else len(g) - len(good)
        for m in metrics:
            mean, lo, hi, _ = ci95(pd.to_numeric(good[m], errors="coerce").tolist() if m in good else [])
            row[f"{m}_mean"], row[f"{m}_ci95_low"], row[f"{m}_ci95_high"] = mean, lo, hi
        out.append(row)
    return pd.DataFrame(out)


def _reason(row: dict, residual: float | None, engine: str, direct: Any) -> str:
    """Why a Little's-law point is flagged ('' when it is not)."""
    if row.get("status") == "failed":
        return f"measurement failed: {row.get('error')}"
    reached = row.get("iodepth_reached")
    if reached is False or (isinstance(reached, (np.bool_,)) and not reached):
        pct = row.get("iodepth_level_pct")
        why = (f"intended depth {int(row['iodepth'])} not reached: only {pct:.1f}% of I/Os were submitted in "
               f"fio's iodepth_level bucket {depth_bucket(int(row['iodepth']))}")
        if engine in SYNC_ENGINES:
            why += f"; {engine} is synchronous (1 I/O in flight per job, iodepth ignored)"
        elif not _truthy(direct):
            why += "; buffered I/O (direct=0): async engines complete in the submitting call"
        else:
            why += "; the engine or the device queue limited the depth"
        return why
    if residual is None or math.isnan(residual):
        return "no IOPS or latency to check"
    if abs(residual) > LITTLE_TOL_PCT:
        return (f"IOPS x mean latency differs from the intended outstanding I/O by {residual:+.1f}% although "
                f"the depth was reached: fio's own gaps between completion and resubmission (CPU-bound, "
                f"shared CPU) or a too-short run")
    return ""


def _truthy(v: Any) -> bool:
    """1/True/'1'/'true' -> True."""
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes")
    try:
        return bool(int(v))
    except (TypeError, ValueError):
        return bool(v)


def littles_law_table(df: pd.DataFrame, tol_pct: float = LITTLE_TOL_PCT) -> pd.DataFrame:
    """Little's law per measured point (one row per point x repetition, all directions together).

    Columns: point, config, rep, rw, bs_bytes, iodepth, numjobs, spec_point, ioengine, outstanding_io
    (intended: iodepth x numjobs), iops, lat_mean_us, littles_outstanding (IOPS x mean latency),
    residual_pct (100 (X R - N) / N), iodepth_level_pct, depth_reached, flagged (|residual| > tol_pct,
    depth not reached or failed) and reason.
    """
    from memstor.analysis.queueing import littles_law_outstanding, littles_law_residual_pct

    if df.empty:
        return pd.DataFrame()
    tot = with_totals(df)
    tot = tot[tot["direction"] == "total"]
    failed = df[df["status"] == "failed"].drop_duplicates("point") if "status" in df.columns else df.iloc[:0]
    out = []
    for _, r in pd.concat([tot, failed], ignore_index=True).iterrows():
        row = r.to_dict()
        n = float(row["outstanding_io"])
        x, lat = row.get("iops"), row.get("lat_mean_us")
        ok = row.get("status") != "failed" and not pd.isna(x) and not pd.isna(lat) and float(x) > 0
        xr = littles_law_outstanding(float(x), float(lat)) if ok else math.nan
        res = littles_law_residual_pct(n, float(x), float(lat)) if ok else math.nan
        reached = row.get("iodepth_reached")
        reached = None if reached is None or pd.isna(reached) else _truthy(reached)
        row["iodepth_reached"] = reached
        reason = _reason(row, res if ok else None, str(row.get("ioengine")), row.get("direct"))
        out.append({
            "point": row["point"], "config": row["config"], "rep": row["rep"], "rw": row["rw"],
            "bs_bytes": row["bs_bytes"], "iodepth": row["iodepth"], "numjobs": row["numjobs"],
            "spec_point": _truthy(row.get("spec_point")), "ioengine": row.get("ioengine"),
            "outstanding_io": n, "iops": x if ok else math.nan, "lat_mean_us": lat if ok else math.nan,
            "littles_outstanding": xr, "residual_pct": res, "iodepth_level_pct": row.get("iodepth_level_pct"),
            "depth_reached": reached, "flagged": bool(reason), "reason": reason,
        })
    table = pd.DataFrame(out)
    return table.sort_values(["spec_point", "rw", "outstanding_io", "rep"], kind="stable").reset_index(drop=True)


def saturation_iodepth(summ: pd.DataFrame, rw: str, frac: float = 0.95) -> int | None:
    """Smallest queue depth (non-spec points of `rw`) whose mean IOPS reaches `frac` of the best; None if
    there is no measurement."""
    s = summ[(summ["rw"] == rw) & (summ["direction"] != "total")]
    if "spec_point" in s.columns:
        s = s[~s["spec_point"].map(_truthy)]
    s = s[s["iops_mean"].notna()]
    if s.empty:
        return None
    best = s["iops_mean"].max()
    return int(s[s["iops_mean"] >= frac * best]["iodepth"].min())


def latency_cdf(src: Any, direction: str = "read", jobname: str | None = None) -> pd.DataFrame:
    """Completion-latency CDF from fio json+ bins: columns clat_us (µs), count, cdf (fraction 0..1).

    src: a raw file path, the JSON text, a parsed fio document or one job dict. direction: read, write,
    trim or total (all directions merged). jobname picks a job in a multi-job file (default: every job
    merged). Empty frame when the output has no json+ bins.
    """
    from memstor.parse.fio import clat_bins, load_fio_json

    if isinstance(src, Path) or (isinstance(src, str) and not src.lstrip().startswith("{")):
        src = Path(src).read_text(encoding="utf-8", errors="replace")
    doc = load_fio_json(src) if isinstance(src, str) else src
    jobs = doc.get("jobs") if isinstance(doc, dict) and "jobs" in doc else [doc]
    if jobname is not None:
        jobs = [j for j in jobs if j.get("jobname") == jobname]
        if not jobs:
            raise MemstorError(f"latency_cdf: no job named {jobname!r} in the fio output")
    dirs = ["read", "write", "trim"] if direction == "total" else [direction]
    merged: dict = {}
    for job in jobs:
        for d in dirs:
            for ns, count in clat_bins(job, d).items():
                merged[int(ns)] = merged.get(int(ns), 0) + int(count)
    if not merged:
        return pd.DataFrame(columns=["clat_us", "count", "cdf"])
    ns = np.array(sorted(merged), dtype=float)
    counts = np.array([merged[int(k)] for k in ns], dtype=float)
    cdf = np.cumsum(counts) / counts.sum()
    return pd.DataFrame({"clat_us": ns / 1000.0, "count": counts.astype(int), "cdf": cdf})


def percentile_from_cdf(cdf: pd.DataFrame, pct: float) -> float:
    """The smallest latency (µs) with cdf >= pct/100 (NaN for an empty CDF)."""
    if cdf.empty:
        return math.nan
    hit = cdf[cdf["cdf"] >= pct / 100.0 - 1e-12]
    return float(hit["clat_us"].iloc[0])


def qd_cdfs(df: pd.DataFrame, data_root: Path | str, frac: float = 0.95) -> pd.DataFrame:
    """Latency CDFs of the queue-depth sweep at QD 1 (lowest depth) and at saturation, per rw.

    Uses the first successful repetition of each point; columns clat_us, count, cdf, rw, iodepth, label.
    """
    summ = summary(df[~df["spec_point"].map(_truthy)])
    frames = []
    for rw in summ["rw"].dropna().unique():
        s = summ[summ["rw"] == rw]
        depths = sorted({int(s["iodepth"].min())} | {q for q in [saturation_iodepth(summ, rw, frac)] if q})
        for qd in depths:
            cand = ok_rows(df[(df["rw"] == rw) & (df["iodepth"] == qd) & ~df["spec_point"].map(_truthy)])
            if cand.empty:
                continue
            r = cand.sort_values("rep").iloc[0]
            path = Path(data_root) / str(r["source"])
            cdf = latency_cdf(path, direction=str(r["direction"]))
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
    from memstor.units import format_size

    out = pd.DataFrame({
        "rw": summ["rw"], "direction": summ["direction"],
        "bs": summ["bs_bytes"].map(lambda b: format_size(int(b)) if not pd.isna(b) else ""),
        "QD": summ["iodepth"], "jobs": summ["numjobs"],
    })
    if "rwmixread" in summ and summ["rwmixread"].notna().any():
        out["read %"] = summ["rwmixread"]
    if "spec_point" in summ and summ["spec_point"].map(_truthy).any():
        out["spec point"] = summ["spec_point"].map(lambda v: "yes" if _truthy(v) else "")
    for m, label, digits in (("iops", "IOPS", 0), ("bw_MBps", "MB/s", 1), ("lat_mean_us", "mean lat (µs)", 1),
                             ("clat_p50_us", "p50 (µs)", 1), ("clat_p99_us", "p99 (µs)", 1),
                             ("clat_p99_9_us", "p99.9 (µs)", 1)):
        if f"{m}_mean" in summ:
            out[label] = [_fmt_ci(a, b, c, digits) for a, b, c in
                          zip(summ[f"{m}_mean"], summ[f"{m}_ci95_low"], summ[f"{m}_ci95_high"])]
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
    spec = df[df["spec_point"].map(_truthy)]
    return summary_view(summary(spec)) if not spec.empty else pd.DataFrame()


def best_iops(df: pd.DataFrame, rw: str = "randread") -> dict:
    """The configuration with the highest mean IOPS for `rw` (spec point included): point config,
    iodepth, numjobs, iops (mean over repetitions). Empty dict without a successful measurement."""
    s = summary(df[df["rw"] == rw]) if not df.empty else pd.DataFrame()
    if s.empty or s["iops_mean"].isna().all():
        return {}
    r = s.loc[s["iops_mean"].idxmax()]
    return {"config": r["config"], "iodepth": int(r["iodepth"]), "numjobs": int(r["numjobs"]),
            "iops": float(r["iops_mean"])}


def describe_run(df: pd.DataFrame) -> str:
    """One line about a sweep's table: points, repetitions, failures and the engine that ran."""
    if df.empty:
        return "no measurements"
    n_points = df["point"].nunique()
    n_failed = df.loc[df["status"] == "failed", "point"].nunique()
    notes = df["ioengine_note"].dropna()
    engine = notes.iloc[0] if not notes.empty else "?"
    direct = "O_DIRECT" if df["direct"].map(_truthy).all() else "buffered (page cache) for some points"
    return (f"{n_points} points ({df['config'].nunique()} configurations x up to {int(df['rep'].max())} "
            f"repetitions), {n_failed} failed; engine {engine}; {direct}")
