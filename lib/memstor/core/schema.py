"""Exact column names of the tidy tables (DESIGN.md contract). Empty cell = not available."""

import math

FIO_COLUMNS = [
    "source", "host", "jobname", "groupid", "rw", "direction", "bs_bytes", "iodepth", "numjobs",
    "rwmixread", "ioengine", "direct", "iops", "bw_MBps", "lat_mean_us", "lat_stddev_us", "lat_min_us",
    "lat_max_us", "clat_p50_us", "clat_p90_us", "clat_p99_us", "clat_p99_9_us", "clat_p99_99_us",
    "runtime_s", "total_ios", "error", "fio_version", "cpu_usr_pct", "cpu_sys_pct",
]
#: fio's own CPU use (``cpu_usr_pct`` user, ``cpu_sys_pct`` system time) while it ran the row's job: percent
#: of ONE CPU summed over the job's threads (CPU seconds of all its threads per second of the run x 100;
#: 250 = two and a half CPUs busy), to compare with the logical CPUs (is the load generator CPU-bound?).
#: A job-level value: every direction row of a job carries the same number (never add them over directions);
#: numjobs clones without group_reporting are one row each, a group_reporting row is the group's sum. Empty
#: when the output cannot say it (terse-only output, fio 2.x JSON of several threads, tables processed before
#: these columns existed). How fio's usr_cpu/sys_cpu are turned into it: memstor.parse.fio_json.job_cpu_pct.
FIO_CPU_COLUMNS = ("cpu_usr_pct", "cpu_sys_pct")

#: An open-loop point's achieved rate within +- this share (%) of its offered rate, either side: outside it the
#: point is not the open loop its offered rate names (DESIGN.md's open-loop rule; measure, analysis and the
#: validity checks read it here).
OPEN_LOOP_RATE_TOLERANCE_PCT = 5.0

#: Latency columns of the fio schema (total latency lat_*, completion-latency percentiles clat_*), in µs.
FIO_LAT_COLUMNS = ("lat_mean_us", "lat_stddev_us", "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us",
                   "clat_p99_us", "clat_p99_9_us", "clat_p99_99_us")
#: A fleet run's cluster table (``<data>/processed/<fleet>/<experiment>-cluster.csv``, memstor.experiments._fleet):
#: one row per grid point and direction, summed over the hosts measured there; percentiles (µs) from the
#: hosts' merged json+ bins (memstor.analysis.cluster), never averaged and never fio's "All clients".
CLUSTER_COLUMNS = ("experiment", "point", "rw", "bs", "iodepth", "numjobs", "rep", "direction", "hosts",
                   "n_hosts", "iops", "bw_MBps", "total_ios", "clat_p50_us", "clat_p90_us", "clat_p99_us",
                   "clat_p99_9_us", "clat_p99_99_us", "percentile_method")
#: The file-name suffix of cluster tables (a processed folder holding them is a fleet's, not a device's).
CLUSTER_SUFFIX = "-cluster"
#: fio engines that keep one I/O in flight per job (iodepth is ignored).
SYNC_ENGINES = ("psync", "pvsync", "pvsync2", "sync")

MLC_COLUMNS = [
    "source", "run", "tool", "tool_version", "test", "traffic", "read_fraction", "access_bytes",
    "inject_delay", "latency_ns", "bandwidth_MBps", "src_node", "dst_node", "detail",
]

MLC_TESTS = (
    "idle_latency", "loaded_latency", "peak_injection_bandwidth", "max_bandwidth",
    "bandwidth_matrix", "latency_matrix", "c2c_latency",
)

# MLC -W codes -> traffic label and read fraction (share of bytes that are reads, as MLC defines the mix).
TRAFFIC_CODES = {
    "R": ("read-only", 1.0),
    "W2": ("2:1", 2 / 3),
    "W3": ("3:1", 3 / 4),
    "W4": ("3:2", 3 / 5),
    "W5": ("1:1", 1 / 2),
    "W6": ("write-only-nt", 0.0),
    "W7": ("2:1-nt", 2 / 3),
    "W8": ("1:1-nt", 1 / 2),
    "W9": ("3:1-nt", 3 / 4),
    "W10": ("stream-triad", 2 / 3),
}

#: The request mix of each MLC code: (reads, writes, non-temporal writes) per group (W10, the stream-triad
#: kernel, is no plain mix and is left out).
TRAFFIC_MIX = {"R": (1, 0, False), "W2": (2, 1, False), "W3": (3, 1, False), "W4": (3, 2, False),
               "W5": (1, 1, False), "W6": (0, 1, True), "W7": (2, 1, True), "W8": (1, 1, True), "W9": (3, 1, True)}
#: loadlat ``--read_share=P`` traffic: P % of the DRAM traffic is reads (as Mess labels its curves), by
#: construction (:func:`share_mix`); code ``S<P>``, label ``<reads>:<writes>`` (``-nt`` when the writes are
#: non-temporal; ``write-only`` at 50). A share one of MLC's codes mixes keeps that code (100 R, 80 W3, 75 W2,
#: 0 W6): one traffic, one name.
READ_SHARE_PREFIX = "S"


def share_mix(pct: int) -> tuple[int, int, bool]:
    """(reads, writes, non-temporal) per request group whose DRAM traffic is ``pct`` % reads (0..100), in the
    smallest whole numbers. A plain store reads its line for ownership and writes it back later, so r reads
    and w plain writes make r + w DRAM reads and w DRAM writes: from 50 % up r:w = (2P − 100):(100 − P)
    (90 → 8:1, 50 → 0:1). Below 50 % the writes are non-temporal (no read for ownership): r:w = P:(100 − P).
    Valid while the buffers are far larger than the caches. ValueError outside 0..100."""
    pct = int(pct)
    if not 0 <= pct <= 100:
        raise ValueError(f"read share {pct} %: use 0..100")
    nt = pct < 50
    reads, writes = (pct, 100 - pct) if nt else (2 * pct - 100, 100 - pct)
    g = math.gcd(reads, writes)
    return reads // g, writes // g, nt


def read_share_code(pct: int) -> str:
    """The traffic code whose DRAM traffic is ``pct`` % reads (:func:`share_mix`): the MLC code that mixes the
    same (``R``, ``W3``, ``W2``, ``W6``), else ``S<pct>``. ValueError outside 0..100."""
    mix = share_mix(pct)
    return next((code for code, m in TRAFFIC_MIX.items() if m == mix), f"{READ_SHARE_PREFIX}{int(pct)}")


def traffic_info(code) -> tuple[str, float] | None:
    """(label, read fraction 0..1 of the requests) of a traffic code: an MLC ``-W`` code (TRAFFIC_CODES) or a
    loadlat read share ``S<P>`` (label ``r:w``, ``r:w-nt`` or ``write-only``); None when unknown."""
    text = str(code)
    if text in TRAFFIC_CODES:
        return TRAFFIC_CODES[text]
    digits = text[len(READ_SHARE_PREFIX):]
    if not text.startswith(READ_SHARE_PREFIX) or not digits.isdigit() or len(digits) > 3 or int(digits) > 100:
        return None
    reads, writes, nt = share_mix(int(digits))
    label = "write-only" if reads == 0 and not nt else f"{reads}:{writes}{'-nt' if nt else ''}"
    return label, reads / (reads + writes)


def traffic_code_of_label(label) -> str | None:
    """The traffic code of a memstor traffic label (``1:1`` -> W5, ``8:1`` -> S90, ``2:3-nt`` -> S40,
    ``write-only`` -> S50); None when the label names no code."""
    text = str(label)
    for code, (lab, _frac) in TRAFFIC_CODES.items():
        if lab == text:
            return code
    if text == "write-only":
        return read_share_code(50)
    ratio, nt = (text[:-3], True) if text.endswith("-nt") else (text, False)
    reads, sep, writes = ratio.partition(":")
    if not sep or not reads.isdigit() or not writes.isdigit() or int(reads) + int(writes) == 0:
        return None
    r, w = int(reads), int(writes)
    pct = 100 * r / (r + w) if nt else 100 * (r + w) / (r + 2 * w)
    if not pct.is_integer():
        return None
    code = read_share_code(int(pct))
    info = traffic_info(code)
    return code if info is not None and info[0] == text else None


def traffic_fraction(label) -> float | None:
    """Read fraction (0..1) of the requests of a traffic label, None when unknown."""
    code = traffic_code_of_label(label)
    info = traffic_info(code) if code else None
    return info[1] if info else None


# Labels of MLC's peak-injection / max-bandwidth rows -> traffic label.
PEAK_ROW_TRAFFIC = {
    "ALL Reads": "read-only",
    "3:1 Reads-Writes": "3:1",
    "2:1 Reads-Writes": "2:1",
    "1:1 Reads-Writes": "1:1",
    "Stream-triad like": "stream-triad",
}


def impossible_number(value: object, non_negative: bool) -> bool:
    """A cell no tool could have measured: NaN, infinity, past 64 bits, a non-number, or negative where
    the column cannot be (counts, latencies, bandwidths). Strings, booleans and None pass."""
    if value is None or isinstance(value, (str, bool)):
        return False
    if not isinstance(value, (int, float)):
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return True
    if isinstance(value, int) and abs(value) >= 1 << 63:  # no tool prints a counter past 64 bits
        return True
    return non_negative and value < 0


class ParseResult:
    """Rows parsed from one text, and one-line problems ("SOURCE: reason") for what could not be read.

    A plain class with a dataclass's constructor, equality and repr: the dataclass import (it imports inspect)
    cost 8 ms of every `memstor parse` start-up (``python -X importtime``, the 2-vCPU VM; issue 39)."""

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass was)

    def __init__(self, rows: list | None = None, errors: list | None = None) -> None:
        self.rows = [] if rows is None else rows
        self.errors = [] if errors is None else errors

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.rows, self.errors) == (other.rows, other.errors)

    def __repr__(self) -> str:
        return f"ParseResult(rows={self.rows!r}, errors={self.errors!r})"


def truthy(value: object) -> bool:
    """A yes/no cell (``direct``, ``spec_point``, ``iodepth_reached``...) as written to CSV and read back:
    True, 1, 1.0 and the texts true / 1 / 1.0 / yes (any case) are True; False, 0, an empty cell (None,
    NaN) and any other text are False."""
    return str(value).strip().lower() in ("true", "1", "1.0", "yes")


#: The points' provenance beside ``<experiment>.csv`` in ``data/processed/<device>/``: their meta sidecars,
#: copied there at run time (``<experiment>-metas.json``; the bins table is core.fiohist.BINS_SUFFIX).
METAS_SUFFIX = "-metas.json"


def missing(value: object) -> bool:
    """The one rule for "not available": None, NaN, ±inf, pandas' NA/NaT and an empty text are missing;
    0 is a value."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return type(value).__name__ in ("NAType", "NaTType")  # pandas' missing markers, without importing pandas
    return not math.isfinite(f)
