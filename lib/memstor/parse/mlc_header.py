"""How an MLC/loadlat run was started: banner and tool version, command line, shell prompt, options.

Lines that open a run: the banner (``Intel(R) Memory Latency Checker - v3.11b``, or loadlat's
``loadlat (Memory Latency Checker-compatible) - v...``), ``Command line parameters: ...``, separators
such as ``==== Run 2 ====`` and shell prompts that invoked mlc/loadlat (bash, root ``#``, cmd,
PowerShell, ``sudo``, a path, ``mlc_avx512``, ``mlc.exe``); any other shell prompt ends the section
being read. The options of a run (``-W5 -l256 --loaded_latency -j1``) give its traffic (``-R``/``-W``
code, see ``memstor.core.schema.TRAFFIC_CODES``), access size in bytes (``-l``, MLC's default 64 B), mode
and memory node; a hand-written label line above a bare table (``2 reads and 1 non-temporal write``)
gives a traffic code too. Read fractions are the share of bytes read (0..1). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memstor.core.schema import TRAFFIC_CODES, read_share_code, traffic_info
from memstor.parse.mlc_state import Reader

_BANNER_RE = re.compile(
    r"^\s*(?P<name>Intel\(R\) Memory Latency Checker|loadlat \(Memory Latency Checker-compatible\))"
    r"\s*-\s*(?P<ver>v[0-9][0-9A-Za-z._-]*)?"
)
_CMDLINE_RE = re.compile(r"^\s*Command line parameters:\s*(?P<args>.*)$")
_SEPARATOR_RE = re.compile(r"^\s*(?P<c>[=#*-])(?P=c){2,}\s*(?P<text>[^\s=#*-].*?)\s*(?P=c){3,}\s*$")
# A PowerShell (``PS C:\x>``) or cmd (``C:\x>``) prompt.
_WINDOWS_PROMPT = r"PS\s+[^>]*>|[A-Za-z]:\\[^>]*>"
_PROMPT_RE = re.compile(
    r"^\s*(?:\([^()\s]*\)\s*)?"
    r"(?:" + _WINDOWS_PROMPT + r"|\[[^\]]*\]\s*[$#]|[^\s>$#]*[$#>])\s*"
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:[^\s/\\]*[/\\])*(?P<tool>mlc|loadlat)(?:_avx512|_avx2)?(?:\.exe)?(?:\s+(?P<args>.*))?$",
    re.IGNORECASE,
)
# Any shell prompt (even one that does not run mlc) ends the section being read.
_ANY_PROMPT_RE = re.compile(r"^\s*(?:" + _WINDOWS_PROMPT + r"|[^\s@]+@[^\s:]+:[^$#]*[$#](?:\s|$))")
_LABEL_RE = re.compile(
    r"^\s*(?:100\s*%\s*(?P<nt1>non[- ]?temporal\s+)?(?P<kind>reads?|writes?)"
    r"|(?P<r>[0-9]+)\s*reads?\s*(?:and|,|/|:)?\s*(?P<w>[0-9]+)\s*(?P<nt2>non[- ]?temporal\s+)?writes?)"
    r"\s*$",
    re.IGNORECASE,
)

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
LABEL_FRACTION = {label: frac for label, frac in TRAFFIC_CODES.values()}
# (reads, writes, non-temporal) of a hand-written label line -> -W code.
_RATIO_CODE = {
    (1, 0, False): "R", (2, 1, False): "W2", (3, 1, False): "W3", (3, 2, False): "W4",
    (1, 1, False): "W5", (0, 1, True): "W6", (2, 1, True): "W7", (1, 1, True): "W8", (3, 1, True): "W9",
}
MLC_DEFAULT_ACCESS_BYTES = 64


@dataclass
class Options:
    """What a command line says: traffic code, access size in bytes, mode, memory node, other flags."""

    code: str | None = None        # "R", "W5", ... (None: the MLC default, read-only)
    access_bytes: int | None = None
    mode: str | None = None        # one of MLC_TESTS
    mem_node: int | None = None    # -j<n>: node the memory is allocated on
    extra: list = field(default_factory=list)


def parse_options(args: str | None) -> Options:
    """Read MLC/loadlat options (values attached, as MLC wants: ``-W5 -l256``)."""
    opts = Options()
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
        elif re.fullmatch(r"--read_share=[0-9]{1,3}", tok) and int(tok[13:]) <= 100:
            opts.code = read_share_code(int(tok[13:]))  # loadlat: P % reads, plain stores
        elif re.fullmatch(r"-l[0-9]{1,9}", tok):
            opts.access_bytes = int(tok[2:])
        elif re.fullmatch(r"-j[0-9]{1,4}", tok):
            opts.mem_node = int(tok[2:])
            opts.extra.append(tok)
        elif tok.startswith("-"):
            opts.extra.append(tok)
    return opts


def label_code(line: str) -> str | None:
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


def traffic_of_code(code: str) -> tuple[str, float | None, str]:
    """(traffic label, read fraction 0..1, detail note) for a -W/-R code or a loadlat read share ``S<P>``."""
    info = traffic_info(code)
    if info is not None:
        label, frac = info
        return label, frac, ""
    return code, None, f"unknown traffic code -{code}"


# -------------------------------------------------------------------------------- lines of a run
def start_line(r: Reader, line: str) -> bool:
    """Banner, ``Command line parameters:`` or separator line: note it (a new run when the current
    one already has content); False for any other line."""
    run = r.run
    m = _BANNER_RE.match(line)
    if m:
        if run.content:
            run = r.new_run()
        run.banner = run.content = True
        run.tool = "loadlat" if m.group("name").startswith("loadlat") else "mlc"
        run.version = m.group("ver") or ""
        return True
    m = _CMDLINE_RE.match(line)
    if m:
        if run.cmdline is not None or run.meas or run.section is not None:
            run = r.new_run()
        run.cmdline, run.content = m.group("args").strip(), True
        return True
    if _SEPARATOR_RE.match(line):
        if run.content:
            r.new_run()
        return True
    return False


def prompt_line(r: Reader, line: str) -> bool:
    """A shell prompt: one that runs mlc/loadlat starts a run (its arguments are the options), any
    other ends the section being read; False for a line that is no prompt."""
    run = r.run
    m = _PROMPT_RE.match(line)
    if m:
        if run.content:
            run = r.new_run()
        run.prompt_args = (m.group("args") or "").strip()
        if m.group("tool").lower() == "loadlat":
            run.tool = "loadlat"
        return True
    if _ANY_PROMPT_RE.match(line):
        if run.section is not None:
            r.start_section(None)  # the shell is back: whatever MLC printed has ended
        return True
    return False
