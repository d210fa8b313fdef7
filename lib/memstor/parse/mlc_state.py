"""What the MLC/loadlat reader knows while it reads a text: runs, sections, tables and measurements.

A ``Run`` is one MLC or loadlat invocation inside the text; its measurements are dicts (``add``)
that become rows only when the whole text has been read (memstor.parse.mlc_rows), because the
command line that gives their traffic may come later. A section is the part of a run under one
``Measuring ...`` heading (or its bare equivalent); a ``Table`` is one loaded-latency table.

Units of a measurement: ``latency_ns`` nanoseconds, ``bandwidth_MBps`` decimal MB/s (1e6 bytes/s),
``inject_delay`` MLC's delay value (delay-loop cycles, not ns), nodes are NUMA node numbers.
Also the token helpers every section reader uses. Pure: nothing here reads files or globals.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from memstor.parse.guards import one_line

# Lines longer than this are never MLC output; they are skipped (keeps every regex cheap).
MAX_LINE = 2000
PARTIAL = "partial: run interrupted"
# Digits after the point in MLC's (and loadlat's) printout, per section: a value on the final line of a
# text without a final newline that has fewer may be cut inside the number and is not used.
_PRINTED_DECIMALS = {"latency_matrix": 1, "bandwidth_matrix": 1, "c2c_latency": 1,
                     "peak_injection_bandwidth": 1, "max_bandwidth": 2}
_NUM_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?")


# ------------------------------------------------------------------------------------------ tokens
def clean(text: str) -> str:
    """Text with a BOM and UTF-16 NUL padding removed (PowerShell ``>`` redirects write UTF-16)."""
    text = text.lstrip("\ufeff\ufffd\xff\xfe")  # BOM, also when decoded as UTF-8 with 'replace' or latin-1
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


def is_num(tok: str) -> bool:
    """True for an unsigned decimal number such as ``203.58`` or ``00015``."""
    return _NUM_RE.fullmatch(tok) is not None


def is_count(tok: str) -> bool:
    """True for an unsigned integer made of ASCII digits (a node number, an inject delay)."""
    return tok.isascii() and tok.isdigit()


def decimals(tok: str) -> int:
    """Number of digits after the decimal point (``-1`` when there is no point)."""
    return len(tok) - tok.index(".") - 1 if "." in tok else -1


def short(text: str, limit: int) -> str:
    """``text`` folded onto one line of at most ``limit`` characters, ``...`` where it was cut."""
    return one_line(text, limit, printable_only=False, ellipsis=True)


def int_tokens(text: str) -> list[int] | None:
    """Whitespace-separated non-negative integers, or None if any token is not one."""
    toks = text.split()
    if not toks or not all(is_count(t) for t in toks):
        return None
    return [int(t) for t in toks]


# ------------------------------------------------------------------------------------------- state
@dataclass
class Table:
    """A loaded-latency table being read."""

    section: int
    has_latency: bool
    label_code: str | None
    rows: int = 0
    decimals: tuple | None = None
    blank_after: bool = False
    partial_delay: str | None = None


@dataclass
class Run:
    """One MLC/loadlat invocation inside the text."""

    index: int
    tool: str = "mlc"
    version: str = ""
    banner: bool = False
    cmdline: str | None = None
    prompt_args: str | None = None
    content: bool = False
    meas: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    section: str | None = None
    section_id: int = 0
    section_detail: str = ""
    matrix_nodes: list | None = None
    c2c_kind: str = ""
    table: Table | None = None
    tables_done: int = 0
    saw_read_only: bool = False
    help_line: str | None = None
    failure: str | None = None
    interrupted: bool = False
    random_access: bool = False    # MLC could not disable prefetchers and used random access
    no_latency: bool = False       # loadlat -T: the latency column holds 0.00, not a measurement
    warnings: dict = field(default_factory=dict)  # inject delay -> loadlat warning about that point


class Reader:
    """The state of reading one text: its lines, the runs found so far and the section being read."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        text = clean(text if isinstance(text, str) else str(text))
        self.unterminated_last = bool(text) and not text.endswith(("\n", "\r"))
        self.lines = text.splitlines()
        self.windows = bool(re.search(r"^\s*(?:PS\s+)?[A-Za-z]:\\[^\n>]*>|PowerShell transcript|mlc\.exe",
                                      text[:200_000], re.MULTILINE | re.IGNORECASE))
        self.runs: list[Run] = [Run(index=0)]
        self.prev_text = ""  # previous non-blank line (for label lines above a bare table)
        self.n_sections = 0
        self.decimals_seen: dict[int, int] = {}  # section id -> decimals of its last value

    @property
    def run(self) -> Run:
        """The run being read."""
        return self.runs[-1]

    def new_run(self) -> Run:
        """Close the current run and start the next one."""
        self.close_table()
        self.runs.append(Run(index=len(self.runs)))
        return self.run

    def start_section(self, name: str | None, detail: str = "") -> None:
        """Enter a new MLC section (closes any open table)."""
        self.close_table()
        run = self.run
        run.section, run.section_detail = name, detail
        run.matrix_nodes, run.c2c_kind, run.saw_read_only = None, "", False
        self.n_sections += 1
        run.section_id = self.n_sections
        run.content = True

    def close_table(self) -> None:
        """Finish the open loaded-latency table (if any)."""
        run = self.run
        if run.table is not None:
            if run.table.partial_delay is not None:
                self.interrupt(run.table, f"delay {run.table.partial_delay} has no values")
            elif run.table.rows == 0 and not run.interrupted:
                run.problems.append("loaded-latency table header without rows (run interrupted or output cut)")
            run.table = None
            run.tables_done += 1

    def interrupt(self, table: Table | None, why: str) -> None:
        """Mark the rows of ``table`` (or of the current section) partial and record one problem."""
        run = self.run
        if run.interrupted:
            return
        run.interrupted = True
        sec = table.section if table is not None else run.section_id
        kept = 0
        for m in run.meas:
            if m["section"] == sec:
                m["detail"].append(PARTIAL)
                kept += 1
        what = "loaded-latency sweep" if table is not None else (run.section or "run").replace("_", " ")
        run.problems.append(
            f"{what} interrupted ({why}); {kept} complete rows kept and marked '{PARTIAL}', "
            f"the rest was not measured - rerun MLC to complete it")

    def cut(self, tok: str, last: bool) -> bool:
        """True when ``tok`` is on the unterminated final line and has fewer decimals than the section
        prints (so the text may end inside the number); records the decimals of accepted values."""
        run = self.run
        expected = self.decimals_seen.get(run.section_id, _PRINTED_DECIMALS.get(run.section or "", 1))
        if last and decimals(tok) < expected:
            return True
        self.decimals_seen[run.section_id] = decimals(tok)
        return False

    def add(self, test: str, **values) -> None:
        """Record one measurement of the current run (traffic etc. are filled in when the run ends)."""
        run = self.run
        m: dict[str, Any] = {"test": test, "section": run.section_id, "detail": [], "latency_ns": None,
             "bandwidth_MBps": None, "inject_delay": None, "src_node": None, "dst_node": None,
             "traffic": None, "read_fraction": None, "traffic_from": "none", "label_code": None,
             "says_read_only": run.saw_read_only}
        m.update(values)
        for key in ("latency_ns", "bandwidth_MBps"):
            if m[key] is not None and not math.isfinite(m[key]):  # e.g. a 400-digit number -> inf
                run.problems.append(f"{test}: {key} is not a finite number; left empty")
                m[key] = None
        if run.section_detail and test in ("latency_matrix", "bandwidth_matrix"):
            m["detail"].insert(0, run.section_detail)
        run.meas.append(m)
        run.content = True
