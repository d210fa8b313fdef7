"""``jobs_disjoint``: a sequential point with several fio jobs gave each job its own region of the file
(memstor.analysis.job_regions.regions_table, from the points' fio commands; issue 38, S7-bare M-12).

Value: jobs per region — 1 where ``--offset_increment`` steps each job past the others (pass), numjobs where every
job started at offset 0 over the same ``--size`` (fail: N streams over the same blocks, which a write-back cache
can merge, not a sequential workload; its figures are not stated as a sequential one's). Band: low 1 and high 1
(fewer than one job per region cannot be). A point without a fio command has no row (nothing to judge).
The subject ends with the point in parentheses, as the write-saturation checks' do, so the tables that name a
point (the write-saturation runs, the ceilings' left-out figures) find it.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.job_regions import regions_table
from memstor.analysis.validity.rows import FAIL, PASS, row
from memstor.core.units import size_text

_SECTION = "storage_points"
_UNIT = "jobs per region"


def region_rows(metas: list[dict] | None) -> list[dict]:
    """jobs_disjoint per sequential multi-job point of the meta sidecars (each with its device as ``host``;
    memstor.analysis.job_regions.regions_table)."""
    return [_row(r) for _, r in regions_table(metas or []).iterrows()]


def _row(r: pd.Series) -> dict:
    jobs, size = int(r["numjobs"]), size_text(int(r["size_bytes"])) if r["size_bytes"] else "?"
    subject = f"{r['experiment']} {r['rw']} {r['bs']}, {jobs} jobs ({r['point']})"
    if not r["overlap"]:
        step = size_text(int(r["offset_increment_bytes"]))
        return row(r["host"], "jobs_disjoint", subject, PASS, 1, 1, _UNIT,
                   f"{jobs} jobs of rw={r['rw']}, each through its own {size} region (offset_increment {step})",
                   "", _SECTION, low=1, high=1)
    io = int(r.get("io_size_bytes") or 0)
    less = 0 < io < int(r["size_bytes"] or 0)  # each job moved only its first io_size bytes (R-def p5)
    part = f"first {size_text(io)} of the same {size}" if less else f"same {size}"
    evidence = (f"{jobs} jobs of rw={r['rw']} over the {part} from offset 0 (fio's size={r['size']} each"
                + (f", io_size={io}" if less else "") + ", no offset_increment): the jobs overlapped")
    consequence = (f"not a sequential workload: {jobs} streams over the same blocks, which a write-back cache can "
                   "merge; its figures are not a sequential write's or read's and are not stated as one")
    return row(r["host"], "jobs_disjoint", subject, FAIL, jobs, 1, _UNIT, evidence, consequence, _SECTION,
               low=1, high=1)
