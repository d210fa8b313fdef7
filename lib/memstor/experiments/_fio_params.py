"""The parameters every fio experiment family shares: names, limits, the validated common section.

Each family validates its profile section into a typed dataclass whose ``common`` is a :class:`FioCommon`
(UsageError naming the parameter and the allowed values, before anything runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memstor.core.validate import Section

BLOCK_SIZE = "fio-block-size"

RW_RATIO = "fio-rw-ratio"

QUEUE_DEPTH = "fio-queue-depth"

#: Engines a profile may ask for. Synchronous ones keep one I/O in flight per job (iodepth ignored).
ENGINES = ("io_uring", "libaio", "posixaio", "psync", "pvsync", "pvsync2", "sync")

SINGLE_RW = ("randread", "randwrite", "read", "write")

MAX_IODEPTH = 65536

MAX_NUMJOBS = 256

MAX_REPETITIONS = 100


@dataclass(frozen=True)
class FioCommon:
    """Parameters every storage experiment shares (validated)."""

    runtime_s: float       # measured seconds per point
    ramp_s: float          # warm-up seconds per point
    file_size: str         # normalised fio size string of the test file
    file_size_bytes: int
    ioengine: str          # preferred engine
    direct: int            # 1 = O_DIRECT
    numjobs: int           # jobs per point
    repetitions: int       # runs of every point
    device: str = ""          # raw block device instead of a test file (only with confirm_device)
    confirm_device: str = ""  # the same device named a second time, on purpose
    precision_pct: float = 0.0  # stop a point when IOPS and mean latency are within +-this % (95 %); 0: fixed runtime
    max_runtime_s: float = 0.0  # with precision_pct: the longest a point runs (s)

_COMMON_KEYS = ("runtime_s", "ramp_s", "file_size", "ioengine", "direct", "numjobs", "repetitions")

#: Keys a section may leave out (default ""): a raw device is used only when both name the same device.
OPTIONAL_KEYS = ("device", "confirm_device")

#: Optional keys of the families whose points may stop when precise (memstor.measure.precision): the target
#: half-width of the 95 % interval of IOPS and mean latency (% of the mean; 0 or absent: fixed runtime_s)
#: and the longest a point may run (s; default MAX_RUNTIME_FACTOR x runtime_s).
PRECISION_KEYS = ("precision_pct", "max_runtime_s")

MAX_RUNTIME_FACTOR = 6


def block_sizes(v: Section, key: str, values: list, common: FioCommon) -> tuple:
    """Validated block sizes (fio size strings, order kept, each once): > 0, <= file size, 512-aligned
    for O_DIRECT."""
    out: list[str] = []
    for value in values:
        text, n = v.size(key, value)
        if n > common.file_size_bytes:
            raise v.error(key, value, f"block size larger than file_size={common.file_size}")
        if common.direct and n % 512:
            raise v.error(key, value, "O_DIRECT (direct: 1) needs a multiple of 512 bytes")
        out.append(text)
    return v.unique(key, out)


def single_block_size(v: Section, params: dict, common: FioCommon, key: str = "bs") -> str:
    """The one block size of a family that takes one (a scalar, or a one-item list), validated."""
    bs = params[key]
    if isinstance(bs, (list, tuple)):
        if len(bs) != 1:
            raise v.error(key, bs, "give one block size, e.g. 4k")
        bs = bs[0]
    return block_sizes(v, key, [bs], common)[0]


def common_params(v: Section, params: dict, keys: Sequence[str] = (), *, precision: bool = False,
                  optional: Sequence[str] = ()) -> FioCommon:
    """Validate the keys every fio family shares; ``keys`` are the family's own (all required), ``optional``
    its own that may be left out; ``precision``: the family also takes :data:`PRECISION_KEYS`."""
    v.keys(params, _COMMON_KEYS + tuple(keys),
           optional=OPTIONAL_KEYS + tuple(optional) + (PRECISION_KEYS if precision else ()))
    size_text, size_bytes = v.size("file_size", params["file_size"])
    if size_bytes < 1024 * 1024:
        raise v.error("file_size", params["file_size"], "use at least 1m")
    runtime_s = v.seconds("runtime_s", params["runtime_s"], positive=True)
    pct = params.get("precision_pct") or 0
    if pct:
        pct = v.number("precision_pct", pct)
        if pct > 100:
            raise v.error("precision_pct", pct, "a half-width in % of the mean, e.g. 2 or 5 (0: fixed runtime_s)")
    max_s = params.get("max_runtime_s") or 0
    max_s = v.seconds("max_runtime_s", max_s, positive=True) if max_s else MAX_RUNTIME_FACTOR * runtime_s
    return FioCommon(
        runtime_s=runtime_s,
        ramp_s=v.seconds("ramp_s", params["ramp_s"], positive=False),
        file_size=size_text,
        file_size_bytes=size_bytes,
        ioengine=v.choice("ioengine", params["ioengine"], ENGINES),
        direct=v.integer("direct", params["direct"], 0, 1),
        numjobs=v.integer("numjobs", params["numjobs"], 1, MAX_NUMJOBS),
        repetitions=v.integer("repetitions", params["repetitions"], 1, MAX_REPETITIONS),
        device=str(params.get("device") or ""),
        confirm_device=str(params.get("confirm_device") or ""),
        precision_pct=float(pct),
        max_runtime_s=float(max_s) if pct else 0.0,
    )


def patterns(v: Section, params: dict) -> tuple:
    """The ``rw`` list: single-direction patterns, each once."""
    return v.unique("rw", [v.choice("rw", x, SINGLE_RW) for x in v.items("rw", params["rw"])])
