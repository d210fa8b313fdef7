"""Whether a point's fio jobs each streamed through their own region of the file (issue 38, S7-bare M-12).

A sequential fio job (rw read, write, rw/readwrite, trim) with numjobs > 1 and no ``--offset_increment`` runs
every clone from offset 0 over the same ``--size``: N streams over the same blocks, which a write-back cache can
merge — not a sequential workload (the fresh-clone run's '128 KiB sequential write': 4 jobs over one 1 GiB,
2,436 MB/s in 1.76 s). memstor gives such jobs disjoint regions since memstor.measure.fio.job_regions; a point
measured before (its meta's command without the option) is said to have overlapped.

Read from each point's meta sidecar (memstor.analysis.dataset: ``host.metas``, the fio argv in ``command``); a
point without a fio command (imported data, ioarrive) is not in the table. Pure: dicts in, a DataFrame out.
"""

from __future__ import annotations

import pandas as pd

from memstor.core.units import parse_size

#: fio's modes whose offsets follow each other (memstor.measure.fio.SEQUENTIAL_MODES, the same list).
SEQUENTIAL = ("read", "write", "rw", "readwrite", "trim")
#: Columns of :func:`regions_table`: what each job works on (fio's --size as written, in bytes) and its offset step
#: (bytes, 0: none).
COLUMNS = ["host", "experiment", "point", "rw", "bs", "numjobs", "size", "size_bytes", "offset_increment_bytes", "overlap",
           "io_size_bytes"]


def _options(command) -> dict[str, str]:
    """{option: value} of a fio argv ('--rw=write' -> {'rw': 'write'}); {} for anything else."""
    if not isinstance(command, (list, tuple)):
        return {}
    return {k[2:]: v for k, _, v in (str(c).partition("=") for c in command) if k.startswith("--")}


def _bytes(text: str | None) -> int:
    try:
        return parse_size(str(text)) if text not in (None, "") else 0
    except (TypeError, ValueError):
        return 0


def regions_table(metas: list[dict]) -> pd.DataFrame:
    """One row per point whose fio command is sequential with numjobs > 1 (:data:`COLUMNS`): ``overlap`` True
    where the jobs shared one region (no or a zero ``--offset_increment``), False where each had its own;
    ``io_size_bytes`` fio's --io_size (bytes each job moves; 0: none, the whole --size)."""
    rows = []
    for m in metas or []:
        o = _options(m.get("command"))
        jobs = o.get("numjobs", "1")
        if o.get("rw") not in SEQUENTIAL or not jobs.isdigit() or int(jobs) <= 1:
            continue
        step = _bytes(o.get("offset_increment"))
        rows.append({"host": m.get("host"), "experiment": m.get("experiment"), "point": m.get("point"),
                     "rw": o["rw"], "bs": o.get("bs"), "numjobs": int(jobs), "size": o.get("size"),
                     "size_bytes": _bytes(o.get("size")),
                     "offset_increment_bytes": step, "overlap": step == 0, "io_size_bytes": _bytes(o.get("io_size"))})
    return pd.DataFrame(rows, columns=COLUMNS)
