"""``one_target``: every storage experiment of a device measured the same target, the one its sysinfo.json (which
page 1 names) describes (issue 38, seventh read S11-loop 2: ``make all DEVICE=/dev/loop0`` measured the mixed-load
map on the scratch file of ext4 on vda, and its sysinfo.json, written last, made page 1 name 'virtio disk vda, ext4
on /' for a run whose other nine storage experiments measured /dev/loop0).

The target of a point is its meta sidecar's ``device`` record (kind and kernel name: memstor.measure.device). The
device's target is the one most of its storage points measured. Value: the share of an experiment's points on that
target, band [1, 1] (a share cannot exceed 1; below it some points measured another target: fail, with both named).
The sysinfo.json row's value is 1 where its device record is that target, else 0 (fail: page 1 names another
target than the points'). A point without a device record (measured before memstor kept one): its experiment is
unchecked, with the count.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from memstor.analysis.dataset import Dataset
from memstor.analysis.validity.rows import FAIL, PASS, row, unchecked

_SECTION = "storage_points"
_UNIT = "share of points"
#: Meta ``device.kind`` of the memory experiments' points: no storage target.
MEMORY_KIND = "memory"


def target_of(device: dict | None) -> tuple | None:
    """(kind, kernel name) of a meta's or sysinfo's ``device`` record: the drive measured (a file's path within one
    file system is the same drive); None without one or for memory."""
    if not isinstance(device, dict) or not device.get("kind") or device.get("kind") == MEMORY_KIND:
        return None
    return (str(device.get("kind")), str(device.get("kernel_name") or "?"))


def target_words(t: tuple) -> str:
    """'/dev/loop0 (raw device)' or 'a file on vda (filesystem)' of a target_of tuple."""
    kind, kernel = t
    return f"/dev/{kernel} (raw device)" if kind == "raw-device" else f"a file on {kernel} ({kind})"


def target_rows(metas: list[dict] | None, sysinfo: dict | None = None) -> list[dict]:
    """one_target rows per device: one per storage experiment (its points' share on the device's target) and one
    for sysinfo.json where it has a device record. ``metas``: Dataset.metas (each with ``host`` and ``experiment``);
    ``sysinfo``: {host: its sysinfo.json dict}."""
    by_host: dict[str, dict[str, list]] = {}
    for m in metas or []:
        if isinstance(m.get("device"), dict) and m["device"].get("kind") == MEMORY_KIND:
            continue
        exp = str(m.get("experiment") or "")
        if not exp or exp.startswith(("mlc-", "mem-")):
            continue
        by_host.setdefault(str(m.get("host")), {}).setdefault(exp, []).append(target_of(m.get("device")))
    out = []
    for host, exps in sorted(by_host.items()):
        counts = Counter(t for ts in exps.values() for t in ts if t is not None)
        main, n_main = counts.most_common(1)[0] if counts else (None, 0)
        out += [_experiment_row(host, exp, ts, main) for exp, ts in sorted(exps.items())]
        sys_target = target_of(((sysinfo or {}).get(host) or {}).get("device"))
        if main is not None and sys_target is not None:
            out.append(_sysinfo_row(host, sys_target, main, n_main, sum(counts.values())))
    return out


def off_target(metas: list[dict] | None, sysinfo: dict | None = None) -> set[tuple[str, str]]:
    """{(host, experiment)} whose one_target failed: their points are left out of the report's tables."""
    return {(r["host"], r["subject"]) for r in target_rows(metas, sysinfo)
            if r["status"] == FAIL and r["subject"] != "sysinfo.json"}


def _experiment_row(host: str, exp: str, targets: list, main: tuple | None) -> dict:
    known = [t for t in targets if t is not None]
    if main is None or not known:
        return unchecked(host, "one_target", exp, f"none of its {len(targets)} points recorded its target (measured "
                         "before memstor kept one)", _SECTION, _UNIT, low=1, high=1)
    share = sum(t == main for t in known) / len(known)
    if share == 1:
        return row(host, "one_target", exp, PASS, 1.0, 1, _UNIT, f"all {len(known)} points on "
                   f"{target_words(main)}", "", _SECTION, low=1, high=1)
    others = Counter(t for t in known if t != main)
    said = ", ".join(f"{n} on {target_words(t)}" for t, n in others.most_common())
    return row(host, "one_target", exp, FAIL, share, 1, _UNIT,
               f"{said} of its {len(known)} points, while the device's storage points measured "
               f"{target_words(main)}", f"{exp}'s points measured another target than the device's: they are left "
               "out of every table, figure and finding of this report (the raw data stays in data/)", _SECTION, low=1, high=1)


def _sysinfo_row(host: str, sys_target: tuple, main: tuple, n_main: int, n_all: int) -> dict:
    if sys_target == main:
        return row(host, "one_target", "sysinfo.json", PASS, 1.0, 1, _UNIT, f"names {target_words(main)}, the target "
                   f"of {n_main} of {n_all} storage points", "", _SECTION, low=1, high=1)
    return row(host, "one_target", "sysinfo.json", FAIL, 0.0, 1, _UNIT,
               f"names {target_words(sys_target)} while {n_main} of {n_all} storage points measured "
               f"{target_words(main)}", "the target page 1 names is not the one most points measured: read the "
               "target from the methods section's commands", _SECTION, low=1, high=1)


def on_target(ds: Dataset) -> Dataset:
    """The dataset without the fio rows of an experiment whose points measured another target than its device's
    (one_target failed: memstor.analysis.validity.targets; seventh read S11-loop 2: the mixed-load map on ext4 on vda
    beside nine experiments on /dev/loop0); the validity table names them, the raw data stays."""
    off = off_target(ds.metas, {h.name: h.sysinfo for h in ds.hosts})
    if not off or ds.fio.empty:
        return ds
    keep = [(str(h), str(t)) not in off for h, t in zip(ds.fio["host"], ds.fio["table"], strict=True)]
    return replace(ds, fio=ds.fio[keep].reset_index(drop=True))
