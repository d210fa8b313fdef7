"""The drive under test, from the ``drive`` section of each device's ``sysinfo.json`` (pure: reads only
what :func:`memstor.analysis.dataset.load_dataset` loaded; written by :mod:`memstor.measure.drive`).

``drive`` holds the sections ``identity`` (model, firmware, capacity, block sizes, write cache, NVMe LBA
format), ``pcie_link`` (current and maximum link speed and width) and, for a storage run,
``health_before`` / ``health_after`` (snapshots right before the first and after the latest storage
sweep on that drive) and ``health_delta`` (after - before); ``memstor sysinfo`` prints ``health`` (now)
instead. Each section's ``fields`` maps a field to its value or to ``{"available": false, "reason": ...,
"status": "not available (reason)"}``. Units are in the field names; :func:`unit_of` spells them out.
Fields ending in ``_private`` (serial numbers) are never shown.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from memstor.core.fmt import plain
from memstor.parse.drive import (
    HEALTH_FIELDS,
    IDENTITY_EXTRA_FIELDS,
    IDENTITY_FIELDS,
    PCIE_FIELDS,
    unavailable,
)

#: Columns of :func:`drive_table`, in order.
DRIVE_COLUMNS = ("host", "disk", "section", "field", "unit", "available", "value", "value_before", "value_after",
                 "delta", "note")
#: Columns of :func:`interface_check`, in order.
INTERFACE_COLUMNS = ("host", "device", "disk", "measured_interface", "spec_interface", "flag")
#: The order rows are listed in (sysinfo.json stores the fields sorted by name); others follow, sorted.
FIELD_ORDER = {f: i for i, f in enumerate((*IDENTITY_FIELDS, *IDENTITY_EXTRA_FIELDS, *PCIE_FIELDS, *HEALTH_FIELDS))}

_UNIT_SUFFIXES = (("_bytes", "bytes"), ("_GTps", "GT/s per lane"), ("_Gbps", "Gb/s"), ("_pct", "%"), ("_C", "°C"),
                  ("_hours", "h"), ("_rpm", "rpm"))
_UNIT_NAMES = {"data_units_written": "NVMe data units (512000 bytes)", "current_link_width": "lanes",
               "max_link_width": "lanes"}
_PCIE_GEN_RE = re.compile(r"(?:PCIe|PCI[- ]Express)\s*(?:Gen\s*)?(\d)(?:\.\d)?(?!\d)|\bGen\s*(\d)(?:\.\d)?(?!\d)",
                          re.IGNORECASE)
_PCIE_WIDTH_RE = re.compile(r"\s*[,/]?\s*x\s*(\d+)\b", re.IGNORECASE)


def unit_of(field: str) -> str:
    """The unit of a drive field, from its name (``capacity_bytes`` -> ``bytes``, ``temperature_C`` ->
    ``°C``, ``max_link_width`` -> ``lanes``); empty for text, flags, indexes and counts."""
    if field in _UNIT_NAMES:
        return _UNIT_NAMES[field]
    return next((unit for suffix, unit in _UNIT_SUFFIXES if field.endswith(suffix)), "")


def _reason(value: Any, default: str = "not recorded") -> str:
    return str(value.get("reason") or default) if unavailable(value) else default


def _fields(section: Any) -> dict:
    """A section's fields in :data:`FIELD_ORDER`."""
    fields = (section.get("fields") or {}) if isinstance(section, dict) else {}
    return dict(sorted(fields.items(), key=lambda kv: (FIELD_ORDER.get(kv[0], len(FIELD_ORDER)), kv[0])))


def drive_of(sysinfo: dict | None) -> dict | None:
    """The ``drive`` section of a parsed sysinfo.json, or None."""
    drive = (sysinfo or {}).get("drive")
    return drive if isinstance(drive, dict) else None


def _has_storage(ds, host) -> bool:
    """A host folder with fio rows or a recorded drive (memory-only folders have nothing to say here)."""
    if drive_of(host.sysinfo) is not None:
        return True
    fio = ds.fio
    return "host" in fio.columns and bool((fio["host"] == host.name).any())


def _missing_drive_reason(host) -> str:
    if host.sysinfo is None:
        return "imported data: no sysinfo.json, so no drive record"
    return "sysinfo.json has no drive record (measured before memstor recorded the drive)"


def _note_for(field: str, notes: list | None) -> str:
    """The section's own note about ``field`` (``volatile_write_cache: from sysfs ...``), or ''."""
    return next((str(n).split(": ", 1)[1] for n in notes or [] if str(n).startswith(f"{field}: ")), "")


def _plain_rows(host: str, disk, name: str, section: dict) -> list[dict]:
    rows = []
    for field, value in _fields(section).items():
        if field.endswith("_private"):
            continue
        ok = not unavailable(value)
        rows.append({"host": host, "disk": disk, "section": name, "field": field, "unit": unit_of(field),
                     "available": ok, "value": value if ok else None, "value_before": None, "value_after": None,
                     "delta": None,
                     "note": _note_for(field, section.get("notes")) if ok else f"not available ({_reason(value)})"})
    return rows


def _health_note(before: Any, after: Any, delta: Any, has_delta: bool) -> str:
    """'33 → 45, delta +12', or the reason a side is missing."""
    if unavailable(after) or after is None:
        return f"not available ({_reason(after, 'no snapshot after the runs')})"
    if unavailable(before) or before is None:
        return f"after the runs; before: not available ({_reason(before, 'no snapshot before the runs')})"
    text = f"{plain(before)} → {plain(after)}"
    if not has_delta:
        return text
    if unavailable(delta) or delta is None:
        return f"{text}, delta not available ({_reason(delta, 'not computed')})"
    return f"{text}, delta {delta:+}" if isinstance(delta, (int, float)) and not isinstance(delta, bool) else text


def _health_rows(host: str, disk, drive: dict) -> list[dict]:
    """Health rows: before, after and delta of a storage run's snapshots; a live ``health`` section
    (``memstor sysinfo`` output) gives after-only rows."""
    if not any(k in drive for k in ("health_before", "health_after")):
        live = drive.get("health")
        return [dict(r, section="health", value_after=r["value"]) for r in _plain_rows(host, disk, "health", live)] \
            if isinstance(live, dict) else []
    b, a, d = (_fields(drive.get(k)) for k in ("health_before", "health_after", "health_delta"))
    missing = {"available": False, "reason": "no snapshot"}
    sec_reason = {k: drive.get(k) if unavailable(drive.get(k)) else missing for k in ("health_before", "health_after")}
    rows = []
    for field in dict.fromkeys([*b, *a]):
        if field.endswith("_private"):
            continue
        before, after = b.get(field, sec_reason["health_before"]), a.get(field, sec_reason["health_after"])
        delta = d.get(field)
        ok = not unavailable(after)
        rows.append({"host": host, "disk": disk, "section": "health", "field": field, "unit": unit_of(field),
                     "available": ok, "value": after if ok else None,
                     "value_before": None if unavailable(before) else before, "value_after": after if ok else None,
                     "delta": None if delta is None or unavailable(delta) else delta,
                     "note": _health_note(before, after, delta, field in d)})
    return rows


def drive_rows(host: str, drive: dict) -> list[dict]:
    """The :func:`drive_table` rows of one drive section (pure)."""
    disk = drive.get("disk")
    rows = []
    for name in ("identity", "pcie_link"):
        section = drive.get(name)
        if isinstance(section, dict):
            rows += _plain_rows(host, disk, name, section)
    return rows + _health_rows(host, disk, drive)


def drive_table(ds) -> pd.DataFrame:
    """The drive's identity and health, long form: one row per host x field.

    Columns (:data:`DRIVE_COLUMNS`): host; disk (kernel name, e.g. ``nvme0n1``; empty when the target
    was not on one local disk); section (``identity`` | ``pcie_link`` | ``health``); field (its unit in
    the name: ``capacity_bytes``, ``temperature_C``, ``current_link_speed_GTps``); unit (spelled out:
    ``bytes``, ``°C``, ``GT/s per lane``, ``lanes``, ``%``, ``h``, ``NVMe data units (512000 bytes)``;
    empty for text, flags and counts); available (bool); value (identity and PCIe: the value; health:
    the latest snapshot, = value_after); value_before / value_after (health: the snapshots right before
    the first and after the latest storage run on that drive; empty for identity and PCIe rows); delta
    (health: after - before for data_written_bytes, data_units_written, percentage_used_pct,
    media_errors, power_on_hours and temperature_C (degrees); empty otherwise); note (why a field is
    not available, as ``not available (reason)``; for health ``before → after, delta +d``; else the
    source's note such as ``from sysfs queue/write_cache (the kernel's view)``).

    A host with fio data but no drive record gets one row (section ``drive``, field ``drive``) saying
    why; memory-only hosts are left out. Serial numbers (``*_private``) are never listed."""
    rows: list[dict] = []
    for h in ds.hosts:
        if not _has_storage(ds, h):
            continue
        drive = drive_of(h.sysinfo)
        if drive is None:
            rows.append({"host": h.name, "disk": None, "section": "drive", "field": "drive", "unit": "",
                         "available": False, "value": None, "value_before": None, "value_after": None,
                         "delta": None, "note": f"not available ({_missing_drive_reason(h)})"})
            continue
        rows += drive_rows(h.name, drive)
    df = pd.DataFrame(rows, columns=list(DRIVE_COLUMNS), dtype=object)  # values keep their type (int, bool, text)
    df["available"] = df["available"].astype(bool)
    return df


# ------------------------------------------------------------------------------------- interface


def pcie_text(generation: Any, width: Any, speed_GTps: Any = None) -> str | None:
    """``PCIe 4.0 x4`` from a PCIe generation and a width in lanes (the per-lane rate in GT/s when the
    generation is unknown); None when neither the generation nor the rate is known."""
    if isinstance(generation, (int, float)) and not isinstance(generation, bool):
        text = f"PCIe {int(generation)}.0"
    elif isinstance(speed_GTps, (int, float)) and not isinstance(speed_GTps, bool):
        text = f"{plain(speed_GTps)} GT/s"  # a rate no PCIe generation has
    else:
        return None
    return f"{text} x{int(width)}" if isinstance(width, (int, float)) and not isinstance(width, bool) else text


def measured_link(drive: dict | None) -> tuple[str | None, str | None, str]:
    """(current, maximum, reason) of a drive's PCIe link as ``PCIe 3.0 x4`` texts; reason says why the
    current one is None."""
    if drive is None:
        return None, None, "no drive record"
    section = drive.get("pcie_link")
    if not isinstance(section, dict):
        return None, None, "no PCIe link record"
    f = {k: (None if unavailable(v) else v) for k, v in _fields(section).items()}
    cur = pcie_text(f.get("pcie_generation_current"), f.get("current_link_width"), f.get("current_link_speed_GTps"))
    mx = pcie_text(f.get("pcie_generation_max"), f.get("max_link_width"), f.get("max_link_speed_GTps"))
    reason = "" if cur else str(section.get("reason") or _reason(_fields(section).get("current_link_speed_GTps"),
                                                                  "no current link speed in sysfs"))
    return cur, mx, reason


def parse_spec_interface(text: Any) -> tuple[int, int | None] | None:
    """(PCIe generation, lanes) of an interface text (``PCIe 4.0 x4``, ``PCIe Gen4 x4``, ``NVMe PCIe Gen
    3.0 x2``; lanes None when not stated right after it); None when the text names no PCIe generation."""
    s = str(text or "")
    m = _PCIE_GEN_RE.search(s)
    if not m:
        return None
    w = _PCIE_WIDTH_RE.match(s, m.end())
    return int(m.group(1) or m.group(2)), int(w.group(1)) if w else None


def interface_flag(current: str | None, maximum: str | None, reason: str, spec: Any) -> str:
    """``matched``, ``differs: PCIe 3.0 x4 measured, sheet says PCIe 4.0 x4`` (plus what the drive's own
    maximum says), or ``not available (reason)``. Compares the current link with the sheet's
    generation and, when the sheet states it, its width."""
    if not spec:
        return "not available (the sheet states no interface)"
    want = parse_spec_interface(spec)
    if want is None:
        return f"not available (sheet interface {spec!r} is not a PCIe link)"
    if current is None:
        return f"not available ({reason or 'no PCIe link measured'})"
    have = parse_spec_interface(current)
    if have is None:
        return f"not available (measured link {current!r} has no PCIe generation)"
    gen_ok = have[0] == want[0]
    width_ok = want[1] is None or have[1] == want[1]
    if gen_ok and width_ok:
        return "matched"
    flag = f"differs: {current} measured, sheet says {spec}"
    top = parse_spec_interface(maximum) if maximum else None
    if top is not None and top[0] == want[0] and (want[1] is None or top[1] == want[1]):
        flag += f" (the drive can {maximum}: the slot or the link trained lower)"
    return flag


def interface_check(ds, sheets: list) -> pd.DataFrame:
    """The measured PCIe link against each spec sheet's ``device_facts["interface"]``, per host x sheet.

    Columns (:data:`INTERFACE_COLUMNS`): host; device (the sheet's device name); disk; measured_interface
    (``PCIe 4.0 x4``, or ``PCIe 3.0 x4 (max PCIe 4.0 x4)`` when the link trained below its maximum;
    empty when not available); spec_interface (the sheet's text, empty when it states none); flag
    (see :func:`interface_flag`). Hosts without fio data or drive record are left out."""
    rows = []
    for h in ds.hosts:
        if not _has_storage(ds, h):
            continue
        drive = drive_of(h.sysinfo)
        cur, mx, reason = measured_link(drive)
        if drive is None:
            reason = _missing_drive_reason(h)
        measured = None if cur is None else (cur if not mx or mx == cur else f"{cur} (max {mx})")
        for sheet in sheets:
            spec = (getattr(sheet, "device_facts", None) or {}).get("interface")
            rows.append({"host": h.name, "device": getattr(sheet, "device", None),
                         "disk": (drive or {}).get("disk"), "measured_interface": measured,
                         "spec_interface": spec, "flag": interface_flag(cur, mx, reason, spec)})
    return pd.DataFrame(rows, columns=list(INTERFACE_COLUMNS))


# ------------------------------------------------------------------------------------------ text


def _bytes_text(n: Any) -> str:
    return f"{n / 1e9:.1f} GB" if isinstance(n, (int, float)) and not isinstance(n, bool) else "?"


def drive_line(drive: dict | None) -> str:
    """One line about a drive section for the report, e.g. ``NVMe drive nvme0n1: Samsung SSD 980 PRO 1TB,
    firmware 5B2QGXA7, 1000.2 GB, 12 of 14 identity fields read; PCIe 4.0 x4; health: 2.0 GB written
    during the runs, 33 → 35 °C, 0 % used, 0 media errors`` or ``virtio disk vda: model not available
    (...), 274.9 GB, 6 of 12 identity fields read; PCIe link not available (...); health not available
    (...)`` (GB = 10^9 bytes)."""
    if not drive:
        return "drive: not available (no drive record)"
    name = drive.get("disk") or drive.get("block_device") or drive.get("path") or "?"
    if not drive.get("disk"):
        return f"{name}: not available ({drive.get('reason') or 'no single local disk'})"
    ident = _fields(drive.get("identity"))
    got = {k: v for k, v in ident.items() if not unavailable(v) and not k.endswith("_private")}
    parts = []
    model = ident.get("model")
    parts.append(f"model not available ({_reason(model)})" if unavailable(model) or model is None else str(model))
    if got.get("firmware"):
        parts.append(f"firmware {got['firmware']}")
    if got.get("capacity_bytes"):
        parts.append(_bytes_text(got["capacity_bytes"]))
    listed = [k for k in ident if not k.endswith("_private")]
    parts.append(f"{len(got)} of {len(listed)} identity fields read")
    cur, mx, reason = measured_link(drive)
    parts.append(f"{cur}" + (f" (max {mx})" if mx and mx != cur else "") if cur else
                 f"PCIe link not available ({reason})")
    label = drive.get("disk_label")
    head = label if label and str(label).endswith(str(name)) else name
    return f"{head}: {', '.join(parts[:-1])}; {parts[-1]}; {_health_text(drive)}"


def _health_text(drive: dict) -> str:
    after = drive.get("health_after", drive.get("health"))
    if not isinstance(after, dict) or unavailable(after):
        return f"health not available ({_reason(after, 'no snapshot')})"
    delta = drive.get("health_delta") if isinstance(drive.get("health_delta"), dict) else {}
    a, d, b = _fields(after), _fields(delta), _fields(drive.get("health_before"))
    bits = []
    written = d.get("data_written_bytes")
    if written is not None and not unavailable(written):
        bits.append(f"{_bytes_text(written)} written during the runs")
    temp_a, temp_b = a.get("temperature_C"), b.get("temperature_C")
    if temp_a is not None and not unavailable(temp_a):
        bits.append(f"{plain(temp_b)} → {plain(temp_a)} °C" if temp_b is not None and not unavailable(temp_b)
                    else f"{plain(temp_a)} °C")
    for field, unit in (("percentage_used_pct", "% used"), ("media_errors", "media errors")):
        v = a.get(field)
        if v is not None and not unavailable(v):
            bits.append(f"{plain(v)} {unit}")
    if unavailable(delta):
        bits.append(f"difference not available ({_reason(delta)})")
    return "health: " + (", ".join(bits) or "no field read")


def drive_lines(ds) -> dict:
    """{host: :func:`drive_line`} for every host with fio data or a drive record."""
    out = {}
    for h in ds.hosts:
        if _has_storage(ds, h):
            drive = drive_of(h.sysinfo)
            out[h.name] = drive_line(drive) if drive is not None else \
                f"drive: not available ({_missing_drive_reason(h)})"
    return out
