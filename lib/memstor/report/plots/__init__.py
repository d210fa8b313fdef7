"""Shared figure style for memstor: readable when printed, units on every axis, one `save` helper.

Use :func:`style` once (the plot functions call it), :func:`new_figure` for a figure with consistent
size, and :func:`save` to write a figure (PNG by default) atomically, creating folders as needed.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.ticker import FuncFormatter

from memstor.analysis.hosts import split_call
from memstor.core.files import atomic_write
from memstor.core.units import format_size

#: Width x height in inches of one panel (A4/letter printable at 2 panels per row).
PANEL_IN = (5.2, 3.8)
#: Dots per inch for saved figures (sharp when printed).
SAVE_DPI = 200
#: Colour-blind safe palette; markers and line styles also differ so gray-scale prints stay readable.
PALETTE = "colorblind"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("", (4, 1.5), (1, 1), (3, 1, 1, 1), (5, 1, 1, 1, 1, 1))


def style() -> None:
    """Apply the memstor style: white grid, large fonts, colour-blind palette, thick lines."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=1.05,
                  rc={"lines.linewidth": 2.0, "lines.markersize": 7, "axes.titleweight": "bold",
                      "figure.dpi": 100, "savefig.dpi": SAVE_DPI, "axes.spines.top": False,
                      "axes.spines.right": False, "legend.frameon": True, "legend.framealpha": 0.9})


def new_figure(ncols: int = 1, nrows: int = 1, sharex: bool = False, sharey: bool = False,
               scale: float = 1.0):
    """(fig, axes) with panels of PANEL_IN inches; axes is always a flat list."""
    style()
    fig, axes = plt.subplots(nrows, ncols, figsize=(PANEL_IN[0] * ncols * scale, PANEL_IN[1] * nrows * scale),
                             sharex=sharex, sharey=sharey, squeeze=False, constrained_layout=True)
    return fig, list(axes.flat)


def save(fig, path: str | Path, dpi: int = SAVE_DPI) -> Path:
    """Write `fig` to `path` (suffix picks the format; none -> .png) atomically; return the path."""
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, bbox_inches="tight", format=path.suffix.lstrip("."))
    atomic_write(path, buf.getvalue())
    return path


def per_host(draw):
    """Decorator for a figure of ONE device's table ``draw(table, *args, **kw)``: with several hosts in the
    table it draws one figure per host (DataFrame arguments with a host column restricted to that host),
    each titled with the host, and returns {host: figure}; with one host (or none) it draws as before. A
    figure never mixes devices that are not repetitions of one another (memstor.analysis.hosts)."""
    @functools.wraps(draw)
    def wrapper(table, *args, **kw):
        figures = split_call(draw, table, args, kw)
        if figures is None:
            return draw(table, *args, **kw)
        for host, fig in figures:
            title = fig.get_suptitle()
            fig.suptitle(f"{host}: {title}" if title else host)
        return dict(figures)

    return wrapper


def save_figures(figures_dir: str | Path, experiment: str, **figures) -> list[Path]:
    """The notebooks' figure-saving step: each ``name=fig`` to ``<figures_dir>/<experiment>-<name>.png``
    (underscores in the name become hyphens; a {host: figure} of :func:`per_host` to
    ``<experiment>-<name>-<host>.png``); nothing when ``figures_dir`` is empty, and nothing for a figure that
    is None (no data to draw). Returns the paths."""
    if not figures_dir:
        return []
    out = []
    for name, fig in figures.items():
        stem = f"{experiment}-{name.replace('_', '-')}"
        for host, f in (fig.items() if isinstance(fig, dict) else [("", fig)]):
            if f is not None:
                out.append(save(f, Path(figures_dir) / (f"{stem}-{host}.png" if host else f"{stem}.png")))
    return out


def plain_log(axis) -> None:
    """Plain numbers (1, 10, 200, 1000) instead of powers of ten on a log axis."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def thousands(axis) -> None:
    """Thousands separators on a linear axis (150,000 instead of 150000)."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def size_label(n_bytes: float) -> str:
    """A block size for tick labels: 4096 -> '4K', 1048576 -> '1M' (binary units, like fio's bs)."""
    return format_size(n_bytes).upper()
