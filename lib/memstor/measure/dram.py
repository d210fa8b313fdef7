"""The machine's DRAM as SMBIOS describes it: ``dmidecode -t memory`` (time-boxed), parsed by
:mod:`memstor.parse.dmidecode` into the DIMMs and the peak bandwidth they imply. The ``dram`` block of
``memstor sysinfo`` (``processed/<device>/sysinfo.json``); :mod:`memstor.analysis.ceilings` holds every
memory bandwidth against it.

``dram_record()`` never raises into its caller: ``{"available": True, "source", "dmidecode_version",
"arrays", "dimms", "peak"}`` or :func:`memstor.measure.drive.not_available` with the reason: ``dmidecode not
installed (...)``, ``not root (...)``, ``no SMBIOS table (dmidecode: /dev/mem: No such file or directory):
...``, ``no SMBIOS memory devices (a VM: the hypervisor hides them)``, a time-out, or dmidecode's own line.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from memstor.core.errors import ParseError, first_line
from memstor.measure.drive import not_available
from memstor.measure.tools import ToolError, completed
from memstor.parse.dmidecode import NO_DEVICES, dram_peak, no_table_reason, parse_dmidecode_memory

#: Seconds dmidecode may take (it reads one table; a hung /dev/mem scan is abandoned).
CMD_TIMEOUT_S = 10.0
#: The command run.
COMMAND = ["dmidecode", "-t", "memory"]
#: The reason when dmidecode is missing, with the way out.
NOT_INSTALLED = "dmidecode not installed (install the dmidecode package; scripts/install-system-deps does)"
#: The reason when memstor does not run as root.
NOT_ROOT = "not root (dmidecode reads the SMBIOS table, which only root may read)"


def binary() -> str | None:
    """The dmidecode program: on PATH, else in /usr/sbin or /sbin (a normal user's PATH often lacks them)."""
    found = shutil.which(COMMAND[0])
    if found:
        return found
    return next((p for p in ("/usr/sbin/dmidecode", "/sbin/dmidecode") if os.path.isfile(p)), None)


def run_dmidecode(exe: str, timeout_s: float = CMD_TIMEOUT_S) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of ``dmidecode -t memory``; ToolError when it cannot start or takes
    longer than ``timeout_s`` seconds."""
    res = completed([exe, *COMMAND[1:]], timeout_s, missing=NOT_INSTALLED)
    return res.stdout, res.stderr, res.returncode


def record_of(stdout: str, stderr: str, returncode: int) -> dict:
    """The ``dram`` record of one dmidecode run's output (pure: text in, record out)."""
    missing = no_table_reason(stdout + "\n" + stderr)
    if missing:
        return not_available(missing)
    if "permission denied" in (stdout + stderr).lower():
        return not_available(NOT_ROOT)
    try:
        parsed = parse_dmidecode_memory(stdout)
    except ParseError as err:
        why = first_line(stderr) or str(err)
        return not_available(f"dmidecode -t memory exited {returncode}: {why}" if returncode else why)
    if not parsed["dimms"]:
        return not_available(NO_DEVICES, dmidecode_version=parsed["dmidecode_version"])
    out: dict[str, Any] = {"available": True, "source": " ".join(COMMAND), **parsed}
    out["peak"] = dram_peak(parsed["dimms"])
    return out


def is_root() -> bool:
    """True when this process runs as root (effective user id 0)."""
    return getattr(os, "geteuid", lambda: -1)() == 0


def dram_record(timeout_s: float = CMD_TIMEOUT_S) -> dict:
    """The DIMMs and the DRAM peak of this machine (see the module docstring): dmidecode runs only when it
    is installed and this process is root. Never raises."""
    try:
        exe = binary()
        if exe is None:
            return not_available(NOT_INSTALLED)
        if not is_root():
            return not_available(NOT_ROOT)
        return record_of(*run_dmidecode(exe, timeout_s))
    except ToolError as err:
        return not_available(str(err))
    except Exception as err:  # noqa: BLE001 - sysinfo never fails; a damaged table must not lose the rest
        return not_available(f"reading dmidecode failed ({type(err).__name__}: {err})")
