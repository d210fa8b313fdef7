"""fio's ``--status-interval`` stream: cumulative snapshots of a running job -> per-window series.

With ``--status-interval=250ms --output-format=json+ --output=FILE`` fio appends a complete JSON
document to FILE every 250 ms while the job runs (cumulative counts since the job's measurement began),
and the usual final document when it ends, also when it ends on SIGINT (measured on fio-3.33: the final
document then covers the time up to the signal, and fio exits 128). memstor uses the stream to decide
while a point runs whether it is precise enough (memstor.measure.precision); the point's raw output keeps
the final document, the snapshots go to its sidecar folder as :data:`STATUS_NAME`, bytes as fio wrote them.

What the snapshots hold (measured, fio-3.33, 4k randread, ``--ramp_time=1s --numjobs=2 --group_reporting``):

- ``jobs[0][dir].runtime``: the direction's measured wall time in ms (not summed over jobs; the job-level
  ``job_runtime`` is), ``total_ios``, ``io_bytes`` and ``lat_ns`` (mean, N) cumulative;
- during ``ramp_time`` a snapshot already counts I/Os but no latency (``lat_ns.N`` 0); when the ramp
  ends every count restarts from 0 (runtime 892 ms -> 500 ms between two snapshots).

:func:`status_windows` turns the snapshots into the window series memstor.core.batchmeans uses
for interval logs (same columns, :data:`memstor.core.batchmeans.INTERVAL_COLUMNS`): window k spans
snapshot k-1 to snapshot k of the measured period (the first one from the restart after the ramp).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from memstor.core.batchmeans import INTERVAL_COLUMNS

#: The status snapshots inside a point's sidecar folder.
STATUS_NAME = "fio_status.json"
DIRECTIONS = ("read", "write", "trim")
_DOC_START = re.compile(r"^\{", re.M)


def iter_docs(text: str) -> Iterable[tuple[int, int, dict]]:
    """(start, end, doc) of every complete fio JSON document in ``text``, in order: documents start with
    ``{`` at the beginning of a line (fio's layout); other text and a document still being written are
    skipped."""
    decoder = json.JSONDecoder()
    i = 0
    for m in _DOC_START.finditer(text):
        if m.start() < i:
            continue
        try:
            doc, end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(doc, dict) and "jobs" in doc:
            yield m.start(), end, doc
            i = end


def split_final(text: str) -> tuple[str, str]:
    """(status, final) of a status-interval output file: ``final`` is the text before the first document
    (fio's error lines) plus the LAST document; ``status`` the documents before it, as written. ``status``
    is empty when there is at most one document."""
    docs = list(iter_docs(text))
    if len(docs) < 2:
        return "", text
    first, last = docs[0][0], docs[-1][0]
    return text[first:last], text[:first] + text[last:]


def _cumulative(doc: dict) -> dict:
    """{direction: (runtime_ms, total_ios, io_bytes, lat_N, lat_sum_ns)} of one snapshot, jobs summed."""
    out = {}
    for d in DIRECTIONS:
        rt = ios = nbytes = n = total = 0.0
        for job in doc.get("jobs", []):
            dd = job.get(d) or {}
            lat = dd.get("lat_ns") or {}
            rt = max(rt, float(dd.get("runtime") or 0))
            ios += float(dd.get("total_ios") or 0)
            nbytes += float(dd.get("io_bytes") or 0)
            n += float(lat.get("N") or 0)
            total += float(lat.get("mean") or 0) * float(lat.get("N") or 0)
        out[d] = (rt, ios, nbytes, n, total)
    return out


def _in_ramp(c: dict) -> bool:
    """A snapshot taken during ramp_time: I/Os counted, no latency yet."""
    return sum(v[1] for v in c.values()) > 0 and sum(v[3] for v in c.values()) == 0


def _measured(snaps: list[dict]) -> list[dict]:
    """The snapshots of the measured period: after the last restart of the counts (the end of the ramp),
    snapshots still in the ramp left out."""
    out: list[dict] = []
    prev = -1.0
    for c in snaps:
        rt = max(v[0] for v in c.values())
        if rt < prev:  # the counts restarted: what came before was the ramp
            out = []
        prev = rt
        if not _in_ramp(c):
            out.append(c)
    return out


def status_windows(docs: list[dict]) -> pd.DataFrame:
    """The per-window series of a run from its status snapshots ``docs`` (in order); columns of
    memstor.core.batchmeans.INTERVAL_COLUMNS. ``iops`` 1/s, ``bw_MBps`` 10^6 B/s, ``lat_mean_us`` the
    window's mean total latency in us (weight ``lat_ios``: its I/Os with a latency).

    The final document is not a snapshot: the stretch between the last snapshot and the end of the job (a few
    ms when memstor stopped it right after a snapshot) is no window, so the series is exactly what the stop
    rule saw; its I/Os are in fio's whole-run numbers all the same."""
    snaps = _measured([_cumulative(d) for d in docs])
    rows = []
    prev = {d: (0.0, 0.0, 0.0, 0.0, 0.0) for d in DIRECTIONS}
    for k, c in enumerate(snaps, start=1):
        for d in DIRECTIONS:
            rt, ios, nbytes, n, total = (a - b for a, b in zip(c[d], prev[d], strict=True))
            if c[d][1] == 0 or rt <= 0:
                continue
            rows.append({"window": k, "time_ms": c[d][0], "direction": d, "iops": ios * 1000 / rt,
                         "bw_MBps": nbytes / rt / 1000, "lat_mean_us": total / n / 1000 if n > 0 else np.nan,
                         "ios": ios, "lat_ios": n if n > 0 else np.nan, "jobs": 1})
        prev = c
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))


def read_status(text: str) -> list[dict]:
    """The snapshots in a :data:`STATUS_NAME` file's text, in order."""
    return [doc for _, _, doc in iter_docs(text)]
