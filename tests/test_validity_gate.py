"""No finding without its preconditions (memstor.analysis.validity.gate): where a check fails, the table keeps
its measured numbers but not the finding, says why, and the report's text, tables and figures follow."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity import status, validity_table
from memstor.analysis.validity.gate import gate_knees, gate_open_loop, gate_steady, valid_keys
from memstor.report.plots.openloop import model_figure
from memstor.report.text import knee_sentences, load_sentences, models_display, slo_display
from test_validity import GOOD_SERIES, H, knee_frame, load_frame, point, steady_fio, tables


def _slo(rws=("randread", "randwrite")) -> pd.DataFrame:
    return pd.DataFrame({"host": H, "rw": list(rws), "target_p99_us": 1000.0, "max_iops": 47_930.0,
                         "censored": False})


def _models(rws=("randread", "randwrite")) -> pd.DataFrame:
    rows = []
    for rw in rws:
        for util, rho in ((10, 0.1), (30, 0.3), (50, 0.5)):
            rows.append({"host": H, "rw": rw, "utilisation_pct": util, "offered_iops": util * 1000.0,
                         "achieved_iops": util * 1000.0, "lat_mean_us": 50.0 + util, "overloaded": False,
                         "service_mean_us": 40.0, "service_cs2": 0.5, "servers_c": 4, "rho_1": rho, "rho_c": rho / 4,
                         "mm1_us": 40 / (1 - rho), "md1_us": 45.0, "mg1_us": 46.0, "mgc_us": 41.0,
                         "mm1_err_pct": 5.0, "md1_err_pct": -3.0, "mg1_err_pct": -2.0, "mgc_err_pct": -20.0,
                         "service_source": "QD1 point", "fit_rms_err_pct": 10.0, "fit_note": "c fitted"})
    return pd.DataFrame(rows)


def _curve(rws=("randread", "randwrite"), open_loop=(True,) * 6) -> pd.DataFrame:
    parts = []
    for rw in rws:
        f = load_frame(open_loop if rw == "randread" else (True,) * 6)
        f["rw"] = rw
        f["lat_p99_us"], f["lat_mean_us"], f["x_max_iops"] = 300.0, 80.0, 100_000.0
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def test_a_gated_open_loop_gets_no_slo_answer_and_no_model():
    load = _curve(open_loop=(True,) + (False,) * 5)
    v = validity_table(**tables(load=load))
    slo, models = gate_open_loop(_slo(), _models(), v)
    bad, good = slo.set_index("rw").loc["randread"], slo.set_index("rw").loc["randwrite"]
    assert bad["max_iops"] is None and not bad["valid"] and bad["not_valid"].startswith("not valid: 1 of 6")
    assert good["max_iops"] == 47_930.0 and good["valid"] and good["not_valid"] == ""
    gated = models[models["rw"] == "randread"]
    assert gated[["mm1_us", "mgc_us", "mgc_err_pct", "servers_c"]].isna().all().all()
    assert (gated["lat_mean_us"] > 0).all()  # the measured numbers stay
    assert models.loc[models["rw"] == "randwrite", "mm1_us"].notna().all()

    shown = slo_display(slo).set_index("workload")["max IOPS meeting it"]
    assert shown["randread"].startswith("no answer: the open loop did not hold (") and shown["randwrite"] == "47,930"
    assert set(models_display(models)["workload"]) == {"randwrite"}
    text = " ".join(load_sentences(load, slo, models, pd.DataFrame()))
    read_part = next(s for s in load_sentences(load, slo, models, pd.DataFrame()) if ", randread" in s)
    assert "not an open loop" in read_part and "1 of 6" in read_part
    assert "M/M/1" not in read_part and "p99 ≤" not in read_part and "IOPS**" not in read_part
    assert "p99 ≤ 1,000 µs is about **47,930 IOPS**" in text  # the open workload keeps its SLO answer
    fig = model_figure(models)
    assert fig is not None and len(fig.axes) == 1  # one panel: the open workload only


def test_every_workload_gated_draws_no_model_figure():
    load = _curve(rws=("randread",), open_loop=(False,) * 6)
    slo, models = gate_open_loop(_slo(("randread",)), _models(("randread",)), validity_table(**tables(load=load)))
    assert model_figure(models) is None and models_display(models).empty


def test_a_knee_fit_that_contradicts_its_data_is_not_a_result():
    knees = knee_frame(x_max_fit=90_000.0, r_min_fit=60.0)
    knees["points"], knees["r2"], knees["N_star_bound"], knees["note"] = 9, 0.9, 4.4, ""
    gated = gate_knees(knees, validity_table(**tables(knees=knees))).iloc[0]
    assert gated["X_max_fit_iops"] is None and gated["N_star_fit"] is None and not gated["valid"]
    assert gated["X_max_meas_iops"] == 98_000.0 and gated["N_star_bound"] == 4.4
    assert "90,000" in gated["note"] and valid_keys(gate_knees(knees, validity_table(**tables(knees=knees)))) == set()
    sentence = knee_sentences(pd.DataFrame([gated]))[0]
    assert "not a finding" in sentence and "98,000" in sentence and "N* ≥ 4.4" in sentence
    assert "two-asymptote fit gives" not in sentence

    fine = gate_knees(knee_frame(), validity_table(**tables()))
    assert fine.iloc[0]["valid"] and fine.iloc[0]["X_max_fit_iops"] == 100_000.0 and valid_keys(fine) == {(H, "randread")}


def test_a_steady_state_whose_trace_jumped_is_not_steady():
    jumped = [40_000.0] * 3 + [4_000.0] * 3 + [100_000.0] * 5
    t = tables(fio=steady_fio(jumped))
    steady = gate_steady(t["steady"], validity_table(**t))
    row = steady.iloc[0]
    assert not row["valid"] and row["verdict"].startswith("not valid: window rule met at round 11 (rounds 7-11); "
                                                          "steady_trace_jump")
    assert row["not_valid"].startswith("not valid: ") and not row["steady_shown"]
    good = tables(fio=steady_fio(GOOD_SERIES))
    assert gate_steady(good["steady"], validity_table(**good)).iloc[0]["valid"]
    fast = tables(fio=steady_fio([s * 2.0 for s in GOOD_SERIES]))    # 2x the fresh drive: a cache, not steady
    row = gate_steady(fast["steady"], validity_table(**fast)).iloc[0]
    assert not row["valid"] and "faster" not in row["verdict"] and row["not_valid"].startswith("not valid: steady")
    # S12-loop9 4: steady_vs_fresh alone gets its own way out (the rounds already overwrote their span 7.35x)
    # S13-loop 4: 'or the span the fresh points used' was the rounds' own 256 MiB: the whole device, fresh beside it
    assert row["not_valid"].endswith("over a span larger than the caches in front of the device (the whole device), "
                                     "on a quiet machine, beside fresh points on that same span"), row["not_valid"]
    jumped_row = gate_steady(t["steady"], validity_table(**t)).iloc[0]
    assert jumped_row["not_valid"].endswith("a span the rounds overwrite")


def _open(pct=(100.0,) * 6, util=(10, 30, 50, 70, 80, 90), flags=(True,) * 6) -> pd.DataFrame:
    """An open-loop randread curve: offered util x 1,000 IOPS, achieved pct % of it, the open_loop flags."""
    f = load_frame(tuple(flags))
    f["utilisation_pct"], f["offered_iops"] = list(util), [u * 1000.0 for u in util]
    f["achieved_pct"] = list(pct)
    f["achieved_iops"] = f["offered_iops"] * f["achieved_pct"] / 100.0
    return f


def test_an_overshooting_open_loop_gets_no_slo_answer_and_no_model():
    """open_loop_rate fails alone (arrival flags unknown): the open-loop findings are withheld all the same."""
    v = validity_table(**tables(load=_open(pct=(175, 164, 150, 140, 129, 131), flags=(None,) * 6)))
    assert status(v, "open_loop_held", H) == "unchecked" and status(v, "open_loop_rate", H) == "fail"
    slo, models = gate_open_loop(_slo(("randread",)), _models(("randread",)), v)
    r = slo.iloc[0]
    assert r["max_iops"] is None and not r["valid"] and r["not_valid"].startswith("not valid: achieved / offered 129-175")
    assert "below_closed_max: highest achieved 117,900 IOPS" in r["not_valid"]     # 120 % of the knee's 98,000
    assert models[["mm1_us", "mgc_us"]].isna().all().all()


def test_an_open_loop_not_shown_to_hold_gets_no_slo_answer_either():
    """fio-3.28 writes no timestamped iolog: the arrivals cannot be checked (open_loop_held unchecked) and every
    other check passes — no SLO answer or model rests on a loop not shown to be open (a reviewer found models
    printed for such a workload); a loop shown to hold keeps them."""
    v = validity_table(**tables(load=_open(flags=(None,) * 6)))
    assert status(v, "open_loop_held", H) == "unchecked" and status(v, "open_loop_rate", H) == "pass"
    slo, models = gate_open_loop(_slo(("randread",)), _models(("randread",)), v)
    assert slo.iloc[0]["max_iops"] is None and slo.iloc[0]["not_valid"].startswith("not valid: not checked")
    assert models[["mm1_us", "mgc_us"]].isna().all().all()
    held = validity_table(**tables(load=_open()))
    slo, _ = gate_open_loop(_slo(("randread",)), _models(("randread",)), held)
    assert slo.iloc[0]["max_iops"] is not None and slo.iloc[0]["valid"]


def test_more_in_flight_than_the_jobs_could_hold_withholds_the_open_loop():
    pts = tables()["points"]
    bad = point("fio-load-latency", 168_510.0, iodepth=64, numjobs=9, lat_mean_us=5_609.0, config="u90")
    v = validity_table(**tables(load=_open(), points=pd.concat([pts, pd.DataFrame([bad])], ignore_index=True)))
    assert status(v, "open_loop_held", H) == "pass" and status(v, "open_loop_rate", H) == "pass"
    slo, _ = gate_open_loop(_slo(("randread",)), _models(("randread",)), v)
    assert slo.iloc[0]["max_iops"] is None and "945 in flight where at most 576" in slo.iloc[0]["not_valid"]
    assert "accounting" in slo.iloc[0]["not_valid"]                               # littles_law's way out
    closed = point("fio-queue-depth", 10_000.0, iodepth=4, lat_mean_us=800.0, config="c")  # 8 of 4: closed only
    v = validity_table(**tables(load=_open(), points=pd.concat([pts, pd.DataFrame([closed])], ignore_index=True)))
    assert status(v, "littles_law", H) == "fail"
    assert gate_open_loop(_slo(("randread",)), None, v)[0].iloc[0]["valid"]      # not the open loop's invariant


def test_an_open_loop_above_the_closed_loop_maximum_is_withheld():
    v = validity_table(**tables(load=_open(util=(10, 30, 50, 70, 90, 110))))       # 110,000 against 98,000
    assert status(v, "open_loop_rate", H) == "pass" and status(v, "below_closed_max", H) == "fail"
    slo, models = gate_open_loop(_slo(("randread",)), _models(("randread",)), v)
    assert slo.iloc[0]["max_iops"] is None and slo.iloc[0]["not_valid"].startswith("not valid: highest achieved 110,000")
    assert models["mm1_us"].isna().all() and not models["valid"].any()
    fine = validity_table(**tables(load=_open()))
    assert gate_open_loop(_slo(("randread",)), None, fine)[0].iloc[0]["max_iops"] == 47_930.0
