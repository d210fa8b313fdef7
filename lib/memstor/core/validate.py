"""One validation layer for every parameter section (profiles, notebook parameters, ``--set``): each check
returns the typed value or raises a one-line UsageError naming the section, the parameter, the value,
what is allowed and where to fix it::

    fio-block-size: parameter iodepth=0 is invalid: use an integer 1..65536 (fix params/<profile>.yaml,
    the notebook parameter or --set iodepth=...)

Chosen over pydantic models by lines of code (the checks are a few plain functions) and message quality
(pydantic's errors name the model and list locations; these name the user's parameter and the way out).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memstor.core.errors import UsageError
from memstor.core.units import format_size, parse_size

#: Where a profile parameter is fixed; ``{key}`` is the parameter's name.
PROFILE_FIX = "fix params/<profile>.yaml, the notebook parameter or --set {key}=..."
#: Seconds longer than this (a week) are refused as a typo.
MAX_SECONDS = 7 * 86400


@dataclass(frozen=True)
class Section:
    """The parameter section being checked (e.g. an experiment's profile section)."""

    name: str
    fix: str = PROFILE_FIX
    exc: type = UsageError  # a UsageError subclass (e.g. the spec sheets' SpecError)

    def error(self, key: str, value: Any, want: str) -> UsageError:
        """The one-line error for a bad value of ``key``."""
        return self.exc(f"{self.name}: parameter {key}={value!r} is invalid: {want} ({self.fix.format(key=key)})")

    def number(self, key: str, value: Any, positive: bool = True) -> float:
        """A finite number, > 0 when ``positive`` (a bool is not a number)."""
        want = "use a number > 0" if positive else "use a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or (positive and value <= 0):
            raise self.error(key, value, want)
        return float(value)

    def keys(self, params: Any, known: Sequence[str], optional: Sequence[str] = (),
             ignored: Sequence[str] = ("profile",), required: bool = True) -> dict:
        """``params`` as a dict; UsageError for a non-mapping, an unknown key, or (``required``) a missing one."""
        if not isinstance(params, dict):
            raise UsageError(f"{self.name}: parameters must be a mapping (the profile section), got "
                             f"{type(params).__name__}")
        for key in params:
            if key not in known and key not in optional and key not in ignored:
                raise UsageError(f"{self.name}: unknown parameter {key!r}; known: "
                                 f"{', '.join(sorted([*known, *optional]))}")
        if required:
            for key in known:
                if key not in params:
                    raise UsageError(f"{self.name}: missing parameter {key!r}; add it to the profile section "
                                     f"(see params/standard.yaml)")
        return params

    def integer(self, key: str, value: Any, lo: int = 0, hi: int | None = None, want: str = "") -> int:
        """A whole number in lo..hi (an integral float or a digit string is accepted; a bool is not)."""
        want = want or (f"use an integer {lo}..{hi}" if hi is not None else f"use a whole number >= {lo}")
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value.strip()) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            raise self.error(key, value, want) from None
        if not math.isfinite(number) or not number.is_integer() or number < lo or (hi is not None and number > hi):
            raise self.error(key, value, want)
        return int(number)

    def seconds(self, key: str, value: Any, positive: bool = True) -> float:
        """A number of seconds: > 0 (``positive``) or >= 0, at most a week; whole numbers come back as int."""
        want = "use a number of seconds > 0" if positive else "use a number of seconds >= 0"
        try:
            if isinstance(value, bool):
                raise ValueError
            x = float(value)
        except (TypeError, ValueError):
            raise self.error(key, value, want) from None
        if not math.isfinite(x) or x < 0 or (positive and x == 0) or x > MAX_SECONDS:
            raise self.error(key, value, want)
        return int(x) if x == int(x) else x

    def size(self, key: str, value: Any) -> tuple[str, int]:
        """(normalised fio size string, bytes) of a size like 4k, 64k, 1m (k/m/g = KiB/MiB/GiB), > 0."""
        want = "use a size > 0 like 4k, 64k, 1m (k/m/g = KiB/MiB/GiB)"
        if isinstance(value, bool):
            raise self.error(key, value, want)
        try:
            n = int(value) if isinstance(value, int) else parse_size(str(value).strip())
        except (TypeError, ValueError):
            raise self.error(key, value, want) from None
        if n <= 0:
            raise self.error(key, value, want)
        return format_size(n), n

    def items(self, key: str, value: Any, allow_empty: bool = False) -> list:
        """A list parameter (a scalar is a one-item list); at least one value unless ``allow_empty``."""
        if value is None or value == "":
            value = []
        if not isinstance(value, (list, tuple)):
            value = [value]
        if not value and not allow_empty:
            raise self.error(key, value, "give at least one value")
        return list(value)

    def unique(self, key: str, values: Iterable) -> tuple:
        """``values`` in their order; UsageError when one appears twice (a repeated point is a typo)."""
        out: list = []
        for v in values:
            if v in out:
                raise self.error(key, v, "it appears twice; list each value once")
            out.append(v)
        return tuple(out)

    def choice(self, key: str, value: Any, allowed: Sequence[str]) -> str:
        """A value out of ``allowed`` (surrounding spaces ignored)."""
        if not isinstance(value, str) or value.strip() not in allowed:
            raise self.error(key, value, f"choose one of {', '.join(allowed)}")
        return value.strip()

    def boolean(self, key: str, value: Any) -> bool:
        """true/false (also 1/0, yes/no, on/off as YAML, --set and papermill give them)."""
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise self.error(key, value, "use true or false")
