"""fio job options and the row skeleton shared by every fio output format (JSON, normal text, terse).

A job's spec (rw, block size per direction, iodepth, numjobs, rwmixread, ioengine, direct) comes from
its options as fio reads them, with fio's defaults where an option was not set; ``base_row`` turns a
spec into a row of ``memstor.core.schema.FIO_COLUMNS`` with the metric columns still empty.

Units: ``bs_bytes`` bytes (``kb_base=1000`` honoured for option values), ``iodepth``/``numjobs``
counts, ``rwmixread`` percent of I/O that reads (0-100), ``direct`` 0/1. Percentile columns are
microseconds (``percentile_columns`` scales from the unit of its input). Pure functions.
"""

from __future__ import annotations

import math
import re

from memstor.core.schema import FIO_COLUMNS
from memstor.core.units import parse_size
from memstor.parse.guards import one_line

DIRECTIONS = ("read", "write", "trim")
_RW_DIRECTIONS = {
    "read": ("read",), "randread": ("read",), "write": ("write",), "randwrite": ("write",),
    "trim": ("trim",), "randtrim": ("trim",), "rw": ("read", "write"), "readwrite": ("read", "write"),
    "randrw": ("read", "write"), "trimwrite": ("trim", "write"), "randtrimwrite": ("trim", "write"),
}
MIXED = {"rw", "readwrite", "randrw"}
PERCENTILE_COLUMNS = (
    ("clat_p50_us", 50.0), ("clat_p90_us", 90.0), ("clat_p99_us", 99.0),
    ("clat_p99_9_us", 99.9), ("clat_p99_99_us", 99.99),
)
METRIC_COLUMNS = (
    "iops", "bw_MBps", "lat_mean_us", "lat_stddev_us", "lat_min_us", "lat_max_us",
    *(c for c, _ in PERCENTILE_COLUMNS), "runtime_s", "total_ios",
)
#: Every job option :func:`spec_from_options` reads (fio's names and aliases). memstor.parse.fio_json remembers a
#: job's layout per the values of these options, so an option read there must be named here too
#: (tests/test_parse_identical.py records what spec_from_options reads).
SPEC_OPTIONS = ("rw", "readwrite", "iodepth", "numjobs", "kb_base", "bs", "blocksize", "bsrange", "blocksize_range",
                "bssplit", "rwmixread", "rwmixwrite", "ioengine", "direct", "buffered")
# Factor from a time unit fio prints to microseconds.
TO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}


# ----------------------------------------------------------------------------------------- values
def leading_int(value) -> int | None:
    """fio-style integer of an option value (``"32,"`` -> 32, ``"1"`` -> 1); None when there is none."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    match = re.match(r"\s*(\d{1,18})(?!\d)", str(value))
    return int(match.group(1)) if match else None


def rw_name(value) -> str | None:
    """Normalised rw option (``randread:8`` -> ``randread``); None when unknown."""
    if not value:
        return None
    name = str(value).split(":")[0].strip().lower()
    return name if name in _RW_DIRECTIONS else None


def directions(rw: str | None, rwmixread: int | None) -> tuple[str, ...]:
    """Directions a job asks for; rwmixread 0/100 drops the unused side of a mixed job."""
    dirs = _RW_DIRECTIONS.get(rw or "", ())
    if rw in MIXED and rwmixread == 100:
        return ("read",)
    if rw in MIXED and rwmixread == 0:
        return ("write",)
    return dirs


def pct_key(text: str) -> float:
    """Percentile key (``"99.900000"``, ``"99.9"``) as a float rounded for lookup."""
    return round(float(text), 4)


def percentile_columns(pcts: dict[float, float], scale_to_us: float) -> dict:
    """Schema percentile columns (us) from {percentile: value}; a missing percentile stays None."""
    out = {}
    for column, p in PERCENTILE_COLUMNS:
        value = pcts.get(p)
        out[column] = None if value is None else value * scale_to_us
    return out


def _version_major(version: str | None) -> int | None:
    """Major number of ``fio-3.36`` (3), or None."""
    match = re.search(r"(\d+)\.", version or "")
    return int(match.group(1)) if match else None


# ------------------------------------------------------------------------------------ job options
def _split_bs(value: str, kb_base: int) -> dict[str, int | None]:
    """Block size (bytes) per direction from a fio ``bs`` value (``4k``, ``8k,32k``, ``8k,32k,``, ``,8k``).

    fio's rule: a value not followed by a comma also applies to the directions after it.
    """
    parts = str(value).split(",")
    out: dict[str, int | None] = {}
    last: int | None = 4096
    for i, ddir in enumerate(DIRECTIONS):
        if i < len(parts):
            text = parts[i].strip()
            size = _safe_size(text, kb_base) if text else 4096
            out[ddir] = size
            last = size if (i == len(parts) - 1) else 4096
        else:
            out[ddir] = last
    return out


def _safe_size(text: str, kb_base: int) -> int | None:
    """parse_size (bytes), or None for text fio would not read as a size."""
    try:
        return parse_size(text, kb_base)
    except ValueError:
        return None


def _bs_from_options(opts: dict, defaults: bool) -> dict[str, int | None]:
    """Block size (bytes) per direction from job options (bs / blocksize / bsrange); None when it varies."""
    kb_base = 1000 if leading_int(opts.get("kb_base")) == 1000 else 1024
    for key in ("bs", "blocksize"):
        if opts.get(key):
            return _split_bs(opts[key], kb_base)
    for key in ("bsrange", "blocksize_range", "bssplit"):
        if opts.get(key):
            return _bs_from_range(str(opts[key]), kb_base) if key != "bssplit" else {}
    return dict.fromkeys(DIRECTIONS, 4096) if defaults else {}


def _bs_from_range(value: str, kb_base: int) -> dict[str, int | None]:
    """Block size (bytes) per direction from ``bsrange=1k-4k,2k-2k``: a value only where min == max."""
    out: dict[str, int | None] = {}
    for ddir, part in zip(DIRECTIONS, value.split(",")):
        low, _, high = part.partition("-")
        a, b = _safe_size(low, kb_base), _safe_size(high or low, kb_base)
        out[ddir] = a if a is not None and a == b else None
    return out


def _default_engine(version: str | None) -> str:
    """fio's default ioengine: psync in fio 3.x, sync before."""
    major = _version_major(version)
    return "sync" if major is not None and major < 3 else "psync"


def _rwmixread(opts: dict, rw: str | None, defaults: bool) -> int | None:
    """% reads of a mixed job (rwmixread, or 100 - rwmixwrite, default 50); None for other jobs."""
    if rw not in MIXED:
        return None
    value = leading_int(opts.get("rwmixread"))
    write = leading_int(opts.get("rwmixwrite"))
    if value is None and write is not None:
        value = 100 - write
    return value if value is not None or not defaults else 50


def _direct(opts: dict, defaults: bool) -> int | None:
    """direct as 0/1 (``buffered=0`` means direct; a bare ``direct`` flag means 1)."""
    for key, invert in (("direct", False), ("buffered", True)):
        if key in opts:
            value = opts[key]
            flag = 1 if value in ("", None) else int(bool(leading_int(value)))
            return 1 - flag if invert else flag
    return 0 if defaults else None


def spec_from_options(opts: dict, version: str | None, defaults: bool) -> dict:
    """Job-spec columns from fio job options; fio's defaults fill what was not set (if ``defaults``)."""
    rw = rw_name(opts.get("rw") or opts.get("readwrite")) or ("read" if defaults else None)
    iodepth = leading_int(opts.get("iodepth"))
    numjobs = leading_int(opts.get("numjobs"))
    return {
        "rw": rw,
        "bs": _bs_from_options(opts, defaults),
        "iodepth": iodepth if iodepth is not None or not defaults else 1,
        "numjobs": numjobs if numjobs is not None or not defaults else 1,
        "rwmixread": _rwmixread(opts, rw, defaults),
        "ioengine": opts.get("ioengine") or (_default_engine(version) if defaults else None),
        "direct": _direct(opts, defaults),
    }


# ------------------------------------------------------------------------------------------- rows
def base_row(source, host, jobname, groupid, spec: dict, ddir, error, version) -> dict:
    """A row with exactly the schema's columns: job/spec columns filled, metrics empty."""
    row = dict.fromkeys(FIO_COLUMNS)
    row["source"] = source
    row.update(host=host, jobname=jobname, groupid=leading_int(groupid), rw=spec.get("rw"),
               direction=ddir, bs_bytes=(spec.get("bs") or {}).get(ddir), iodepth=spec.get("iodepth"),
               numjobs=spec.get("numjobs"), rwmixread=spec.get("rwmixread"),
               ioengine=spec.get("ioengine"), direct=spec.get("direct"), error=error,
               fio_version=version)
    return row


def damaged_job_line(source: str, job: str, err: Exception) -> str:
    """The one error line for a job skipped because its part of the output is damaged."""
    return one_line(f"{source}: job {job} is damaged, skipped ({type(err).__name__}: {err})", 300)
