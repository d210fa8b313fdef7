"""fio's normal (human) text output of fio 2.x and 3.x, alone or mixed with terse lines -> rows.

What is read, line by line: the ``fio-3.36`` banner (version), job definition lines
``name: (g=0): rw=randread, bs=(R) 4096B-4096B, ..., ioengine=libaio, iodepth=32`` (rw, block size,
engine, depth), result headers ``name: (groupid=0, jobs=1): err= 0``, direction lines (3.x
``read: IOPS=551k, BW=2152MiB/s (2256MB/s)(...)(.../1000msec)``, 2.x ``read : io=..., bw=...KB/s,
iops=..., runt= 1000msec``), ``lat (usec): min=...`` lines, ``clat percentiles (nsec):`` tables, the
``issued rwts: total=...`` counts, client/server ``<host>`` prefixes and ``hostname=..., fio=...``
banners, and terse lines (memstor.parse.fio_terse). Any number of runs may be concatenated.

Units as fio prints them: IOPS and counts with decimal suffixes (``551k``), rates in KiB/s-style
binary units (3.x also decimal in parentheses; 2.x ``KB/s`` means KiB/s), sizes in binary units,
latencies in the unit of the line. Units of the rows: ``bw_MBps`` decimal MB/s (bytes/s / 1e6),
latencies microseconds, ``runtime_s`` seconds, ``bs_bytes`` bytes. IOPS and bandwidth are recomputed
from the exact I/O count and runtime where that agrees with fio's rounded print. Pure functions.
"""

from __future__ import annotations

import re

from memstor.parse.fio_spec import (
    DIRECTIONS,
    METRIC_COLUMNS,
    MIXED,
    TO_US,
    base_row,
    damaged_job_line,
    directions,
    pct_key,
    percentile_columns,
    rw_name,
)
from memstor.parse.fio_terse import (
    is_terse,
    pair_terse,
    refine_from_terse,
    terse_record,
    terse_rows,
    twin_cpu,
)
from memstor.parse.guards import DAMAGE

_HOST_PREFIX = re.compile(r"^<([^>]*)> ?")
_CLIENT_BANNER = re.compile(r"hostname=([^,\s]+),.*\bfio=(fio-[^,\s]+)")
_BANNER = re.compile(r"^(fio-\d[^\s]*)\s*$")
_JOB_DEF = re.compile(r"^(?P<name>.*?): \(g=(?P<g>\d+)\): rw=(?P<rw>\w+), bs=(?P<bs>.*?), "
                      r"ioengine=(?P<engine>[^,\s]+), iodepth=(?P<depth>\d+)")
_RESULT = re.compile(r"^(?P<name>.*?): \(groupid=(?P<g>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>-?\d+)")
_DIR3 = re.compile(r"^\s+(?P<d>read|write|trim)\s*: IOPS=(?P<iops>[\d.]+[kKMG]?), BW=(?P<bw>[^\s(]+)"
                   r"(?:\s*\((?P<bwdec>[^)]+)\))?\s*\((?P<io>[^/]*)/(?P<ms>\d+)msec\)")
_DIR2 = re.compile(r"^\s+(?P<d>read|write|trim)\s*: io=(?P<io>[^,]+), bw=(?P<bw>[^,]+), "
                   r"iops=(?P<iops>[\d.]+[kKMG]?), runt=\s*(?P<ms>\d+)msec")
_LAT = re.compile(r"^\s+(?P<kind>s?c?lat) \((?P<unit>[nmu]?sec)\): min=\s*(?P<min>[\d.]+[kKMG]?), "
                  r"max=\s*(?P<max>[\d.]+[kKMG]?), avg=\s*(?P<avg>[\d.]+), stdev=\s*(?P<sd>[\d.]+)")
_PCT_HEAD = re.compile(r"^\s+(?P<kind>c?lat) percentiles \((?P<unit>[nmu]?sec)\):")
_PCT_ITEM = re.compile(r"([\d.]+)th=\[\s*([\d.]+)([kKM]?)\]")
_CPU = re.compile(r"^\s+cpu\s*: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%")
_ISSUED = re.compile(r"^\s+issued[^:]*:\s*total=(?P<tot>\S+)")
_BS_SIDE = re.compile(r"\(([RWT])\)\s*([\d.]+\s*[KMGTP]?i?B?)-([\d.]+\s*[KMGTP]?i?B?)")
_OUT_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


# ---------------------------------------------------------------------------------- printed values
def _si_number(text: str) -> float:
    """A number printed by fio with an optional decimal suffix (``551k`` -> 551000, ``1273.6k``)."""
    text = text.strip()
    if text and text[-1] in _SI and not text[-1].isdigit():
        return float(text[:-1]) * _SI[text[-1]]
    return float(text)


def _out_size(text: str) -> int | None:
    """Bytes of a size fio *printed* (``4096B``, ``32.0KiB``, ``4K``): always powers of two."""
    match = re.match(r"\s*([\d.]+)\s*([KMGTP]?)", text, re.I)
    if not match:
        return None
    return round(float(match.group(1)) * _OUT_UNITS[match.group(2).lower()])


def _rate_MBps(text: str, decimal: bool) -> float | None:
    """Decimal MB/s of a printed rate (``2256MB/s``, ``19.0GiB/s``, 2.x ``104857KB/s`` = KiB/s)."""
    match = re.match(r"\s*([\d.]+)\s*([kKMGTP]?)(i?)B/s", text)
    if not match:
        return None
    value, prefix, iec = float(match.group(1)), match.group(2).lower(), match.group(3)
    power = " kmgtp".index(prefix or " ")
    base = 1000 if (decimal and not iec) else 1024
    return value * base**power / 1e6


def _text_bs(field: str) -> dict[str, int | None]:
    """Block size (bytes) per direction from a job line's ``bs=`` field (3.x ``(R) 4096B-4096B, (W) ...``
    or 2.x ``4K-4K/4K-4K/4K-4K``); None where min != max."""
    out: dict[str, int | None] = {}
    sides = _BS_SIDE.findall(field)
    if sides:
        for letter, low, high in sides:
            a, b = _out_size(low), _out_size(high)
            out[{"R": "read", "W": "write", "T": "trim"}[letter]] = a if a == b else None
        return out
    for ddir, part in zip(DIRECTIONS, field.split("/")):
        low, _, high = part.partition("-")
        a, b = _out_size(low), _out_size(high or low)
        out[ddir] = a if a == b else None
    return out


# ------------------------------------------------------------------------------------ the scanner
class _TextState:
    """What the line scanner knows so far: version, host, job definitions and result records."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.host: str | None = None
        self.defs: dict[tuple[str, int], dict] = {}
        self.records: list[dict] = []
        self.record: dict | None = None
        self.ddir: dict | None = None
        self.pct_scale: float | None = None
        self.terse: list[dict] = []


def _start_record(st: _TextState, m: re.Match) -> None:
    """A ``name: (groupid=G, jobs=N): err= E`` header opens a result record."""
    key = (m.group("name"), int(m.group("g")))
    err = re.search(r"error=([^)]*)\)", m.string)
    st.record = {"name": key[0], "groupid": key[1], "jobs": int(m.group("jobs")),
                 "error": int(m.group("err")), "errmsg": err.group(1) if err else None,
                 "def": st.defs.get(key), "version": st.version, "host": st.host,
                 "dirs": {}, "totals": None, "cpu": None}
    st.records.append(st.record)
    st.ddir = None
    st.pct_scale = None


def _start_direction(st: _TextState, m: re.Match, v3: bool) -> None:
    """A ``read: IOPS=...`` (3.x) or ``read : io=..., iops=`` (2.x) line opens a direction."""
    if st.record is None:
        return
    ms = int(m.group("ms"))
    if v3 and m.group("bwdec"):
        bw = _rate_MBps(m.group("bwdec"), decimal=True)
    else:
        bw = _rate_MBps(m.group("bw"), decimal=v3)
    st.ddir = {"iops": _si_number(m.group("iops")), "bw_MBps": bw, "runtime_ms": ms, "pcts": {}}
    st.record["dirs"][m.group("d")] = st.ddir
    st.pct_scale = None


def _scan_line(st: _TextState, line: str) -> None:
    """Update the state with one line of normal/terse fio text."""
    prefix = _HOST_PREFIX.match(line)
    if prefix:
        line = line[prefix.end():]
    stripped = line.strip()
    if not stripped:
        return
    if is_terse(stripped):
        rec = terse_record(stripped, st.version, st.host)
        if rec is not None:
            st.terse.append(rec)
    elif st.pct_scale is not None and stripped.startswith("|"):
        assert st.ddir is not None  # pct_scale is set only inside a direction (and reset with it)
        for p, value, suffix in _PCT_ITEM.findall(stripped):
            st.ddir["pcts"][pct_key(p)] = float(value) * _SI[suffix] * st.pct_scale
    else:
        st.pct_scale = None
        _scan_normal(st, line, stripped)


def _scan_normal(st: _TextState, line: str, stripped: str) -> None:
    """Dispatch one non-terse, non-percentile line."""
    if line[:1] != " ":
        _scan_top_level(st, line, stripped)
        return
    m = _LAT.match(line)
    if m and st.ddir is not None:
        if m.group("kind") == "lat":
            scale = TO_US[m.group("unit")]
            st.ddir["lat"] = tuple(_si_number(m.group(k)) * scale for k in ("min", "max", "avg", "sd"))
        return
    m = _PCT_HEAD.match(line)
    if m and st.ddir is not None:
        st.pct_scale = TO_US[m.group("unit")] if m.group("kind") == "clat" else None
        return
    m = _DIR3.match(line) or _DIR2.match(line)
    if m:
        _start_direction(st, m, v3=m.re is _DIR3)
        return
    m = _CPU.match(line)
    if m and st.record is not None:
        st.record["cpu"] = (float(m.group("usr")), float(m.group("sys")))
        st.ddir = None
        return
    m = _ISSUED.match(line)
    if m and st.record is not None:
        st.record["totals"] = [int(x) for x in re.findall(r"\d+", m.group("tot"))]
        st.ddir = None


def _scan_top_level(st: _TextState, line: str, stripped: str) -> None:
    """Lines that start in column 0: banners, job definitions, result headers."""
    m = _RESULT.match(line)
    if m:
        _start_record(st, m)
        return
    m = _JOB_DEF.match(line)
    if m:
        st.defs[(m.group("name"), int(m.group("g")))] = {
            "rw": rw_name(m.group("rw")), "bs": _text_bs(m.group("bs")),
            "ioengine": m.group("engine"), "iodepth": int(m.group("depth")), "version": st.version}
        return
    m = _BANNER.match(stripped)
    if m:
        st.version = m.group(1)
        for d in st.defs.values():
            d["version"] = d["version"] or st.version
        return
    m = _CLIENT_BANNER.search(line)
    if m:
        st.host, st.version = m.group(1), m.group(2)
        return
    if stripped.startswith("Run status group"):
        st.record = st.ddir = None


# ---------------------------------------------------------------------------------- records -> rows
def _consistent(exact: float, printed: float | None, rel: float = 0.01) -> bool:
    """An exact value agrees with fio's rounded print of it (within ``rel``)."""
    return printed is not None and abs(exact - printed) <= rel * max(abs(printed), 1e-12) + 0.5


def _text_direction_metrics(d: dict, total: int | None, bs: int | None) -> dict:
    """Metric columns of a text direction; IOPS/bandwidth from exact counts when they agree with fio's print."""
    out = dict.fromkeys(METRIC_COLUMNS)
    ms = d["runtime_ms"]
    iops, bw = d["iops"], d["bw_MBps"]
    if total is not None and ms > 0 and _consistent(total * 1000 / ms, iops):
        iops = total * 1000 / ms
        if bs and _consistent(iops * bs / 1e6, bw):
            bw = iops * bs / 1e6
    out.update(iops=iops, bw_MBps=bw, runtime_s=ms / 1000, total_ios=total)
    if total != 0 and "lat" in d:
        mn, mx, mean, sd = d["lat"]
        out.update(lat_mean_us=mean, lat_stddev_us=sd, lat_min_us=mn, lat_max_us=mx)
    if total != 0:
        out.update(percentile_columns(d["pcts"], 1.0))
    return out


def _text_cpu(rec: dict, terse: dict | None) -> dict:
    """``cpu_usr_pct``/``cpu_sys_pct`` of a text record: fio's ``cpu : usr=U%, sys=S%`` line is percent of
    one CPU averaged over the ``jobs=N`` threads of the record (memstor.parse.fio_json.job_cpu_pct), so the
    sum over them is N times it. The text has no summed run time: N x is exact when the threads ran equally
    long (time_based, or equal sizes), the way a group_reporting run is normally set up. Measured with
    fio-3.33, ``--ioengine=null --numjobs=2 --time_based``: with group_reporting ``jobs=2`` and usr=64.72%
    (1.29 CPUs busy in all); without, two ``jobs=1`` records of usr=81.20% and 75.35%."""
    cpu = twin_cpu(rec["cpu"], terse)
    if cpu is None or rec["error"]:
        return {}
    threads = rec["jobs"] if rec["jobs"] > 0 else 1
    return {"cpu_usr_pct": cpu[0] * threads, "cpu_sys_pct": cpu[1] * threads}


def _text_spec(rec: dict) -> dict:
    """Job-spec columns of a text record (rwmixread only when unambiguous)."""
    jdef = rec["def"] or {}
    rw = jdef.get("rw")
    rwmix = None
    if rw in MIXED and not rec["error"]:
        present = set(rec["dirs"])
        rwmix = 100 if present == {"read"} else 0 if present == {"write"} else None
    return {"rw": rw, "bs": jdef.get("bs") or {}, "iodepth": jdef.get("iodepth"), "numjobs": rec["jobs"],
            "rwmixread": rwmix, "ioengine": jdef.get("ioengine"), "direct": None}


def _text_record_rows(rec: dict, terse: dict | None, source: str) -> list[dict]:
    """Rows of one normal-text result record (with its terse twin, if any, for finer latencies)."""
    spec = _text_spec(rec)
    version = rec["version"] or (rec["def"] or {}).get("version") or (terse or {}).get("version")
    dirs = directions(spec["rw"], spec["rwmixread"]) or tuple(rec["dirs"]) or (None,)
    totals = rec["totals"] or []
    rows = []
    for ddir in dirs:
        row = base_row(source, rec["host"], rec["name"], rec["groupid"], spec, ddir, rec["error"], version)
        if not rec["error"] and ddir is not None:
            total = totals[DIRECTIONS.index(ddir)] if len(totals) > DIRECTIONS.index(ddir) else None
            if ddir in rec["dirs"]:
                row.update(_text_direction_metrics(rec["dirs"][ddir], total, spec["bs"].get(ddir)))
                refine_from_terse(row, terse, ddir)
            elif total == 0:
                row.update(iops=0.0, bw_MBps=0.0, total_ios=0)
            row.update(_text_cpu(rec, terse))
        rows.append(row)
    return rows


def rows_from_text(text: str, source: str, errors: list | None = None) -> list[dict]:
    """Rows of normal and/or terse fio text (any number of runs concatenated).

    A line that cannot be read (damaged file) is skipped; one line naming it goes to ``errors``
    (raised when ``errors`` is None).
    """
    st = _TextState()
    bad_lines: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            _scan_line(st, line)
        except DAMAGE:
            if errors is None:
                raise
            bad_lines.append(number)  # a damaged line: skip it, keep what the others say
    if bad_lines and errors is not None:  # (errors is None: the first bad line raised)
        more = f" and {len(bad_lines) - 1} more" if len(bad_lines) > 1 else ""
        errors.append(f"{source}: line {bad_lines[0]}{more} unreadable, skipped (damaged fio text?)")
    pairs, leftover = pair_terse(st.records, st.terse)
    rows = []
    for rec, twin in [*pairs, *((None, t) for t in leftover)]:
        try:
            rows.extend(_text_record_rows(rec, twin, source) if rec is not None else terse_rows(twin, source))
        except DAMAGE as err:
            if errors is None:
                raise
            name = (rec or twin).get("name")
            errors.append(damaged_job_line(source, repr(name), err))
    return rows
