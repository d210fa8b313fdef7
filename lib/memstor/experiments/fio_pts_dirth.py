"""fio-pts-dirth: the SNIA PTS demand intensity / response-time histogram (DIRTH) test: how IOPS and response
time follow the demand (threads x queue depth), where the device's best operating point is, and what its
response times look like there.

Definitions followed (SNIA Solid State Storage Performance Test Specification (PTS) 2.0.2, the DIRTH test,
which continues PTS-E 1.1's). The PTS 2.0.2 text was NOT reachable here (searched: the SNIA PDF, its
transcriptions on fdocuments.us / technodocbox.com / pdfslide.net, whose stored copies hold only the first
pages); the values below follow the one open implementation of PTS 2.0 DIRTH found, Alan-ADATA/SSS-PTS-TEST
(test/lib/BlockStorageTestDirth.php, web/t_test.php); all but the 100 % write pre-conditioning are profile keys (docs/pts-sources.md has the
sources and what memstor had before):

- **Workload**: random 8 KiB at 65:35 R/W ("DIRTH - OLTP - RND 8KiB RW=65:35"; the implementation lets the
  operator choose block size and R/W mix, these are its defaults) (``bs``: 8k, ``rwmixread``: 65), O_DIRECT,
  over the whole span. memstor had RND 4 KiB 100 % writes;
- **Pre-conditioning and steady state**: RND ``bs`` at 100 % writes (always: :data:`PTS_PRECONDITION_RWMIXREAD`;
  memstor had run its rounds with the matrix's workload, the same only while that was 100 % writes) at the top
  corner T32 Q32, ``runtime_s`` rounds (1 min) until the PTS steady-state rule (§2.1.24: a 5-round window within
  20 % data and 10 % slope excursion; memstor.analysis.steady_state) holds on IOPS, at most 25 rounds
  (``max_rounds``). The implementation then repeats "5 min T32 Q32 pre-writes + the whole matrix" until the
  matrix's T32 Q32 point is steady; memstor runs the matrix once (a departure, memstor.experiments._pts_matrix);
- **Demand intensity matrix**: thread counts T x queue depths Q, each 1, 2, 4, 6, 8, 16, 32 (49 points), 1 minute
  each, from the highest demand down;
- **Points**: the PTS's MaxIOPS point is the highest-IOPS point whose AVERAGE response time is under 5 ms (the
  implementation: ``$art < 5`` on fio's mean ``lat``, "shall be below 5 ms"): memstor's ``optimal`` role with
  ``response_time_ceiling_us``: 5000 µs, mean total latency (memstor.analysis.pts_demand); MinIOPS is T1 Q1
  (memstor's ``min``); MidIOPS, the point under the ceiling whose IOPS is nearest (MaxIOPS + MinIOPS) / 2, is
  memstor's ``mid``; memstor's ``max IOPS`` role (the highest IOPS, no ceiling) is not a PTS point;
- **Response-time histograms** at those points: a separate capture of ``histogram_s`` at each (PTS: 10 min,
  after 60 min of pre-writes at that T x Q, which memstor does not run), or with ``histogram_s: 0`` the matrix
  points' own json+ total-latency histograms (a departure);
- **Demand-intensity curves**: IOPS and mean response time against the total outstanding I/O T x Q, one curve
  per T.

The run is memstor.experiments._pts_matrix's (phases, point names, table columns); every row's ``departure``
(memstor.experiments._pts.departure) says where it departs from the above (point length, matrix, workload,
ceiling, histogram length, span, no purge first, steady state not reached). Departures of every memstor run,
not repeated in the rows: one pass of the matrix without inter-round pre-writes, no 60 min
pre-writes before the histogram captures, fio's data buffers reused between I/Os, T are fio processes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._pts as _pts
import memstor.experiments._pts_matrix as _pts_matrix
from memstor.core.validate import Section
from memstor.measure.sweep import SweepSession

EXPERIMENT = "fio-pts-dirth"
NOTEBOOK = "59-fio-pts-dirth"
KIND = "fio"
#: This family's own keys, beside COMMON_KEYS of memstor.experiments._pts_matrix (runtime_s = seconds per point).
KEYS = ("threads", "qd", "bs", "rwmixread", "max_rounds", "response_time_ceiling_us", "histogram_s")
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS
#: The PTS's DIRTH workload (RND 8 KiB, 65 % reads), its pre-conditioning (100 % writes) and mean-response-time
#: ceiling of the MaxIOPS point (µs): the PTS 2.0 implementation's (module docstring).
PTS_BS, PTS_RWMIXREAD, PTS_PRECONDITION_RWMIXREAD, PTS_CEILING_US = "8k", 65, 0, 5000.0
#: Longest histogram capture accepted (s): the PTS's 10 min x 6.
MAX_HISTOGRAM_S = 3600


def _departures(bs: str, mix: int, ceiling_us: float) -> tuple:
    """How the workload and the ceiling differ from the PTS's DIRTH (memstor.experiments._pts.instead texts)."""
    return (_pts.instead("bs", bs, PTS_BS), _pts.instead("rwmixread", mix, PTS_RWMIXREAD, " %"),
            _pts.instead("response_time_ceiling_us", ceiling_us, PTS_CEILING_US, " µs"))


def dirth_params(params: dict) -> _pts_matrix.MatrixParams:
    """Validate a fio-pts-dirth section (UsageError naming the parameter, the value and the way out)."""
    v = Section(EXPERIMENT)
    c = _pts_matrix.common_params(v, params, KEYS)
    bs = _fio_params.single_block_size(v, params, c)
    work = _pts_matrix.mix_workload(v, "rwmixread", params["rwmixread"], bs)
    steady = _pts_matrix.Workload(rw="randwrite", bs=bs, rwmixread=None)  # PTS_PRECONDITION_RWMIXREAD: 0
    ceiling = v.number("response_time_ceiling_us", params["response_time_ceiling_us"])
    hist_s = v.seconds("histogram_s", params["histogram_s"], positive=False)
    if hist_s > MAX_HISTOGRAM_S:
        raise v.error("histogram_s", params["histogram_s"], f"seconds per capture, at most {MAX_HISTOGRAM_S} (PTS: "
                      f"{_pts_matrix.PTS_HISTOGRAM_S}); 0: the matrix points' own histograms")
    return _pts_matrix.MatrixParams(
        experiment=EXPERIMENT, common=c, threads=_pts_matrix.tq_list(v, "threads", params["threads"]),
        qd=_pts_matrix.tq_list(v, "qd", params["qd"]), workload=work, steady=steady,
        max_rounds=_pts_matrix.max_rounds(v, params["max_rounds"]), ceiling_us=ceiling, histogram_s=hist_s,
        histograms=True, profile=str(params.get("profile") or ""),
        workload_departures=_departures(bs, int(params["rwmixread"]), ceiling))


def run_dirth(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
              session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-pts-dirth; write and return its table (memstor.experiments._pts_matrix.TABLE_COLUMNS)."""
    return _pts_matrix.run_matrix(dirth_params(params), data_root=data_root, target_dir=target_dir, host=host,
                                  progress=progress, session=session)


#: The experiment table's columns.
TABLE_COLUMNS = _pts_matrix.TABLE_COLUMNS
validate = dirth_params
run = run_dirth
