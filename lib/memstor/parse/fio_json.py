"""fio's JSON and json+ output (``--output-format=json`` / ``json+``) -> rows of FIO_COLUMNS.

fio 2.x prints latencies in microseconds under ``clat``/``lat``; fio 3.x in nanoseconds under
``clat_ns``/``lat_ns`` (json+ adds the ``clat_ns.bins`` histogram, {latency ns: count}). ``bw`` is
KiB/s, ``bw_bytes`` (3.x) bytes/s, ``runtime`` milliseconds. Text before the JSON, several documents
(``--status-interval``: the last complete one counts), truncated documents and client/server output
(``client_stats``, one host per fio server) are read.

Units of the rows: ``bw_MBps`` decimal MB/s (bytes/s / 1e6), latencies microseconds, ``runtime_s``
seconds, ``total_ios`` a count. Pure functions.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable

from memstor.core.errors import ParseError
from memstor.core.fiobins import ns_to_us
from memstor.parse.fio_spec import (
    DIRECTIONS,
    PERCENTILE_COLUMNS,
    SPEC_OPTIONS,
    base_row,
    damaged_job_line,
    directions,
    leading_int,
    pct_key,
    spec_from_options,
)
from memstor.parse.guards import DAMAGE

_DOC_START = re.compile(r"^\{", re.M)
#: json.loads' decoder (the standard one: no hooks); its scanner keeps nothing from one call to the next.
_DECODER = json.JSONDecoder()
#: The white space JSON allows around a document (json.decoder.WHITESPACE).
_JSON_SPACE = " \t\n\r"


def _is_fio_doc(doc) -> bool:
    """A decoded JSON value is a fio result document."""
    return isinstance(doc, dict) and ("jobs" in doc or "client_stats" in doc)


def load_fio_json(text: str) -> dict:
    """The last complete fio JSON document in ``text`` (text before it and truncated docs skipped).

    Raises ParseError when there is none.
    """
    body = text.lstrip("\ufeff")
    if body.startswith("{"):
        try:
            # json.loads(body) without its two regular-expression calls: the document and what follows it,
            # which json.loads allows only as JSON white space
            doc, end = _DECODER.raw_decode(body)
            if (end == len(body) or not body[end:].strip(_JSON_SPACE)) and _is_fio_doc(doc):
                return doc
        except ValueError:
            pass
    starts = [m.start() for m in _DOC_START.finditer(body)]
    for start in reversed(starts):
        try:
            doc, _ = _DECODER.raw_decode(body, start)
        except ValueError:
            continue
        if _is_fio_doc(doc):
            return doc
    raise ParseError("no complete fio JSON document (expected the output of fio --output-format=json)")


def latency_bins(job: dict, direction: str, kind: str = "clat") -> dict[int, int]:
    """json+ histogram {latency_ns: count} of one fio 3.x job and direction; kind ``clat`` (completion
    latency, ``clat_ns.bins``) or ``lat`` (total latency, ``lat_ns.bins``: only with lat_percentiles=1);
    {} without bins."""
    return direction_bins(job.get(direction) or {}, kind)


def direction_bins(ddir: dict, kind: str = "clat") -> dict[int, int]:
    """json+ histogram {latency_ns: count} of one direction's entry (``job["read"]``...) and kind (clat,
    lat); {} without bins."""
    bins = (ddir.get(kind + "_ns") or {}).get("bins") or {}
    return {int(k): int(v) for k, v in bins.items()}


def clat_bins(job: dict, direction: str) -> dict[int, int]:
    """json+ completion-latency histogram {latency_ns: count} of one fio 3.x job; {} without bins."""
    return latency_bins(job, direction, "clat")


def iodepth_levels(job: dict) -> dict[str, float]:
    """fio's ``iodepth_level``: percent of time at each queue depth ({"1": 0.1, ..., ">=64": 99.9})."""
    return {str(k): float(v) for k, v in (job.get("iodepth_level") or {}).items()}


# ------------------------------------------------------------------------------------ directions
def _json_percentiles(ddir: dict, row: dict) -> None:
    """Set the clat percentile columns (us) of ``row`` from one JSON direction (3.x ns -> us as
    memstor.core.fiobins.ns_to_us converts, the conversion every table of bin latencies uses, so one percentile
    reads the same everywhere). Every entry is read as a number (a damaged one raises, a text that is no number
    is skipped); when two keys name one percentile (``99.9`` and ``99.900000``) the later one counts.

    Every value is converted at once (``map(float, ...)``) and the columns are taken from the list by the
    positions remembered for the file's percentile keys (:func:`_pct_picks`): a fio list of 17 percentiles
    fills 5 columns without a loop over the 17 entries, and without a call per column (ns_to_us's
    ``float(ns) / 1000.0`` is one division of a float here). A text that is no number (ValueError) sends the
    entries to :func:`_json_percentiles_one_by_one`, which skips just that entry."""
    if "clat_ns" in ddir:
        clat, per_us = ddir["clat_ns"], _NS_PER_US
    else:
        clat, per_us = ddir.get("clat") or {}, 1.0  # fio 2.x: already us (x / 1.0 is x, as float(x) is)
    raw = clat.get("percentile") or {}
    try:
        numbers = list(map(float, raw.values()))
    except ValueError:
        _json_percentiles_one_by_one(raw.items(), ns_to_us if per_us == _NS_PER_US else float, row)
        return
    keys = tuple(raw)
    picks = _PCT_PICKS.get(keys)
    if picks is None:
        picks = _pct_picks(keys)
    for i, column in picks:
        row[column] = numbers[i] / per_us


#: ns per us: memstor.core.fiobins.ns_to_us is ``float(ns) / 1000.0``, the same division of the same float.
_NS_PER_US = 1000.0


def _json_percentiles_one_by_one(items, to_us: Callable[[float], float], row: dict) -> None:
    """:func:`_json_percentiles` of ``items`` (the percentile dict's (key, value) pairs) entry by entry: a value
    that is a text but no number is skipped, another damaged one (None, a list) raises."""
    found = {}
    for key, value in items:
        try:
            number = float(value)
        except ValueError:
            continue
        column = _pct_column(key)
        if column is not None:
            found[column] = number
    for column, number in found.items():
        row[column] = to_us(number)


def _pct_picks(keys: tuple) -> tuple[tuple[int, str], ...]:
    """((position, column), ...) of fio's percentile keys ``keys`` in their order: for each column a key
    fills, the position of the last such key (the later one counts); remembered (bounded, like
    :data:`_PCT_COLUMN_OF`)."""
    last = {}
    for i, key in enumerate(keys):
        column = _pct_column(key)
        if column is not None:
            last[column] = i
    picks = tuple((i, column) for column, i in last.items())
    if len(_PCT_PICKS) < 1024:
        _PCT_PICKS[keys] = picks
    return picks


# fio's percentile keys ("99.900000") -> the schema column they fill (None: no column, or not a number);
# a few dozen distinct keys in practice, remembered so that each is converted once per process.
_PCT_COLUMN_OF: dict[str, str | None] = {}
_PCT_COLUMN_BY_VALUE = dict((p, column) for column, p in PERCENTILE_COLUMNS)
# A percentile dict's keys in their order -> _pct_picks of them (fio prints the same list for every job of a run).
_PCT_PICKS: dict[tuple, tuple[tuple[int, str], ...]] = {}


def _pct_column(key: str) -> str | None:
    """The percentile column fio's percentile key ``key`` fills, or None (memoised :func:`pct_key`)."""
    try:
        return _PCT_COLUMN_OF[key]
    except KeyError:
        pass
    try:
        column = _PCT_COLUMN_BY_VALUE.get(pct_key(key))
    except ValueError:
        column = None
    if len(_PCT_COLUMN_OF) < 4096:  # bounded: a damaged file cannot grow it without end
        _PCT_COLUMN_OF[key] = column
    return column


def _json_direction_metrics(ddir: dict, row: dict) -> None:
    """Set the metric columns of ``row`` from one JSON direction (``job["read"]``...): ``iops`` I/O per second,
    ``bw_MBps`` decimal MB/s, ``runtime_s`` seconds, ``total_ios`` a count; the latencies (us) stay None without
    samples. Each value is :func:`_scaled`."""
    get = ddir.get
    total = get("total_ios")
    bw_bytes = get("bw_bytes")
    row["iops"] = _scaled(get("iops", 0), 1.0)
    row["bw_MBps"] = _scaled(bw_bytes, 1e-6) if bw_bytes is not None else _scaled(get("bw", 0), 1024 / 1e6)
    row["runtime_s"] = _scaled(get("runtime", 0), 1.0) / 1000  # ms -> s (divide: 9 ms -> 0.009 exactly)
    row["total_ios"] = total
    if "lat_ns" in ddir:
        lat, scale = ddir["lat_ns"], 1e-3
    else:
        lat, scale = get("lat"), 1.0
    sampled = lat and lat.get("N", 1) and (lat.get("max") or lat.get("mean"))
    if sampled and (total is None or total > 0):  # (sampled implies lat)
        row["lat_mean_us"] = _scaled(lat["mean"], scale)
        row["lat_stddev_us"] = _scaled(lat.get("stddev", 0), scale)
        row["lat_min_us"] = _scaled(lat["min"], scale)
        row["lat_max_us"] = _scaled(lat["max"], scale)
        _json_percentiles(ddir, row)


def _scaled(value, factor: float) -> float:
    """float(value) * factor; a number too big for a float becomes +-inf (emptied later with an error
    line by the sanitiser of memstor.parse.fio) instead of an OverflowError that would lose the whole job."""
    kind = type(value)
    if kind is float:  # most values: no check, no conversion
        return value * factor
    if kind is int:  # the others (fio prints counts, bytes/s and ms as integers); not bool, which is refused
        try:
            return float(value) * factor
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    try:
        return float(value) * factor
    except OverflowError:
        return math.inf if int(value) > 0 else -math.inf


def _json_active(ddir: dict) -> bool:
    """A JSON direction did some I/O."""
    return bool(ddir.get("total_ios") or ddir.get("io_bytes") or ddir.get("runtime"))


# -------------------------------------------------------------------------------------------- CPU
# What fio's per-job ``usr_cpu``/``sys_cpu`` are (fio's stat.c: usr_time * 100 / total_run_time, where a
# group_reporting group SUMS both the CPU times and the run times of its threads): percent of one CPU,
# AVERAGED over the threads of the entry. ``job_runtime`` (fio >= 3.x) is that summed run time in ms; a
# direction's ``runtime`` is the wall time of the run (the longest thread). Measured with fio-3.33 on a
# 2-vCPU VM, ``--numjobs=2 --runtime=2 --time_based``:
#   psync randread of a cached 64 MiB file: without group_reporting two entries, usr 1.7 / sys 25.5 and
#   usr 1.45 / sys 24.85, job_runtime 2000 each; with it one entry, usr 1.25 / sys 22.575, job_runtime
#   4000 (= 2 x 2000), read runtime 2001 ms -- the per-thread average (of another run), not the sum.
#   ioengine=null (CPU-bound): without, usr 71.85 / sys 0.0 and usr 60.35 / sys 3.35; with, usr 65.01 /
#   sys 3.75, job_runtime 4004, read runtime 2005 ms -> summed over the threads 65.01 x 4004 / 2005 = 129.8 %
#   (1.3 of the 2 CPUs busy). ramp_time is not counted in job_runtime (ramp 1 s + runtime 2 s: 2000 ms).
# The tidy columns are therefore usr_cpu x job_runtime / wall runtime: CPU seconds of all the threads per
# second of the run, x 100 (core.schema.FIO_CPU_COLUMNS). Without job_runtime (fio 2.x) that is known only
# for one thread (numjobs 1): a group of several threads stays empty rather than guessed.
def cpu_pct(value) -> float | None:
    """A CPU percentage fio printed (a number, or text such as ``64.717641%``); None when it is not a
    finite number >= 0 (a damaged document loses this cell, never the job)."""
    kind = type(value)
    if kind is float:  # fio's usr_cpu, sys_cpu (float(value) is the value itself)
        return value if 0.0 <= value < math.inf else None  # NaN fails the comparison
    if kind is int:  # fio's runtime, job_runtime (ms); a float of any int >= 0 is finite, or OverflowError
        try:
            return float(value) if value >= 0 else None
        except OverflowError:
            return None
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip().removesuffix("%")
    try:
        pct = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return pct if math.isfinite(pct) and pct >= 0 else None


def job_cpu_pct(job: dict, numjobs: int | None) -> dict:
    """``cpu_usr_pct``/``cpu_sys_pct`` of one JSON job entry: percent of one CPU summed over its threads
    (see the comment above); numjobs: the job's option (1 lets fio 2.x output without job_runtime count).
    Each value is :func:`cpu_pct`'s, which is taken as it is for what fio prints (run times in ms as ints a
    float holds exactly, CPU percentages as finite floats >= 0) without the call."""
    wall_ms = 0.0  # the longest direction's runtime (cpu_pct: None or >= 0)
    for d in DIRECTIONS:
        entry = job.get(d)
        if isinstance(entry, dict):
            ms = entry.get("runtime")
            if type(ms) is not int or not 0 <= ms < _EXACT:
                ms = cpu_pct(ms)
            if ms and ms > wall_ms:
                wall_ms = ms
    summed_ms = job.get("job_runtime")
    if type(summed_ms) is not int or not 0 <= summed_ms < _EXACT:
        summed_ms = cpu_pct(summed_ms)
    if summed_ms and wall_ms:
        threads = summed_ms / wall_ms  # 1 (within a ms) for one thread, ~N for a group of N equal threads
    elif summed_ms is None and numjobs == 1:
        threads = 1.0
    else:
        return {"cpu_usr_pct": None, "cpu_sys_pct": None}
    usr, sys_ = job.get("usr_cpu"), job.get("sys_cpu")
    if type(usr) is not float or not 0.0 <= usr < math.inf:
        usr = cpu_pct(usr)
    if type(sys_) is not float or not 0.0 <= sys_ < math.inf:
        sys_ = cpu_pct(sys_)
    return {"cpu_usr_pct": None if usr is None else usr * threads,
            "cpu_sys_pct": None if sys_ is None else sys_ * threads}


#: Integers below 2**53 are floats exactly: one of them is cpu_pct's ``float(value)`` in every sum, product and
#: quotient above (an int/int division rounds the exact quotient, as float/float of exact floats does).
_EXACT = 1 << 53


# ------------------------------------------------------------------------------------------- jobs
def _json_hosts(jobs: list[dict]) -> list[str | None]:
    """host per job: ``hostname``, plus ``:port`` when one hostname runs several fio servers."""
    ports: dict[str | None, set] = {}
    for job in jobs:
        ports.setdefault(job.get("hostname"), set()).add(job.get("port"))
    hosts = []
    for job in jobs:
        name = job.get("hostname")
        many = name is not None and len(ports[name]) > 1
        hosts.append(f"{name}:{job.get('port')}" if many else name)
    return hosts


def _json_job_rows(job: dict, gopts: dict, version: str | None, host: str | None, source: str) -> list[dict]:
    """Rows of one JSON job: one per direction its rw asks for (a copy of the layout's skeleton each, with the
    job's own cells set; the units are :func:`_json_direction_metrics`')."""
    spec, dirs, skeletons = _job_layout(gopts, job.get("job options"), version, "job options" in job or bool(gopts))
    error = job.get("error")
    error = (error if type(error) is int else leading_int(error)) or 0  # fio's int as it is (leading_int's rule)
    if not dirs:
        dirs = tuple(d for d in DIRECTIONS if _json_active(job.get(d) or {})) or (None,)
    jobname, groupid = job.get("jobname"), job.get("groupid")
    if type(groupid) is not int:
        groupid = leading_int(groupid)
    cpu = None
    rows = []
    for ddir in dirs:
        row = skeletons[ddir].copy()
        row["source"] = source
        row["host"] = host
        row["jobname"] = jobname
        row["groupid"] = groupid
        row["error"] = error
        if not error and ddir in job:
            _json_direction_metrics(job[ddir], row)
            if cpu is None:  # one per job: every direction row carries it
                cpu = job_cpu_pct(job, spec["numjobs"])
            row.update(cpu)
        rows.append(row)
    return rows


def _job_layout(gopts: dict, jopts, version: str | None, has_options: bool) -> tuple[dict, tuple, dict]:
    """(spec, directions asked for, {direction: row skeleton}) of a job whose global and job options are
    ``gopts`` and ``jopts``: :func:`~memstor.parse.fio_spec.spec_from_options` and
    :func:`~memstor.parse.fio_spec.base_row` (job-specific columns still empty), remembered for the values of
    the options they read (:data:`~memstor.parse.fio_spec.SPEC_OPTIONS`; the jobs of a sweep share most of them)
    when each is a text, as fio writes them, or absent."""
    # a job's own options alone when there are no global ones (fio's JSON of a job file without [global]): read,
    # never changed, so not copied
    opts = jopts if not gopts and type(jopts) is dict else {**gopts, **(jopts or {})}
    key = tuple(map(opts.get, SPEC_OPTIONS, _ABSENT_ALL))
    if _TEXT_OR_ABSENT.issuperset(map(type, key)):
        return _cached_layout(key, version, has_options)
    return _layout(opts, version, has_options)


class _Absent:
    """The value of an option a job does not set, in the key of :func:`_cached_layout` (JSON's null is None)."""


_ABSENT = _Absent()
_ABSENT_ALL = (_ABSENT,) * len(SPEC_OPTIONS)
_TEXT_OR_ABSENT = frozenset({str, _Absent})


@functools.lru_cache(maxsize=1024)
def _cached_layout(key: tuple, version: str | None, has_options: bool) -> tuple[dict, tuple, dict]:
    """:func:`_layout` of the options whose values (texts, or _ABSENT) ``key`` gives in the order of SPEC_OPTIONS
    (hashable: the cache key; the others cannot change the layout). Callers copy the skeletons and never change
    the spec."""
    return _layout({name: value for name, value in zip(SPEC_OPTIONS, key) if value is not _ABSENT}, version,
                   has_options)


def _layout(opts: dict, version: str | None, has_options: bool) -> tuple[dict, tuple, dict]:
    """(spec, directions asked for, {direction or None: row skeleton}) of a job's merged options."""
    spec = spec_from_options(opts, version, has_options)
    dirs: tuple[str | None, ...] = directions(spec["rw"], spec["rwmixread"])
    skeletons = {d: base_row(None, None, None, None, spec, d, 0, version) for d in (*DIRECTIONS, None)}
    return spec, dirs, skeletons


def rows_from_json(doc: dict, source: str, errors: list | None = None) -> list[dict]:
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
        except DAMAGE as err:
            if errors is None:
                raise
            name = job.get("jobname") if isinstance(job, dict) else None
            errors.append(damaged_job_line(source, f"{i} ({name!r})", err))
    return rows


def _as_list(value) -> list:
    """A JSON array as a list; anything else (damaged document) as an empty list."""
    return value if isinstance(value, list) else []
