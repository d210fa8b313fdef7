"""mlc-loaded-latency, its parameters: the typed parameter model, validation (UsageError naming the parameter,
the value and the way out) and the checks that depend on the chosen tool and the free memory
(see memstor.experiments.mlc_loaded_latency for the experiment).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from memstor.core.errors import NotOnThisMachine
from memstor.core.schema import TRAFFIC_CODES, read_share_code
from memstor.core.validate import Section
from memstor.measure import mlc
from memstor.measure.shape import CpuShape, cpu_shape, memory_shape, usable_memory_bytes
from memstor.measure.sysinfo import cache_info

EXPERIMENT = "mlc-loaded-latency"
#: MLC's default inject delays (cycles), used when a profile gives none.
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
#: Pacings of the load threads' delays (loadlat --pacing); Intel MLC has only fixed.
PACINGS = ("fixed", "exp")
#: Upper limits of the repetitions and max_remeasure parameters.
MAX_REPETITIONS = 100
MAX_REMEASURE = 10
#: Share of the available memory the tool's buffers may take.
MEMORY_FRACTION = 0.8


@dataclass(frozen=True)
class LoadedLatencyParams:
    """Validated parameters of the experiment (the ``mlc-loaded-latency`` section of a profile)."""

    tool: str = "auto"                     # auto (MLC on PATH, else loadlat; loadlat for exp) | mlc | loadlat
    mlc_path: str = ""                     # Intel MLC binary when not on PATH
    traffic: tuple = ("R", "W3", "W2", "W5", "W6")  # MLC -W codes ("R" = read-only)
    read_shares: tuple = ()                # the read-ratio family: % of the DRAM traffic that is reads (Mess's
    #                                        label), one curve each at the first access size and pacing; loadlat
    #                                        --read_share (100/80/75/0 are R/W3/W2/W6: that code's curve)
    access_bytes: tuple = (64, 256)        # -l access size / stride in bytes
    delays: tuple = MLC_DELAYS             # inject delays in delay-loop cycles, measured in this order
    seconds_per_point: float = 2           # -t seconds per delay (MLC: whole seconds)
    buffer_kib: int = 1048576              # -b buffer per thread in KiB
    latency_cpu: int = 0                   # -c CPU of the latency thread
    load_cpus: tuple = ()                  # -k CPUs of the load threads (resolved: never empty)
    huge_pages: bool = True                # -L huge pages where the kernel allows them (+ a 4 KiB idle point)
    random_access: bool = False            # -U random addresses for the load threads (default sequential)
    pacing: tuple = ("fixed",)             # loadlat --pacing of each loaded curve: fixed (MLC) and/or exp
    sections: tuple = ()                   # MLC default-run sections beside these: latency_matrix, bandwidth_matrix,
    #                                        max_bandwidth, c2c_latency (one point each)
    memory_channels: int = 0               # populated DRAM channels for the report's DRAM ceiling (0: from SMBIOS)
    memory_mts: int = 0                    # DRAM transfer rate in MT/s for the same (0: from SMBIOS)
    repetitions: int = 1                   # runs of every point (separate raw files)
    max_remeasure: int = 1                 # re-measurements of a point that fails the quality gate
    profile: str = ""                      # profile the values came from (for the record)


# -------------------------------------------------------------------------------------- validation


V = Section(EXPERIMENT)


def _traffic(values) -> tuple:
    """Validated MLC -W codes ("R", "W2" ... "W10"), each once; "r", "w5", "5" are accepted as R, W5, W5."""
    allowed = ", ".join(f"{c} ({TRAFFIC_CODES[c][0]})" for c in TRAFFIC_CODES)
    codes = []
    for value in V.items("traffic", values):
        code = str(value).strip().upper()
        code = f"W{code}" if code.isdigit() else code
        if code not in TRAFFIC_CODES:
            raise V.error("traffic", value, f"unknown traffic code; allowed: {allowed}")
        codes.append(code)
    return V.unique("traffic", codes)


def _read_shares(values) -> tuple:
    """Read shares of the DRAM traffic in percent (whole numbers 0..100, each once, in the given order)."""
    want = "use whole percentages 0..100 of the DRAM traffic that is reads, e.g. [100, 70, 50, 0] (or [])"
    shares = [V.integer("read_shares", v, 0, 100, want=want) for v in V.items("read_shares", values, allow_empty=True)]
    return V.unique("read_shares", shares)


def share_codes(p: LoadedLatencyParams) -> tuple:
    """The traffic codes the read shares add (memstor.core.schema.read_share_code), each once, leaving out
    those ``traffic`` measures already (a share of 80 % is MLC's W3: one curve, not two)."""
    codes = [read_share_code(s) for s in p.read_shares]
    return tuple(c for c in dict.fromkeys(codes) if c not in p.traffic)


def needs_loadlat(p: LoadedLatencyParams) -> str:
    """Why only loadlat can run ``p`` ('' when MLC can): exponential pacing, or read shares MLC cannot mix."""
    if "exp" in p.pacing:
        return "exponential pacing"
    if any(code not in TRAFFIC_CODES for code in share_codes(p)):
        return "read shares other than MLC's mixes"
    return ""


def _access_sizes(values) -> tuple:
    """Access sizes in bytes: positive multiples of the 64-byte cache line, each once."""
    want = "use a positive multiple of 64 bytes (a cache line), e.g. 64, 128, 256"
    sizes = [V.integer("access_bytes", v, 64, want=want) for v in V.items("access_bytes", values)]
    for size in sizes:
        if size % 64:
            raise V.error("access_bytes", size, want)
    return V.unique("access_bytes", sizes)


def _delays(values) -> tuple:
    """Inject delays (delay-loop cycles): whole numbers >= 0, each once, kept in the given order."""
    want = f"use whole numbers >= 0 (inject delays in cycles); MLC's default list is {list(MLC_DELAYS)}"
    return V.unique("delays", [V.integer("delays", v, 0, want=want) for v in V.items("delays", values)])


def _sections(values) -> tuple:
    """The other sections of MLC's default run to measure (memstor.measure.mlc.SECTIONS), each once, in order."""
    want = f"use a list of {', '.join(mlc.SECTIONS)} (or [] for none)"
    out = []
    for value in V.items("sections", values, allow_empty=True):
        text = str(value).strip().lower().lstrip("-")
        if text not in mlc.SECTIONS:
            raise V.error("sections", value, want)
        out.append(text)
    return V.unique("sections", out)


def _pacing(values) -> tuple:
    """Pacings of the loaded curves: ``fixed`` (MLC's fixed delay loop) and/or ``exp`` (exponential delays
    of the same mean, loadlat only), each once, in the given order."""
    want = "use fixed (MLC's fixed delay loop) and/or exp (exponential delays, loadlat), e.g. [fixed, exp]"
    out = []
    for value in V.items("pacing", values):
        text = str(value).strip().lower()
        if text not in PACINGS:
            raise V.error("pacing", value, want)
        out.append(text)
    return V.unique("pacing", out)


def available_cpus() -> list[int]:
    """CPUs this process may run on (affinity mask), sorted."""
    return list(cpu_shape().affinity)


def default_load_cpus(lat: int, shape: CpuShape) -> list[int]:
    """The load CPUs when the profile names none: every CPU of the affinity mask but the latency CPU and its
    SMT siblings (a load thread there would share the latency thread's core: its caches and pipeline), at most
    as many as the cgroup CPU quota leaves beside the latency thread (usable CPUs - 1)."""
    near = set(shape.siblings.get(lat, ())) | {lat}
    load = [c for c in shape.affinity if c not in near]
    return load[: max(0, shape.usable - 1)]


def latency_cpu_of(value, shape: CpuShape) -> int:
    """The latency CPU: ``auto`` (or empty) is the first CPU of the affinity mask (a container or ``taskset``
    may leave CPU 0 out); a number must be in the mask (UsageError naming latency_cpu)."""
    cpus = list(shape.affinity)
    if value is None or str(value).strip().lower() in ("", "auto"):
        return cpus[0]
    lat = V.integer("latency_cpu", value, 0)
    if lat not in cpus:
        raise V.error("latency_cpu", lat, f"not an available CPU; this machine offers CPUs {mlc.format_cpus(cpus)} "
                      "(auto: the first of them)")
    return lat


def _cpus(latency_cpu, load_cpus) -> tuple[int, tuple]:
    """Validated latency CPU and load CPUs ("" = every available CPU except the latency CPU)."""
    shape = cpu_shape()
    cpus = list(shape.affinity)
    shown = mlc.format_cpus(cpus)
    lat = latency_cpu_of(latency_cpu, shape)
    if load_cpus in (None, "", []):
        load = default_load_cpus(lat, shape)
        if not load:
            raise NotOnThisMachine(
                f"{EXPERIMENT}: needs a CPU for a load thread beside latency CPU {lat} (not its SMT sibling); "
                f"this process may use {shape.source}: run it on a machine (or affinity, cgroup) with 2+ cores")
        return lat, tuple(load)
    try:
        load = mlc.parse_cpus(load_cpus)
    except ValueError:
        raise V.error("load_cpus", load_cpus, "use a CPU list like '1', '1-3,5' or '' (all but latency_cpu)") from None
    bad = [c for c in load if c not in cpus]
    if bad:
        raise V.error("load_cpus", load_cpus, f"CPU {bad[0]} is not available; this machine offers CPUs {shown}")
    if lat in load:
        raise V.error("load_cpus", load_cpus, f"it includes latency_cpu {lat}; the latency thread needs its own CPU")
    return lat, tuple(load)


def validate_params(params: dict) -> LoadedLatencyParams:
    """Check a profile section and return it typed; UsageError (one line) naming the bad parameter.

    Keys missing from ``params`` take the standard profile's values; unknown keys are refused.
    """
    V.keys(params, [f.name for f in fields(LoadedLatencyParams) if f.name != "profile"], required=False)
    d = LoadedLatencyParams()
    get = params.get
    tool = V.choice("tool", str(get("tool", d.tool) or "auto").strip().lower(), mlc.TOOLS)
    p = LoadedLatencyParams(
        tool=tool,
        mlc_path=str(get("mlc_path", d.mlc_path) or ""),
        traffic=_traffic(get("traffic", list(d.traffic))),
        read_shares=_read_shares(get("read_shares", list(d.read_shares))),
        access_bytes=_access_sizes(get("access_bytes", list(d.access_bytes))),
        delays=_delays(get("delays", list(d.delays))),
        seconds_per_point=V.seconds("seconds_per_point", get("seconds_per_point", d.seconds_per_point)),
        buffer_kib=_buffer_kib(V, get("buffer_kib", d.buffer_kib)),
        huge_pages=V.boolean("huge_pages", get("huge_pages", d.huge_pages)),
        random_access=V.boolean("random_access", get("random_access", d.random_access)),
        pacing=_pacing(get("pacing", list(d.pacing))),
        sections=_sections(get("sections", list(d.sections))),
        memory_channels=V.integer("memory_channels", get("memory_channels", d.memory_channels) or 0, 0, 64,
                                  want="use the populated DRAM channels, e.g. 2 (0 = read them from SMBIOS)"),
        memory_mts=V.integer("memory_mts", get("memory_mts", d.memory_mts) or 0, 0, 20000,
                             want="use the DRAM transfer rate in MT/s, e.g. 3200 (0 = read it from SMBIOS)"),
        repetitions=V.integer("repetitions", get("repetitions", d.repetitions), 1, MAX_REPETITIONS),
        max_remeasure=V.integer("max_remeasure", get("max_remeasure", d.max_remeasure), 0, MAX_REMEASURE),
        profile=str(get("profile", "") or ""),
    )
    # the CPUs last: a bad parameter is named as such on any machine, not hidden behind a one-core refusal
    lat, load = _cpus(get("latency_cpu", "auto"), get("load_cpus", ""))
    return replace(p, latency_cpu=lat, load_cpus=load)


#: Buffers scaled to a machine's memory stay at least this many times the last-level cache, and this many KiB:
#: smaller ones would measure the cache, not DRAM.
MIN_BUFFER_LLC_MULTIPLE = 4
MIN_BUFFER_KIB = 64 * 1024
#: buffer_kib 'auto': MIN_BUFFER_LLC_MULTIPLE x the last-level cache, at least this (KiB: 256 MiB).
AUTO = "auto"
AUTO_MIN_BUFFER_KIB = 256 * 1024


def _buffer_kib(V: Section, value) -> int:
    """buffer_kib: a whole number of KiB >= 1, or 'auto' (:func:`auto_buffer_kib`)."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return auto_buffer_kib()
    return V.integer("buffer_kib", value, 1, want="use a whole number of KiB >= 1, or auto (4 x the last-level "
                     f"cache, at least {AUTO_MIN_BUFFER_KIB // 1024} MiB)")


def auto_buffer_kib() -> int:
    """buffer_kib 'auto': MIN_BUFFER_LLC_MULTIPLE x the largest cache sysfs gives (KiB, whole MiB), at least
    AUTO_MIN_BUFFER_KIB: a buffer that measures DRAM on a machine with a large last-level cache too (a 2-vCPU VM
    here reports a 480 MiB L3: 1,920 MiB; a laptop's 8-36 MiB: 256 MiB)."""
    return max(AUTO_MIN_BUFFER_KIB, min_buffer_kib())


def llc_bytes() -> int:
    """The largest cache sysfs gives (bytes; 0 when it gives none)."""
    return max((v for v in cache_info([]).values() if v), default=0)


def min_buffer_kib() -> int:
    """The smallest buffer per thread (KiB, whole MiB) that still measures DRAM: MIN_BUFFER_LLC_MULTIPLE x the
    largest cache sysfs gives, at least MIN_BUFFER_KIB."""
    return max(MIN_BUFFER_KIB, -(-MIN_BUFFER_LLC_MULTIPLE * llc_bytes() // 1024 // 1024) * 1024)


def fit_to_memory(p: LoadedLatencyParams, avail: int | None, min_buffer_kib: int) -> tuple[LoadedLatencyParams, str]:
    """The run's buffers scaled to MEMORY_FRACTION of ``avail`` bytes, and one line saying what was scaled ("":
    nothing). The buffer per thread shrinks first, not below ``min_buffer_kib`` (it must stay far beyond the
    last-level cache to measure DRAM); then load threads are dropped. UsageError when one load thread with
    the smallest buffer does not fit."""
    if not avail or memory_need_bytes(p) <= MEMORY_FRACTION * avail:
        return p, ""
    budget_kib = int(MEMORY_FRACTION * avail / 1024)
    threads = len(p.load_cpus)
    buffer_kib = budget_kib // (2 * threads + 1) // 1024 * 1024  # whole MiB
    if buffer_kib >= min_buffer_kib:
        new = replace(p, buffer_kib=min(p.buffer_kib, buffer_kib))
        return new, (f"buffers scaled to the memory: {new.buffer_kib // 1024} MiB per thread instead of "
                     f"{p.buffer_kib // 1024} MiB ({2 * threads + 1} buffers, {avail / 2**30:.1f} GiB usable)")
    fit = (budget_kib // min_buffer_kib - 1) // 2
    if fit < 1:
        raise NotOnThisMachine(str(V.error(
            "buffer_kib", p.buffer_kib, f"even one load thread with {min_buffer_kib // 1024} MiB buffers needs "
            f"{3 * min_buffer_kib / 2**20:.1f} GiB; {avail / 2**30:.1f} GiB is usable here")))
    new = replace(p, buffer_kib=min(p.buffer_kib, min_buffer_kib), load_cpus=p.load_cpus[:fit])
    return new, (f"scaled to the memory: {fit} of {threads} load threads with {new.buffer_kib // 1024} MiB per "
                 f"thread ({avail / 2**30:.1f} GiB usable)")


def memory_need_bytes(p: LoadedLatencyParams) -> int:
    """Bytes the tool's buffers take at most: a read and a write buffer per load thread, plus the latency
    thread's buffer."""
    return p.buffer_kib * 1024 * (2 * len(p.load_cpus) + 1)


def check_for_tool(p: LoadedLatencyParams, tool: str) -> None:
    """Checks that depend on the chosen tool (MLC takes whole seconds and paces only with fixed delays) and
    on the free memory."""
    if tool == "mlc" and "exp" in p.pacing:
        raise V.error("pacing", list(p.pacing),
                      "Intel MLC paces its load threads only with a fixed delay loop; use pacing: [fixed], "
                      "or tool: loadlat for exponential pacing")
    mixes = [c for c in share_codes(p) if c not in TRAFFIC_CODES]
    if tool == "mlc" and mixes:
        raise V.error("read_shares", list(p.read_shares),
                      f"Intel MLC mixes only its -W codes ({', '.join(mixes)} are loadlat read shares); use "
                      "tool: loadlat, or read shares 100, 80, 75, 0 (MLC's R, W3, W2, W6)")
    if tool == "mlc" and not float(p.seconds_per_point).is_integer():
        raise V.error("seconds_per_point", p.seconds_per_point,
                      "Intel MLC takes whole seconds (-t); use 1 or more, or tool=loadlat")
    need = memory_need_bytes(p)
    avail = usable_memory_bytes()
    if avail and need > MEMORY_FRACTION * avail:
        raise V.error("buffer_kib", p.buffer_kib,
                      f"{len(p.load_cpus)} load threads would need {need / 2**30:.1f} GiB, "
                      f"{avail / 2**30:.1f} GiB is usable ({memory_shape().source}); lower buffer_kib or set load_cpus")
