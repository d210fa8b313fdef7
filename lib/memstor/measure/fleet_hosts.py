"""Host files of fleet runs (issue 20): a YAML list of machines that `memstor run --hosts FILE` measures at once.

```yaml
hosts:
  - ssh: root@node1            # SSH destination; optional port: and identity_file:
    target: /mnt/nvme/memstor  # directory for memstor's test file there (or device: + confirm_device:)
    label: node1-nvme          # device name in data/ and the report (default: the SSH host name)
    memstor: memstor           # optional: the command that runs memstor there
    known_hosts: /path/known_hosts  # optional: check the host's SSH key against this file only
```

:func:`load_hosts` returns typed :class:`Host` entries or raises :class:`UsageError` with one line naming the
file, the host entry (1-based, with its label or SSH destination) and the key, e.g.
``hosts.yaml: host 2 (node2): target: must be an absolute path, got 'scratch'``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memstor.core.errors import UsageError

_KEYS = {"ssh", "port", "identity_file", "known_hosts", "target", "device", "confirm_device", "label", "memstor"}
#: A label becomes a folder name under data/raw and data/processed.
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: user@host or host; host a name, IPv4 or [IPv6]. No spaces, no leading '-' (never an ssh option).
_SSH = re.compile(r"^(?:[A-Za-z0-9._][A-Za-z0-9._-]*@)?(?:[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\])$")


@dataclass(frozen=True)
class Host:
    """One machine of a fleet run.

    ssh: SSH destination (``user@host``); port: SSH port (None: ssh's default); identity_file: private key
    (absolute, local); target: directory for memstor's test file on that host, or None when ``device`` is set;
    device: raw device path (only with confirm_device equal to it); label: device name in data/ and the report;
    memstor: the command that runs memstor on the host (a shell word list, e.g. ``/opt/memstor/.venv/bin/memstor``);
    known_hosts: a known-hosts file (absolute, local): the host's key is checked against it alone
    (StrictHostKeyChecking=yes), else ssh's own configuration decides.
    """

    ssh: str
    label: str
    target: str | None = None
    device: str | None = None
    port: int | None = None
    identity_file: str | None = None
    memstor: str = "memstor"
    known_hosts: str | None = None

    @property
    def hostname(self) -> str:
        """The host part of the SSH destination (without user@ and [])."""
        return self.ssh.rpartition("@")[2].strip("[]")

    def ssh_args(self) -> list[str]:
        """ssh options selecting this host's port and key (before the destination)."""
        args: list[str] = []
        if self.port is not None:
            args += ["-p", str(self.port)]
        if self.identity_file is not None:
            args += ["-i", self.identity_file, "-o", "IdentitiesOnly=yes"]
        if self.known_hosts is not None:
            args += ["-o", f"UserKnownHostsFile={self.known_hosts}", "-o", "StrictHostKeyChecking=yes"]
        return args


class _Bad(Exception):
    def __init__(self, key: str, msg: str):
        super().__init__(f"{key}: {msg}")


def _string(entry: dict, key: str, required: bool = False) -> str | None:
    v = entry.get(key)
    if v is None:
        if required:
            raise _Bad(key, "missing (required)")
        return None
    if not isinstance(v, str) or not v.strip():
        raise _Bad(key, f"must be a non-empty string, got {v!r}")
    return v.strip()


def _abs(entry: dict, key: str) -> str | None:
    v = _string(entry, key)
    if v is not None and not v.startswith("/"):
        raise _Bad(key, f"must be an absolute path, got {v!r}")
    return v


def _local_file(entry: dict, key: str) -> str | None:
    v = _string(entry, key)
    if v is None:
        return None
    v = str(Path(v).expanduser())
    if not Path(v).is_file():
        raise _Bad(key, f"no such file {v} (a file on this machine)")
    return v


def _host(entry: Any) -> Host:
    if not isinstance(entry, dict):
        raise _Bad("entry", f"must be a mapping with at least ssh: and target: (or device:), got {entry!r}")
    unknown = sorted(set(map(str, entry)) - _KEYS)
    if unknown:
        raise _Bad(unknown[0], f"unknown key (known: {', '.join(sorted(_KEYS))})")
    ssh = _string(entry, "ssh", required=True)
    assert ssh is not None  # required: _string raised when it is missing
    if not _SSH.match(ssh):
        raise _Bad("ssh", f"not an SSH destination like user@host, got {ssh!r}")
    port = entry.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise _Bad("port", f"must be an integer 1..65535, got {port!r}")
    identity, known = _local_file(entry, "identity_file"), _local_file(entry, "known_hosts")
    target = _abs(entry, "target")
    device = _abs(entry, "device")
    confirm = _abs(entry, "confirm_device")
    if target and device:
        raise _Bad("device", "give either target: (a directory) or device:, not both")
    if not target and not device:
        raise _Bad("target", "missing: give target: (a directory on that host) or device: + confirm_device:")
    if device and confirm != device:
        raise _Bad("confirm_device", f"a raw device is written only when named twice: set confirm_device: {device}")
    if confirm and not device:
        raise _Bad("confirm_device", "given without device:")
    label = _string(entry, "label") or ssh.rpartition("@")[2].strip("[]")
    if not _LABEL.match(label):
        raise _Bad("label", f"must be letters, digits, '.', '_' or '-' (a folder name), got {label!r}")
    memstor = _string(entry, "memstor") or "memstor"
    return Host(ssh=ssh, label=label, target=target, device=device, port=port, identity_file=identity,
                memstor=memstor, known_hosts=known)


def parse_hosts(doc: Any, source: str = "hosts") -> list[Host]:
    """Typed hosts of a loaded host-file document; ``source`` names the file in errors."""
    if not isinstance(doc, dict) or "hosts" not in doc:
        raise UsageError(f"{source}: expected a mapping with a 'hosts:' list")
    extra = sorted(set(map(str, doc)) - {"hosts"})
    if extra:
        raise UsageError(f"{source}: {extra[0]}: unknown top-level key (only 'hosts:')")
    entries = doc["hosts"]
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{source}: hosts: must be a non-empty list")
    hosts: list[Host] = []
    for i, entry in enumerate(entries, 1):
        name = ""
        if isinstance(entry, dict):
            name = str(entry.get("label") or entry.get("ssh") or "")
        where = f"{source}: host {i}" + (f" ({name})" if name else "")
        try:
            hosts.append(_host(entry))
        except _Bad as e:
            raise UsageError(f"{where}: {e}") from None
    seen: dict[str, int] = {}
    for i, h in enumerate(hosts, 1):
        if h.label in seen:
            raise UsageError(f"{source}: host {i} ({h.label}): label: same as host {seen[h.label]}; "
                             "give each host its own label:")
        seen[h.label] = i
    return hosts


def load_hosts(path: Path | str) -> list[Host]:
    """Read and validate a host file; UsageError (one line naming the file) when unreadable or invalid."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"{path}: cannot read host file ({e.strerror or e})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}: not valid YAML{at}") from None
    return parse_hosts(doc, str(path))
