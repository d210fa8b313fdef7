"""MLC/loadlat loaded-latency tables (``--loaded_latency``): one measurement per inject delay.

A table is a header ``Inject  Latency  Bandwidth`` (``Inject  Bandwidth`` without the latency
column), ``Delay   (ns)    MB/sec``, a ``=====`` rule and rows ``00000\t203.58\t 144906.6``,
tab- or space-aligned; MLC prints latencies >= 1000 ns without their leading space. Units: the inject
delay is MLC's delay value (delay-loop cycles, not ns), latency nanoseconds, bandwidth decimal MB/s
(1e6 bytes/s). A row with a delay and no values means the sweep was interrupted there; on the last
line of a text without a final newline a value with fewer decimals than printed is taken as cut.
A second table without a new banner is another run. Pure functions of the reader's state.
"""

from __future__ import annotations

from memstor.parse.mlc_header import label_code
from memstor.parse.mlc_state import Reader, Table, decimals, is_count, is_num

_LOADED_DECIMALS = (2, 1)  # ' %05d\t%6.2f\t%9.1f'


def table_header(r: Reader, stripped: str) -> None:
    """``Inject  Latency  Bandwidth``: a loaded-latency table starts."""
    r.close_table()
    run = r.run
    if run.section == "loaded_latency" and run.tables_done:
        run = r.new_run()  # a second table without a new banner: another run
        r.start_section("loaded_latency")
    elif run.section != "loaded_latency":
        r.start_section("loaded_latency")
    label = r.prev_text
    run.table = Table(section=run.section_id, has_latency="Latency" in stripped,
                      label_code=label_code(label))


def table_line(r: Reader, stripped: str, last: bool) -> bool:
    """A line inside a loaded-latency table; False if it is not part of the table."""
    table = r.run.table
    assert table is not None  # the caller (memstor.parse.mlc) calls it only while a table is open
    if stripped.startswith("Delay") or set(stripped) <= {"="}:
        return True
    toks = stripped.split()
    if not is_count(toks[0]):
        return False
    want = 2 if table.has_latency else 1
    if not all(is_num(t) for t in toks[1:]):
        if len(toks) != want + 1:
            return False
        r.run.problems.append(f"loaded-latency row of delay {toks[0]} has unreadable values "
                              f"{' '.join(toks[1:])!r}; row skipped")
        return True
    values = toks[1:]
    if len(values) > want:
        return False
    if last and len(values) == want:
        decs = tuple(decimals(t) for t in values)
        expected = table.decimals or (_LOADED_DECIMALS if table.has_latency else _LOADED_DECIMALS[1:])
        if any(d < e for d, e in zip(decs, expected)):
            values = values[:-1]  # the last line of a cut file may end inside a number
    if len(values) < want:
        table.partial_delay = toks[0]
        return True
    if table.partial_delay is not None:
        return False
    table.decimals = tuple(decimals(t) for t in values)
    lat = float(values[0]) if table.has_latency else None
    r.add("loaded_latency", inject_delay=int(toks[0]), latency_ns=lat,
          bandwidth_MBps=float(values[-1]), traffic_from="command", label_code=table.label_code)
    r.run.meas[-1]["section"] = table.section
    table.rows += 1
    return True


def end_line(r: Reader, stripped: str) -> None:
    """An interruption line (``Exiting...``, ``^C``, ``Killed``...): an open table's rows so far are
    kept and marked partial; otherwise the run ended early (one problem line)."""
    run = r.run
    table = run.table
    if table is not None and (table.partial_delay is not None or not table.blank_after):
        r.interrupt(table, f"'{stripped}'" if table.partial_delay is None
                    else f"delay {table.partial_delay} has no values, then '{stripped}'")
        table.partial_delay = None
        r.close_table()
    else:
        r.close_table()
        run.problems.append(f"run ended early with '{stripped}'"
                            + (f" during {run.section.replace('_', ' ')}" if run.section else ""))
