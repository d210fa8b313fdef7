"""Open-loop and load-generator checks: ``open_loop_held``, ``open_loop_rate`` (per host x workload of the
open-loop curve, memstor.analysis.load_latency.curve_table) and ``load_generator_cpu`` (per host x fio
experiment, from fio's own ``cpu_usr_pct`` + ``cpu_sys_pct``)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row
from memstor.core.schema import missing, truthy

#: Below this share of open-loop points (%) the curve is mostly a closed loop: the models fail. Between it
#: and 100 % a few (the heaviest) points were gated: a warning, the models lean on points that are not M/·/·.
OPEN_SHARE_FAIL_PCT = 80.0
#: achieved / offered (%) below which a point did not receive its rate (the experiment's own overload flag).
ACHIEVED_MIN_PCT = 95.0
#: fio's CPU use, % of all cores, from which it competes with the kernel's completion work for the same
#: cores (its latencies then include CPU queueing): a warning.
CPU_WARN_PCT = 70.0
#: ... and from which the cores are saturated: the generator, not the device, sets the pace.
CPU_FAIL_PCT = 90.0
#: One fio thread busier than this (% of one CPU) is itself the bottleneck of its job.
THREAD_FAIL_PCT = 90.0

_SECTION = "open_loop"
_GATED = ("the open-loop models (M/M/1, M/D/1, M/G/1, M/G/c) and the SLO answer for this workload are not shown: "
          "gated arrivals make the curve a partly closed loop")


def open_loop_rows(load: pd.DataFrame | None) -> list[dict]:
    """open_loop_held and open_loop_rate, one row each per host x workload of the open-loop curve."""
    if not has(load, "host", "rw", "open_loop"):
        return []
    rows = []
    for (host, rw), g in load.groupby(["host", "rw"], sort=True):
        rows.append(_held(host, rw, g))
        if "achieved_pct" in g:
            rows.append(_rate(host, rw, g))
    return rows


def _util(g: pd.DataFrame) -> str:
    """'30-98 %' utilisation range of rows g ('' without the column)."""
    if "utilisation_pct" not in g:
        return ""
    u = pd.to_numeric(g["utilisation_pct"], errors="coerce").dropna()
    if u.empty:
        return ""
    return f"{n(u.min())}-{n(u.max())} % of X_max" if len(u) > 1 else f"{n(u.iloc[0])} % of X_max"


def _held(host, rw, g: pd.DataFrame) -> dict:
    known = g[g["open_loop"].map(lambda v: not missing(v))]
    total = len(g)
    if known.empty:
        return row(host, "open_loop_held", rw, WARN, None, 100.0, "% of points",
                   f"whether the {total} offered-rate points kept open-loop arrivals was not recorded",
                   "read the open-loop models and the SLO answer with care: the open loop is not shown to hold",
                   _SECTION)
    is_open = known["open_loop"].map(truthy)
    share = 100.0 * is_open.sum() / total
    gated = known[~is_open]
    evidence = (f"{int(is_open.sum())} of {total} offered-rate points kept open-loop arrivals "
                f"(share {n(share)} %)")
    if len(gated):
        evidence += f"; gated (arrivals waited for completions): {len(gated)} points at {_util(gated)}"
    if total > len(known):
        evidence += f"; {total - len(known)} not recorded"
    status = PASS if share >= 100.0 else WARN if share >= OPEN_SHARE_FAIL_PCT else FAIL
    consequence = {PASS: "", FAIL: _GATED,
                   WARN: "the model errors at the gated points measure gating as well as queueing"}[status]
    return row(host, "open_loop_held", rw, status, share, 100.0, "% of points", evidence, consequence, _SECTION)


def _rate(host, rw, g: pd.DataFrame) -> dict:
    pct = pd.to_numeric(g["achieved_pct"], errors="coerce")
    low = g[pct < ACHIEVED_MIN_PCT]
    lo = num(pct.min())
    evidence = f"achieved / offered {n(pct.min())}-{n(pct.max())} % over {len(g)} offered-rate points"
    if len(low):
        evidence += f"; {len(low)} below {n(ACHIEVED_MIN_PCT)} % (at {_util(low)})"
    status = WARN if len(low) else PASS
    consequence = ("the points that missed their rate are beyond the device's ceiling: their latency is "
                   "a backlog, not an open-queue latency") if len(low) else ""
    return row(host, "open_loop_rate", rw, status, lo, ACHIEVED_MIN_PCT, "% of offered", evidence, consequence,
               _SECTION)


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
    (sysinfo: {host: its sysinfo.json dict}, :func:`cores`).

    Missing numbers (no ``cpu_usr_pct``/``cpu_sys_pct`` columns, or empty cells, or no core count) are a
    WARN row whose evidence says "not recorded": the reader cannot tell whether the generator was CPU-bound."""
    if not has(fio, "host", "experiment"):
        return []
    ok = fio[fio["ok"].map(truthy)] if "ok" in fio else fio
    rows = []
    for (host, exp), g in ok.groupby(["host", "experiment"], sort=True):
        ncpu = cores((sysinfo or {}).get(host))
        section = {"fio-load-latency": _SECTION, "fio-steady-state": "steady_state"}.get(exp, "storage_points")
        usage = _usage(g)
        if usage is None or not ncpu:
            what = "fio's CPU use (cpu_usr_pct, cpu_sys_pct)" if usage is None else "the machine's core count"
            rows.append(row(host, "load_generator_cpu", exp, WARN, None, CPU_WARN_PCT, "% of usable CPUs",
                            f"not recorded: {what} is not in the data, so whether fio was CPU-bound is unknown",
                            "read the latencies with care: they may include fio waiting for a CPU", section))
            continue
        rows.append(_cpu_row(host, exp, usage, ncpu, section))
    return rows


def _usage(g: pd.DataFrame) -> pd.DataFrame | None:
    """Per point x repetition: busy (% of one CPU, usr + sys summed over its jobs) and per-thread busy;
    None when fio's CPU use is not recorded."""
    if "cpu_usr_pct" not in g or "cpu_sys_pct" not in g:
        return None
    d = g.assign(_busy=pd.to_numeric(g["cpu_usr_pct"], errors="coerce") + pd.to_numeric(g["cpu_sys_pct"],
                                                                                          errors="coerce"))
    d = d[d["_busy"].notna()]
    if d.empty:
        return None
    keys = [c for c in ("point", "rep", "jobname") if c in d]
    jobs = d.groupby(keys, dropna=False).agg(_busy=("_busy", "first"), _threads=("numjobs", "first")) \
        if keys and "numjobs" in d else d.assign(_threads=1)[["_busy", "_threads"]]
    jobs = jobs.reset_index() if keys else jobs
    jobs["_thread"] = jobs["_busy"] / pd.to_numeric(jobs["_threads"], errors="coerce").fillna(1).clip(lower=1)
    by = [c for c in ("point", "rep") if c in jobs]
    return jobs.groupby(by, dropna=False).agg(busy=("_busy", "sum"), thread=("_thread", "max")).reset_index() \
        if by else jobs.rename(columns={"_busy": "busy", "_thread": "thread"})


def _cpu_row(host, exp, usage: pd.DataFrame, cores: float, section: str) -> dict:
    """The row of one host x experiment: fails when fio's busiest point used CPU_FAIL_PCT of the usable CPUs or
    its busiest thread THREAD_FAIL_PCT of one CPU; the value and limit are those of the side that binds (a
    saturated thread on a machine with many idle CPUs is a thread problem, not a core count one)."""
    share = usage["busy"] / (100.0 * cores) * 100.0
    worst = usage.loc[share.idxmax()]
    top, thread = float(share.max()), float(usage["thread"].max())
    status = FAIL if top >= CPU_FAIL_PCT or thread >= THREAD_FAIL_PCT else WARN if top >= CPU_WARN_PCT else PASS
    by_thread = thread >= THREAD_FAIL_PCT and top < CPU_FAIL_PCT
    evidence = (f"fio's busiest point used {n(top)} % of the {int(cores)} usable CPUs (usr + sys {n(worst['busy'])} "
                f"% of one CPU{', point ' + str(worst['point']) if 'point' in usage else ''}); busiest thread "
                f"{n(thread)} % of one CPU; {len(usage)} points")
    consequence = {PASS: "",
                   WARN: "fio shared the CPUs with the I/O completion work: latencies may include CPU waiting",
                   FAIL: "the load generator was CPU-bound: throughput and latency of its busiest points "
                         "describe fio on this machine, not the device"}[status]
    if by_thread:
        consequence += " (one fio thread saturated its CPU: split the load over more jobs)"
        return row(host, "load_generator_cpu", exp, status, thread, THREAD_FAIL_PCT, "% of one CPU (busiest thread)",
                   evidence, consequence, section)
    return row(host, "load_generator_cpu", exp, status, top, CPU_WARN_PCT, "% of usable CPUs", evidence,
               consequence, section)
