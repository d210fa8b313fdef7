"""Open-loop and load-generator checks: ``open_loop_held``, ``open_loop_rate`` (per host x workload of the
open-loop curve, memstor.analysis.load_latency.curve_table) and ``load_generator_cpu`` (per host x fio
experiment, from fio's own ``cpu_usr_pct`` + ``cpu_sys_pct``).

What passing means, and the bounds on both sides (the named constants below give the reasons):

- ``open_loop_held``: every offered-rate point kept open-loop arrivals (value: the share of points shown open,
  %; passing band 100-100). A point counts as open only when its ``open_loop`` flag says so AND its achieved
  rate is within +-5 % of the offered one (the flag's own definition, DESIGN.md: a flag that says open beside
  an overshoot is not believed). Below :data:`OPEN_SHARE_FAIL_PCT` fail, below 100 % warn; above 100 % cannot
  happen (a share). Every flag unknown (fio without iolog times): ``unchecked``.
- ``open_loop_rate``: every offered-rate point achieved within +-5 % of its offered rate (value: the point's
  achieved / offered furthest from 100 %, %; band :data:`RATE_LOW_PCT`-:data:`RATE_HIGH_PCT`). Above: fail —
  fio delivered more than was offered, so the arrivals were not the Poisson process at the stated rate (the
  generator did not offer that rate; fio-3.42's offload mode delivered 107-175 %). Below at a point offered
  under :data:`CEILING_UTIL_PCT` of X_max: fail (far from the ceiling the device keeps up: the generator, or
  a wrong X_max, missed the rate); below only at the heaviest points: warn (a backlog at the ceiling). No
  achieved / offered at any point: ``unchecked``; at some: warn.
- ``load_generator_cpu``: fio's own CPU use left the cores free (value: the binding side's — the busiest
  point's usr + sys in % of the usable CPUs, band up to :data:`CPU_WARN_PCT` (fail from :data:`CPU_FAIL_PCT`),
  or the busiest thread in % of one CPU, fail from :data:`THREAD_FAIL_PCT` — whichever is worse, else
  nearer its bound). Low side: fio spends CPU on every I/O (a system call or a ring entry, its own
  accounting); a point whose recorded usr + sys is below :data:`MIN_CPU_NS_PER_IO` of CPU per I/O is not a
  real measurement of fio's CPU use (CPU accounted elsewhere — io_uring's sqthread_poll — or not accounted):
  its CPU use is unknown, so such points are not judged, and an experiment that would pass without them is
  ``unchecked``. Usage or core count not recorded: ``unchecked``.
"""

from __future__ import annotations

import pandas as pd

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
from memstor.core.schema import missing, truthy

#: Below this share of open-loop points (%) the curve is mostly a closed loop: the models fail. Between it
#: and 100 % a few (the heaviest) points were gated: a warning, the models lean on points that are not M/·/·.
OPEN_SHARE_FAIL_PCT = 80.0
#: achieved / offered (%) below which a point did not receive its rate (the experiment's own overload flag,
#: memstor.experiments.fio_load_latency.OVERLOAD_RATIO) ...
RATE_LOW_PCT = 95.0
#: ... and above which fio delivered more than was offered: arrivals faster than the stated Poisson rate (a
#: generator catching up in bursts), so the point is not the open loop its offered rate names. Symmetric with
#: the low side: the +-5 % of DESIGN.md's open-loop rule.
RATE_HIGH_PCT = 105.0
#: Undershoot at a point offered at less than this share of X_max (%) is not the device's ceiling (it keeps up
#: with 80 % of its closed-loop maximum by definition of X_max): the rate itself was not generated.
CEILING_UTIL_PCT = 80.0
#: fio's CPU use, % of all cores, from which it competes with the kernel's completion work for the same
#: cores (its latencies then include CPU queueing): a warning.
CPU_WARN_PCT = 70.0
#: ... and from which the cores are saturated: the generator, not the device, sets the pace.
CPU_FAIL_PCT = 90.0
#: One fio thread busier than this (% of one CPU) is itself the bottleneck of its job.
THREAD_FAIL_PCT = 90.0
#: The least CPU time one I/O costs fio (ns): a submission and a completion (a system call, or io_uring ring
#: entries) plus fio's own bookkeeping and clock reads. The fastest published submission paths (polled
#: io_uring, registered buffers) spend about 150 ns per I/O; 50 ns (20 M IOPS per CPU) is below any real one.
MIN_CPU_NS_PER_IO = 50.0

_SECTION = "open_loop"
_GATED = ("the open-loop models (M/M/1, M/D/1, M/G/1, M/G/c) and the open-against-closed curve across this "
          "workload's rates are not shown; its SLO answer, and any comparison with the closed loop, come from the held "
          "points alone: at the others the arrivals "
          "were not open (fio: gated by completions; ioarrive: its own checks failed)")
_OVERSHOT = ("the open-loop models and the SLO answer for this workload are not shown: {gen} did not offer the "
             "rates they are stated at")
_MISSED = ("the open-loop models and the SLO answer for this workload are not shown: the rates were not "
           "generated even far below the device's ceiling")
_HELD_BAND = {"low": 100.0, "high": 100.0}
_RATE_BAND = {"low": RATE_LOW_PCT, "high": RATE_HIGH_PCT}


def open_loop_rows(load: pd.DataFrame | None) -> list[dict]:
    """open_loop_held and open_loop_rate, one row each per host x workload of the open-loop curve."""
    if not has(load, "host", "rw", "open_loop"):
        return []
    rows = []
    for (host, rw), g in load.groupby(["host", "rw"], sort=True):
        pct = achieved_pct(g)
        rows.append(_held(host, rw, g, pct))
        if pct is not None:
            rows.append(_rate(host, rw, g, pct))
    return rows


def achieved_pct(g: pd.DataFrame) -> pd.Series | None:
    """achieved / offered (%) per row: ``achieved_pct``, or 100 x achieved_iops / offered_iops where it is
    empty; None when the curve records neither."""
    pct = pd.to_numeric(g["achieved_pct"], errors="coerce") if "achieved_pct" in g else None
    if {"achieved_iops", "offered_iops"} <= set(g.columns):
        off = pd.to_numeric(g["offered_iops"], errors="coerce")
        own = 100.0 * pd.to_numeric(g["achieved_iops"], errors="coerce") / off.where(off > 0)
        pct = own if pct is None else pct.fillna(own)
    return pct


def _util(g: pd.DataFrame) -> str:
    """'30-98 %' utilisation range of rows g ('' without the column)."""
    if "utilisation_pct" not in g:
        return ""
    u = pd.to_numeric(g["utilisation_pct"], errors="coerce").dropna()
    if u.empty:
        return ""
    return f"{n(u.min())}-{n(u.max())} % of X_max" if len(u) > 1 else f"{n(u.iloc[0])} % of X_max"


def _not_open_why(gated: pd.DataFrame) -> str:
    """Why points within the rate band were not open, in their generator's terms: ioarrive's failed self-checks
    (counted by name), fio's gating (its inline submission waits for completions before each rate sleep)."""
    gens = set(gated["generator"].dropna().astype(str)) if "generator" in gated else {"fio"}
    if gens != {"ioarrive"}:
        return "gated (arrivals waited for completions)"
    names = [c.split("/")[0] for v in gated.get("generator_checks", pd.Series(dtype=object)).dropna().astype(str)
             for c in v.split(";") if c and c != "ok"]
    counts = pd.Series(names, dtype=object).value_counts()
    said = ", ".join(f"{name} at {k}" for name, k in counts.items())
    return f"ioarrive's own checks failed ({said})" if said else "ioarrive's own checks failed"


def _woke(gated: pd.DataFrame) -> str:
    """'; ... sleeps woke X-Y µs late (p99)' over the points whose lag check failed: how late the machine's
    scheduler woke the submitter, one cause of lag (the other: its submit calls when arrivals come faster than
    one call takes); then how often the machine itself paused just before those points with no I/O running
    (ioarrive's pause probe): a pause longer than the lag bound fails the loop whatever the generator does.
    '' when no such point recorded either."""
    if "generator_checks" not in gated:
        return ""
    lagged = gated[gated["generator_checks"].map(lambda v: not missing(v) and "lag" in str(v).split(";"))]
    parts = []
    woke = pd.to_numeric(lagged.get("wake_delay_p99_us", pd.Series(dtype=float)), errors="coerce").dropna()
    if not woke.empty:
        parts.append(f"the submitter's sleeps woke {n(woke.min())}-{n(woke.max())} µs late (p99)")
    rate = pd.to_numeric(lagged.get("pause_per_cpu_s", pd.Series(dtype=float)), errors="coerce").dropna()
    longest = pd.to_numeric(lagged.get("pause_max_us", pd.Series(dtype=float)), errors="coerce").dropna()
    if not rate.empty and not longest.empty:
        parts.append(f"just before them, with no I/O running, the machine itself paused {n(rate.min())}-"
                     f"{n(rate.max())} times per CPU-second (gaps >= 50 µs), the longest {n(longest.max())} µs")
    blocked = _blocked(lagged)
    if not parts and not blocked:
        return ""
    # twelfth read S15-loop 2: 'the late points' here are those among the points named before, not §4.4's every
    # late rate: which they are is said (a rate that missed its offered rate is counted apart, as 'not open')
    at = _util(lagged)
    head = f"; at the {len(lagged)} late point{'s' if len(lagged) != 1 else ''} among them" + (f" ({at})" if at else "")
    return head + ": " + "; ".join(parts + ([blocked.removeprefix("; ")] if blocked else []))


def _blocked(lagged: pd.DataFrame) -> str:
    """'; their submit calls blocked X-Y % of the run ...' over the late points: the time ioarrive's submit calls
    of >= 100 µs took (waiting for a request of the disk's full request queue, or the CPU taken), the most I/Os
    in flight and the queue's size; '' when the points did not record it (ioarrive before its submit_call)."""
    secs = _col(lagged, "runtime_s")
    share = (100.0 * _col(lagged, "submit_blocked_s") / secs.where(secs > 0)).dropna()
    if share.empty:
        return ""
    peak, queue = _col(lagged, "peak_outstanding").dropna(), _col(lagged, "queue_requests").dropna()
    out = f"; their submit calls blocked {n(share.min())}-{n(share.max())} % of the run (calls >= 100 µs)"
    if not peak.empty:
        out += f", up to {n(peak.max())} I/Os in flight" + (
            f" against the disk's request queue of {n(queue.max())}" if not queue.empty else "")
    return out


def _col(g: pd.DataFrame, name: str) -> pd.Series:
    """Column `name` of g as numbers (NaN where missing or not a number; all NaN when g has no such column)."""
    return pd.to_numeric(g[name], errors="coerce") if name in g else pd.Series(float("nan"), index=g.index)


def _held(host, rw, g: pd.DataFrame, pct: pd.Series | None) -> dict:
    """open_loop_held: the share of points shown open (flag true and achieved within the +-5 % band)."""
    known = g[g["open_loop"].map(lambda v: not missing(v))]
    total = len(g)
    if known.empty:
        return unchecked(host, "open_loop_held", rw, f"whether the {total} offered-rate points kept open-loop "
                         "arrivals was not recorded (no arrival times: fio < 3.31 writes no iolog times)", _SECTION,
                         "% of points", consequence="read the open-loop models and the SLO answer with care: the "
                         "open loop is not shown to hold", low=100.0, high=100.0)
    flag = known["open_loop"].map(truthy)
    off = pct.reindex(known.index) if pct is not None else pd.Series(float("nan"), index=known.index)
    outside = flag & ((off < RATE_LOW_PCT) | (off > RATE_HIGH_PCT))
    is_open = flag & ~outside
    share = 100.0 * is_open.sum() / total
    in_band = (off >= RATE_LOW_PCT) & (off <= RATE_HIGH_PCT)
    gated, missed = known[~flag & ~(off.notna() & ~in_band)], known[~flag & off.notna() & ~in_band]
    evidence = (f"{int(is_open.sum())} of {total} offered-rate points kept open-loop arrivals "
                f"(share {n(share)} %)")
    if len(missed):  # S21-loop 4: their own checks too, so that every late rate is counted
        also = _not_open_why(missed) if "generator_checks" in missed else ""
        also = f"; {also.replace('failed (', 'failed there too (')}" if "failed (" in also else ""
        evidence += (f"; not open: {len(missed)} points at {_util(missed)} achieved {n(off[missed.index].min())}-"
                     f"{n(off[missed.index].max())} % of the offered rate (outside +-5 %{also})")
    if len(gated):
        evidence += (f"; at the {len(gated)} points within +-5 % of their rate ({_util(gated)}), {_not_open_why(gated)}"
                     f"{_woke(gated)}" if len(missed) else
                     f"; {_not_open_why(gated)}: {len(gated)} points at {_util(gated)}{_woke(gated)}")
    if outside.any():
        evidence += (f"; {int(outside.sum())} flagged open but achieved {n(off[outside].min())}-"
                     f"{n(off[outside].max())} % of the offered rate (outside +-5 %: not open)")
    if total > len(known):
        evidence += f"; {total - len(known)} not recorded"
    status, limit = band(share, OPEN_SHARE_FAIL_PCT, None, warn_low=100.0)
    consequence = {PASS: "", FAIL: _GATED,
                   WARN: "the model errors at the points that did not hold measure the generator (fio's gating, "
                         "ioarrive's lateness) as well as queueing"}[status]
    return row(host, "open_loop_held", rw, status, share, limit, "% of points", evidence, consequence, _SECTION,
               **_HELD_BAND)


def _gen(rows: pd.DataFrame) -> str:
    """The generator of rows in words ('ioarrive', 'fio', 'ioarrive and fio'); 'fio' for tables without the column
    (tenth read S13-1cpu 6: ioarrive's overshoot was said 'fio delivered more than offered')."""
    gens = rows["generator"].dropna().astype(str).unique().tolist() if "generator" in rows else []
    return " and ".join(gens) or "fio"


def _rate(host, rw, g: pd.DataFrame, pct: pd.Series) -> dict:
    """open_loop_rate: the point furthest outside (or nearest to leaving) the +-5 % band decides."""
    known = pct.dropna()
    if known.empty:
        return unchecked(host, "open_loop_rate", rw, f"none of the {len(g)} offered-rate points has an achieved "
                         "and an offered rate", _SECTION, "% of offered", low=RATE_LOW_PCT, high=RATE_HIGH_PCT)
    util = pd.to_numeric(g["utilisation_pct"], errors="coerce") if "utilisation_pct" in g else \
        pd.Series(float("nan"), index=g.index)
    over, under = g[pct > RATE_HIGH_PCT], g[pct < RATE_LOW_PCT]
    light = under[util.reindex(under.index) < CEILING_UTIL_PCT]
    worst = float(known.loc[(known - 100.0).abs().idxmax()])
    limit: float | None
    evidence = f"achieved / offered {n(known.min())}-{n(known.max())} % over {len(known)} offered-rate points"
    if len(over):
        evidence += f"; {len(over)} above {n(RATE_HIGH_PCT)} % (at {_util(over)}): {_gen(over)} delivered more than offered"
    if len(under):
        evidence += f"; {len(under)} below {n(RATE_LOW_PCT)} % (at {_util(under)})"
    if len(known) < len(g):
        evidence += f"; {len(g) - len(known)} not recorded"
    if len(over) or len(light):
        worst = float(known[over.index].max()) if len(over) else float(known[light.index].min())
        status, limit = FAIL, (RATE_HIGH_PCT if len(over) else RATE_LOW_PCT)
        consequence = _OVERSHOT.format(gen=_gen(over)) if len(over) else _MISSED
    elif len(under):
        status, limit = WARN, RATE_LOW_PCT
        worst = float(known[under.index].min())
        consequence = (f"the points that missed their rate were offered near X_max (at {_util(under)}, from "
                       f"{CEILING_UTIL_PCT:g} %): their latency is a backlog, not an open-queue latency")
    else:
        status, limit = band(worst, RATE_LOW_PCT, RATE_HIGH_PCT)
        consequence = ""
        if len(known) < len(g):
            status, consequence = WARN, "the points without an achieved rate are not shown to have received it"
    return row(host, "open_loop_rate", rw, status, worst, limit, "% of offered", evidence, consequence, _SECTION,
               **_RATE_BAND)


# ------------------------------------------------------------------------------------ load generator CPU


def cores(sysinfo: dict | None) -> float | None:
    """CPUs memstor could use on a host (sysinfo.json): ``shape.usable_cpus`` (the affinity mask within the
    cgroup CPU quota, memstor.measure.shape) when recorded, else the logical CPUs of its ``machine`` or ``cpu``
    block (data recorded before the shape was)."""
    shape = (sysinfo or {}).get("shape")
    usable = num(shape.get("usable_cpus")) if isinstance(shape, dict) else None
    if usable:
        return usable
    for block in ("machine", "cpu"):
        part = (sysinfo or {}).get(block) or {}
        for key in ("logical_cpus", "online_cpus", "cpus"):
            v = num(part.get(key)) if isinstance(part, dict) else None
            if v:
                return v
    return None


def cpu_rows(fio: pd.DataFrame | None, sysinfo: dict | None) -> list[dict]:
    """load_generator_cpu per host x fio experiment: fio's busiest point's usr + sys CPU against the cores
    (sysinfo: {host: its sysinfo.json dict}, :func:`cores`) and its busiest thread against one CPU.

    Missing numbers (no ``cpu_usr_pct``/``cpu_sys_pct`` columns, or empty cells, or no core count) give an
    ``unchecked`` row whose evidence says "not recorded": the reader cannot tell whether the generator was
    CPU-bound. ioarrive's rows are left out (an experiment of them alone has no row): its submitter spins before
    each arrival by design, so its CPU use is reported (``generator_cpu_pct``), and whether it fell behind is
    its lag check's (``open_loop_held``), not a share of the cores."""
    if not has(fio, "host", "experiment"):
        return []
    ok = fio[fio["ok"].map(truthy)] if "ok" in fio else fio
    if "generator" in ok:
        ok = ok[ok["generator"].astype(str) != "ioarrive"]
    rows = []
    for (host, exp), g in ok.groupby(["host", "experiment"], sort=True):
        ncpu = cores((sysinfo or {}).get(host))
        section = {"fio-load-latency": _SECTION, "fio-steady-state": "steady_state",
                   "fio-write-saturation": "write_saturation"}.get(exp, "storage_points")
        usage = _usage(g)
        if usage is None or not ncpu:
            what = "fio's CPU use (cpu_usr_pct, cpu_sys_pct)" if usage is None else "the machine's core count"
            rows.append(unchecked(host, "load_generator_cpu", exp, f"not recorded: {what} is not in the data, so "
                                  "whether fio was CPU-bound is unknown", section, "% of usable CPUs",
                                  consequence="read the latencies with care: they may include fio waiting for a CPU",
                                  low=0.0, high=CPU_WARN_PCT))
            continue
        rows.append(_cpu_row(host, exp, usage, ncpu, section))
    return rows


def _usage(g: pd.DataFrame) -> pd.DataFrame | None:
    """Per point x repetition: busy (% of one CPU, usr + sys summed over its jobs), the busiest thread (% of
    one CPU) and iops (all directions, NaN when not recorded); None when fio's CPU use is not recorded."""
    if "cpu_usr_pct" not in g or "cpu_sys_pct" not in g:
        return None
    d = g.assign(_busy=pd.to_numeric(g["cpu_usr_pct"], errors="coerce") + pd.to_numeric(g["cpu_sys_pct"],
                                                                                          errors="coerce"),
                 _iops=pd.to_numeric(g["iops"], errors="coerce") if "iops" in g else float("nan"))
    d = d[d["_busy"].notna()]
    if d.empty:
        return None
    keys = [c for c in ("point", "rep", "jobname") if c in d]
    if keys:   # one job's CPU is on each of its direction rows: once per job; its IOPS: summed over them
        jobs = d.groupby(keys, dropna=False).agg(_busy=("_busy", "first"), _iops=("_iops", "sum"),
                                                 _threads=("numjobs", "first") if "numjobs" in d else ("_busy", "size"))
        jobs = jobs.reset_index()
        if "numjobs" not in d:
            jobs["_threads"] = 1
    else:
        jobs = d.assign(_threads=1)[["_busy", "_iops", "_threads"]]
    jobs["_thread"] = jobs["_busy"] / pd.to_numeric(jobs["_threads"], errors="coerce").fillna(1).clip(lower=1)
    by = [c for c in ("point", "rep") if c in jobs]
    if not by:
        return jobs.rename(columns={"_busy": "busy", "_thread": "thread", "_iops": "iops"})
    return jobs.groupby(by, dropna=False).agg(busy=("_busy", "sum"), thread=("_thread", "max"),
                                              iops=("_iops", "sum")).reset_index()


def ns_per_io(busy_pct: float, iops: float) -> float | None:
    """CPU time per I/O (ns) of a point using busy_pct % of one CPU at iops I/Os per second; None without
    I/O."""
    return None if not iops or iops <= 0 else busy_pct / 100.0 / iops * 1e9


def _implausible(usage: pd.DataFrame) -> pd.Series:
    """Points whose recorded CPU is below MIN_CPU_NS_PER_IO per I/O (not a real measurement)."""
    per = [ns_per_io(b, i) for b, i in zip(usage["busy"], usage["iops"].fillna(0))]
    return pd.Series([p is not None and p < MIN_CPU_NS_PER_IO for p in per], index=usage.index, dtype=bool)


def _sides(usage: pd.DataFrame, ncpu: float) -> list[tuple[str, float, float | None, dict, str]]:
    """(status, value, limit, band, unit) of the total side and the thread side."""
    share = usage["busy"] / ncpu
    top, thread = float(share.max()), float(usage["thread"].max())
    s_tot, l_tot = band(top, None, CPU_FAIL_PCT, warn_high=CPU_WARN_PCT)
    s_thr, l_thr = band(thread, None, THREAD_FAIL_PCT)
    return [(s_tot, top, l_tot, {"low": 0.0, "high": CPU_WARN_PCT}, "% of usable CPUs"),
            (s_thr, thread, l_thr, {"low": 0.0, "high": THREAD_FAIL_PCT}, "% of one CPU (busiest thread)")]


def _binding(sides: list) -> tuple:
    """The side that decides: the worse status; both beyond their bounds: the one further beyond; both
    passing: the cores' share (the generator's use of the machine, the figure a reader compares)."""
    worst = max(STATUSES.index(s[0]) for s in sides)
    tied = [s for s in sides if STATUSES.index(s[0]) == worst]
    return tied[0] if worst == STATUSES.index(PASS) else max(tied, key=lambda s: s[1] / s[3]["high"])


def _cpu_row(host, exp, usage: pd.DataFrame, cores: float, section: str) -> dict:  # noqa: F811 (the count)
    """The row of one host x experiment: fails when fio's busiest point used CPU_FAIL_PCT of the usable CPUs or
    its busiest thread THREAD_FAIL_PCT of one CPU; value, limit, low, high and unit are those of the side that
    binds (a saturated thread on a machine with many idle CPUs is a thread problem, not a core count one).
    Points whose CPU use is implausibly low are left out and named; none left: unchecked."""
    ncpu = cores
    usage = usage if "iops" in usage else usage.assign(iops=float("nan"))
    bad = _implausible(usage)
    judged = usage[~bad]
    lost = (f"{int(bad.sum())} of {len(usage)} points recorded less than {n(MIN_CPU_NS_PER_IO)} ns of fio CPU per "
            f"I/O (lowest {n(min(ns_per_io(b, i) or 0.0 for b, i in zip(usage.loc[bad, 'busy'], usage.loc[bad, 'iops'])))}"
            " ns at "
            f"{n(usage.loc[bad, 'iops'].max())} IOPS): not a real measurement of fio's CPU use (accounted elsewhere, "
            "e.g. io_uring's sqthread_poll, or not accounted)") if bad.any() else ""
    if judged.empty:
        return unchecked(host, "load_generator_cpu", exp, lost, section, "% of usable CPUs", low=0.0,
                         high=CPU_WARN_PCT, consequence="whether fio was CPU-bound is unknown: read the "
                         "latencies with care")
    status, value, limit, bounds, unit = _binding(_sides(judged, ncpu))
    worst = judged.loc[(judged["busy"] / ncpu).idxmax()]
    thread = float(judged["thread"].max())
    evidence = (f"fio's busiest point used {n(worst['busy'] / ncpu)} % of the {int(ncpu)} usable CPUs (usr + sys "
                f"{n(worst['busy'])} % of one CPU{', point ' + str(worst['point']) if 'point' in judged else ''}); "
                f"busiest thread {n(thread)} % of one CPU; {len(judged)} points")
    if lost:
        evidence += f"; {lost}"
    consequence = {PASS: "",
                   WARN: "fio shared the CPUs with the I/O completion work: latencies may include CPU waiting",
                   FAIL: "the load generator was CPU-bound: throughput and latency of its busiest points "
                         "describe fio on this machine, not the device"}[status]
    if status == FAIL and "thread" in unit:
        consequence += " (one fio thread saturated its CPU: split the load over more jobs)"
    if status == PASS and lost:
        status, consequence = UNCHECKED, "the points without a real CPU measurement are not shown to be free of fio"
    return row(host, "load_generator_cpu", exp, status, value, limit, unit, evidence, consequence, section, **bounds)
