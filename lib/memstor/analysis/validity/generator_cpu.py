"""``load_generator_cpu`` for ioarrive's points (issue 38, workstream E; R-bare M-14, S6-bare M-12): the check judged
fio's own CPU (usr + sys) and left ioarrive's rows out, so bare's fio-load-latency row read '2 points' (fio's
latency_target runs) while ioarrive, which issued the 16 offered-rate points, used 69-109 % of one of the 2 usable
CPUs. One row per host x experiment of ioarrive's rows, subject '<experiment> (ioarrive)'.

What passing means, both sides (the bounds are fio's, memstor.analysis.validity.openloop, so the two generators are
judged alike): ioarrive's process (submitter and reaper, ``generator_cpu_pct``, % of one CPU) at its busiest point
took less than CPU_WARN_PCT of the usable CPUs (warn from it, fail from CPU_FAIL_PCT: the I/O completion work then
waits for a CPU, and the point measures the generator on this machine). Its submitter spins before each arrival
by design, so its CPU is what it takes from the machine, not a sign that it fell behind (its lag check says that).
Judged where the findings come from (S12-1cpu 9: the row failed at u98, 92.6 % of the one CPU, while the SLO answer
was read from u10, the one rate that held, at 28.6 %): where the open-loop flags are recorded and some point's loop
held (load_latency.held_mask), only the held points are judged, and the evidence names the busiest point that did not
hold; with no held point, or no flags, every point is.
Low side: a point whose recorded CPU is under MIN_CPU_NS_PER_IO per I/O is not a real measurement (not judged;
none left: ``unchecked``). The column missing or empty, or no core count: ``unchecked`` ("not recorded").
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.load_latency import held_mask
from memstor.analysis.validity.openloop import CPU_FAIL_PCT, CPU_WARN_PCT, MIN_CPU_NS_PER_IO, cores, ns_per_io
from memstor.analysis.validity.rows import FAIL, PASS, WARN, band, has, n, row, unchecked

GENERATOR = "ioarrive"
_SECTIONS = {"fio-load-latency": "open_loop", "mixed-load-map": "open_loop"}
_UNIT = "% of usable CPUs"
_CONSEQUENCE = {
    PASS: "",
    WARN: "ioarrive shared the CPUs with the I/O completion work: its latencies may include CPU waiting",
    FAIL: "ioarrive took most of the usable CPUs: its points' latencies describe the generator on this machine, "
          "not the device",
}


def ioarrive_cpu_rows(fio: pd.DataFrame | None, sysinfo: dict | None) -> list[dict]:
    """load_generator_cpu per host x experiment of ioarrive's rows (``generator`` == ioarrive; ``ok`` where
    recorded): its busiest point's process CPU against the usable CPUs (sysinfo: {host: sysinfo.json dict})."""
    if not has(fio, "host", "experiment", "generator"):
        return []
    assert fio is not None
    rows = fio[fio["generator"].astype(str) == GENERATOR]
    if "ok" in rows:
        rows = rows[rows["ok"].map(lambda v: str(v) == "True" or v is True)]
    out = []
    for (host, exp), g in rows.groupby(["host", "experiment"], sort=True):
        out.append(_row(str(host), str(exp), g, cores((sysinfo or {}).get(host))))
    return out


def points(g: pd.DataFrame) -> pd.DataFrame:
    """Per point (``point``, else per row): busy (ioarrive's process CPU, % of one CPU: its directions share one
    process, so once), iops (achieved, summed over the directions), u (the offered load, % of X_ref, when
    recorded), rw, held (every row of the point held its open loop: load_latency.held_mask; NA where no row
    recorded the flag)."""
    busy = pd.to_numeric(g["generator_cpu_pct"], errors="coerce") if "generator_cpu_pct" in g else \
        pd.Series(float("nan"), index=g.index)
    rate = "achieved_iops" if "achieved_iops" in g else "iops"
    mask = held_mask(g)
    d = g.assign(busy=busy, iops=pd.to_numeric(g[rate], errors="coerce") if rate in g else float("nan"),
                 u=pd.to_numeric(g["utilisation_pct"], errors="coerce") if "utilisation_pct" in g else float("nan"),
                 rw=g["rw"].astype(str) if "rw" in g else "",
                 held=mask.astype(object) if mask is not None else pd.NA)
    key = "point" if "point" in d else None
    if key is None:
        return d[["busy", "iops", "u", "rw", "held"]].reset_index(drop=True)
    return d.groupby(key, sort=False).agg(busy=("busy", "first"), iops=("iops", "sum"), u=("u", "first"),
                                          rw=("rw", "first"), held=("held", _all_held)).reset_index()


def _all_held(v: pd.Series) -> object:
    """True where every row of a point held its loop, NA where none recorded it."""
    return pd.NA if v.isna().all() else bool(v.fillna(False).astype(bool).all())


def _at(p: pd.Series) -> str:
    """', randwrite u98' (or ', point <id>') of one point, '' where neither is recorded."""
    rw = f" {p['rw']}" if p.get("rw") else ""
    if p["u"] == p["u"]:
        return f",{rw} u{float(p['u']):g}"
    return f", point {p['point']}" if "point" in p else ""


def _held_scope(p: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The points judged (the held ones where some held) and a clause naming the busiest point left out."""
    held = p["held"]
    if held.isna().all() or not held.fillna(False).astype(bool).any():
        return p, ""
    keep = p[held.fillna(False).astype(bool)]
    rest = p[~held.fillna(False).astype(bool)]
    if rest.empty:
        return keep, "; every point held its loop"
    top = rest.loc[rest["busy"].idxmax()]
    return keep, (f"; judged at the {len(keep)} points whose loop held by ioarrive's own checks (the ones findings "
                  "are read from): the "
                  f"{len(rest)} that did not reached {n(top['busy'])} % of one CPU{_at(top)}, and no finding is "
                  "read from them")


def _row(host: str, exp: str, g: pd.DataFrame, ncpu: float | None) -> dict:
    """The row of one host x experiment of ioarrive's points."""
    subject, section = f"{exp} ({GENERATOR})", _SECTIONS.get(exp, "open_loop")
    p = points(g)
    p = p[p["busy"].notna()]
    if p.empty or not ncpu:
        what = "ioarrive's CPU use (generator_cpu_pct)" if p.empty else "the machine's core count"
        return unchecked(host, "load_generator_cpu", subject, f"not recorded: {what} is not in the data, so whether "
                         "ioarrive took the CPUs the I/O needed is unknown", section, _UNIT, low=0.0, high=CPU_WARN_PCT,
                         consequence="read the latencies with care: they may include the I/O waiting for a CPU")
    per = [ns_per_io(b, i) for b, i in zip(p["busy"], p["iops"].fillna(0))]
    bad = pd.Series([v is not None and v < MIN_CPU_NS_PER_IO for v in per], index=p.index)
    lost = (f"; {int(bad.sum())} of {len(p)} points recorded less than {n(MIN_CPU_NS_PER_IO)} ns of CPU per I/O: "
            "not a real measurement, not judged") if bad.any() else ""
    judged, scope = _held_scope(p[~bad])
    if judged.empty:
        return unchecked(host, "load_generator_cpu", subject, lost.lstrip("; "), section, _UNIT, low=0.0,
                         high=CPU_WARN_PCT, consequence="whether ioarrive took the CPUs the I/O needed is unknown")
    top = judged.loc[judged["busy"].idxmax()]
    share = float(top["busy"]) / ncpu
    status, limit = band(share, None, CPU_FAIL_PCT, warn_high=CPU_WARN_PCT)
    evidence = (f"ioarrive's busiest point used {n(share)} % of the {int(ncpu)} usable CPUs (its process "
                f"{n(top['busy'])} % of one CPU{_at(top)}); {len(judged)} points, {n(judged['busy'].min())}-"
                f"{n(judged['busy'].max())} % of one CPU{lost}{scope}")
    return row(host, "load_generator_cpu", subject, status, share, limit, _UNIT, evidence, _CONSEQUENCE[status],
               section, low=0.0, high=CPU_WARN_PCT)


__all__ = ["ioarrive_cpu_rows", "points"]
