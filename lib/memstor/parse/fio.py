"""Parse any fio output into tidy rows (memstor.schema.FIO_COLUMNS): one row per job x direction x host.

Reads JSON / json+ of fio 2.x (latencies in usec under ``clat``/``lat``, ``bw`` in KiB/s) and 3.x
(``*_ns``), several JSON documents in one file (``--status-interval``: the last complete one counts),
text printed before the JSON, client/server JSON (``client_stats``), fio's normal (human) text of
2.x/3.x, terse lines (v2-v5 layouts) alone or mixed with normal text, Windows fio.exe, CRLF, shell
prompts and many runs concatenated in one file.

Units of the rows: ``bw_MBps`` is decimal (bytes/s / 1e6), latencies are microseconds (``lat_*`` is
fio's total latency, ``clat_p*`` completion-latency percentiles), ``runtime_s`` is seconds of the
direction, ``bs_bytes`` bytes. A value fio did not report is None (empty CSV cell), never a guess.
Pure functions: text in, ParseResult out.
"""

from __future__ import annotations

import json
import math
import re

from memstor.errors import ParseError
from memstor.schema import FIO_COLUMNS, ParseResult, impossible_number
from memstor.units import parse_size

DIRECTIONS = ("read", "write", "trim")
_RW_DIRECTIONS = {
    "read": ("read",), "randread": ("read",), "write": ("write",), "randwrite": ("write",),
    "trim": ("trim",), "randtrim": ("trim",), "rw": ("read", "write"), "readwrite": ("read", "write"),
    "randrw": ("read", "write"), "trimwrite": ("trim", "write"), "randtrimwrite": ("trim", "write"),
}
_MIXED = {"rw", "readwrite", "randrw"}
_PERCENTILE_COLUMNS = (
    ("clat_p50_us", 50.0), ("clat_p90_us", 90.0), ("clat_p99_us", 99.0),
    ("clat_p99_9_us", 99.9), ("clat_p99_99_us", 99.99),
)
_METRIC_COLUMNS = (
    "iops", "bw_MBps", "lat_mean_us", "lat_stddev_us", "lat_min_us", "lat_max_us",
    *(c for c, _ in _PERCENTILE_COLUMNS), "runtime_s", "total_ios",
)
_TO_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}


# ----------------------------------------------------------------------------------------- common
def _new_row(source: str) -> dict:
    """An empty row with exactly the schema's columns."""
    row = dict.fromkeys(FIO_COLUMNS)
    row["source"] = source
    return row


def _leading_int(value) -> int | None:
    """fio-style integer of an option value (``"32,"`` -> 32, ``"1"`` -> 1); None when there is none."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    match = re.match(r"\s*(\d{1,18})(?!\d)", str(value))
    return int(match.group(1)) if match else None


def _rw_name(value) -> str | None:
    """Normalised rw option (``randread:8`` -> ``randread``); None when unknown."""
    if not value:
        return None
    name = str(value).split(":")[0].strip().lower()
    return name if name in _RW_DIRECTIONS else None


def _directions(rw: str | None, rwmixread: int | None) -> tuple[str, ...]:
    """Directions a job asks for; rwmixread 0/100 drops the unused side of a mixed job."""
    dirs = _RW_DIRECTIONS.get(rw or "", ())
    if rw in _MIXED and rwmixread == 100:
        return ("read",)
    if rw in _MIXED and rwmixread == 0:
        return ("write",)
    return dirs


def _pct_key(text: str) -> float:
    """Percentile key (``"99.900000"``, ``"99.9"``) as a float rounded for lookup."""
    return round(float(text), 4)


def _percentile_columns(pcts: dict[float, float], scale_to_us: float) -> dict:
    """Schema percentile columns from {percentile: value}; a missing percentile stays None."""
    out = {}
    for column, p in _PERCENTILE_COLUMNS:
        value = pcts.get(p)
        out[column] = None if value is None else value * scale_to_us
    return out


def _version_major(version: str | None) -> int | None:
    """Major number of ``fio-3.36`` (3), or None."""
    match = re.search(r"(\d+)\.", version or "")
    return int(match.group(1)) if match else None


# ------------------------------------------------------------------------------------ job options
def _split_bs(value: str, kb_base: int) -> dict[str, int | None]:
    """Block size per direction from a fio ``bs`` value (``4k``, ``8k,32k``, ``8k,32k,``, ``,8k``).

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
    """parse_size, or None for text fio would not read as a size."""
    try:
        return parse_size(text, kb_base)
    except ValueError:
        return None


def _bs_from_options(opts: dict, defaults: bool) -> dict[str, int | None]:
    """Block size per direction from job options (bs / blocksize / bsrange); None when it varies."""
    kb_base = 1000 if _leading_int(opts.get("kb_base")) == 1000 else 1024
    for key in ("bs", "blocksize"):
        if opts.get(key):
            return _split_bs(opts[key], kb_base)
    for key in ("bsrange", "blocksize_range", "bssplit"):
        if opts.get(key):
            return _bs_from_range(str(opts[key]), kb_base) if key != "bssplit" else {}
    return dict.fromkeys(DIRECTIONS, 4096) if defaults else {}


def _bs_from_range(value: str, kb_base: int) -> dict[str, int | None]:
    """Block size per direction from ``bsrange=1k-4k,2k-2k``: a value only where min == max."""
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
    if rw not in _MIXED:
        return None
    value = _leading_int(opts.get("rwmixread"))
    if value is None and _leading_int(opts.get("rwmixwrite")) is not None:
        value = 100 - _leading_int(opts.get("rwmixwrite"))
    return value if value is not None or not defaults else 50


def _direct(opts: dict, defaults: bool) -> int | None:
    """direct as 0/1 (``buffered=0`` means direct; a bare ``direct`` flag means 1)."""
    for key, invert in (("direct", False), ("buffered", True)):
        if key in opts:
            value = opts[key]
            flag = 1 if value in ("", None) else int(bool(_leading_int(value)))
            return 1 - flag if invert else flag
    return 0 if defaults else None


def _spec_from_options(opts: dict, version: str | None, defaults: bool) -> dict:
    """Job-spec columns from fio job options; fio's defaults fill what was not set (if ``defaults``)."""
    rw = _rw_name(opts.get("rw") or opts.get("readwrite")) or ("read" if defaults else None)
    iodepth = _leading_int(opts.get("iodepth"))
    numjobs = _leading_int(opts.get("numjobs"))
    return {
        "rw": rw,
        "bs": _bs_from_options(opts, defaults),
        "iodepth": iodepth if iodepth is not None or not defaults else 1,
        "numjobs": numjobs if numjobs is not None or not defaults else 1,
        "rwmixread": _rwmixread(opts, rw, defaults),
        "ioengine": opts.get("ioengine") or (_default_engine(version) if defaults else None),
        "direct": _direct(opts, defaults),
    }


# ------------------------------------------------------------------------------------------- JSON
_DOC_START = re.compile(r"^\{", re.M)


def _is_fio_doc(doc) -> bool:
    """A decoded JSON value is a fio result document."""
    return isinstance(doc, dict) and ("jobs" in doc or "client_stats" in doc)


def load_fio_json(text: str) -> dict:
    """The last complete fio JSON document in ``text`` (text before it and truncated docs skipped).

    Raises ParseError when there is none.
    """
    body = text.lstrip("\ufeff")
    if body[:1] == "{":
        try:
            doc = json.loads(body)
            if _is_fio_doc(doc):
                return doc
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    starts = [m.start() for m in _DOC_START.finditer(body)]
    for start in reversed(starts):
        try:
            doc, _ = decoder.raw_decode(body, start)
        except ValueError:
            continue
        if _is_fio_doc(doc):
            return doc
    raise ParseError("no complete fio JSON document (expected the output of fio --output-format=json)")


def clat_bins(job: dict, direction: str) -> dict[int, int]:
    """json+ completion-latency histogram {latency_ns: count} of one fio 3.x job; {} without bins."""
    bins = ((job.get(direction) or {}).get("clat_ns") or {}).get("bins") or {}
    return {int(k): int(v) for k, v in bins.items()}


def iodepth_levels(job: dict) -> dict[str, float]:
    """fio's ``iodepth_level``: percent of time at each queue depth ({"1": 0.1, ..., ">=64": 99.9})."""
    return {str(k): float(v) for k, v in (job.get("iodepth_level") or {}).items()}


def _json_latency(ddir: dict) -> tuple[dict | None, float]:
    """The total-latency dict of a direction and its factor to microseconds (3.x ns, 2.x usec)."""
    if "lat_ns" in ddir:
        return ddir["lat_ns"], 1e-3
    return ddir.get("lat"), 1.0


def _json_percentiles(ddir: dict) -> dict:
    """clat percentile columns (us) of one JSON direction."""
    if "clat_ns" in ddir:
        clat, scale = ddir["clat_ns"], 1e-3
    else:
        clat, scale = ddir.get("clat") or {}, 1.0
    raw = clat.get("percentile") or {}
    pcts = {}
    for key, value in raw.items():
        try:
            pcts[_pct_key(key)] = float(value)
        except ValueError:
            continue
    return _percentile_columns(pcts, scale)


def _json_direction_metrics(ddir: dict) -> dict:
    """Metric columns of one JSON direction (``job["read"]``...); latencies None without samples."""
    total = ddir.get("total_ios")
    bw_bytes = ddir.get("bw_bytes")
    out = dict.fromkeys(_METRIC_COLUMNS)
    out["iops"] = _scaled(ddir.get("iops", 0), 1.0)
    out["bw_MBps"] = _scaled(bw_bytes, 1e-6) if bw_bytes is not None else _scaled(ddir.get("bw", 0), 1024 / 1e6)
    out["runtime_s"] = _scaled(ddir.get("runtime", 0), 1.0) / 1000  # ms -> s (divide: 9 ms -> 0.009 exactly)
    out["total_ios"] = total
    lat, scale = _json_latency(ddir)
    sampled = lat and lat.get("N", 1) and (lat.get("max") or lat.get("mean"))
    if sampled and (total is None or total > 0):
        out.update(lat_mean_us=_scaled(lat["mean"], scale), lat_stddev_us=_scaled(lat.get("stddev", 0), scale),
                   lat_min_us=_scaled(lat["min"], scale), lat_max_us=_scaled(lat["max"], scale))
        out.update(_json_percentiles(ddir))
    return out


def _scaled(value, factor: float) -> float:
    """float(value) * factor; a number too big for a float becomes +-inf (emptied later with an error
    line by _sanitised) instead of an OverflowError that would lose the whole job."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    try:
        return float(value) * factor
    except OverflowError:
        return math.inf if int(value) > 0 else -math.inf


def _json_active(ddir: dict) -> bool:
    """A JSON direction did some I/O."""
    return bool(ddir.get("total_ios") or ddir.get("io_bytes") or ddir.get("runtime"))


def _json_hosts(jobs: list[dict]) -> list[str | None]:
    """host per job: ``hostname``, plus ``:port`` when one hostname runs several fio servers."""
    ports: dict[str, set] = {}
    for job in jobs:
        ports.setdefault(job.get("hostname"), set()).add(job.get("port"))
    hosts = []
    for job in jobs:
        name = job.get("hostname")
        many = name is not None and len(ports[name]) > 1
        hosts.append(f"{name}:{job.get('port')}" if many else name)
    return hosts


def _json_job_rows(job: dict, gopts: dict, version: str | None, host: str | None, source: str) -> list[dict]:
    """Rows of one JSON job: one per direction its rw asks for."""
    has_options = "job options" in job or bool(gopts)
    spec = _spec_from_options({**gopts, **(job.get("job options") or {})}, version, has_options)
    error = _leading_int(job.get("error")) or 0
    dirs = _directions(spec["rw"], spec["rwmixread"])
    if not dirs:
        dirs = tuple(d for d in DIRECTIONS if _json_active(job.get(d) or {})) or (None,)
    rows = []
    for ddir in dirs:
        row = _base_row(source, host, job.get("jobname"), job.get("groupid"), spec, ddir, error, version)
        if not error and ddir in job:
            row.update(_json_direction_metrics(job[ddir]))
        rows.append(row)
    return rows


def _base_row(source, host, jobname, groupid, spec: dict, ddir, error, version) -> dict:
    """A row with the job/spec columns filled and metrics empty."""
    row = _new_row(source)
    row.update(host=host, jobname=jobname, groupid=_leading_int(groupid), rw=spec.get("rw"),
               direction=ddir, bs_bytes=(spec.get("bs") or {}).get(ddir), iodepth=spec.get("iodepth"),
               numjobs=spec.get("numjobs"), rwmixread=spec.get("rwmixread"),
               ioengine=spec.get("ioengine"), direct=spec.get("direct"), error=error,
               fio_version=version)
    return row


def _rows_from_json(doc: dict, source: str, errors: list | None = None) -> list[dict]:
    """Rows of one fio JSON document (plain or client/server; "All clients" dropped).

    A job whose JSON is damaged (wrong types, numbers out of range) gives one line in ``errors``
    (raised when ``errors`` is None) and the other jobs still give their rows.
    """
    version = doc.get("fio version")
    version = version if isinstance(version, str) else None
    gopts = doc.get("global options") or {}
    if not isinstance(gopts, dict):
        gopts = {}
    if "client_stats" in doc:
        jobs = [j for j in _as_list(doc["client_stats"]) if not isinstance(j, dict) or j.get("jobname") != "All clients"]
        hosts = _json_hosts([j if isinstance(j, dict) else {} for j in jobs])
    else:
        jobs = _as_list(doc.get("jobs"))
        hosts = [None] * len(jobs)
    rows = []
    for i, (job, host) in enumerate(zip(jobs, hosts)):
        try:
            if not isinstance(job, dict):
                raise TypeError(f"a job is a {type(job).__name__}, not an object")
            rows.extend(_json_job_rows(job, gopts, version, host, source))
        except _DAMAGE as err:
            if errors is None:
                raise
            name = job.get("jobname") if isinstance(job, dict) else None
            errors.append(_one_line(f"{source}: job {i} ({name!r}) is damaged, skipped "
                                    f"({type(err).__name__}: {err})"))
    return rows


def _as_list(value) -> list:
    """A JSON array as a list; anything else (damaged document) as an empty list."""
    return value if isinstance(value, list) else []


# ------------------------------------------------------------------------------------ normal text
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
_ISSUED = re.compile(r"^\s+issued[^:]*:\s*total=(?P<tot>\S+)")
_BS_SIDE = re.compile(r"\(([RWT])\)\s*([\d.]+\s*[KMGTP]?i?B?)-([\d.]+\s*[KMGTP]?i?B?)")
_OUT_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


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
    """Block size per direction from a job line's ``bs=`` field (3.x ``(R) 4096B-4096B, (W) ...``
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
                 "dirs": {}, "totals": None}
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
    if stripped[:2] in ("2;", "3;", "4;", "5;"):
        _scan_terse(st, stripped)
    elif st.pct_scale is not None and stripped.startswith("|"):
        for p, value, suffix in _PCT_ITEM.findall(stripped):
            st.ddir["pcts"][_pct_key(p)] = float(value) * _SI[suffix] * st.pct_scale
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
            scale = _TO_US[m.group("unit")]
            st.ddir["lat"] = tuple(_si_number(m.group(k)) * scale for k in ("min", "max", "avg", "sd"))
        return
    m = _PCT_HEAD.match(line)
    if m and st.ddir is not None:
        st.pct_scale = _TO_US[m.group("unit")] if m.group("kind") == "clat" else None
        return
    m = _DIR3.match(line) or _DIR2.match(line)
    if m:
        _start_direction(st, m, v3=m.re is _DIR3)
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
            "rw": _rw_name(m.group("rw")), "bs": _text_bs(m.group("bs")),
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


# ------------------------------------------------------------------------------------------ terse
def _scan_terse(st: _TextState, line: str) -> None:
    """One terse line (layout v2..v5) becomes a terse record."""
    f = line.split(";")
    version = int(f[0])
    head = 4 if version == 2 else 5
    block = 47 if version == 5 else 41
    if len(f) < head + 2 * block:
        return
    rec = {"name": f[head - 3], "groupid": _leading_int(f[head - 2]), "error": _leading_int(f[head - 1]),
           "version": f[1] if version != 2 else st.version, "host": st.host, "dirs": {}}
    n_dirs = 2 if version == 3 or version == 2 else 3
    for i, ddir in enumerate(DIRECTIONS[:n_dirs]):
        start = head + i * block
        if len(f) >= start + block:
            rec["dirs"][ddir] = _terse_direction(f[start:start + block])
    st.terse.append(rec)


def _terse_direction(f: list[str]) -> dict:
    """Parsed fields of one terse direction block (KiB, KiB/s, IOPS, ms, usec)."""
    pcts = {}
    for item in f[12:32]:
        key, _, value = item.partition("%=")
        if value and float(key) > 0:
            pcts[_pct_key(key)] = float(value)
    return {"io_kib": int(f[0]), "bw_kibps": float(f[1]), "iops": float(f[2]), "runtime_ms": int(f[3]),
            "lat": tuple(float(x) for x in f[32:36]), "pcts": pcts}


def _terse_metrics(d: dict) -> dict:
    """Metric columns from a terse direction (no I/O count in terse: total_ios stays None)."""
    out = dict.fromkeys(_METRIC_COLUMNS)
    out.update(iops=d["iops"], bw_MBps=d["bw_kibps"] * 1024 / 1e6, runtime_s=d["runtime_ms"] / 1000)
    if d["io_kib"] > 0:
        mn, mx, mean, sd = d["lat"]
        out.update(lat_mean_us=mean, lat_stddev_us=sd, lat_min_us=mn, lat_max_us=mx)
        out.update(_percentile_columns(d["pcts"], 1.0))
    return out


def _terse_rows(rec: dict, source: str) -> list[dict]:
    """Rows of a terse-only record: rw is not in terse, so directions are those that did I/O."""
    active = tuple(d for d, v in rec["dirs"].items() if v["io_kib"] > 0) or (None,)
    rows = []
    for ddir in active:
        row = _base_row(source, rec["host"], rec["name"], rec["groupid"], {}, ddir, rec["error"],
                        rec["version"])
        if not rec["error"] and ddir is not None:
            row.update(_terse_metrics(rec["dirs"][ddir]))
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------ text -> rows
def _consistent(exact: float, printed: float | None, rel: float = 0.01) -> bool:
    """An exact value agrees with fio's rounded print of it (within ``rel``)."""
    return printed is not None and abs(exact - printed) <= rel * max(abs(printed), 1e-12) + 0.5


def _text_direction_metrics(d: dict, total: int | None, bs: int | None) -> dict:
    """Metric columns of a text direction; IOPS/bandwidth from exact counts when they agree with fio's print."""
    out = dict.fromkeys(_METRIC_COLUMNS)
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
        out.update(_percentile_columns(d["pcts"], 1.0))
    return out


def _text_spec(rec: dict) -> dict:
    """Job-spec columns of a text record (rwmixread only when unambiguous)."""
    jdef = rec["def"] or {}
    rw = jdef.get("rw")
    rwmix = None
    if rw in _MIXED and not rec["error"]:
        present = set(rec["dirs"])
        rwmix = 100 if present == {"read"} else 0 if present == {"write"} else None
    return {"rw": rw, "bs": jdef.get("bs") or {}, "iodepth": jdef.get("iodepth"), "numjobs": rec["jobs"],
            "rwmixread": rwmix, "ioengine": jdef.get("ioengine"), "direct": None}


def _text_record_rows(rec: dict, terse: dict | None, source: str) -> list[dict]:
    """Rows of one normal-text result record (with its terse twin, if any, for finer latencies)."""
    spec = _text_spec(rec)
    version = rec["version"] or (rec["def"] or {}).get("version") or (terse or {}).get("version")
    dirs = _directions(spec["rw"], spec["rwmixread"]) or tuple(rec["dirs"]) or (None,)
    totals = rec["totals"] or []
    rows = []
    for ddir in dirs:
        row = _base_row(source, rec["host"], rec["name"], rec["groupid"], spec, ddir, rec["error"], version)
        if not rec["error"] and ddir is not None:
            total = totals[DIRECTIONS.index(ddir)] if len(totals) > DIRECTIONS.index(ddir) else None
            if ddir in rec["dirs"]:
                row.update(_text_direction_metrics(rec["dirs"][ddir], total, spec["bs"].get(ddir)))
                _refine_from_terse(row, terse, ddir)
            elif total == 0:
                row.update(iops=0.0, bw_MBps=0.0, total_ios=0)
        rows.append(row)
    return rows


def _refine_from_terse(row: dict, terse: dict | None, ddir: str) -> None:
    """Use the terse twin's 6-decimal mean/stdev latency (usec) where normal text rounds to 2."""
    d = (terse or {}).get("dirs", {}).get(ddir)
    if d and d["io_kib"] > 0 and row["lat_mean_us"] is not None:
        row["lat_mean_us"], row["lat_stddev_us"] = d["lat"][2], d["lat"][3]


def _pair_terse(records: list[dict], terse: list[dict]) -> tuple[list, list]:
    """Match terse records to normal records of the same job, in order; return pairs and unmatched terse."""
    pool: dict[tuple, list[dict]] = {}
    for t in terse:
        pool.setdefault((t["name"], t["groupid"]), []).append(t)
    pairs = []
    for rec in records:
        queue = pool.get((rec["name"], rec["groupid"]))
        pairs.append((rec, queue.pop(0) if queue else None))
    leftover = [t for queue in pool.values() for t in queue]
    return pairs, leftover


def _rows_from_text(text: str, source: str, errors: list | None = None) -> list[dict]:
    """Rows of normal and/or terse fio text (any number of runs concatenated).

    A line that cannot be read (damaged file) is skipped; one line naming it goes to ``errors``.
    """
    st = _TextState()
    bad_lines: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            _scan_line(st, line)
        except _DAMAGE:
            if errors is None:
                raise
            bad_lines.append(number)  # a damaged line: skip it, keep what the others say
    if bad_lines:
        more = f" and {len(bad_lines) - 1} more" if len(bad_lines) > 1 else ""
        errors.append(f"{source}: line {bad_lines[0]}{more} unreadable, skipped (damaged fio text?)")
    pairs, leftover = _pair_terse(st.records, st.terse)
    rows = []
    for rec, twin in [*pairs, *((None, t) for t in leftover)]:
        try:
            rows.extend(_text_record_rows(rec, twin, source) if rec is not None else _terse_rows(twin, source))
        except _DAMAGE as err:
            if errors is None:
                raise
            name = (rec or twin).get("name")
            errors.append(_one_line(f"{source}: job {name!r} is damaged, skipped ({type(err).__name__}: {err})"))
    return rows


# ------------------------------------------------------------------------------------------ API
_FIO_HINTS = re.compile(
    r'"fio version"|^(?:<[^>]*> ?)?\S.*: \(g=\d+\): rw=|: \(groupid=\d+, jobs=\d+\): err=|^[2-5];fio-|^fio-\d',
    re.M,
)


def looks_like_fio(text: str) -> bool:
    """True when the text holds fio output (JSON, normal or terse) in its first 256 kB."""
    return bool(_FIO_HINTS.search(text[:262144]))


def _first_fio_message(text: str) -> str | None:
    """fio's own first error/warning line (``fio: ...``), shortened, for error messages."""
    m = re.search(r"^(?:<[^>]*> ?)?(fio: .*)$", text, re.M)
    return m.group(1).strip()[:160] if m else None


def _no_rows_reason(text: str, had_json: bool) -> str:
    """One-line reason why a text gave no rows, and what to do."""
    said = _first_fio_message(text)
    said = f" (fio said: {said})" if said else ""
    if had_json:
        return f"fio JSON holds no jobs{said}; rerun fio and keep its complete --output"
    if looks_like_fio(text):
        return f"fio output without any finished job result{said}; the run was interrupted or failed"
    return "not fio output (no fio JSON, normal or terse result found)"


def parse_fio(text: str, source: str) -> ParseResult:
    """Rows (schema FIO_COLUMNS) and one-line errors ``"SOURCE: reason"`` for any fio output text.

    A JSON document wins over text around it (when several, the last complete one); otherwise the
    normal and terse text is read.
    """
    result = _parse_fio(text, source)
    result.errors = [_one_line(e, 500) for e in result.errors]
    return result


def _parse_fio(text: str, source: str) -> ParseResult:
    """parse_fio's body (errors not yet forced onto one line)."""
    result = ParseResult()
    has_json = '"fio version"' in text or '"jobs"' in text or '"client_stats"' in text
    try:
        if has_json:
            result.rows = _rows_from_json(load_fio_json(text), source, result.errors)
        else:
            result.rows = _rows_from_text(text, source, result.errors)
    except ParseError as err:
        if has_json and looks_like_fio(text):
            result.rows = _rows_from_text(text, source, result.errors)
        if not result.rows:
            result.errors.append(f"{source}: {err}")
        return _sanitised(result, source)
    except RecursionError:
        result.rows = []
        result.errors.append(f"{source}: fio JSON nested too deeply to read (damaged or not fio output)")
        return result
    except _DAMAGE as err:
        result.rows = []
        result.errors.append(_one_line(f"{source}: unreadable fio output ({type(err).__name__}: {err})"))
        return result
    if not result.rows:
        result.errors.append(f"{source}: {_no_rows_reason(text, has_json)}")
    return _sanitised(result, source)


# Exceptions a damaged file can raise inside the parsers (never a traceback for users).
_DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, ZeroDivisionError)
# Columns that hold a count, size or measurement: a finite number >= 0 or empty.
_NON_NEGATIVE = ("groupid", "bs_bytes", "iodepth", "numjobs", *_METRIC_COLUMNS)


def _one_line(text: str, limit: int = 300) -> str:
    """One printable line of at most ``limit`` characters (error messages; control characters dropped)."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return " ".join(text.split())[:limit]


def _bad_value(column: str, value) -> bool:
    """A numeric cell that cannot be a fio measurement: impossible_number, rwmixread > 100, direct not 0/1."""
    if impossible_number(value, column in _NON_NEGATIVE):
        return True
    if value is None or isinstance(value, (str, bool)):
        return False
    if column == "rwmixread" and not 0 <= value <= 100:
        return True
    return column == "direct" and value not in (0, 1)


def _sanitised(result: ParseResult, source: str) -> ParseResult:
    """Empty every impossible number (NaN/inf, negative IOPS or latency...) with one error line per row.

    A damaged file must never smuggle such a value into a table as if fio had measured it.
    """
    for row in result.rows:
        bad = [c for c, v in row.items() if _bad_value(c, v)]
        if not bad:
            continue
        shown = ", ".join(f"{c}={row[c]!r}" for c in bad)
        for c in bad:
            row[c] = None
        where = f"job {row.get('jobname')!r} {row.get('direction') or ''}".strip()
        result.errors.append(_one_line(f"{source}: {where}: impossible value {shown} (left empty; damaged file?)"))
    return result


def depth_bucket(iodepth: int) -> str:
    """fio's iodepth_level bucket holding a queue depth: 1, 2 (2-3), 4 (4-7), ... 32 (32-63), >=64."""
    if iodepth >= 64:
        return ">=64"
    b = 1
    while b * 2 <= iodepth:
        b *= 2
    return str(b)
