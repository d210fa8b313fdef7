"""fio-pts-cbw: the SNIA PTS composite block-size workload (CBW) test: a mixed, enterprise-like workload
(twelve block sizes from 512 B to 64 KiB, 40 % reads, hot LBA bands) over the thread x queue-depth sweep.

Definitions followed (SNIA Solid State Storage Performance Test Specification (PTS) 2.0.2, the enterprise
(PTS-E) CBW test, which continues PTS-E 1.1 §12 "Enterprise Composite Workload (ECW)"; the mix is JEDEC
JESD219's enterprise workload). Read through open PTS implementations, not the PDF (not reachable here): the
block-size and LBA tables as Transcend's PTS 2.0 fork of cloudharmony/block-storage writes them
("Composite Block Size Access Probabilities", "CBW Access Range Distribution Restrictions"; upstream
cloudharmony marks ECW and DIRTH "not yet implemented"), the rest as the PTS-E ECW/CBW scripts that cite the
PTS run them:

- **Block sizes** (share of I/Os): 512 B 4 %, 1 KiB 1 %, 1.5 KiB 1 %, 2 KiB 1 %, 2.5 KiB 1 %, 3 KiB 1 %,
  3.5 KiB 1 %, 4 KiB 67 %, 8 KiB 10 %, 16 KiB 7 %, 32 KiB 3 %, 64 KiB 3 % (:data:`PTS_BSSPLIT`, fio ``bssplit``);
- **LBA access ranges** (share of I/Os -> share of the span): 50 % to the first 5 % (LBA group A), 30 % to the
  next 15 % (B), 20 % to the remaining 80 % (C) (:data:`PTS_ZONES`, fio ``random_distribution=zoned``);
- **R/W mix** 40:60 (40 % reads), random, O_DIRECT;
- **Pre-conditioning and steady state**: the CBW access pattern at 100 % writes at the top corner T32 Q32,
  1-minute rounds until the PTS steady-state rule (§2.1.24, memstor.analysis.steady_state) holds on IOPS, at
  most 25 rounds (``precondition_rwmixread``: 0, ``max_rounds``);
- **Demand intensity**: every thread count T x queue depth Q, each 1, 2, 4, 6, 8, 16, 32 (49 points, as the PTS
  2.0 implementation Alan-ADATA/SSS-PTS-TEST test/lib/BlockStorageTestCbw.php runs it; memstor had 1..32
  without 6, from memory), 1 minute each, from the highest demand down; per point IOPS, MB/s, mean and maximum
  response time and the response-time distribution (fio's json+ total-latency bins ->
  memstor.analysis.pts_demand: p99, p99.99, histograms).

The PTS 2.0.2 text itself was not reachable here (the stored transcriptions hold only the first pages;
docs/pts-sources.md says what was searched): the block sizes, bands, R/W mix and T32 Q32 pre-conditioning above
agree in the two implementations read (Transcend's fork, Alan-ADATA/SSS-PTS-TEST). That implementation also
repeats "5 min T32 Q32 pre-writes + the matrix" until the matrix's T32 Q32 point is steady and then takes
response-time histograms (60 min pre-writes + 10 min) at a MaxIOPS (mean response time < 5 ms), MidIOPS and
MinIOPS (T1 Q1) point; memstor runs the matrix once and reports every point's histogram (departures below).

The run is memstor.experiments._pts_matrix's (phases, point names, table columns). Every row's ``departure``
(memstor.experiments._pts.departure) says where the run departs from the above: point length (``runtime_s``,
PTS 60 s), a warm-up, a smaller matrix, another mix or bands, buffered I/O, the span (a test file instead of the
device), no purge first (memstor does not secure-erase), steady state not reached. Departures of every memstor
run, not repeated in the rows: fio's data buffers are random but reused between I/Os (no ``refill_buffers``); T
are fio processes, not threads; no 4 KiB alignment of the larger blocks (fio aligns to the smallest block,
512 B); one pass of the matrix, without inter-round pre-writes; no separate histogram captures at the
MaxIOPS / MidIOPS / MinIOPS points (every matrix point's own histogram instead).

``iolog: true`` (optional) writes fio's iolog of every T = 1 point (``<point>.files/fio.iolog``): the I/Os'
sizes and offsets, to check the mix against (tests/test_pts_demand.py).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._pts as _pts
import memstor.experiments._pts_matrix as _pts_matrix
from memstor.core.validate import Section
from memstor.measure.fio import bssplit_error, distribution_error
from memstor.measure.sweep import SweepSession

EXPERIMENT = "fio-pts-cbw"
NOTEBOOK = "58-fio-pts-cbw"
KIND = "fio"
#: This family's own keys, beside COMMON_KEYS of memstor.experiments._pts_matrix (runtime_s = seconds per point).
KEYS = ("threads", "qd", "rwmixread", "bssplit", "random_distribution", "max_rounds", "precondition_rwmixread")
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS + ("iolog",)
#: The PTS's CBW block-size mix (fio bssplit: size/% of I/Os) and LBA bands (fio zoned: % of I/Os/% of the span).
PTS_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
PTS_ZONES = "zoned:50/5:30/15:20/80"
#: % reads of the measured points and of the pre-conditioning / steady-state rounds (100 % writes).
PTS_RWMIXREAD, PTS_PRECONDITION_RWMIXREAD = 40, 0
#: fio needs a block size beside bssplit; it draws every I/O's size from bssplit (checked on the iolog).
NOMINAL_BS = "4k"


def _departures(mix: int, pc_mix: int, bssplit: str, zones: str) -> tuple:
    """How the workload differs from the PTS's CBW (memstor.experiments._pts.instead texts; None: the same)."""
    return (_pts.instead("rwmixread", mix, PTS_RWMIXREAD, " %"),
            _pts.instead("precondition_rwmixread", pc_mix, PTS_PRECONDITION_RWMIXREAD, " %"),
            _pts.instead("bssplit", bssplit, PTS_BSSPLIT), _pts.instead("random_distribution", zones, PTS_ZONES))


def cbw_params(params: dict) -> _pts_matrix.MatrixParams:
    """Validate a fio-pts-cbw section (UsageError naming the parameter, the value and the way out)."""
    v = Section(EXPERIMENT)
    c = _pts_matrix.common_params(v, params, KEYS, ("iolog",))
    bssplit, zones = str(params["bssplit"]).strip(), str(params["random_distribution"]).strip()
    why = bssplit_error(bssplit, c.file_size_bytes, bool(c.direct))
    if why:
        raise v.error("bssplit", params["bssplit"], why)
    why = distribution_error(zones, c.file_size_bytes)
    if why:
        raise v.error("random_distribution", params["random_distribution"], why)
    work = _pts_matrix.mix_workload(v, "rwmixread", params["rwmixread"], NOMINAL_BS, bssplit, zones)
    steady = _pts_matrix.mix_workload(v, "precondition_rwmixread", params["precondition_rwmixread"], NOMINAL_BS,
                                      bssplit, zones)
    threads = _pts_matrix.tq_list(v, "threads", params["threads"])
    iolog = v.boolean("iolog", params.get("iolog", False))
    if iolog and 1 not in threads:
        raise v.error("iolog", params["iolog"], "fio writes an iolog for one job only: add 1 to threads, or drop iolog")
    return _pts_matrix.MatrixParams(
        experiment=EXPERIMENT, common=c, threads=threads, qd=_pts_matrix.tq_list(v, "qd", params["qd"]),
        workload=work, steady=steady, max_rounds=_pts_matrix.max_rounds(v, params["max_rounds"]), iolog=iolog,
        profile=str(params.get("profile") or ""),
        workload_departures=_departures(int(params["rwmixread"]), int(params["precondition_rwmixread"]), bssplit, zones))


def run_cbw(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
            session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-pts-cbw; write and return its table (memstor.experiments._pts_matrix.TABLE_COLUMNS)."""
    return _pts_matrix.run_matrix(cbw_params(params), data_root=data_root, target_dir=target_dir, host=host,
                                  progress=progress, session=session)


#: The experiment table's columns.
TABLE_COLUMNS = _pts_matrix.TABLE_COLUMNS
validate = cbw_params
run = run_cbw
