"""Parser for Intel Memory Latency Checker (MLC) and loadlat text output -> tidy rows.

Pure functions of text (no file I/O, no globals besides compiled patterns):

- ``parse_mlc(text, source) -> ParseResult``: one row per measurement, keys exactly
  ``memstor.schema.MLC_COLUMNS``, ``None`` where a value is not available.
- ``looks_like_mlc(text) -> bool``: cheap test for auto-detection (never claims fio output).

What is read (MLC v3.1a .. v3.11b and loadlat, which prints MLC v3.10's layout):

- idle latency ``Each iteration took N core clocks ( X ns)`` (and the ``base frequency clocks`` form),
  test ``idle_latency``; the clock count goes to ``detail``; ``src_node`` is empty (MLC does not say
  which CPU node) and ``dst_node`` is the ``-j`` memory node when given, else empty;
- idle latency matrix (``Measuring idle latencies ... (in ns)``, ``Numa node`` tables), test
  ``latency_matrix``: ``src_node`` = row (node of the CPU), ``dst_node`` = column (memory node);
- peak injection bandwidth and max bandwidth (``ALL Reads        :\\tX`` ... ``Stream-triad like:``), traffic
  from ``memstor.schema.PEAK_ROW_TRAFFIC``; such lines are also read without the ``Measuring`` heading
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
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from memstor.schema import MLC_COLUMNS, PEAK_ROW_TRAFFIC, TRAFFIC_CODES, ParseResult

# Lines longer than this are never MLC output; they are skipped (keeps every regex cheap).
_MAX_LINE = 2000

_BANNER_RE = re.compile(
    r"^\s*(?P<name>Intel\(R\) Memory Latency Checker|loadlat \(Memory Latency Checker-compatible\))"
    r"\s*-\s*(?P<ver>v[0-9][0-9A-Za-z._-]*)?"
)
_CMDLINE_RE = re.compile(r"^\s*Command line parameters:\s*(?P<args>.*)$")
_SEPARATOR_RE = re.compile(r"^\s*(?P<c>[=#*-])(?P=c){2,}\s*(?P<text>[^\s=#*-].*?)\s*(?P=c){3,}\s*$")
_PROMPT_RE = re.compile(
    r"^\s*(?:\([^()\s]*\)\s*)?"
    r"(?:PS\s+[^>]*>|[A-Za-z]:\\[^>]*>|\[[^\]]*\]\s*[$#]|[^\s>$#]*[$#>])\s*"
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:[^\s/\\]*[/\\])*(?P<tool>mlc|loadlat)(?:_avx512|_avx2)?(?:\.exe)?(?:\s+(?P<args>.*))?$",
    re.IGNORECASE,
)
# Any shell prompt (even one that does not run mlc) ends the section being read.
_ANY_PROMPT_RE = re.compile(r"^\s*(?:PS\s+[^>]*>|[A-Za-z]:\\[^>]*>|[^\s@]+@[^\s:]+:[^$#]*[$#](?:\s|$))")
_PEAK_WORD_RE = re.compile(r"read|write|triad|copy|\bnt\b", re.IGNORECASE)
_MEASURING_RE = re.compile(r"^\s*Measuring\s+(?P<what>.*)$", re.IGNORECASE)
_IDLE_RE = re.compile(
    r"Each iteration took\s+(?P<clk>[0-9]+(?:\.[0-9]+)?)\s+(?P<kind>[A-Za-z ]*?clocks)\s*"
    r"\(\s*(?P<ns>[0-9]+(?:\.[0-9]+)?)\s*ns\s*\)"
)
_NODE_HDR_RE = re.compile(r"^\s*Numa node\s+(?P<nodes>[0-9][0-9\s]*)$", re.IGNORECASE)
_WRITER_HDR_RE = re.compile(r"^\s*Writer Numa Node\s+(?P<nodes>[0-9][0-9\s]*)$", re.IGNORECASE)
_C2C_SINGLE_RE = re.compile(
    r"^\s*(?P<kind>(?:Local|Remote) Socket \S+->\S+ HITM?)\s+latency"
    r"(?:\s*\((?P<note>[^()]*)\))?\s*(?P<val>[0-9]+(?:\.[0-9]+)?)?\s*$",
    re.IGNORECASE,
)
_PEAK_RE = re.compile(r"^\s*(?P<label>\S.*?)\s*:\s*(?P<val>[0-9]+(?:\.[0-9]+)?)\s*$")
_NUM_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?")
_LABEL_RE = re.compile(
    r"^\s*(?:100\s*%\s*(?P<nt1>non[- ]?temporal\s+)?(?P<kind>reads?|writes?)"
    r"|(?P<r>[0-9]+)\s*reads?\s*(?:and|,|/|:)?\s*(?P<w>[0-9]+)\s*(?P<nt2>non[- ]?temporal\s+)?writes?)"
    r"\s*$",
    re.IGNORECASE,
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

_MODES = {
    "--idle_latency": "idle_latency",
    "--latency_matrix": "latency_matrix",
    "--bandwidth_matrix": "bandwidth_matrix",
    "--peak_injection_bandwidth": "peak_injection_bandwidth",
    "--max_bandwidth": "max_bandwidth",
    "--loaded_latency": "loaded_latency",
    "--c2c_latency": "c2c_latency",
}
# Read fraction of each traffic label (share of bytes read), from the -W code table.
_LABEL_FRACTION = {label: frac for label, frac in TRAFFIC_CODES.values()}
# (reads, writes, non-temporal) of a hand-written label line -> -W code.
_RATIO_CODE = {
    (1, 0, False): "R", (2, 1, False): "W2", (3, 1, False): "W3", (3, 2, False): "W4",
    (1, 1, False): "W5", (0, 1, True): "W6", (2, 1, True): "W7", (1, 1, True): "W8", (3, 1, True): "W9",
}
_MLC_DEFAULT_ACCESS_BYTES = 64
# Digits after the point in MLC's (and loadlat's) printout, per section: a value on the final line of a
# text without a final newline that has fewer may be cut inside the number and is not used.
_PRINTED_DECIMALS = {"latency_matrix": 1, "bandwidth_matrix": 1, "c2c_latency": 1,
                     "peak_injection_bandwidth": 1, "max_bandwidth": 2}
_LOADED_DECIMALS = (2, 1)  # ' %05d\t%6.2f\t%9.1f'

_PARTIAL = "partial: run interrupted"


@dataclass
class _Options:
    """What a command line says: traffic code, access size in bytes, mode, memory node, other flags."""

    code: str | None = None        # "R", "W5", ... (None: the MLC default, read-only)
    access_bytes: int | None = None
    mode: str | None = None        # one of MLC_TESTS
    mem_node: int | None = None    # -j<n>: node the memory is allocated on
    extra: list = field(default_factory=list)


@dataclass
class _Table:
    """A loaded-latency table being read."""

    section: int
    has_latency: bool
    label_code: str | None
    rows: int = 0
    decimals: tuple | None = None
    blank_after: bool = False
    partial_delay: str | None = None


@dataclass
class _Run:
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
    table: _Table | None = None
    tables_done: int = 0
    saw_read_only: bool = False
    help_line: str | None = None
    failure: str | None = None
    interrupted: bool = False
    random_access: bool = False    # MLC could not disable prefetchers and used random access
    no_latency: bool = False       # loadlat -T: the latency column holds 0.00, not a measurement
    warnings: dict = field(default_factory=dict)  # inject delay -> loadlat warning about that point


def looks_like_mlc(text: str) -> bool:
    """True when ``text`` looks like MLC or loadlat output (banner, command line, MLC headings, tables).

    fio output (JSON, normal or terse) is never claimed unless it also carries an MLC/loadlat banner.
    """
    if not isinstance(text, str) or not text:
        return False
    head = _clean(text[:200_000])
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
        return _Parser(text, source).parse()
    except Exception as exc:  # defensive: a parser bug must not become a traceback for the user
        return ParseResult(rows=[], errors=[f"{source}: internal parser error ({type(exc).__name__}: "
                                            f"{_one_line(str(exc))}); please report this file"])


# ----------------------------------------------------------------------------------------------------
# helpers


def _clean(text: str) -> str:
    """Text with a BOM and UTF-16 NUL padding removed (PowerShell ``>`` redirects write UTF-16)."""
    text = text.lstrip("\ufeff\ufffd\xff\xfe")  # BOM, also when decoded as UTF-8 with 'replace' or latin-1
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


def _one_line(s: str, limit: int = 120) -> str:
    """``s`` collapsed to one line of at most ``limit`` characters."""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _is_num(tok: str) -> bool:
    """True for an unsigned decimal number such as ``203.58`` or ``00015``."""
    return _NUM_RE.fullmatch(tok) is not None


def _decimals(tok: str) -> int:
    """Number of digits after the decimal point (``-1`` when there is no point)."""
    return len(tok) - tok.index(".") - 1 if "." in tok else -1


def _int_tokens(text: str) -> list[int] | None:
    """Whitespace-separated non-negative integers, or None if any token is not one."""
    toks = text.split()
    if not toks or not all(t.isascii() and t.isdigit() for t in toks):
        return None
    return [int(t) for t in toks]


def _parse_options(args: str | None) -> _Options:
    """Read MLC/loadlat options (values attached, as MLC wants: ``-W5 -l256``)."""
    opts = _Options()
    if not args:
        return opts
    for tok in args.split():
        if tok.startswith((">", "|", "1>", "2>", "&", ";")):
            break  # shell redirection / pipe after the command (from a prompt line)
        if tok in _MODES:
            opts.mode = _MODES[tok]
        elif tok == "-R":
            opts.code = "R"
        elif re.fullmatch(r"-W[0-9]{1,3}", tok):
            opts.code = "W" + str(int(tok[2:]))
        elif re.fullmatch(r"-l[0-9]{1,9}", tok):
            opts.access_bytes = int(tok[2:])
        elif re.fullmatch(r"-j[0-9]{1,4}", tok):
            opts.mem_node = int(tok[2:])
            opts.extra.append(tok)
        elif tok.startswith("-"):
            opts.extra.append(tok)
    return opts


def _label_code(line: str) -> str | None:
    """-W code of a hand-written traffic label like ``2 reads and 1 non-temporal write`` (or None)."""
    m = _LABEL_RE.match(line)
    if not m:
        return None
    if m.group("kind"):
        reads = m.group("kind").lower().startswith("read")
        return _RATIO_CODE.get((1, 0, False) if reads else (0, 1, bool(m.group("nt1"))))
    try:
        key = (int(m.group("r")), int(m.group("w")), bool(m.group("nt2")))
    except ValueError:
        return None
    return _RATIO_CODE.get(key)


def _traffic_of_code(code: str) -> tuple[str, float | None, str]:
    """(traffic label, read fraction, detail note) for a -W/-R code."""
    if code in TRAFFIC_CODES:
        label, frac = TRAFFIC_CODES[code]
        return label, frac, ""
    return code, None, f"unknown traffic code -{code}"


# ----------------------------------------------------------------------------------------------------
# the line-by-line state machine


class _Parser:
    """Reads one text line by line; each MLC invocation found becomes a ``_Run``."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        text = _clean(text if isinstance(text, str) else str(text))
        self.unterminated_last = bool(text) and not text.endswith(("\n", "\r"))
        self.lines = text.splitlines()
        self.windows = bool(re.search(r"^\s*(?:PS\s+)?[A-Za-z]:\\[^\n>]*>|PowerShell transcript|mlc\.exe",
                                      text[:200_000], re.MULTILINE | re.IGNORECASE))
        self.runs: list[_Run] = [_Run(index=0)]
        self.prev_text = ""  # previous non-blank line (for label lines above a bare table)
        self.n_sections = 0
        self.decimals_seen: dict[int, int] = {}  # section id -> decimals of its last value

    @property
    def run(self) -> _Run:
        """The run being read."""
        return self.runs[-1]

    def _new_run(self) -> _Run:
        """Close the current run and start the next one."""
        self._close_table()
        self.runs.append(_Run(index=len(self.runs)))
        return self.run

    def _start_section(self, name: str | None, detail: str = "") -> None:
        """Enter a new MLC section (closes any open table)."""
        self._close_table()
        run = self.run
        run.section, run.section_detail = name, detail
        run.matrix_nodes, run.c2c_kind, run.saw_read_only = None, "", False
        self.n_sections += 1
        run.section_id = self.n_sections
        run.content = True

    def _close_table(self) -> None:
        """Finish the open loaded-latency table (if any)."""
        run = self.run
        if run.table is not None:
            if run.table.partial_delay is not None:
                self._interrupt(run.table, f"delay {run.table.partial_delay} has no values")
            elif run.table.rows == 0 and not run.interrupted:
                run.problems.append("loaded-latency table header without rows (run interrupted or output cut)")
            run.table = None
            run.tables_done += 1

    def _interrupt(self, table: _Table | None, why: str) -> None:
        """Mark the rows of ``table`` (or of the current section) partial and record one problem."""
        run = self.run
        if run.interrupted:
            return
        run.interrupted = True
        sec = table.section if table is not None else run.section_id
        kept = 0
        for m in run.meas:
            if m["section"] == sec:
                m["detail"].append(_PARTIAL)
                kept += 1
        what = "loaded-latency sweep" if table is not None else (run.section or "run").replace("_", " ")
        run.problems.append(
            f"{what} interrupted ({why}); {kept} complete rows kept and marked '{_PARTIAL}', "
            f"the rest was not measured - rerun MLC to complete it")

    def _cut(self, tok: str, last: bool) -> bool:
        """True when ``tok`` is on the unterminated final line and has fewer decimals than the section
        prints (so the text may end inside the number); records the decimals of accepted values."""
        run = self.run
        expected = self.decimals_seen.get(run.section_id, _PRINTED_DECIMALS.get(run.section or "", 1))
        if last and _decimals(tok) < expected:
            return True
        self.decimals_seen[run.section_id] = _decimals(tok)
        return False

    def _add(self, test: str, **values) -> None:
        """Record one measurement of the current run (traffic etc. are filled in when the run ends)."""
        run = self.run
        m = {"test": test, "section": run.section_id, "detail": [], "latency_ns": None,
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

    # -- main loop -------------------------------------------------------------------------------

    def parse(self) -> ParseResult:
        """Read every line, then turn the runs into rows and errors."""
        n = len(self.lines)
        for i, raw in enumerate(self.lines):
            line = raw if len(raw) <= _MAX_LINE else ""
            last = self.unterminated_last and i == n - 1
            self._line(line.rstrip(), last)
            if line.strip():
                self.prev_text = line.strip()
        self._close_table()
        return self._finish()

    def _line(self, line: str, last: bool) -> None:
        """Dispatch one line (``last``: the final line of a text without a final newline)."""
        run = self.run
        stripped = line.strip()
        if not stripped:
            if run.table is not None:
                run.table.blank_after = run.table.rows > 0 or run.table.partial_delay is not None
            return

        m = _BANNER_RE.match(line)
        if m:
            if run.content:
                run = self._new_run()
            run.banner = run.content = True
            run.tool = "loadlat" if m.group("name").startswith("loadlat") else "mlc"
            run.version = m.group("ver") or ""
            return
        m = _CMDLINE_RE.match(line)
        if m:
            if run.cmdline is not None or run.meas or run.section is not None:
                run = self._new_run()
            run.cmdline, run.content = m.group("args").strip(), True
            return
        if _SEPARATOR_RE.match(line):
            if run.content:
                self._new_run()
            return
        if stripped.startswith("#"):
            self._loadlat_comment(stripped)
            return  # loadlat comments (delay calibration ...)
        if stripped.startswith("loadlat: "):
            self._loadlat_message(stripped)
            return
        if stripped.startswith("***"):
            if "enabling random access" in stripped:
                run.random_access = True
            return  # MLC warnings such as '*** Unable to modify prefetchers'
        m = _PROMPT_RE.match(line)
        if m:
            if run.content:
                run = self._new_run()
            run.prompt_args = (m.group("args") or "").strip()
            if m.group("tool").lower() == "loadlat":
                run.tool = "loadlat"
            return
        if _ANY_PROMPT_RE.match(line):
            if run.section is not None:
                self._start_section(None)  # the shell is back: whatever MLC printed has ended
            return

        if run.table is not None and self._table_line(stripped, last):
            return
        if _INTERRUPT_RE.match(line):
            table = run.table
            if table is not None and (table.partial_delay is not None or not table.blank_after):
                self._interrupt(table, f"'{stripped}'" if table.partial_delay is None
                                else f"delay {table.partial_delay} has no values, then '{stripped}'")
                table.partial_delay = None
                self._close_table()
            else:
                self._close_table()
                run.problems.append(f"run ended early with '{stripped}'"
                                    + (f" during {run.section.replace('_', ' ')}" if run.section else ""))
            return
        if stripped.startswith("Invalid Argument") or stripped.startswith("USAGE:"):
            run.help_line = run.help_line or stripped
            run.content = True
            return

        m = _MEASURING_RE.match(line)
        if m:
            self._measuring(m.group("what"))
            return
        if re.match(r"^Inject\s", stripped) and "Bandwidth" in stripped:
            self._table_header(stripped)
            return
        m = _IDLE_RE.search(line)
        if m:
            self._idle(m, last)
            return
        if stripped.startswith("Using Read-only traffic"):
            run.saw_read_only = True
            return
        if self._matrix_line(stripped, last):
            return
        if self._c2c_line(stripped, last):
            return
        if self._peak_line(stripped, last):
            return
        if _FAILURE_RE.match(line) and run.failure is None:
            run.failure = _one_line(stripped, 100)

    def _loadlat_comment(self, stripped: str) -> None:
        """loadlat '#' lines that matter: interruption, failed points, -T; the others are notes."""
        run = self.run
        m = _LL_INTERRUPT_RE.match(stripped)
        if m:
            self._interrupt(run.table, f"loadlat stopped by signal {m.group('sig')} after {m.group('n')} of "
                                       f"{m.group('of')} points")
            return
        m = _LL_FAILED_RE.match(stripped)
        if m:
            what = " ".join(m.group("what").split())
            run.problems.append(f"loadlat: {what} failed: {_one_line(m.group('why'), 100)}")
            run.failure = run.failure or f"{what} failed: {_one_line(m.group('why'), 100)}"
            return
        if _LL_NO_LAT_RE.match(stripped):
            run.no_latency = True

    def _loadlat_message(self, stripped: str) -> None:
        """loadlat's stderr lines when they were captured with stdout."""
        run = self.run
        m = _LL_WARN_RE.match(stripped)
        if m:
            run.warnings[int(m.group("delay"))] = _one_line(m.group("msg"), 100)
            return
        m = _LL_POINT_FAILED_RE.match(stripped)
        if m:
            run.problems.append(f"loadlat: point delay {m.group('delay')} failed: {_one_line(m.group('why'), 100)}")
            return
        if "warning" not in stripped and "interrupted" not in stripped:
            run.failure = run.failure or _one_line(stripped, 100)

    # -- sections --------------------------------------------------------------------------------

    def _measuring(self, what: str) -> None:
        """Start the section named by a ``Measuring ...`` heading."""
        w = what.lower()
        if w.startswith("idle latenc"):
            m = re.search(r"for (\w+) access", w)
            self._start_section("latency_matrix", f"{m.group(1)} access" if m else "")
        elif w.startswith("peak"):
            self._start_section("peak_injection_bandwidth")
        elif w.startswith("maximum"):
            self._start_section("max_bandwidth")
        elif w.startswith("memory bandwidths between"):
            self._start_section("bandwidth_matrix")
        elif w.startswith("loaded latenc"):
            self._start_section("loaded_latency")
        elif w.startswith("cache-to-cache"):
            self._start_section("c2c_latency")
        else:
            self._start_section(None)

    def _idle(self, m: re.Match, last: bool) -> None:
        """``Each iteration took N core clocks ( X ns)`` -> one idle_latency measurement."""
        if last and not self.lines[-1].rstrip().endswith(")"):
            return
        self._add("idle_latency", latency_ns=float(m.group("ns")),
                  detail=[f"{m.group('clk')} {' '.join(m.group('kind').split())} per load"])

    def _table_header(self, stripped: str) -> None:
        """``Inject  Latency  Bandwidth``: a loaded-latency table starts."""
        self._close_table()
        run = self.run
        if run.section == "loaded_latency" and run.tables_done:
            run = self._new_run()  # a second table without a new banner: another run
            self._start_section("loaded_latency")
        elif run.section != "loaded_latency":
            self._start_section("loaded_latency")
        label = self.prev_text
        run.table = _Table(section=run.section_id, has_latency="Latency" in stripped,
                           label_code=_label_code(label))

    def _table_line(self, stripped: str, last: bool) -> bool:
        """A line inside a loaded-latency table; False if it is not part of the table."""
        table = self.run.table
        if stripped.startswith("Delay") or set(stripped) <= {"="}:
            return True
        toks = stripped.split()
        if not (toks[0].isascii() and toks[0].isdigit()):
            return False
        want = 2 if table.has_latency else 1
        if not all(_is_num(t) for t in toks[1:]):
            if len(toks) != want + 1:
                return False
            self.run.problems.append(f"loaded-latency row of delay {toks[0]} has unreadable values "
                                     f"{' '.join(toks[1:])!r}; row skipped")
            return True
        values = toks[1:]
        if len(values) > want:
            return False
        if last and len(values) == want:
            decs = tuple(_decimals(t) for t in values)
            expected = table.decimals or (_LOADED_DECIMALS if table.has_latency else _LOADED_DECIMALS[1:])
            if any(d < e for d, e in zip(decs, expected)):
                values = values[:-1]  # the last line of a cut file may end inside a number
        if len(values) < want:
            table.partial_delay = toks[0]
            return True
        if table.partial_delay is not None:
            return False
        table.decimals = tuple(_decimals(t) for t in values)
        lat = float(values[0]) if table.has_latency else None
        self._add("loaded_latency", inject_delay=int(toks[0]), latency_ns=lat,
                  bandwidth_MBps=float(values[-1]), traffic_from="command", label_code=table.label_code)
        self.run.meas[-1]["section"] = table.section
        table.rows += 1
        return True

    def _matrix_line(self, stripped: str, last: bool) -> bool:
        """Idle-latency / bandwidth matrix header and rows (``Numa node`` tables)."""
        run = self.run
        if stripped.lower() == "numa node":
            return True
        m = _NODE_HDR_RE.match(stripped)
        if m:
            run.matrix_nodes = _int_tokens(m.group("nodes"))
            if run.section not in ("latency_matrix", "bandwidth_matrix"):
                run.problems.append("a 'Numa node' matrix without its 'Measuring ...' heading was skipped")
                run.matrix_nodes = None
            return True
        if run.matrix_nodes is None or run.section not in ("latency_matrix", "bandwidth_matrix"):
            return False
        toks = stripped.split()
        if not (toks[0].isascii() and toks[0].isdigit()):
            return False
        vals = toks[1:]
        if vals and vals[-1] != "-" and _is_num(vals[-1]) and self._cut(vals[-1], last):
            vals = vals[:-1]
        if not all(_is_num(v) or v == "-" for v in vals) or len(vals) > len(run.matrix_nodes):
            return False
        for node, v in zip(run.matrix_nodes, vals):
            if v == "-":
                continue
            key = "latency_ns" if run.section == "latency_matrix" else "bandwidth_MBps"
            traffic_from = "command" if run.section == "bandwidth_matrix" else "none"
            self._add(run.section, src_node=int(toks[0]), dst_node=node, traffic_from=traffic_from,
                      **{key: float(v)})
        return True

    def _c2c_line(self, stripped: str, last: bool) -> bool:
        """Cache-to-cache latency lines: local single values and remote writer x reader matrices."""
        run = self.run
        m = _C2C_SINGLE_RE.match(stripped)
        if m:
            if run.section != "c2c_latency":
                self._start_section("c2c_latency")
            kind = " ".join(m.group("kind").split())
            note = m.group("note")
            val = m.group("val")
            if val is not None and self._cut(val, last):
                val = None  # the last line of a cut file may end inside the number
            if val is not None:
                self._add("c2c_latency", latency_ns=float(val),
                          detail=[kind + (f" ({note})" if note else "")])
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
            run.matrix_nodes = _int_tokens(m.group("nodes"))
            return True
        if run.matrix_nodes is None or not run.c2c_kind:
            return False
        toks = stripped.split()
        vals = toks[1:]
        if vals and vals[-1] != "-" and _is_num(vals[-1]) and self._cut(vals[-1], last):
            vals = vals[:-1]
        if not (toks[0].isascii() and toks[0].isdigit()) or len(vals) > len(run.matrix_nodes):
            return False
        if not all(_is_num(v) or v == "-" for v in vals):
            return False
        for node, v in zip(run.matrix_nodes, vals):
            if v != "-":
                self._add("c2c_latency", latency_ns=float(v), src_node=int(toks[0]), dst_node=node,
                          detail=[run.c2c_kind])
        return True

    def _peak_line(self, stripped: str, last: bool) -> bool:
        """``ALL Reads        :\\t144906.6``-style rows of peak injection / max bandwidth."""
        run = self.run
        m = _PEAK_RE.match(stripped)
        if not m:
            return False
        label = " ".join(m.group("label").split())
        in_section = run.section in ("peak_injection_bandwidth", "max_bandwidth")
        if label not in PEAK_ROW_TRAFFIC and not (in_section and _PEAK_WORD_RE.search(label)):
            return False
        if not in_section:
            mode = _parse_options(run.cmdline or run.prompt_args).mode
            self._start_section("max_bandwidth" if mode == "max_bandwidth" else "peak_injection_bandwidth")
        if self._cut(m.group("val"), last):
            return True  # the text ends inside the number
        traffic = PEAK_ROW_TRAFFIC.get(label)
        values = {"bandwidth_MBps": float(m.group("val"))}
        if traffic is not None:
            values.update(traffic=traffic, read_fraction=_LABEL_FRACTION.get(traffic), traffic_from="row")
        else:
            values.update(traffic_from="command", detail=[f"row '{label}'"])
        self._add(run.section, **values)
        return True

    # -- rows ------------------------------------------------------------------------------------

    def _finish(self) -> ParseResult:
        """Rows for every run with measurements, one-line errors for the rest."""
        rows: list[dict] = []
        problems: list[str] = []
        runs = [r for r in self.runs if r.content or r.meas]
        multi = len(runs) > 1
        for run in runs:
            prefix = f"run {run.index}: " if multi or run.index else ""
            rows.extend(self._rows(run))
            if not run.meas:
                problems.append(prefix + self._empty_reason(run))
            for p in run.problems:
                if run.meas:
                    problems.append(prefix + p)
        if not runs:
            problems.append("no MLC or loadlat measurement found (expected the text output of Intel MLC "
                            "or loadlat; for fio output use --kind fio)")
        if not rows and len(problems) > 1:
            problems = ["no measurement: " + "; ".join(problems)]
        return ParseResult(rows=rows, errors=[f"{self.source}: {_one_line(p, 400)}" for p in problems])

    def _empty_reason(self, run: _Run) -> str:
        """Why a run gave no rows."""
        tool = "loadlat" if run.tool == "loadlat" else "MLC"
        if run.help_line:
            return (f"{tool} printed its usage text ('{_one_line(run.help_line, 60)}'), no measurement; "
                    f"run it with a mode such as --loaded_latency")
        if run.failure:
            return f"{tool} reported '{run.failure}' and measured nothing"
        if run.problems:
            return "; ".join(run.problems)
        if run.banner or run.cmdline is not None:
            return (f"{tool} banner but no measurement (header-only, cut or failed run); "
                    f"rerun {tool.lower()} and keep its whole output")
        return "no MLC or loadlat measurement found"

    def _rows(self, run: _Run) -> list[dict]:
        """Turn the measurements of ``run`` into schema rows."""
        opts = _parse_options(run.cmdline if run.cmdline is not None else run.prompt_args)
        known_cmd = run.cmdline is not None or run.prompt_args is not None
        if opts.access_bytes is not None:
            access = opts.access_bytes
        elif known_cmd or run.banner:
            access = _MLC_DEFAULT_ACCESS_BYTES
        else:
            access = None
        common = []
        if opts.extra:
            common.append("options: " + " ".join(opts.extra))
        if self.windows:
            common.append("Windows")
        out = []
        for m in run.meas:
            detail = list(m["detail"])
            traffic, frac = m["traffic"], m["read_fraction"]
            if m["traffic_from"] == "command":
                traffic, frac, note = self._command_traffic(run, opts, known_cmd, m)
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
                source=self.source, run=run.index, tool=run.tool, tool_version=run.version, test=m["test"],
                traffic=traffic, read_fraction=frac, access_bytes=access, inject_delay=m["inject_delay"],
                latency_ns=lat, bandwidth_MBps=m["bandwidth_MBps"], src_node=m["src_node"],
                dst_node=dst, detail="; ".join(detail + common) or None)
            out.append(row)
        return out

    @staticmethod
    def _command_traffic(run: _Run, opts: _Options, known_cmd: bool, m: dict):
        """(traffic, read fraction, note) for loaded-latency / bandwidth-matrix / unlabeled peak rows."""
        if opts.code is not None:
            return _traffic_of_code(opts.code)
        if known_cmd or run.banner:
            return _traffic_of_code("R")  # MLC's default traffic is read-only
        if m.get("says_read_only"):
            return "read-only", 1.0, "traffic from MLC's 'Using Read-only traffic type' line"
        if m.get("label_code"):
            label, frac, _ = _traffic_of_code(m["label_code"])
            return label, frac, "traffic from the label line above the table"
        return None, None, "no command line: traffic unknown"
