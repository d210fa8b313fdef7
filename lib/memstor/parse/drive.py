"""The drive's identity and health, from the text its tools print: ``smartctl -j``, ``nvme smart-log``,
``nvme id-ctrl`` and ``nvme id-ns`` (``-o json`` or the normal text), and sysfs link speeds. Pure
functions: text in, one flat dict out, units in the key names; a value the output does not hold is None.

Units and conventions (NVMe base specification, smartmontools, nvme-cli):

- ``temperature_C``: degrees Celsius. smartctl prints Celsius; nvme-cli prints the composite
  temperature in kelvin (the log's own unit), converted here as K - 273 as nvme-cli and smartctl do
  (310 K -> 37 C). A bare number >= 200 in an nvme-cli log is kelvin, below it Celsius (some wrappers
  convert); a unit in the text (``37 C``, ``310 K``) decides.
- ``percentage_used_pct``: the NVMe "Percentage Used" endurance estimate (0..255, may pass 100). For ATA,
  smartctl's ``endurance_used`` when present, else 100 minus the normalized value of a wear attribute
  (Wear_Leveling_Count, Media_Wearout_Indicator, SSD_Life_Left, Percent_Lifetime_Remain...).
- ``data_units_written``: NVMe data units, each 1000 x 512 bytes, so ``data_written_bytes`` = units x
  512000. ATA: Total_LBAs_Written x logical block size, or the Host_Writes_32MiB / *_GiB attributes.
- ``media_errors``: NVMe "Media and Data Integrity Errors"; ATA attribute 187 (Reported_Uncorrect or
  Uncorrectable_Error_Cnt); SCSI read + write uncorrected errors.
- ``lba_size_bytes`` = 2 ** lbaf[i].ds of the format in use, i = flbas bits 3:0 plus bits 6:5 as the
  two most significant bits (NVMe 2.0); ``metadata_size_bytes`` = its ms.
- ``volatile_write_cache``: id-ctrl VWC bit 0 (a volatile write cache is present).

The serial number is returned as ``serial_number_private``: it identifies a person's drive, so reports
leave out every key ending in ``_private`` (:func:`public`). nvme-cli's JSON changed across versions:
``" : "`` (1.x) or ``":"`` (2.x) spacing, numbers printed as integers, floats (``136157684.0``) or
strings (``"136157684"``), ``percent_used`` / ``percentage_used``, ``temperature`` / ``Temperature``,
``critical_warning`` as a number or (``-H``) an object; all of them are read. Bad or empty input:
:class:`memstor.core.errors.ParseError` with a one-line reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memstor.core.errors import ParseError
from memstor.parse.guards import DAMAGE, one_line

#: Bytes in one NVMe data unit (1000 units of 512 bytes).
NVME_DATA_UNIT_BYTES = 512_000
#: Kelvin at 0 C as nvme-cli and smartctl subtract it (integer degrees).
KELVIN_OFFSET = 273
#: PCIe transfer rate per lane (GT/s) -> PCIe generation.
PCIE_GENERATION = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}

# Fields of a drive record (memstor.measure.drive writes them, memstor.analysis.drive shows them).
#: Health fields of a snapshot (the keys a health record reads from nvme smart-log or smartctl).
HEALTH_FIELDS = ("temperature_C", "percentage_used_pct", "data_units_written", "data_written_bytes", "media_errors",
                  "available_spare_pct", "critical_warning", "power_on_hours", "smart_passed")
#: Identity fields every drive record lists (a value or why not).
IDENTITY_FIELDS = ("model", "firmware", "capacity_bytes", "logical_block_size_bytes", "physical_block_size_bytes",
                   "rotational", "write_cache", "volatile_write_cache", "protocol", "lba_format_index",
                   "lba_size_bytes", "metadata_size_bytes")
#: Identity fields listed only when a tool reported them (NVMe controller, SATA link, HDD speed).
IDENTITY_EXTRA_FIELDS = ("nvme_version", "nvm_capacity_bytes", "rotation_rpm", "interface_speed_current_Gbps",
                         "interface_speed_max_Gbps", "serial_number_private")
#: Identity fields only NVMe has (their reason on other disks says so).
NVME_ONLY_FIELDS = ("lba_format_index", "lba_size_bytes", "metadata_size_bytes", "nvme_version", "nvm_capacity_bytes")
#: PCIe link fields (sysfs of the NVMe drive's PCI function).
PCIE_FIELDS = ("current_link_speed_GTps", "current_link_width", "max_link_speed_GTps", "max_link_width",
               "pcie_generation_current", "pcie_generation_max", "link_below_max", "pci_address", "controller")
#: Fields of the difference after - before (the temperature's is a change in degrees C).
DELTA_FIELDS = ("data_written_bytes", "data_units_written", "percentage_used_pct", "media_errors", "power_on_hours",
                "temperature_C")

_NUMBER_RE = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def unavailable(value: Any) -> bool:
    """True for a drive record's "not available" value: a dict with ``available`` False (it carries the
    ``reason``; memstor.measure.drive.not_available makes them)."""
    return isinstance(value, dict) and value.get("available") is False


def public(record: dict) -> dict:
    """``record`` without the keys ending in ``_private`` (serial numbers), nested dicts included."""
    return {k: (public(v) if isinstance(v, dict) else v) for k, v in record.items() if not k.endswith("_private")}


def _fail(tool: str, reason: object) -> ParseError:
    return ParseError(one_line(f"{tool}: {reason}", 300))


def _load_json(text: str, tool: str) -> dict:
    """The JSON object of a tool's output (a leading banner or trailing noise line is skipped)."""
    if text is None or not str(text).strip():
        raise _fail(tool, "empty output")
    text = str(text).lstrip("\ufeff")
    start = text.find("{")
    if start < 0:
        raise _fail(tool, "not JSON output (no '{' found)")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError as err:
        raise _fail(tool, f"not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise _fail(tool, f"JSON is a {type(data).__name__}, not an object")
    return data


def to_number(value: Any) -> float | int | None:
    """A count or measure printed by a tool: ``42``, ``42.0``, ``"42"``, ``"1,234"``, ``"0x1f"``,
    ``"37 C"``, ``"2%"`` -> a number (int when integral), else None (booleans, text without a number)."""
    if isinstance(value, dict):  # nvme-cli -H prints some fields as {"value": N, ...}
        value = _first(value, "value", "raw_value")
    if value is None or isinstance(value, bool) or isinstance(value, (dict, list)):
        return None
    if isinstance(value, (int, float)):
        num: float | int = value
    else:
        m = _NUMBER_RE.search(str(value))
        if not m:
            return None
        tok = m.group(0).replace(",", "")
        try:
            num = int(tok, 16) if tok.lower().lstrip("+-").startswith("0x") else float(tok)
        except ValueError:
            return None
    if isinstance(num, float):
        if num != num or num in (float("inf"), float("-inf")):
            return None
        if num.is_integer():
            return int(num)
    return num


def to_int(value: Any) -> int | None:
    """:func:`to_number` as an int (truncated), or None."""
    num = to_number(value)
    return int(num) if num is not None else None


def clean_text(value: Any) -> str | None:
    """A printed string with runs of white space folded (sysfs and nvme-cli pad with blanks), or None."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _first(data: dict, *keys: str) -> Any:
    """The value of the first key present (case-sensitive first, then case-insensitive)."""
    for k in keys:
        if k in data:
            return data[k]
    lower = {str(k).lower(): v for k, v in data.items()}
    for k in keys:
        if k.lower() in lower:
            return lower[k.lower()]
    return None


def temperature_celsius(value: Any, kelvin_default: bool) -> int | float | None:
    """Degrees Celsius of a printed temperature: a unit in the text decides (``C``/``°C``, ``K``);
    a bare number is kelvin when ``kelvin_default`` and it is >= 200 (no drive runs at 200 K)."""
    if isinstance(value, dict):  # {"value": 310, ...} / {"current": 37}
        value = _first(value, "value", "current", "kelvin", "celsius")
    num = to_number(value)
    if num is None:
        return None
    unit = re.search(r"\d\s*°?\s*([CKck])\b", str(value)) if isinstance(value, str) else None
    if unit:
        return num - KELVIN_OFFSET if unit.group(1).upper() == "K" else num
    if kelvin_default and num >= 200:
        return num - KELVIN_OFFSET
    return num


def data_written_bytes(units: int | None) -> int | None:
    """Bytes of an NVMe ``data_units_written`` count (units of 1000 x 512 bytes)."""
    return None if units is None else units * NVME_DATA_UNIT_BYTES


# --------------------------------------------------------------------------------------- smartctl

_WEAR_REMAINING = ("Percent_Lifetime_Remain", "Media_Wearout_Indicator", "Wear_Leveling_Count", "SSD_Life_Left",
                   "Remaining_Lifetime_Perc", "Percent_Life_Remaining", "Lifetime_Left")
_WRITTEN_UNIT_BYTES = {"Host_Writes_32MiB": 32 * 2**20, "Host_Writes_GiB": 2**30, "Lifetime_Writes_GiB": 2**30,
                       "Total_Writes_GiB": 2**30, "Host_Writes_MiB": 2**20, "Total_Host_Writes_GiB": 2**30}


def _ata_attributes(data: dict) -> dict[str, dict]:
    table = (data.get("ata_smart_attributes") or {}).get("table") or []
    return {str(a.get("name")): a for a in table if isinstance(a, dict) and a.get("name")}


def _ata_raw(attr: dict | None) -> int | None:
    if not attr:
        return None
    raw = attr.get("raw") or {}
    return to_int(raw.get("value"))


def _ata_health(data: dict, lbs: int | None, notes: list[str]) -> dict:
    attrs = _ata_attributes(data)
    by_id = {a.get("id"): a for a in attrs.values()}
    out: dict[str, Any] = {}
    temp = temperature_celsius((data.get("temperature") or {}).get("current"), kelvin_default=False)
    if temp is None:
        for name in ("Temperature_Celsius", "Airflow_Temperature_Cel", "Temperature_Internal"):
            if name in attrs:  # raw string "36 (Min/Max 17/45)": its first number
                temp = to_number((attrs[name].get("raw") or {}).get("string"))
                break
    out["temperature_C"] = temp
    used = to_int((data.get("endurance_used") or {}).get("current_percent"))
    if used is None:
        for name in _WEAR_REMAINING:
            remaining = to_int(attrs[name].get("value")) if name in attrs else None
            if remaining is not None:
                used = max(0, 100 - remaining)
                notes.append(f"percentage_used_pct: 100 - normalized {name}")
                break
    out["percentage_used_pct"] = used
    written = None
    total_lbas = _ata_raw(attrs["Total_LBAs_Written"]) if "Total_LBAs_Written" in attrs else None
    if total_lbas is not None and lbs:
        written = total_lbas * lbs
    else:
        for name, unit in _WRITTEN_UNIT_BYTES.items():
            raw = _ata_raw(attrs[name]) if name in attrs else None
            if raw is not None:
                written = raw * unit
                break
    out["data_units_written"] = None
    out["data_written_bytes"] = written
    a187 = by_id.get(187)
    out["media_errors"] = _ata_raw(a187) if a187 and "uncorrect" in str(a187.get("name", "")).lower() else None
    return out


def _scsi_health(data: dict) -> dict:
    log = data.get("scsi_error_counter_log") or {}
    errors = [to_int((log.get(d) or {}).get("total_uncorrected_errors")) for d in ("read", "write")]
    gb = to_number((log.get("write") or {}).get("gigabytes_processed"))
    return {"temperature_C": temperature_celsius((data.get("temperature") or {}).get("current"), False),
            "percentage_used_pct": to_int(data.get("scsi_percentage_used_endurance_indicator")),
            "data_units_written": None,
            "data_written_bytes": int(gb * 1e9) if gb is not None else None,
            "media_errors": sum(errors) if all(e is not None for e in errors) else None}


def _nvme_health(log: dict) -> dict:
    units = to_int(_first(log, "data_units_written"))
    return {"temperature_C": temperature_celsius(_first(log, "temperature"), kelvin_default=False),
            "percentage_used_pct": to_int(_first(log, "percentage_used", "percent_used")),
            "data_units_written": units, "data_written_bytes": data_written_bytes(units),
            "media_errors": to_int(_first(log, "media_errors")),
            "available_spare_pct": to_int(_first(log, "available_spare", "avail_spare")),
            "critical_warning": to_int(_first(log, "critical_warning"))}


def _smartctl_error(data: dict) -> str | None:
    """The reason smartctl could not read the device (exit status bits 0-1), else None."""
    info = data.get("smartctl") or {}
    status = to_int(info.get("exit_status")) or 0
    msgs = [m.get("string") for m in info.get("messages") or [] if isinstance(m, dict) and m.get("string")]
    if status & 0b11 or (msgs and not any(k in data for k in ("model_name", "scsi_model_name", "device"))):
        return msgs[0] if msgs else f"exit status {status} (command line or device open failed)"
    return None


def parse_smartctl_json(text: str) -> dict:
    """Identity and health from ``smartctl -j -a`` (or ``-j -x``, ``-j -i -A``) of an NVMe, ATA or SCSI
    device. Keys: protocol, model, firmware, serial_number_private, capacity_bytes,
    logical_block_size_bytes, physical_block_size_bytes, lba_size_bytes (NVMe namespace 1), rotation_rpm,
    interface_speed_current_Gbps / _max_Gbps (SATA), smart_available, smart_passed, temperature_C,
    percentage_used_pct, data_units_written, data_written_bytes, media_errors, power_on_hours,
    smartctl_version, notes. ParseError when the output holds no device (smartctl's own message)."""
    data = _load_json(text, "smartctl -j")
    err = _smartctl_error(data)
    if err:
        raise _fail("smartctl", err)
    try:
        return _smartctl_record(data)
    except DAMAGE as exc:
        raise _fail("smartctl -j", f"unexpected layout ({type(exc).__name__}: {exc})") from None


def _smartctl_record(data: dict) -> dict:
    notes: list[str] = []
    device = data.get("device") or {}
    protocol = clean_text(device.get("protocol"))
    model = clean_text(data.get("model_name")) or clean_text(
        " ".join(x for x in (data.get("scsi_vendor"), data.get("scsi_product") or data.get("scsi_model_name")) if x))
    if model is None and not data.get("nvme_smart_health_information_log") and not data.get("ata_smart_attributes"):
        raise _fail("smartctl -j", "no model name and no health data in the output")
    lbs = to_int(data.get("logical_block_size"))
    capacity = to_int((data.get("user_capacity") or {}).get("bytes")) or to_int(data.get("nvme_total_capacity"))
    namespaces = data.get("nvme_namespaces") or []
    version = (data.get("smartctl") or {}).get("version")
    rec: dict[str, Any] = {
        "source": "smartctl", "protocol": protocol, "model": model,
        "firmware": clean_text(data.get("firmware_version") or data.get("scsi_revision")),
        "serial_number_private": clean_text(data.get("serial_number")),
        "capacity_bytes": capacity, "logical_block_size_bytes": lbs,
        "physical_block_size_bytes": to_int(data.get("physical_block_size")),
        "lba_size_bytes": to_int(namespaces[0].get("formatted_lba_size")) if namespaces else None,
        "rotation_rpm": to_int(data.get("rotation_rate")),
        "smart_available": (data.get("smart_support") or {}).get("available"),
        "smart_passed": (data.get("smart_status") or {}).get("passed"),
        "power_on_hours": to_int((data.get("power_on_time") or {}).get("hours")),
        "smartctl_version": ".".join(str(v) for v in version) if isinstance(version, list) else None,
    }
    speed = data.get("interface_speed") or {}
    for which in ("current", "max"):
        s = speed.get(which) or {}
        ups, bpu = to_number(s.get("units_per_second")), to_number(s.get("bits_per_unit"))
        rec[f"interface_speed_{which}_Gbps"] = ups * bpu / 1e9 if ups is not None and bpu is not None else None
    if isinstance(data.get("nvme_smart_health_information_log"), dict):
        rec.update(_nvme_health(data["nvme_smart_health_information_log"]))
        if rec["temperature_C"] is None:
            rec["temperature_C"] = temperature_celsius((data.get("temperature") or {}).get("current"), False)
    elif protocol == "SCSI" or "scsi_error_counter_log" in data:
        rec.update(_scsi_health(data))
    else:
        rec.update(_ata_health(data, lbs, notes))
    rec["notes"] = notes
    return rec


# ---------------------------------------------------------------------------------------- nvme-cli

def _unwrap(data: dict, marker: str) -> dict:
    """Some wrappers print ``{"nvme0": {...}}`` or ``{"smart_log": {...}}``: the inner object holding
    ``marker``; else data itself."""
    if marker not in {str(k).lower() for k in data} and len(data) == 1:
        inner = next(iter(data.values()))
        if isinstance(inner, dict):
            return inner
    return data


def parse_nvme_smart_log(text: str) -> dict:
    """Health from ``nvme smart-log DEV -o json`` (nvme-cli 1.x and 2.x layouts, numbers as ints,
    floats or strings). Keys: temperature_C (from kelvin), percentage_used_pct, data_units_written,
    data_written_bytes, media_errors, available_spare_pct, critical_warning, power_on_hours."""
    data = _unwrap(_load_json(text, "nvme smart-log"), "data_units_written")
    if "smartctl" in data or "nvme_smart_health_information_log" in data:
        raise _fail("nvme smart-log", "this is smartctl -j output (read it with parse_smartctl_json)")
    rec: dict[str, Any]
    try:
        units = to_int(_first(data, "data_units_written"))
        temp_raw = _first(data, "temperature", "composite_temperature")
        rec = {"source": "nvme-cli",
               "temperature_C": temperature_celsius(temp_raw, kelvin_default=True),
               "percentage_used_pct": to_int(_first(data, "percent_used", "percentage_used")),
               "data_units_written": units, "data_written_bytes": data_written_bytes(units),
               "media_errors": to_int(_first(data, "media_errors", "media_and_data_integrity_errors")),
               "available_spare_pct": to_int(_first(data, "avail_spare", "available_spare")),
               "critical_warning": to_int(_first(data, "critical_warning", "critical_warrning")),
               "power_on_hours": to_int(_first(data, "power_on_hours")),
               "notes": []}
    except DAMAGE as exc:
        raise _fail("nvme smart-log", f"unexpected layout ({type(exc).__name__}: {exc})") from None
    if all(rec[k] is None for k in ("percentage_used_pct", "data_units_written", "media_errors")):
        raise _fail("nvme smart-log", "none of percent_used, data_units_written, media_errors in the output")
    return rec


_TEXT_FIELD_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9_]*)\s*:\s?(?P<value>.*)$")
_LBAF_TEXT_RE = re.compile(
    r"^\s*lbaf\s+(?P<i>\d+)\s*:\s*ms:\s*(?P<ms>\d+)\s+lbads:\s*(?P<ds>\d+)\s+rp:\s*(?P<rp>\S+)(?P<rest>.*)$", re.I)
_LBAF_HUMAN_RE = re.compile(
    r"^\s*LBA Format\s+(?P<i>\d+)\s*:\s*Metadata Size:\s*(?P<ms>\d+)\s*bytes\s*-\s*Data Size:\s*(?P<size>\d+)\s*bytes"
    r"\s*-\s*Relative Performance:\s*(?P<rp>\S+)(?P<rest>.*)$", re.I)


def _text_fields(text: str) -> dict[str, str]:
    """``key : value`` lines of nvme-cli's normal output (bit-field lines indented or ``[n:m]`` skipped)."""
    out: dict[str, str] = {}
    for line in str(text).splitlines():
        if not line or line[0].isspace() or line.startswith("["):
            continue
        m = _TEXT_FIELD_RE.match(line.rstrip("\r"))
        if m and m.group("key") not in out:
            out[m.group("key")] = m.group("value").strip()
    return out


def _is_json(text: str) -> bool:
    return str(text).lstrip("\ufeff \t\r\n").startswith("{")


def nvme_version(ver: Any) -> str | None:
    """NVMe version of id-ctrl ``ver`` (``66304`` / ``0x10300`` -> ``1.3``; tertiary shown when set)."""
    v = to_int(ver)
    if not v:
        return None
    major, minor, ter = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    return f"{major}.{minor}" + (f".{ter}" if ter else "")


def parse_nvme_id_ctrl(text: str) -> dict:
    """Identity from ``nvme id-ctrl DEV -o json`` (or the normal text output). Keys: model (mn),
    firmware (fr), serial_number_private (sn), capacity_bytes (tnvmcap; None when the drive reports 0,
    which client drives without namespace management may), unallocated_bytes, volatile_write_cache
    (VWC bit 0), vwc, nvme_version, pci_vendor_id, namespaces (nn)."""
    tool = "nvme id-ctrl"
    if text is None or not str(text).strip():
        raise _fail(tool, "empty output")
    data: dict = _load_json(text, tool) if _is_json(text) else _text_fields(text)
    data = _unwrap(data, "mn")
    model = clean_text(_first(data, "mn"))
    if model is None:
        raise _fail(tool, "no model number (mn) in the output")
    rec: dict[str, Any]
    try:
        vwc = to_int(_first(data, "vwc"))
        cap = to_int(_first(data, "tnvmcap"))
        vid = to_int(_first(data, "vid"))
        rec = {"source": "nvme-cli", "model": model, "firmware": clean_text(_first(data, "fr")),
               "serial_number_private": clean_text(_first(data, "sn")),
               "capacity_bytes": cap or None, "unallocated_bytes": to_int(_first(data, "unvmcap")),
               "vwc": vwc, "volatile_write_cache": bool(vwc & 1) if vwc is not None else None,
               "nvme_version": nvme_version(_first(data, "ver")),
               "pci_vendor_id": f"0x{vid:04x}" if vid is not None else None,
               "namespaces": to_int(_first(data, "nn")), "notes": []}
    except DAMAGE as exc:
        raise _fail(tool, f"unexpected layout ({type(exc).__name__}: {exc})") from None
    if cap == 0:
        rec["notes"].append("capacity_bytes: tnvmcap is 0 (optional field not reported); use the namespace size")
    return rec


def lba_format_index(flbas: int) -> int:
    """The LBA format in use: FLBAS bits 3:0, plus bits 6:5 as the most significant bits (NVMe 2.0)."""
    return (flbas & 0x0F) | (((flbas >> 5) & 0x03) << 4)


def _lbafs_json(data: dict) -> list[dict]:
    raw = _first(data, "lbafs", "lbaf")
    if not isinstance(raw, list):
        return []
    out = []
    for i, f in enumerate(raw):
        if not isinstance(f, dict):
            continue
        idx = to_int(f.get("lbaf"))
        out.append({"index": idx if idx is not None else i, "ds": to_int(_first(f, "ds", "lbads")),
                    "ms": to_int(f.get("ms")), "rp": to_int(f.get("rp")), "in_use": bool(to_int(f.get("in_use")))})
    return out


def _lbafs_text(text: str) -> list[dict]:
    out = []
    for line in str(text).splitlines():
        m = _LBAF_TEXT_RE.match(line)
        if m:
            out.append({"index": int(m["i"]), "ds": int(m["ds"]), "ms": int(m["ms"]), "rp": to_int(m["rp"]),
                        "in_use": "in use" in m["rest"].lower()})
            continue
        m = _LBAF_HUMAN_RE.match(line)
        if m:
            size = int(m["size"])
            ds = size.bit_length() - 1 if size > 0 and size & (size - 1) == 0 else None
            out.append({"index": int(m["i"]), "ds": ds, "ms": int(m["ms"]), "rp": to_int(m["rp"]),
                        "in_use": "in use" in m["rest"].lower()})
    return out


def parse_nvme_id_ns(text: str) -> dict:
    """The namespace's LBA format from ``nvme id-ns DEV -o json`` (or the normal / ``-H`` text).
    Keys: lba_format_index, lba_size_bytes (2 ** ds), metadata_size_bytes (ms), size_blocks (nsze),
    capacity_blocks (ncap), used_blocks (nuse), size_bytes (nsze x LBA size), lba_formats (every format:
    index, lba_size_bytes, metadata_size_bytes, relative_performance)."""
    tool = "nvme id-ns"
    if text is None or not str(text).strip():
        raise _fail(tool, "empty output")
    if _is_json(text):
        data = _unwrap(_load_json(text, tool), "flbas")
        formats = _lbafs_json(data)
    else:
        data = _text_fields(text)
        formats = _lbafs_text(text)
    flbas = to_int(_first(data, "flbas"))
    if not formats:
        raise _fail(tool, "no LBA formats (lbafs) in the output")
    marked = [f["index"] for f in formats if f["in_use"]]
    if flbas is None and not marked:
        raise _fail(tool, "no flbas and no format marked in use")
    index = lba_format_index(flbas) if flbas is not None else marked[0]
    chosen = next((f for f in formats if f["index"] == index), None)
    if chosen is None:
        raise _fail(tool, f"flbas {flbas} selects LBA format {index}, but only {len(formats)} are listed")
    if not chosen["ds"]:
        raise _fail(tool, f"LBA format {index} in use has no data size (ds {chosen['ds']})")
    notes = []
    if marked and marked[0] != index:
        notes.append(f"lba_format_index: flbas gives {index}, the output marks {marked[0]} in use; flbas kept")
    lba = 2 ** chosen["ds"]
    nsze = to_int(_first(data, "nsze"))
    return {"source": "nvme-cli", "lba_format_index": index, "lba_size_bytes": lba,
            "metadata_size_bytes": chosen["ms"], "size_blocks": nsze,
            "capacity_blocks": to_int(_first(data, "ncap")), "used_blocks": to_int(_first(data, "nuse")),
            "size_bytes": nsze * lba if nsze is not None else None,
            "lba_formats": [{"index": f["index"], "lba_size_bytes": 2 ** f["ds"] if f["ds"] else None,
                             "metadata_size_bytes": f["ms"], "relative_performance": f["rp"]} for f in formats],
            "notes": notes}


# ------------------------------------------------------------------------------------------ sysfs

def parse_pcie_link_speed(text: str | None) -> float | None:
    """GT/s per lane of a sysfs ``current_link_speed`` / ``max_link_speed`` (``16.0 GT/s PCIe``,
    ``8 GT/s``, ``2.5 GT/s``); None for ``Unknown`` / ``Unknown speed`` / empty."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*GT/s", str(text or ""))
    return float(m.group(1)) if m else None


def parse_pcie_link_width(text: str | None) -> int | None:
    """Lanes of a sysfs ``current_link_width`` / ``max_link_width`` (``4``, ``x4``); None when 0 or unreadable
    (a link that is down reads 0)."""
    m = re.search(r"\d+", str(text or ""))
    return int(m.group(0)) or None if m else None


def pcie_generation(gtps: float | None) -> int | None:
    """PCIe generation of a per-lane rate in GT/s (2.5 -> 1 ... 64 -> 6), None when unknown."""
    return PCIE_GENERATION.get(gtps) if gtps is not None else None
