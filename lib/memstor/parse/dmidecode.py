"""The memory devices of ``dmidecode -t memory`` and the DRAM peak bandwidth they imply. Pure: text in, plain
JSON-able dicts out, units in the key names.

Records read: SMBIOS type 17 "Memory Device" (one per slot, populated or not) and type 16 "Physical Memory
Array"; every other record (a full ``dmidecode`` dump holds them all) is skipped. ``dmidecode -q`` (no
``Handle`` lines) is read by the record names.

Units and spellings (dmidecode 2.x to 3.6):

- sizes are powers of 1024 whichever way dmidecode spells them (``16384 MB``, ``16 GB``, ``16 GiB``, ``8192 kB``);
  ``No Module Installed`` / ``Not Installed`` is an empty slot (``size_bytes`` None, ``populated`` False).
- ``speed_MTps`` / ``configured_speed_MTps``: the data rate in MT/s. dmidecode >= 3.2 prints ``3200 MT/s``;
  older versions print the same SMBIOS field as ``1333 MHz`` (SMBIOS before 3.1.1 named the unit MHz, but
  BIOSes store the data rate: DDR3-1333 prints ``1333 MHz``), so MHz is read as MT/s and ``speed_unit`` keeps
  what was printed. The configured speed is ``Configured Memory Speed`` (>= 3.2) or ``Configured Clock
  Speed`` (older).
- ``data_width_bits`` / ``total_width_bits``: the module's data bus and data + ECC (64 and 72 bits for an ECC
  DIMM). Serial numbers and asset tags are not kept.

Channels (:func:`populated_channels`) come from the locator strings, which vendors name as they like. Handled
(first pattern that fits every populated DIMM wins; a DIMM slot number after the channel is ignored, so two
DIMMs per channel count once):

- bank locator ``P0 CHANNEL A`` (AMD AGESA boards and laptops: socket P0, channel A);
- bank locator ``NODE 0 CHANNEL 1 DIMM 0`` / ``P0_Node0_Channel0_Dimm0`` (Intel and Supermicro servers; a
  channel number restarts in each node, the memory controller, so node and channel count together);
- bank locator ``CHANNEL A DIMM0`` (Intel NUC);
- locator ``ChannelA-DIMM0`` / ``Controller0-ChannelA-DIMM0`` (Intel laptops and desktops: controller and
  channel);
- locator ``CPU1_DIMM_B2`` (Intel servers: socket 1, channel B, slot 2), ``P1-DIMMA1`` (Supermicro),
  ``DIMM_P0_A0`` (Gigabyte servers), ``CPU0 Channel0 DIMM0`` (EC2 metal);
- locator ``DIMM_A1`` (desktop boards: channel A, slot 1; the socket from a bank locator ``NODE n`` if any).

Locators that name a socket and a slot but no channel (Dell ``A1``..``B12``, HPE ``PROC 1 DIMM 1``, ``DIMM 0``
with ``BANK 0``) are not guessed: the channel count is ``unknown (locators 'A1', 'A2': ...)``.

Peak (:func:`dram_peak`): channels × MT/s × bus width, in decimal MB/s (MT/s x bytes = MB/s). A DDR3/DDR4
channel is 64 bits (8 B); a DDR5 DIMM is two 32-bit subchannels, still 8 B per DIMM channel. LPDDR devices
are listed one per package or channel with their own (16- or 32-bit) data width: the bus is the sum of the
populated devices' data widths. ECC bits (total width - data width) carry no data and are not counted.
"""

from __future__ import annotations

import re
from typing import Any

from memstor.core.errors import ParseError
from memstor.parse.guards import one_line

#: Bytes of one DDR channel's data bus (64 bits; a DDR5 DIMM's two 32-bit subchannels together).
DDR_CHANNEL_BYTES = 8
#: The reason a dmidecode output without any type 17 record gives.
NO_DEVICES = "no SMBIOS memory devices (a VM: the hypervisor hides them)"

_HANDLE_RE = re.compile(r"^Handle (0x[0-9A-Fa-f]+), DMI type (\d+)")
_NAMES = {"Memory Device": 17, "Physical Memory Array": 16}
_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(bytes|[kKMGTP]i?B)$")
_SIZE_POWER = {"bytes": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SPEED_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(MT/s|MHz)$", re.IGNORECASE)
_UNSET = {"", "unknown", "not specified", "not provided", "none", "<out of spec>", "other", "no dimm",
          "not available", "to be filled by o.e.m."}
_NO_TABLE_RE = re.compile(r"No SMBIOS nor DMI entry point found|/dev/mem: No such file or directory|"
                          r"Can't read memory from /dev/mem|/dev/mem: Operation not permitted", re.IGNORECASE)

#: (field, pattern, what it is) of the channel patterns, in the order they are tried (module docstring).
CHANNEL_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("bank_locator", r"^P(?P<socket>\d+)\s+CHANNEL\s+(?P<channel>[A-Z])$", "bank locator 'P0 CHANNEL A'"),
    ("bank_locator", r"^NODE\s*(?P<socket>\d+)\s+CHANNEL\s*(?P<channel>\w+)\s+DIMM\s*\d+$",
     "bank locator 'NODE 0 CHANNEL 1 DIMM 0'"),
    ("bank_locator", r"^P(?P<socket>\d+)_Node(?P<node>\d+)_Channel(?P<channel>\w+?)_Dimm\d+$",
     "bank locator 'P0_Node0_Channel0_Dimm0'"),
    ("bank_locator", r"^CHANNEL\s+(?P<channel>[A-Z])\s+DIMM\s*\d+$", "bank locator 'CHANNEL A DIMM0'"),
    ("locator", r"^(?:Controller(?P<socket>\d+)-)?Channel(?P<channel>[A-Z])-DIMM\d+$",
     "locator 'ChannelA-DIMM0' / 'Controller0-ChannelA-DIMM0'"),
    ("locator", r"^CPU(?P<socket>\d+)_DIMM_(?P<channel>[A-Z])\d+$", "locator 'CPU1_DIMM_B2'"),
    ("locator", r"^P(?P<socket>\d+)-DIMM(?P<channel>[A-Z])\d+$", "locator 'P1-DIMMA1'"),
    ("locator", r"^DIMM_P(?P<socket>\d+)_(?P<channel>[A-Z])\d+$", "locator 'DIMM_P0_A0'"),
    ("locator", r"^CPU(?P<socket>\d+)\s+Channel(?P<channel>\d+)\s+DIMM\d+$", "locator 'CPU0 Channel0 DIMM0'"),
    ("locator", r"^DIMM_(?P<channel>[A-Z])\d+$", "locator 'DIMM_A1'"),
)


# ------------------------------------------------------------------------------------------ records


def records(text: str) -> list[dict]:
    """Every record of a dmidecode output: ``{"handle": "0x0013" | None, "type": 17 | None, "name": "Memory
    Device", "fields": {"Size": "16 GB", ...}}``. A field's deeper-indented continuation lines
    (``Characteristics:`` lists) are kept as a list under that field."""
    out: list[dict] = []
    pending: tuple[str, int] | None = None
    cur: dict | None = None
    last_key, base = None, 0
    for raw in str(text).replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if not line.strip() or line.startswith("#"):
            continue
        m = _HANDLE_RE.match(line)
        if m:
            pending, cur = (m.group(1), int(m.group(2))), None
            continue
        if not line[0].isspace():
            handle, typ = pending if pending else (None, _NAMES.get(line.strip()))
            cur = {"handle": handle, "type": typ, "name": line.strip(), "fields": {}}
            out.append(cur)
            pending, last_key, base = None, None, 0
            continue
        if cur is None:
            continue
        indent = len(line) - len(line.lstrip())
        base = base or indent
        key, sep, value = line.strip().partition(":")
        if indent <= base and sep:
            last_key = key.strip()
            cur["fields"][last_key] = value.strip()
        elif last_key is not None:
            prev = cur["fields"][last_key]
            cur["fields"][last_key] = (prev if isinstance(prev, list) else []) + [line.strip()]
    return out


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return None if value.lower() in _UNSET else value


def size_bytes(text: Any) -> int | None:
    """Bytes of a dmidecode size (``16 GB``, ``16384 MB``, ``16 GiB``, ``8192 kB``: powers of 1024), or None."""
    m = _SIZE_RE.match(str(text or "").strip())
    if not m:
        return None
    unit = m.group(2)
    power = 0 if unit == "bytes" else _SIZE_POWER[unit[0].lower()]
    return int(float(m.group(1)) * 1024 ** power)


def speed_mts(text: Any) -> tuple[int | None, str | None]:
    """(MT/s, the unit printed) of a dmidecode speed: ``3200 MT/s`` -> (3200, "MT/s"), ``1333 MHz`` -> (1333,
    "MHz") (see the module docstring); (None, None) for ``Unknown``, ``0`` or nothing."""
    m = _SPEED_RE.match(str(text or "").strip())
    if not m or float(m.group(1)) <= 0:
        return None, None
    return int(float(m.group(1))), "MT/s" if m.group(2).lower() == "mt/s" else "MHz"


def _bits(text: Any) -> int | None:
    m = re.match(r"^(\d+)\s*bits?$", str(text or "").strip())
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def memory_device(rec: dict) -> dict:
    """One DIMM record of a type 17 record (see the module docstring for the units)."""
    f = rec["fields"]
    size_text = str(f.get("Size") or "").strip()
    empty = size_text.lower() in ("no module installed", "not installed") or size_text in ("0", "0 B", "0 MB")
    size = None if empty else size_bytes(size_text)
    speed, unit = speed_mts(f.get("Speed"))
    configured, cunit = speed_mts(f.get("Configured Memory Speed", f.get("Configured Clock Speed")))
    rank = str(f.get("Rank") or "")
    return {"handle": rec["handle"], "array_handle": _text(f.get("Array Handle")),
            "locator": _text(f.get("Locator")), "bank_locator": _text(f.get("Bank Locator")),
            "size_bytes": size, "populated": False if empty else (True if size else None),
            "type": _text(f.get("Type")), "type_detail": _text(f.get("Type Detail")),
            "form_factor": _text(f.get("Form Factor")), "rank": int(rank) if rank.isdigit() else None,
            "speed_MTps": speed, "configured_speed_MTps": configured, "speed_unit": unit or cunit,
            "data_width_bits": _bits(f.get("Data Width")), "total_width_bits": _bits(f.get("Total Width")),
            "manufacturer": _text(f.get("Manufacturer")), "part_number": _text(f.get("Part Number"))}


def memory_array(rec: dict) -> dict:
    """One type 16 record: location, use, error_correction, max_capacity_bytes, devices (slots)."""
    f = rec["fields"]
    devices = str(f.get("Number Of Devices") or "")
    return {"handle": rec["handle"], "location": _text(f.get("Location")), "use": _text(f.get("Use")),
            "error_correction": _text(f.get("Error Correction Type")),
            "max_capacity_bytes": size_bytes(f.get("Maximum Capacity")),
            "devices": int(devices) if devices.isdigit() else None}


def no_table_reason(text: str) -> str | None:
    """Why dmidecode found no SMBIOS table at all (its stdout + stderr), or None when it did not say so."""
    m = _NO_TABLE_RE.search(str(text or ""))
    if not m:
        return None
    return (f"no SMBIOS table (dmidecode: {one_line(m.group(0), 80)}): a VM whose hypervisor gives the guest "
            "none, or a board without SMBIOS")


def parse_dmidecode_memory(text: str) -> dict:
    """``dmidecode -t memory`` (or a full ``dmidecode``) -> ``{"dmidecode_version", "smbios_version", "arrays":
    [...], "dimms": [...]}`` (every slot, populated or not, in table order). ParseError when the text is
    not dmidecode output (no ``# dmidecode`` header, no ``Handle`` line, no known record name)."""
    text = str(text or "")
    recs = records(text)
    version = re.search(r"^# dmidecode (\S+)", text, re.MULTILINE)
    if not version and not any(r["type"] is not None for r in recs):
        raise ParseError(one_line(f"dmidecode: not dmidecode output ({text.strip()[:60]!r})", 200))
    smbios = re.search(r"^SMBIOS (\S+) present", text, re.MULTILINE)
    return {"dmidecode_version": version.group(1) if version else None,
            "smbios_version": smbios.group(1) if smbios else None,
            "arrays": [memory_array(r) for r in recs if r["type"] == 16],
            "dimms": [memory_device(r) for r in recs if r["type"] == 17]}


# ------------------------------------------------------------------------------------------ channels


def populated_channels(dimms: list[dict]) -> tuple[int | None, str]:
    """(number of populated channels, how it was told) from the populated DIMMs' locators, or (None, the
    reason: ``unknown (locators 'A1', 'B1': no channel pattern fits them)``). See the module docstring."""
    if not dimms:
        return None, "unknown (no populated DIMM)"
    for field, pattern, _what in CHANNEL_PATTERNS:
        keys = set()
        for d in dimms:
            m = re.match(pattern, str(d.get(field) or "").strip(), re.IGNORECASE)
            if m is None:
                break
            socket = m.groupdict().get("socket")
            if socket is None:
                node = re.search(r"NODE\s*(\d+)", str(d.get("bank_locator") or ""), re.IGNORECASE)
                socket = node.group(1) if node else "0"
            keys.add((int(socket), m.groupdict().get("node"), m.group("channel").upper()))
        else:
            names = list(dict.fromkeys(str(d.get(field)).strip() for d in dimms))
            shown = ", ".join(repr(n) for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            return len(keys), f"channels from the {field.replace('_', ' ')}s {shown}"
    shown = ", ".join(repr(f"{d.get('locator')}" + (f" / {d['bank_locator']}" if d.get("bank_locator") else ""))
                      for d in dimms[:4])
    more = f" and {len(dimms) - 4} more" if len(dimms) > 4 else ""
    return None, f"unknown (locators {shown}{more}: no channel pattern fits them)"


def _speed(dimms: list[dict]) -> tuple[int | None, str]:
    """(MT/s all channels run at, where it came from): the lowest configured speed, else the rated one."""
    configured = {d["configured_speed_MTps"] for d in dimms if d.get("configured_speed_MTps")}
    if configured:
        note = "configured speed" if len(configured) == 1 else \
            f"the lowest configured speed of {', '.join(f'{s:,}' for s in sorted(configured))} MT/s"
        return min(configured), note
    rated = {d["speed_MTps"] for d in dimms if d.get("speed_MTps")}
    if rated:
        return min(rated), "rated speed: dmidecode reports no configured speed, the real one may be lower"
    return None, "unknown (dmidecode reports no speed)"


def _rate(mts: int | None) -> str:
    return f"{mts:,}" if mts else "?"


def _result(channels: int | None, mts: int | None, bus: int | None, how: str, reason: str | None) -> dict:
    peak = channels * mts * bus if channels and mts and bus else None
    return {"peak_MBps": peak, "channels": channels, "mts": mts, "bus_bytes": bus,
            "how": f"{how} = {peak:,} MB/s" if peak else how, "reason": None if peak else reason}


def _lpddr_peak(populated: list[dict], kind: str, mts: int | None, mts_note: str) -> dict:
    """LPDDR: the bus is the populated devices' data widths together (equal widths: one channel each)."""
    widths = [d.get("data_width_bits") for d in populated]
    if not all(widths):
        return _result(len(populated), mts, None, "",
                       f"unknown ({kind}: a device reports no data width, so the bus width is unknown)")
    bits = [int(w) for w in widths if w]
    n, bus = (len(bits), bits[0] // 8) if len(set(bits)) == 1 else (1, sum(bits) // 8)
    how = (f"{len(bits)} {kind} devices of {' + '.join(map(str, bits))} bits: {n} × {_rate(mts)} MT/s × "
           f"{bus} B ({mts_note})")
    return _result(n, mts, bus, how, mts_note)


def dram_peak(dimms: list[dict], *, channels: int | None = None, mts: int | None = None) -> dict:
    """The DRAM peak bandwidth of the :func:`memory_device` records: ``{"peak_MBps", "channels", "mts",
    "bus_bytes", "how", "reason"}``; peak_MBps = channels × MT/s × bus bytes per channel (decimal MB/s),
    None with ``reason`` (``unknown (...)``) when a factor is unknown; ``how`` is the arithmetic in words.
    ``channels`` / ``mts``, when given (the profile's ``memory_channels`` / ``memory_mts``), replace what
    dmidecode says (a 64-bit channel is then assumed)."""
    populated = [d for d in dimms if d.get("populated")]
    if not populated and not (channels and mts):
        why = NO_DEVICES if not dimms else "no populated memory device (every slot says No Module Installed)"
        return _result(None, None, None, "", f"unknown ({why})")
    found_mts, mts_note = _speed(populated)
    use_mts = mts or found_mts
    mts_note = "MT/s from the profile's memory_mts" if mts else mts_note
    types = sorted({d["type"] for d in populated if d.get("type")})
    kind = "/".join(types) or "DRAM of unknown type"
    if any(t.upper().startswith("LPDDR") for t in types) and not channels:
        return _lpddr_peak(populated, kind, use_mts, mts_note)
    n, ch_note = populated_channels(populated)
    if channels:
        n, ch_note = channels, "channels from the profile's memory_channels"
    listed = f"{len(populated)} DIMMs" if populated else "no DIMM listed by dmidecode"
    how = (f"{n or '?'} channels × {_rate(use_mts)} MT/s × {DDR_CHANNEL_BYTES} B ({kind}, {listed}; "
           f"{ch_note}; {mts_note})")
    reason = ch_note if n is None else mts_note if not use_mts else None
    return _result(n, use_mts, DDR_CHANNEL_BYTES, how, reason)
