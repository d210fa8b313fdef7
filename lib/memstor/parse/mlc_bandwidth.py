"""MLC peak injection bandwidth and max bandwidth rows (``--peak_injection_bandwidth``, ``--max_bandwidth``).

Rows look like ``ALL Reads        :\t144906.6`` ... ``Stream-triad like:\t98765.4``: one bandwidth
in decimal MB/s (1e6 bytes/s) per traffic mix. The traffic of a known label comes from
``memstor.core.schema.PEAK_ROW_TRAFFIC`` (read fraction = share of bytes read, 0..1); another label that
names reads/writes/triad/copy inside such a section takes its traffic from the command line. The rows
are also read without their ``Measuring`` heading (loadlat prints them bare); the section is then
chosen from the run's mode. On the last line of a text without a final newline a value with fewer
decimals than printed is taken as cut and dropped. Pure functions of the reader's state.
"""

from __future__ import annotations

import re
from typing import Any

from memstor.core.schema import PEAK_ROW_TRAFFIC
from memstor.parse.mlc_header import LABEL_FRACTION, parse_options
from memstor.parse.mlc_state import Reader

_PEAK_RE = re.compile(r"^\s*(?P<label>\S.*?)\s*:\s*(?P<val>[0-9]+(?:\.[0-9]+)?)\s*$")
_PEAK_WORD_RE = re.compile(r"read|write|triad|copy|\bnt\b", re.IGNORECASE)


def peak_line(r: Reader, stripped: str, last: bool) -> bool:
    """``ALL Reads        :\\t144906.6``-style rows of peak injection / max bandwidth; False for others."""
    run = r.run
    m = _PEAK_RE.match(stripped)
    if not m:
        return False
    label = " ".join(m.group("label").split())
    in_section = run.section in ("peak_injection_bandwidth", "max_bandwidth")
    if label not in PEAK_ROW_TRAFFIC and not (in_section and _PEAK_WORD_RE.search(label)):
        return False
    if not in_section:
        mode = parse_options(run.cmdline or run.prompt_args).mode
        r.start_section("max_bandwidth" if mode == "max_bandwidth" else "peak_injection_bandwidth")
    if r.cut(m.group("val"), last):
        return True  # the text ends inside the number
    traffic = PEAK_ROW_TRAFFIC.get(label)
    values: dict[str, Any] = {"bandwidth_MBps": float(m.group("val"))}
    if traffic is not None:
        values.update(traffic=traffic, read_fraction=LABEL_FRACTION.get(traffic), traffic_from="row")
    else:
        values.update(traffic_from="command", detail=[f"row '{label}'"])
    assert run.section is not None  # one of the two bandwidth sections (started above if need be)
    r.add(run.section, **values)
    return True
