"""Run Intel MLC or memstor's MLC-compatible ``loadlat`` tool: command lines, tool choice, sweep runner.

Both tools take the same options (MLC's syntax, values attached: ``-b1048576 -l64 -W5``) and print
the same text, so one runner and one parser (:func:`memstor.parse.mlc.parse_mlc`) serve both.

Modes used by memstor (see ``mlc --help``):

- ``--idle_latency``             one latency thread, no load: ``-b<KiB> -c<cpu> -t<s>``
- ``--peak_injection_bandwidth`` load threads only, every read-write ratio: ``-b<KiB> -k<cpus> -t<s>``
- ``--loaded_latency``           latency thread + load threads at each inject delay:
  ``-b<KiB> -c<cpu> -k<cpus> -t<s> -l<bytes> -R|-W<n> -d<delay>|-g<delay file>``

Every mode adds ``-L`` for huge pages (MLC: its 2 MiB large pages, which need pages reserved in
``/proc/sys/vm/nr_hugepages``; loadlat: transparent huge pages via madvise, the share really used is in
its ``# huge pages`` header line and JSON ``huge_fraction``) and the load modes ``-U`` for random load
addresses (both tools; default sequential).

Units: buffer sizes in KiB (MLC's ``-b``), access size in bytes, time in seconds, inject delay in
cycles of the tool's delay loop (not ns).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memstor.core.errors import PointFailed, UsageError
from memstor.core.schema import READ_SHARE_PREFIX, TRAFFIC_CODES, traffic_info
from memstor.measure.loadlat import binary, format_cpus, sub_windows
from memstor.parse.mlc import parse_mlc

TOOLS = ("auto", "mlc", "loadlat")
#: The other sections of MLC's default run a profile may ask for (``sections``): the idle latency and memory
#: bandwidth matrices between NUMA nodes, the maximum memory bandwidth and cache-to-cache transfer latency
#: (Intel MLC, and loadlat from v0.4). Each is one point: one tool run in its own mode.
SECTIONS = ("latency_matrix", "bandwidth_matrix", "max_bandwidth", "c2c_latency")
MODES = ("idle_latency", "peak_injection_bandwidth", "loaded_latency", *SECTIONS)
#: What each section's output must hold (the value column of its rows).
SECTION_VALUE = {"latency_matrix": "latency_ns", "bandwidth_matrix": "bandwidth_MBps",
                 "max_bandwidth": "bandwidth_MBps", "c2c_latency": "latency_ns"}
MLC_URL = "https://www.intel.com/content/www/us/en/download/736633/intel-memory-latency-checker-intel-mlc.html"
#: Extra seconds allowed per tool invocation (buffer allocation and first touch, calibration).
STARTUP_S = 3.0

# Lines MLC prints when it lacks privileges (root, the msr module, huge pages). Matched case-insensitively.
_PRIVILEGE_PATTERNS = (
    r"unable to modify prefetchers",
    r"unable to access mlcdrv\.sys",
    r"modprobe msr",
    r"(?<![/\w.-])root\b(?!/)",
    r"privilege",
    r"permission denied",
    r"operation not permitted",
    r"hugepages? need to be allocated",
    r"/dev/cpu/\d+/msr",
)
_PRIVILEGE_RE = re.compile("|".join(_PRIVILEGE_PATTERNS), re.IGNORECASE)
_BANNER_RE = re.compile(r"(Memory Latency Checker|loadlat)\S*.*?-\s*(v\d[\w.]*)", re.IGNORECASE)


# ----------------------------------------------------------------------------------- tool choice


def find_mlc(mlc_path: str = "") -> str | None:
    """The Intel MLC executable: ``mlc_path`` when given (must exist and be executable), else ``mlc``
    on PATH, else None. Raises UsageError for a ``mlc_path`` that is not an executable file."""
    if mlc_path:
        path = Path(mlc_path).expanduser()
        if path.is_dir():
            path = path / "mlc"
        if not path.is_file():
            raise UsageError(f"mlc_path={mlc_path!r}: no such file; give the path of the mlc binary or leave it empty")
        if not os.access(path, os.X_OK):
            raise UsageError(f"mlc_path={mlc_path!r}: not executable; run 'chmod +x {path}'")
        return str(path.resolve())
    return shutil.which("mlc")


def find_loadlat() -> str:
    """The built ``loadlat`` executable (``build/bin/loadlat``); MemstorError with the way out if absent."""
    return str(binary())


def resolve_tool(tool: str = "auto", mlc_path: str = "") -> tuple[str, str]:
    """(tool name, executable) for ``tool`` = auto | mlc | loadlat.

    auto: Intel MLC when ``mlc_path`` is set or ``mlc`` is on PATH, else loadlat. Raises UsageError
    (one line, with the way out) when the requested tool cannot be found.
    """
    if tool not in TOOLS:
        raise UsageError(f"tool={tool!r}: choose one of {', '.join(TOOLS)}")
    if tool in ("auto", "mlc"):
        mlc = find_mlc(mlc_path)
        if mlc:
            return "mlc", mlc
        if tool == "mlc":
            raise UsageError(
                f"tool=mlc but Intel MLC is not on PATH; download it from {MLC_URL} and set mlc_path, "
                "or use tool=loadlat"
            )
    return "loadlat", find_loadlat()


# --------------------------------------------------------------------------------- command lines


def parse_cpus(text: str | int | Sequence[int]) -> list[int]:
    """CPU list from ``"1-3,5"``, ``3`` or ``[1, 2]`` -> sorted unique ints; ValueError when malformed."""
    if isinstance(text, bool):
        raise ValueError(f"not a CPU list: {text!r}")
    if isinstance(text, int):
        items = [text]
    elif isinstance(text, (list, tuple)):
        items = []
        for item in text:
            items.extend(parse_cpus(item))
    else:
        items = []
        for part in str(text).replace(" ", "").split(","):
            if not part:
                continue
            lo, sep, hi = part.partition("-")
            if not lo.isdigit() or (sep and not hi.isdigit()):
                raise ValueError(f"not a CPU list: {text!r}")
            first, last = int(lo), int(hi) if sep else int(lo)
            if last < first:
                raise ValueError(f"not a CPU list: {text!r} (range {part} goes down)")
            items.extend(range(first, last + 1))
    if any(c < 0 for c in items):
        raise ValueError(f"not a CPU list: {text!r}")
    return sorted(set(items))


def format_seconds(seconds: float) -> str:
    """``-t`` value: ``2`` for whole seconds, ``0.5`` otherwise (loadlat accepts fractions, MLC does not)."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{float(seconds):g}"


def traffic_flag(code: str) -> str:
    """Traffic option for a code: ``R`` -> ``-R``, ``W5`` -> ``-W5`` (MLC and loadlat), a read share ``S70`` ->
    ``--read_share=70`` (loadlat only; memstor.core.schema.read_share_code)."""
    if code in TRAFFIC_CODES:
        return "-R" if code == "R" else f"-{code}"
    if traffic_info(code) is not None:
        return f"--read_share={code[len(READ_SHARE_PREFIX):]}"
    raise UsageError(f"traffic {code!r}: choose MLC -W codes among {', '.join(TRAFFIC_CODES)}, "
                     f"or {READ_SHARE_PREFIX}<P> for P % reads (loadlat)")


def _page_and_order_flags(huge_pages: bool, random_access: bool = False) -> list[str]:
    """``-U`` (random load addresses) and ``-L`` (huge pages), as both tools spell them."""
    return (["-U"] if random_access else []) + (["-L"] if huge_pages else [])


def idle_latency_args(buffer_kib: int, latency_cpu: int, seconds: float, huge_pages: bool = False) -> list[str]:
    """Options of ``--idle_latency``: buffer per thread (KiB), latency CPU, seconds, ``-L`` for huge pages."""
    return ["--idle_latency", f"-b{int(buffer_kib)}", f"-c{int(latency_cpu)}", f"-t{format_seconds(seconds)}",
            *_page_and_order_flags(huge_pages)]


def peak_bandwidth_args(buffer_kib: int, load_cpus: Sequence[int], seconds: float, huge_pages: bool = False,
                        random_access: bool = False) -> list[str]:
    """Options of ``--peak_injection_bandwidth``: buffer per thread (KiB), load CPUs, seconds per ratio,
    ``-U`` for random load addresses, ``-L`` for huge pages."""
    return [
        "--peak_injection_bandwidth",
        f"-b{int(buffer_kib)}",
        f"-k{format_cpus(load_cpus)}",
        f"-t{format_seconds(seconds)}",
        *_page_and_order_flags(huge_pages, random_access),
    ]


def loaded_latency_args(traffic: str, access_bytes: int, buffer_kib: int, latency_cpu: int,
                        load_cpus: Sequence[int], seconds: float, delay: int | None = None,
                        delay_file: Path | str | None = None, huge_pages: bool = False,
                        random_access: bool = False, pacing: str = "fixed") -> list[str]:
    """Options of ``--loaded_latency`` for one traffic (-W code) x access size (bytes).

    Give exactly one of ``delay`` (``-d``, one inject delay) or ``delay_file`` (``-g``, one delay per line);
    ``random_access`` adds ``-U`` (random load addresses), ``huge_pages`` adds ``-L``; ``pacing="exp"``
    adds loadlat's ``--pacing=exp`` (exponential delays of the same mean; Intel MLC has only fixed delays,
    the default, which adds nothing).
    """
    if pacing not in ("fixed", "exp"):
        raise UsageError(f"pacing={pacing!r}: choose fixed or exp")
    if (delay is None) == (delay_file is None):
        raise ValueError("give exactly one of delay or delay_file")
    args = [
        "--loaded_latency",
        f"-b{int(buffer_kib)}",
        f"-c{int(latency_cpu)}",
        f"-k{format_cpus(load_cpus)}",
        f"-t{format_seconds(seconds)}",
        f"-l{int(access_bytes)}",
        traffic_flag(traffic),
        *_page_and_order_flags(huge_pages, random_access),
    ]
    args.append(f"-d{int(delay)}" if delay is not None else f"-g{delay_file}")
    if pacing == "exp":
        args.append("--pacing=exp")
    return args


def section_args(mode: str, buffer_kib: int, seconds: float, huge_pages: bool = False) -> list[str]:
    """Options of one of :data:`SECTIONS` (``--latency_matrix``, ``--bandwidth_matrix``, ``--max_bandwidth``:
    buffer per thread in KiB, seconds per measurement, ``-L`` huge pages; ``--c2c_latency``: seconds only).
    The tool chooses the CPUs of every NUMA node itself, as MLC's default run does."""
    if mode not in SECTIONS:
        raise UsageError(f"section {mode!r}: choose among {', '.join(SECTIONS)}")
    if mode == "c2c_latency":
        return ["--c2c_latency", f"-t{format_seconds(seconds)}"]
    return [f"--{mode}", f"-b{int(buffer_kib)}", f"-t{format_seconds(seconds)}", *_page_and_order_flags(huge_pages)]


def delay_file_text(delays: Sequence[int]) -> str:
    """Content of a ``-g`` delay file: one inject delay (cycles) per line."""
    return "".join(f"{int(d)}\n" for d in delays)


def point_args(params: dict, delay_file: Path | str | None = None) -> list[str]:
    """Tool options for a sweep point's params (``mode`` plus that mode's keys; see memstor.experiments.mlc_loaded_latency)."""
    mode = params.get("mode")
    huge, rand = bool(params.get("huge_pages", False)), bool(params.get("random_access", False))
    if mode == "idle_latency":
        return idle_latency_args(params["buffer_kib"], params["latency_cpu"], params["seconds"], huge)
    if mode == "peak_injection_bandwidth":
        return peak_bandwidth_args(params["buffer_kib"], params["load_cpus"], params["seconds"], huge, rand)
    if mode == "loaded_latency":
        delays = list(params["delays"])
        one = delays[0] if len(delays) == 1 else None
        return loaded_latency_args(
            params["traffic"], params["access_bytes"], params["buffer_kib"], params["latency_cpu"],
            params["load_cpus"], params["seconds"], delay=one, delay_file=None if one is not None else delay_file,
            huge_pages=huge, random_access=rand, pacing=params.get("pacing", "fixed"),
        )
    if mode in SECTIONS:
        return section_args(mode, params["buffer_kib"], params["seconds"], huge)
    raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")


def estimate_s(params: dict) -> float:
    """Expected wall time of a point in seconds (MLC runs 5 read-write ratios in peak mode)."""
    mode, seconds = params.get("mode"), float(params.get("seconds", 2))
    if mode == "loaded_latency":
        return len(params.get("delays", [])) * seconds + STARTUP_S
    if mode == "peak_injection_bandwidth":
        return 5 * seconds + STARTUP_S
    if mode in ("latency_matrix", "bandwidth_matrix"):
        return len(numa_nodes()) ** 2 * seconds + STARTUP_S
    if mode == "max_bandwidth":  # several injection rates of each of 4 read/write mixes, best kept
        return 12 * seconds + STARTUP_S
    if mode == "c2c_latency":  # HIT and HITM, locally and between every pair of nodes
        return 2 * len(numa_nodes()) * seconds + STARTUP_S
    return seconds + STARTUP_S


def numa_nodes(root: Path = Path("/sys/devices/system/node")) -> list[int]:
    """The NUMA nodes the kernel reports (``node<N>`` folders); [0] when there are none (one node)."""
    try:
        nodes = sorted(int(d.name[4:]) for d in root.iterdir() if d.name[:4] == "node" and d.name[4:].isdigit())
    except OSError:
        nodes = []
    return nodes or [0]


# ---------------------------------------------------------------------------------------- huge pages

THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MEMINFO = Path("/proc/meminfo")
_HUGE_LINE_RE = re.compile(r"^#\s*huge pages:.*?AnonHugePages in buffers:\s*(\d+)\s+of\s+(\d+)\s*KiB",
                           re.IGNORECASE | re.MULTILINE)


def thp_mode(path: Path = THP_ENABLED) -> str | None:
    """Transparent huge pages mode (``always`` | ``madvise`` | ``never``), the bracketed word of
    /sys/kernel/mm/transparent_hugepage/enabled; None when unreadable (not Linux, no THP)."""
    try:
        m = re.search(r"\[(\w+)\]", path.read_text())
    except OSError:
        return None
    return m.group(1) if m else None


def hugetlb_free_bytes(path: Path = MEMINFO) -> int | None:
    """Free reserved huge pages in bytes (HugePages_Free x Hugepagesize of /proc/meminfo): what MLC's
    ``-L`` can use; None when unknown."""
    try:
        text = path.read_text()
    except OSError:
        return None
    free = re.search(r"^HugePages_Free:\s*(\d+)", text, re.MULTILINE)
    size = re.search(r"^Hugepagesize:\s*(\d+)\s*kB", text, re.MULTILINE)
    if not free or not size:
        return None
    return int(free.group(1)) * int(size.group(1)) * 1024


def huge_pages_available(tool: str, need_bytes: int) -> tuple[bool, str]:
    """(usable, why) for ``-L`` with ``tool``: loadlat uses transparent huge pages (THP ``always`` or
    ``madvise``); MLC needs ``need_bytes`` of free reserved 2 MiB pages (HugePages_Free)."""
    if tool == "loadlat":
        mode = thp_mode()
        if mode in ("always", "madvise"):
            return True, f"transparent huge pages: {mode}"
        return False, (f"transparent huge pages are {mode or 'not available'} on this kernel; "
                       "as root: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
    free = hugetlb_free_bytes()
    if free is not None and free >= need_bytes:
        return True, f"{free // 2**20} MiB of reserved huge pages free"
    pages = -(-int(need_bytes) // (2 * 2**20))
    return False, (f"MLC -L needs {need_bytes / 2**30:.1f} GiB of reserved 2 MiB huge pages, "
                   f"{(free or 0) / 2**30:.1f} GiB free; as root: echo {pages} > /proc/sys/vm/nr_hugepages")


def huge_page_share(text: str) -> float | None:
    """Share (0..1) of loadlat's buffers backed by huge pages, from its ``# huge pages: ...
    AnonHugePages in buffers: X of Y KiB`` header line (summed over the lines of the output); None when
    the output has no such line (Intel MLC, old loadlat)."""
    got = total = 0
    for m in _HUGE_LINE_RE.finditer(text):
        got, total = got + int(m.group(1)), total + int(m.group(2))
    return got / total if total else None


def pages_text(tool: str | None, huge_pages: bool, share: float | None = None, thp: str | None = None) -> str:
    """How the buffers were paged, for the table's ``pages`` column: ``2M (THP, 100 %)`` (loadlat -L,
    share from its header), ``2M (MLC -L)``, ``4K``; ``4K or 2M (THP always)`` for MLC without -L when
    the kernel may back it with transparent huge pages anyway."""
    if tool == "loadlat":
        if share is None:
            return "2M (THP requested)" if huge_pages else "4K"
        if huge_pages or share > 0:
            return f"2M (THP, {share * 100:.0f} %)" if share > 0 else "4K (THP requested, none granted)"
        return "4K"
    if huge_pages:
        return "2M (MLC -L)"
    return "4K or 2M (THP always)" if thp == "always" else "4K"


# ------------------------------------------------------------------------------------- output checks


def tool_version(text: str) -> str | None:
    """Version from the banner (``Intel(R) Memory Latency Checker - v3.10`` -> ``v3.10``), or None."""
    for line in text.splitlines()[:20]:
        m = _BANNER_RE.search(line)
        if m:
            return m.group(2)
    return None


def privilege_notes(text: str) -> list[str]:
    """Lines where the tool says it lacks root, the msr module or huge pages (stripped, unique, in order)."""
    seen: list[str] = []
    for line in text.splitlines():
        line = line.strip().strip("*").strip()
        if not line or line.startswith(("#", "Command line parameters")):  # loadlat comments, our own argv
            continue
        if _PRIVILEGE_RE.search(line) and line not in seen:
            seen.append(line)
    return seen


def privilege_summary(tool: str, notes: Sequence[str]) -> str | None:
    """One clear line about missing privileges, or None. Measurements may still be valid."""
    if not notes:
        return None
    joined = " ".join(notes).lower()
    if "prefetcher" in joined or "msr" in joined:
        return (
            f"{tool} could not change the hardware prefetchers (needs root and the msr module: "
            "'sudo modprobe msr' and run as root); it measured latency with random access instead"
        )
    if "hugepage" in joined:
        return f"{tool} needs huge pages: {notes[0]} (as root: echo 4000 > /proc/sys/vm/nr_hugepages)"
    return f"{tool} lacks a privilege for this mode ({notes[0]}); run as root for the full measurement"


def select_rows(rows: Sequence[dict], params: dict) -> list[dict]:
    """The parsed rows that belong to a point: its test, and for loaded latency its inject delays."""
    mode = params.get("mode")
    out = [r for r in rows if r.get("test") == mode]
    if mode == "loaded_latency":
        wanted = {int(d) for d in params.get("delays", [])}
        out = [r for r in out if r.get("inject_delay") is not None and int(r["inject_delay"]) in wanted]
    return out


def check_rows(rows: Sequence[dict], params: dict) -> str | None:
    """None when ``rows`` (parsed from a point's output) hold the complete measurement, else the reason."""
    mode = params.get("mode")
    mine = select_rows(rows, params)
    if mode == "idle_latency":
        if not any(r.get("latency_ns") is not None for r in mine):
            return "no idle latency in the output"
        return None
    if mode == "peak_injection_bandwidth":
        if not any(r.get("bandwidth_MBps") is not None for r in mine):
            return "no peak injection bandwidth in the output"
        return None
    if mode in SECTIONS:
        if not any(r.get(SECTION_VALUE[mode]) is not None for r in mine):
            return f"no {mode.replace('_', ' ')} in the output"
        return None
    if mode != "loaded_latency":
        return f"unknown mode {mode!r}"
    if any("partial" in str(r.get("detail") or "") for r in mine):
        return "the run was interrupted (its last rows are partial)"
    info = traffic_info(params["traffic"])
    label = info[0] if info else str(params["traffic"])
    wrong = sorted({r.get("traffic") for r in mine if r.get("traffic") not in (None, label)}, key=str)
    if wrong:
        return f"the output measured traffic {', '.join(map(str, wrong))}, not {label} ({traffic_flag(params['traffic'])})"
    sizes = sorted({r.get("access_bytes") for r in mine if r.get("access_bytes") not in (None, params["access_bytes"])},
                   key=str)
    if sizes:
        return f"the output measured access size {sizes[0]} bytes, not {params['access_bytes']}"
    done = {int(r["inject_delay"]) for r in mine if r.get("latency_ns") is not None and r.get("bandwidth_MBps") is not None}
    missing = [int(d) for d in params["delays"] if int(d) not in done]
    if missing:
        shown = ", ".join(map(str, missing[:6])) + (" ..." if len(missing) > 6 else "")
        return f"no latency/bandwidth row for inject delay {shown} ({len(done)} of {len(params['delays'])} delays)"
    return None


def check_text(text: str, params: dict, source: str = "") -> str | None:
    """Parse a point's raw output and check it (:func:`check_rows`); the reason it is incomplete, or None."""
    try:
        result = parse_mlc(text, source or "output")
    except Exception as err:  # a parser bug must not pass a bad file as complete
        return f"the output could not be parsed ({type(err).__name__}: {err})"
    return check_rows(result.rows, params)


def _last_words(text: str, limit: int = 200) -> str:
    """The most telling line of a tool's error output: the first line saying what went wrong, else the
    last non-empty line that is not usage help."""
    lines = [ln.strip().strip("*").strip() for ln in text.splitlines() if ln.strip().strip("*").strip()]
    for ln in lines:
        if ln.startswith(("#", "Command line parameters")):
            continue
        if re.search(r"invalid argument:|unsupported|error|exiting|must be|cannot|can't|failed|need", ln, re.I) \
                or _PRIVILEGE_RE.search(ln):
            return ln[:limit]
    for ln in reversed(lines):
        if not ln.startswith(("./mlc", "-", "USAGE", "Note that", "'")):
            return ln[:limit]
    return lines[-1][:limit] if lines else ""


# ------------------------------------------------------------------------------------------ runner

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent():
    """A preexec_fn (Linux) that makes the tool receive SIGKILL when memstor dies (SIGKILL, OOM killer),
    so an orphaned mlc/loadlat never keeps loading the memory while a resumed sweep measures; None
    elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()

    def hook() -> None:
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # memstor died before prctl took effect
            os._exit(1)

    return hook



class MlcRunner:
    """memstor.measure.sweep.Runner for Intel MLC or loadlat; one tool invocation per point, raw text ``.txt``.

    ``points`` maps point names to their params (``mode`` + that mode's keys, see memstor.experiments.mlc_loaded_latency);
    ``complete(raw)`` finds the point from the raw file's name and checks the parsed rows.
    """

    suffix = ".txt"

    def __init__(self, tool: str, executable: str, points: Iterable, *, requested: str = "",
                 timeout_factor: float = 4.0):
        if tool not in ("mlc", "loadlat"):
            raise UsageError(f"tool={tool!r}: the runner needs mlc or loadlat (resolve 'auto' first)")
        self.tool = tool
        self.executable = str(executable)
        self.params = {p.name: dict(p.params) for p in points}
        self.timeout_factor = timeout_factor
        self.requested = requested or tool  # the `tool` parameter (auto | mlc | loadlat), kept in meta

    def _point_params(self, raw: Path) -> dict | None:
        """The params of the point a raw (or temporary) file belongs to, from its file name."""
        name = Path(raw).name.split(".tmp", 1)[0]
        if name.endswith(self.suffix):
            name = name[: -len(self.suffix)]
        return self.params.get(name)

    def command(self, params: dict, delay_file: Path | str | None = None) -> list[str]:
        """The full argv of a point."""
        return [self.executable, *point_args(params, delay_file)]

    def run(self, point, out_tmp: Path) -> dict:
        """Run the tool for ``point``; stdout goes to ``out_tmp``. Raises PointFailed with one line."""
        params = dict(point.params)
        timeout = estimate_s(params) * self.timeout_factor + 300  # generous: big buffers take long to touch
        with tempfile.TemporaryDirectory(prefix="memstor-mlc-") as tmpdir:
            delay_file = None
            if params.get("mode") == "loaded_latency" and len(params.get("delays", [])) > 1:
                delay_file = Path(tmpdir) / "delays.txt"
                delay_file.write_text(delay_file_text(params["delays"]))
            argv = self.command(params, delay_file)
            json_file = Path(tmpdir) / "loadlat.json"
            if self.tool == "loadlat":
                # sub-windows of >= 0.1 s (10 at 1 s, 20 at 2 s) instead of loadlat's 5: enough for a
                # batch-means interval of the point (memstor.measure.loadlat.sub_windows). Not part of the
                # point's params or name: it changes the sidecar's detail, not the measured values, so
                # raw files measured with 5 stay valid (their interval is empty: too few sub-windows).
                argv += [f"--windows={sub_windows(float(params.get('seconds', 2)))}", f"--json={json_file}"]
            meta: dict[str, Any] = {"command": argv, "tool": self.tool, "tool_choice": self.requested, "executable": self.executable,
                    "thp_enabled": thp_mode()}
            if delay_file is not None:
                meta["delay_file"] = {"path": str(delay_file), "delays": [int(d) for d in params["delays"]]}
            try:
                with open(out_tmp, "wb") as out:
                    proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, timeout=timeout,
                                          stdin=subprocess.DEVNULL, check=False, preexec_fn=_die_with_parent())
            except FileNotFoundError:
                raise _failed(point, f"{self.tool} not found at {self.executable}", meta) from None
            except PermissionError:
                raise _failed(point, f"{self.executable} is not executable (chmod +x it)", meta) from None
            except subprocess.TimeoutExpired:
                raise _failed(point, f"{self.tool} did not finish within {timeout:.0f} s; killed", meta) from None
            text = Path(out_tmp).read_text(encoding="utf-8", errors="replace")
            stderr = proc.stderr.decode("utf-8", errors="replace")
            if self.tool == "loadlat" and json_file.is_file():
                try:
                    meta["loadlat_json"] = json.loads(json_file.read_text())
                except ValueError:
                    meta["loadlat_json"] = None
        meta["tool_version"] = tool_version(text)
        meta["returncode"] = proc.returncode
        if stderr.strip():
            meta["stderr"] = stderr[-4000:]
        notes = privilege_notes(text + "\n" + stderr)
        summary = privilege_summary(self.tool, notes)
        meta["privilege_notes"] = notes
        meta["note"] = summary
        problem = check_text(text, params, str(out_tmp))
        if proc.returncode != 0 or problem:
            meta["stdout_tail"] = text[-4000:]  # the sweep deletes a failed point's output; keep its end
        if proc.returncode != 0:
            why = _last_words(stderr) or _last_words(text) or "no message"
            if problem and summary:
                why = f"{why} — {summary}"
            raise _failed(point, f"{self.tool} exited with status {proc.returncode}: {why}", meta)
        if problem:
            if summary:
                problem = f"{problem} — {summary}"
            raise _failed(point, problem, meta)
        return meta

    def complete(self, raw: Path) -> bool:
        """True when the raw text parses into every row the point expects (all its delays, ...)."""
        params = self._point_params(raw)
        try:
            text = Path(raw).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        if params is None:  # a file of a point not in this sweep: complete if it holds any measurement
            return bool(parse_mlc(text, str(raw)).rows)
        return check_text(text, params, str(raw)) is None


def _failed(point, reason: str, meta: dict) -> PointFailed:
    """A one-line PointFailed for ``point`` that carries the meta (command line...) for the sweep."""
    err = PointFailed(f"point {point.name}: {reason}".replace("\n", " "))
    err.meta = meta
    return err
