"""Errors that reach users as one line (no traceback without --debug)."""


class MemstorError(Exception):
    """A problem the user can act on. str(err) is a single line: what, where, and the way out."""


class ParseError(MemstorError):
    """A file (or part of one) held no measurement memstor can read."""


class UsageError(MemstorError):
    """A bad parameter, profile, experiment name or path given by the user (CLI exit status 2)."""


class NotOnThisMachine(UsageError):
    """This machine cannot run a family as asked (one CPU where a load thread needs its own core, too little
    memory for the smallest buffers); the CLI exits 3 with the reason and ``make all`` goes on without it."""


class UnsafeTarget(MemstorError):
    """A storage target memstor refuses to write to (device, foreign file, no room...)."""


class PointFailed(MemstorError):
    """One measurement point of a sweep failed; the sweep records it and goes on."""

    #: The runner's meta of the point (command line...), when the runner that raised it set it: the sweep
    #: records it with the failure (``getattr(err, "meta", {})``: an error without it has no such attribute).
    meta: dict


class Interrupted(MemstorError):
    """The user interrupted a run (Ctrl-C); completed points are kept and a rerun resumes (exit 130)."""


def first_line(text: object) -> str:
    """The first non-empty line of ``str(text)``, stripped ("" when there is none): what of an error message
    reaches users (one line). To fold a whole text into one line instead: memstor.parse.guards.one_line."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""
