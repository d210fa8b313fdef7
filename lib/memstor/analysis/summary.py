"""The one summary path for fio results: observations (one run of one job, its clones combined), then
per configuration the mean and 95 % Student-t interval over the repetitions, with n.

Every table and figure of the notebooks, the report and ``memstor summary`` goes through
:func:`observations` and :func:`summarise`:

1. **Clones become one observation.** A job with ``numjobs = N`` and no ``group_reporting`` gives N rows
   of one run (same source file, groupid, jobname, direction): IOPS and MB/s are summed, the mean latency
   is weighted by each clone's I/O count, min/max are the extremes, the standard deviation is the pooled
   one, and percentiles come from the clones' merged json+ histograms when the processed bins table has
   them (memstor.analysis.histograms; else they are left empty: percentiles of clones cannot be combined
   from their percentiles).
2. **A configuration's identity** holds everything that changes the result: device (``host``), experiment
   (the table), rw, block size, iodepth, numjobs, rwmixread, engine, O_DIRECT, and for memstor's own
   tables its ``config`` (runtime, ramp, file size, spec point); for imported tables the job's name
   stands in for what the schema does not record (runtime, file size, region), so differently named
   jobs are never pooled. Unknown values stay unknown (``?`` in the key), never guessed.
3. **One observation's throughput and latency come from the same runs**: a configuration's means use
   the observations that succeeded, and a metric missing from any of them is left empty rather than
   averaged over a different subset.

Units as in the column names (IOPS, MB/s = 10^6 B/s, µs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis.histograms import empty_bins, job_percentiles, read_bins
from memstor.core.batchmeans import correlated_metrics

#: Metrics summarised over repetitions (units in the names): mean, ``_ci_low``, ``_ci_high``.
#: ``lat_p99_us`` is the p99 of the latency lat_mean_us averages where the row has it (ioarrive's response time from
#: the intended arrival, beside its service-time clat_*; empty for fio, whose JSON has no total-latency percentiles
#: by default): S10-bare 8, summary.csv set an open-loop response mean of 166,908 µs beside a service p99 of 47,841.
SUMMARY_METRICS = ("iops", "bw_MBps", "lat_mean_us", "lat_p99_us", "clat_p50_us", "clat_p90_us", "clat_p99_us",
                   "clat_p99_9_us", "clat_p99_99_us")
#: The identity of a configuration in summaries (DESIGN.md summary.csv), in this order.
IDENTITY = ["host", "experiment", "rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "ioengine", "direct"]
#: Columns of summary tables before the metrics.
SUMMARY_KEYS = [*IDENTITY, "config", "direction", "n", "n_failed"]
#: Descriptors carried from the observations into the summary (first value of the configuration).
CARRIED = ("outstanding_io", "spec_point", "pattern", "file_size_bytes", "clones", "point", "precision_pct")
_PCT = {"clat_p50_us": 50.0, "clat_p90_us": 90.0, "clat_p99_us": 99.0, "clat_p99_9_us": 99.9,
        "clat_p99_99_us": 99.99}
#: Percentiles a row carries of its own that cannot be combined across clones or directions (no bins of theirs).
_OWN_PCT = ("lat_p99_us",)
_JOB_KEY = ["source", "groupid", "jobname", "direction"]


def ci95(values: Sequence[float]) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the 95 % Student-t confidence interval of the mean (NaN bounds if n < 2)."""
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


def _ok(df: pd.DataFrame) -> pd.Series:
    """True for rows that hold a measurement: status not failed, error 0/empty, IOPS present."""
    ok = pd.to_numeric(df["iops"], errors="coerce").notna()
    if "ok" in df.columns:
        ok &= df["ok"].astype(bool)
    if "status" in df.columns:
        ok &= df["status"].fillna("done").astype(str) != "failed"
    if "error" in df.columns:
        err = pd.to_numeric(df["error"], errors="coerce")
        ok &= df["error"].isna() | (err == 0)
    return ok


def _key_text(v) -> str:
    """A value in an identity key: '?' when unknown."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "?"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def derived_config(row: pd.Series) -> str:
    """The identity of an imported row (no memstor ``config``): the job's name, rw, bs, QD, jobs, mix,
    engine, direct. The job name stands in for what the schema does not record (runtime, file size,
    region): runs of one job file share it, differently named jobs are kept apart."""
    return (f"{_key_text(row.get('jobname'))}:{_key_text(row.get('rw'))}-bs{_key_text(row.get('bs_bytes'))}"
            f"-qd{_key_text(row.get('iodepth'))}-nj{_key_text(row.get('numjobs'))}"
            f"-mix{_key_text(row.get('rwmixread'))}-{_key_text(row.get('ioengine'))}-d{_key_text(row.get('direct'))}")


def _prepared(fio: pd.DataFrame) -> pd.DataFrame:
    """fio rows with numeric metrics, ``ok``, ``experiment``, ``config`` and job-key columns filled."""
    df = fio.copy()
    for col in ("iops", "bw_MBps", "total_ios", "lat_mean_us", "lat_stddev_us", "lat_min_us", "lat_max_us",
                "runtime_s", "bs_bytes", "iodepth", "numjobs", "rwmixread", "direct", *_PCT, *_OWN_PCT):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce")
        else:
            df[col] = np.nan
    if "resp_p99_us" in df.columns:  # the mixed-load map's rows keep ioarrive's response p99 under its own name
        df["lat_p99_us"] = df["lat_p99_us"].fillna(pd.to_numeric(df["resp_p99_us"], errors="coerce"))
    df["ok"] = _ok(df)
    if "experiment" not in df.columns:
        df["experiment"] = df["table"] if "table" in df.columns else np.nan
    if "table" in df.columns:  # imported tables have no experiment column: the table names it
        df["experiment"] = df["experiment"].fillna(df["table"])
    df["config"] = df["config"].astype(object) if "config" in df.columns else pd.Series(np.nan, df.index, object)
    missing = df["config"].isna()
    if missing.any():
        df.loc[missing, "config"] = df[missing].apply(derived_config, axis=1)
    for col in ("host", "source", "groupid", "jobname", "ioengine"):
        if col not in df.columns:
            df[col] = np.nan
    if "outstanding_io" not in df.columns:
        df["outstanding_io"] = df["iodepth"] * df["numjobs"]
    return df


def _pooled_stddev(g: pd.DataFrame) -> float:
    """Standard deviation of all I/Os of several clones from each clone's count, mean and stddev (µs)."""
    n, m, s = g["total_ios"], g["lat_mean_us"], g["lat_stddev_us"]
    if n.isna().any() or m.isna().any() or s.isna().any() or n.sum() <= 0:
        return math.nan
    mean = float((n * m).sum() / n.sum())
    return float(math.sqrt(((n * (s ** 2 + (m - mean) ** 2)).sum()) / n.sum()))


def observations(fio: pd.DataFrame, data_dir: Path | str | None = None) -> pd.DataFrame:
    """One row per observation: one run (source file) of one job (groupid, jobname) and direction, with
    the job's clones combined (see the module docstring). Adds ``clones`` (rows combined) and ``ok``.
    ``data_dir``: the data folder whose processed bins tables (memstor.analysis.histograms) give the
    clones' merged json+ histograms; without it, or without bins, the clones' percentiles stay empty."""
    df = _prepared(fio)
    if df.empty:
        return df.assign(clones=pd.Series(dtype=int))
    key = ["host", "experiment", "config", *_JOB_KEY]
    counts = df.groupby(key, dropna=False, sort=False)["iops"].transform("size")
    single = df[counts == 1].assign(clones=1)
    multi = df[counts > 1]
    bins = read_bins(data_dir, zip(multi["host"], multi["experiment"])) if len(multi) else empty_bins()
    rows = []
    for _, g in multi.groupby(key, dropna=False, sort=False):
        row = g.iloc[0].to_dict()
        row["clones"] = len(g)
        good = g[g["ok"]]
        if len(good) < len(g):  # a failed clone fails the observation: its sum would be wrong
            row["ok"] = False
            for col in ("iops", "bw_MBps", "total_ios", "lat_mean_us", "lat_stddev_us", "lat_min_us",
                        "lat_max_us", *_PCT, *_OWN_PCT):
                row[col] = math.nan
            rows.append(row)
            continue
        row["ci_method"] = ""  # the clones' own intervals do not combine into one
        n = g["total_ios"]
        row["iops"], row["bw_MBps"] = float(g["iops"].sum()), float(g["bw_MBps"].sum())
        row["total_ios"] = float(n.sum()) if n.notna().all() else math.nan
        weighted = n.notna().all() and n.sum() > 0 and g["lat_mean_us"].notna().all()
        row["lat_mean_us"] = float((n * g["lat_mean_us"]).sum() / n.sum()) if weighted else math.nan
        row["lat_min_us"], row["lat_max_us"] = g["lat_min_us"].min(), g["lat_max_us"].max()
        row["lat_stddev_us"] = _pooled_stddev(g)
        row.update(dict.fromkeys(_OWN_PCT, math.nan))  # no bins of theirs to merge
        row["runtime_s"] = g["runtime_s"].max()
        pct = job_percentiles(bins, row.get("source"), row.get("jobname"), row.get("groupid"),
                              str(row.get("direction")), _PCT)
        for col in _PCT:
            row[col] = pct.get(col, math.nan)
        rows.append(row)
    out = pd.concat([single, pd.DataFrame(rows, columns=[*df.columns, "clones"])], ignore_index=True) \
        if rows else single
    return out.reset_index(drop=True)


MIXED_RW = ("randrw", "rw", "readwrite")


def with_totals(obs: pd.DataFrame) -> pd.DataFrame:
    """obs plus one direction ``"total"`` row per observation of a mixed job (randrw/rw: read and write of
    one run). IOPS, MB/s and I/Os are summed and the mean latency is weighted by the I/O counts (exact);
    when only one direction did I/O (rwmixread 0 or 100) the total is that direction; otherwise stddev,
    min/max and percentiles stay empty (not derivable from per-direction values)."""
    if obs.empty:
        return obs
    key = ["host", "experiment", "config", "source", "groupid", "jobname"]
    parts = obs[obs["direction"].isin(["read", "write", "trim"]) & obs["rw"].isin(MIXED_RW)]
    totals = []
    for _, g in parts.groupby(key, dropna=False, sort=False):
        row = g.iloc[0].to_dict()
        row["direction"] = "total"
        row["ok"] = bool(g["ok"].all())
        row["ci_method"] = ""  # the directions' own intervals do not make the total's
        active = g[g["total_ios"].fillna(0) > 0]
        if row["ok"] and len(active) == 1:
            row.update({c: active.iloc[0][c] for c in ("iops", "bw_MBps", "total_ios", "lat_mean_us",
                                                       "lat_stddev_us", "lat_min_us", "lat_max_us", *_PCT,
                                                       *_OWN_PCT)})
            own = [c for m in WITHIN_RUN_METRICS for c in (f"{m}_ci_low", f"{m}_ci_high")] + ["ci_method"]
            row.update({c: active.iloc[0][c] for c in own if c in active.columns})  # the one direction's own
            row["iops"], row["bw_MBps"] = g["iops"].sum(), g["bw_MBps"].sum()
            totals.append(row)
            continue
        for col in ("lat_stddev_us", "lat_min_us", "lat_max_us", *_PCT, *_OWN_PCT):
            row[col] = math.nan
        n, lat = g["total_ios"], g["lat_mean_us"]
        mask = (n > 0) & lat.notna()
        if row["ok"]:
            row["iops"], row["bw_MBps"], row["total_ios"] = g["iops"].sum(), g["bw_MBps"].sum(), n.sum()
            row["lat_mean_us"] = float((lat[mask] * n[mask]).sum() / n[mask].sum()) if mask.any() else math.nan
        else:
            row["iops"] = row["bw_MBps"] = row["total_ios"] = row["lat_mean_us"] = math.nan
        totals.append(row)
    if not totals:
        return obs
    return pd.concat([obs, pd.DataFrame(totals, columns=obs.columns)], ignore_index=True)


#: Metrics a single run has its own interval for (memstor.core.batchmeans, from fio's interval logs).
WITHIN_RUN_METRICS = ("iops", "bw_MBps", "lat_mean_us")


def _within_run(good: pd.DataFrame, m: str) -> tuple[float, float]:
    """The one successful observation's own batch-means interval of metric m, else (NaN, NaN)."""
    one = good.iloc[0]
    if m not in WITHIN_RUN_METRICS or str(one.get("ci_method")) != "batch-means" \
            or m in correlated_metrics(one.get("ci_note")):
        return math.nan, math.nan  # none, or from correlated batches (a table written before that rule)
    lo, hi = pd.to_numeric(pd.Series([one.get(f"{m}_ci_low"), one.get(f"{m}_ci_high")]), errors="coerce")
    return float(lo), float(hi)


def _all_reached(good: pd.DataFrame):
    """True when every run of a configuration with a precision target reached it, False when one did not,
    None (empty) without a target (fixed runtime) or without runs."""
    if "precision_reached" not in good or good.empty:
        return None
    flags = good["precision_reached"].dropna()
    if flags.empty:
        return None
    return bool(flags.map(lambda x: str(x).strip().lower() in ("true", "1", "1.0")).all())


def summarise(obs: pd.DataFrame, metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """Per configuration x direction: the identity (SUMMARY_KEYS), n (successful observations), n_failed,
    each metric's mean and ``<metric>_ci_low`` / ``<metric>_ci_high``, the CARRIED descriptors and
    ``ci_method``: with n >= 2 the 95 % t-interval between the runs (``repetitions``); with n = 1 the run's
    own 95 % batch-means interval of IOPS, MB/s and mean latency (``batch-means``, from fio's interval logs;
    the percentiles stay empty), or none (empty ci_method) when the run has none; ``precision_reached``
    (points with a precision target: every run reached it). A metric missing from any successful
    observation is left empty."""
    cols = [*SUMMARY_KEYS, *CARRIED] + [c for m in metrics for c in (m, f"{m}_ci_low", f"{m}_ci_high")] + \
        ["ci_method", "precision_reached"]
    if obs.empty:
        return pd.DataFrame(columns=cols)
    group = ["host", "experiment", "config", "direction"]
    out = []
    for _, g in obs.groupby(group, dropna=False, sort=False):
        good = g[g["ok"]]
        first = g.iloc[0]
        row = {c: first.get(c) for c in (*IDENTITY, "config", "direction", *CARRIED)}
        row["n"], row["n_failed"] = int(len(good)), int(len(g) - len(good))
        row["ci_method"] = "repetitions" if len(good) >= 2 else ""
        for m in metrics:
            vals = good[m] if m in good else pd.Series(dtype=float)
            if len(good) and vals.notna().all():
                mean, lo, hi, _ = ci95(vals.tolist())
                if len(good) == 1:
                    lo, hi = _within_run(good, m)
                    if lo == lo:
                        row["ci_method"] = "batch-means"
            else:
                mean = lo = hi = math.nan
            row[m], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = mean, lo, hi
        row["precision_reached"] = _all_reached(good)
        out.append(row)
    return pd.DataFrame(out, columns=cols)


def summary_table(fio: pd.DataFrame, data_dir: Path | str | None = None) -> pd.DataFrame:
    """observations -> totals of mixed jobs -> summarise: the table of ``memstor summary`` and
    ``report/tables/summary.csv`` (one row per device x experiment x configuration x direction)."""
    return summarise(with_totals(observations(fio, data_dir)))
