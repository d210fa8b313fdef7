"""Every throughput held against its physical ceiling: the DRAM peak (dmidecode's DIMMs) and the storage
interface (the drive's PCIe or SATA/SAS link), and the storage numbers above their link (pure: reads only
the ``dram`` and ``drive`` sections of each device's ``sysinfo.json``, or the drive table).

Storage interface ceiling (decimal MB/s, one direction; PCIe is full duplex, so a read and a write each
have their own):

- PCIe: GT/s per lane × lanes × line encoding / 8 bits = the link's raw GB/s. Encoding 8b/10b at 2.5 and
  5 GT/s (gen 1, 2), 128b/130b at 8, 16 and 32 GT/s (gen 3-5), and at 64 GT/s (gen 6, FLIT mode) 242/256:
  of each 256-byte flit, 236 B carry TLPs and 6 B DLLPs, the rest is CRC and FEC.
- then the packet overhead (:data:`TLP_OVERHEAD_BYTES`): each TLP carries at most MaxPayload bytes (sysfs
  does not show it: 256 B is assumed unless the link record holds ``max_payload_bytes``) plus about 24 B of
  framing and sequence number (4 B), a 4-DW header (16 B, 64-bit addresses) and LCRC (4 B): × 256/280 =
  0.914. DLLP traffic (ACKs, flow-control updates) and the read requests travelling the other way cost a
  further percent or two that is not counted, so the ceiling is an upper bound. Gen 6 keeps the same 24 B
  (FLIT mode has no per-TLP framing or LCRC: its ceiling is a little low). Gen 3 x4: 8 × 4 × 128/130 / 8 =
  3,938 MB/s raw, 3,601 MB/s usable; gen 4 x4: 7,877 and 7,202 MB/s.
- SATA and SAS: the line rate with 8b/10b (SATA 6 Gb/s → 600 MB/s, 3 Gb/s → 300; SAS 12 Gb/s → 1,200),
  24G SAS (22.5 Gb/s) with 128b/150b → 2,400 MB/s; frame and command overhead not counted (SATA SSDs top out
  near 550 MB/s).
- virtio, Xen, loop, device-mapper/md without one physical member, network block devices, NVMe over
  fabrics, RAM disks: None, ``unknown (virtio disk: the host's link is not visible)`` and the like.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from memstor.analysis.drive import drive_of
from memstor.analysis.hierarchy import cpu_held
from memstor.core.schema import missing
from memstor.parse.dmidecode import dram_peak
from memstor.parse.drive import unavailable

#: Columns of :func:`ceilings_table`, in order.
CEILING_COLUMNS = ("host", "what", "ceiling", "unit", "how", "reason")
#: The extra columns :func:`above_ceiling` adds to the points it returns.
ABOVE_COLUMNS = ("ceiling_MBps", "pct_of_ceiling", "flag")
#: The two rows per host.
DRAM, STORAGE = "DRAM peak", "storage interface"
#: What a storage number above its link means.
ABOVE_TEXT = "not the drive (page cache, compression or another device)"
#: PCIe GT/s per lane -> (line-encoding numerator, denominator) (module docstring).
PCIE_ENCODING = {2.5: (8, 10), 5.0: (8, 10), 8.0: (128, 130), 16.0: (128, 130), 32.0: (128, 130), 64.0: (242, 256)}
#: Bytes of framing, sequence number, 4-DW header and LCRC per TLP.
TLP_OVERHEAD_BYTES = 24
#: The MaxPayload size assumed when the link record does not hold one (bytes).
ASSUMED_MAX_PAYLOAD_BYTES = 256
#: Serial line rate (Gb/s) -> (encoding numerator, denominator): 8b/10b, 24G SAS 128b/150b.
SERIAL_ENCODING = {22.5: (128, 150)}
#: Disk kinds (as memstor.measure names them in a drive record's label or reason) -> why no link is known.
NO_LINK = (("virtio disk", "virtio disk: the host's link is not visible"),
           ("Xen virtual disk", "Xen virtual disk: the host's link is not visible"),
           ("network block device", "network block device: the network is the link"),
           ("Ceph RBD device", "Ceph RBD device: the network is the link"),
           ("loop device", "loop device: a file on another device, whose link is not recorded"),
           ("device-mapper device", "device-mapper device without one physical member"),
           ("md RAID device", "md RAID device without one physical member"),
           ("zram device", "zram device: compressed RAM, no storage link"),
           ("RAM disk", "RAM disk: no storage link"),
           ("NVMe over", "NVMe over fabrics: the fabric's speed is not recorded"))


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or unavailable(value) or missing(value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _g(x: float) -> str:
    """A rate as written: 8 -> '8', 2.5 -> '2.5'."""
    return f"{x:g}"


def _out(ceiling: float | None, how: str, reason: str | None) -> dict:
    return {"ceiling_MBps": ceiling, "how": how, "reason": None if ceiling is not None else reason}


def pcie_ceiling(gtps: Any, lanes: Any, max_payload_bytes: Any = None) -> dict:
    """The usable MB/s of a PCIe link (``{"ceiling_MBps", "raw_MBps", "how", "reason"}``): ``gtps`` GT/s per
    lane, ``lanes`` lanes, ``max_payload_bytes`` (None: :data:`ASSUMED_MAX_PAYLOAD_BYTES`). See the module
    docstring for the encoding and packet overhead."""
    rate, width, payload = _num(gtps), _num(lanes), _num(max_payload_bytes)
    if rate is None or width is None or width <= 0:
        return {**_out(None, "", "unknown (no PCIe link speed and width recorded)"), "raw_MBps": None}
    enc = PCIE_ENCODING.get(rate)
    if enc is None:
        return {**_out(None, "", f"unknown ({_g(rate)} GT/s is no PCIe rate)"), "raw_MBps": None}
    raw = rate * width * enc[0] / enc[1] / 8 * 1000
    size = payload or ASSUMED_MAX_PAYLOAD_BYTES
    said = f"max payload {size:g} B" if payload else f"max payload assumed {ASSUMED_MAX_PAYLOAD_BYTES} B"
    ceiling = raw * size / (size + TLP_OVERHEAD_BYTES)
    how = (f"{_g(rate)} GT/s × {width:g} lane{'s' if width != 1 else ''} × {enc[0]}/{enc[1]} / 8 = {raw:,.0f} MB/s; × {size:g}/"
           f"{size + TLP_OVERHEAD_BYTES:g} ({said}, {TLP_OVERHEAD_BYTES} B TLP overhead) = {ceiling:,.0f} MB/s")
    return {**_out(ceiling, how, None), "raw_MBps": raw}


def serial_ceiling(gbps: Any, protocol: Any = None) -> dict:
    """The MB/s of a SATA or SAS link of ``gbps`` Gb/s (8b/10b; 22.5 Gb/s 24G SAS: 128b/150b)."""
    rate = _num(gbps)
    if rate is None or rate <= 0:
        return _out(None, "", "unknown (no SATA/SAS link speed recorded)")
    enc = SERIAL_ENCODING.get(rate, (8, 10))
    name = "SAS" if str(protocol or "").upper() in ("SCSI", "SAS") else "SATA"
    ceiling = rate * 1000 * enc[0] / enc[1] / 8
    how = (f"{name} {_g(rate)} Gb/s × {enc[0]}/{enc[1]} / 8 = {ceiling:,.0f} MB/s (frame and command overhead "
           "not counted)")
    return _out(ceiling, how, None)


def _flat(section: Any) -> dict:
    """A drive record section's fields (or a flat record) with "not available" values as None."""
    if not isinstance(section, dict):
        return {}
    inner = section.get("fields")
    fields: dict = inner if isinstance(inner, dict) else section
    return {k: (None if unavailable(v) else v) for k, v in fields.items()}


def link_ceiling(link: dict | None) -> dict:
    """The storage interface ceiling of a link record: a drive's ``pcie_link`` section (or
    :func:`memstor.measure.drive.pcie_link`'s flat record: ``current_link_speed_GTps``,
    ``current_link_width``, optional ``max_payload_bytes``), or a SATA/SAS one
    (``interface_speed_current_Gbps``, ``protocol``). ``{"ceiling_MBps", "how", "reason"}``; the trained
    (current) link counts, not the maximum."""
    f = _flat(link)
    if f.get("current_link_speed_GTps") is not None or f.get("current_link_width") is not None:
        out = pcie_ceiling(f.get("current_link_speed_GTps"), f.get("current_link_width"), f.get("max_payload_bytes"))
        return {k: out[k] for k in ("ceiling_MBps", "how", "reason")}
    if f.get("interface_speed_current_Gbps") is not None:
        return serial_ceiling(f["interface_speed_current_Gbps"], f.get("protocol"))
    why = (link or {}).get("reason") if isinstance(link, dict) else None
    return _out(None, "", f"unknown ({why or 'no link speed recorded'})")


def _no_link(text: str) -> str | None:
    return next((why for kind, why in NO_LINK if kind.lower() in text.lower()), None)


def storage_ceiling(drive: dict | None) -> dict:
    """The ceiling of the drive under the test files (a ``drive`` section of sysinfo.json, see
    :mod:`memstor.measure.drive`): its PCIe link, else its SATA/SAS link speed, else why not."""
    if not isinstance(drive, dict):
        return _out(None, "", "unknown (no drive record)")
    if not drive.get("disk"):
        return _out(None, "", f"unknown ({drive.get('reason') or 'not one local disk'})")
    found = drive.get("pcie_link")
    pcie: dict = found if isinstance(found, dict) else {}
    label = str(drive.get("disk_label") or drive.get("disk"))
    virtual = _no_link(f"{label} {pcie.get('reason') or ''}")
    if virtual:
        return _out(None, "", f"unknown ({virtual})")
    ident = _flat(drive.get("identity"))
    link = {**_flat(pcie), "interface_speed_current_Gbps": ident.get("interface_speed_current_Gbps"),
            "protocol": ident.get("protocol")}
    out = link_ceiling(link)
    if out["ceiling_MBps"] is None and link.get("interface_speed_current_Gbps") is None:
        why = str(pcie.get("reason") or "no link speed in sysfs")
        if why.startswith("not an NVMe device"):
            smart: Any = ((drive.get("identity") or {}).get("tools") or {}).get("smartctl")
            said = f"smartctl: {smart.get('reason')}" if unavailable(smart) else "smartctl reported none"
            why = f"no SATA/SAS link speed recorded ({said})"
        out["reason"] = f"unknown ({label}: {why})"
    return out


def drive_from_rows(rows: pd.DataFrame) -> dict:
    """A drive section rebuilt from one host's :func:`memstor.analysis.drive.drive_table` rows (its
    ``pcie_link`` and ``identity`` fields, a missing value with the row's note as its reason)."""
    sections: dict[str, dict] = {"pcie_link": {"fields": {}}, "identity": {"fields": {}}}
    for _, r in rows.iterrows():
        if r.get("section") in sections:
            note = re.sub(r"^not available \((.*)\)$", r"\1", str(r.get("note") or ""))
            value = r.get("value") if bool(r.get("available")) else {"available": False, "reason": note}
            sections[r["section"]]["fields"][r["field"]] = value
    reasons = [v["reason"] for v in sections["pcie_link"]["fields"].values() if unavailable(v)]
    sections["pcie_link"]["reason"] = reasons[0] if reasons else None
    disks = [d for d in rows["disk"].dropna().unique()] if "disk" in rows.columns else []
    return {"disk": disks[0] if disks else None, "reason": None if disks else "the drive table names no disk",
            **sections}


def dram_ceiling(sysinfo: dict | None, *, memory_channels: int | None = None,
                 memory_mts: int | None = None) -> dict:
    """The DRAM peak of a host (``{"ceiling_MBps", "how", "reason"}``) from its sysinfo ``dram`` record
    (:mod:`memstor.measure.dram`); ``memory_channels`` / ``memory_mts`` replace what dmidecode says."""
    rec = (sysinfo or {}).get("dram")
    dimms = (rec.get("dimms") or []) if isinstance(rec, dict) else []
    peak = dram_peak(dimms, channels=memory_channels, mts=memory_mts)
    if peak["peak_MBps"] is None and not dimms:
        if sysinfo is None:
            peak["reason"] = "unknown (imported data: no sysinfo.json)"
        elif not isinstance(rec, dict):
            peak["reason"] = "unknown (sysinfo.json has no dram record: measured before memstor read dmidecode)"
        elif rec.get("reason"):
            peak["reason"] = f"unknown ({rec['reason']})"
    peak_value = float(peak["peak_MBps"]) if peak["peak_MBps"] is not None else None
    return _out(peak_value, peak["how"], peak["reason"])


def ceilings_table(sysinfo_by_host: dict, drives: pd.DataFrame | None, *, memory_channels: int | None = None,
                   memory_mts: int | None = None) -> pd.DataFrame:
    """Per host, the DRAM peak and the storage interface ceiling (:data:`CEILING_COLUMNS`): host; what
    (``DRAM peak`` | ``storage interface``); ceiling (MB/s, decimal; empty when unknown); unit (``MB/s``);
    how (the arithmetic in words, ``2 channels × 3,200 MT/s × 8 B ...``); reason (why unknown).

    sysinfo_by_host: {host: parsed sysinfo.json or None}. drives: the drive table
    (:func:`memstor.analysis.drive.drive_table`) or None; its rows describe the drive of a host whose
    sysinfo has no ``drive`` section. memory_channels / memory_mts: the profile's values, when set, replace
    dmidecode's channel count / MT/s (a 64-bit channel, 8 B, is then assumed for DDR)."""
    hosts = list(sysinfo_by_host)
    if drives is not None and "host" in drives.columns:
        hosts += [h for h in drives["host"].dropna().unique() if h not in sysinfo_by_host]
    rows = []
    for host in hosts:
        info = sysinfo_by_host.get(host)
        dram = dram_ceiling(info, memory_channels=memory_channels, memory_mts=memory_mts)
        drive = drive_of(info)
        if drive is None and drives is not None and "host" in drives.columns and (drives["host"] == host).any():
            drive = drive_from_rows(drives[drives["host"] == host])
        storage = storage_ceiling(drive)
        for what, c in ((DRAM, dram), (STORAGE, storage)):
            rows.append({"host": host, "what": what, "ceiling": c["ceiling_MBps"], "unit": "MB/s",
                         "how": c["how"], "reason": c["reason"] or ""})
    df = pd.DataFrame(rows, columns=list(CEILING_COLUMNS))
    df["ceiling"] = pd.to_numeric(df["ceiling"], errors="coerce")
    return df


def pct_of_ceiling(value: Any, ceiling: Any) -> float | None:
    """``value`` as a percentage of ``ceiling`` (both in the same unit); None when either is missing or the
    ceiling is not positive."""
    v, c = _num(value), _num(ceiling)
    return None if v is None or c is None or c <= 0 else 100.0 * v / c


def _over(points: pd.DataFrame, ceilings: pd.DataFrame) -> pd.Series:
    """Per point row: its bw_MBps is above its host's storage interface ceiling (False when unknown)."""
    if points.empty or not {"host", "bw_MBps"} <= set(points.columns) or ceilings.empty:
        return pd.Series(False, index=points.index)
    storage = ceilings[(ceilings["what"] == STORAGE) & ceilings["ceiling"].notna()]
    limit = points["host"].map(dict(zip(storage["host"], storage["ceiling"].astype(float))))
    bw = pd.to_numeric(points["bw_MBps"], errors="coerce")
    return (bw.notna() & limit.notna() & (bw > limit)).astype(bool)


def above_ceiling(points: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """The storage points (rows with ``host`` and ``bw_MBps``, per direction) faster than their device's
    storage interface ceiling (:func:`ceilings_table`): the points' columns plus ceiling_MBps,
    pct_of_ceiling and flag (:data:`ABOVE_TEXT`: the data came from the page cache, was compressed, or
    another device served it). Empty (with those columns) when none is, or a ceiling is unknown."""
    cols = list(points.columns) + [c for c in ABOVE_COLUMNS if c not in points.columns]
    over = _over(points, ceilings)
    if not over.any():
        return pd.DataFrame(columns=cols)
    storage = ceilings[(ceilings["what"] == STORAGE) & ceilings["ceiling"].notna()]
    out = points[over].copy()
    out["ceiling_MBps"] = out["host"].map(dict(zip(storage["host"], storage["ceiling"].astype(float))))
    out["pct_of_ceiling"] = [pct_of_ceiling(v, c) for v, c in zip(out["bw_MBps"], out["ceiling_MBps"])]
    out["flag"] = ABOVE_TEXT
    return out[cols].reset_index(drop=True)


def within_ceiling(points: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """The points that are NOT above their storage interface ceiling (:func:`above_ceiling`'s complement):
    what a spec comparison may use."""
    return points[~_over(points, ceilings)]


#: Columns of :func:`ceiling_use`.
USE_COLUMNS = ("host", "what", "ceiling", "how", "reason", "measured", "measured_as", "pct_of_ceiling")


def _top(df: pd.DataFrame | None, host, col: str, name) -> tuple[float, str] | None:
    """(the highest positive `col` of host's rows, what it is: name(row)) or None."""
    if df is None or df.empty or not {"host", col} <= set(df.columns):
        return None
    sel = df[df["host"].astype(str) == str(host)]
    v = pd.to_numeric(sel[col], errors="coerce")
    v = v[v > 0]
    if v.empty:
        return None
    return float(v.max()), name(sel.loc[v.idxmax()])


def _point_name(r: pd.Series) -> str:
    """'fio-block-size, randwrite 1 MiB QD32x1 (write)': a fio point as the ceilings table names it."""
    bs = r.get("bs_bytes")
    size = "" if missing(bs) else (f" {int(bs) // 1024} KiB" if int(bs) < 2**20 else f" {int(bs) // 2**20} MiB")
    qd = "" if missing(r.get("iodepth")) else f" QD{int(r['iodepth'])}x{int(r['numjobs'])}"
    return f"{r.get('experiment')}, {r.get('rw')}{size}{qd} ({r.get('direction')})"


def failed_points(validity: pd.DataFrame | None, host, status: str = "fail") -> dict[str, str]:
    """{fio point name: the checks that failed on it} for host: validity rows with status fail (or ``status``) whose
    subject names the point in parentheses ('128 KiB sequential write (write-bs128k-...-rep1)', as wsat_series does)."""
    if validity is None or validity.empty or not {"host", "check", "subject", "status"} <= set(validity.columns):
        return {}
    out: dict[str, str] = {}
    bad = validity[(validity["host"].astype(str) == str(host)) & (validity["status"] == status)]
    for check, subject in zip(bad["check"], bad["subject"].astype(str)):
        if subject.endswith(")") and "(" in subject:
            point = subject[subject.rindex("(") + 1:-1]
            out[point] = f"{out[point]}, {check}" if point in out else str(check)
    return out


def _storage_points(points: pd.DataFrame, host, validity: pd.DataFrame | None) -> tuple[pd.DataFrame, list]:
    """(host's fio points per direction without those a check failed on, [(MB/s, '2,627 MB/s (fio-write-saturation,
    write 128 KiB QD32x4 (write): wsat_series failed)')] for each left out)."""
    pts = points[(points["direction"] != "total") & (points["host"].astype(str) == str(host))]
    failed = failed_points(validity, host)
    hit = pts["point"].astype(str).map(failed) if "point" in pts.columns else pd.Series(None, index=pts.index)
    out = [(float(r["bw_MBps"]), f"{float(r['bw_MBps']):,.0f} MB/s ({_point_name(r)}: {hit[i]} failed)")
           for i, r in pts[hit.notna()].iterrows() if not missing(r["bw_MBps"])]
    return pts[hit.isna()], out


def _warned(top: tuple[float, str] | None, kept: pd.DataFrame, validity: pd.DataFrame | None,
            host) -> tuple[float, str] | None:
    """``top`` (MB/s, name) with ': wsat_series, series_matches_whole warned' where checks warned on its point
    (S22-cpu1 3: a 2.26-s write-saturation run's 1,902 MB/s was the best measured with its warnings unsaid)."""
    if top is None or "point" not in kept.columns:
        return top
    warned = failed_points(validity, host, "warn")
    at = kept[pd.to_numeric(kept["bw_MBps"], errors="coerce") == top[0]]["point"].astype(str)
    checks = next((warned[p] for p in at if p in warned), "")
    return (top[0], f"{top[1]}: {checks} warned") if checks else top


def _memory_curves(mem: pd.DataFrame | None) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """(memory_fit's curves whose B_max run passed the memory gate, those that failed it: b_max_gate_failed)."""
    if mem is None or mem.empty or "b_max_gate_failed" not in mem.columns:
        return mem, pd.DataFrame()
    bad = mem["b_max_gate_failed"].map(lambda v: not missing(v) and str(v).lower() in ("true", "1"))
    return mem[~bad], mem[bad]


def _mlp_runs(mlp: pd.DataFrame | None, host) -> tuple[tuple[float, str] | None, list[tuple[float, str]]]:
    """(the highest MLP run whose threads held their CPUs, [the highest left out by hierarchy_cpu_share, in words])
    of host (hierarchy.mlp_table: bandwidth_MBps by Little's law, cpu_share); eleventh read S14-loop 7: page 3's
    'best measured' 6,632 beside page 2's 'other runs measured more: 8,209 MB/s (... MLP run ...)'."""
    if mlp is None or mlp.empty or not {"host", "threads", "chains", "bandwidth_MBps"} <= set(mlp.columns):
        return None, []
    held = cpu_held(mlp["cpu_share"]) if "cpu_share" in mlp.columns else pd.Series(True, index=mlp.index)

    def name(r: pd.Series) -> str:
        return f"MLP run, {int(r['threads'])} threads x {int(r['chains'])} chains, by Little's law"

    gone = _top(mlp[~held], host, "bandwidth_MBps", name)
    left = [(gone[0], f"{gone[0]:,.0f} MB/s ({gone[1]}: left out by hierarchy_cpu_share)")] if gone else []
    return _top(mlp[held], host, "bandwidth_MBps", name), left


def _figure_runs(figures: pd.DataFrame | None, host) -> tuple[tuple[float, str] | None, list[tuple[float, str]]]:
    """(the highest peak-bandwidth figure of host that passed the memory gate, [the others above it, with why they are
    left out]) of memory_figures' table (MB/s; S19-loop 1: the read-only peak injection's 7,672 MB/s, which passed,
    was neither best measured nor named beside a 5,168 MB/s MLP figure)."""
    if figures is None or figures.empty or not {"host", "quantity", "value", "gate"} <= set(figures.columns):
        return None, []
    f = figures[(figures["host"] == host) & (figures["quantity"] == "peak bandwidth")]
    f = f[~f["measurement"].astype(str).str.startswith("loaded latency")]  # the curves' B_max: said from ``mem``
    f = f.assign(measurement=f["measurement"].astype(str).map(lambda m: re.sub(r" \((?:[^()]|\([^()]*\))*\)", "", m)))
    passed = f["gate"].astype(str).str.startswith("passed")
    best = _top(f[passed], host, "value", lambda r: str(r.get("measurement")))
    left = [(float(r["value"]), f"{float(r['value']):,.0f} MB/s ({r['measurement']}: memory gate {r['gate']})")
            for _, r in f[~passed].iterrows() if not missing(r["value"])]
    return best, left


def ceiling_use(ceilings: pd.DataFrame, headline: pd.DataFrame, points: pd.DataFrame | None = None,
                mem: pd.DataFrame | None = None, validity: pd.DataFrame | None = None,
                mlp: pd.DataFrame | None = None, figures: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each ceiling beside the highest number measured that it bounds (:data:`USE_COLUMNS`, MB/s): the DRAM peak
    beside the peak memory bandwidth headline and every loaded-latency curve's maximum (mem: memory_fit's
    b_max_MBps), the storage interface beside the sequential headlines and every fio point per direction (points:
    bw_MBps), with the measured value as a percentage of the ceiling (empty when either is unknown). A figure whose
    own check failed (validity: a fio point a failed check names, a curve whose B_max run failed the memory gate)
    is not 'best measured' (S6-bare M-4): measured_as says which higher one was left out and why. ``mlp``: the
    memory-level-parallelism runs (hierarchy.mlp_table), beside the DRAM peak too (:func:`_mlp_runs`); ``figures``:
    the memory figures (memory_figures.memory_figures), whose peak bandwidths count by their gate (:func:`_figure_runs`)."""
    keys = {DRAM: ("peak_bw_MBps",), STORAGE: ("seq_read_MBps", "seq_write_MBps")}
    rows = []
    for _, c in ceilings.iterrows():
        h = headline[(headline["host"] == c["host"]) & headline["key"].isin(keys.get(c["what"], ()))]
        if "gate" in h.columns:
            h = h[~h["gate"].astype(str).str.startswith("failed")]
        found = [_top(h, c["host"], "value", lambda r: str(r.get("detail") or r["key"]))]
        left: list[tuple[float, str]] = []
        derived = None  # the MLP runs' bandwidth: chains x 64 B / latency (Little's law), not a measured transfer rate
        if c["what"] == STORAGE and points is not None and "direction" in points.columns:
            kept, left = _storage_points(points, c["host"], validity)
            found.append(_warned(_top(kept, c["host"], "bw_MBps", _point_name), kept, validity, c["host"]))
        if c["what"] == DRAM:
            passed, failed = _memory_curves(mem)
            found.append(_top(passed, c["host"], "b_max_MBps", lambda r: f"loaded-latency curve {r.get('curve')}"))
            gone = _top(failed, c["host"], "b_max_MBps", lambda r: f"loaded-latency curve {r.get('curve')}")
            left = [(gone[0], f"{gone[0]:,.0f} MB/s ({gone[1]}: its run failed the memory gate)")] if gone else []
            derived, left_mlp = _mlp_runs(mlp, c["host"])
            measured, left_figures = _figure_runs(figures, c["host"])
            found.append(measured)
            left += left_mlp + left_figures
        best = max((f for f in found if f), key=lambda f: f[0], default=None)
        if derived and best is None:  # no bandwidth measured directly: the derived figure, named as such (S20-cpu1 6)
            best = (derived[0], f"derived, not measured: {derived[1]}")
        higher = [text for v, text in sorted(left, reverse=True) if best is None or v > best[0]]
        said = None if best is None else best[1] + ("; higher, left out: " + "; ".join(higher) if higher else "")
        if best is not None and derived and derived is not best and derived[0] > best[0]:  # S18-1cpu 4
            said = f"{said}; higher, derived, not measured: {derived[0]:,.0f} MB/s ({derived[1]})"
        rows.append({"host": c["host"], "what": c["what"], "ceiling": c["ceiling"], "how": c["how"],
                     "reason": c["reason"], "measured": None if best is None else best[0],
                     "measured_as": said if best is not None else ("; ".join(higher) or None),
                     "pct_of_ceiling": None if best is None else pct_of_ceiling(best[0], c["ceiling"])})
    return pd.DataFrame(rows, columns=list(USE_COLUMNS))
