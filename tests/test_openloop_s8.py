"""Fourth read S8-bare of the fresh-clone quick run of 05158ec (tests/data/slo-held/curves-fresh051.csv): the
open-loop causes said only where the columns carry them (M-3: a request queue that blocked the submitter for 0.5 %
of the run made no late 1 %, and a submitter at 97-101 % of a CPU may have waited for it too; M-4: a pause that a
held point of another workload met as well explains no late point) and the words of the section (B-2: the
comparison with the closed loop only at held rates, said so; M-5: the lightest held load is not 'unloaded'; M-6:
X_ref from short closed-loop runs)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.report.text.openloop import _stress_sentences, _unloaded_sentence, x_ref_beaten
from memstor.report.text.openloop_causes import _queue_full, late_causes
from report_helpers import synthesise_copy

DATA = Path(__file__).parent / "data" / "slo-held"


def curves() -> pd.DataFrame:
    return pd.read_csv(DATA / "curves-fresh051.csv")


def rows(rw: str) -> pd.DataFrame:
    c = curves()
    return c[c["rw"] == rw].set_index("utilisation_pct", drop=False)


def test_the_request_queue_is_a_cause_only_where_it_blocked_one_percent_of_the_run():
    r = rows("randread")
    assert r.loc[30, "peak_outstanding"] >= 256 and r.loc[30, "submit_blocked_s"] == pytest.approx(0.009434, rel=1e-3)
    full = _queue_full(r)
    assert not full.loc[30] and full.loc[50]  # 9.4 ms of a 2-s run (0.5 %) against 52 ms (2.6 %)
    assert full.loc[[70, 80, 90, 95, 98]].all()
    assert _queue_full(r.drop(columns="runtime_s")).loc[30]  # run length not recorded: any blocked call counts


def test_not_for_a_cpu_only_where_the_submitter_had_cpu_to_spare():
    said, causes = late_causes(rows("randread"))
    assert "request_queue" in causes and "and perhaps for a CPU as well" in said  # 101 % of one CPU at u50
    said, causes = late_causes(rows("randwrite"))
    assert "request_queue" in causes and "not for a CPU" in said  # at most 74.5 % at its queue-full points


def test_a_pause_a_held_point_of_another_workload_met_explains_no_late_point():
    c = curves()
    alone, causes_alone = late_causes(rows("randread"))
    assert "pause" in causes_alone and "the machine paused longer than the lag bound at u10" in alone  # before
    said, causes = late_causes(rows("randread"), host_rows=c)  # randwrite's held u30 paused 25,849 µs
    assert "pause" not in causes and "paused longer" not in said


def test_the_lightest_held_load_is_not_called_unloaded():
    u = pd.DataFrame([{"lat_unloaded_us": 265.0, "util_used": 0.3, "low_rate_anomaly": False}])
    (said,) = _unloaded_sentence(u)
    assert "Unloaded" not in said and "lightest load that held: 265 µs (at u30 of X_ref" in said
    assert "not an idle latency" in said


def test_overloaded_points_say_x_ref_came_from_short_closed_loop_runs():
    said = " ".join(_stress_sentences(rows("randwrite"), modelled=False))
    assert "Overloaded (achieved < 95 % of the offered rate) at u90 (80.9 % achieved)" in said
    assert "X_ref is the best of short closed-loop runs" in said and "model fit" not in said



# ------------------------------------------------------------------ R-loop 8.1: X_ref from a sweep the job beat

LOOP = "vm2-loop-fio328"


@pytest.fixture(scope="module")
def loop_points(tmp_path_factory) -> pd.DataFrame:
    """The loop run's measured points (its queue-depth and block-size tables: tests/data/report-steady)."""
    return synthesise_copy(tmp_path_factory, Path(__file__).parent / "data" / "report-steady", "xref").points


def test_x_ref_from_a_sweep_the_same_job_beat_is_said_to_be_in_doubt(loop_points):
    c = pd.read_csv(DATA / "curves-loop328.csv")
    w = c[c["rw"] == "randwrite"]
    assert w["x_max_source"].iloc[0].startswith("fio-queue-depth table")
    (said,) = x_ref_beaten(w, loop_points, LOOP, "randwrite")
    assert said.startswith("X_ref (75,230 IOPS, the queue-depth sweep's best) is itself in doubt")
    assert "121,409 IOPS at QD32 in fio-block-size" in said and "(1.61× X_ref" in said
    assert "the highest, u98, is 0.61× of 121,409 IOPS" in said
    r = c[c["rw"] == "randread"]  # the sweep's read was not beaten (0.95x)
    assert x_ref_beaten(r, loop_points, LOOP, "randread") == []
    other = w.assign(x_max_source="fio-block-size table: QD32x1, 121,409 IOPS")  # X_ref already the best run
    assert x_ref_beaten(other, loop_points, LOOP, "randwrite") == []
