"""fio-steady-state: preconditioning, then rounds of the tracking workload until the SNIA PTS steady-state
rule holds (memstor.analysis.steady_state) or the round limit is reached.

One run, in order (each step one resumable point of one sweep, :mod:`memstor.measure.sweep`):

1. **Workload-independent preconditioning** (PTS §3.3): ``precondition_passes`` sequential passes of
   ``precondition_bs`` writes over the whole span (the test file; on a raw device named twice, the whole
   device), at ``precondition_iodepth``, one job, not time based (each pass ends when the span is written).
2. **Rounds** 1, 2, ...: the PTS IOPS matrix points when the profile lists ``matrix_bs`` and
   ``matrix_rwmixread`` (read % outer, block size inner, like the PTS), and the tracking point: ``bs``
   random writes (100 % write) at ``iodepth`` x ``numjobs``, ``runtime_s`` seconds each.
3. After every round the steady-state rule is evaluated on the tracking IOPS of the rounds so far; the
   sweep stops at the first steady window or at ``max_rounds``. A rerun resumes at the next round and
   keeps the rounds it has (a failed round stops the run there; the rerun retries it).

Every point's name ends with the run's id: a hash of everything that shapes the trajectory (span, engine,
O_DIRECT, preconditioning, tracking workload, matrix, round length, drive). Another setting is another run,
preconditioned anew; ``max_rounds`` is not in it (a raised limit continues the same run).

Tables, ``<data>/processed/<device>/``:

- ``fio-steady-state.csv``: one row per round of the tracking workload: the DESIGN.md fio columns and
  memstor's extra fio columns (``config`` = the point: a round is a state, never pooled with another), then
  :data:`SS_COLUMNS` (``round``, ``bytes_written``, the run's verdict on every row...).
- ``fio-steady-state-matrix.csv`` (only with a matrix): every round point (tracking included), one row
  per direction, with ``round``, ``tracking`` and ``in_window``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
from memstor.analysis import steady_state as ss
from memstor.core.errors import MemstorError
from memstor.core.validate import Section
from memstor.measure.fio import FioJob, FioRunner
from memstor.measure.sweep import Point, SweepSession, processed_path, run_sweep

EXPERIMENT = "fio-steady-state"
NOTEBOOK = "50-fio-steady-state"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS
#: This family's own keys, beside the ones every fio family has (runtime_s is the round length).
KEYS = ("bs", "iodepth", "max_rounds", "precondition_passes", "precondition_bs", "precondition_iodepth",
        "matrix_bs", "matrix_rwmixread")
MATRIX_TABLE = f"{EXPERIMENT}-matrix"
#: Tracking workload of the PTS IOPS test: random writes (100 % write).
TRACKING_RW = "randwrite"
MAX_PASSES = 10
MAX_ROUNDS_LIMIT = 1000
#: Slowest write speed assumed for a preconditioning pass's time limit (bytes/s), plus a fixed margin (s).
PRECONDITION_FLOOR_BPS = 20e6
PRECONDITION_MARGIN_S = 60.0
#: Write speed assumed for a preconditioning pass in the progress bar's ETA (bytes/s).
PRECONDITION_ETA_BPS = 500e6

#: Columns after memstor's fio columns in fio-steady-state.csv (units: bytes, s, IOPS, %).
SS_COLUMNS = [
    "run_id",               # the run's id (the hash at the end of every point name)
    "round",                # 1-based round
    "round_s",              # seconds each round point is asked to run (runtime_s; fio's own: runtime_s column)
    "span_bytes",           # bytes the run writes over: the test file, or the whole raw device
    "span",                 # file | full_device
    "precondition_passes",  # sequential passes over the span before round 1
    "precondition_bytes",   # bytes written by the passes (fio's count)
    "precondition_s",       # seconds the passes took (fio's runtime)
    "bytes_written",        # cumulative bytes written at the end of the round, preconditioning and matrix included
                            # (fio's count: writes during ramp_s are not counted)
    "ss_status",            # achieved | not achieved | in progress | not evaluable
    "ss_achieved",          # the steady-state rule was met
    "ss_round",             # the round it was met at (empty when not achieved)
    "window_avg_iops",      # the reported window's average tracking IOPS
    "data_excursion_pct",   # (max - min) over the window, % of its average (limit 20)
    "slope_excursion_pct",  # |least-squares slope| x 4 rounds, % of the window average (limit 10)
    "in_window",            # the round is in the reported window
    "max_rounds",           # the round limit in force
]
TABLE_COLUMNS = _fio_rows.COLUMNS + SS_COLUMNS
MATRIX_COLUMNS = _fio_rows.COLUMNS + ["run_id", "round", "tracking", "in_window"]


@dataclass(frozen=True)
class SteadyStateParams:
    """fio-steady-state: preconditioning, then rounds of 4 KiB-style random writes (+ optional matrix)."""

    common: _fio_params.FioCommon  # runtime_s = seconds per round point; numjobs = jobs of the round points
    bs: str                 # tracking block size
    iodepth: int            # per job, every round point
    max_rounds: int         # round limit (PTS: 25)
    precondition_passes: int
    precondition_bs: str
    precondition_iodepth: int
    matrix_bs: tuple        # PTS IOPS matrix block sizes (empty: tracking point only)
    matrix_rwmixread: tuple  # PTS IOPS matrix read percentages


def steady_state_params(params: dict) -> SteadyStateParams:
    """Validate a fio-steady-state section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    if params.get("repetitions", 1) != 1:
        raise v.error("repetitions", params["repetitions"], "1: a steady-state run is one trajectory of "
                      "rounds; measure another run on another target to repeat it")
    c = _fio_params.common_params(v, {"repetitions": 1, **params}, KEYS)
    mixes = [v.integer("matrix_rwmixread", m, 0, 100)
             for m in v.items("matrix_rwmixread", params["matrix_rwmixread"], allow_empty=True)]
    matrix_bs = _fio_params.block_sizes(v, "matrix_bs", v.items("matrix_bs", params["matrix_bs"], allow_empty=True), c)
    if bool(mixes) != bool(matrix_bs):
        raise v.error("matrix_bs" if mixes else "matrix_rwmixread", params["matrix_bs" if mixes else
                      "matrix_rwmixread"], "a list too: the PTS IOPS matrix needs both block sizes and read %")
    return SteadyStateParams(
        common=c,
        bs=_fio_params.single_block_size(v, params, c),
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
        max_rounds=v.integer("max_rounds", params["max_rounds"], ss.WINDOW_ROUNDS, MAX_ROUNDS_LIMIT,
                             want=f"at least the {ss.WINDOW_ROUNDS}-round window"),
        precondition_passes=v.integer("precondition_passes", params["precondition_passes"], 1, MAX_PASSES),
        precondition_bs=_fio_params.block_sizes(v, "precondition_bs", [params["precondition_bs"]], c)[0],
        precondition_iodepth=v.integer("precondition_iodepth", params["precondition_iodepth"], 1,
                                       _fio_params.MAX_IODEPTH),
        matrix_bs=matrix_bs,
        matrix_rwmixread=v.unique("matrix_rwmixread", mixes),
    )


validate = steady_state_params


# ------------------------------------------------------------------------------------------- points


def _matrix_rw(mix: int) -> tuple[str, int | None]:
    """(rw, rwmixread) of a matrix point with `mix` % reads: 100 -> randread, 0 -> randwrite."""
    return ("randread", None) if mix == 100 else (TRACKING_RW, None) if mix == 0 else ("randrw", mix)


def round_configs(sp: SteadyStateParams, engine: str, span_bytes: int | None = None, raw: bool = False) -> list[dict]:
    """The point parameters of one round (round number not set), in run order: the matrix (read % outer,
    block size inner), the tracking point last unless the matrix holds it (bs, 0 % reads). On a raw device
    (``raw``) every round writes over the whole span preconditioned, ``span_bytes`` (eighth read S12-loop 1: the
    rounds ran --size=256m, the profile's file size, on a 6 GiB device called 'the whole raw device')."""
    c = sp.common
    if raw and span_bytes:
        c = dataclasses.replace(c, file_size=str(span_bytes))
    out = []
    for mix in sp.matrix_rwmixread:
        for bs in sp.matrix_bs:
            rw, rwmix = _matrix_rw(mix)
            cfg = _fio_points.point_params(EXPERIMENT, c, engine, rw=rw, bs=bs, iodepth=sp.iodepth,
                                    numjobs=c.numjobs, rwmixread=rwmix)
            out.append(dict(cfg, tracking=(rw == TRACKING_RW and bs == sp.bs)))
    if not any(cfg["tracking"] for cfg in out):
        out.append(dict(_fio_points.point_params(EXPERIMENT, c, engine, rw=TRACKING_RW, bs=sp.bs, iodepth=sp.iodepth,
                                          numjobs=c.numjobs), tracking=True))
    return out


def precondition_config(sp: SteadyStateParams, engine: str, span_bytes: int, n: int) -> dict:
    """The point parameters of preconditioning pass `n` (1-based): sequential writes over span_bytes."""
    c = sp.common
    return {"experiment": EXPERIMENT, "phase": "precondition", "pass": n, "rw": "write",
            "bs": sp.precondition_bs, "iodepth": sp.precondition_iodepth, "numjobs": 1, "rwmixread": None,
            "ioengine": engine, "ioengine_requested": c.ioengine, "direct": c.direct, "span_bytes": span_bytes,
            "file_size": str(span_bytes), "runtime_s": precondition_limit_s(span_bytes), "ramp_s": 0,
            "spec_point": False}


def precondition_limit_s(span_bytes: int) -> float:
    """Time limit of one preconditioning pass (s): the span at PRECONDITION_FLOOR_BPS, plus a margin."""
    return float(math.ceil(span_bytes / PRECONDITION_FLOOR_BPS + PRECONDITION_MARGIN_S))


def run_id(sp: SteadyStateParams, engine: str, span_bytes: int, medium: dict, raw: bool = False) -> str:
    """8 hex digits identifying the run: everything that shapes the trajectory (not max_rounds)."""
    shape = {"rounds": round_configs(sp, engine, span_bytes, raw), "passes": sp.precondition_passes,
             "precondition": precondition_config(sp, engine, span_bytes, 0), "span_bytes": span_bytes,
             "medium": medium}
    return hashlib.sha1(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:8]


def _round_name(cfg: dict, rnd: int, rid: str) -> str:
    """e.g. ``r07-randwrite-bs4k-qd32x4-3f2a9c1d`` (``-mix65`` for a mixed matrix point)."""
    mix = f"-mix{cfg['rwmixread']}" if cfg.get("rwmixread") is not None else ""
    return f"r{rnd:02d}-{cfg['rw']}{mix}-bs{cfg['bs']}-qd{cfg['iodepth']}x{cfg['numjobs']}-{rid}"


def make_points(sp: SteadyStateParams, engine: str, span_bytes: int, medium: dict, test_file: str,
                raw: bool = False) -> list:
    """Every point the run may need, in order: the passes, then max_rounds rounds (the sweep stops early
    when steady). Params carry the run id, the medium and the test file (incidental)."""
    rid = run_id(sp, engine, span_bytes, medium, raw)
    common = {"run_id": rid, "medium": medium, "test_file": test_file}
    points = []
    for n in range(1, sp.precondition_passes + 1):
        cfg = precondition_config(sp, engine, span_bytes, n)
        points.append(Point(name=f"pc{n}-write-bs{sp.precondition_bs}-qd{sp.precondition_iodepth}-{rid}",
                            params={**cfg, **common, "rep": 1},
                            est_s=span_bytes / PRECONDITION_ETA_BPS + _fio_points.OVERHEAD_S,
                            incidental=_fio_points.INCIDENTAL))
    per_round = round_configs(sp, engine, span_bytes, raw)
    for rnd in range(1, sp.max_rounds + 1):
        for cfg in per_round:
            est = float(cfg["runtime_s"]) + float(cfg["ramp_s"]) + _fio_points.OVERHEAD_S + 0.1 * cfg["numjobs"]
            points.append(Point(name=_round_name(cfg, rnd, rid),
                                params={**cfg, "phase": "round", "round": rnd, **common, "rep": 1},
                                est_s=est, incidental=_fio_points.INCIDENTAL))
    return points


def fio_job(point, filename: str):
    """The FioJob of a point: preconditioning passes are not time based (one pass over the span)."""
    p = point.params
    if p["phase"] != "precondition":
        return _fio_points.fio_job(point, filename)
    return FioJob(name=point.name, rw="write", bs=p["bs"], iodepth=p["iodepth"], numjobs=1,
                  ioengine=p["ioengine"], direct=bool(p["direct"]), size=p["file_size"],
                  runtime_s=p["runtime_s"], ramp_s=0, time_based=False, group_reporting=True,
                  filename=filename)


# ------------------------------------------------------------------------------------ the stop rule


def _written_bytes(rows: list) -> int:
    """Bytes written by one point: write-direction I/Os x block size (fio's count)."""
    return int(sum((r.get("total_ios") or 0) * (r.get("bs_bytes") or 0) for r in rows
                     if r.get("direction") == "write"))


def _tracking_iops(rows: list) -> float | None:
    """The tracking point's IOPS (its write direction), None when it failed."""
    vals = [r.get("iops") for r in rows if r.get("direction") == "write" and r.get("status") == "done"]
    return float(vals[0]) if vals and vals[0] is not None else None


class StopRule:
    """The sweep's ``until``: stop after a failed point (the rerun retries it) or at the round whose
    tracking IOPS complete a steady window. Keeps each point's parsed rows (each raw file read once);
    ``failed`` is the failed point's phase and reason, when one stopped the run."""

    def __init__(self, sp: SteadyStateParams, points: list, host: str, note: str, data_root: Path):
        self.sp, self.host, self.note, self.data_root = sp, host, note, data_root
        rounds = [p for p in points if p.params["phase"] == "round"]
        #: the rule is evaluated once a round is complete: after its last point
        self.round_ends = {a.name for a, b in zip(rounds, [*rounds[1:], None])
                           if b is None or b.params["round"] != a.params["round"]}
        self.rows: dict[str, list] = {}
        self.series: list[float] = []
        self.failed: tuple[str, str] | None = None

    def __call__(self, results: list) -> str | None:
        res = results[-1]
        p = res.point.params
        rows = self.rows.setdefault(res.point.name, _fio_rows.result_rows([res], self.host, self.note, self.data_root))
        iops = _tracking_iops(rows) if p.get("tracking") else None
        if res.status == "failed" or any(r.get("status") == "failed" for r in rows) or \
                (p.get("tracking") and iops is None):
            what = f"round {p['round']}" if p["phase"] == "round" else f"preconditioning pass {p['pass']}"
            why = res.error or next((r.get("error") for r in rows if r.get("error")), None) or "no result"
            self.failed = (p["phase"], f"{what} failed ({why})")
            return f"stopped: {what} failed; rerun the same command to retry it"
        if iops is not None:  # a tracking round (its IOPS are known: checked above)
            self.series.append(iops)
        if res.point.name not in self.round_ends:
            return None
        verdict = ss.evaluate(self.series, self.sp.max_rounds)
        return f"not needed: {verdict.verdict}" if verdict.achieved else None


# ------------------------------------------------------------------------------------------- tables


def _cumulative(results: list, rule: StopRule) -> tuple[dict, int, float]:
    """({round: bytes written by the end of it, preconditioning included}, precondition bytes, s)."""
    total = pc_bytes = 0
    pc_s = 0.0
    by_round: dict[int, int] = {}
    for res in results:
        rows = rule.rows.get(res.point.name, [])
        written = _written_bytes(rows)
        total += written
        if res.point.params["phase"] == "precondition":
            pc_bytes += written
            pc_s += float(sum(r.get("runtime_s") or 0 for r in rows if r.get("direction") == "write"))
        else:
            by_round[res.point.params["round"]] = total
    return by_round, pc_bytes, pc_s


def tables(sp: SteadyStateParams, results: list, rule: StopRule, span_bytes: int, raw: bool,
           rid: str) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(fio-steady-state table, matrix table or None) from the sweep's results and the rule's parsed rows."""
    by_round, pc_bytes, pc_s = _cumulative(results, rule)
    track = [(res.point.params["round"], rule.rows.get(res.point.name, [])) for res in results
             if res.point.params["phase"] == "round" and res.point.params.get("tracking")]
    series = rule.series  # the tracking IOPS of the rounds before the first failed one, in order
    result = ss.evaluate(series, sp.max_rounds)
    window = range(result.window[0], result.window[1] + 1) if result.window else range(0)
    run = {"run_id": rid, "round_s": sp.common.runtime_s, "span_bytes": span_bytes,
           "span": "full_device" if raw else "file", "precondition_passes": sp.precondition_passes,
           "precondition_bytes": pc_bytes, "precondition_s": pc_s, "ss_status": result.status,
           "ss_achieved": result.achieved, "ss_round": result.round, "window_avg_iops": result.window_avg_iops,
           "data_excursion_pct": result.data_excursion_pct, "slope_excursion_pct": result.slope_excursion_pct,
           "max_rounds": sp.max_rounds}
    out = [{**r, "config": r["point"], **run, "round": rnd, "bytes_written": by_round.get(rnd),
            "in_window": rnd in window}
           for rnd, rows in track for r in rows if r.get("direction") == "write"]
    table = pd.DataFrame(out, columns=TABLE_COLUMNS)
    for col in ("ss_round", "span_bytes", "precondition_bytes", "bytes_written"):
        table[col] = table[col].astype("Int64")
    if not sp.matrix_bs:
        return table, None
    mrows = [{**r, "config": r["point"], "run_id": rid, "round": res.point.params["round"],
              "tracking": bool(res.point.params.get("tracking")),
              "in_window": res.point.params["round"] in window}
             for res in results if res.point.params["phase"] == "round"
             for r in rule.rows.get(res.point.name, [])]
    return table, pd.DataFrame(mrows, columns=MATRIX_COLUMNS)


# ------------------------------------------------------------------------------------------ running




def run_steady_state(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                     progress: bool = True, session=None) -> pd.DataFrame:
    """Run or resume fio-steady-state; write and return its tidy table (one row per round). session: the
    run's memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    sp = steady_state_params(params)
    data_root = Path(data_root)

    def body(t):
        span = _fio_target.span_bytes(t)
        points = make_points(sp, t.engine, span, t.medium, str(t.tf.path), raw=t.raw)
        rid = points[0].params["run_id"]
        runner = FioRunner({p.name: fio_job(p, str(t.tf.path)) for p in points})
        rule = StopRule(sp, points, host, t.note, data_root)
        results = run_sweep(EXPERIMENT, points, runner, data_root, host, until=rule, progress=progress,
                            session=session, sysinfo={"ioengine_requested": sp.common.ioengine, "run_id": rid, "span_bytes": span,
                                     **t.info})
        _fio_target.remove_when_full(results, t.tf)
        return t, span, rid, rule, results

    t, span, rid, rule, results = _fio_target.on_target(EXPERIMENT, sp.common, data_root, target_dir, host, body,
                                                        session=session)
    _fio_run.check_refused(EXPERIMENT, results)
    table, matrix = tables(sp, results, rule, span, t.raw, rid)
    out = _fio_run.write_table(table, data_root, host, EXPERIMENT)
    if matrix is not None:
        _fio_run.write_table(matrix, data_root, host, MATRIX_TABLE)
    else:
        processed_path(data_root, host, MATRIX_TABLE).unlink(missing_ok=True)
    if rule.failed and rule.failed[0] == "precondition":
        raise MemstorError(f"{EXPERIMENT}: {rule.failed[1]}; no round was measured; rerun to retry")
    if rule.failed:
        print(f"{EXPERIMENT}: {rule.failed[1]}; the rounds before it are kept (status failed in {out}); "
              "rerun the same command to retry it and go on", file=sys.stderr)
    return table


run = run_steady_state
