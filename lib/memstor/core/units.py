"""Sizes and durations exactly as fio reads them (job options), and fio-style size strings.

fio's size parser (parse.c, ``get_mult_bytes``) reads a leading integer (``strtoll``: decimal or
``0x`` hex) and a unit taken from the first letters after the digits. With fio's default
``kb_base=1024`` the plain prefixes are powers of two (``4k`` = ``4K`` = ``4kb`` = 4096 bytes) and
the IEC ones are -- for compatibility with old job files -- powers of ten (``4KiB`` = 4000 bytes).
With ``kb_base=1000`` it is the other way round. Anything after a non-digit that is not a letter is
ignored (``1.5k`` is read by fio as 1 byte), and we reproduce that on purpose.
"""

from __future__ import annotations

import math
import re

_SIZE_RE = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|\d+)(.*)\Z", re.S)
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SUFFIXES = ((5, "p"), (4, "t"), (3, "g"), (2, "m"), (1, "k"))


def _unit_multiplier(rest: str, kb_base: int) -> int:
    """Bytes per unit for the text that follows the digits (fio's ``__get_mult_bytes``)."""
    if not rest[:1].isalpha():
        if rest[:1] == "%":
            raise ValueError("a percentage is not a byte count")
        return 1
    unit = rest.split()[0].lower()
    if len(unit) >= 3 and unit[1:3] == "ib" and unit[0] in _POWERS:
        other = 1000 if kb_base == 1024 else 1024  # IEC prefix means the *other* base
        return other ** _POWERS[unit[0]]
    if unit[0] in _POWERS:
        return kb_base ** _POWERS[unit[0]]
    return 1  # fio ignores unknown letters ("4096b" = 4096 bytes)


def parse_size(text: str, kb_base: int = 1024) -> int:
    """Bytes of a fio size string (``4k`` -> 4096, ``1m`` -> 1048576, ``4KiB`` -> 4000, ``512`` -> 512).

    ``kb_base`` is fio's option of the same name (1024 default, or 1000). Raises ValueError when the
    text does not start with a number or is a percentage (``100%``).
    """
    if kb_base not in (1000, 1024):
        raise ValueError(f"kb_base must be 1000 or 1024, not {kb_base}")
    match = _SIZE_RE.match(str(text))
    if not match:
        raise ValueError(f"not a fio size: {text!r} (expected e.g. 4k, 1m, 4096)")
    sign, digits, rest = match.groups()
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    if digits[:2].lower() == "0x":
        rest = ""
    value *= _unit_multiplier(rest, kb_base)
    if value >= 1 << 63:  # fio reads sizes into a signed 64-bit integer
        raise ValueError(f"not a fio size: {str(text)[:40]!r} is larger than 2^63 bytes")
    return -value if sign == "-" else value


def format_size(n_bytes: float) -> str:
    """Shortest exact fio size string for a byte count (4096 -> ``4k``, 1048576 -> ``1m``, 1000 -> ``1000``)."""
    n = int(n_bytes)
    if n <= 0:
        return str(n)
    for power, suffix in _SUFFIXES:
        unit = 1024**power
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


_IEC_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def size_text(n_bytes: float) -> str:
    """Bytes for people (messages, captions) in the largest binary unit reached: 4096 -> ``4 KiB``,
    2**30 -> ``1 GiB``, 1.5 * 2**30 -> ``1.5 GiB`` (one decimal unless whole; two where they are exact and one would
    misstate it, as a cache of 1.25 MiB, eighth read S12-loop 9: '1.2 MiB'), 100 -> ``100 B``."""
    n = float(n_bytes)
    for unit, scale in _IEC_UNITS:
        if abs(n) >= scale:
            q = n / scale
            if q.is_integer():
                return f"{q:.0f} {unit}"
            exact = (100 * q).is_integer() and abs(float(f"{q:.1f}") - q) > 0.01 * q  # off by more than 1 %
            return f"{q:.2f} {unit}" if exact else f"{q:.1f} {unit}"
    return f"{n:.0f} B"


_TIME_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*\Z")
_TIME_UNITS_S = {
    "": 1.0, "s": 1.0, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3,
    "m": 60.0, "h": 3600.0, "d": 86400.0,
}


def parse_duration_s(text: str | float | int) -> float:
    """Seconds of a fio time value (``10`` and ``10s`` -> 10.0, ``500ms`` -> 0.5, ``1m`` -> 60.0).

    fio's units: us/usec, ms/msec, s, m (minutes), h, d; no unit means seconds. Unlike fio (which
    truncates to an integer and reads an unknown unit as microseconds) a fraction is kept and an
    unknown unit raises ValueError.
    """
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        match = _TIME_RE.match(str(text))
        unit = match.group(2).lower() if match else None
        if not match or unit not in _TIME_UNITS_S:
            raise ValueError(f"not a fio time: {text!r} (expected e.g. 10, 10s, 500ms, 1m)")
        seconds = float(match.group(1)) * _TIME_UNITS_S[unit]
    if not math.isfinite(seconds):
        raise ValueError(f"not a fio time: {text!r} (not a finite number of seconds)")
    return seconds
