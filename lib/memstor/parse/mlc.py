"""Parser for Intel Memory Latency Checker (MLC) and loadlat text output -> tidy rows.

Pure functions of text (no file I/O, no globals besides compiled patterns):

- ``parse_mlc(text, source) -> ParseResult``: one row per measurement, keys exactly
  ``memstor.core.schema.MLC_COLUMNS``, ``None`` where a value is not available.
- ``looks_like_mlc(text) -> bool``: cheap test for auto-detection (never claims fio output).

What is read (MLC v3.1a .. v3.11b and loadlat, which prints MLC v3.10's layout):

- idle latency ``Each iteration took N core clocks ( X ns)`` (and the ``base frequency clocks`` form),
  test ``idle_latency``; the clock count goes to ``detail``; ``src_node`` is empty (MLC does not say
  which CPU node) and ``dst_node`` is the ``-j`` memory node when given, else empty;
- idle latency matrix (``Measuring idle latencies ... (in ns)``, ``Numa node`` tables), test
  ``latency_matrix``: ``src_node`` = row (node of the CPU), ``dst_node`` = column (memory node);
- peak injection bandwidth and max bandwidth (``ALL Reads        :\\tX`` ... ``Stream-triad like:``), traffic
  from ``memstor.core.schema.PEAK_ROW_TRAFFIC``; such lines are also read without the ``Measuring`` heading
  (loadlat prints them bare);
- bandwidth matrix (``Measuring Memory Bandwidths between nodes``), MB/s, src = CPU node, dst = memory node;
- loaded latency (``Inject Latency Bandwidth`` / ``Delay (ns) MB/sec`` / ``=====`` / rows), tab- or
  space-aligned, latencies >= 1000 ns without their leading space; ``inject_delay`` is MLC's delay value
  (delay-loop cycles, not ns);
- cache-to-cache latency (``Local Socket L2->L2 HIT  latency\\t34.4`` and the remote writer x reader
  matrices), ``detail`` names the kind, src = writer node, dst = reader node.

Traffic, read fraction and access size come from the ``Command line parameters:`` line (else from a
shell-prompt line that invoked mlc/loadlat), with MLC's defaults (read-only, 64 B) for a run that has
the MLC banner but printed no command line (old full default runs). A table with neither banner nor
command line (a bare pasted table) gets its traffic from a label line just above it such as
``2 reads and 1 non-temporal write`` when there is one, else traffic and access size stay empty: they
are unknown, and a default would be a silently wrong number.

Several runs in one text (banners, ``Command line parameters:`` lines, ``==== Run N ====`` separators,
shell prompts) get ``run`` = 0, 1, ... in order of appearance. An interrupted run (``Exiting...``, a
row with a delay and no values) keeps its complete rows with ``detail`` containing
``partial: run interrupted`` plus one error line. Header-only runs, MLC's usage text and texts with no
measurement give one-line errors ``SOURCE: reason``. A text that ends without a newline inside a
number (a file copied while MLC was still writing) loses that value rather than keeping a shortened
one: on that final line a value with fewer decimals than MLC prints is treated as cut. Warnings
(``*** ...``), ``#`` comments (loadlat's delay calibration), PowerShell transcript headers and other
chatter are ignored. ``detail`` collects what has no column: the clock count of idle latency, the c2c
kind, ``random access`` (MLC could not disable the prefetchers), ``partial: run interrupted``, other
command-line options (``options: -t10 -X``), ``Windows`` (cmd/PowerShell prompt seen), and notes on
where traffic came from when it was not a command line. loadlat's own notes are read too: ``# interrupted
by signal N ...`` (kept rows marked partial), ``# ... failed: why`` (an error line), ``# -T`` (its latency
column then holds 0.00, which becomes an empty latency, never 0 ns) and, when stderr was captured with
stdout, ``loadlat: warning: ... delay D: ...`` (added to that row's detail). Work is linear in the text
length.

This module is the entry point and the line dispatcher (with the tool's own messages: warnings,
interruptions, usage text, failures, loadlat notes, and idle latency). The rest is read by
memstor.parse.mlc_header (banner and version, command line, prompts, options and traffic codes),
mlc_loaded (loaded-latency tables), mlc_matrix (node matrices and c2c), mlc_bandwidth (peak injection
and max bandwidth), on the reader state of mlc_state; mlc_rows turns the runs into rows.
"""

from __future__ import annotations

import re

from memstor.core.schema import ParseResult
from memstor.parse.mlc_bandwidth import peak_line
from memstor.parse.mlc_header import prompt_line, start_line
from memstor.parse.mlc_loaded import end_line, table_header, table_line
from memstor.parse.mlc_matrix import c2c_line, matrix_line
from memstor.parse.mlc_rows import finish
from memstor.parse.mlc_state import MAX_LINE, Reader, clean, short

__all__ = ["looks_like_mlc", "parse_mlc"]

_MEASURING_RE = re.compile(r"^\s*Measuring\s+(?P<what>.*)$", re.IGNORECASE)
_IDLE_RE = re.compile(
    r"Each iteration took\s+(?P<clk>[0-9]+(?:\.[0-9]+)?)\s+(?P<kind>[A-Za-z ]*?clocks)\s*"
    r"\(\s*(?P<ns>[0-9]+(?:\.[0-9]+)?)\s*ns\s*\)"
)
_INTERRUPT_RE = re.compile(r"^\s*(?:Exiting\.*|\^C|Killed|Terminated|Aborted.*|.*Segmentation fault.*)\s*$")
_FAILURE_RE = re.compile(
    r"^\s*(?:ERROR|Error|Invalid|Failed|Unable|Could not|Cannot|Can't)\b.*$|.*\b(?:requires root|"
    r"run as root|administrator|msr module)\b.*$"
)
# loadlat's own notes: '#' comments on stdout, 'loadlat: ...' messages on stderr (often merged).
_LL_INTERRUPT_RE = re.compile(r"^#\s*interrupted by signal\s+(?P<sig>[0-9]+) after (?P<n>[0-9]+) of (?P<of>[0-9]+)")
_LL_FAILED_RE = re.compile(r"^#\s*(?P<what>\S.*?)\s+failed:\s*(?P<why>.*)$")
_LL_NO_LAT_RE = re.compile(r"^#\s*-T\b")
_LL_WARN_RE = re.compile(r"^loadlat: warning: (?:\S+ )?delay (?P<delay>[0-9]+): (?P<msg>.*)$")
_LL_POINT_FAILED_RE = re.compile(r"^loadlat: point delay (?P<delay>[0-9]+) failed: (?P<why>.*)$")


def looks_like_mlc(text: str) -> bool:
    """True when ``text`` looks like MLC or loadlat output (banner, command line, MLC headings, tables).

    fio output (JSON, normal or terse) is never claimed unless it also carries an MLC/loadlat banner.
    """
    if not isinstance(text, str) or not text:
        return False
    head = clean(text[:200_000])
    if "Memory Latency Checker" in head:
        return True
    if re.search(r'"fio version"|\bfio-[0-9]|Run status group|^[0-9]+;fio-', head, re.MULTILINE):
        return False
    # [ \t]* and not \s* in MULTILINE patterns: \s* would run across blank lines (quadratic time).
    if re.search(r"^[ \t]*Command line parameters:[ \t]*--?[a-z]", head, re.MULTILINE):
        return True
    if re.search(r"^[ \t]*Inject[ \t]+(?:Latency[ \t]+)?Bandwidth[ \t]*$", head, re.MULTILINE):
        return True
    if _IDLE_RE.search(head):
        return True
    return bool(re.search(
        r"^[ \t]*Measuring (?:idle latencies|Peak (?:Injection )?Memory Bandwidths|Maximum Memory Bandwidths|"
        r"Memory Bandwidths between nodes|Loaded Latencies|cache-to-cache)",
        head, re.MULTILINE | re.IGNORECASE))


def parse_mlc(text: str, source: str) -> ParseResult:
    """Parse MLC/loadlat text into tidy rows (latency in ns, bandwidth in decimal MB/s = 1e6 bytes/s).

    Never raises: anything unreadable becomes a one-line error ``"SOURCE: reason"``.
    """
    try:
        return _read(Reader(text, source))
    except Exception as exc:  # defensive: a parser bug must not become a traceback for the user
        return ParseResult(rows=[], errors=[f"{source}: internal parser error ({type(exc).__name__}: "
                                            f"{short(str(exc), 120)}); please report this file"])


# ----------------------------------------------------------------------------------------------------
# the line-by-line state machine: each line goes to the reader of the section it belongs to


def _read(r: Reader) -> ParseResult:
    """Read every line, then turn the runs into rows and errors."""
    n = len(r.lines)
    for i, raw in enumerate(r.lines):
        line = raw if len(raw) <= MAX_LINE else ""
        last = r.unterminated_last and i == n - 1
        _line(r, line.rstrip(), last)
        if line.strip():
            r.prev_text = line.strip()
    r.close_table()
    return finish(r)


def _line(r: Reader, line: str, last: bool) -> None:
    """Dispatch one line (``last``: the final line of a text without a final newline)."""
    run = r.run
    stripped = line.strip()
    if not stripped:
        if run.table is not None:
            run.table.blank_after = run.table.rows > 0 or run.table.partial_delay is not None
        return
    if start_line(r, line):
        return  # banner, command line, separator
    if stripped.startswith("#"):
        _loadlat_comment(r, stripped)
        return  # loadlat comments (delay calibration ...)
    if stripped.startswith("loadlat: "):
        _loadlat_message(r, stripped)
        return
    if stripped.startswith("***"):
        if "enabling random access" in stripped:
            run.random_access = True
        return  # MLC warnings such as '*** Unable to modify prefetchers'
    if prompt_line(r, line):
        return

    if run.table is not None and table_line(r, stripped, last):
        return
    if _INTERRUPT_RE.match(line):
        end_line(r, stripped)
        return
    if stripped.startswith("Invalid Argument") or stripped.startswith("USAGE:"):
        run.help_line = run.help_line or stripped
        run.content = True
        return

    m = _MEASURING_RE.match(line)
    if m:
        _measuring(r, m.group("what"))
        return
    if re.match(r"^Inject\s", stripped) and "Bandwidth" in stripped:
        table_header(r, stripped)
        return
    m = _IDLE_RE.search(line)
    if m:
        _idle(r, m, last)
        return
    if stripped.startswith("Using Read-only traffic"):
        run.saw_read_only = True
        return
    if matrix_line(r, stripped, last) or c2c_line(r, stripped, last) or peak_line(r, stripped, last):
        return
    if _FAILURE_RE.match(line) and run.failure is None:
        run.failure = short(stripped, 100)


def _loadlat_comment(r: Reader, stripped: str) -> None:
    """loadlat '#' lines that matter: interruption, failed points, -T; the others are notes."""
    run = r.run
    m = _LL_INTERRUPT_RE.match(stripped)
    if m:
        r.interrupt(run.table, f"loadlat stopped by signal {m.group('sig')} after {m.group('n')} of "
                               f"{m.group('of')} points")
        return
    m = _LL_FAILED_RE.match(stripped)
    if m:
        what = " ".join(m.group("what").split())
        run.problems.append(f"loadlat: {what} failed: {short(m.group('why'), 100)}")
        run.failure = run.failure or f"{what} failed: {short(m.group('why'), 100)}"
        return
    if _LL_NO_LAT_RE.match(stripped):
        run.no_latency = True


def _loadlat_message(r: Reader, stripped: str) -> None:
    """loadlat's stderr lines when they were captured with stdout."""
    run = r.run
    m = _LL_WARN_RE.match(stripped)
    if m:
        run.warnings[int(m.group("delay"))] = short(m.group("msg"), 100)
        return
    m = _LL_POINT_FAILED_RE.match(stripped)
    if m:
        run.problems.append(f"loadlat: point delay {m.group('delay')} failed: {short(m.group('why'), 100)}")
        return
    if "warning" not in stripped and "interrupted" not in stripped:
        run.failure = run.failure or short(stripped, 100)


def _measuring(r: Reader, what: str) -> None:
    """Start the section named by a ``Measuring ...`` heading."""
    w = what.lower()
    if w.startswith("idle latenc"):
        m = re.search(r"for (\w+) access", w)
        r.start_section("latency_matrix", f"{m.group(1)} access" if m else "")
    elif w.startswith("peak"):
        r.start_section("peak_injection_bandwidth")
    elif w.startswith("maximum"):
        r.start_section("max_bandwidth")
    elif w.startswith("memory bandwidths between"):
        r.start_section("bandwidth_matrix")
    elif w.startswith("loaded latenc"):
        r.start_section("loaded_latency")
    elif w.startswith("cache-to-cache"):
        r.start_section("c2c_latency")
    else:
        r.start_section(None)


def _idle(r: Reader, m: re.Match, last: bool) -> None:
    """``Each iteration took N core clocks ( X ns)`` -> one idle_latency measurement (ns)."""
    if last and not r.lines[-1].rstrip().endswith(")"):
        return
    r.add("idle_latency", latency_ns=float(m.group("ns")),
          detail=[f"{m.group('clk')} {' '.join(m.group('kind').split())} per load"])
