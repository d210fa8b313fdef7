"""Physical invariants as checks: ``littles_law`` (per host x experiment x workload of the fio summary
points, memstor.analysis.points.fio_summary), ``below_closed_max`` (per host x workload of the open-loop
curve, memstor.analysis.load_latency.curve_table, against the closed-loop maximum of the knee table) and
``physical_ceiling`` (per host: the storage points against the storage interface, the memory bandwidths
against the DRAM peak, memstor.analysis.ceilings.ceilings_table).

What passing means, and the bounds on both sides (named constants below, with their reasons):

- ``littles_law``: N = X·R (X in IOPS, R = fio's mean total latency in s) is at most what could be in flight
  and, in a closed loop, close to it. Value: the point furthest out, X·R as % of the depth it could hold
  (iodepth x numjobs; a synchronous engine in a closed loop holds one per job). High: :data:`LITTLE_WARN_HIGH_PCT`
  warn, :data:`LITTLE_FAIL_HIGH_PCT` fail (more in flight than could be: fio's IOPS or latency is not what the
  device did). Low, closed loops only: below :data:`LITTLE_WARN_LOW_PCT` warn (the generator did not keep the
  queue full: CPU-bound, or an engine that completes in the submitting call); open loops (fio-load-latency:
  offered rates, fio's latency_target search) keep fewer in flight by design — no low side. A mixed job is
  judged on its read + write total (one queue holds both; X·R of the total row is the sum over directions).
  No point with both numbers: ``unchecked``.
- ``below_closed_max``: no offered-rate point delivered more than the closed-loop maximum of its workload (the
  knee table's highest measured IOPS, or the X_max the rates are shares of when measured; the larger), beyond
  its 95 % interval. Value: the highest achieved IOPS as % of that maximum. High: the interval's top (100 %
  without one) warn, that x (1 + :data:`CLOSED_MAX_TOL_PCT` %) fail. Low: 0 — an open loop runs below the
  maximum by design (its rates are shares of it); a rate it missed is ``open_loop_rate``'s. No closed-loop
  maximum or no achieved IOPS: ``unchecked``.
- ``physical_ceiling``: no throughput above the physical ceiling (value: the highest as % of the ceiling).
  High: 100 % warn, :data:`CEILING_FAIL_PCT` fail. Low: 0 — a workload may use any part of its link (4K random
  I/O uses little of it); a throughput of zero or less is not a measurement and is left out. No ceiling known
  (a virtual disk, no SMBIOS): ``unchecked``, with the ceiling table's reason.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.load_latency import qd_counts, x_max_source_text
from memstor.analysis.validity.rows import (
    FAIL,
    PASS,
    STATUSES,
    UNCHECKED,
    WARN,
    band,
    has,
    n,
    num,
    row,
    unchecked,
)
from memstor.core.schema import SYNC_ENGINES

#: X·R above the depth by more than this (%) is outside the Little's-law band of the littles_law table
#: (memstor.analysis.storage.LITTLE_TOL_PCT, +-5 %): a warning ...
LITTLE_WARN_HIGH_PCT = 105.0
#: ... and above this (%) impossible: twice that band covers a finite run's edges (I/Os in flight at the
#: start and end of the window) and the mean of X times the mean of R over repetitions.
LITTLE_FAIL_HIGH_PCT = 110.0
#: A closed loop holding less than half its depth (%) on average did not keep its queue full.
LITTLE_WARN_LOW_PCT = 50.0
#: Experiments whose points are not closed loops at their iodepth x numjobs (upper side only).
OPEN_EXPERIMENTS = ("fio-load-latency", "mixed-load-map")
#: An open-loop point above the closed-loop maximum's interval by more than this (%) fails: two separate runs
#: of one device differ by a few % run to run; the open loop's own rate band is +-5 %.
CLOSED_MAX_TOL_PCT = 5.0
#: Throughput above this share of its physical ceiling (%) fails; between 100 % and it, a warning: the
#: storage ceiling assumes a 256 B PCIe max payload (a 512 B one raises it by 4.5 %) and the DRAM peak uses
#: the DIMMs' nominal MT/s.
CEILING_FAIL_PCT = 105.0

_SECTIONS = {"fio-load-latency": "open_loop", "mixed-load-map": "open_loop", "fio-queue-depth": "queue_depth", "fio-steady-state": "steady_state",
             "fio-write-saturation": "write_saturation"}


def little_subject(experiment: str, rw: str) -> str:
    """The subject of a littles_law row ('fio-load-latency randread'): the gate looks rows up by it."""
    return f"{experiment} {rw}"


# ------------------------------------------------------------------------------------ Little's law


def in_device_us(points: pd.DataFrame, fio: pd.DataFrame | None) -> pd.Series:
    """R of each point for Little's law against its depth (µs): the mean latency, except for a point ioarrive
    generated, whose ``lat_mean_us`` is the response from the intended arrival (the time waiting in the generator
    included, which no cap bounds): its mean service time (submission to completion, the time an I/O holds a
    slot of the cap), the mean of its runs' ``service_mean_us`` in ``fio`` (the tidy rows)."""
    r = pd.to_numeric(points["lat_mean_us"], errors="coerce")
    if fio is None or not {"generator", "service_mean_us", "config", "direction"} <= set(fio.columns) \
            or "config" not in points:
        return r
    gen = fio[(fio["generator"].astype(str) == "ioarrive") & fio["service_mean_us"].notna()]
    if gen.empty:
        return r
    gen = gen.assign(_s=pd.to_numeric(gen["service_mean_us"], errors="coerce"),
                     _x=pd.to_numeric(gen["iops"], errors="coerce"))
    svc = gen.groupby(["host", "experiment", "config", "direction"])["_s"].mean().to_dict()
    for (h, e, c), g in gen.groupby(["host", "experiment", "config"]):  # a mixed job's total: IOPS-weighted
        if g["_x"].sum() > 0:
            svc[(h, e, c, "total")] = float((g["_x"] * g["_s"]).sum() / g["_x"].sum())
    keys = list(zip(points["host"], points["experiment"], points["config"], points["direction"], strict=True))
    return pd.Series([svc.get(k, v) for k, v in zip(keys, r, strict=True)], index=points.index, dtype=float)


def judged_points(points: pd.DataFrame, fio: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per host x experiment x configuration: the ``total`` row of a mixed job, else its directions
    summed (X = sum of X, X·R = sum of X·R; R: :func:`in_device_us`); columns host, experiment, rw, config,
    iodepth, numjobs, ioengine, iops, in_flight (X·R, I/Os)."""
    d = points.assign(_x=pd.to_numeric(points["iops"], errors="coerce"), _r=in_device_us(points, fio))
    d = d.assign(_svc=d["_r"].ne(pd.to_numeric(points["lat_mean_us"], errors="coerce")) & d["_r"].notna())
    d = d.assign(_n=d["_x"] * d["_r"] * 1e-6)
    keys = ["host", "experiment", "config"] if "config" in d else ["host", "experiment", "rw", "iodepth", "numjobs"]
    out = []
    for _, g in d.groupby(keys, sort=True, dropna=False):
        total = g[g["direction"] == "total"] if "direction" in g else g.iloc[0:0]
        use = total if len(total) else g
        first = use.iloc[0]
        out.append({"host": first["host"], "experiment": first["experiment"], "rw": first["rw"],
                    "config": first.get("config", ""), "iodepth": num(first["iodepth"]),
                    "numjobs": num(first["numjobs"]), "ioengine": str(first.get("ioengine") or ""),
                    "iops": use["_x"].sum(min_count=len(use)), "in_flight": use["_n"].sum(min_count=len(use)),
                    "service": bool(use["_svc"].any())})
    return pd.DataFrame(out)


def capacity(p: pd.Series, open_loop: bool) -> float | None:
    """The I/Os a point could hold in flight: iodepth x numjobs; numjobs alone for a synchronous engine in a
    closed loop (one I/O per job; an open loop's offload threads hold up to iodepth per job)."""
    depth, jobs = num(p["iodepth"]), num(p["numjobs"])
    if depth is None or jobs is None or depth <= 0 or jobs <= 0:
        return None
    return jobs if p["ioengine"] in SYNC_ENGINES and not open_loop else depth * jobs


def _closeness(pct: float, low: float | None) -> float:
    """How near a point's X·R (% of its depth) is to the band's edge: pct / high, or low / pct when larger."""
    return max(pct / LITTLE_WARN_HIGH_PCT, (low / pct) if low and pct > 0 else 0.0)


def little_rows(points: pd.DataFrame | None, fio: pd.DataFrame | None = None) -> list[dict]:
    """littles_law per host x experiment x workload (rw) of the fio summary points (fio: the tidy rows, for
    ioarrive's service times: :func:`in_device_us`)."""
    if not has(points, "host", "experiment", "rw", "iops", "lat_mean_us", "iodepth", "numjobs"):
        return []
    pts = judged_points(points, fio)
    return [_little(host, exp, rw, g) for (host, exp, rw), g in pts.groupby(["host", "experiment", "rw"], sort=True)]


def _little(host, exp: str, rw: str, g: pd.DataFrame) -> dict:
    """One littles_law row: the point that binds (worst status, else the one nearest its bound)."""
    is_open = exp in OPEN_EXPERIMENTS
    low = None if is_open else LITTLE_WARN_LOW_PCT
    section, subject = _SECTIONS.get(exp, "storage_points"), little_subject(exp, rw)
    cap = g.apply(lambda p: capacity(p, is_open), axis=1)
    pct = 100.0 * g["in_flight"] / pd.to_numeric(cap, errors="coerce")
    known = pct.dropna()
    if known.empty:
        return unchecked(host, "littles_law", subject, f"none of the {len(g)} points has IOPS, a mean latency and "
                         "a queue depth", section, "% of depth", low=low, high=LITTLE_WARN_HIGH_PCT)
    judged = [(band(v, None, LITTLE_FAIL_HIGH_PCT, warn_low=low, warn_high=LITTLE_WARN_HIGH_PCT), v, i)
              for i, v in known.items()]
    (status, limit), value, i = max(judged, key=lambda j: (STATUSES.index(j[0][0]), _closeness(j[1], low)))
    p, beyond = g.loc[i], [j for j in judged if j[0][0] != PASS]
    sync = p["ioengine"] in SYNC_ENGINES and not is_open
    qd = f"QD{int(p['iodepth'])}x{int(p['numjobs'])}" + (f", {p['ioengine']}: one I/O per job" if sync else "")
    where = f"outside {n(low)}-{n(LITTLE_WARN_HIGH_PCT)} %" if low else f"above {n(LITTLE_WARN_HIGH_PCT)} %"
    evidence = (f"{n(p['iops'])} IOPS x {n(1e6 * p['in_flight'] / p['iops'])} µs{' (mean service time)' if p['service'] else ''} = {n(p['in_flight'])} in flight "
                f"where {'at most ' if value > 100 else ''}{n(cap[i])} could be ({qd}, {n(value)} %) at {p['config']}"
                + (f"; {len(beyond)} of {len(known)} points {where} of their depth" if beyond else
                   f"; {'all ' if len(known) > 1 else ''}{len(known)} point{'s' if len(known) > 1 else ''} within {n(low or 0)}-{n(LITTLE_WARN_HIGH_PCT)} % of their depth"))
    if len(known) < len(g):
        evidence += f"; {len(g) - len(known)} without IOPS or latency"
    consequence = ""
    if status == FAIL:
        consequence = ("more I/Os in flight than the jobs could hold: fio's IOPS or latency of these points is not "
                       "what the device did" + (", so the open-loop models and the SLO answer for this workload "
                                                "are not shown" if is_open else ""))
    elif status == WARN and value < 100.0:
        consequence = ("the queue was not kept full: these points measure how fast fio submitted (CPU-bound, or "
                       "an engine that completes in the submitting call), not the device at their depth")
    elif status == WARN:
        consequence = "X·R is above the depth beyond the Little's-law band: read these points with care"
    elif len(known) < len(g):
        status, consequence = UNCHECKED, "the points without IOPS or latency are not shown to hold"
    return row(host, "littles_law", subject, status, value, limit, "% of depth", evidence, consequence, section,
               low=low, high=LITTLE_WARN_HIGH_PCT)


# ------------------------------------------------------------------------------------ closed-loop maximum


def closed_max(host, rw: str, load_rows: pd.DataFrame, knees: pd.DataFrame | None,
               points: pd.DataFrame | None) -> tuple[float, float, str] | None:
    """(maximum IOPS, its 95 % interval's top, where from) of the closed loop of host x rw: the larger of the
    knee table's highest measured IOPS (4K; with the matching point's interval from points) and the measured
    X_max the open loop's rates are shares of; None when neither is known."""
    cands = []
    if has(knees, "host", "rw", "X_max_meas_iops") and _open_bs(points, host, rw) in (None, 4096):
        k = knees[(knees["host"] == host) & (knees["rw"] == rw)]
        v = num(pd.to_numeric(k["X_max_meas_iops"], errors="coerce").max()) if len(k) else None
        if v is not None and v > 0:
            cands.append((v, max(v, _interval_top(points, host, rw, v) or v), "the queue-depth sweep's highest"))
    if {"x_max_iops", "x_max_source"} <= set(load_rows.columns):
        src = load_rows["x_max_source"].astype(str)
        v = num(pd.to_numeric(load_rows.loc[~src.str.startswith("profile"), "x_max_iops"], errors="coerce").max())
        if v is not None and v > 0:
            said = x_max_source_text(src.iloc[0], qd_counts(points, host), rw)
            cands.append((v, v, f"the X_max the rates are shares of ({said})"))
    return max(cands, key=lambda c: c[0]) if cands else None


def _open_bs(points: pd.DataFrame | None, host, rw: str) -> float | None:
    """The block size of the open loop of host x rw (None when points do not say, or say several)."""
    if not has(points, "host", "experiment", "rw", "bs_bytes"):
        return None
    sel = points[(points["host"] == host) & (points["experiment"] == "fio-load-latency") & (points["rw"] == rw)]
    bs = pd.to_numeric(sel["bs_bytes"], errors="coerce").dropna().unique()
    return float(bs[0]) if len(bs) == 1 else None


def _interval_top(points: pd.DataFrame | None, host, rw: str, iops: float) -> float | None:
    """The top of the 95 % interval of the closed-loop point of host x rw whose IOPS is `iops`."""
    if not has(points, "host", "rw", "iops", "iops_ci_high"):
        return None
    sel = points[(points["host"] == host) & (points["rw"] == rw)
                 & ((pd.to_numeric(points["iops"], errors="coerce") - iops).abs() <= 1e-6 * iops)]
    return num(pd.to_numeric(sel["iops_ci_high"], errors="coerce").max()) if len(sel) else None


def below_closed_rows(load: pd.DataFrame | None, knees: pd.DataFrame | None,
                      points: pd.DataFrame | None) -> list[dict]:
    """below_closed_max per host x workload of the open-loop curve."""
    if not has(load, "host", "rw", "achieved_iops"):
        return []
    return [_below(host, rw, g, closed_max(host, rw, g, knees, points))
            for (host, rw), g in load.groupby(["host", "rw"], sort=True)]


def _below(host, rw: str, g: pd.DataFrame, cmax: tuple[float, float, str] | None) -> dict:
    """One below_closed_max row: the highest achieved IOPS against the closed-loop maximum's interval."""
    ach = pd.to_numeric(g["achieved_iops"], errors="coerce")
    ach = ach[ach > 0]
    unit, section = "% of closed-loop max", "open_loop"
    if cmax is None or ach.empty:
        why = "no closed-loop maximum for this workload (no queue-depth sweep, no measured X_max)" if cmax is None \
            else "no offered-rate point has an achieved IOPS"
        return unchecked(host, "below_closed_max", rw, why, section, unit, low=0.0, high=100.0)
    top, (x_max, ci_top, src) = float(ach.max()), cmax
    value, high = 100.0 * top / x_max, 100.0 * ci_top / x_max
    status, limit = band(value, 0.0, high * (1 + CLOSED_MAX_TOL_PCT / 100.0), warn_high=high)
    at = g.loc[ach.idxmax()]
    where = f" at {n(at['utilisation_pct'])} % of X_max" if "utilisation_pct" in g else ""
    evidence = (f"highest achieved {n(top)} IOPS{where} is {n(value)} % of the closed-loop maximum {n(x_max)} IOPS "
                f"({src}" + (f", interval up to {n(ci_top)}" if ci_top > x_max else ", no interval") + ")")
    consequence = {PASS: "", WARN: "the open loop delivered more than the closed loop's maximum, within the "
                   "run-to-run tolerance: read the top of both curves with care",
                   FAIL: "an open loop cannot sustain more than the device's closed-loop maximum: these IOPS are "
                         "not the device's (fio did not offer or count the rates as stated); the open-loop models "
                         "and the SLO answer for this workload are not shown"}[status]
    return row(host, "below_closed_max", rw, status, value, limit, unit, evidence, consequence, section, low=0.0,
               high=high)


# ------------------------------------------------------------------------------------ physical ceiling


def ceiling_rows(points: pd.DataFrame | None, mem: pd.DataFrame | None, headline: pd.DataFrame | None,
                 ceilings: pd.DataFrame | None) -> list[dict]:
    """physical_ceiling per host: the storage points' MB/s (per direction) against the storage interface,
    the memory curves' and the headline's bandwidth against the DRAM peak. No ceilings table: no rows."""
    if not has(ceilings, "host", "what", "ceiling"):
        return []
    rows = []
    for host in sorted({*_hosts(points), *_hosts(mem), *_hosts(headline)}):
        storage = _figures(points, host, "bw_MBps", "fio points' MB/s (per direction)",
                           lambda d: d[d["direction"] != "total"] if "direction" in d else d)
        memory = [*_figures(mem, host, "b_max_MBps", "loaded-latency curve maximum"),
                  *_figures(headline, host, "value", "peak memory bandwidth (headline)",
                            lambda d: d[d["key"] == "peak_bw_MBps"] if "key" in d else d.iloc[0:0])]
        for what, section, figs in (("storage interface", "storage_points", storage),
                                    ("DRAM peak", "memory", memory)):
            if figs:
                rows.append(_ceiling(host, what, section, figs, ceilings))
    return rows


def _hosts(df: pd.DataFrame | None) -> set:
    return set(df["host"].astype(str)) if has(df, "host") else set()


def _figures(df: pd.DataFrame | None, host, col: str, what: str, pick=lambda d: d) -> list[tuple[str, float]]:
    """[(what, the highest positive `col` of host)] or []."""
    if not has(df, "host", col):
        return []
    sel = pick(df[df["host"].astype(str) == host])
    v = pd.to_numeric(sel[col], errors="coerce")
    v = v[v > 0]
    return [(what, float(v.max()))] if len(v) else []


def _ceiling(host, what: str, section: str, figs: list[tuple[str, float]], ceilings: pd.DataFrame) -> dict:
    """One physical_ceiling row: the highest figure as % of the host's `what` ceiling."""
    c = ceilings[(ceilings["host"].astype(str) == host) & (ceilings["what"] == what)]
    limit_mbps = num(c["ceiling"].iloc[0]) if len(c) else None
    said = "; ".join(f"{w} {n(v)} MB/s" for w, v in figs)
    if limit_mbps is None or limit_mbps <= 0:
        why = str(c["reason"].iloc[0]) if len(c) and "reason" in c and str(c["reason"].iloc[0]) else "not recorded"
        return unchecked(host, "physical_ceiling", what, f"no {what} ceiling known ({why}) to hold {said} against",
                         section, "% of ceiling", low=0.0, high=100.0,
                         consequence="the throughputs are not shown to be physically possible over this link")
    top_what, top = max(figs, key=lambda f: f[1])
    value = 100.0 * top / limit_mbps
    status, limit = band(value, 0.0, CEILING_FAIL_PCT, warn_high=100.0)
    evidence = f"{said}; the {what} ceiling {n(limit_mbps)} MB/s: the highest is {n(value)} % of it"
    consequence = {PASS: "", WARN: f"{top_what} is at the {what} ceiling within its assumptions (max payload, "
                   "nominal MT/s): read it as the link's, not the device's",
                   FAIL: f"{top_what} is above the physical {what} ceiling: it is not the "
                         + ("drive (page cache, compression or another device)" if what == "storage interface"
                            else "memory (caches, or a ceiling from the wrong DIMM record)")}[status]
    return row(host, "physical_ceiling", what, status, value, limit, "% of ceiling", evidence, consequence, section,
               low=0.0, high=100.0)
