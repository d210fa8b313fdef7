"""The SNIA PTS demand-intensity run that fio-pts-cbw and fio-pts-dirth share: steady-state rounds at the top
corner, then the thread x queue-depth matrix, then (DIRTH) the response-time histogram captures.

One run, in order (each step resumable points of the experiment's raw folder, :mod:`memstor.measure.sweep`):

1. **Steady-state rounds** (phase ``steady``): the steady-state workload at the top corner, the largest T x Q
   (PTS: T32 Q32), ``runtime_s`` each (PTS: 1 min), until the PTS rule (memstor.analysis.steady_state, PTS 2.0.2
   §2.1.24: a 5-round window within 20 % data and 10 % slope excursion) holds on the round's total IOPS (read +
   write), or ``max_rounds`` rounds ran (PTS: 25; "steady state not reached in N rounds" is then a departure).
2. **The matrix** (phase ``matrix``): every T (fio jobs, ``numjobs``) x Q (``iodepth`` per job), from the
   highest demand down as the PTS runs it (largest T first, then largest Q), ``runtime_s`` each.
3. **Histogram captures** (phase ``histogram``, only with ``histogram_s`` > 0): one ``histogram_s`` run at each
   of the min, mid, optimal and max-IOPS points of the matrix (memstor.analysis.pts_demand.demand_roles; PTS:
   10 min at MinIOPS, MidIOPS and MaxIOPS = memstor's min, mid and optimal).

How the PTS 2.0 implementation read here (Alan-ADATA/SSS-PTS-TEST, test/lib/BlockStorageTestCbw.php and
BlockStorageTestDirth.php; the PTS 2.0.2 text was not reachable) runs CBW and DIRTH, and where memstor departs:
pre-conditioning at T32 Q32 with 100 % writes until steady state (as here); then ROUNDS of "5 min T32 Q32
pre-writes + the whole T x Q matrix", repeated until the T32 Q32 point of the matrix is steady (memstor: one
pass of the matrix right after the steady-state rounds, no inter-round pre-writes: a departure of every run);
then at the MaxIOPS, MidIOPS and MinIOPS points 60 min of pre-writes and a 10 min histogram capture (memstor:
``histogram_s`` captures, DIRTH only, without the 60 min pre-writes).

Every point name ends with the run's id: a hash of everything that shapes the run (workloads, T and Q lists,
point length, warm-up, engine, O_DIRECT, span, drive, round limit). Another setting is another run; its
points never replace a measured one. A failed steady-state round stops the run there (the rerun retries it).

Every job: group_reporting, time based, ``--lat_percentiles=1`` (json+ then holds the total-latency, i.e.
response-time, histograms the PTS tables read: memstor.analysis.pts_demand), fio's interval logs for the
point's own interval (memstor.experiments._fio_rows), and with ``iolog`` fio's iolog of every T = 1 point
(fio writes one only for one job) in the point's ``<point>.files/fio.iolog``.

Table ``<data>/processed/<device>/<experiment>.csv``: memstor's fio columns (one row per point x direction,
``config`` = the point: every point is a state of its own, never pooled) then :data:`EXTRA_COLUMNS`; the json+
bins in ``<experiment>-bins.csv``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
import memstor.experiments._pts as _pts
from memstor.analysis import pts_demand
from memstor.analysis import steady_state as ss
from memstor.core.errors import UsageError
from memstor.core.validate import Section
from memstor.measure.fio import FioJob, FioRunner
from memstor.measure.sweep import Point, SweepSession, run_sweep

#: The PTS's lengths: seconds per round and matrix point, round limit, seconds per histogram capture.
PTS_POINT_S, PTS_MAX_ROUNDS, PTS_HISTOGRAM_S = 60, ss.MAX_ROUNDS, 600
#: The thread counts and queue depths of the matrix (each list): 1, 2, 4, 6, 8, 16, 32, as the PTS 2.0 implementation
#: read here runs CBW and DIRTH (Alan-ADATA/SSS-PTS-TEST, test/lib/BlockStorageTestCbw.php and ...Dirth.php:
#: ``$tcArray = $qdArray = array(32,16,8,6,4,2,1)``, 49 points, high to low); the PTS 2.0.2 text itself was not
#: reachable, so this follows the implementation (memstor had 1, 2, 4, 8, 16, 32, written from memory).
PTS_TQ = (1, 2, 4, 6, 8, 16, 32)
#: Keys of the shared fio section these families take; numjobs and repetitions are not theirs.
COMMON_KEYS = ("runtime_s", "ramp_s", "file_size", "ioengine", "direct")
#: A run is one trajectory (the matrix follows the steady state): no repetitions, T is the jobs.
NOT_KEYS = {"numjobs": "the thread counts are the list 'threads'",
            "repetitions": "a PTS run is one trajectory (steady state, then the matrix); run it again into another "
                           "--data folder to repeat it"}
INCIDENTAL = (*_fio_points.INCIDENTAL, "role")
STEADY, MATRIX, HISTOGRAM = pts_demand.STEADY, pts_demand.MATRIX, pts_demand.HISTOGRAM

#: Columns after memstor's fio columns (units: I/Os, bytes, µs).
EXTRA_COLUMNS = [
    "threads",              # T: fio jobs of the point (numjobs)
    "qd",                   # Q: outstanding I/Os per job (iodepth)
    "total_oio",            # T x Q: the PTS's total outstanding I/O (demand intensity)
    "phase",                # steady | matrix | histogram
    "round",                # steady-state round, 1-based (empty for the other phases)
    "role",                 # histogram captures: the point's roles (min, mid, optimal, max IOPS); else empty
    "span",                 # file | full_device: what the offsets range over
    "span_bytes",           # bytes of the span (the random_distribution's zones are shares of it)
    "bssplit",              # fio's block-size mix of the point (empty: one block size, bs_bytes)
    "random_distribution",  # fio's offset distribution of the point (empty: uniform)
    "ceiling_us",           # the response-time ceiling of the optimal point (µs; empty: none)
    "ss_status",            # the run's steady-state verdict: achieved | not achieved | in progress | not evaluable
    "ss_round",             # the round it was achieved at (empty when not)
    "run_id",               # the hash every point name ends with
    "departure",            # where this run departs from the PTS (memstor.experiments._pts.departure)
]
TABLE_COLUMNS = _fio_rows.COLUMNS + EXTRA_COLUMNS


@dataclass(frozen=True)
class Workload:
    """What a point does: fio rw, block size (or the mix), read %, offset distribution."""

    rw: str                   # randread | randwrite | randrw
    bs: str                   # fio size string; with bssplit fio draws the sizes from it instead
    rwmixread: int | None     # % reads for randrw, else None
    bssplit: str | None = None
    random_distribution: str | None = None


@dataclass(frozen=True)
class MatrixParams:
    """A validated PTS demand-intensity section (see the module docstring)."""

    experiment: str
    common: _fio_params.FioCommon  # runtime_s: seconds per round and point; numjobs/repetitions unused (1)
    threads: tuple                 # T values, increasing
    qd: tuple                      # Q values, increasing
    workload: Workload             # the matrix's (and the histogram captures') workload
    steady: Workload               # the steady-state rounds' workload
    max_rounds: int                # steady-state round limit (PTS: 25)
    ceiling_us: float | None = None  # response-time ceiling of the optimal point, µs
    histogram_s: float = 0.0       # seconds per histogram capture; 0: none (the matrix points' own histograms)
    histograms: bool = False       # the family reports response-time histograms at its min/optimal/max points
    iolog: bool = False            # fio's iolog for every T = 1 point
    profile: str = ""              # the profile the section came from (the departure text names it)
    workload_departures: tuple = ()  # how the workload differs from the PTS's (text, from the family)

    @property
    def top(self) -> tuple[int, int]:
        """The top corner (T, Q) where the steady-state rounds run."""
        return max(self.threads), max(self.qd)


# ------------------------------------------------------------------------------------------ validation


def common_params(v: Section, params: dict, keys: tuple, optional: tuple = ()) -> _fio_params.FioCommon:
    """The shared fio keys (COMMON_KEYS) of a PTS section, beside the family's ``keys`` (all required) and
    ``optional`` ones; numjobs and repetitions are refused with the reason."""
    if not isinstance(params, dict):
        raise UsageError(f"{v.name}: parameters must be a mapping (the profile section), got {type(params).__name__}")
    for key, why in NOT_KEYS.items():
        if key in params:
            raise v.error(key, params[key], f"not a key of this family: {why}; remove it")
    v.keys(params, COMMON_KEYS + keys, optional=_fio_params.OPTIONAL_KEYS + optional)
    full = {**{k: params[k] for k in COMMON_KEYS}, "numjobs": 1, "repetitions": 1,
            **{k: params[k] for k in _fio_params.OPTIONAL_KEYS if k in params}}
    return _fio_params.common_params(v, full)


def tq_list(v: Section, key: str, value) -> tuple:
    """A list of thread counts or queue depths (each once, 1..MAX), increasing."""
    hi = _fio_params.MAX_NUMJOBS if key == "threads" else _fio_params.MAX_IODEPTH
    want = f"use a list of integers 1..{hi}, e.g. [1, 2, 4, 6, 8, 16, 32] (PTS)"
    return tuple(sorted(v.unique(key, [v.integer(key, x, 1, hi, want=want) for x in v.items(key, value)])))


def mix_workload(v: Section, key: str, value, bs: str, bssplit: str | None = None,
                 distribution: str | None = None) -> Workload:
    """The random workload with ``value`` % reads (0: randwrite, 100: randread, else randrw)."""
    mix = v.integer(key, value, 0, 100, want="use an integer 0..100: % reads (PTS CBW 40, DIRTH 65, 0 = 100 % writes)")
    rw = "randread" if mix == 100 else "randwrite" if mix == 0 else "randrw"
    return Workload(rw=rw, bs=bs, rwmixread=mix if rw == "randrw" else None, bssplit=bssplit,
                    random_distribution=distribution)


def max_rounds(v: Section, value) -> int:
    """The steady-state round limit: at least the 5-round window."""
    return v.integer("max_rounds", value, ss.WINDOW_ROUNDS, 1000,
                     want=f"use an integer {ss.WINDOW_ROUNDS}..1000: at least the {ss.WINDOW_ROUNDS}-round window "
                          f"(PTS: {PTS_MAX_ROUNDS})")


# ------------------------------------------------------------------------------------------- points


def run_id(mp: MatrixParams, engine: str, span_bytes: int, raw: bool, medium) -> str:
    """8 hex digits: everything that shapes the run (not the histogram length or the ceiling)."""
    c = mp.common
    shape = {"experiment": mp.experiment, "workload": mp.workload.__dict__, "steady": mp.steady.__dict__,
             "threads": mp.threads, "qd": mp.qd, "runtime_s": c.runtime_s, "ramp_s": c.ramp_s, "engine": engine,
             "direct": c.direct, "span_bytes": span_bytes, "raw": raw, "medium": medium, "max_rounds": mp.max_rounds}
    return hashlib.sha1(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:8]


def _config(mp: MatrixParams, w: Workload, phase: str, t: int, q: int, engine: str, span: int, raw: bool,
            runtime_s: float) -> dict:
    """The JSON-able coordinates of one point (no round, role, run id or test file)."""
    c = mp.common
    return {"experiment": mp.experiment, "phase": phase, "rw": w.rw, "bs": w.bs, "bssplit": w.bssplit,
            "random_distribution": w.random_distribution, "iodepth": q, "numjobs": t, "rwmixread": w.rwmixread,
            "ioengine": engine, "ioengine_requested": c.ioengine, "direct": c.direct, "runtime_s": runtime_s,
            "ramp_s": c.ramp_s, "file_size": str(span) if raw else c.file_size, "spec_point": False,
            "span": "full_device" if raw else "file", "span_bytes": span}


def _point(name: str, cfg: dict, extra: dict) -> Point:
    est = float(cfg["runtime_s"]) + float(cfg["ramp_s"]) + _fio_points.OVERHEAD_S + 0.1 * cfg["numjobs"]
    return Point(name=name, params={**cfg, **extra, "rep": 1}, est_s=est, incidental=INCIDENTAL)


@dataclass(frozen=True)
class Plan:
    """The points of a run on one target: steady-state rounds (all max_rounds) and the matrix."""

    span_bytes: int
    raw: bool
    rid: str
    common: dict     # params every point carries: run id, medium, test file
    steady: list
    matrix: list


def plan(mp: MatrixParams, t: _fio_target.Target) -> Plan:
    """The Plan of ``mp`` on target ``t`` (its span: the test file, or the whole raw device)."""
    span = _fio_target.span_bytes(t)
    rid = run_id(mp, t.engine, span, t.raw, t.medium)
    common = {"run_id": rid, "medium": t.medium, "test_file": str(t.tf.path)}
    top_t, top_q = mp.top
    run_s = mp.common.runtime_s
    steady = [_point(f"ss{r:02d}-t{top_t}q{top_q}-{rid}",
                     _config(mp, mp.steady, STEADY, top_t, top_q, t.engine, span, t.raw, run_s), {**common, "round": r})
              for r in range(1, mp.max_rounds + 1)]
    matrix = [_point(f"m-t{tt}q{q}-{rid}", _config(mp, mp.workload, MATRIX, tt, q, t.engine, span, t.raw, run_s), common)
              for tt in sorted(mp.threads, reverse=True) for q in sorted(mp.qd, reverse=True)]
    return Plan(span, t.raw, rid, common, steady, matrix)


def histogram_points(mp: MatrixParams, p: Plan, engine: str, roles: dict) -> list:
    """One capture of histogram_s at each distinct (T, Q) of ``roles`` {role: (T, Q)}, its roles in ``role``."""
    by_tq: dict[tuple, list] = {}
    for role in pts_demand.ROLES:
        if role in roles:
            by_tq.setdefault(roles[role], []).append(role)
    out = []
    for (tt, q), names in by_tq.items():
        cfg = _config(mp, mp.workload, HISTOGRAM, tt, q, engine, p.span_bytes, p.raw, mp.histogram_s)
        out.append(_point(f"h-t{tt}q{q}-s{_s(mp.histogram_s)}-{p.rid}", cfg,
                          {**p.common, "role": ", ".join(names)}))
    return out


def fio_job(point: Point, filename: str, iolog: bool) -> FioJob:
    """The FioJob of a point: time based, group_reporting, total-latency histograms, interval logs (no
    histogram log), the iolog of a T = 1 point when ``iolog``."""
    p = point.params
    return FioJob(name=point.name, rw=p["rw"], bs=p["bs"], bssplit=p["bssplit"],
                  random_distribution=p["random_distribution"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  rwmixread=p["rwmixread"], ioengine=p["ioengine"], direct=bool(p["direct"]), size=p["file_size"],
                  runtime_s=p["runtime_s"], ramp_s=p["ramp_s"], time_based=True, group_reporting=True,
                  filename=filename, logs=True, hist_log=False, log_avg_msec=_fio_points.log_avg_msec(p["runtime_s"]),
                  lat_percentiles=True, write_iolog=bool(iolog and p["numjobs"] == 1))




# ------------------------------------------------------------------------------------ the stop rule


def total_iops(rows: list) -> float | None:
    """Read + write IOPS of one point's tidy rows; None when it failed or reported none."""
    if not rows or any(r.get("status") != "done" or r.get("iops") is None for r in rows):
        return None
    return float(sum(float(r["iops"]) for r in rows))


class SteadyRule:
    """The steady-state sweep's ``until``: stop at the first round whose total IOPS complete a steady window
    (memstor.analysis.steady_state.evaluate), or after a failed round (``failed`` then says which and why).
    Keeps each point's parsed rows (each raw file read once)."""

    def __init__(self, mp: MatrixParams, host: str, note: str, data_root: Path):
        self.mp, self.host, self.note, self.data_root = mp, host, note, data_root
        self.rows: dict[str, list] = {}
        self.series: list[float] = []
        self.failed: str | None = None

    def __call__(self, results: list) -> str | None:
        res = results[-1]
        rows = self.rows.setdefault(res.point.name,
                                    _fio_rows.result_rows([res], self.host, self.note, self.data_root))
        iops = total_iops(rows)
        if res.status == "failed" or iops is None:
            why = res.error or next((r.get("error") for r in rows if r.get("error")), None) or "no result"
            self.failed = f"steady-state round {res.point.params['round']} failed ({why})"
            return f"stopped: {self.failed}; rerun the same command to retry it"
        self.series.append(iops)
        verdict = self.verdict()
        return f"not needed: {verdict.verdict}" if verdict.achieved else None

    def verdict(self) -> ss.SteadyState:
        """The PTS rule on the rounds so far."""
        return ss.evaluate(self.series, self.mp.max_rounds)


# ---------------------------------------------------------------------------------------- departures


def _s(x: float) -> str:
    """A number for a name or a sentence: 60 -> '60', 0.5 -> '0.5'."""
    return _pts.num(x)


def departure(mp: MatrixParams, p: Plan, verdict: ss.SteadyState, phase: str) -> str:
    """Where a point of the run departs from the PTS (memstor.experiments._pts.departure: the profile's other
    quantities, the span, the purge, then what was measured): point length, warm-up, matrix, workload,
    direct I/O, histogram captures, steady state not reached."""
    c = mp.common
    lengths = [_pts.instead("points", c.runtime_s, PTS_POINT_S, " s"), _pts.instead("warm-up", c.ramp_s, 0, " s"),
               _pts.instead("T", list(mp.threads), list(PTS_TQ)), _pts.instead("Q", list(mp.qd), list(PTS_TQ)),
               *mp.workload_departures, _pts.instead("direct", c.direct, 1)]
    measured = []
    if phase == HISTOGRAM:
        lengths.append(_pts.instead("histogram captures", mp.histogram_s, PTS_HISTOGRAM_S, " s"))
    elif phase == MATRIX and mp.histograms and not mp.histogram_s:
        measured.append(f"response-time histograms from the {_s(c.runtime_s)} s matrix points (no "
                        f"{PTS_HISTOGRAM_S} s captures)")
    if not verdict.achieved:
        measured.append(f"steady state not reached in {verdict.rounds_evaluated} rounds")
    return _pts.departure(mp.profile, lengths, p.raw, measured)


# -------------------------------------------------------------------------------------------- tables


def table(mp: MatrixParams, p: Plan, results: list, cache: dict, host: str, note: str, data_root: Path,
          verdict: ss.SteadyState) -> pd.DataFrame:
    """The experiment table (TABLE_COLUMNS) of the sweeps' results; ``cache``: rows parsed already."""
    out = []
    for res in results:
        par = res.point.params
        rows = cache.get(res.point.name) or _fio_rows.result_rows([res], host, note, data_root)
        extra = {"config": res.point.name, "threads": par["numjobs"], "qd": par["iodepth"],
                 "total_oio": par["numjobs"] * par["iodepth"], "phase": par["phase"], "round": par.get("round"),
                 "role": par.get("role"), "span": par["span"], "span_bytes": par["span_bytes"],
                 "bssplit": par["bssplit"], "random_distribution": par["random_distribution"],
                 "ceiling_us": mp.ceiling_us, "ss_status": verdict.status, "ss_round": verdict.round,
                 "run_id": par["run_id"], "departure": departure(mp, p, verdict, par["phase"])}
        for r in rows:
            out.append({**r, **extra, **({"bs_bytes": None} if par["bssplit"] else {})})  # a mix has no one size
    df = pd.DataFrame(out, columns=TABLE_COLUMNS)
    for col in ("round", "ss_round", "span_bytes"):
        df[col] = df[col].astype("Int64")
    return df


def roles_of(mp: MatrixParams, matrix_results: list, host: str, note: str, data_root: Path) -> dict | None:
    """{role: (T, Q)} of the measured matrix (memstor.analysis.pts_demand.demand_roles with the run's ceiling);
    None when a matrix point failed (its rerun may change them)."""
    rows = [dict(r, phase=MATRIX, threads=res.point.params["numjobs"], qd=res.point.params["iodepth"],
                 total_oio=res.point.params["numjobs"] * res.point.params["iodepth"])
            for res in matrix_results for r in _fio_rows.result_rows([res], host, note, data_root)]
    df = pd.DataFrame(rows)
    if df.empty or (df["status"] != "done").any():
        return None
    tot = pts_demand.point_totals(df)
    return {role: (int(tot.at[i, "threads"]), int(tot.at[i, "qd"]))
            for role, i in pts_demand.demand_roles(tot, mp.ceiling_us).items()}


# ------------------------------------------------------------------------------------------- running


def run_matrix(mp: MatrixParams, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
               session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume a PTS demand-intensity run (module docstring); write its table and bins table and return
    the table. session: the run's memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    data_root = Path(data_root)

    def sweep(t: _fio_target.Target, points: list, until=None) -> list:
        runner = FioRunner({pt.name: fio_job(pt, str(t.tf.path), mp.iolog) for pt in points})
        info = {"ioengine_requested": mp.common.ioengine, "span_bytes": points[0].params["span_bytes"], **t.info}
        results = run_sweep(mp.experiment, points, runner, data_root, host, sysinfo=info, until=until,
                            progress=progress, session=session)
        _fio_target.remove_when_full(results, t.tf)
        return results

    def body(t: _fio_target.Target):
        p = plan(mp, t)
        rule = SteadyRule(mp, host, t.note, data_root)
        results = sweep(t, p.steady, rule)
        roles = None
        if rule.failed is None:
            results = sweep(t, [r.point for r in results] + p.matrix)
            if mp.histogram_s:
                roles = roles_of(mp, results[-len(p.matrix):], host, t.note, data_root)
                if roles:
                    results = sweep(t, [r.point for r in results] + histogram_points(mp, p, t.engine, roles))
        return t, p, rule, results, roles

    t, p, rule, results, roles = _fio_target.on_target(mp.experiment, mp.common, data_root, target_dir, host, body,
                                                session=session)
    _fio_run.check_refused(mp.experiment, results)
    df = table(mp, p, results, rule.rows, host, t.note, data_root, rule.verdict())
    out = _fio_run.write_table(df, data_root, host, mp.experiment)
    _fio_run.write_bins(results, data_root, host, mp.experiment)
    _fio_run.report_failures(mp.experiment, df, len(results), out, data_root, host)
    if rule.failed:
        print(f"{mp.experiment}: {rule.failed}; the rounds before it are kept (status failed in {out}); rerun the "
              "same command to retry it and go on to the matrix", file=sys.stderr)
    elif mp.histogram_s and roles is None:
        print(f"{mp.experiment}: no histogram captures: a matrix point failed (status failed in {out}); rerun the "
              "same command to retry it", file=sys.stderr)
    return df
