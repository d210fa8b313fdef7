"""fio-pts-xsr: the SNIA PTS cross-stimulus recovery test (XSR): how a drive copes when the workload changes
from large sequential writes to small random writes and back — how far its throughput falls, and how long it
takes to settle at the new level after each change.

The definition followed (SNIA Solid State Storage Performance Test Specification (PTS) 2.0.2, §12 "Cross
Stimulus Recovery", numbered as in PTS-E 1.1): no preconditioning after the purge, then three access groups
written without a pause, T1 Q32 (one job, 32 outstanding I/Os), throughput recorded over time:

1. **Access group 1**: SEQ 1024 KiB writes (``seq_bs``) for ``seq1_s`` seconds (PTS: 8 h);
2. **Access group 2**: RND 8 KiB writes (``rnd_bs``) for ``rnd_s`` seconds (PTS: 6 h);
3. **Access group 3**: SEQ 1024 KiB writes for ``seq2_s`` seconds (PTS: 8 h).

Reported: throughput (MB/s) against time over the three groups, and per transition the levels before and
after and the time it takes to settle (memstor.analysis.pts_recovery.xsr_table: the rule is stated there —
the first second from which the 5-s rolling median stays within ±10 % of the new group's final level).
The PTS 2.0.2 text was not readable here (searched: the SNIA PDF and its transcriptions on fdocuments.us,
technodocbox.com, pdfslide.net, whose stored copies hold only the first pages): the lengths come from public
implementations. Both versions of ADATA's read (Alan-ADATA/SSS-PTS-TEST test/lib/BlockStorageTestXsr.php, a
PTS v2.0 suite, and its earlier copy in a cloudharmony/block-storage fork) run 8 h / 6 h / 8 h at T1 Q32 in
1-min records ("Duration(Hr) 8", "6" in its report header; "recovery" = the first minute of group 3 at or
above group 1's average). A PTS 2.0.2 Python suite said to run 6 h / 8 h / 6 h (06_XSR) was not found again
in this check. cloudharmony itself marks XSR "not yet implemented". memstor follows 8 / 6 / 8 h (the ``full``
profile a quarter of it: 2 / 1.5 / 2 h); all three lengths are keys.

How memstor runs it: each access group is ONE fio run (time based, exactly its seconds, no ramp, interval
logs in 100 ms windows, 1 s beyond an hour), three points of one resumable sweep; between two groups fio
restarts (``idle_s``: s without I/O, measured from fio's clock; 0.38-0.49 s on this 2-vCPU VM), so a
transition is a change of workload with that gap, not one in the same stream. A failed group stops the sweep (the groups
after it would follow another history); the rerun retries it. Every point's name ends with the run's id
(a hash of everything that shapes the trajectory). Nothing is purged (``departure`` says so).

Departures from the PTS (the ``departure`` column states those of each run): nothing is purged; with a test
file the span is the file, not the device; the profile's lengths (quick and full are shorter; the PTS's own are
uncertain, above); each access group is its own fio run, so a switch holds fio's restart (``idle_s``).

Tables, ``<data>/processed/<device>/``:

- ``fio-pts-xsr.csv``: one row per access group (writes): memstor's fio columns (``config`` = the point), then
  :data:`XSR_COLUMNS`;
- ``fio-pts-xsr-seconds.csv``: one row per group x complete second (memstor.experiments._pts.SECOND_COLUMNS,
  ``phase`` = the access group 1, 2, 3).
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
from memstor.core.units import parse_size
from memstor.core.validate import Section
from memstor.measure.fio import FioRunner
from memstor.measure.sweep import Point, SweepSession, run_sweep

EXPERIMENT = "fio-pts-xsr"
NOTEBOOK = "57-fio-pts-xsr"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS
#: This family's keys beside the common fio keys (numjobs = PTS's T, iodepth = its Q; lengths in s).
KEYS = ("seq_bs", "rnd_bs", "iodepth", "seq1_s", "rnd_s", "seq2_s")
#: The PTS's quantities (§12; the lengths as the ADATA implementation reads them), for the departure text.
PTS = {"seq_bs": "1m", "rnd_bs": "8k", "numjobs": 1, "iodepth": 32, "seq1_s": 28800, "rnd_s": 21600,
       "seq2_s": 28800}
#: Columns after memstor's fio columns in fio-pts-xsr.csv (units: s, bytes).
XSR_COLUMNS = [
    "run_id",           # the run's id (the hash at the end of every point name)
    "phase",            # access group 1, 2, 3
    "stimulus",         # "SEQ 1024KiB" | "RND 8KiB": the group's workload in the PTS's words
    "phase_s",          # the group's planned length (s)
    *_pts.TIME_COLUMNS,  # t_start_s: first I/O, s since the test's; idle_s: s without I/O before it (fio's clock)
    *_pts.SPAN_COLUMNS,  # span: file | full_device; span_bytes; departure: where this run departs from PTS
]
TABLE_COLUMNS = _fio_rows.COLUMNS + XSR_COLUMNS


@dataclass(frozen=True)
class XsrParams:
    """fio-pts-xsr: SEQ writes, RND writes, SEQ writes, each for its length (s), without a pause."""

    common: _fio_params.FioCommon  # numjobs = PTS T (1); runtime_s/ramp_s/repetitions are not keys here
    seq_bs: str      # block size of groups 1 and 3 (PTS: 1024 KiB)
    rnd_bs: str      # block size of group 2 (PTS: 8 KiB)
    iodepth: int     # PTS Q per job (32)
    seq1_s: float    # group 1 (PTS: 8 h)
    rnd_s: float     # group 2 (PTS: 6 h)
    seq2_s: float    # group 3 (PTS: 8 h)


def xsr_params(params: dict) -> XsrParams:
    """Validate a fio-pts-xsr section (UsageError naming the parameter, the value and the way out)."""
    v = Section(EXPERIMENT)
    c = _pts.common(v, params, KEYS)
    return XsrParams(common=c, seq_bs=_fio_params.single_block_size(v, params, c, "seq_bs"),
                     rnd_bs=_fio_params.single_block_size(v, params, c, "rnd_bs"),
                     iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
                     seq1_s=v.seconds("seq1_s", params["seq1_s"]), rnd_s=v.seconds("rnd_s", params["rnd_s"]),
                     seq2_s=v.seconds("seq2_s", params["seq2_s"]))


validate = xsr_params


# ------------------------------------------------------------------------------------------- points


def stimulus(rw: str, bs: str) -> str:
    """The PTS's name of a workload: ("write", "1m") -> "SEQ 1024KiB", ("randwrite", "8k") -> "RND 8KiB"."""
    return f"{'RND' if rw.startswith('rand') else 'SEQ'} {_pts.num(parse_size(bs) / 1024)}KiB"


def groups(sp: XsrParams) -> list[tuple[int, str, str, float]]:
    """(access group, rw, bs, seconds) of the three groups, in order."""
    return [(1, "write", sp.seq_bs, sp.seq1_s), (2, "randwrite", sp.rnd_bs, sp.rnd_s),
            (3, "write", sp.seq_bs, sp.seq2_s)]


def run_id(sp: XsrParams, engine: str, span: int, raw: bool, medium: str) -> str:
    """8 hex digits naming the run: everything that shapes the trajectory."""
    shape = {**_pts.base_config(EXPERIMENT, sp.common, engine, span, raw), "iodepth": sp.iodepth, "medium": medium,
             "groups": groups(sp)}
    return hashlib.sha1(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:8]


def make_points(sp: XsrParams, engine: str, span: int, raw: bool, medium: str, test_file: str) -> list[Point]:
    """The three access groups' points, in order (no idle planned between them)."""
    rid = run_id(sp, engine, span, raw, medium)
    base = {**_pts.base_config(EXPERIMENT, sp.common, engine, span, raw), "iodepth": sp.iodepth, "run_id": rid,
            "medium": medium, "test_file": test_file}
    return [_pts.point(f"ag{k}-{rw}-bs{bs}-qd{sp.iodepth}x{sp.common.numjobs}-t{_pts.num(s)}-{rid}",
                       {**base, "phase": k, "rw": rw, "bs": bs, "runtime_s": s, "idle_before_s": 0,
                        "stimulus": stimulus(rw, bs), "log_avg_msec": _pts.log_avg_msec(s)})
            for k, rw, bs, s in groups(sp)]


# ------------------------------------------------------------------------------------------- tables


def departure(sp: XsrParams, params: dict, raw: bool, times: dict) -> str:
    """The departure text of a run: the profile's other quantities, the span, the purge, the measured gaps."""
    lengths = [_pts.instead("SEQ block size", sp.seq_bs, PTS["seq_bs"]),
               _pts.instead("RND block size", sp.rnd_bs, PTS["rnd_bs"]),
               _pts.instead("T", sp.common.numjobs, PTS["numjobs"]), _pts.instead("Q", sp.iodepth, PTS["iodepth"]),
               _pts.instead("access groups of", [sp.seq1_s, sp.rnd_s, sp.seq2_s],
                            [PTS["seq1_s"], PTS["rnd_s"], PTS["seq2_s"]], " s")]
    gaps = [i for _s, i in times.values() if i is not None]
    measured = [f"each access group its own fio run: up to {max(gaps):.2f} s without I/O at a switch (fio's "
                "exit and start)"] if gaps else []
    return _pts.departure(params.get("profile"), lengths, raw, measured)


def table(sp: XsrParams, params: dict, results: list, rows: _pts.PointRows, span: int, raw: bool,
          times: dict) -> pd.DataFrame:
    """fio-pts-xsr.csv (TABLE_COLUMNS) from the sweep's results (the rows parsed once by ``rows``)."""
    run = {"span": "full_device" if raw else "file", "span_bytes": span,
           "departure": departure(sp, params, raw, times)}
    out = []
    for res in results:
        p = res.point.params
        start, idle = times.get(res.point.name, (None, None))
        out += [{**r, **run, "run_id": p["run_id"], "phase": p["phase"], "stimulus": p["stimulus"],
                 "phase_s": p["runtime_s"], "t_start_s": start, "idle_s": idle}
                for r in rows.of(res).rows if r.get("direction") == "write"]
    df = pd.DataFrame(out, columns=TABLE_COLUMNS)
    df["span_bytes"] = df["span_bytes"].astype("Int64")
    return df


# ------------------------------------------------------------------------------------------ running


def run_xsr(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
            session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-pts-xsr; write its table and per-second table and return the table. session: the run's
    memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    sp = xsr_params(params)
    data_root = Path(data_root)

    def body(t: _fio_target.Target):
        span = _fio_target.span_bytes(t)
        points = make_points(sp, t.engine, span, t.raw, t.medium, str(t.tf.path))
        runner = FioRunner({p.name: _pts.fio_job(p, str(t.tf.path)) for p in points})
        rows = _pts.PointRows(EXPERIMENT, host, t.note, data_root)
        info = {"ioengine_requested": sp.common.ioengine, "span_bytes": span, "run_id": points[0].params["run_id"],
                **t.info}
        results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=info, progress=progress,
                            session=session, until=rows)
        _fio_target.remove_when_full(results, t.tf)
        return t, span, results, rows

    t, span, results, rows = _fio_target.on_target(EXPERIMENT, sp.common, data_root, target_dir, host, body,
                                                   session=session)
    return _pts.write_tables(EXPERIMENT, results, rows, host, data_root,
                             lambda times: table(sp, params, results, rows, span, t.raw, times), "groups")


run = run_xsr
