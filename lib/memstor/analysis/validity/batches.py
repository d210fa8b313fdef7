"""``batch_independence``: every batch-means interval comes from batches whose lag-1 autocorrelation is small
(memstor.core.batchmeans: >= 10 batches, lag-1 <= 0.2, wider batches tried first). Per host x experiment (fio
tidy rows, ``experiment``) and per host x memory table (mlc tidy rows, ``table``), over every metric interval of
a single run's own batch means (fio: iops, bw_MBps, lat_mean_us; memory: latency_ns, bandwidth_MBps).

An interval is from correlated batches when its row's ``ci_note`` says "correlated (lag-1 <metric> ...)" for
that metric (memstor.core.batchmeans.correlated_metrics). Since issue 38 such intervals are not published
(empty bounds, the note keeps the reason); a table processed before that keeps their numbers, and the
summaries drop them on reading.

Value: the share (%) of the intervals with numbers that come from independent batches. Band [100, 100]: the
share is at most 100 % by definition, and any interval from correlated batches is one against the report's
own rule: fail (the summaries leave it out; reprocess the data to drop it from the tables). The evidence
counts the intervals from independent batches, those shown from correlated ones, and those withheld (no
interval: correlated). No interval with numbers at all (none computed, or every one withheld): unchecked.
An experiment whose rows never formed batches (no ``ci_method``/``ci_note`` columns, "too few batches", or
"not computed" by design, like the write-saturation and PTS trajectories) has no row: interval_exists says
why those points have no interval.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.rows import FAIL, PASS, has, n, num, row, unchecked
from memstor.core.batchmeans import MAX_LAG1, METHOD, correlated_metrics
from memstor.core.schema import missing

#: Interval metrics of a single run's own batch means -> the name its ci_note gives it.
FIO_METRICS = {"iops": "iops", "bw_MBps": "bw_MBps", "lat_mean_us": "lat_mean_us"}
MEMORY_METRICS = {"latency_ns": "latency", "bandwidth_MBps": "bandwidth"}
#: Every interval shown must come from independent batches (a share in %).
SHARE_LOW = SHARE_HIGH = 100.0


def batch_rows(fio: pd.DataFrame | None, mlc: pd.DataFrame | None) -> list[dict]:
    """batch_independence per host x fio experiment and per host x memory table."""
    rows = []
    for df, key, metrics, section in ((fio, "experiment", FIO_METRICS, "storage_points"),
                                      (mlc, "table", MEMORY_METRICS, "memory")):
        if not has(df, "host", key, "ci_note"):
            continue
        for (host, what), g in df.groupby(["host", key], sort=True):
            counts = count_intervals(g, metrics)
            if counts is not None:
                rows.append(_row(host, str(what), counts, section))
    return rows


def count_intervals(g: pd.DataFrame, metrics: dict[str, str]) -> dict | None:
    """{independent, shown_correlated, withheld, worst_lag1} over the rows' metric intervals; None when no
    row formed batches (a ci_method of batch-means or a "correlated" note; "too few batches" formed none)."""
    tried = g["ci_note"].astype(str).str.contains("correlated (lag-1", regex=False, na=False)
    if "ci_method" in g:
        tried |= g["ci_method"].astype(str) == METHOD
    if not tried.any():
        return None
    counts = {"independent": 0, "shown_correlated": 0, "withheld": 0}
    lags: list[float] = []
    for _, r in g[tried].iterrows():
        corr = correlated_metrics(r["ci_note"])
        for col, name in metrics.items():
            if col not in r or missing(r.get(col)):
                continue
            shown = num(r.get(f"{col}_ci_low")) is not None and num(r.get(f"{col}_ci_high")) is not None
            if name in corr:
                counts["shown_correlated" if shown else "withheld"] += 1
                lags.append(corr[name])
            elif shown:
                counts["independent"] += 1
    return {**counts, "worst_lag1": max(lags) if lags else None}


def _row(host, what: str, c: dict, section: str) -> dict:
    shown = c["independent"] + c["shown_correlated"]
    lag = f" (lag-1 up to {n(c['worst_lag1'])} against {n(MAX_LAG1)})" if c["worst_lag1"] is not None else ""
    said = (f"{c['independent']} interval(s) from independent batches, {c['shown_correlated']} shown from "
            f"correlated batches, {c['withheld']} withheld as correlated{lag}")
    if not shown:
        return unchecked(host, "batch_independence", what, f"no batch-means interval with numbers ({said})", section,
                         "% of intervals", low=SHARE_LOW, high=SHARE_HIGH,
                         consequence="these points are shown without an interval (interval_exists says why)")
    share = 100.0 * c["independent"] / shown
    status = PASS if c["shown_correlated"] == 0 else FAIL
    consequence = "" if status == PASS else (
        f"{c['shown_correlated']} interval(s) break the rule that batches be independent (lag-1 <= {n(MAX_LAG1)}): "
        "the summaries leave them out and quote the values without an interval; reprocess the data to drop them "
        "from the tables too")
    return row(host, "batch_independence", what, status, share, SHARE_LOW, "% of intervals", said, consequence,
               section, low=SHARE_LOW, high=SHARE_HIGH)
