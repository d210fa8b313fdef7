"""Vendor spec sheets (data/specs/*.yaml): load, validate, and compare with measured points.

A spec sheet holds values (IOPS or decimal MB/s) with their source, a confidence note and the test
conditions the vendor measured under. `compare` puts a measured value beside each spec value, with
both sides' conditions and a flag naming every condition that differs. Format: data/specs/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from memstor.core.errors import UsageError
from memstor.core.resources import resource_dir
from memstor.core.schema import missing
from memstor.core.units import size_text
from memstor.core.validate import Section

SCHEMA = "memstor-spec/1"
METRICS = {"iops": "IOPS", "bw_MBps": "MB/s"}
RW_VALUES = ("read", "write", "randread", "randwrite")
SPAN_VALUES = ("full_device", "file", "region", "unknown")  # region: the first span_bytes of a raw device
STATE_VALUES = ("steady_state", "fresh", "unknown")
#: Measured side only: preconditioned rounds that did not meet the steady-state rule.
NOT_STEADY = "not_steady"
#: Measured side only: the window rule was met but the run does not show a steady state (the window still drifts,
#: its rounds are too short: memstor.analysis.validity.gate.gate_steady), so it is not the sheet's state.
NOT_SHOWN = "steady_not_shown"
#: Measured side only: the level after the write cliff of a write-saturation run (not the PTS steady state).
SUSTAINED = "sustained"
TARGET_VALUES = ("raw_device", "filesystem_file", "unknown")
MB_VALUES = ("decimal", "binary")
CONDITION_KEYS = ("iodepth", "numjobs", "bs_bytes", "span", "state", "target", "mb", "note")
# Condition keys compared between measured and spec (the flag names these when they differ).
COMPARED = ("outstanding", "bs_bytes", "span", "state", "target", "mb")


class SpecError(UsageError):
    """A spec YAML that cannot be used; str() names the file and the field."""


@dataclass
class Conditions:
    """Test conditions of one value (spec side or measured side). None / 'unknown' = not stated.

    iodepth, numjobs: fio-style queue depth and worker count (outstanding I/O = product);
    bs_bytes: transfer size in bytes; span: full_device | file | region | unknown; span_bytes: bytes touched
    (measured side: the test file size, or a raw device's region, fio's --size); state: steady_state | fresh | unknown;
    target: raw_device | filesystem_file | unknown; mb: decimal | binary; note: free text.
    """

    iodepth: int | None = None
    numjobs: int | None = None
    bs_bytes: int | None = None
    span: str = "unknown"
    span_bytes: int | None = None
    state: str = "unknown"  # steady_state | fresh | not_steady (rule not met) | steady_not_shown | unknown
    target: str = "unknown"
    mb: str = "decimal"
    note: str = ""

    @property
    def outstanding(self) -> int | None:
        """Outstanding I/O = iodepth x numjobs (None when either is unknown)."""
        if self.iodepth is None or self.numjobs is None:
            return None
        return int(self.iodepth) * int(self.numjobs)

    def describe(self) -> str:
        """One short line, e.g. 'QD32x4=128, 4 KiB, full device, steady state, raw device, decimal MB'."""
        parts = []
        if self.outstanding is not None:
            parts.append(f"QD{self.iodepth}x{self.numjobs}={self.outstanding}")
        else:
            parts.append("QD ?")
        parts.append(size_text(self.bs_bytes) if self.bs_bytes else "bs ?")
        parts.append(span_text(self))
        parts.append(STATE_TEXT.get(self.state, "state ?"))
        parts.append({"raw_device": "raw device", "filesystem_file": "file on a filesystem"}.get(
            self.target, "target ?"))
        parts.append("decimal MB" if self.mb == "decimal" else "binary MB")
        return ", ".join(parts)


STATE_TEXT = {"steady_state": "steady state", "fresh": "fresh", NOT_STEADY: "steady state not achieved",
              NOT_SHOWN: "steady state not shown",
              SUSTAINED: "sustained (after the write cliff)"}
SPAN_TEXT = {"full_device": "full device", "file": "file span", "region": "device region"}


def span_text(c: Conditions) -> str:
    """'256 MiB file span', '256 MiB of the device' (a raw device's region, S11-loop 14: was 'span ?' though the
    run's --size was known), 'full device', 'span ?'."""
    if c.span == "file" and c.span_bytes:
        return f"{size_text(c.span_bytes)} file span"
    if c.span == "region" and c.span_bytes:
        return f"{size_text(c.span_bytes)} of the device"
    return SPAN_TEXT.get(c.span, "span ?")


def state_text(c: Conditions) -> str:
    """The state column of a comparison: 'steady state (file span)', 'fresh (file span)', 'fresh (256 MiB of the
    device)', 'steady state not achieved (full device)', 'state ? (span ?)'."""
    span = span_text(c) if c.span == "region" else SPAN_TEXT.get(c.span, "span ?")
    return f"{STATE_TEXT.get(c.state, 'state ?')} ({span})"


@dataclass
class SpecValue:
    """One spec value: metric (iops | bw_MBps) of fio workload `rw` under `conditions`."""

    id: str
    label: str
    metric: str
    rw: str
    value: float
    unit: str
    source: str
    confidence: str
    conditions: Conditions
    headline: bool = False


@dataclass
class SpecSheet:
    """A device's spec sheet: values plus facts and the availability note (from one YAML file)."""

    path: Path
    device: str
    vendor: str
    availability_note: str
    device_facts: dict = field(default_factory=dict)
    values: list = field(default_factory=list)


def _need(obj: dict, key: str, where: str, path: Path):
    """obj[key] or a SpecError naming the file and the missing field."""
    if not isinstance(obj, dict) or key not in obj or obj[key] in (None, ""):
        raise SpecError(f"{path}: {where}: missing '{key}'; see data/specs/README.md for the format")
    return obj[key]


def _section(path: Path, where: str) -> Section:
    """The validation section of one place in a spec sheet (errors name the file, the place, the way out)."""
    return Section(f"{path}: {where}", fix="fix the file; data/specs/README.md describes the format", exc=SpecError)


def _conditions(raw: dict, where: str, path: Path) -> Conditions:
    """Validate one conditions mapping."""
    v = _section(path, where)
    unknown = set(raw) - set(CONDITION_KEYS) - {"conditions"}
    if unknown:
        raise SpecError(f"{path}: {where}: unknown condition key(s) {sorted(unknown)}; "
                        f"allowed: {', '.join(CONDITION_KEYS)}")
    c = Conditions()
    for key in ("iodepth", "numjobs", "bs_bytes"):
        if raw.get(key) is not None:
            if not isinstance(raw[key], int):
                raise v.error(key, raw[key], "use a whole number >= 1")
            setattr(c, key, v.integer(key, raw[key], 1))
    for key, allowed in (("span", SPAN_VALUES), ("state", STATE_VALUES), ("target", TARGET_VALUES),
                         ("mb", MB_VALUES)):
        if raw.get(key) is not None:
            setattr(c, key, v.choice(key, raw[key], allowed))
    c.note = str(raw.get("note") or "").strip()
    return c


def load_spec(path: Path | str) -> SpecSheet:
    """Load and validate one spec YAML; SpecError (one line naming file and field) when it is unusable."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError(f"{path}: cannot read: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{path}:{line}: not valid YAML ({getattr(err, 'problem', None) or err}); "
                        "fix the file or move it out of data/specs") from None
    if not isinstance(doc, dict):
        raise SpecError(f"{path}: expected a mapping with 'device' and 'values'; see data/specs/README.md")
    if doc.get("schema", SCHEMA) != SCHEMA:
        raise SpecError(f"{path}: schema {doc.get('schema')!r} is not {SCHEMA!r}")
    device = str(_need(doc, "device", "top level", path))
    named = doc.get("conditions") or {}
    if not isinstance(named, dict):
        raise SpecError(f"{path}: 'conditions' must map names to condition sets")
    values_raw = _need(doc, "values", "top level", path)
    if not isinstance(values_raw, list) or not values_raw:
        raise SpecError(f"{path}: 'values' must be a non-empty list")
    values, seen = [], set()
    for i, v in enumerate(values_raw):
        where = f"values[{i}]"
        vid = str(_need(v, "id", where, path))
        where = f"value '{vid}'"
        if vid in seen:
            raise SpecError(f"{path}: {where}: duplicate id; every value needs its own id")
        seen.add(vid)
        check = _section(path, where)
        metric = check.choice("metric", _need(v, "metric", where, path), list(METRICS))
        rw = check.choice("rw", _need(v, "rw", where, path), list(RW_VALUES))
        number = check.number("value", _need(v, "value", where, path))
        base: dict = {}
        ref = v.get("conditions")
        if isinstance(ref, str):
            if ref not in named:
                raise SpecError(f"{path}: {where}: conditions '{ref}' not defined under 'conditions:' "
                                f"(defined: {', '.join(named) or 'none'})")
            base = dict(named[ref] or {})
        elif isinstance(ref, dict):
            base = dict(ref)
        elif ref is not None:
            raise SpecError(f"{path}: {where}: conditions must be a name or a mapping")
        base.update({k: v[k] for k in CONDITION_KEYS if k in v and k != "note"})
        values.append(SpecValue(
            id=vid,
            label=str(v.get("label") or vid),
            metric=metric,
            rw=rw,
            value=float(number),
            unit=str(v.get("unit") or METRICS[metric]),
            source=str(_need(v, "source", where, path)).strip(),
            confidence=str(_need(v, "confidence", where, path)).strip(),
            conditions=_conditions(base, where, path),
            headline=bool(v.get("headline", False)),
        ))
    return SpecSheet(
        path=path,
        device=device,
        vendor=str(doc.get("vendor") or ""),
        availability_note=" ".join(str(doc.get("availability_note") or "").split()),
        device_facts=dict(doc.get("device_facts") or {}),
        values=values,
    )


def load_specs(spec_dir: Path | str | None = None) -> list[SpecSheet]:
    """Every spec sheet (*.yaml, *.yml) in `spec_dir` (default: the shipped sheets, in the repository
    data/specs), sorted by file name; SpecError on the first bad one."""
    spec_dir = Path(spec_dir) if spec_dir is not None else resource_dir("specs")
    if not spec_dir.is_dir():
        raise SpecError(f"spec folder {spec_dir} not found; pass specs_dir= the folder holding the spec YAMLs")
    files = sorted([*spec_dir.glob("*.yaml"), *spec_dir.glob("*.yml")])
    return [load_spec(f) for f in files]


def spec_values_table(sheets: list[SpecSheet]):
    """All spec values as a DataFrame (device, id, label, metric, rw, spec value, unit, conditions, source...)."""
    import pandas as pd

    rows = []
    for s in sheets:
        for v in s.values:
            rows.append({
                "device": s.device, "id": v.id, "label": v.label, "metric": v.metric, "rw": v.rw,
                "spec": v.value, "unit": v.unit, "headline": v.headline,
                "conditions": v.conditions.describe(), "source": v.source, "confidence": v.confidence,
            })
    return pd.DataFrame(rows)


def differing_conditions(measured: Conditions, spec: Conditions) -> list[str]:
    """Names of the compared conditions that differ (or are unknown on one side)."""
    out = []
    for key in COMPARED:
        m, s = getattr(measured, key), getattr(spec, key)
        if key in ("span", "state", "target"):
            m = None if m == "unknown" else m
            s = None if s == "unknown" else s
        if m is None or s is None:
            out.append(f"{key} unknown")
        elif m != s:
            out.append(key)
    return out


def flag_text(diffs: list[str]) -> str:
    """The flag cell: 'matched' or 'differs: outstanding, span, state?' ('?' = unknown on one side)."""
    if not diffs:
        return "matched"
    return "differs: " + ", ".join(d.replace(" unknown", "?") for d in diffs)


def compare(spec: SpecValue, measured: float | None, conditions: Conditions | None,
            device: str = "", host: str = "", selection: str = "") -> dict:
    """One comparison row: measured vs spec, ratio (measured / spec), both conditions, and the flag.

    measured: the measured value in the spec's unit (IOPS or decimal MB/s), None when not measured;
    selection: how the measured point was chosen (e.g. 'spec-conditions point', 'nearest point of the sweeps').
    """
    diffs = differing_conditions(conditions, spec.conditions) if conditions is not None else []
    value = float(measured) if measured is not None and not missing(measured) else None
    has = value is not None
    return {
        "host": host,
        "device": device,
        "id": spec.id,
        "metric": spec.label,
        "unit": spec.unit,
        "measured": value,
        "spec": spec.value,
        "ratio": value / spec.value if value is not None else None,
        "measured_conditions": conditions.describe() if (conditions is not None and has) else "not measured",
        "state": state_text(conditions) if (conditions is not None and has) else "",
        "spec_conditions": spec.conditions.describe(),
        "flag": flag_text(diffs) if has else "not measured",
        "n_differ": len(diffs) if has else None,
        "selection": selection if has else "",
        "headline": spec.headline,
    }
