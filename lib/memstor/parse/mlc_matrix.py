"""MLC node matrices: idle-latency and bandwidth matrices, and cache-to-cache (c2c) latencies.

``Measuring idle latencies ... (in ns)`` and ``Measuring Memory Bandwidths between nodes`` print a
``Numa node`` table: a header of memory nodes, then one row per CPU node (``src_node`` = row,
``dst_node`` = column); ``-`` is a cell MLC did not measure. Units: latency nanoseconds, bandwidth
decimal MB/s (1e6 bytes/s). ``--c2c_latency`` prints single values
(``Local Socket L2->L2 HIT  latency\t34.4``, ns) and remote matrices under ``Writer Numa Node`` /
``Reader Numa Node`` (src = writer node, dst = reader node); ``detail`` names the c2c kind. On the
last line of a text without a final newline a value with fewer decimals than printed is taken as
cut and dropped. Pure functions of the reader's state.
"""

from __future__ import annotations

import re

from memstor.parse.mlc_state import Reader, int_tokens, is_count, is_num

_NODE_HDR_RE = re.compile(r"^\s*Numa node\s+(?P<nodes>[0-9][0-9\s]*)$", re.IGNORECASE)
_WRITER_HDR_RE = re.compile(r"^\s*Writer Numa Node\s+(?P<nodes>[0-9][0-9\s]*)$", re.IGNORECASE)
_C2C_SINGLE_RE = re.compile(
    r"^\s*(?P<kind>(?:Local|Remote) Socket \S+->\S+ HITM?)\s+latency"
    r"(?:\s*\((?P<note>[^()]*)\))?\s*(?P<val>[0-9]+(?:\.[0-9]+)?)?\s*$",
    re.IGNORECASE,
)
_MATRICES = ("latency_matrix", "bandwidth_matrix")


def _row_values(r: Reader, toks: list[str], last: bool, width: int) -> list[str] | None:
    """The cells of a matrix row (``toks`` after its node number): numbers or ``-``, a last value cut
    by the end of the text dropped; None when they cannot be a row of ``width`` columns."""
    vals = toks[1:]
    if vals and vals[-1] != "-" and is_num(vals[-1]) and r.cut(vals[-1], last):
        vals = vals[:-1]
    if len(vals) > width or not all(is_num(v) or v == "-" for v in vals):
        return None
    return vals


def matrix_line(r: Reader, stripped: str, last: bool) -> bool:
    """Idle-latency / bandwidth matrix header and rows (``Numa node`` tables); False for other lines."""
    run = r.run
    if stripped.lower() == "numa node":
        return True
    m = _NODE_HDR_RE.match(stripped)
    if m:
        run.matrix_nodes = int_tokens(m.group("nodes"))
        if run.section not in _MATRICES:
            run.problems.append("a 'Numa node' matrix without its 'Measuring ...' heading was skipped")
            run.matrix_nodes = None
        return True
    if run.matrix_nodes is None or run.section not in _MATRICES:
        return False
    toks = stripped.split()
    if not is_count(toks[0]):
        return False
    vals = _row_values(r, toks, last, len(run.matrix_nodes))
    if vals is None:
        return False
    key = "latency_ns" if run.section == "latency_matrix" else "bandwidth_MBps"
    traffic_from = "command" if run.section == "bandwidth_matrix" else "none"
    for node, v in zip(run.matrix_nodes, vals):
        if v != "-":
            r.add(run.section, src_node=int(toks[0]), dst_node=node, traffic_from=traffic_from,
                  **{key: float(v)})
    return True


def c2c_line(r: Reader, stripped: str, last: bool) -> bool:
    """Cache-to-cache latency lines: local single values and remote writer x reader matrices."""
    run = r.run
    m = _C2C_SINGLE_RE.match(stripped)
    if m:
        if run.section != "c2c_latency":
            r.start_section("c2c_latency")
        kind = " ".join(m.group("kind").split())
        note = m.group("note")
        val = m.group("val")
        if val is not None and r.cut(val, last):
            val = None  # the last line of a cut file may end inside the number
        if val is not None:
            r.add("c2c_latency", latency_ns=float(val), detail=[kind + (f" ({note})" if note else "")])
            run.c2c_kind = ""
        else:
            run.c2c_kind = kind + (f" ({note})" if note else "")
        run.matrix_nodes = None
        return True
    if run.section != "c2c_latency":
        return False
    if re.match(r"^Reader Numa Node$", stripped, re.IGNORECASE):
        return True
    m = _WRITER_HDR_RE.match(stripped)
    if m:
        run.matrix_nodes = int_tokens(m.group("nodes"))
        return True
    if run.matrix_nodes is None or not run.c2c_kind:
        return False
    toks = stripped.split()
    vals = _row_values(r, toks, last, len(run.matrix_nodes))  # (a cut value is checked before the node)
    if vals is None or not is_count(toks[0]):
        return False
    for node, v in zip(run.matrix_nodes, vals):
        if v != "-":
            r.add("c2c_latency", latency_ns=float(v), src_node=int(toks[0]), dst_node=node,
                  detail=[run.c2c_kind])
    return True
