"""``headline_definition``: a headline quantity is one number. Per host, the headline's value (memstor.analysis
.synthesis.headline_long) against the other tables' numbers of the same name:

- best 4K random read / write IOPS: the knee table's highest measured throughput (X_max_meas_iops), the
  open loop's X_max (x_max_iops, the rates are shares of it) and the storage curves' x_max_iops — all agree;
- peak memory bandwidth: no loaded-latency curve measured more (memory_fit b_max_MBps);
- idle memory latency: no loaded-latency point measured less (the curve points' latency_ns).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.rows import PASS, WARN, has, n, num, row

#: Two numbers of one headline quantity further apart than this ratio are two definitions, not one.
RATIO = 1.10

_SECTION = "headline"


def headline_rows(headline: pd.DataFrame | None, knees: pd.DataFrame | None, load: pd.DataFrame | None,
                  storage: pd.DataFrame | None, mem: pd.DataFrame | None, curves: pd.DataFrame | None) -> list[dict]:
    """headline_definition per host x headline quantity that another table also states."""
    if not has(headline, "host", "key", "value"):
        return []
    rows = []
    for host, h in headline.groupby("host", sort=True):
        vals = dict(zip(h["key"], h["value"]))
        for rw in ("randread", "randwrite"):
            others = _best_iops(host, rw, knees, load, storage)
            if others and num(vals.get(f"best_{rw}_iops")) is not None:
                rows.append(_agree(host, f"best 4K {rw} IOPS", float(vals[f"best_{rw}_iops"]), others, "IOPS", 0))
        bw = _column(mem, host, "b_max_MBps", "loaded-latency curve maximum", max)
        if bw and num(vals.get("peak_bw_MBps")) is not None:
            rows.append(_agree(host, "peak memory bandwidth", float(vals["peak_bw_MBps"]), bw, "MB/s", +1))
        lat = _column(curves, host, "latency_ns", "lightest loaded latency", min)
        if lat and num(vals.get("idle_latency_ns")) is not None:
            rows.append(_agree(host, "idle memory latency", float(vals["idle_latency_ns"]), lat, "ns", -1))
    return rows


def _best_iops(host, rw: str, knees, load, storage) -> list[tuple[str, float]]:
    out = []
    for df, col, what in ((knees, "X_max_meas_iops", "knee table's measured X_max"),
                          (load, "x_max_iops", "open loop's X_max"),
                          (storage, "x_max_iops", "storage curve's X_max")):
        if has(df, "host", "rw", col):
            sel = df[(df["host"] == host) & (df["rw"] == rw)]
            if "kind" in sel:
                sel = sel[sel["kind"].astype(str).str.startswith("closed")]
            v = num(pd.to_numeric(sel[col], errors="coerce").max()) if len(sel) else None
            if v is not None:
                out.append((what, v))
    return out


def _column(df, host, col: str, what: str, pick) -> list[tuple[str, float]]:
    if not has(df, "host", col):
        return []
    v = num(pick(pd.to_numeric(df.loc[df["host"] == host, col], errors="coerce").dropna(), default=None)) \
        if (df["host"] == host).any() else None
    return [] if v is None else [(what, v)]


def _agree(host, subject: str, value: float, others: list[tuple[str, float]], unit: str, side: int) -> dict:
    """side 0: all within RATIO; +1: no other above value x RATIO; -1: no other below value / RATIO."""
    def off(v: float) -> bool:
        if side > 0:
            return v > value * RATIO
        if side < 0:
            return v < value / RATIO
        return max(v, value) / min(v, value) > RATIO

    bad = [(w, v) for w, v in others if off(v)]
    ratio = max(max(v, value) / min(v, value) for _, v in others)
    said = "; ".join(f"{w} {n(v)}" for w, v in others)
    status = WARN if bad else PASS
    return row(host, "headline_definition", subject, status, ratio, RATIO, "x", f"headline {n(value)} {unit}; {said}",
               "" if not bad else "the report uses the headline's definition for this quantity everywhere and names "
               f"the other number{'s' if len(bad) > 1 else ''} ({', '.join(w for w, _ in bad)}) by what they measure",
               _SECTION)
