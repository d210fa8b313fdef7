"""The memory loaded-latency figure's panels and captions (memstor.report.plots.synthesis.memory_figure draws them):
which panels there are, which marks a panel carries, and a caption that promises only what is drawn; a panel whose
every point failed the quality gate is one no finding is read from (the PDF names it and leaves it to the HTML)."""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.curves import HOOK, PLATEAU
from memstor.analysis.memory_curves import all_failed_words
from memstor.core.schema import missing

#: Caption clause per mark drawn on the memory figure, in order.
MEMORY_CAPTION = {"plateau": "plateau points outlined", "hook": "hook points hollow",
                  "fit": "the open-queue model dashed over its fit range", "2r0": "a star where latency reaches 2·R0",
                  "gate": "× over a point whose run failed memstor's quality gate"}


def memory_marks(curves: pd.DataFrame | None, fits: dict, panel: tuple[str, float]) -> set:
    """The marks :func:`memory_figure` draws on one panel (keys of :data:`MEMORY_CAPTION`), without drawing."""
    if curves is None or curves.empty:
        return set()
    host = curves["host"].map(lambda v: "?" if missing(v) else str(v))
    acc = curves["access_bytes"].map(lambda v: -1.0 if missing(v) else float(v))
    p = curves[(host == panel[0]) & (acc == panel[1])]
    marks = {"gate"} if (pd.to_numeric(p.get("gate_failed", pd.Series(0, index=p.index)), errors="coerce")
                         .fillna(0) > 0).any() else set()
    for curve in p["curve"].unique():
        f = fits.get((panel[0], curve))
        if f is None:
            continue
        marks |= {"hook"} if (f.role == HOOK).any() else set()
        marks |= {"plateau"} if (f.role == PLATEAU).any() else set()
        marks |= {"fit"} if f.identifiable and f.x_fit_range[1] == f.x_fit_range[1] else set()
        marks |= {"2r0"} if f.x_at_level.get(2.0, (math.nan, ""))[0] == f.x_at_level.get(2.0, (math.nan, ""))[0] \
            else set()
    return marks


def memory_caption(curves: pd.DataFrame | None, fits: dict, panel: tuple[str, float]) -> str:
    """The caption's promise for one memory panel: only what is drawn (S6-bare C-11, R-loop 9.2: 'plateau points
    outlined, hook points hollow, the open-queue model dashed' under curves with none of them)."""
    marks = memory_marks(curves, fits, panel)
    said = [text for key, text in MEMORY_CAPTION.items() if key in marks]
    absent = [k for k in ("plateau", "hook", "fit") if k not in marks]
    names = [{"fit": "model"}.get(k, k) for k in absent]
    none = ("; no " + " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
            + " in these curves") if absent else ""
    every = all_failed_words(curves, panel)
    return (": " + ", ".join(said) if said else "") + none + (f"; {every}" if every else "") + "."


def memory_figure_caption(curves: pd.DataFrame | None, fits: dict, panel: tuple[str, float]) -> str:
    """One memory panel's whole caption: 'Memory loaded latency (ns) against bandwidth (GB/s)', its access size
    where the report draws several panels, and :func:`memory_caption`."""
    several = len(memory_panels(curves)) > 1 and panel[1] >= 0
    return ("Memory loaded latency (ns) against bandwidth (GB/s)" + (f", {int(panel[1])} B accesses" if several else "")
            + memory_caption(curves, fits, panel))


def panel_all_failed(curves: pd.DataFrame | None, panel: tuple[str, float]) -> bool:
    """Whether every point of the memory panel failed its quality gate: a figure no finding is read from (the
    PDF names it and leaves it to the HTML)."""
    return bool(all_failed_words(curves, panel))


def memory_panels(curves: pd.DataFrame | None) -> list[tuple[str, float]]:
    """The memory figure's panels, (host, access bytes; -1 unknown), in its order: the report shows one figure per
    panel (two panels, their legends beside them, printed 0.54 in wide in the print box)."""
    if curves is None or curves.empty:
        return []
    return sorted({("?" if missing(h) else str(h), -1.0 if missing(a) else float(a))
                   for h, a in zip(curves["host"], curves["access_bytes"])})
