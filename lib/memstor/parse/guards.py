"""What stands between a damaged input and the user, shared by the parsers of this package.

Error messages are forced onto one printable line (a damaged file can put CR, NUL or terminal escapes
into a message), impossible cells are emptied and named, and ``DAMAGE`` lists the exceptions a damaged
file can raise inside a parser (caught and reported, never a traceback for users). Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable

# Exceptions a damaged file can raise inside the parsers (never a traceback for users).
DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, ZeroDivisionError)


def one_line(text, limit: int | None = None, *, printable_only: bool = True, ellipsis: bool = False) -> str:
    """``text`` as one line of at most ``limit`` characters (None: any length), runs of white space
    folded to one space.

    ``printable_only``: every non-printable character (control characters, escapes) becomes a space
    first. ``ellipsis``: a line longer than ``limit`` is cut to ``limit - 3`` characters plus ``...``
    instead of being cut at ``limit``.
    """
    text = str(text)
    if printable_only:
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = " ".join(text.split())
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..." if ellipsis else text[:limit]


def empty_cells(row: dict, bad: Callable[[str, object], bool]) -> str | None:
    """Set to None every cell of ``row`` for which ``bad(column, value)`` is true.

    Returns ``"column=value, ..."`` naming the cells emptied (with their old values, for an error
    line), or None when none was.
    """
    columns = [c for c, v in row.items() if bad(c, v)]
    if not columns:
        return None
    shown = ", ".join(f"{c}={row[c]!r}" for c in columns)
    for c in columns:
        row[c] = None
    return shown
