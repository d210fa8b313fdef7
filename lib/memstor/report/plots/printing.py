"""Figures as the PDF prints them: the size the LaTeX route gives a figure, and what is unreadable there.

The PDF (memstor.report.export, template ``memstor.tex.j2``: letter paper, 0.75 in margins) scales every figure
down into a box of 6.03 × 3.3 in (0.9 × the line width by 0.3 × the paper height of the earlier 0.9 in margins:
the wider text block holds more text, the figures print as before), keeping its proportions; the notebook's
inline PNG is the figure's tight bounding box plus 0.1 in of padding (IPython's ``bbox_inches="tight"``).
:func:`printed_scale` is that factor, :func:`fit_for_print` sizes a report figure so that it prints at
(nearly) its own size, and :func:`print_problems` lists every text under :data:`MIN_PRINT_PT` at its printed
size, every pair of tick labels of one axis closer than :data:`TICK_GAP_PT`, and every pair of data labels
(annotations) of one panel that overlap (the tests run it over every report figure). :func:`declutter_labels`
moves a data label that would overlap another, or sit about as near another point as its own, to a free place
beside its point, or leaves it out.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.text import Annotation, Text
from matplotlib.ticker import NullFormatter

#: The box a figure is scaled into in the PDF (memstor.tex.j2: max size={6.03in}{3.3in}).
PRINT_BOX_IN = (6.03, 3.3)
#: The box the report's figures are drawn into (fit_for_print): the print box's width, a little less height, so
#: that a page holds two figures and their text.
REPORT_BOX_IN = (PRINT_BOX_IN[0], 2.8)
#: The box of a figure with two rows of panels or more: the whole print box (each row keeps a readable height).
TALL_BOX_IN = PRINT_BOX_IN
#: The box of a one-row figure drawn for it (:func:`compact`): less height (a row of panels with their legends
#: beside them, not in them, reads well at 2.4 in; the page holds more text).
SINGLE_BOX_IN = (PRINT_BOX_IN[0], 2.4)
#: The gid that marks a figure as drawn for SINGLE_BOX_IN.
COMPACT_GID = "memstor:compact"
#: The gid that marks a one-row figure as drawn for TALL_BOX_IN (a legend of several rows under its panels).
TALL_GID = "memstor:tall"
#: Inches the inline PNG adds on each side of the figure's tight bounding box (savefig's pad_inches).
PAD_IN = 0.1
#: The smallest text size readable in print (points, at the printed size).
MIN_PRINT_PT = 7.0
#: The size fit_for_print gives text it would print smaller: MIN_PRINT_PT with room for the last 2 % of shrink.
_FLOOR_PT = MIN_PRINT_PT * 1.03
#: The smallest gap between two tick labels of one axis (points at the printed size): less reads as one number
#: ("90,000120,000").
TICK_GAP_PT = 2.0
#: Where a data label may sit beside its point (offset in points, horizontal alignment), in order of preference
#: after its own: below right, above right, above left, below left, above, below, right, left.
LABEL_PLACES = ((5, -11, "left"), (5, 4, "left"), (-5, 4, "right"), (-5, -11, "right"), (0, 6, "center"),
                (0, -15, "center"), (8, -4, "left"), (-8, -4, "right"))
#: How much farther than its own point every other point's marker centre must lie from a data label's box: nearer
#: than this, the label reads as either point's (S10-bare 19). 1.5 left out 11 of q0's 32 open-loop labels
#: (test_report_q0 allows a quarter); 1.2 still separates Figure 16's u90 and u95.
NEARER_BY = 1.2
#: A data label drawn above the others (a higher zorder than an annotation's default 3) is placed before them: the
#: points a figure's reading rests on keep their labels where labels crowd (S21-bare 6: the ringed held u70 lost its
#: label beside a faded point's 'u50').
FIRST_LABEL_ZORDER = 3.5
#: Farther places such a label may take where none of LABEL_PLACES is free (about 1.8x their offsets).
FAR_PLACES = ((9, -18, "left"), (9, 8, "left"), (-9, 8, "right"), (-9, -18, "right"), (0, 12, "center"),
              (0, -22, "center"), (14, -4, "left"), (-14, -4, "right"))
#: The smallest plotting area (width, height in inches at the printed size) a panel needs to show its data: a
#: layout whose legends and labels leave less has collapsed (constrained layout squeezes the axes first).
MIN_AXES_IN = (1.1, 0.7)


def _renderer(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def printed_size_in(fig) -> tuple[float, float]:
    """(width, height) in inches of the figure's PNG as the notebook embeds it (tight box + padding)."""
    box = fig.get_tightbbox(_renderer(fig))
    return box.width + 2 * PAD_IN, box.height + 2 * PAD_IN


def printed_scale(fig, box: tuple[float, float] = PRINT_BOX_IN) -> float:
    """The factor the PDF prints the figure at: 1 when it fits the print box, else the shrink that fits it."""
    w, h = printed_size_in(fig)
    return min(1.0, box[0] / w, box[1] / h)


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax)]


def panel_rows(fig) -> int:
    """Rows of panels in the figure: the distinct heights of its visible axes (colour bars left out)."""
    return len({round(ax.get_position().y0, 2) for ax in _panels(fig)})


def compact(fig):
    """Mark a one-row figure as drawn to print in SINGLE_BOX_IN (legends beside the panels, not in them: a panel
    whose texts sit inside it collapses in less height); returns the figure."""
    fig.set_gid(COMPACT_GID)
    return fig


def tall(fig):
    """Mark a one-row figure as drawn to print in TALL_BOX_IN (its legend takes rows of its own under the panels);
    returns the figure."""
    fig.set_gid(TALL_GID)
    return fig


def report_box(fig) -> tuple[float, float]:
    """The box fit_for_print sizes a figure into: TALL_BOX_IN for two rows of panels or more or one marked
    :func:`tall`, SINGLE_BOX_IN for one row marked :func:`compact`, else REPORT_BOX_IN."""
    if panel_rows(fig) > 1 or fig.get_gid() == TALL_GID:
        return TALL_BOX_IN
    return SINGLE_BOX_IN if fig.get_gid() == COMPACT_GID else REPORT_BOX_IN


def fit_for_print(fig, box: tuple[float, float] | None = None, rounds: int = 4):
    """The figure as the PDF should print it: sized to fit the print box at 1:1 (the PDF then shrinks it no
    further), every text scaled with it but never under MIN_PRINT_PT, and tick labels that would overlap
    rotated or thinned (:func:`declutter_ticks`), no marker cut by its panel's frame (:func:`keep_markers_inside`);
    returns the figure. A figure that fits `box` (inches, within the print box; by default :func:`report_box`)
    keeps its size."""
    if box is None:
        box = report_box(fig)
    for _attempt in range(2):  # decluttering (rotated labels) can grow the figure: fit it once more
        for _ in range(rounds):
            s = printed_scale(fig, box)
            if s >= 0.99:
                break
            w, h = fig.get_size_inches()
            fig.set_size_inches(w * s * 0.98, h * s * 0.98)
            for t in fig.findobj(Text):
                t.set_fontsize(max(t.get_fontsize() * s, _FLOOR_PT))
        for t in fig.findobj(Text):  # a figure that fits may still carry text set too small
            if t.get_fontsize() < _FLOOR_PT:
                t.set_fontsize(_FLOOR_PT)
        keep_markers_inside(fig)
        declutter_ticks(fig)
    declutter_labels(fig)
    return fig


def _tick_gap_px(fig) -> float:
    """TICK_GAP_PT in the figure's pixels."""
    return TICK_GAP_PT * fig.dpi / 72.0


def _overlapping(labels, renderer, gap_px: float = 0.0) -> bool:
    """Whether two of the tick labels overlap, or lie closer than gap_px side by side."""
    boxes = [lab.get_window_extent(renderer) for lab in labels]
    return any(_overlaps(a, b, tol_px=-gap_px) for a, b in itertools.combinations(boxes, 2))


def _thin(axis, k: int) -> None:
    """Keep every k-th major tick (and its label) of an axis, the labels as they were."""
    locs = [t.get_loc() for t in axis._update_ticks() if t in axis.majorTicks]
    texts = [t.label1.get_text() for t in axis._update_ticks() if t in axis.majorTicks]
    keep = list(range(0, len(locs), k))
    axis.set_ticks([locs[i] for i in keep], [texts[i] for i in keep])


def declutter_ticks(fig) -> None:
    """Tick labels of one axis that overlap (x labels: closer than TICK_GAP_PT): minor labels dropped first, then x
    labels rotated 45°, then every second (third ...) major tick kept until none overlap."""
    renderer = _renderer(fig)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            gap = _tick_gap_px(fig) if which == "x" else 0.0  # side by side: a gap, else two numbers read as one
            if not _overlapping(_drawn_tick_labels(axis), renderer, gap):
                continue
            for tick in axis.get_minor_ticks():
                tick.label1.set_visible(False)
                tick.label2.set_visible(False)
            axis.set_minor_formatter(NullFormatter())
            renderer = _renderer(fig)
            if which == "x" and _overlapping(_drawn_tick_labels(axis), renderer, gap):
                for lab in axis.get_ticklabels():
                    lab.set_rotation(45)
                    lab.set_ha("right")
                    lab.set_rotation_mode("anchor")
                renderer = _renderer(fig)
            k = 2
            # thinned while they overlap, never below 3 drawn labels (an axis thinned to none had no numbers at all)
            while _overlapping(_drawn_tick_labels(axis), renderer, gap) and k <= 6 \
                    and len(_drawn_tick_labels(axis)) > 3:
                texts = [t.label1.get_text() for t in axis._update_ticks() if t in axis.majorTicks]
                _thin(axis, 2)
                if which == "x" and texts:
                    for lab in axis.get_ticklabels():
                        lab.set_rotation(45)
                        lab.set_ha("right")
                        lab.set_rotation_mode("anchor")
                renderer = _renderer(fig)
                k += 1


def _labels(ax) -> list[Annotation]:
    """The data labels of a panel that are drawn: its annotations with text, visible."""
    return [t for t in ax.texts if isinstance(t, Annotation) and _shown(t)]


def _place(ann: Annotation, dx: float, dy: float, ha: str) -> None:
    """Move a data label (offset in points from its point) and align it."""
    ann.set_anncoords("offset points")
    ann.xyann = (dx, dy)
    ann.set_horizontalalignment(ha)  # type: ignore[arg-type]  # one of LABEL_PLACES: left, right, center


def _markers(ax, fig) -> list[tuple[float, float, float]]:
    """(x, y, half-size) in display pixels of every marker the panel draws (its lines with a marker; NaN left
    out): what a data label must not cover, but its own point."""
    out = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_marker() in (None, "", "None", " ", "none"):
            continue
        xy = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        every = line.get_markevery()
        idx = range(len(xy)) if every is None else [i for i in every if isinstance(i, (int, np.integer))] \
            if isinstance(every, (list, tuple, np.ndarray)) else range(len(xy))
        half = line.get_markersize() * fig.dpi / 72.0 / 2.0
        out += [(float(xy[i][0]), float(xy[i][1]), half) for i in idx if i < len(xy) and np.isfinite(xy[i]).all()]
    return out


def _scatter_markers(ax, fig) -> list[tuple[float, float, float]]:
    """(x, y, half-size) in display pixels of every point a scatter of the panel draws (its PathCollections with
    offsets; sizes are areas in points²; NaN left out)."""
    out = []
    for coll in ax.collections:
        if not coll.get_visible() or not isinstance(coll, PathCollection):
            continue
        offsets, sizes = np.asarray(coll.get_offsets(), float), np.asarray(coll.get_sizes(), float)
        if not len(offsets) or not len(sizes):
            continue
        xy = coll.get_offset_transform().transform(offsets)
        half = np.sqrt(np.resize(sizes, len(xy))) * fig.dpi / 72.0 / 2.0
        out += [(float(p[0]), float(p[1]), float(h)) for p, h in zip(xy, half) if np.isfinite(p).all()]
    return out


def _edge_overhang(ax, fig, which: str) -> tuple[float, float]:
    """(below, above) in display pixels at the last drawn layout: how far the markers whose centres lie in the
    panel's view reach past its lower (left) and upper (right) edge on one axis (`which`: "x" or "y"); 0 where none
    is cut. A marker whose centre lies outside the view was left out on purpose and is not counted."""
    lo, hi = (ax.bbox.x0, ax.bbox.x1) if which == "x" else (ax.bbox.y0, ax.bbox.y1)
    below = above = 0.0
    for x, y, h in _markers(ax, fig) + _scatter_markers(ax, fig):
        c = x if which == "x" else y
        if lo - 1.0 <= c <= hi + 1.0:
            below, above = max(below, lo - (c - h)), max(above, c + h - hi)
    return below, above


def keep_markers_inside(fig, rounds: int = 3) -> None:
    """Widen a panel's limits where its frame would cut a marker whose centre lies in the view (S10-bare 18: the
    queue-depth figure's open markers at N = 128, 2,538 and 4,199 µs, were cut at their centres by the top edge),
    by the overhang plus 2 pixels, on a linear or a log axis alike (the limits are moved in display space)."""
    fig.canvas.draw()  # one layout; a wider view moves the markers a little within it: measured again per round
    for ax in _panels(fig):
        for which, k in (("x", 0), ("y", 1)):
            for _ in range(rounds):
                below, above = _edge_overhang(ax, fig, which)
                if below <= 0.5 and above <= 0.5:
                    break
                ends = np.array([[ax.bbox.x0, ax.bbox.y0], [ax.bbox.x1, ax.bbox.y1]], float)
                ends[0, k] -= below + 2.0 if below > 0.5 else 0.0
                ends[1, k] += above + 2.0 if above > 0.5 else 0.0
                lo, hi = ax.transData.inverted().transform(ends)[:, k]
                (ax.set_xlim if which == "x" else ax.set_ylim)(lo, hi)


def _covers(box, markers, own) -> bool:
    """Whether a label's box covers a marker that is not at its own point (display pixels)."""
    return any(abs(x - own[0]) + abs(y - own[1]) > 1.0 and x + h > box.x0 and x - h < box.x1 and y + h > box.y0
               and y - h < box.y1 for x, y, h in markers)


def _gap(box, x: float, y: float) -> float:
    """Distance in display pixels from a point to a label's box (0 inside it)."""
    return float(np.hypot(max(box.x0 - x, 0.0, x - box.x1), max(box.y0 - y, 0.0, y - box.y1)))


def _nearer_other(box, markers, own) -> bool:
    """Whether a label's box lies about as near another point's marker centre as its own point (less than NEARER_BY
    times as far; display pixels): read by proximity it may name that point (S10-bare 19: 'u95' beside the u90
    point at 46,282 IOPS, 7,599 µs, and 'u90' beside u95's at 47,992 IOPS, 7,096 µs). Never for a label without a
    point of its own (NaN)."""
    if not np.isfinite(own).all():
        return False
    mine = _gap(box, float(own[0]), float(own[1]))
    return any(abs(x - own[0]) + abs(y - own[1]) > 1.0 and _gap(box, x, y) < NEARER_BY * mine for x, y, _ in markers)


def _own_half(markers, own) -> float:
    """The half-size in display pixels of the largest marker drawn at a label's own point (0 where none is)."""
    if not np.isfinite(own).all():
        return 0.0
    return max((h for x, y, h in markers if abs(x - own[0]) + abs(y - own[1]) <= 1.0), default=0.0)


def _touches_own(box, markers, own) -> bool:
    """Whether a label's box reaches into the largest marker at its own point (display pixels; S19-loop 9: 'u98'
    printed on its own overloaded square, a 10-pt marker, from the 5-pt offset a plain marker takes)."""
    h = _own_half(markers, own)
    return h > 0 and own[0] + h > box.x0 and own[0] - h < box.x1 and own[1] + h > box.y0 and own[1] - h < box.y1


def _cleared(place: tuple, half_pt: float) -> tuple:
    """A LABEL_PLACES offset moved outward by as much as its point's marker is larger than a plain one's (points)."""
    dx, dy, ha = place
    pad = max(0.0, half_pt - 3.0)
    return (dx + np.sign(dx) * pad, dy + (pad if dy > 0 else -pad if dy < 0 else 0.0), ha)


def _place_labels(fig, renderer) -> None:
    """One pass of :func:`declutter_labels` over every panel at the current layout."""
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        labels = sorted(_labels(ax), key=lambda t: -t.get_zorder())  # stable: drawn order within a zorder
        if not labels:
            continue
        inside = ax.get_window_extent(renderer)
        markers = _markers(ax, fig)
        kept: list = []
        for ann in labels:
            own = (*ann.xyann, ann.get_horizontalalignment())
            at = ax.transData.transform(ann.xy) if ann.xycoords == "data" else (np.nan, np.nan)
            half_pt = _own_half(markers, at) * 72.0 / fig.dpi
            places = LABEL_PLACES + (FAR_PLACES if ann.get_zorder() >= FIRST_LABEL_ZORDER else ())
            cleared = [c for c in (_cleared(p, half_pt) for p in places) if c != own]
            for dx, dy, ha in (own, *dict.fromkeys(cleared)):
                _place(ann, dx, dy, ha)
                box = ann.get_window_extent(renderer)
                free = not any(_overlaps(box, k) for k in kept) and not _covers(box, markers, at) \
                    and not _nearer_other(box, markers, at) and not _touches_own(box, markers, at)
                within = box.x0 >= inside.x0 - 1 and box.x1 <= inside.x1 + 1 and box.y0 >= inside.y0 - 1 \
                    and box.y1 <= inside.y1 + 1
                if free and (within or (dx, dy, ha) == own):  # its own place, even over the edge, when free
                    kept.append(box)
                    break
            else:
                _place(ann, *own)
                ann.set_visible(False)


def declutter_labels(fig, rounds: int = 4) -> None:
    """Data labels (annotations) of one panel that overlap: each in turn keeps its place when free, else takes the
    first of LABEL_PLACES beside its point that overlaps no label kept before it, covers no other point's marker,
    lies NEARER_BY times nearer its own point than any other (:func:`_nearer_other`) and stays inside the panel,
    else is left out (hidden): no two labels print over each other, none beside the wrong point. A moved label can
    move the panels (the layout makes room for it): the passes repeat on the new layout until none overlap."""
    for _ in range(rounds):
        if not label_problems(fig):
            return
        _place_labels(fig, _renderer(fig))


def label_problems(fig, name: str = "figure") -> list[str]:
    """Data labels (annotations) of one panel that overlap each other at the printed size, one line per pair, and
    labels that cover another point's marker (read as that point's label), one line each."""
    renderer = _renderer(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _labels(ax)]
        for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
            if _overlaps(a, b):
                problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) labels {ta!r} and {tb!r} "
                                "overlap")
        markers = _markers(ax, fig)  # a label over another point's marker reads as that point's (S6-bare M-11)
        for t, (text, box) in zip(_labels(ax), boxes):
            at = ax.transData.transform(t.xy) if t.xycoords == "data" else (np.nan, np.nan)
            if _covers(box, markers, at):
                problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) label {text!r} covers "
                                "another point's marker")
            elif _touches_own(box, markers, at):
                problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) label {text!r} lies on "
                                "its own point's marker")
            elif _nearer_other(box, markers, at):
                problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) label {text!r} lies "
                                "about as near another point as its own")
    return problems


def _drawn_tick_labels(axis) -> list[Text]:
    """The tick labels matplotlib draws on an axis: ticks inside the view interval, visible, with text."""
    ticks = axis._update_ticks()  # the ticks the axis draws (those inside its view interval), as draw() does
    labels = []
    for tick in ticks:
        for lab in (tick.label1, tick.label2):
            if lab.get_visible() and lab.get_text().strip():
                labels.append(lab)
    return labels


def _shown(t: Text) -> bool:
    """A text that is drawn: visible itself and in every parent, with some text."""
    if not t.get_visible() or not t.get_text().strip():
        return False
    return t.axes is None or t.axes.get_visible()


def _texts(fig) -> list[Text]:
    """Every text drawn in the figure: titles, labels, legends, annotations, drawn tick labels."""
    tick_labels = {id(lab) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for tick in axis.get_major_ticks() + axis.get_minor_ticks() for lab in (tick.label1, tick.label2)}
    drawn = {id(lab) for ax in fig.axes if ax.get_visible() for axis in (ax.xaxis, ax.yaxis)
             for lab in _drawn_tick_labels(axis)}
    out = []
    for t in fig.findobj(Text):
        if id(t) in tick_labels and id(t) not in drawn:
            continue
        if _shown(t):
            out.append(t)
    return out


def _overlaps(a, b, tol_px: float = 0.5) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol_px) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol_px)


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _frame_items(fig) -> list[tuple[str, Any]]:
    """(name, artist) of the figure's furniture that must not overlap: the figure's and every panel's titles,
    axis labels and legends (as whole boxes), and the drawn tick labels of every panel."""
    items = []
    for t in (getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None), getattr(fig, "_supylabel", None)):
        if t is not None and _shown(t):
            items.append((f"figure title {t.get_text()!r}", t))
    for leg in fig.legends:
        if leg.get_visible():
            items.append(("figure legend", leg))
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if _shown(t):
                items.append((f"axes {i} {t.get_text()!r}", t))
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            items.append((f"axes {i} legend", leg))
        for axis in (ax.xaxis, ax.yaxis):
            for lab in _drawn_tick_labels(axis):
                items.append((f"axes {i} tick {lab.get_text()!r}", lab))
    return items


def layout_problems(fig, name: str = "figure") -> list[str]:
    """What a collapsed layout leaves at the printed size: panels smaller than MIN_AXES_IN, and titles, axis
    labels, legends and tick labels (of different panels, or a label against a title or a legend) that overlap.
    Tick labels of one axis against each other are :func:`print_problems`' own check."""
    scale = printed_scale(fig)
    renderer = _renderer(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or _is_colorbar(ax):
            continue
        box = ax.get_window_extent(renderer)
        w, h = box.width / fig.dpi * scale, box.height / fig.dpi * scale
        if w < MIN_AXES_IN[0] - 1e-6 or h < MIN_AXES_IN[1] - 1e-6:
            problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) prints {w:.2f} x {h:.2f} in "
                            f"(< {MIN_AXES_IN[0]:g} x {MIN_AXES_IN[1]:g} in): the layout collapsed")
    items = [(n, a.get_window_extent(renderer)) for n, a in _frame_items(fig)]
    for (na, ba), (nb, bb) in itertools.combinations(items, 2):
        if na.split(" tick ")[0] == nb.split(" tick ")[0] and " tick " in na and " tick " in nb:
            continue  # one axes' tick labels: print_problems checks them per axis
        if _overlaps(ba, bb, tol_px=1.0):
            problems.append(f"{name}: {na} and {nb} overlap")
    return problems


def print_problems(fig, name: str = "figure") -> list[str]:
    """What is unreadable when the PDF prints the figure: texts under MIN_PRINT_PT at the printed size, tick
    labels of one axis closer than TICK_GAP_PT, data labels of one panel that overlap (:func:`label_problems`) and
    a collapsed layout (:func:`layout_problems`). One line each; empty when it prints well."""
    scale = printed_scale(fig)
    renderer = _renderer(fig)
    problems = []
    for t in _texts(fig):
        pt = float(t.get_fontsize()) * scale
        if pt < MIN_PRINT_PT - 1e-6:
            problems.append(f"{name}: {t.get_text()!r} prints at {pt:.1f} pt (< {MIN_PRINT_PT:g} pt; "
                            f"{t.get_fontsize():.1f} pt × {scale:.2f})")
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _drawn_tick_labels(axis)
            boxes = [(lab.get_text(), lab.get_window_extent(renderer)) for lab in labels]
            for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
                if _overlaps(a, b, tol_px=-_tick_gap_px(fig) if which == "x" else 0.5):
                    problems.append(f"{name}: axes {i} ({ax.get_title() or ax.get_xlabel()!s}) {which} tick labels "
                                    f"{ta!r} and {tb!r} overlap")
    return problems + label_problems(fig, name) + layout_problems(fig, name)
