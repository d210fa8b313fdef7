"""loadlat's JSON sidecar (``--json=FILE``, stored as ``loadlat_json`` in a point's ``.meta.json``) -> the
quality figures of each measured point. Pure: a parsed JSON document in, plain dicts out.

Per point (lib/loadlat/README.md): ``windows`` (``latency_ns``, ``bandwidth_MBps`` and ``cpu_share_min`` of
each sub-window of the measured window), ``threads`` (each measuring thread's ``cpu_share`` and
``steal_pct``; load threads also ``arrival_cv``), ``steal_pct`` (max over the measuring CPUs, % of the
window), ``arrival_cv`` (median over load threads) and, in the header, ``pacing`` and
``windows_per_point``. loadlat before v0.3 wrote none of these: the figures are then None.

:func:`point_figures` reduces each point to the numbers the quality gate
(:func:`memstor.measure.loadlat.gate_reasons`) and the tidy table use, units in the names:

- ``bandwidth_spread_pct``, ``latency_spread_pct``: (max - min) / mean of the sub-windows' values, in %;
  NaN when a sub-window lost its value (a thread was descheduled across all of it), None when the point
  has no sub-windows (older loadlat) or no such figure (idle latency has no bandwidth, peak bandwidth no
  latency). When a point has more than 5 sub-windows, a multiple of 5 (memstor asks for windows of
  0.1 s for the batch-means interval, memstor.measure.loadlat.sub_windows), the spreads are those of the
  sub-windows merged into :data:`GATE_GROUPS` (5) consecutive groups: the gate's thresholds were set on 5
  windows, and the range of more, shorter windows is wider by itself (more draws, more noise per draw);
- ``cpu_share_min_pct``: the smallest CPU share (CPU time / window time) of the measuring threads, in %;
- ``steal_pct``: steal time of the busiest measuring CPU, % of the window (None when /proc/stat was not
  readable);
- ``arrival_cv``: coefficient of variation of the time between request-group starts (median over load
  threads; interruptions > 20 x the median interval left out, see the README);
- ``windows``: the number of sub-windows; ``pacing``: ``fixed`` or ``exp``;
- ``series``: the sub-windows themselves for memstor.analysis.memory.sub_window_ci_columns: lists
  ``window_s`` (s), ``latency_ns`` and ``bandwidth_MBps`` (None for a lost value; the key is None when
  the point does not measure that figure), or None without sub-windows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: loadlat's mode names -> the ``test`` of memstor's rows (the same words).
MODES = ("idle_latency", "loaded_latency", "peak_injection_bandwidth")


def _num(v) -> float | None:
    """A finite float, or None (JSON null, missing, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def spread_pct(values: Sequence) -> float | None:
    """(max - min) / mean of ``values`` in %: None for no values; NaN when any value is missing (a lost
    sub-window) or the mean is not positive."""
    if not values:
        return None
    found = [_num(v) for v in values]
    nums = [v for v in found if v is not None]
    if len(nums) < len(found):
        return math.nan
    mean = sum(nums) / len(nums)
    if not mean > 0:
        return math.nan
    return 100.0 * (max(nums) - min(nums)) / mean


#: The quality gate judges spreads over this many windows (see the module docstring).
GATE_GROUPS = 5


def gate_groups(n: int) -> int:
    """Windows the gate's spreads are taken over for a point of ``n`` sub-windows: :data:`GATE_GROUPS` when
    n is a larger multiple of it, else n itself."""
    return GATE_GROUPS if n > GATE_GROUPS and n % GATE_GROUPS == 0 else n


def grouped(values: Sequence, seconds: Sequence, kind: str) -> list:
    """``values`` of consecutive sub-windows merged into :func:`gate_groups` groups, each as the whole
    group's figure: bandwidth (``kind="bandwidth"``) is bytes / time, i.e. the sub-windows' values weighted
    by their length ``seconds``; latency (``kind="latency"``) is time / loads, the loads of a sub-window
    being its length / its latency. A group with a lost value (None) is None; lengths that are not
    positive numbers weigh the sub-windows equally."""
    n = len(values)
    k = gate_groups(n)
    if k == n:
        return list(values)
    given = [_num(s) for s in seconds] if len(seconds) == n else []
    secs = [s for s in given if s is not None and s > 0]
    if len(secs) < n:  # none given, or one not a positive number
        secs = [1.0] * n
    size = n // k
    out: list[float | None] = []
    for g in range(k):
        found = [_num(v) for v in values[g * size:(g + 1) * size]]
        vs = [v for v in found if v is not None]
        ts = secs[g * size:(g + 1) * size]
        if len(vs) < len(found) or (kind == "latency" and any(v <= 0 for v in vs)):
            out.append(None)
        elif kind == "latency":
            out.append(sum(ts) / sum(t / v for t, v in zip(ts, vs)))
        else:
            out.append(sum(t * v for t, v in zip(ts, vs)) / sum(ts))
    return out


def point_figures(doc: dict, point: dict) -> dict:
    """The quality figures of one ``points[]`` entry of a loadlat JSON document (see the module docstring)."""
    mode = doc.get("mode")
    windows = point.get("windows") if isinstance(point.get("windows"), list) else None
    out = {"pacing": doc.get("pacing") if doc.get("pacing") in ("fixed", "exp") else None,
           "windows": len(windows) if windows is not None else None,
           "bandwidth_spread_pct": None, "latency_spread_pct": None, "cpu_share_min_pct": None,
           "steal_pct": _num(point.get("steal_pct")), "arrival_cv": _num(point.get("arrival_cv")),
           "series": None}
    if windows:
        windows = [w if isinstance(w, dict) else {} for w in windows]
        secs = [w.get("window_s") for w in windows]
        series = {"window_s": [_num(s) for s in secs], "latency_ns": None, "bandwidth_MBps": None}
        if mode != "idle_latency":
            bw = [w.get("bandwidth_MBps") for w in windows]
            out["bandwidth_spread_pct"] = spread_pct(grouped(bw, secs, "bandwidth"))
            series["bandwidth_MBps"] = [_num(v) for v in bw]
        if mode != "peak_injection_bandwidth" and doc.get("latency_cpu") is not None:
            lat = [w.get("latency_ns") for w in windows]
            out["latency_spread_pct"] = spread_pct(grouped(lat, secs, "latency"))
            series["latency_ns"] = [_num(v) for v in lat]
        out["series"] = series
    threads = point.get("threads")
    if not isinstance(threads, list):
        threads = []
    shares = [_num(t.get("cpu_share")) for t in threads if isinstance(t, dict)]
    if not shares:  # loadlat < 0.3: the two summary shares
        shares = [_num(point.get("latency_thread_cpu_share")), _num(point.get("load_threads_cpu_share_min"))]
    known = [s for s in shares if s is not None]
    if known:
        out["cpu_share_min_pct"] = 100.0 * min(known)
    return out


def point_key(test, traffic_code, delay) -> tuple:
    """How rows and sidecar points are matched: (test, traffic -W code or None, inject delay or None).
    Idle latency has one point (no traffic, no delay); peak bandwidth one per traffic; loaded latency one
    per delay."""
    if test == "idle_latency":
        return (test, None, None)
    if test == "peak_injection_bandwidth":
        return (test, traffic_code, None)
    return (test, None, int(delay) if delay is not None else None)


def figures_by_point(doc: dict | None) -> dict:
    """{:func:`point_key`: :func:`point_figures`} of every measured (status ok) point of a sidecar; {} for
    no document."""
    if not isinstance(doc, dict) or doc.get("mode") not in MODES:
        return {}
    out = {}
    for p in doc.get("points") or []:
        if not isinstance(p, dict) or p.get("status") != "ok":
            continue
        out[point_key(doc["mode"], p.get("traffic"), p.get("delay"))] = point_figures(doc, p)
    return out
