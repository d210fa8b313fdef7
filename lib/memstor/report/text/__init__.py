"""Report text, one module per topic (pure: DataFrame in, DataFrame/markdown out): display tables with short
headers and units, and the sentences of the report. Layer: report (imports analysis and core).

- :mod:`.headline`: the headline numbers side by side, the precision-target and page-walk sentences;
- :mod:`.systems`: the methods section: the systems under test and one example command per experiment;
- :mod:`.spec`: the spec comparison;
- :mod:`.queueing`: Little's law, the knee, the adaptive grid, the fleet's cluster rows;
- :mod:`.curves`: memory and storage latency–throughput curves, pacing, MLC's other sections;
- :mod:`.steady_state`: the steady-state verdicts, rounds and PTS matrix;
- :mod:`.drive`: the drive table;
- :mod:`.openloop`: the open loop (fio-load-latency): curves, SLO, models and one paragraph per workload;
- :mod:`.loadgen`: the open loop's generators (ioarrive, fio): what each measured, where the loop held, and the
  section's words where it did not;
- :mod:`.wsat`: write saturation: burst and sustained levels, the cliffs, one paragraph per run;
- :mod:`.hierarchy`: the cache levels beside the kernel's sizes, the TLB cost, memory-level parallelism;
- :mod:`.pts`: the SNIA PTS recovery and demand tests (HIR, XSR, CBW, DIRTH) and their departures from PTS;
- :mod:`.methods`: each section's method, in brief (the PDF) and in full (the HTML);
- :mod:`.read_ratio`: the read-ratio family by DRAM read share and the nearest published (Mess) platforms.

Numbers and intervals are formatted by :mod:`memstor.core.fmt` alone; its functions are re-exported here
because the report's callers (notebooks, export) read them as ``text.fmt_number`` and so on.
"""

from memstor.core.fmt import ci_text, fixed, fmt_ci, fmt_interval, fmt_number, fmt_se, md_escape
from memstor.report.text.curves import (
    SECTION_NAMES,
    curves_display,
    curves_sentences,
    memory_display,
    memory_sentences,
    pacing_display,
    sections_display,
    storage_sentences,
)
from memstor.report.text.drive import drive_display
from memstor.report.text.headline import (
    ceilings_display,
    memory_figures_display,
    no_memory_figures_sentence,
    page_walk_sentence,
    precision_sentence,
)
from memstor.report.text.headline_table import headline_evidence
from memstor.report.text.hierarchy import cache_levels_display, hierarchy_sentences, mlp_display
from memstor.report.text.openloop import (
    LOAD_DISPLAY_COLUMNS,
    OPEN_CLOSED_SMALL_PCT,
    cause_paragraphs,
    load_display,
    load_sentences,
    slo_display,
    windows_note,
)
from memstor.report.text.openloop_models import (
    MODEL_BREAK_PCT,
    OPEN_LOOP_MODELS,
    models_display,
    models_empty,
)
from memstor.report.text.pts import (
    cbw_display,
    demand_caption,
    departures,
    dirth_caption,
    dirth_display,
    gated_histograms,
    gated_roles,
    hir_caption,
    hir_display,
    histograms_caption,
    pts_summary,
    summary_caption,
    xsr_caption,
    xsr_display,
)
from memstor.report.text.queueing import (
    cluster_display,
    grid_display,
    grid_sentences,
    knee_display,
    knee_sentences,
    little_display,
    little_sentences,
)
from memstor.report.text.read_ratio import read_ratio_display, read_ratio_sentences
from memstor.report.text.spec import spec_note, spec_table
from memstor.report.text.steady_state import (
    steady_display,
    steady_matrix_display,
    steady_rounds_display,
    steady_sentences,
)
from memstor.report.text.systems import SYSTEM_FIELDS, command_sentence, commands, systems_table
from memstor.report.text.wsat import cliffs_display, cliffs_empty, wsat_display, wsat_sentences

__all__ = [
    "ci_text", "fixed", "fmt_ci", "fmt_interval", "fmt_number", "fmt_se", "md_escape",
    "headline_evidence", "precision_sentence", "page_walk_sentence", "memory_figures_display",
    "no_memory_figures_sentence",
    "wsat_display", "wsat_sentences", "cliffs_display", "cliffs_empty", "ceilings_display", "cache_levels_display",
    "hierarchy_sentences", "mlp_display", "read_ratio_display", "read_ratio_sentences", "departures", "hir_display", "pts_summary",
    "xsr_display", "cbw_display",
    "dirth_caption", "dirth_display", "summary_caption", "hir_caption", "xsr_caption", "gated_roles", "gated_histograms", "demand_caption", "histograms_caption",
    "SYSTEM_FIELDS", "systems_table", "commands", "command_sentence",
    "spec_table", "spec_note",
    "little_display", "little_sentences", "knee_display", "grid_display", "cluster_display", "grid_sentences", "knee_sentences",
    "memory_display", "memory_sentences", "storage_sentences", "pacing_display", "SECTION_NAMES",
    "sections_display", "curves_display", "curves_sentences",
    "steady_display", "steady_sentences", "steady_rounds_display", "steady_matrix_display",
    "drive_display",
    "OPEN_LOOP_MODELS", "MODEL_BREAK_PCT", "OPEN_CLOSED_SMALL_PCT", "LOAD_DISPLAY_COLUMNS", "load_display",
    "slo_display", "models_display", "models_empty", "load_sentences", "cause_paragraphs", "windows_note",
]
