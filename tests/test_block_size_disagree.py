"""A configuration whose config_agreement failed is given with both its numbers in §2 (issue 38, fourth read R-1cpu
M3). The rows are the reviewed runs' own (tests/data/review-s5, review-s8; SOURCES.md there)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from memstor.report.plots.synthesis import DISAGREED_LABEL, block_size_figure
from memstor.report.text.workloads import block_size_sentences
from test_knee_spread import DATA, table


def test_a_configuration_whose_agreement_failed_is_given_with_both_numbers():
    """R-1cpu M3: 'Random writes (QD32x1): 47,150 IOPS (193 MB/s) at 4 KiB' alone, though config_agreement failed
    (76,512 in fio-rw-ratio, 1.62x); s8-bare likewise (55,947 against 25,591, 2.19x). The other side: the reads,
    whose pairs agree within 1.5x (1.16x, 1.35x), say nothing more."""
    reads, writes = block_size_sentences(table("summary", "1cpu"), "vm-1cpu")
    assert ("47,150 IOPS (193 MB/s) at 4 KiB (here; 76,512 IOPS in fio-rw-ratio, 1.62× apart: config_agreement "
            "failed, the queue-depth sweep's 61,151 IOPS at QD16×1 and 60,317 at QD64×1 settle neither: neither "
            "alone is this configuration's value)") in writes  # S12-1cpu 5: the sweep's bracket beside the pair
    assert "config_agreement" not in reads
    bare = block_size_sentences(pd.read_csv(DATA / "review-s8" / "summary-bare.csv"), "vm")
    assert "(here; 25,591 IOPS in fio-rw-ratio, 2.19× apart" in bare[1] and "config_agreement" not in bare[0]


def test_the_block_size_figure_rings_only_the_point_whose_agreement_failed():
    """R-1cpu M3, Figure 1: the 193 MB/s write point (47,150 IOPS; 76,512 in fio-rw-ratio, 1.62x) was drawn
    unmarked. Now ringed in red with its legend entry; the reads (pairs within 1.5x) carry no ring."""
    fig = block_size_figure(table("summary", "1cpu"))
    rings = {ax.get_title(): [ln for ln in ax.lines if ln.get_gid() == "disagreed"] for ax in fig.axes}
    writes = [ln for t, lines in rings.items() if t.startswith("randwrite") for ln in lines]
    assert len(writes) == 1 and list(writes[0].get_xdata()) == [4096]
    assert abs(float(writes[0].get_ydata()[0]) - 193.1) < 1.0, writes[0].get_ydata()
    assert fig.get_suptitle() == f"vm-1cpu (red {DISAGREED_LABEL})"
    assert not [ln for t, lines in rings.items() if t.startswith("randread") for ln in lines]
    plt.close(fig)

