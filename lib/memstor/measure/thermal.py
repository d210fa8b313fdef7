"""The drive's temperature during a long run: which tool can read it (:func:`probe`) and a background
sampler that reads it every few seconds into its own raw file (:class:`ThermalSampler`).

:func:`probe` finds the disk under a test file or a raw device with :func:`memstor.measure.drive.locate`
(through partitions, device-mapper and md), then decides: ``nvme smart-log /dev/nvmeN -o json`` for an
NVMe drive (smartctl when nvme-cli is missing), ``smartctl -j -A /dev/sdX`` otherwise; one trial reading
must show a temperature. Not available, with the reason, when the target is not on exactly one local disk,
the disk is virtual (virtio ``vd*``, Xen ``xvd*``, loop, zram, nbd, RBD, a device-mapper or md device with
no physical member), neither tool is installed, memstor is not root, smartctl cannot pass through a USB
bridge, or the output has no temperature.

The raw file is JSON lines: a header (``kind`` header, ``available`` true, device, disk, command,
thresholds_command and thresholds_raw, read once, interval_s, utc), then one ``kind`` sample line per
reading (``t_s``: seconds since the start, monotonic clock; ``utc``; ``ok``; ``raw``: the tool's output,
kept so that it can be parsed again; ``parsed``: :func:`memstor.parse.smart.parse_reading`'s dict, or
``reason`` when the reading failed) and a ``kind`` end line. When the drive cannot be read the file is the
one line ``{"available": false, "reason": ...}`` and reports say "not available (reason)".
:func:`memstor.parse.smart.parse_thermal_log` reads it back. The sampler never raises into the
measurement it watches: a failure is a failed sample or the file's reason.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from memstor.core.errors import ParseError
from memstor.core.files import utc_now
from memstor.measure.drive import locate, not_installed
from memstor.measure.sysfs import SYSTEM_ROOT, block_dir, is_nvme, nvme_controller
from memstor.measure.tools import ToolError, completed
from memstor.parse.guards import one_line
from memstor.parse.smart import parse_reading, parse_thresholds, with_thresholds

#: Seconds between two readings by default.
DEFAULT_INTERVAL_S = 5.0
#: Seconds one nvme or smartctl reading may take before it is abandoned.
READ_TIMEOUT_S = 10.0
#: What :func:`memstor.measure.sysfs.disk_label` calls a disk with no drive of its own to read.
VIRTUAL_KINDS = ("virtio disk", "Xen virtual disk", "loop device", "zram device", "RAM disk",
                 "network block device", "Ceph RBD device", "device-mapper device", "md RAID device",
                 "persistent-memory device")

#: A function that returns one reading's raw output (text) or raises with the reason.
Reader = Callable[[], str]


def _is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _messages(text: str) -> str:
    """smartctl's own messages in its JSON output (``smartctl.messages[].string``), joined; '' when none."""
    try:
        data = json.loads(text)
        found = [m.get("string") for m in data["smartctl"]["messages"] if isinstance(m, dict)]
    except (ValueError, KeyError, TypeError):
        return ""
    return "; ".join(str(m) for m in found if m)


def _run(cmd: list[str]) -> str:
    """stdout of ``cmd``, time-boxed; ToolError with a one-line reason when it cannot run or fails (for
    smartctl only exit bits 0-1 are failures; bits 2-7 are findings about the drive)."""
    res = completed(cmd, READ_TIMEOUT_S, missing=not_installed(cmd[0]))
    failed = res.returncode & 0b11 if cmd[0] == "smartctl" else res.returncode
    if failed:
        text = (res.stdout or "") + "\n" + (res.stderr or "")
        if "permission denied" in text.lower() or "operation not permitted" in text.lower():
            raise ToolError("permission denied (needs root)")
        first = _messages(res.stdout or "") or next(
            (ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip()[0] not in '{}[]"'), "no output")
        raise ToolError(one_line(f"{' '.join(cmd)} exited {res.returncode}: {first}", 300))
    return res.stdout


def _tool_for(disk: str, which: Callable[[str], str | None]) -> tuple[str | None, str]:
    """The tool to read ``disk`` (``nvme`` or ``smartctl``), or None and why."""
    if is_nvme(disk) and which("nvme"):
        return "nvme", ""
    if which("smartctl"):
        return "smartctl", ""
    if is_nvme(disk):
        return None, f"{not_installed('nvme')}; {not_installed('smartctl')}"
    return None, not_installed("smartctl")


def reading_command(disk: str, tool: str, root: Path = SYSTEM_ROOT) -> list[str]:
    """The command that reads ``disk`` with ``tool``: ``nvme smart-log /dev/nvmeN -o json`` on its
    controller, or ``smartctl -j -A /dev/DISK``."""
    if tool == "nvme":
        ctrl, _ = nvme_controller(disk, root)
        return ["nvme", "smart-log", f"/dev/{ctrl or disk}", "-o", "json"]
    return ["smartctl", "-j", "-A", f"/dev/{disk}"]


def thresholds_command(cmd: list[str]) -> list[str]:
    """The command read once for the thresholds of the drive ``cmd`` reads: ``nvme id-ctrl DEV -o json``
    (WCTEMP, CCTEMP) or ``smartctl -j -x DEV`` (NVMe thresholds, SATA SCT temperature limits)."""
    if cmd[0] == "nvme":
        return ["nvme", "id-ctrl", cmd[2], "-o", "json"]
    return ["smartctl", "-j", "-x", cmd[-1]]


def _on_usb(disk: str, root: Path) -> bool:
    folder = block_dir(disk, root)
    return folder is not None and "/usb" in str(folder)


def _trial(cmd: list[str], label: str, usb: bool) -> str:
    """Why one trial reading gives no temperature, or '' when it does."""
    try:
        reading = parse_reading(_run(cmd), " ".join(cmd))
    except (ToolError, ParseError) as err:
        if usb:
            return (f"USB bridge: smartctl cannot pass commands through to {label} ({err}); try "
                    f"`smartctl -d sat -j -A {cmd[-1]}`")
        return str(err)
    return "" if reading.get("temperature_c") is not None else f"{' '.join(cmd)} printed no temperature"


def probe(device_path: Path | str, *, raw: bool | None = None, root: Path = SYSTEM_ROOT,
          which: Callable[[str], str | None] = shutil.which, euid: int | None = None) -> tuple[list[str] | None, str]:
    """Which command reads the temperature of the drive under ``device_path`` (a test file or folder, or,
    with ``raw`` (default: when it is a block device), a raw block device): (command, what it reads) or
    (None, the reason it cannot be read). ``root``, ``which`` and ``euid`` are the sysfs tree, the PATH
    lookup and the effective user id (injectable for tests). Runs one trial reading when a tool applies.
    Never raises."""
    try:
        path = str(device_path)
        where = locate(path, raw=_is_block(path) if raw is None else raw, root=root)
        disk, label = where.get("disk"), where.get("disk_label") or where.get("disk")
        if not disk:
            return None, where.get("reason") or f"no drive found under {path}"
        kind = next((k for k in VIRTUAL_KINDS if str(label).startswith(k + " ")), None)
        if kind:
            return None, f"virtual disk {disk} ({kind}): the host's drive and its temperature are not visible here"
        tool, why = _tool_for(disk, which)
        if tool is None:
            return None, why
        if (os.geteuid() if euid is None else euid) != 0:
            return None, f"not root: reading the SMART/health log of {label} needs root (run memstor as root)"
        cmd = reading_command(disk, tool, root)
        failed = _trial(cmd, str(label), _on_usb(disk, root))
        if failed:
            return None, failed
        return cmd, f"{tool} reads {label}"
    except Exception as err:  # noqa: BLE001 - a probe answers with a reason, never an exception
        return None, one_line(f"probing the drive failed ({type(err).__name__}: {err})", 300)


def command_reader(cmd: list[str]) -> Reader:
    """A :data:`Reader` that runs ``cmd`` (time-boxed) and returns its stdout."""
    return lambda: _run(cmd)


class ThermalSampler:
    """Reads the drive's temperature every ``interval_s`` seconds in a background thread into
    ``out_path`` (JSON lines, see the module docstring), from entering the ``with`` block to leaving it.

    ``device``: the test file, folder or raw device under measurement (:func:`probe` decides the tool).
    ``reader``: a function returning one reading's raw output, used instead of probing (tests, other
    tools); ``thresholds_reader``: one returning the output read once for the thresholds (nvme id-ctrl
    or smartctl -x). ``clock``: monotonic seconds. After the block: ``available``, ``reason``,
    ``samples`` and ``failed`` (counts), ``error`` (why the file could not be written, else None).
    """

    def __init__(self, device: Path | str, out_path: Path | str, interval_s: float = DEFAULT_INTERVAL_S, *,
                 reader: Reader | None = None, thresholds_reader: Reader | None = None, root: Path = SYSTEM_ROOT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.device, self.out_path = str(device), Path(out_path)
        self.interval_s = float(interval_s) if interval_s and interval_s > 0 else DEFAULT_INTERVAL_S
        self._reader, self._thresholds_reader, self._root, self._clock = reader, thresholds_reader, root, clock
        self.available: bool = False
        self.reason: str | None = None
        self.error: str | None = None
        self.samples = self.failed = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._fh: IO[str] | None = None
        self._t0 = 0.0
        self._thresholds: dict | None = None

    def __enter__(self) -> ThermalSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _write(self, record: dict) -> None:
        with self._lock:
            if self._fh is None:
                return
            try:
                self._fh.write(json.dumps(record, default=str) + "\n")
                self._fh.flush()
            except (OSError, ValueError) as err:
                self.error = one_line(f"writing {self.out_path} failed ({err})", 300)
                self._stop.set()

    def _header(self) -> dict:
        """Probe (unless a reader was given), read the thresholds once; the header line's record."""
        header: dict[str, Any] = {"kind": "header", "available": True, "device": self.device,
                                  "interval_s": self.interval_s, "utc": utc_now(), "command": None,
                                  "thresholds_command": None, "thresholds_raw": None}
        if self._reader is None:
            cmd, why = probe(self.device, root=self._root)
            if cmd is None:
                return {"available": False, "reason": why, "device": self.device, "utc": header["utc"]}
            self._reader = command_reader(cmd)
            tcmd = thresholds_command(cmd)
            self._thresholds_reader = self._thresholds_reader or command_reader(tcmd)
            header.update(command=cmd, thresholds_command=tcmd, reason=why)
        else:
            header["reason"] = "reader given by the caller"
        if self._thresholds_reader is not None:
            try:
                raw = self._thresholds_reader()
                header["thresholds_raw"] = raw
                self._thresholds = parse_thresholds(raw, "the thresholds reading")
            except Exception as err:  # noqa: BLE001 - the thresholds are optional
                header["thresholds_error"] = one_line(f"{type(err).__name__}: {err}", 300)
        return header

    def start(self) -> None:
        """Open the raw file, probe, write the header and start the thread (or write the one-line "not
        available" record). Never raises: a failure becomes :attr:`reason` / :attr:`error`."""
        try:
            self.out_path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.out_path.open("w", encoding="utf-8")
        except OSError as err:
            self.error = self.reason = one_line(f"cannot write {self.out_path} ({err})", 300)
            return
        try:
            header = self._header()
        except Exception as err:  # noqa: BLE001 - see the docstring
            header = {"available": False, "reason": one_line(f"{type(err).__name__}: {err}", 300), "device": self.device}
        self._write(header)
        self.available, self.reason = bool(header.get("available")), header.get("reason")
        if not self.available:
            self._close()
            return
        self._t0 = self._clock()
        self._thread = threading.Thread(target=self._loop, name="memstor-thermal", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        """One reading as a sample line (a failed one with its reason)."""
        t_s = round(self._clock() - self._t0, 3)
        record: dict[str, Any] = {"kind": "sample", "t_s": t_s, "utc": utc_now(), "ok": False}
        raw = None
        try:
            assert self._reader is not None
            raw = self._reader()
            record["raw"] = raw
            record["parsed"] = with_thresholds(parse_reading(raw, f"sample at t={t_s} s"), self._thresholds)
            record["ok"] = True
        except Exception as err:  # noqa: BLE001 - a failed reading is a failed sample
            record["reason"] = one_line(f"{type(err).__name__}: {err}" if raw is None else str(err), 300)
        self.samples += 1
        self.failed += not record["ok"]
        self._write(record)

    def _loop(self) -> None:
        due = 0.0
        while not self._stop.is_set():
            self._sample()
            due += self.interval_s
            elapsed = self._clock() - self._t0
            if elapsed > due:  # a slow reading: the next one now, no burst to catch up
                due = elapsed
            if self._stop.wait(max(0.0, due - elapsed)):
                break

    def stop(self) -> None:
        """Stop the thread (waiting for a reading in progress, at most its time box), write the end line and
        close the file. Never raises."""
        try:
            self._stop.set()
            if self._thread is not None:
                self._thread.join(READ_TIMEOUT_S + self.interval_s + 1.0)
                if self._thread.is_alive():
                    self.error = "the sampler thread did not stop in time; its file may miss the end line"
                self._write({"kind": "end", "t_s": round(self._clock() - self._t0, 3), "utc": utc_now(),
                             "samples": self.samples, "failed": self.failed})
        except Exception as err:  # noqa: BLE001 - see the docstring
            self.error = one_line(f"stopping the sampler failed ({type(err).__name__}: {err})", 300)
        finally:
            self._close()

    def _close(self) -> None:
        with self._lock:
            if self._fh is not None:
                try:
                    self._fh.close()
                except OSError:
                    pass
                self._fh = None
