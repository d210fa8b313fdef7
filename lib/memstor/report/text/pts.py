"""Report text, the SNIA PTS tests beyond steady state and write saturation: host idle recovery (HIR),
cross-stimulus recovery (XSR), the composite block-size workload (CBW) and demand intensity (DIRTH)
(memstor.analysis.pts_recovery, memstor.analysis.pts_demand). Pure: DataFrame in, display table out."""

from __future__ import annotations

import pandas as pd

from memstor.core.fmt import fmt_interval, fmt_number
from memstor.core.schema import missing


def _one(df: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
    """`out` without its device column when `df` holds one device."""
    return out if df["host"].nunique() > 1 else out.drop(columns="device")


def departures(*tables: pd.DataFrame | None) -> list[str]:
    """The distinct departure texts of the tables, per device ("device: text")."""
    seen: dict[str, None] = {}
    for t in tables:
        if t is None or t.empty or "departure" not in t:
            continue
        for host, text in zip(t["host"], t["departure"]):
            if not missing(text):
                seen.setdefault(f"{host}: {text}", None)
    return list(seen)


def hir_display(hir: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x wait state: the idle (s), segments, IOPS [95 % interval], the baseline and the
    recovery ratio [95 % interval]."""
    cols = ["device", "wait (s)", "idle measured (s)", "segments", "IOPS", "baseline IOPS", "recovery (× baseline)"]
    if hir is None or hir.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": hir["host"], "wait (s)": hir["wait_s"].map(fmt_number),
        "idle measured (s)": hir["idle_s_mean"].map(fmt_number), "segments": hir["segments"].map(fmt_number),
        "IOPS": [fmt_interval(v, lo, hi) for v, lo, hi in zip(hir["iops_mean"], hir["iops_ci_low"], hir["iops_ci_high"])],
        "baseline IOPS": hir["baseline_iops"].map(fmt_number),
        "recovery (× baseline)": [fmt_interval(v, lo, hi) for v, lo, hi in
                                  zip(hir["recovery_ratio"], hir["recovery_ratio_ci_low"], hir["recovery_ratio_ci_high"])],
    })
    return _one(hir, out)


def xsr_display(xsr: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x transition: when it happens (s), the levels before and after (MB/s [95 %
    interval]) and the settle time (s; "not settled" when the phase never settled)."""
    cols = ["device", "transition", "at (s)", "before (MB/s)", "after (MB/s)", "settles in (s)"]
    if xsr is None or xsr.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": xsr["host"], "transition": xsr["transition"], "at (s)": xsr["t_transition_s"].map(fmt_number),
        "before (MB/s)": [fmt_interval(v, lo, hi) for v, lo, hi in
                          zip(xsr["from_level_MBps"], xsr["from_level_MBps_ci_low"], xsr["from_level_MBps_ci_high"])],
        "after (MB/s)": [fmt_interval(v, lo, hi) for v, lo, hi in
                         zip(xsr["to_level_MBps"], xsr["to_level_MBps_ci_low"], xsr["to_level_MBps_ci_high"])],
        "settles in (s)": [("not settled" if missing(v) else fmt_number(v)) for v in xsr["settle_s"]],
    })
    return _one(xsr, out)
