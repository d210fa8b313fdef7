"""mlc-loaded-latency, its points: file-safe point names that encode every setting, the sweep's points
(idle latency, peak injection, sections, loaded latency per access size x traffic x pacing and per read share,
repetitions) and
the configuration a point measures.
"""

from __future__ import annotations

import hashlib
import json

from memstor.core.units import format_size
from memstor.experiments._mlc_params import LoadedLatencyParams, memory_need_bytes, share_codes
from memstor.measure import mlc
from memstor.measure.sweep import Point

# ------------------------------------------------------------------------------------------ points


def _seconds_text(seconds: float) -> str:
    """``2s``, ``500ms`` (no dot in point names)."""
    seconds = float(seconds)
    if seconds.is_integer():
        return f"{int(seconds)}s"
    return f"{seconds * 1000:g}ms".replace(".", "p")


def point_name(params: dict) -> str:
    """File-safe point name that encodes every setting of ``params`` (a :func:`build_points` spec).

    Readable parts first — mode, traffic and access size, tool, buffer (``b1g``), seconds per delay
    (``t2s``), latency CPU (``c0``), load CPUs (``k1-3`` when short, else their count), the number of
    delays (``d19``), pages (``2M``/``4K``), load order (``seq``/``rnd``), ``exp`` for exponential pacing,
    ``r<n>`` for repetition n > 1, ``a<n>`` for re-measurement attempt n > 1 — then the first 8 hex digits
    of the SHA-256 of all params (JSON, sorted keys), so that two points that differ in anything (the
    delay list, a long CPU list...) never share a raw file. Example:
    ``loaded-latency_R_l64_loadlat_b1g_t2s_c0_k1_d19_2M_seq_1f0c2a9b``. Fixed pacing, the first repetition
    and the first attempt add nothing to the params, so their names are those of earlier memstor versions
    (their raw files stay valid).
    """
    mode = params["mode"]
    parts = [mode.replace("_", "-")]
    if mode == "loaded_latency":
        parts += [str(params["traffic"]), f"l{int(params['access_bytes'])}"]
    parts += [str(params["tool"]), f"b{format_size(int(params['buffer_kib']) * 1024)}",
              f"t{_seconds_text(params['seconds'])}"]
    if "latency_cpu" in params:
        parts.append(f"c{int(params['latency_cpu'])}")
    if "load_cpus" in params:
        cpus = mlc.format_cpus(params["load_cpus"])
        parts.append(f"k{cpus.replace(',', '+')}" if len(cpus) <= 12 else f"k{len(params['load_cpus'])}cpus")
    if "delays" in params:
        parts.append(f"d{len(params['delays'])}")
    parts.append("2M" if params.get("huge_pages") else "4K")
    if "random_access" in params:
        parts.append("rnd" if params["random_access"] else "seq")
    if params.get("pacing", "fixed") != "fixed":
        parts.append(str(params["pacing"]))
    if int(params.get("repetition", 1)) > 1:
        parts.append(f"r{int(params['repetition'])}")
    if int(params.get("attempt", 1)) > 1:
        parts.append(f"a{int(params['attempt'])}")
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return "_".join(parts) + f"_{digest[:8]}"


def build_points(p: LoadedLatencyParams, tool: str, huge: bool | None = None) -> list[Point]:
    """Idle latency (huge pages, and 4 KiB pages), peak injection bandwidth, one point per asked-for section
    (``sections``: latency/bandwidth matrix, max bandwidth, c2c latency), then one loaded-latency point
    per access size x traffic x pacing, and one per read share that no traffic code measures (the read-ratio
    family, at the first access size and pacing); all of it ``p.repetitions`` times (repetitions outer: a
    first full pass over the grid comes first).

    ``huge``: use huge pages (``-L``); None = ``p.huge_pages`` where the kernel allows them for ``tool``
    (:func:`memstor.measure.mlc.huge_pages_available`). With huge pages every point runs with ``-L`` and an
    extra idle-latency point runs with 4 KiB pages, so both idle figures exist (their difference is the
    page-walk cost). Each loaded-latency point runs the whole delay list in one tool invocation (``-g``
    delay file; ``-d`` when there is a single delay). Point params hold everything that changes the
    measurement and the point name encodes all of them (:func:`point_name`), so a changed parameter
    measures a new point (in a new raw file) and an unchanged one is resumed from its raw file. Params
    carry ``pacing`` only for ``exp`` and ``repetition`` only from 2 on (see :func:`point_name`).
    Re-measurements (attempts) are added by :func:`remeasure_points`.
    """
    if huge is None:
        huge = p.huge_pages and mlc.huge_pages_available(tool, memory_need_bytes(p))[0]
    common = {
        "tool": tool,
        "buffer_kib": p.buffer_kib,
        "seconds": float(p.seconds_per_point),
        "huge_pages": bool(huge),
    }
    specs = [{"mode": "idle_latency", **common, "latency_cpu": p.latency_cpu}]
    if huge:
        specs.append({"mode": "idle_latency", **common, "huge_pages": False, "latency_cpu": p.latency_cpu})
    loads = {"load_cpus": list(p.load_cpus), "random_access": bool(p.random_access)}
    specs.append({"mode": "peak_injection_bandwidth", **common, **loads})
    specs += [{"mode": section, **common} for section in p.sections]
    curves = [(size, code, pacing) for size in p.access_bytes for code in p.traffic for pacing in p.pacing]
    curves += [(p.access_bytes[0], code, p.pacing[0]) for code in share_codes(p)]  # the read-ratio family
    for size, code, pacing in curves:
        spec = {"mode": "loaded_latency", **common, "latency_cpu": p.latency_cpu, **loads,
                "traffic": code, "access_bytes": size, "delays": list(p.delays)}
        if pacing != "fixed":
            spec["pacing"] = pacing
        specs.append(spec)
    points = []
    for rep in range(1, p.repetitions + 1):
        for spec in specs:
            params = dict(spec, repetition=rep) if rep > 1 else spec
            points.append(Point(point_name(params), params, mlc.estimate_s(params)))
    return points


def config_name(params: dict) -> str:
    """The configuration a point measures: its name without repetition and attempt (the name of its first
    repetition's first attempt). Rows with the same ``config`` (and test, traffic, delay) are repetitions."""
    if params.get("config"):
        return str(params["config"])
    return point_name({k: v for k, v in params.items() if k not in ("repetition", "attempt", "config")})
