"""The conditions a measured fio point ran under (pure: a summary row and its host's meta sidecars in, a
memstor.analysis.specs.Conditions out): outstanding I/O, block size, span, drive state and target, for the spec
comparison and the headline's 'fresh, 256 MiB of the device'."""

from __future__ import annotations

import pandas as pd

from memstor.analysis import specs
from memstor.analysis.dataset import HostData
from memstor.core.schema import missing
from memstor.core.units import parse_size


def _meta_index(host: HostData) -> dict:
    """{point name: meta dict} for one host."""
    return {m.get("point"): m for m in host.metas}


def _command_option(cmd, name: str) -> str | None:
    """Value of --name=VALUE (or --name VALUE) in a command list."""
    if not isinstance(cmd, list):
        return None
    for i, tok in enumerate(cmd):
        tok = str(tok)
        if tok.startswith(f"--{name}="):
            return tok.split("=", 1)[1]
        if tok == f"--{name}" and i + 1 < len(cmd):
            return str(cmd[i + 1])
    return None


def measured_conditions(point: pd.Series, host: HostData) -> specs.Conditions:
    """Conditions of a measured configuration (a fio_summary row): outstanding I/O, bs, span, state, target.

    memstor points: span = the test file (size from the table or the meta sidecar), state fresh (short
    runs on a test file, no preconditioning), target from the meta's test file / fio --filename (a /dev
    path = raw device). Imported points: what the table says; span, state and target unknown."""
    c = specs.Conditions(
        iodepth=None if missing(point["iodepth"]) else int(point["iodepth"]),
        numjobs=None if missing(point["numjobs"]) else int(point["numjobs"]),
        bs_bytes=None if missing(point["bs_bytes"]) else int(point["bs_bytes"]),
        mb="decimal",
    )
    if host.kinds.get(str(point.get("experiment"))) == "fio":
        meta = _meta_index(host).get(point.get("point")) or {}
        params = meta.get("params") or {}
        filename = params.get("test_file") or _command_option(meta.get("command"), "filename") or ""
        size = point.get("file_size_bytes")
        if (missing(size) or not size) and params.get("file_size"):
            try:
                size = parse_size(str(params["file_size"]))
            except ValueError:
                size = None
        if str(filename).startswith("/dev/"):  # its --size: the first bytes of the device (S11-loop 14)
            c.target, c.span = "raw_device", "unknown" if missing(size) or not size else "region"
            c.span_bytes = None if c.span == "unknown" else int(size)
        else:
            c.target, c.span = "filesystem_file", "file"
            c.span_bytes = None if missing(size) or not size else int(size)
        c.state = "fresh"
    return c
