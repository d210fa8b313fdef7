"""The fio-load-latency results for reports: the latency–throughput curve per device and workload, the
queueing models fitted to it, the SLO answer, and the open loop beside the closed queue-depth sweep.

Input: ``ds.fio`` (memstor.analysis.dataset) rows of the fio-load-latency experiment (columns of
memstor.experiments.fio_load_latency.TABLE_COLUMNS) and of fio-queue-depth. The formulas live in
:mod:`memstor.analysis.openloop`; this module only selects, groups and joins. The service-time histogram
of the QD1 point comes from the processed bins table (memstor.analysis.histograms). Units in the names: IOPS, µs, %.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis import openloop
from memstor.analysis.dataset import load_dataset
from memstor.analysis.histograms import as_histogram, read_bins, select
from memstor.analysis.points import fio_summary, qd_points, sweep_points
from memstor.analysis.spread import FRESH, pure_iops
from memstor.core.fmt import fmt_number
from memstor.core.schema import OPEN_LOOP_RATE_TOLERANCE_PCT, truthy

EXPERIMENT = "fio-load-latency"
#: The point names of fio latency_target's closed runs in EXPERIMENT (phase "lt"): a closed loop, not an offered rate.
LT_POINT_PREFIX = "lt-"
QUEUE_DEPTH = "fio-queue-depth"

#: Columns of curve_table() (``report/tables/load_latency.csv``): one row per device x workload x offered
#: rate (repetitions averaged, n of them; a flag set in any repetition is set; open_loop: every run's
#: arrivals stayed Poisson, empty when unknown). closed_lat_mean_us: the closed queue-depth sweep's mean latency
#: at the same achieved IOPS (linear interpolation; empty outside its range); open_vs_closed_pct:
#: 100 (open - closed) / closed. generator: ioarrive (latency = response from the intended arrival) or fio
#: (latency from the submission; tables measured before the column existed are fio's).
CURVE_COLUMNS = [
    "host", "rw", "direction", "utilisation_pct", "offered_iops", "achieved_iops", "achieved_pct", "lat_mean_us",
    "lat_p50_us", "lat_p99_us", "lat_p99_9_us", "overloaded", "ceiling_reached", "open_loop", "x_max_iops",
    "x_max_source",
    "iops_cv", "min_1s_iops_pct", "n", "closed_lat_mean_us", "open_vs_closed_pct", "generator",
    "generator_checks",  # ioarrive: its failed self-checks name[/source] (';'-joined over the runs), ok; fio: empty
    "windows_1s",  # the whole 1-s windows iops_cv and min_1s_iops_pct come from (the fewest of the runs); empty: unknown
    *("service_mean_us", "service_p99_us", "lag_p99_us", "lag_bound_us", "generator_cpu_pct", "wake_delay_p99_us",
      "max_outstanding", "pause_per_cpu_s", "pause_max_us", "paused_pct", "queue_requests", "peak_outstanding",
      "submit_blocked_s", "runtime_s"),  # ioarrive's (means); runtime_s: the run's offered-arrival time (s)
    "closed_p99_us", "closed_qd",  # the closed sweep's p99 (µs) at its lightest load reaching the achieved IOPS
    "closed_iops",  # that configuration's own IOPS: the load the p99 was measured at (S9-bare M-5: up to 1.77x)
    "closed_p99_9_us", "closed_p99_99_us",  # that configuration's own p99.9 and p99.99 (µs): its tail
    "ioengine", "closed_ioengine",  # the open loop's I/O engine and the closed sweep's (S7-bare M-7: libaio, io_uring)
    "submit_mode",  # fio's rate mode: inline or offload (empty for ioarrive; R-def p8: the report never said which)
    "usable_cpus",  # the CPUs the host's run could use (sysinfo; empty: not recorded): generator_cpu_pct's scale
]
#: The closed sweep's completion-latency percentiles the open loop is set beside, and the curve columns they fill.
CLOSED_TAIL = ("clat_p99_us", "clat_p99_9_us", "clat_p99_99_us")
#: A closed point whose IOPS lie within this ratio of an open point's ran at a like load: their p99s compare (S9-bare
#: M-5: randwrite u70 was set against QD64 at 1.37x its rate while QD16 ran within 0.2 % of it).
LIKE_LOAD = 1.1
CLOSED_TAIL_COLUMNS = ("closed_p99_us", "closed_p99_9_us", "closed_p99_99_us", "closed_qd", "closed_iops")
#: The generator's own columns the curve carries (ioarrive: service and lag times, its process's CPU in % of one
#: CPU, its sleeps' wake-up delay, its cap on I/Os in flight, the machine's pauses before the run, the disk's
#: request queue, the most in flight and its submit calls' blocked seconds; empty for fio's points and where not
#: recorded), means over the repetitions.
GENERATOR_MEANS = tuple(CURVE_COLUMNS[CURVE_COLUMNS.index("service_mean_us"):CURVE_COLUMNS.index("closed_p99_us")])
#: The per-second series of the open loop (memstor.experiments.fio_load_latency.SECOND_COLUMNS).
SECONDS = "fio-load-latency-seconds"
_MEANS = ("offered_iops", "achieved_iops", "achieved_pct", "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p99_9_us",
          "x_max_iops", "iops_cv", "min_1s_iops_pct")


#: "best of 5 runs" in an X_max source (memstor.experiments.fio_load_latency.x_max_from_queue_depth counts the rows
#: of the queue-depth table it chose from: configurations and repetitions together).
_BEST_OF = re.compile(r"best of (\d+) runs")
#: The workload a part of an X_max source names ('read: ...; write: ...' of the mixed-load map).
_PART_RW = {"read": "randread", "write": "randwrite"}


def qd_counts(table: pd.DataFrame | None, host) -> dict[str, tuple[int, int]]:
    """{rw: (configurations, successful runs)} of `host`'s 4 KiB queue-depth points of each workload in its own
    direction: from the tidy runs (``ds.fio``: one row per run, ``ok``, ``config``) or from the summary
    (memstor.analysis.points.fio_summary: one row per configuration, ``n`` runs)."""
    if table is None or table.empty or not {"host", "rw", "direction", "bs_bytes"} <= set(table.columns):
        return {}
    exp = "table" if "table" in table.columns else "experiment"
    q = table[(table["host"].astype(str) == str(host)) & (table.get(exp) == QUEUE_DEPTH) & (table["bs_bytes"] == 4096)]
    q = q[q["direction"] == np.where(q["rw"].astype(str).str.contains("write"), "write", "read")]
    out = {}
    for rw, g in q.groupby("rw", sort=True):
        if "n" in g.columns:
            n = pd.to_numeric(g["n"], errors="coerce").fillna(0)
            out[str(rw)] = (int((n > 0).sum()), int(n.sum()))
        elif "ok" in g.columns and "config" in g.columns:
            ok = g[g["ok"].astype(bool)]
            out[str(rw)] = (int(ok["config"].nunique()), len(ok))
    return out


def runs_words(configs: int, runs: int) -> str:
    """'5 configurations, 1 run each' / '4 configurations, 10 runs': repetitions told apart from configurations."""
    each = runs // configs if configs and runs % configs == 0 else None
    conf = f"{configs} configuration{'s' if configs != 1 else ''}"
    return f"{conf}, {each} run{'s' if each != 1 else ''} each" if each else f"{conf}, {runs} runs"


def x_max_source_text(source, counts: dict[str, tuple[int, int]], rw=None) -> str:
    """An X_max source as recorded ('fio-queue-depth table: best of 5 runs (QD32x4)'; the mixed-load map's
    'read: ...; write: ...') with each 'best of N runs' said as configurations and runs (``counts``:
    :func:`qd_counts`; the part's workload from its 'read:'/'write:' label, else `rw`); where the table's counts no
    longer add up to N: 'best of N runs (configurations x repetitions)'."""
    parts = []
    for part in str(source).split("; "):
        label, _, rest = part.partition(": ")
        m = _BEST_OF.search(part)
        if m:
            c = counts.get(_PART_RW.get(label, rw) if rest else rw)
            said = (f"best of {runs_words(*c)}" if c and c[1] == int(m.group(1))
                    else f"best of {m.group(1)} runs (configurations x repetitions)")
            part = part[:m.start()] + said + part[m.end():]
        parts.append(part)
    return "; ".join(parts)


def rate_rows(fio: pd.DataFrame) -> pd.DataFrame:
    """Successful offered-rate rows of fio-load-latency (probes and failed points left out)."""
    if "phase" not in fio.columns or "experiment" not in fio.columns:
        return fio.iloc[0:0]
    sel = fio[(fio["experiment"] == EXPERIMENT) & (fio["phase"] == "rate") & fio["ok"]]
    return sel[sel["direction"] == np.where(sel["rw"].str.contains("write"), "write", "read")]


def _closed_curve(fio: pd.DataFrame, host: str, rw: str) -> pd.DataFrame:
    """The closed queue-depth sweep of `rw` on `host` (4 KiB-or-any bs as in the open loop): mean IOPS and
    mean latency per configuration, ordered by outstanding I/O (iodepth x numjobs) — the order of the load,
    not of the throughput (a sweep whose IOPS fall at the top is not monotone in IOPS). Only the sweep's own
    job count (the most common one): a spec-conditions point (QD32 x 4) is another curve."""
    direction = "write" if "write" in rw else "read"
    q = fio[(fio["host"] == host) & (fio["experiment"] == QUEUE_DEPTH) & (fio["rw"] == rw)
            & (fio["direction"] == direction) & fio["ok"]]
    if q.empty:
        return q
    cols = ["iops", "lat_mean_us", "iodepth", "numjobs", "bs_bytes"] + [c for c in CLOSED_TAIL if c in q]
    c = q.groupby("config", sort=False)[cols].mean()
    c["ioengine"] = q.groupby("config", sort=False)["ioengine"].first() if "ioengine" in q else None
    if "file_size_bytes" in q:
        c["file_size_bytes"] = q.groupby("config", sort=False)["file_size_bytes"].first()
    c = c[c["numjobs"] == c["numjobs"].mode().iloc[0]]
    return c.assign(outstanding_io=c["iodepth"] * c["numjobs"]).sort_values("outstanding_io").reset_index()


def closed_meeting(fio: pd.DataFrame, host: str, rw: str, target_us: float) -> dict:
    """SLO_CLOSED_COLUMNS: the highest closed-loop IOPS whose own p99 (µs) is at or under target_us, among the closed
    sweep (:func:`_closed_curve`) and the other fresh experiments' runs of its job (:func:`_same_job_runs`), its QD
    ('QD4', 'QD8x2'), that p99, its mean latency, its experiment and the runs of its job that missed it (S21-loop 2:
    fio-block-size's QD32 met 1 ms at 233,051 IOPS, fio-rw-ratio's QD32 missed it, p99 3,195 µs); None each where nothing met it or the sweep has no
    p99 (then the sweep's lightest depth, which a closed bound above it contradicts: S12-1cpu9 1)."""
    c = _closed_curve(fio, host, rw) if {"host", "experiment", "rw", "direction", "ok"} <= set(fio.columns) \
        else pd.DataFrame()
    if c.empty or "clat_p99_us" not in c:
        return dict.fromkeys(SLO_CLOSED_COLUMNS)
    runs = pd.concat([c.assign(experiment=QUEUE_DEPTH), _same_job_runs(fio, host, rw, c)], ignore_index=True)
    met = runs[pd.to_numeric(runs["clat_p99_us"], errors="coerce") <= float(target_us)]
    if met.empty:
        light = c.iloc[0]
        return {**dict.fromkeys(SLO_CLOSED_COLUMNS), "closed_sweep_missed_qd": _qd_label(light),
                "closed_sweep_missed_iops": float(light["iops"]),
                "closed_sweep_missed_p99_us": float(pd.to_numeric(light["clat_p99_us"], errors="coerce"))}
    r = met.loc[pd.to_numeric(met["iops"]).idxmax()]
    same = runs[(runs["iodepth"] == r["iodepth"]) & (runs["numjobs"] == r["numjobs"])
                & (pd.to_numeric(runs["clat_p99_us"], errors="coerce") > float(target_us))]
    return {**dict.fromkeys(SLO_CLOSED_COLUMNS), "closed_sweep_iops": float(r["iops"]), "closed_sweep_qd": _qd_label(r),
            "closed_sweep_p99_us": float(r["clat_p99_us"]), "closed_sweep_lat_mean_us": float(r["lat_mean_us"]),
            "closed_sweep_experiment": str(r["experiment"]), "closed_sweep_same_missed": "; ".join(
                f"{s.experiment}: {fmt_number(s.iops)} IOPS, p99 {fmt_number(s.clat_p99_us)} µs" for s in same.itertuples())}


def _same_job_runs(fio: pd.DataFrame, host: str, rw: str, sweep: pd.DataFrame) -> pd.DataFrame:
    """The other fresh experiments' (spread.FRESH) closed runs of the sweep's job on host: rw (fio-rw-ratio's pure
    mixes as the reads and writes they are), the sweep's block size, job count, engine and file size; mean IOPS,
    latency and p99 per experiment and configuration (twelfth read S15-loop 1: fio-rw-ratio's QD32 write met 1 ms at
    166,246 IOPS, p99 586 µs, while the SLO table gave the sweep's 129,387 at QD16)."""
    need = {"config", "iops", "lat_mean_us", "clat_p99_us", "bs_bytes", "iodepth", "numjobs"}
    if not need <= set(fio.columns):
        return pd.DataFrame()
    p = pure_iops(fio[fio["ok"] & fio["experiment"].isin(FRESH) & (fio["experiment"] != QUEUE_DEPTH)], host)
    p = p[(p["rw"] == rw) & (p["direction"] == ("write" if "write" in rw else "read"))
          & p["bs_bytes"].isin(sweep["bs_bytes"]) & p["numjobs"].isin(sweep["numjobs"])]
    for col in ("ioengine", "file_size_bytes"):
        if col in p.columns and col in sweep.columns:
            p = p[p[col].isin(sweep[col].dropna())]
    if p.empty:
        return p
    g = p.groupby(["experiment", "config"], sort=False)
    return g[["iops", "lat_mean_us", "clat_p99_us", "iodepth", "numjobs"]].mean().reset_index()


def _qd_label(r: pd.Series) -> str:
    """'QD4' for one job, 'QD8x2' for more: a closed sweep point's depth as the open-loop tables name it."""
    return f"QD{int(r['iodepth'])}" + (f"x{int(r['numjobs'])}" if r["numjobs"] > 1 else "")


def _closed_at(closed: pd.DataFrame, bs: float, iops: float) -> float | None:
    """The closed loop's mean latency (µs) at `iops`: interpolated linearly on the first segment, in order of
    outstanding I/O, whose two points' IOPS enclose it — the lightest load at which the closed loop delivers
    that throughput (where the curve falls at the top, later segments may enclose it again; they are a heavier
    load, not the same throughput at lower latency). None outside the measured range."""
    c = closed[closed["bs_bytes"] == bs] if len(closed) else closed
    x, r = c["iops"].to_numpy(float), c["lat_mean_us"].to_numpy(float)
    for i in range(len(c) - 1):
        lo, hi = sorted((x[i], x[i + 1]))
        if lo <= iops <= hi:
            t = 0.0 if hi == lo else (iops - x[i]) / (x[i + 1] - x[i])
            return float(r[i] + t * (r[i + 1] - r[i]))
    return None


def _closed_p99(closed: pd.DataFrame, bs: float, iops: float) -> dict:
    """{closed_p99_us, closed_p99_9_us, closed_p99_99_us (completion latency, µs; None where not recorded),
    closed_qd ('QD4'), closed_iops (its IOPS), closed_ioengine} of the closed sweep's configuration nearest in IOPS
    to `iops` within LIKE_LOAD of it (a like load), else of its lightest (by outstanding I/O) whose IOPS reach
    `iops` — a measured point, not interpolated (percentiles do not interpolate); all None where none reaches it
    or the sweep has no p99."""
    none = dict.fromkeys((*CLOSED_TAIL_COLUMNS, "closed_ioengine"))
    c = closed[closed["bs_bytes"] == bs] if len(closed) else closed
    if c.empty or "clat_p99_us" not in c or not np.isfinite(iops):
        return none
    load = np.abs(np.log(c["iops"].to_numpy(float) / iops))
    like = c[load <= math.log(LIKE_LOAD)]
    reach = like.iloc[[int(np.argmin(load[load <= math.log(LIKE_LOAD)]))]] if len(like) else c[c["iops"] >= iops]
    if reach.empty or not np.isfinite(reach["clat_p99_us"].iloc[0]):
        return none
    r = reach.iloc[0]
    qd = _qd_label(r)
    tail = {f"closed_{c.removeprefix('clat_')}": (float(r[c]) if c in r and np.isfinite(r[c]) else None)
            for c in CLOSED_TAIL}
    return {**tail, "closed_qd": qd, "closed_iops": float(r["iops"]), "closed_ioengine": r.get("ioengine")}


def _windows(seconds: pd.DataFrame | None) -> dict[tuple[str, str, str], int]:
    """{(host, point, direction): whole 1-s windows in the point's per-second series} (``seconds``: the
    fio-load-latency-seconds side table; empty without it)."""
    if seconds is None or seconds.empty or not {"host", "point", "direction", "t_s"} <= set(seconds.columns):
        return {}
    n = seconds.groupby(["host", "point", "direction"], sort=False)["t_s"].nunique()
    return {(str(h), str(p), str(d)): int(k) for (h, p, d), k in n.items()}


def curve_table(fio: pd.DataFrame, seconds: pd.DataFrame | None = None, cpus: dict | None = None) -> pd.DataFrame:
    """The open-loop curves (CURVE_COLUMNS), sorted by host, rw and utilisation; ``seconds`` (the per-second
    side table, :data:`SECONDS`) gives ``windows_1s``; ``cpus`` ({host: usable CPUs}, Dataset.usable_cpus)
    ``usable_cpus``."""
    rows = []
    rates = rate_rows(fio)
    if rates.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    windows = _windows(seconds)
    for (host, rw, _config), g in rates.groupby(["host", "rw", "config"], sort=False):
        row = {"host": host, "rw": rw, "direction": g["direction"].iloc[0], "usable_cpus": (cpus or {}).get(str(host)),
               "utilisation_pct": float(g["utilisation_pct"].iloc[0]), "n": len(g),
               "x_max_source": g["x_max_source"].iloc[0],
               "ioengine": g["ioengine"].dropna().iloc[0] if "ioengine" in g and g["ioengine"].notna().any() else None,
               "generator": g["generator"].dropna().iloc[0] if "generator" in g and g["generator"].notna().any()
               else "fio",
               "submit_mode": g["submit_mode"].dropna().iloc[0] if "submit_mode" in g and g["submit_mode"].notna().any()
               else None,
               "generator_checks": ";".join(dict.fromkeys(
                   c for v in g.get("generator_checks", pd.Series(dtype=object)).dropna().astype(str)
                   for c in v.split(";") if c and c != "ok")) or ("ok" if "generator_checks" in g
                                                                   and g["generator_checks"].notna().any() else "")}
        for col in (*_MEANS, *GENERATOR_MEANS):
            row[col] = float(pd.to_numeric(g[col], errors="coerce").mean()) if col in g else math.nan
        counts = [windows.get((str(host), str(p), str(d))) for p, d in zip(g.get("point", []), g["direction"])]
        known = [k for k in counts if k is not None]
        row["windows_1s"] = min(known) if known and len(known) == len(counts) else None
        row["overloaded"] = bool(g["overloaded"].map(truthy).any())
        row["ceiling_reached"] = bool(g["ceiling_reached"].map(truthy).any())
        known = g["open_loop"].dropna() if "open_loop" in g else pd.Series(dtype=object)
        row["open_loop"] = bool(known.map(truthy).all()) if len(known) else None
        closed = _closed_at(_closed_curve(fio, host, rw), g["bs_bytes"].iloc[0], row["achieved_iops"])
        row["closed_lat_mean_us"] = closed
        row["open_vs_closed_pct"] = None if closed is None else 100.0 * (row["lat_mean_us"] - closed) / closed
        row.update(_closed_p99(_closed_curve(fio, host, rw), g["bs_bytes"].iloc[0], row["achieved_iops"]))
        rows.append(row)
    df = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    return df.sort_values(["host", "rw", "utilisation_pct"], kind="stable").reset_index(drop=True)


#: Columns slo() adds after openloop.SLO_COLUMNS: fio's own latency_target search at the same p99 target
#: (IOPS, the queue depth it ended at, the run's own whole-run p99 in µs; the IOPS empty where that p99 misses
#: the target: fio's window search does not bound the whole run) and ratio_to_fio = max_iops / fio's IOPS.
#: fio_latency_cut_off_s: the run's seconds where fio's search was still doubling when it ended (cut_off_search);
#: fio_latency_settled_windows: where the search spent under half its windows at its final depth, how many (its
#: IOPS then averages the depths searched: emptied, settled_windows).
#: ioengine, fio_latency_ioengine: the open loop's I/O engine and fio's search's (the ratio crosses engines where
#: they differ: S7-bare M-7).
SLO_CROSS_COLUMNS = ["fio_latency_target_iops", "fio_latency_depth", "fio_latency_target_p99_us", "ratio_to_fio",
                     "fio_latency_cut_off_s", "fio_latency_settled_windows", "ioengine", "fio_latency_ioengine",
                     "fio_latency_run_iops"]  # the run's own IOPS, kept where its search gives no answer (S11-loop 4)


#: Columns slo() adds for the points the answer rests on: the offered rates whose open loop held (its flag
#: true and achieved within +-OPEN_LOOP_RATE_TOLERANCE_PCT of the offered rate) and all offered rates;
#: ``censored_by`` why max_iops is a lower bound ('every point met it', 'every held point met it', 'the next rate did not hold';
#: '' when it is not one), or 'not monotone' where held rates meet, miss and meet the target again (no answer).
SLO_HELD_COLUMNS = ["held_points", "points", "censored_by", "lower_missed"]
#: Columns slo() adds from the closed queue-depth sweep (a closed loop, beside the open loop's answer, never it): its
#: highest IOPS whose own p99 (completion latency, µs) meets the target, that point's QD, p99 and mean total latency
#: (µs: S12-bare 5, a completion p99 of 52 µs below the same I/Os' mean of 67.9 µs, the submission in slat); empty where no
#: depth met it (S11-1cpu 12: the SLO table said only 'missed' beside a sweep that met 1 ms up to 30,953 IOPS at QD4).
SLO_CLOSED_COLUMNS = ["closed_sweep_iops", "closed_sweep_qd", "closed_sweep_p99_us", "closed_sweep_lat_mean_us",
                      "closed_sweep_missed_qd", "closed_sweep_missed_iops", "closed_sweep_missed_p99_us",
                      "closed_sweep_experiment", "closed_sweep_same_missed"]
#: (closed_sweep_missed_*: where no depth met the target, the sweep's lightest depth, its IOPS and completion p99;
#: closed_sweep_experiment: the experiment whose closed run of the sweep's job met it highest, the sweep or another
#: fresh one: S15-loop 1; closed_sweep_same_missed: the runs of that same job elsewhere whose p99 missed it, S21-loop 2.)
NOT_MONOTONE = "not monotone"
#: censored_by where no held rate met the target and lower offered rates did not hold: no answer either way (seventh
#: read S11-bare 1: 'none: even the lowest held rate misses it' from u90, the only rate of 8 that held).
BELOW_NOT_HELD = "lower rates did not hold"
#: censored_by where held rates met the target but a lower rate whose loop did not hold missed it (``lower_missed``
#: names it): no range of rates is shown to meet it (S21-bare 4: '≥ 25,226' from u30 alone while u10 missed 1 ms).
LOWER_MISSED = "a lower rate missed it"


def held_mask(g: pd.DataFrame) -> pd.Series | None:
    """Per point: its open loop held (the flag true and achieved within +-OPEN_LOOP_RATE_TOLERANCE_PCT % of
    offered); None when no point recorded the flag (fio before 3.31 writes no arrival times: not checked)."""
    if "open_loop" not in g or g["open_loop"].isna().all():
        return None
    pct = pd.to_numeric(g.get("achieved_pct", pd.Series(float("nan"), index=g.index)), errors="coerce")
    in_band = (pct - 100.0).abs() <= OPEN_LOOP_RATE_TOLERANCE_PCT
    return g["open_loop"].map(lambda v: truthy(v) if not pd.isna(v) else False).astype(bool) & in_band


def _held_answer(g: pd.DataFrame, target: float, held: pd.Series) -> tuple[float, bool, str]:
    """(max_iops, censored, censored_by) of one workload from its held points only: a point whose loop did not
    hold says nothing about the device at that rate, so the answer is the rule of openloop.slo_max_iops over the
    held points, and only a lower bound (the last held rate that met it) when a rate between it and the first
    held miss (or above it, with no held miss) did not hold; no answer ('not monotone') where a held rate above
    the first held miss meets the target again (third read S7-bare B-1: randwrite held u10 456 µs, u50 2,941 µs,
    u95 539 µs, u98 312 µs)."""
    h = g[held]
    try:
        v, censored = openloop.slo_max_iops(h["achieved_iops"], h["lat_p99_us"], target, h["overloaded"])
    except ValueError:
        return math.nan, False, ""
    offered = pd.to_numeric(g["offered_iops"], errors="coerce")
    if v is None:  # no held rate meets it: below the lowest held rate, only rates that held could say
        return math.nan, False, BELOW_NOT_HELD if (~held & (offered < offered[held].min())).any() else ""
    h = h.assign(_at=pd.to_numeric(h["offered_iops"], errors="coerce")).sort_values("_at")
    miss = (pd.to_numeric(h["lat_p99_us"], errors="coerce") > target) | h["overloaded"].map(truthy)
    first_miss = h.loc[miss, "_at"].min() if miss.any() else math.inf   # slo_max_iops looks no further
    meets = h[~miss & (h["_at"] < first_miss)]
    if (~miss & (h["_at"] > first_miss)).any():  # held rates meet, miss and meet again: no single answer
        return math.nan, False, NOT_MONOTONE
    last = meets["_at"].max() if len(meets) else -math.inf
    gap = ~held & (offered > last) & (offered < first_miss)
    if gap.any() and len(meets):
        top = pd.to_numeric(meets["achieved_iops"], errors="coerce").max()
        return float(top), True, "the next rate did not hold"
    return float(v), bool(censored), "every held point met it" if censored else ""


def lowest_held(g: pd.DataFrame) -> pd.Series | None:
    """The lowest offered rate of one workload whose loop held (:func:`held_mask`; all its rates where no flag was
    recorded, or none held); None without rows."""
    if g is None or g.empty:
        return None
    held = held_mask(g)
    return (g[held] if held is not None and held.any() else g).sort_values("utilisation_pct").iloc[0]


def answered_from_held(slo: pd.DataFrame) -> bool:
    """The SLO rows of one workload took their answer from its held points (:func:`held_slo`: held_points
    recorded, at least one): the gate spares them when too few rates held."""
    held = pd.to_numeric(slo["held_points"], errors="coerce") if "held_points" in slo else pd.Series(dtype=float)
    return bool(len(held) and (held >= 1).all())


def held_slo(curves: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
    """`out` (openloop.slo_table of `curves`) with each workload's answer from its held points (:func:`held_mask`)
    and :data:`SLO_HELD_COLUMNS`; a workload whose points recorded no flag keeps the answer of all its points
    (held_points empty: not checked; the gate withholds it)."""
    out = out.assign(held_points=np.nan, points=np.nan, censored_by="", lower_missed="")
    for (host, rw), g in curves.groupby(["host", "rw"], sort=False):
        at = (out["host"] == host) & (out["rw"] == rw)
        out.loc[at, "points"] = len(g)
        held = held_mask(g)
        if held is None:
            out.loc[at, "censored_by"] = out.loc[at, "censored"].map(lambda c: "every point met it" if c else "")
            continue
        out.loc[at, "held_points"] = int(held.sum())
        for i in out.index[at]:
            v, censored, why = _held_answer(g, float(out.at[i, "target_p99_us"]), held)
            below = missed_below(g, held, float(out.at[i, "target_p99_us"])) if v == v else ""
            out.loc[i, ["max_iops", "censored", "censored_by", "lower_missed"]] = [
                v, censored, LOWER_MISSED if below else why, below]
    return out


def missed_below(g: pd.DataFrame, held: pd.Series, target: float) -> str:
    """'u10: 8,359 IOPS, p99 1,708 µs': the offered rates of one workload below its lowest held rate that met
    ``target`` (p99, µs) whose loop did not hold and whose p99 missed it; '' where none (or no held rate met it)."""
    p99 = pd.to_numeric(g["lat_p99_us"], errors="coerce")
    offered = pd.to_numeric(g["offered_iops"], errors="coerce")
    met = held & (p99 <= target)
    low = g[~held & (offered < offered[met].min()) & (p99 > target)] if met.any() else g.iloc[0:0]
    return "; ".join(f"u{float(r.utilisation_pct):g}: {fmt_number(r.achieved_iops)} IOPS, p99 {fmt_number(r.lat_p99_us)} "
                     "µs" for r in low.sort_values("offered_iops").itertuples())


def cut_off_search(depth: pd.Series, iodepth: pd.Series, p99_us: pd.Series, target_us: pd.Series) -> pd.Series:
    """True where fio's latency_target search was cut off by the run's end, not by the target: fio starts at QD 1
    and doubles the depth after every window that meets the target (io_u.c lat_target_success; a window that
    misses it bisects), so a final depth per job that is a power of two below ``iodepth``, with the run's own p99
    (µs) under the target, never missed a window: the search had not found the target's depth, and its IOPS is
    an average over the ramp (bare vm, 2-s run, 0.5-s windows: QD 8 and 16 of 32, 81,593 and 50,157 IOPS while the
    queue-depth sweep met p99 <= 1 ms at 150,645 and 118,379)."""
    d = pd.to_numeric(depth, errors="coerce")
    power = (d >= 1) & np.isclose(np.log2(d.where(d >= 1, 1.0)) % 1, 0)
    under = pd.to_numeric(p99_us, errors="coerce") <= pd.to_numeric(target_us, errors="coerce")
    return power & (d < pd.to_numeric(iodepth, errors="coerce")) & under


#: fio-load-latency sets fio's latency_window to a quarter of the runtime, at least 0.5 s (its experiment): a
#: latency_target run has at most this many windows.
SEARCH_WINDOWS = 4
SEARCH_WINDOW_MIN_S = 0.5


def settled_windows(depth: pd.Series, runtime_s: pd.Series) -> pd.Series:
    """Windows (of SEARCH_WINDOWS, latency_window = max(0.5 s, runtime / 4)) the run can have spent at fio's final
    depth: the search starts at QD 1 and doubles after each window that meets the target, so reaching d takes
    log2 d windows (d a power of two) or ceil(log2 d) + 1 (a miss above d, then the bisection); the rest of the
    windows are at d (fifth read R-def p8: 'QD 3' in a 2-s run: windows at QD 1, 2 and 4 before it, at most one of
    four at QD 3, while 55 % of its I/Os ran at depth >= 4)."""
    d = pd.to_numeric(depth, errors="coerce")
    t = pd.to_numeric(runtime_s, errors="coerce")
    windows = np.floor(np.minimum(SEARCH_WINDOWS, t / SEARCH_WINDOW_MIN_S))
    lg = np.log2(d.where(d >= 1))
    before = np.where(np.isclose(lg % 1, 0), lg, np.ceil(lg) + 1)
    return pd.Series(windows - before, index=d.index)


def slo(curves: pd.DataFrame, targets_us, fio: pd.DataFrame | None = None) -> pd.DataFrame:
    """``report/tables/slo.csv``: per device x workload x p99 target, the highest achieved IOPS that meets
    it from the points whose open loop held (:func:`held_slo` over memstor.analysis.openloop.slo_table:
    interpolated, censored when every held point meets it or the next rate did not hold), and, where
    `fio` holds the experiment's ``lt`` point at that target, fio's latency_target result beside it
    (SLO_CROSS_COLUMNS; empty elsewhere)."""
    cols = [*openloop.SLO_COLUMNS, *SLO_HELD_COLUMNS, *SLO_CROSS_COLUMNS, *SLO_CLOSED_COLUMNS]
    if curves.empty:
        return pd.DataFrame(columns=cols)
    out = held_slo(curves, openloop.slo_table(curves, targets_us))
    if fio is not None and len(out):
        out = out.join(pd.DataFrame([closed_meeting(fio, r.host, r.rw, r.target_p99_us) for r in out.itertuples()],
                                    index=out.index))
    if "ioengine" in curves.columns:
        engine = curves.dropna(subset=["ioengine"]).groupby(["host", "rw"], as_index=False)["ioengine"].first()
        out = out.merge(engine, on=["host", "rw"], how="left")
    lt = fio[(fio["experiment"] == EXPERIMENT) & (fio["phase"] == "lt") & fio["ok"]] \
        if fio is not None and {"experiment", "phase"} <= set(fio.columns) else pd.DataFrame()
    if lt.empty:
        return out.reindex(columns=cols)
    lt = lt.assign(**{c: np.nan for c in ("iodepth", "runtime_s", "ioengine") if c not in lt.columns})
    p99 = "lat_p99_us" if "lat_p99_us" in lt.columns and lt["lat_p99_us"].notna().any() else "clat_p99_us"
    found = lt.groupby(["host", "rw", "latency_target_us"], as_index=False).agg(
        fio_latency_target_iops=("iops", "mean"), fio_latency_depth=("latency_depth", "min"),
        fio_latency_target_p99_us=(p99, "max"), iodepth=("iodepth", "max"), runtime_s=("runtime_s", "max"),
        fio_latency_ioengine=("ioengine", "first"))
    found["target_p99_us"] = found["latency_target_us"].astype(float)
    found["fio_latency_run_iops"] = found["fio_latency_target_iops"]
    # fio's search ends where it ends: a run whose own whole-run p99 misses the target is no answer to it
    missed = pd.to_numeric(found["fio_latency_target_p99_us"], errors="coerce") > found["target_p99_us"]
    found.loc[missed, "fio_latency_target_iops"] = np.nan
    # nor is a search the run's end cut off while it was still doubling (no window had missed the target)
    cut = cut_off_search(found["fio_latency_depth"], found["iodepth"], found["fio_latency_target_p99_us"],
                         found["target_p99_us"])
    found.loc[cut, "fio_latency_target_iops"] = np.nan
    found["fio_latency_cut_off_s"] = found["runtime_s"].where(cut)
    # nor the IOPS of a search that spent under half its windows at its final depth: an average over its depths
    at = settled_windows(found["fio_latency_depth"], found["runtime_s"])
    unsettled = ~cut & (at < np.floor(np.minimum(SEARCH_WINDOWS, found["runtime_s"] / SEARCH_WINDOW_MIN_S)) / 2)
    found.loc[unsettled, "fio_latency_target_iops"] = np.nan
    found["fio_latency_settled_windows"] = at.clip(lower=0).where(unsettled)
    found = found.drop(columns=["latency_target_us", "iodepth", "runtime_s"])
    out = out.merge(found, on=["host", "rw", "target_p99_us"], how="left")
    out["ratio_to_fio"] = out["max_iops"] / out["fio_latency_target_iops"]
    return out.reindex(columns=cols)


def service_time(ds, host: str, rw: str) -> tuple[float | None, float | None, str]:
    """(S_us, cs2, source): mean and squared coefficient of variation of the service time of `rw` on `host`
    from the json+ completion-latency histogram of its QD1 point in fio-queue-depth (one I/O in flight:
    latency = service time); else from the lowest offered rate of the open loop (a small queueing share
    included; said in source); (None, None, why) when neither exists."""
    direction = "write" if "write" in rw else "read"
    fio = ds.fio
    base = fio[(fio["host"] == host) & (fio["rw"] == rw) & (fio["direction"] == direction) & fio["ok"]]
    qd1 = base[(base["experiment"] == QUEUE_DEPTH) & (base["iodepth"] == 1) & (base["numjobs"] == 1)]
    rates = rate_rows(base)
    pick = [(qd1, "QD1 point of fio-queue-depth"),
            (rates.sort_values("utilisation_pct").head(1), "lowest offered rate (includes a little queueing)")]
    hist = read_bins(ds.data_dir, zip(base["host"], base["experiment"]))  # processed bins tables
    for rows, what in pick:
        for src in rows["source"].dropna():
            bins = as_histogram(select(hist, source=src, direction=direction))
            if bins:
                s_us, cs2 = openloop.service_time_stats(bins)
                return s_us, cs2, f"{what}: {src}"
    return None, None, "no QD1 point and no open-loop point with json+ bins"


#: Columns of models() beside openloop.MODEL_COLUMNS: host, rw, utilisation_pct, achieved_iops,
#: lat_mean_us, overloaded, service_source, fit_rms_err_pct (of M/G/c at the fitted c), fit_note.
def models(ds, curves: pd.DataFrame) -> pd.DataFrame:
    """Per device x workload: every open-loop point with the M/M/1, M/D/1, M/G/1 and M/G/c predictions
    (openloop.model_table) from the measured service time; c fitted on the points that were not
    overloaded (openloop.fit_servers). Devices without a service time are left out."""
    out = []
    for (host, rw), g in curves.groupby(["host", "rw"], sort=True):
        s_us, cs2, source = service_time(ds, host, rw)
        if s_us is None or cs2 is None:  # (both None or neither)
            continue
        ok = g[~g["overloaded"]]
        c, rms, note = 1, math.nan, "c not fitted (fewer than 2 points that kept up)"
        if len(ok) >= 2:
            try:
                fit = openloop.fit_servers(ok["achieved_iops"].to_numpy(float), ok["lat_mean_us"].to_numpy(float),
                                           s_us, cs2)
                c, rms, note = fit.c, fit.rms_err_pct, f"c fitted on {fit.n_points} points"
            except ValueError as err:  # e.g. more servers needed than fit_servers tries
                note = f"c not fitted ({err})"
        t = openloop.model_table(g[["host", "rw", "utilisation_pct", "offered_iops", "achieved_iops", "lat_mean_us",
                                    "overloaded"]], s_us, cs2, c)
        out.append(t.assign(service_source=source, fit_rms_err_pct=rms, fit_note=note))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def unloaded(curves: pd.DataFrame) -> pd.DataFrame:
    """Per device x workload: the unloaded mean latency taken at a moderate rate and the low-rate anomaly
    flag (openloop.unloaded_latency; utilisation as a fraction), from the rates whose loop held where the points
    say (a workload with none: no row)."""
    rows = []
    for (host, rw), g in curves.groupby(["host", "rw"], sort=True):
        held = held_mask(g)  # from the rates whose loop held, where the flags say (third read S7-bare M-2)
        g = g[held] if held is not None else g
        if g.empty:
            continue
        u = openloop.unloaded_latency(g.assign(offered_util=g["utilisation_pct"] / 100.0))
        rows.append({"host": host, "rw": rw, **u})
    return pd.DataFrame(rows)


@dataclass
class DeviceView:
    """One device's open-loop analysis (notebook 60): its curves, the closed queue-depth configurations
    (memstor.analysis.points.qd_points), the SLO answer, the models and the unloaded latency."""

    device: str
    curves: pd.DataFrame
    closed: pd.DataFrame
    slo: pd.DataFrame
    models: pd.DataFrame
    unloaded: pd.DataFrame


def devices_view(data_dir: Path | str, devices, targets_us, kinds: dict[str, str] | None = None) -> DeviceView:
    """:func:`device_view` of each device, its tables stacked (each keeps its ``host`` column: every table
    and figure of notebook 60 shows the devices side by side, never pooled); one device: its own view.
    kinds: the experiment tables to read (memstor.analysis.dataset.load_dataset)."""
    ds = load_dataset(data_dir, kinds)  # read once for all the devices
    views = [device_view(data_dir, d, targets_us, ds=ds) for d in devices]
    if len(views) == 1:
        return views[0]

    def stacked(name: str) -> pd.DataFrame:
        return pd.concat([getattr(v, name) for v in views], ignore_index=True)

    return DeviceView(device=", ".join(str(d) for d in devices), curves=stacked("curves"),
                      closed=stacked("closed"), slo=stacked("slo"), models=stacked("models"),
                      unloaded=stacked("unloaded"))


def device_view(data_dir: Path | str, device: str, targets_us, ds=None) -> DeviceView:
    """The open-loop analysis of `device` alone (its folder under ``<data_dir>/processed``); targets_us:
    the SLO answer's p99 targets (µs); ds: the data set of `data_dir` when the caller has read it already."""
    ds = load_dataset(data_dir) if ds is None else ds
    ds = dataclasses.replace(ds, hosts=[ds.host(device)], fio=ds.fio[ds.fio["host"] == device],
                             mlc=ds.mlc[ds.mlc["host"] == device])
    curves = curve_table(ds.fio, ds.side_table(SECONDS), ds.usable_cpus())
    return DeviceView(device=device, curves=curves, closed=qd_points(ds, sweep_points(fio_summary(ds))),
                      slo=slo(curves, targets_us, ds.fio), models=models(ds, curves), unloaded=unloaded(curves))
