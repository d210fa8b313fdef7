"""Memory analysis (pure): idle latency, peak bandwidth, loaded-latency curves, knees and checks."""

from __future__ import annotations

import pandas as pd


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a measurement (failed points dropped)."""
    return df[df["status"] != "failed"] if "status" in df else df


def idle_latency_ns(df: pd.DataFrame) -> float | None:
    """Idle latency in ns (median of the idle-latency rows), or None when it was not measured."""
    values = measured(df).query("test == 'idle_latency'")["latency_ns"].dropna()
    return float(values.median()) if len(values) else None


def peak_bandwidth_MBps(df: pd.DataFrame) -> pd.Series:
    """Peak injection bandwidth in MB/s per traffic label (index), in the tool's order."""
    rows = measured(df).query("test == 'peak_injection_bandwidth'").dropna(subset=["bandwidth_MBps"])
    return rows.groupby("traffic", sort=False)["bandwidth_MBps"].median().rename("peak_bandwidth_MBps")


def loaded_curves(df: pd.DataFrame) -> pd.DataFrame:
    """Loaded-latency rows sorted by access size, traffic (in order of appearance) and inject delay."""
    rows = measured(df).query("test == 'loaded_latency'").dropna(subset=["latency_ns", "bandwidth_MBps"])
    order = {t: i for i, t in enumerate(pd.unique(rows["traffic"]))}
    key = rows["traffic"].map(order)
    return rows.assign(_order=key).sort_values(["access_bytes", "_order", "inject_delay"], kind="stable").drop(
        columns="_order")


def _curve_groups(df: pd.DataFrame):
    """(traffic, access_bytes, curve sorted by delay) for each loaded-latency curve."""
    curves = loaded_curves(df)
    for (size, traffic), curve in curves.groupby(["access_bytes", "traffic"], sort=False):
        yield traffic, size, curve.sort_values("inject_delay")


def knee_table(df: pd.DataFrame, rise: float = 0.25) -> pd.DataFrame:
    """Knee hints per traffic x access size: the highest bandwidth reached while latency stays within
    ``rise`` (0.25 = 25%) of the unloaded latency.

    Unloaded latency (ns) = median latency of the points at <= 25% of the curve's maximum bandwidth
    (robust to a noisy last point). Columns: traffic, access_bytes, unloaded_latency_ns,
    max_bandwidth_MBps, latency_at_max_bandwidth_ns, knee_delay, knee_bandwidth_MBps, knee_latency_ns,
    knee_share_of_max (knee bandwidth / max bandwidth).
    """
    out = []
    for traffic, size, curve in _curve_groups(df):
        bw, lat = curve["bandwidth_MBps"], curve["latency_ns"]
        light = lat[bw <= 0.25 * bw.max()]
        unloaded = float(light.median()) if len(light) else float(lat.min())
        top = curve.loc[bw.idxmax()]
        within = curve[lat <= (1 + rise) * unloaded]
        knee = within.loc[within["bandwidth_MBps"].idxmax()] if len(within) else None
        out.append({
            "traffic": traffic,
            "access_bytes": size,
            "unloaded_latency_ns": unloaded,
            "max_bandwidth_MBps": float(top["bandwidth_MBps"]),
            "latency_at_max_bandwidth_ns": float(top["latency_ns"]),
            "knee_delay": int(knee["inject_delay"]) if knee is not None else None,
            "knee_bandwidth_MBps": float(knee["bandwidth_MBps"]) if knee is not None else None,
            "knee_latency_ns": float(knee["latency_ns"]) if knee is not None else None,
            "knee_share_of_max": float(knee["bandwidth_MBps"] / top["bandwidth_MBps"]) if knee is not None else None,
        })
    return pd.DataFrame(out)


def check_table(df: pd.DataFrame, bw_tol: float = 0.05, lat_tol: float = 0.15) -> pd.DataFrame:
    """Acceptance checks per traffic x access size (issue 4, acceptance 3).

    - ``bw_non_increasing``: bandwidth never rises by more than ``bw_tol`` (5%) from one inject delay to
      the next larger one (``max_bw_increase_pct`` is the largest step-to-step change in %; negative
      when bandwidth falls at every step).
    - ``latency_near_idle``: latency at the largest delay is within ``lat_tol`` (15%) of the idle latency
      (``latency_vs_idle_pct`` = (latency / idle - 1) x 100; False when idle latency is missing).
    """
    idle = idle_latency_ns(df)
    out = []
    for traffic, size, curve in _curve_groups(df):
        bw = curve["bandwidth_MBps"].to_numpy()
        rises = [(b / a - 1) * 100 for a, b in zip(bw[:-1], bw[1:]) if a > 0]
        worst = max(rises) if rises else 0.0
        last = curve.iloc[-1]
        vs_idle = (float(last["latency_ns"]) / idle - 1) * 100 if idle else None
        near = vs_idle is not None and abs(vs_idle) <= lat_tol * 100
        out.append({
            "traffic": traffic,
            "access_bytes": size,
            "delays": len(curve),
            "max_bw_increase_pct": round(worst, 2),
            "bw_non_increasing": worst <= bw_tol * 100,
            "idle_latency_ns": idle,
            "largest_delay": int(last["inject_delay"]),
            "latency_at_largest_delay_ns": float(last["latency_ns"]),
            "latency_vs_idle_pct": round(vs_idle, 2) if vs_idle is not None else None,
            "latency_near_idle": near,
            "ok": bool(worst <= bw_tol * 100 and near),
        })
    return pd.DataFrame(out)
