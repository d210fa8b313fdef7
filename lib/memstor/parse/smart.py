"""One reading of a drive's temperature and thermal-throttle counters, from the text its tools print, and
the thermal sampler's JSON-lines file. Pure: text in, one flat dict out; a value the output does not hold
is None (never 0).

Inputs: ``nvme smart-log DEV`` (the normal text of nvme-cli 1.x and 2.x: ``34 C``, ``44 C (317 Kelvin)``,
``40 °C (313 K)``, ``34 °C (307 K, 93 °F)``, a bare kelvin number; smartctl's text SMART/Health section is
read too), ``nvme smart-log DEV -o json``, ``nvme id-ctrl DEV -o json`` (thresholds only) and
``smartctl -j -a`` / ``-x`` / ``-A`` of NVMe, SATA and SAS drives. The fields shared with the health
snapshots (temperature, data written, critical warning) come from :mod:`memstor.parse.drive`'s parsers.

Keys of a reading (:data:`THERMAL_FIELDS`; NVMe base specification, SMART/Health log 02h):

- ``temperature_c``: the composite temperature, °C (NVMe logs kelvin; K - 273 as nvme-cli and smartctl do).
- ``temperature_sensors_c``: the temperature sensors that report (NVMe sensors 1-8), °C, or None.
- ``warning_temp_c`` / ``critical_temp_c``: thresholds, °C. NVMe: WCTEMP / CCTEMP (id-ctrl ``wctemp`` /
  ``cctemp`` in kelvin, 0 = not reported; smartctl >= 7.4: ``nvme_composite_temperature_threshold`` or
  ``temperature.op_limit_max`` / ``critical_limit_max``); SATA: the SCT ``temperature.op_limit_max``
  (specified maximum operating temperature) / ``limit_max`` (specified maximum, ``smartctl -x``); SAS:
  ``drive_trip`` as the critical one. ``nvme smart-log`` holds none: :func:`thresholds_from_id_ctrl`.
- ``warning_temp_time_min`` / ``critical_comp_time_min``: lifetime minutes the composite temperature spent
  at or above WCTEMP / CCTEMP.
- ``thm_temp1_trans_count`` / ``thm_temp2_trans_count``: times the controller entered host-controlled
  thermal management level 1 (light throttling) / 2 (heavy); ``thm_temp1_total_time_s`` /
  ``thm_temp2_total_time_s``: seconds spent there (NVMe 1.3). nvme-cli prints them; smartctl only in its
  text ("Thermal Temp. 1 Transition Count"), never in its JSON, so they are None from ``smartctl -j``.
- ``data_units_written`` (NVMe units of 512,000 bytes) and ``data_written_bytes``.
- ``critical_warning`` (the NVMe byte) and ``temperature_flag``: its bit 1, "a temperature is above an
  over-temperature or below an under-temperature threshold".
- ``source`` (``nvme-cli``, ``nvme-cli text``, ``smartctl``) and ``protocol`` (NVMe, ATA, SCSI or None).

A garbled reading raises :class:`memstor.core.errors.ParseError` whose one line names the source and the
way out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memstor.core.errors import ParseError
from memstor.parse import drive
from memstor.parse.drive import KELVIN_OFFSET, data_written_bytes, temperature_celsius, to_int, to_number
from memstor.parse.guards import DAMAGE, one_line

#: Keys of one reading, in order (units in the names; see the module docstring).
THERMAL_FIELDS = ("temperature_c", "temperature_sensors_c", "warning_temp_c", "critical_temp_c",
                  "warning_temp_time_min", "critical_comp_time_min", "thm_temp1_trans_count",
                  "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s",
                  "data_units_written", "data_written_bytes", "critical_warning", "temperature_flag")
#: Bit of the NVMe critical warning byte that flags a temperature threshold condition.
TEMPERATURE_WARNING_BIT = 1
#: What a reading's error line ends with: the way out.
WAY_OUT = "rerun `nvme smart-log DEV -o json` or `smartctl -j -A DEV` and check that it prints the drive's log"

# Normalised labels of the text outputs (nvme-cli's snake_case and words, smartctl's words) -> field.
_TEXT_LABELS = {
    "critical warning": "critical_warning", "temperature": "temperature",
    "data units written": "data_units_written",
    "warning temperature time": "warning_temp_time", "warning comp temperature time": "warning_temp_time",
    "critical composite temperature time": "critical_comp_time",
    "critical comp temperature time": "critical_comp_time",
    "thermal management t1 trans count": "thm1_count", "thermal temp 1 transition count": "thm1_count",
    "thermal management t2 trans count": "thm2_count", "thermal temp 2 transition count": "thm2_count",
    "thermal management t1 total time": "thm1_time", "thermal temp 1 total time": "thm1_time",
    "thermal management t2 total time": "thm2_time", "thermal temp 2 total time": "thm2_time",
    "warning comp temp threshold": "wctemp", "critical comp temp threshold": "cctemp",
    "wctemp": "wctemp", "cctemp": "cctemp",
}
_SENSOR_LABEL = re.compile(r"^temperature sensor (\d)$")
_LINE = re.compile(r"^\s*(?P<label>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
_GROUPED = re.compile(r"^\s*(\d{1,3}(?:([,.\u00a0' ])\d{3})+)(?!\d)")


def _fail(source: str, reason: object) -> ParseError:
    return ParseError(one_line(f"{source}: {reason}; {WAY_OUT}", 400))


def _empty(source: str, protocol: str | None) -> dict:
    return {**dict.fromkeys(THERMAL_FIELDS), "source": source, "protocol": protocol}


def temperature_flag(critical_warning: int | None) -> bool | None:
    """Bit 1 of the NVMe critical warning byte (a temperature threshold condition), None when unknown."""
    return None if critical_warning is None else bool(critical_warning >> TEMPERATURE_WARNING_BIT & 1)


def _kelvin_c(value: Any) -> int | float | None:
    """°C of a kelvin field (id-ctrl wctemp/cctemp, nvme-cli JSON sensors); 0 = not reported -> None."""
    k = to_number(value)
    return None if not k else k - KELVIN_OFFSET


def _json_object(text: str, source: str) -> dict:
    """The JSON object of a tool's output (leading noise skipped; a one-key wrapper such as
    ``{"nvme0": {...}}`` unwrapped)."""
    start = str(text).find("{")
    if start < 0:
        raise _fail(source, "no JSON object in the output")
    try:
        data, _ = json.JSONDecoder().raw_decode(str(text)[start:])
    except ValueError as err:
        raise _fail(source, f"not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise _fail(source, "the JSON is not an object")
    if len(data) == 1 and isinstance(next(iter(data.values())), dict):
        data = next(iter(data.values()))
    return data


def _first(data: dict, *keys: str) -> Any:
    return next((data[k] for k in keys if k in data), None)


# ------------------------------------------------------------------------------------ nvme-cli JSON

def thermal_from_nvme_json(text: str, source: str = "nvme smart-log -o json") -> dict:
    """A reading from ``nvme smart-log DEV -o json`` (nvme-cli 1.x ``"key" : value`` and 2.x layouts;
    temperatures in kelvin, converted; sensors that read 0 K are left out). No thresholds: see
    :func:`thresholds_from_id_ctrl`."""
    try:
        base = drive.parse_nvme_smart_log(text)
    except ParseError as err:
        raise _fail(source, err) from None
    data = _json_object(text, source)
    out = _empty("nvme-cli", "NVMe")
    try:
        sensors = [_kelvin_c(data.get(f"temperature_sensor_{i}")) for i in range(1, 9)]
        out.update(temperature_c=base["temperature_C"],
                   temperature_sensors_c=[s for s in sensors if s is not None] or None,
                   warning_temp_time_min=to_int(data.get("warning_temp_time")),
                   critical_comp_time_min=to_int(data.get("critical_comp_time")),
                   thm_temp1_trans_count=to_int(data.get("thm_temp1_trans_count")),
                   thm_temp2_trans_count=to_int(data.get("thm_temp2_trans_count")),
                   thm_temp1_total_time_s=to_int(data.get("thm_temp1_total_time")),
                   thm_temp2_total_time_s=to_int(data.get("thm_temp2_total_time")),
                   data_units_written=base["data_units_written"], data_written_bytes=base["data_written_bytes"],
                   critical_warning=base["critical_warning"])
    except DAMAGE as exc:
        raise _fail(source, f"unexpected layout ({type(exc).__name__}: {exc})") from None
    return _checked(out, source)


def _checked(out: dict, source: str) -> dict:
    """``out`` with its temperature flag set; ParseError when it has no composite temperature."""
    if out["temperature_c"] is None:
        raise _fail(source, "no composite temperature in the output")
    out["temperature_flag"] = temperature_flag(out["critical_warning"])
    return out


# ------------------------------------------------------------------------------------ smartctl JSON

def _smartctl_thresholds(data: dict, protocol: str | None) -> tuple[Any, Any]:
    """(warning, critical) °C from smartctl's JSON (see the module docstring for which field is which)."""
    temp: dict = data["temperature"] if isinstance(data.get("temperature"), dict) else {}
    nvme: dict = data.get("nvme_composite_temperature_threshold") or {}
    if protocol == "NVMe":
        return (to_number(_first(nvme, "warning")) or to_number(temp.get("op_limit_max")),
                to_number(_first(nvme, "critical")) or to_number(temp.get("critical_limit_max")))
    sct: dict = (data.get("ata_sct_status") or {}).get("temperature") or {}
    warning = to_number(temp.get("op_limit_max")) or to_number(sct.get("op_limit_max"))
    critical = to_number(temp.get("limit_max")) or to_number(sct.get("limit_max")) or to_number(temp.get("drive_trip"))
    return warning, critical


def thermal_from_smartctl(text: str, source: str = "smartctl -j") -> dict:
    """A reading from ``smartctl -j -a`` / ``-x`` / ``-A`` of an NVMe, SATA or SAS drive. smartctl's JSON
    logs temperatures in °C already; the thermal-management counters are not in it (None)."""
    try:
        base = drive.parse_smartctl_json(text)
    except ParseError as err:
        raise _fail(source, err) from None
    data = _json_object(text, source)
    protocol = base.get("protocol") or ("NVMe" if "nvme_smart_health_information_log" in data else None)
    out = _empty("smartctl", protocol)
    try:
        log = data.get("nvme_smart_health_information_log") or {}
        sensors = [to_number(s) for s in log.get("temperature_sensors") or []]
        warning, critical = _smartctl_thresholds(data, protocol)
        out.update(temperature_c=base.get("temperature_C"),
                   temperature_sensors_c=[s for s in sensors if s is not None] or None,
                   warning_temp_c=warning, critical_temp_c=critical,
                   warning_temp_time_min=to_int(log.get("warning_temp_time")),
                   critical_comp_time_min=to_int(log.get("critical_comp_time")),
                   data_units_written=base.get("data_units_written"),
                   data_written_bytes=base.get("data_written_bytes"), critical_warning=base.get("critical_warning"))
    except DAMAGE as exc:
        raise _fail(source, f"unexpected layout ({type(exc).__name__}: {exc})") from None
    return _checked(out, source)


# ------------------------------------------------------------------------------------- text outputs

def _label(text: str) -> str:
    """A text output's label normalised: lower case, runs of anything but letters and digits as one space
    (``Warning  Comp. Temperature Time`` -> ``warning comp temperature time``)."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _count(value: str) -> int | None:
    """A printed counter: ``135,654``, ``5527148 (2.83 TB)``, ``17,551,299 [8.98 TB]``, ``118.217.927``
    (a locale's thousands separator), ``0x00``."""
    m = _GROUPED.match(value)
    if m:
        return int(re.sub(r"[^\d]", "", m.group(1)))
    return to_int(value.split("(")[0].split("[")[0])


def _text_temperature(value: str) -> int | float | None:
    """°C of a printed temperature: ``34 C``, ``36 Celsius``, ``44 C (317 Kelvin)``, ``40 °C (313 K)``,
    ``309 Kelvin``; a bare number >= 200 is kelvin (old nvme-cli)."""
    words = re.sub(r"(?i)\bcelsius\b", "C", re.sub(r"(?i)\bkelvin\b", "K", value))
    return temperature_celsius(words.split("(")[0].strip() or words, kelvin_default=True)


def _text_fields(text: str) -> tuple[dict[str, str], dict[int, str]]:
    """The labelled values of a text output (first occurrence) and the temperature sensors by number."""
    fields: dict[str, str] = {}
    sensors: dict[int, str] = {}
    for line in str(text).splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        label = _label(m.group("label"))
        sensor = _SENSOR_LABEL.match(label)
        if sensor:
            sensors.setdefault(int(sensor.group(1)), m.group("value"))
        elif label in _TEXT_LABELS:
            fields.setdefault(_TEXT_LABELS[label], m.group("value"))
    return fields, sensors


def thermal_from_text(text: str, source: str = "nvme smart-log") -> dict:
    """A reading from the normal text of ``nvme smart-log DEV`` (or smartctl's text SMART/Health section
    of an NVMe drive, which also prints the thresholds)."""
    if text is None or not str(text).strip():
        raise _fail(source, "empty output")
    fields, sensors = _text_fields(text)
    if "temperature" not in fields:
        raise _fail(source, "no 'temperature' line: not an nvme smart-log (or smartctl -a) text output")
    out = _empty("nvme-cli text", "NVMe")

    def temp(key: str) -> Any:
        return _text_temperature(fields[key]) if key in fields else None

    def count(key: str) -> int | None:
        return _count(fields[key]) if key in fields else None

    units = count("data_units_written")
    readings = [_text_temperature(sensors[i]) for i in sorted(sensors)]
    out.update(temperature_c=temp("temperature"),
               temperature_sensors_c=[s for s in readings if s is not None] or None,
               warning_temp_c=temp("wctemp"), critical_temp_c=temp("cctemp"),
               warning_temp_time_min=count("warning_temp_time"), critical_comp_time_min=count("critical_comp_time"),
               thm_temp1_trans_count=count("thm1_count"), thm_temp2_trans_count=count("thm2_count"),
               thm_temp1_total_time_s=count("thm1_time"), thm_temp2_total_time_s=count("thm2_time"),
               data_units_written=units, data_written_bytes=data_written_bytes(units),
               critical_warning=count("critical_warning"))
    return _checked(out, source)


# ------------------------------------------------------------------------------------ thresholds

def thresholds_from_id_ctrl(text: str, source: str = "nvme id-ctrl") -> dict:
    """The composite temperature thresholds of ``nvme id-ctrl DEV -o json`` (or its normal text):
    ``warning_temp_c`` (WCTEMP) and ``critical_temp_c`` (CCTEMP), °C from the kelvin fields; None where
    the controller reports 0 (not implemented)."""
    if text is None or not str(text).strip():
        raise _fail(source, "empty output")
    if str(text).lstrip("\ufeff \t\r\n").startswith("{"):
        data = _json_object(text, source)
        wctemp, cctemp = data.get("wctemp"), data.get("cctemp")
    else:
        fields, _ = _text_fields(text)
        wctemp, cctemp = fields.get("wctemp"), fields.get("cctemp")
    if wctemp is None and cctemp is None:
        raise _fail(source, "no wctemp or cctemp field: not an nvme id-ctrl output")
    return {"warning_temp_c": _kelvin_c(wctemp), "critical_temp_c": _kelvin_c(cctemp)}


def with_thresholds(reading: dict, thresholds: dict | None) -> dict:
    """``reading`` with the thresholds it lacks taken from ``thresholds`` (:func:`thresholds_from_id_ctrl`
    or another reading of the same drive); its own values win."""
    out = dict(reading)
    for key in ("warning_temp_c", "critical_temp_c"):
        if out.get(key) is None and thresholds and thresholds.get(key) is not None:
            out[key] = thresholds[key]
    return out


def parse_reading(text: str, source: str = "drive reading") -> dict:
    """One reading, whatever the tool: smartctl JSON, nvme-cli JSON or the nvme smart-log text (decided
    from the output itself). ParseError (one line naming ``source``) for anything else."""
    if text is None or not str(text).strip():
        raise _fail(source, "empty output")
    body = str(text).lstrip("\ufeff \t\r\n")
    if not body.startswith("{"):
        return thermal_from_text(body, source)
    data = _json_object(body, source)
    if "smartctl" in data or any(k in data for k in ("nvme_smart_health_information_log", "ata_smart_attributes",
                                                      "scsi_error_counter_log")):
        return thermal_from_smartctl(body, source)
    if "wctemp" in data and "data_units_written" not in data:
        raise _fail(source, "this is nvme id-ctrl output (thresholds only), not a reading")
    return thermal_from_nvme_json(body, source)


# --------------------------------------------------------------------------- the sampler's raw file

def parse_thresholds(text: str, source: str = "thresholds reading") -> dict:
    """``warning_temp_c`` and ``critical_temp_c`` of the output read once for them: ``nvme id-ctrl`` (JSON
    or text) or a smartctl JSON reading (``-x`` / ``-a``). ParseError when it is neither."""
    if re.search(r"\bwctemp\b", str(text or "")):
        return thresholds_from_id_ctrl(text, source)
    reading = parse_reading(text, source)
    return {"warning_temp_c": reading["warning_temp_c"], "critical_temp_c": reading["critical_temp_c"]}


def _thresholds_of(header: dict) -> dict | None:
    """The thresholds the sampler read once (its ``thresholds_raw``), re-parsed; None when absent or bad."""
    raw = header.get("thresholds_raw")
    if not raw:
        return None
    try:
        return parse_thresholds(raw)
    except ParseError:
        return None


def _sample(record: dict, thresholds: dict | None, where: str) -> dict:
    """One sample row: t_s, utc, ok, reason and the reading's fields (re-parsed from the raw output)."""
    row = {"t_s": to_number(record.get("t_s")), "utc": record.get("utc"), "ok": False,
           "reason": record.get("reason"), **dict.fromkeys(THERMAL_FIELDS)}
    raw = record.get("raw")
    if record.get("ok") and raw:
        try:
            row.update(with_thresholds(parse_reading(raw, where), thresholds), ok=True, reason=None)
        except ParseError as err:
            row["reason"] = str(err)
    elif record.get("ok"):
        row["reason"] = "sample has no raw output"
    return row


def parse_thermal_log(text: str, source: str = "thermal.jsonl") -> dict:
    """The thermal sampler's raw file (JSON lines, :mod:`memstor.measure.thermal`) read again: keys
    ``available`` (False: the drive could not be read), ``reason``, ``header`` (device, command,
    interval_s...), ``samples`` (one dict per sample: t_s since the start, utc, ok, reason, and the
    :data:`THERMAL_FIELDS` re-parsed from its raw output, the thresholds read once filled in; a sample
    whose output does not parse is ``ok`` False with the reason), ``notes``. A truncated last line (the
    sampler stopped mid-write) is left out with a note; any other line that is not a JSON object:
    ParseError."""
    lines = [ln for ln in str(text or "").splitlines() if ln.strip()]
    if not lines:
        raise ParseError(one_line(f"{source}: empty file; rerun the measurement with the thermal sampler", 300))
    records: list[dict] = []
    notes: list[str] = []
    for i, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except ValueError as err:
            if i == len(lines):
                notes.append(f"line {i}: truncated last line left out ({err})")
                continue
            raise ParseError(one_line(f"{source} line {i}: not JSON ({err}); the sampler writes one JSON object "
                                      "a line: remove the damaged line or rerun", 300)) from None
        if not isinstance(rec, dict):
            raise ParseError(one_line(f"{source} line {i}: not a JSON object; remove the line or rerun", 300))
        records.append(rec)
    header = records[0] if records else {}
    if header.get("available") is False:
        return {"available": False, "reason": header.get("reason") or "unknown reason", "header": header,
                "samples": [], "notes": notes}
    thresholds = _thresholds_of(header)
    samples = [_sample(r, thresholds, f"{source} line {i}") for i, r in enumerate(records, 1)
               if r.get("kind") == "sample"]
    return {"available": True, "reason": None, "header": header, "samples": samples, "notes": notes}
