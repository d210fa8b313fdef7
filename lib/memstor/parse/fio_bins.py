"""fio json+ histograms -> tidy bin rows: the processed bins table (``<experiment>-bins.csv``).

The tables of ``data/processed/`` hold one row per job x direction; the latency histograms behind their
percentiles would otherwise stay in the raw json+ files. This module writes them out as a tidy table
(:data:`memstor.core.fiobins.BIN_COLUMNS`: one row per raw file x job x direction x kind x non-empty bin)
when the raw output is parsed, so that the analysis (clone merging, latency CDFs, service times) reads
``data/processed/`` only. Percentiles and merging are memstor.core.fiohist's.

Units: ``latency_ns`` ns (the bin's representative latency, fio's json+ key), ``count`` I/Os. Pure
(``memstor parse -o OUTDIR`` writes them to ``OUTDIR/fio-bins.csv``: memstor.parse.files.write_bins_csv).
"""

from __future__ import annotations

from memstor.core.errors import MemstorError
from memstor.core.fiobins import BIN_COLUMNS, KINDS
from memstor.parse.fio_json import direction_bins, load_fio_json
from memstor.parse.fio_spec import DIRECTIONS

#: (kind, the entry of a JSON direction holding its histogram: ``clat_ns``...) for each of KINDS.
_HIST_KEYS = tuple((kind, kind + "_ns") for kind in KINDS)


def bin_rows(doc: dict, source: str) -> list[dict]:
    """Tidy bin rows (BIN_COLUMNS) of one fio JSON document: every job (client/server: every host's job,
    "All clients" left out), direction and kind (clat, lat) that has json+ bins; [] without bins.
    source: the raw file as the experiment table names it (relative to the data folder)."""
    jobs = doc.get("jobs") if isinstance(doc.get("jobs"), list) else doc.get("client_stats")
    rows = []
    for job in jobs if isinstance(jobs, list) else []:
        if not isinstance(job, dict) or job.get("jobname") == "All clients":
            continue
        for direction in DIRECTIONS:
            ddir = job.get(direction)
            if not ddir:
                continue  # no entry: no bins (the common case of a trim or an unused direction)
            for kind, key in _HIST_KEYS:
                hist = ddir.get(key)
                if not hist or (isinstance(hist, dict) and not hist.get("bins")):
                    continue  # no histogram of this kind (plain JSON, or total latency not asked for)
                for ns, count in sorted(direction_bins(ddir, kind).items()):
                    if count:
                        rows.append(dict(zip(BIN_COLUMNS, (source, job.get("jobname"), job.get("groupid"),
                                                           direction, kind, ns, count))))
    return rows


def text_bin_rows(text: str, source: str) -> list[dict]:
    """:func:`bin_rows` of raw fio output text; [] when it holds no fio JSON document (text, terse)."""
    try:
        doc = load_fio_json(text)
    except MemstorError:
        return []
    return bin_rows(doc, source)

