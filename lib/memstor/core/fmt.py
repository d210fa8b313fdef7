"""Numbers and intervals as the report, the notebooks and the benchmarks show them (one rule each).

Missing is `memstor.core.schema.missing`: None, NaN and ±inf show as '–'.
"""

from __future__ import annotations

from memstor.core.schema import missing


def fmt_number(v: float | None) -> str:
    """A number for tables: thousands separators, about 3-4 significant digits; '–' for missing."""
    if v is None or missing(v):
        return "–"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def fmt_ci(v: float, lo, hi) -> str:
    """'value ± half-width' of a 95 % interval, or the value alone without one (n = 1)."""
    if missing(lo) or missing(hi):
        return fmt_number(v)
    return f"{fmt_number(v)} ± {fmt_number((float(hi) - float(lo)) / 2)}"


def fmt_interval(v, lo, hi) -> str:
    """'value [low, high]' (a 95 % interval), or the value alone when the interval is unknown."""
    if missing(v):
        return "–"
    if missing(lo) or missing(hi):
        return fmt_number(v)
    return f"{fmt_number(v)} [{fmt_number(lo)}, {fmt_number(hi)}]"


def fmt_se(v, se) -> str:
    """'value ± standard error' (or the value alone when the error is unknown)."""
    if missing(v):
        return "–"
    return fmt_number(v) if missing(se) else f"{fmt_number(v)} ± {fmt_number(se)}"


def md_escape(text: str) -> str:
    """Text that markdown shows as is (file names with _ or * inside bold sentences)."""
    return "".join("\\" + c if c in "\\`*_[]<>#" else c for c in text)


def fixed(v, digits: int) -> str:
    """A number with thousands separators and fixed decimals; '–' when missing."""
    if missing(v):
        return "–"
    return f"{float(v):,.{digits}f}"


def ci_text(v, lo, hi, digits: int, unit: str) -> str:
    """'95.5 ns [92.6, 98.4]' (the value alone when its interval is unknown; unit '' gives '95.5 [92.6, 98.4]')."""
    if missing(v):
        return "–"
    known = not (missing(lo) or missing(hi))
    value = f"{fixed(v, digits)} {unit}" if unit else fixed(v, digits)
    return value + (f" [{fixed(lo, digits)}, {fixed(hi, digits)}]" if known else "")


def plain(v) -> str:
    """A value as recorded, without rounding: a whole float without its '.0' (``45.0`` -> '45'), else str()."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def and_join(names) -> str:
    """'A', 'A and B', 'A, B and C' ('' for none)."""
    names = [str(x) for x in names]
    return "".join(names) if len(names) < 2 else ", ".join(names[:-1]) + " and " + names[-1]
