"""fio-pts-hir: the SNIA PTS host idle recovery test (HIR): does the drive get faster when the host lets it
idle between bursts of random writes (background garbage collection), and how much, for idles of which length?

The definition followed (SNIA Solid State Storage Performance Test Specification (PTS) 2.0.2, §11 "Host Idle
Recovery", numbered as in PTS-E 1.1; a public implementation cites its §11.2.3 for the preconditioning):

1. **Preconditioning to steady state** (the WSAT condition): RND 4 KiB writes at T4 Q32 (4 jobs x 32
   outstanding I/Os; PTS-C: T2 Q16) in rounds of ``precondition_round_s`` seconds (PTS: 1 min) until the
   steady-state rule (§2.1.24, memstor.analysis.steady_state: a five-round window) holds or
   ``precondition_max_rounds`` rounds have run. The window's average is the **baseline** (continuous writes).
2. **Wait states** ``wait_states_s`` (PTS: 5, 10, 15, 25 and 50 s, "wait states" 1, 2, 3, 5 and 10 for
   their ratio to the 5 s access), in that order; each is ``segments_per_wait`` times (PTS: 360) an access
   segment — ``access_s`` seconds (PTS: 5) of the same RND 4 KiB writes — followed by a host idle of the wait
   state's length, then a **return to baseline**: ``return_s`` seconds (PTS: 1800) of continuous writes.
   PTS total: 360 x (5+5, 5+10, 5+15, 5+25, 5+50) s + 5 x 1800 s = 15.5 h after preconditioning.
3. Reported: the IOPS of every segment against time with the wait states marked, and per wait state the IOPS
   of its segments as a ratio of the baseline (memstor.analysis.pts_recovery.hir_table: the segments that
   follow an idle, with a 95 % interval over them).

The PTS 2.0.2 text was not readable here (searched: the SNIA PDF and its transcriptions on fdocuments.us,
technodocbox.com, pdfslide.net, whose stored copies hold only the first pages; docs/pts-sources.md); the
quantities above agree in every implementation read. One point they leave open: cloudharmony's and ADATA's
HIR (Alan-ADATA/SSS-PTS-TEST test/lib/BlockStorageTestHir.php, PTS v2.0) precondition in rounds of 30 x 1 min
of writes and track the LAST minute of each round, and run the return to baseline as 360 x 5 s segments
(= 1800 s); memstor's rounds are ``precondition_round_s`` (1 min, every minute tracked) and its return one
1800 s run. Their T x Q is the operator's (ADATA's form: Enterprise T4 Q32, Client T2 Q16, as here).

Implementations read for the details (none is the PTS text): cloudharmony/block-storage
(lib/BlockStorageTestHir.php: waits 5, 10, 15, 25, 50 s, 360 x 5 s segments each, 1800 s "return to baseline";
it also sleeps between its baseline segments, which the PTS's continuous writes do not), its ADATA fork, a
PTS 2.0.2 Python suite (05_HIR: 360 segments, T4 Q32 / PTS-C T2 Q16) and a shell suite citing §11.2.3.

How memstor runs it (each step a resumable point of two sweeps, memstor.measure.sweep):

- **Every segment is its own fio run** (time based, exactly its seconds, no ramp, 100 ms interval logs): its
  IOPS is fio's own count over it. Preconditioning rounds and returns are runs of their own too; between two
  runs without an idle fio restarts (0.4-0.5 s without I/O on this VM: ``idle_s`` says how long).
- **The idle is time.sleep between points, not fio's thinktime**: thinktime keeps the jobs and their queues
  alive and each of the 4 jobs idles on its own clock, so the device need not be idle; between two fio
  runs no I/O can be in flight. Before sleeping memstor syncs its own writes (IdleRunner in
  memstor.experiments._pts): nothing of memstor touches any disk while the host idles. The idle the device sees is the
  sleep plus the bookkeeping, the sync and fio's exit and start: measured from fio's clock per segment
  (``idle_s``; on this 2-vCPU VM 0.38-0.57 s more than the planned wait, the same gap as between two points
  without a planned idle).
- **Two sweeps**: the preconditioning rounds stop at the steady round (memstor.measure.sweep ``until``), then
  one sweep runs the wait states. A rerun resumes at the first point not measured; the idle before it is
  then whatever passed, and ``idle_s`` shows it. Every point's name ends with the run's id, a hash of
  everything that shapes the trajectory (target, engine, workload, every length): another setting is another
  run, on a target in the state the runs before left it (nothing is purged).

Departures from the PTS (the ``departure`` column states those of each run): nothing is purged; with a test
file the span is the file, not the device; the profile's lengths (quick and full are shorter); every point is
its own fio run, so the PTS's continuous preconditioning and returns hold fio's restarts and each idle is
0.4-0.6 s longer than planned (measured, ``idle_s``); a resumed run's idle before its first new point is
whatever passed.

Tables, ``<data>/processed/<device>/``:

- ``fio-pts-hir.csv``: one row per point (writes): memstor's fio columns (``config`` = the point: a state, never
  pooled), then :data:`HIR_COLUMNS`;
- ``fio-pts-hir-seconds.csv``: one row per point x complete second (memstor.experiments._pts.SECOND_COLUMNS).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_target as _fio_target
import memstor.experiments._pts as _pts
from memstor.analysis import pts_recovery
from memstor.analysis import steady_state as ss
from memstor.core.validate import Section
from memstor.measure.fio import FioRunner
from memstor.measure.sweep import Point, SweepSession, run_sweep

EXPERIMENT = "fio-pts-hir"
NOTEBOOK = "56-fio-pts-hir"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS
#: This family's keys beside the common fio keys (numjobs = PTS's T, iodepth = its Q; lengths in s).
KEYS = ("bs", "iodepth", "precondition_round_s", "precondition_max_rounds", "access_s", "wait_states_s",
        "segments_per_wait", "return_s")
#: The PTS's quantities (§11), for the departure text.
PTS = {"bs": "4k", "numjobs": 4, "iodepth": 32, "precondition_round_s": 60, "access_s": 5,
       "wait_states_s": [5, 10, 15, 25, 50], "segments_per_wait": 360, "return_s": 1800}
RW = "randwrite"
MAX_ROUNDS = 1000
MAX_SEGMENTS = 100000
#: Columns after memstor's fio columns in fio-pts-hir.csv (units: s, IOPS, bytes).
HIR_COLUMNS = [
    "run_id",           # the run's id (the hash at the end of every point name)
    "phase",            # precondition | access | return
    "round",            # preconditioning round, 1-based (empty for the others)
    "wait_s",           # the wait state (planned idle after each access segment, s); empty for preconditioning
    "segment",          # access segment of its wait state, 1-based (the first follows continuous writes)
    "idle_before_s",    # the idle planned before this point (s)
    *_pts.TIME_COLUMNS,  # t_start_s: first I/O, s since the test's; idle_s: s without I/O before it (fio's clock)
    "baseline_iops",    # steady-state IOPS under continuous writes (the preconditioning's window)
    "baseline_ci_low", "baseline_ci_high",  # its 95 % interval over the window's rounds
    "recovery_ratio",   # this point's IOPS / baseline_iops (access and return points)
    "ss_status",        # the preconditioning's steady state: achieved | not achieved | not evaluable
    *_pts.SPAN_COLUMNS,  # span: file | full_device; span_bytes; departure: where this run departs from PTS
]
TABLE_COLUMNS = _fio_rows.COLUMNS + HIR_COLUMNS


@dataclass(frozen=True)
class HirParams:
    """fio-pts-hir: preconditioning to steady state, then access + idle segments per wait state (s, counts)."""

    common: _fio_params.FioCommon  # numjobs = PTS T; runtime_s/ramp_s/repetitions are not keys here
    bs: str                        # block size of every write (PTS: 4 KiB)
    iodepth: int                   # PTS Q per job (32)
    precondition_round_s: float    # length of a preconditioning round (PTS: 60)
    precondition_max_rounds: int   # round limit of the preconditioning (PTS steady state: 25)
    access_s: float                # access segment (PTS: 5)
    wait_states_s: tuple           # idle after each access segment, one wait state each (PTS: 5, 10, 15, 25, 50)
    segments_per_wait: int         # access + idle segments per wait state (PTS: 360)
    return_s: float                # continuous writes after each wait state (PTS: 1800)


def hir_params(params: dict) -> HirParams:
    """Validate a fio-pts-hir section (UsageError naming the parameter, the value and the way out)."""
    v = Section(EXPERIMENT)
    c = _pts.common(v, params, KEYS)
    return HirParams(
        common=c, bs=_fio_params.single_block_size(v, params, c),
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
        precondition_round_s=v.seconds("precondition_round_s", params["precondition_round_s"]),
        precondition_max_rounds=v.integer("precondition_max_rounds", params["precondition_max_rounds"],
                                          ss.WINDOW_ROUNDS, MAX_ROUNDS,
                                          want=f"an integer {ss.WINDOW_ROUNDS}..{MAX_ROUNDS}: at least the "
                                          f"{ss.WINDOW_ROUNDS}-round steady-state window (PTS: 25)"),
        access_s=v.seconds("access_s", params["access_s"]),
        wait_states_s=_pts.seconds_list(v, "wait_states_s", params["wait_states_s"]),
        segments_per_wait=v.integer("segments_per_wait", params["segments_per_wait"], 2, MAX_SEGMENTS,
                                    want=f"an integer 2..{MAX_SEGMENTS}: the first segment of a wait state follows "
                                    "continuous writes, the others an idle (PTS: 360)"),
        return_s=v.seconds("return_s", params["return_s"]),
    )


validate = hir_params


# ------------------------------------------------------------------------------------------- points


def run_id(sp: HirParams, engine: str, span: int, raw: bool, medium: str) -> str:
    """8 hex digits naming the run: everything that shapes the trajectory."""
    shape = {**_pts.base_config(EXPERIMENT, sp.common, engine, span, raw), "bs": sp.bs, "iodepth": sp.iodepth,
             "medium": medium, **{k: getattr(sp, k) for k in KEYS if k not in ("bs", "iodepth")}}
    return hashlib.sha1(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:8]


def _config(sp: HirParams, engine: str, span: int, raw: bool, medium: str, test_file: str, rid: str) -> dict:
    """The params every point of the run shares."""
    return {**_pts.base_config(EXPERIMENT, sp.common, engine, span, raw), "rw": RW, "bs": sp.bs,
            "iodepth": sp.iodepth, "run_id": rid, "medium": medium, "test_file": test_file}


def make_points(sp: HirParams, engine: str, span: int, raw: bool, medium: str,
                test_file: str) -> tuple[list[Point], list[Point]]:
    """(preconditioning rounds, the wait states' points), in run order: per wait state its access segments (the
    first right after continuous writes, each later one after an idle of the wait) and its return."""
    rid = run_id(sp, engine, span, raw, medium)
    base = _config(sp, engine, span, raw, medium, test_file, rid)
    work = f"{RW}-bs{sp.bs}-qd{sp.iodepth}x{sp.common.numjobs}-{rid}"

    def params(phase: str, runtime: float, idle: float, **extra) -> dict:
        return {**base, "phase": phase, "runtime_s": runtime, "idle_before_s": idle,
                "log_avg_msec": _pts.log_avg_msec(runtime), "round": None, "wait_s": None, "segment": None, **extra}

    pcs = [_pts.point(f"pc{r:02d}-{work}", params("precondition", sp.precondition_round_s, 0, round=r))
           for r in range(1, sp.precondition_max_rounds + 1)]
    tests = []
    for wait in sp.wait_states_s:
        w = f"w{_pts.num(wait)}"
        tests += [_pts.point(f"{w}-s{i:03d}-{work}", params("access", sp.access_s, wait if i > 1 else 0,
                                                          wait_s=wait, segment=i))
                  for i in range(1, sp.segments_per_wait + 1)]
        tests.append(_pts.point(f"{w}-return-{work}", params("return", sp.return_s, wait, wait_s=wait)))
    return pcs, tests


class PreconditionRule:
    """The preconditioning sweep's ``until``: stop at a failed round (the rerun retries it) or at the round that
    completes a steady window (memstor.analysis.steady_state)."""

    def __init__(self, sp: HirParams, rows: _pts.PointRows):
        self.sp, self.rows = sp, rows

    def __call__(self, results: list) -> str | None:
        stop = self.rows(results)
        if stop:
            return stop
        verdict = ss.evaluate(precondition_iops(results, self.rows), self.sp.precondition_max_rounds)
        return f"not needed: {verdict.verdict}" if verdict.achieved else None


def precondition_iops(results: list, rows: _pts.PointRows) -> list[float]:
    """The preconditioning rounds' IOPS in order, up to the first round without a measurement."""
    out = []
    for res in results:
        if res.point.params["phase"] != "precondition":
            continue
        vals = [r.get("iops") for r in rows.of(res).rows if r.get("direction") == "write" and r.get("status") == "done"]
        if not vals or vals[0] is None:
            break
        out.append(float(vals[0]))
    return out


# ------------------------------------------------------------------------------------------- tables


def departure(sp: HirParams, params: dict, raw: bool, extra_idle: list) -> str:
    """The departure text of a run: the profile's other quantities, the span, the purge, and ``extra_idle``: the
    s without I/O each point saw beyond its planned idle (fio's exit and start, memstor's sync)."""
    lengths = [_pts.instead("block size", sp.bs, PTS["bs"]), _pts.instead("T", sp.common.numjobs, PTS["numjobs"]),
               _pts.instead("Q", sp.iodepth, PTS["iodepth"]),
               _pts.instead("preconditioning rounds of", sp.precondition_round_s, PTS["precondition_round_s"], " s"),
               _pts.instead("access segments of", sp.access_s, PTS["access_s"], " s"),
               _pts.instead("wait states", list(sp.wait_states_s), PTS["wait_states_s"], " s"),
               _pts.instead("segments per wait state", sp.segments_per_wait, PTS["segments_per_wait"]),
               _pts.instead("returns to baseline of", sp.return_s, PTS["return_s"], " s")]
    measured = [f"each point its own fio run: {min(extra_idle):.2f}-{max(extra_idle):.2f} s without I/O between two "
                "points beyond the planned idle (fio's exit and start, memstor's sync)"] if extra_idle else []
    return _pts.departure(params.get("profile"), lengths, raw, measured)


def table(sp: HirParams, params: dict, results: list, rows: _pts.PointRows, span: int, raw: bool,
          times: dict) -> pd.DataFrame:
    """fio-pts-hir.csv (TABLE_COLUMNS) from the sweep's results (the rows parsed once by ``rows``)."""
    base = pts_recovery.hir_baseline(precondition_iops(results, rows), sp.precondition_max_rounds)
    extra = [idle - float(r.point.params["idle_before_s"]) for r in results
             for _s, idle in [times.get(r.point.name, (None, None))] if idle is not None]
    run = {"baseline_iops": base.iops, "baseline_ci_low": base.ci_low, "baseline_ci_high": base.ci_high,
           "ss_status": base.status, "span": "full_device" if raw else "file", "span_bytes": span,
           "departure": departure(sp, params, raw, extra)}
    out = []
    for res in results:
        p = res.point.params
        start, idle = times.get(res.point.name, (None, None))
        for r in rows.of(res).rows:
            if r.get("direction") != "write":
                continue
            ratio = r["iops"] / base.iops if p["phase"] != "precondition" and base.iops and r.get("iops") is not None \
                else None
            out.append({**r, **run, "run_id": p["run_id"], "phase": p["phase"], "round": p["round"],
                        "wait_s": p["wait_s"], "segment": p["segment"], "idle_before_s": p["idle_before_s"],
                        "t_start_s": start, "idle_s": idle, "recovery_ratio": ratio})
    df = pd.DataFrame(out, columns=TABLE_COLUMNS)
    for col in ("round", "segment", "span_bytes"):
        df[col] = df[col].astype("Int64")
    return df


# ------------------------------------------------------------------------------------------ running


def run_hir(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
            session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-pts-hir; write its table and per-second table and return the table. session: the run's
    memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    sp = hir_params(params)
    data_root = Path(data_root)

    def body(t: _fio_target.Target):
        span = _fio_target.span_bytes(t)
        pcs, tests = make_points(sp, t.engine, span, t.raw, t.medium, str(t.tf.path))
        runner = _pts.IdleRunner(FioRunner({p.name: _pts.fio_job(p, str(t.tf.path)) for p in pcs + tests}))
        rows = _pts.PointRows(EXPERIMENT, host, t.note, data_root)
        info = {"ioengine_requested": sp.common.ioengine, "span_bytes": span, "run_id": pcs[0].params["run_id"],
                **t.info}
        note = f"preconditioning until steady state; {len(tests)} points of the wait states follow"
        with session.noted(note):
            results = run_sweep(EXPERIMENT, pcs, runner, data_root, host, until=PreconditionRule(sp, rows),
                                sysinfo=info, progress=progress, session=session)
        if rows.failure is None:
            results = run_sweep(EXPERIMENT, [r.point for r in results] + tests, runner, data_root, host,
                                until=rows, sysinfo=info, progress=progress, session=session)
        _fio_target.remove_when_full(results, t.tf)
        return t, span, results, rows

    t, span, results, rows = _fio_target.on_target(EXPERIMENT, sp.common, data_root, target_dir, host, body,
                                                   session=session)
    return _pts.write_tables(EXPERIMENT, results, rows, host, data_root,
                             lambda times: table(sp, params, results, rows, span, t.raw, times), "points")


run = run_hir
