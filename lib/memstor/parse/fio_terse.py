"""fio's terse output (``--output-format=terse`` / ``--minimal``, layouts v2..v5) -> records and rows.

A terse line is ``;``-separated: layout version, (v3+) fio version, job name, group id, error, then
one block per direction (read, write, and from v4 on trim; 41 fields each, 47 in v5). Units in a
block: I/O in KiB, bandwidth KiB/s, IOPS, runtime milliseconds, latencies and percentiles
microseconds. Terse carries no rw option and no I/O count, so ``total_ios`` stays None and a
terse-only job's directions are those that did I/O.

A terse line printed beside a normal-text result of the same job (``--output-format=normal,terse``)
is its *twin*: it only refines the normal text's mean/stdev latency and CPU use (6 decimals instead of 2).

fio's CPU use follows the direction blocks: ``usr_cpu%;sys_cpu%;ctx;majf;minf`` (percent of one CPU,
averaged over the threads of the line: see memstor.parse.fio_json.job_cpu_pct). It is read into the record
(``cpu``), but a terse-only row leaves ``cpu_usr_pct``/``cpu_sys_pct`` empty: a terse line does not say
whether it describes one thread or a group_reporting group of N (whose sum is N times the printed value),
and carries no thread count or summed run time to tell. Measured with fio-3.33 (``--numjobs=2
--group_reporting --ioengine=null``): the terse line says ``64.717641%;3.148426%`` exactly like the normal
text's ``usr=64.72%, sys=3.15%`` of ``jobs=2``, so only a normal-text twin (which prints ``jobs=N``) can sum it.
Units of the rows as in memstor.parse.fio (decimal MB/s, microseconds, seconds). Pure functions.
"""

from __future__ import annotations

from typing import Any

from memstor.parse.fio_spec import (
    DIRECTIONS,
    METRIC_COLUMNS,
    base_row,
    leading_int,
    pct_key,
    percentile_columns,
)


def is_terse(stripped: str) -> bool:
    """A (stripped) line starts like a terse line of layout v2..v5."""
    return stripped[:2] in ("2;", "3;", "4;", "5;")


def terse_record(line: str, version: str | None, host: str | None) -> dict | None:
    """The record of one terse line (layout v2..v5); None when the line is too short to be complete.

    ``version``/``host``: the fio version and host known from the text around it (v2 lines do not
    carry the version). Raises ValueError etc. (memstor.parse.guards.DAMAGE) on a damaged line.
    """
    f = line.split(";")
    layout = int(f[0])
    head = 4 if layout == 2 else 5
    block = 47 if layout == 5 else 41
    if len(f) < head + 2 * block:
        return None
    dirs: dict[str, dict] = {}
    rec: dict[str, Any] = {"name": f[head - 3], "groupid": leading_int(f[head - 2]),
                           "error": leading_int(f[head - 1]), "version": f[1] if layout != 2 else version,
                           "host": host, "dirs": dirs}
    n_dirs = 2 if layout == 3 or layout == 2 else 3
    for i, ddir in enumerate(DIRECTIONS[:n_dirs]):
        start = head + i * block
        if len(f) >= start + block:
            dirs[ddir] = _terse_direction(f[start:start + block])
    rec["cpu"] = terse_cpu(f, head, block)
    return rec


def _is_pct(field: str) -> bool:
    """A bare percentage field of a terse line (``64.717641%``; percentiles are ``99.000000%=123``)."""
    number = field.strip().removesuffix("%")
    return field.strip().endswith("%") and number.replace(".", "", 1).isdigit()


def terse_cpu(f: list[str], head: int, block: int) -> tuple[float, float] | None:
    """(usr, sys) percent of one CPU from a terse line's fields, or None when not found.

    They follow the direction blocks, whose number depends on the layout and the fio version (fio-3.33
    prints read, write and trim in v2, v4 and v5 but only read and write in v3; ``unified_rw_reporting``
    prints one block), so each possible end of the blocks is tried: the CPU fields are the only two bare
    percentages in a row followed by the context-switch count."""
    for n_blocks in (3, 2, 1):
        i = head + n_blocks * block
        if len(f) > i + 2 and _is_pct(f[i]) and _is_pct(f[i + 1]) and f[i + 2].strip().isdigit():
            return float(f[i].strip()[:-1]), float(f[i + 1].strip()[:-1])
    return None


def _terse_direction(f: list[str]) -> dict:
    """Parsed fields of one terse direction block (KiB, KiB/s, IOPS, ms, usec)."""
    pcts = {}
    for item in f[12:32]:
        key, _, value = item.partition("%=")
        if value and float(key) > 0:
            pcts[pct_key(key)] = float(value)
    return {"io_kib": int(f[0]), "bw_kibps": float(f[1]), "iops": float(f[2]), "runtime_ms": int(f[3]),
            "lat": tuple(float(x) for x in f[32:36]), "pcts": pcts}


def _terse_metrics(d: dict) -> dict:
    """Metric columns from a terse direction (no I/O count in terse: total_ios stays None)."""
    out = dict.fromkeys(METRIC_COLUMNS)
    out.update(iops=d["iops"], bw_MBps=d["bw_kibps"] * 1024 / 1e6, runtime_s=d["runtime_ms"] / 1000)
    if d["io_kib"] > 0:
        mn, mx, mean, sd = d["lat"]
        out.update(lat_mean_us=mean, lat_stddev_us=sd, lat_min_us=mn, lat_max_us=mx)
        out.update(percentile_columns(d["pcts"], 1.0))
    return out


def terse_rows(rec: dict, source: str) -> list[dict]:
    """Rows of a terse-only record: rw is not in terse, so directions are those that did I/O."""
    active = tuple(d for d, v in rec["dirs"].items() if v["io_kib"] > 0) or (None,)
    rows = []
    for ddir in active:
        row = base_row(source, rec["host"], rec["name"], rec["groupid"], {}, ddir, rec["error"],
                       rec["version"])
        if not rec["error"] and ddir is not None:
            row.update(_terse_metrics(rec["dirs"][ddir]))
        rows.append(row)
    return rows


def pair_terse(records: list[dict], terse: list[dict]) -> tuple[list, list]:
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


def twin_cpu(printed: tuple[float, float] | None, terse: dict | None) -> tuple[float, float] | None:
    """The normal text's (usr, sys) CPU percentages, with the terse twin's 6 decimals when it agrees with
    the 2 the text printed."""
    finer = (terse or {}).get("cpu")
    if printed is None or finer is None:
        return printed
    agree = all(abs(a - b) <= 0.006 for a, b in zip(printed, finer))
    return finer if agree else printed


def refine_from_terse(row: dict, terse: dict | None, ddir: str) -> None:
    """Use the terse twin's 6-decimal mean/stdev latency (usec) where normal text rounds to 2."""
    d = (terse or {}).get("dirs", {}).get(ddir)
    if d and d["io_kib"] > 0 and row["lat_mean_us"] is not None:
        row["lat_mean_us"], row["lat_stddev_us"] = d["lat"][2], d["lat"][3]
