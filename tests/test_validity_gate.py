"""No finding without its preconditions (memstor.analysis.validity.gate): where a check fails, the table keeps
its measured numbers but not the finding, says why, and the report's text, tables and figures follow."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity import validity_table
from memstor.analysis.validity.gate import gate_knees, gate_open_loop, gate_steady, valid_keys
from memstor.report.plots.openloop import model_figure
from memstor.report.text import knee_sentences, load_sentences, models_display, slo_display
from test_validity import GOOD_SERIES, H, knee_frame, load_frame, steady_fio, tables


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
    assert shown["randread"].startswith("not valid") and shown["randwrite"] == "47,930"
    assert set(models_display(models)["workload"]) == {"randwrite"}
    text = " ".join(load_sentences(load, slo, models, pd.DataFrame()))
    read_part = next(s for s in load_sentences(load, slo, models, pd.DataFrame()) if "randread" in s)
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
    assert "not a finding" in sentence and "98,000" in sentence and "N* = 4.4" in sentence
    assert "two-asymptote fit gives" not in sentence

    fine = gate_knees(knee_frame(), validity_table(**tables()))
    assert fine.iloc[0]["valid"] and fine.iloc[0]["X_max_fit_iops"] == 100_000.0 and valid_keys(fine) == {(H, "randread")}


def test_a_steady_state_whose_trace_jumped_is_not_steady():
    jumped = [40_000.0] * 3 + [4_000.0] * 3 + [100_000.0] * 5
    t = tables(fio=steady_fio(jumped))
    steady = gate_steady(t["steady"], validity_table(**t))
    row = steady.iloc[0]
    assert not row["valid"] and row["verdict"].startswith("not valid (") and row["not_valid"].startswith("not valid: ")
    good = tables(fio=steady_fio(GOOD_SERIES))
    assert gate_steady(good["steady"], validity_table(**good)).iloc[0]["valid"]
