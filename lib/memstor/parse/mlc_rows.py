"""The measurements of every MLC/loadlat run -> rows of ``memstor.core.schema.MLC_COLUMNS`` and error lines.

Done once the whole text is read, because a run's command line may come after its tables. Traffic,
read fraction (share of bytes read, 0..1) and access size (bytes) come from the command line (else a
shell prompt that invoked the tool), with MLC's defaults (read-only, 64 B) for a run that has the
banner but printed no command line; a table with neither gets its traffic from MLC's ``Using
Read-only traffic type`` line or a label line above it, else traffic and access size stay empty
(unknown, never a default). ``detail`` collects what has no column. Units of the rows: latency
nanoseconds, bandwidth decimal MB/s (1e6 bytes/s), ``inject_delay`` MLC's delay value. A run
without measurements gives one error line ``SOURCE: reason``. Pure functions.
"""

from __future__ import annotations

from memstor.core.schema import MLC_COLUMNS, ParseResult
from memstor.parse.mlc_header import MLC_DEFAULT_ACCESS_BYTES, Options, parse_options, traffic_of_code
from memstor.parse.mlc_state import Reader, Run, short


def finish(r: Reader) -> ParseResult:
    """Rows for every run with measurements, one-line errors for the rest."""
    rows: list[dict] = []
    problems: list[str] = []
    runs = [run for run in r.runs if run.content or run.meas]
    multi = len(runs) > 1
    for run in runs:
        prefix = f"run {run.index}: " if multi or run.index else ""
        rows.extend(_rows(r, run))
        if not run.meas:
            problems.append(prefix + _empty_reason(run))
        for p in run.problems:
            if run.meas:
                problems.append(prefix + p)
    if not runs:
        problems.append("no MLC or loadlat measurement found (expected the text output of Intel MLC "
                        "or loadlat; for fio output use --kind fio)")
    if not rows and len(problems) > 1:
        problems = ["no measurement: " + "; ".join(problems)]
    return ParseResult(rows=rows, errors=[f"{r.source}: {short(p, 400)}" for p in problems])


def _empty_reason(run: Run) -> str:
    """Why a run gave no rows."""
    tool = "loadlat" if run.tool == "loadlat" else "MLC"
    if run.help_line:
        return (f"{tool} printed its usage text ('{short(run.help_line, 60)}'), no measurement; "
                f"run it with a mode such as --loaded_latency")
    if run.failure:
        return f"{tool} reported '{run.failure}' and measured nothing"
    if run.problems:
        return "; ".join(run.problems)
    if run.banner or run.cmdline is not None:
        return (f"{tool} banner but no measurement (header-only, cut or failed run); "
                f"rerun {tool.lower()} and keep its whole output")
    return "no MLC or loadlat measurement found"


def _rows(r: Reader, run: Run) -> list[dict]:
    """Turn the measurements of ``run`` into schema rows."""
    opts = parse_options(run.cmdline if run.cmdline is not None else run.prompt_args)
    known_cmd = run.cmdline is not None or run.prompt_args is not None
    if opts.access_bytes is not None:
        access = opts.access_bytes
    elif known_cmd or run.banner:
        access = MLC_DEFAULT_ACCESS_BYTES
    else:
        access = None
    common = []
    if opts.extra:
        common.append("options: " + " ".join(opts.extra))
    if r.windows:
        common.append("Windows")
    out = []
    for m in run.meas:
        detail = list(m["detail"])
        traffic, frac = m["traffic"], m["read_fraction"]
        if m["traffic_from"] == "command":
            traffic, frac, note = _command_traffic(run, opts, known_cmd, m)
            if note:
                detail.append(note)
        dst = m["dst_node"]
        if m["test"] == "idle_latency" and dst is None:
            dst = opts.mem_node
        lat = m["latency_ns"]
        if m["test"] == "loaded_latency":
            if lat is not None and (run.no_latency or "-T" in opts.extra or lat == 0.0):
                lat = None  # -T: no latency thread; the 0.00 printed is not a measurement
                detail.append("latency not measured (-T)")
            if m["inject_delay"] in run.warnings:
                detail.append("warning: " + run.warnings[m["inject_delay"]])
        if (run.random_access and m["test"] in ("idle_latency", "latency_matrix", "loaded_latency")
                and not any("random access" in d for d in detail)):
            detail.append("random access")
        if access is None and m["test"] != "c2c_latency":
            detail.append("no command line: access size unknown")
        row = dict.fromkeys(MLC_COLUMNS)
        row.update(
            source=r.source, run=run.index, tool=run.tool, tool_version=run.version, test=m["test"],
            traffic=traffic, read_fraction=frac, access_bytes=access, inject_delay=m["inject_delay"],
            latency_ns=lat, bandwidth_MBps=m["bandwidth_MBps"], src_node=m["src_node"],
            dst_node=dst, detail="; ".join(detail + common) or None)
        out.append(row)
    return out


def _command_traffic(run: Run, opts: Options, known_cmd: bool, m: dict):
    """(traffic, read fraction, note) for loaded-latency / bandwidth-matrix / unlabeled peak rows."""
    if opts.code is not None:
        return traffic_of_code(opts.code)
    if known_cmd or run.banner:
        return traffic_of_code("R")  # MLC's default traffic is read-only
    if m.get("says_read_only"):
        return "read-only", 1.0, "traffic from MLC's 'Using Read-only traffic type' line"
    if m.get("label_code"):
        label, frac, _ = traffic_of_code(m["label_code"])
        return label, frac, "traffic from the label line above the table"
    return None, None, "no command line: traffic unknown"
