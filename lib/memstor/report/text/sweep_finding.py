"""Report text, page 2's queue-depth finding of one workload: what the closed sweep bought with depth (IOPS and mean
latency from one I/O in flight to its most), a point with more jobs beside it, judged against the run-to-run spread
(memstor.analysis.spread). Pure: the queue-depth points (memstor.analysis.points.qd_points) and fio_summary's rows in,
words out. µs, IOPS.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.spread import FRESH, pure_iops, run_spread
from memstor.core.fmt import fmt_number
from memstor.report.text.headline_trust import deeper_faster, deeper_words


def sweep_rows(qd: pd.DataFrame, host: str, rw: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every measured point of rw on host, the one-job sweep's points) of the queue-depth table."""
    every = qd[(qd["host"].astype(str) == host) & (qd["rw"] == rw) & qd["iops"].notna() & qd["lat_mean_us"].notna()]
    return every, every[every["in_sweep"].fillna(True).astype(bool)] if "in_sweep" in every.columns else every


def sweep_best(qd: pd.DataFrame | None, host: str, rw: str) -> pd.Series | None:
    """The one-job sweep's point of most IOPS (None without points)."""
    if qd is None or qd.empty:
        return None
    g = sweep_rows(qd, host, rw)[1]
    return None if g.empty else g.loc[g["iops"].idxmax()]


def tradeoff(qd: pd.DataFrame, host: str, rw: str, points: pd.DataFrame | None = None) -> str | None:
    """'4K random reads: X IOPS at 1 I/O in flight (R µs); the most along the one-job sweep, Y IOPS at N, at R' µs
    (k×)' from the closed queue-depth sweep, and the sweep's own point outside it (another job count: QD32x4) where
    that measured more — 'the most' is never below a point of the same experiment, and within the run-to-run spread
    (memstor.analysis.spread, from ``points``) 'a gain not shown' (twelfth read S15-1cpu 2: +7.7 % read 'more';
    nineteenth S19-loop 4: 'as much' read as shown equal); None without two depths."""
    if qd is None or qd.empty:
        return None
    every, g = sweep_rows(qd, host, rw)
    if g["outstanding_io"].nunique() < 2:
        return None
    low, best = g.loc[g["outstanding_io"].idxmin()], g.loc[g["iops"].idxmax()]
    top = every.loc[every["iops"].idxmax()]
    what = {"randread": "random reads", "randwrite": "random writes"}.get(rw, rw)
    along = "the most along its one-job sweep" if float(top["iops"]) > float(best["iops"]) else "the most"
    deeper = deeper_faster(points, host, rw, float(low["lat_mean_us"])) if int(low["outstanding_io"]) == 1 else None
    times, cost = ("", "") if deeper is not None else (  # S20-loop 1: no ratio to a QD1 run out of line
        f" ({best['iops'] / low['iops']:.1f}×)", f" ({best['lat_mean_us'] / low['lat_mean_us']:.1f}× the latency)")
    text = (f"4 KiB {what} along the queue-depth sweep: {fmt_number(low['iops'])} IOPS with "
            f"{int(low['outstanding_io'])} I/O in flight at a mean latency of "
            f"{fmt_number(low['lat_mean_us'])} µs; {along}, {fmt_number(best['iops'])} IOPS{times}, with "
            f"{int(best['outstanding_io'])} in flight at a mean of {fmt_number(best['lat_mean_us'])} µs{cost}")
    if deeper is not None:  # S19-loop 3: '1.0× the latency' against a QD1 run slower than QD4's
        text += f" ({deeper_words(deeper)}, so no ratio to it is given)"
    if along == "the most":
        return text
    spread = run_spread(points, host, rw)
    gain = float(top["iops"]) / float(best["iops"])
    more = "more, " if gain > spread.limit else ""
    gap = "" if more else f" ({100 * (gain - 1):+.1f} %, within {spread.brief()}: a gain not shown)"
    if more and (one := one_job_elsewhere(points, host, rw)) is not None and \
            float(top["iops"]) <= float(one["iops"]) * spread.limit:  # S20-cpu1 4: the jobs' gain against that run
        gap = (f" (the same one-job job measured {fmt_number(one['iops'])} IOPS in {one['experiment']} "
               f"(QD{int(one['iodepth'])}x1), within {spread.brief()} of it: a gain from the jobs not shown)")
    return text + (f"; with {int(top['numjobs'])} jobs (QD{int(top['iodepth'])}x{int(top['numjobs'])}, "
                   f"{int(top['outstanding_io'])} in flight) the same sweep measured {more}"
                   f"{fmt_number(top['iops'])} IOPS at a mean of {fmt_number(top['lat_mean_us'])} µs{gap}")


def one_job_elsewhere(points: pd.DataFrame | None, host: str, rw: str) -> pd.Series | None:
    """The most IOPS a one-job 4 KiB run of ``rw`` measured in another fresh experiment (fio-block-size, fio-rw-ratio's
    pure mixes); None without one."""
    p = pure_iops(points, host)
    p = p[(p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["numjobs"] == 1) & p["experiment"].isin(FRESH)
          & (p["experiment"] != "fio-queue-depth")]
    return None if p.empty else p.loc[pd.to_numeric(p["iops"], errors="coerce").idxmax()]
