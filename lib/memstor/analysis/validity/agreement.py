"""``config_agreement``: one configuration (same rw, block size, iodepth, numjobs, rwmixread, ioengine,
O_DIRECT, file size and direction) measured in two or more experiments of one host (the fio summary points,
memstor.analysis.points.fio_summary). Closed-loop experiments only: fio-load-latency paces its I/O (its
iodepth is a ceiling) and fio-steady-state measures another drive state (checked by steady_vs_fresh)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row
from memstor.core.units import size_text

#: Configuration columns: equal in all of them = the same configuration.
CONFIG_KEYS = ("rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "ioengine", "direct", "file_size_bytes",
               "direction")
#: Experiments that do not measure a plain closed-loop point.
NOT_COMPARED = ("fio-load-latency", "fio-steady-state")
#: Without intervals, or with intervals that miss each other, two values within this ratio agree up to
#: the run-to-run spread a single run's interval does not hold (a warning when the intervals miss).
AGREE_RATIO = 1.10
#: Two measurements of one configuration further apart than this cannot both describe the device: the
#: machine or the drive's state changed between them.
FAIL_RATIO = 1.5

_SECTION = "storage_points"


def agreement_rows(points: pd.DataFrame | None) -> list[dict]:
    """config_agreement per host x configuration measured in more than one experiment."""
    if not has(points, "host", "experiment", "iops", *CONFIG_KEYS):
        return []
    p = points[~points["experiment"].isin(NOT_COMPARED) & (points["direction"] != "total") & points["iops"].notna()]
    if "n" in p:
        p = p[pd.to_numeric(p["n"], errors="coerce").fillna(0) > 0]
    keys = ["host", *CONFIG_KEYS]
    p = p.assign(**{f"_{k}": p[k].astype(object).where(p[k].notna(), "") for k in keys})
    rows = []
    for _, g in p.groupby([f"_{k}" for k in keys], sort=True):
        per_exp = g.sort_values("n", ascending=False, kind="stable").drop_duplicates("experiment") \
            if "n" in g else g.drop_duplicates("experiment")
        if len(per_exp) >= 2:
            rows.append(_row(per_exp))
    return rows


def _subject(r: pd.Series) -> str:
    mix = "" if num(r["rwmixread"]) is None else f" {int(r['rwmixread'])} % reads"
    size = "" if num(r["file_size_bytes"]) is None else f", {size_text(int(r['file_size_bytes']))} file"
    return (f"{size_text(int(r['bs_bytes']))} {r['rw']}{mix} ({r['direction']}), QD{int(r['iodepth'])}x"
            f"{int(r['numjobs'])}, {r['ioengine']}, direct={int(r['direct']) if num(r['direct']) is not None else '?'}"
            f"{size}")


def _ci(r: pd.Series) -> tuple[float, float] | None:
    lo, hi = num(r.get("iops_ci_low")), num(r.get("iops_ci_high"))
    return None if lo is None or hi is None else (lo, hi)


def _row(g: pd.DataFrame) -> dict:
    hi_r, lo_r = g.loc[g["iops"].idxmax()], g.loc[g["iops"].idxmin()]
    ratio = float(hi_r["iops"]) / float(lo_r["iops"])
    cis = [_ci(r) for _, r in g.iterrows()]
    with_ci = all(c is not None for c in cis)
    overlap = with_ci and max(c[0] for c in cis if c) <= min(c[1] for c in cis if c)

    def said(r: pd.Series) -> str:
        ci = _ci(r)
        return f"{n(r['iops'])} IOPS" + (f" [{n(ci[0])}, {n(ci[1])}]" if ci else "") + f" in {r['experiment']}"

    values = "; ".join(said(r) for _, r in g.sort_values("iops", ascending=False).iterrows())
    if overlap or (not with_ci and ratio <= AGREE_RATIO):
        status = PASS
        how = "the 95 % intervals overlap" if overlap else f"within {n(AGREE_RATIO)}x (no intervals to compare)"
    else:
        status = FAIL if ratio > FAIL_RATIO else WARN
        how = f"{n(ratio)}x apart" + (", the 95 % intervals miss each other" if with_ci else ", without intervals")
    consequence = {PASS: "", WARN: "the run-to-run spread of this configuration exceeds its single-run intervals: "
                   "differences between experiments of this size are not findings",
                   FAIL: f"neither number alone is this configuration's value: the report gives both "
                         f"({n(hi_r['iops'])} and {n(lo_r['iops'])} IOPS) and the machine changed between them"}[status]
    return row(hi_r["host"], "config_agreement", _subject(hi_r), status, ratio, AGREE_RATIO, "x (high / low)",
               f"{values}: {how}", consequence, _SECTION)
