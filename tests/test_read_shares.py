"""Read-share traffic: loadlat ``--read_share=P`` (P % of the DRAM traffic is reads, as Mess labels its curves)
as a traffic code (``S<P>``, memstor.core.schema), the ``read_shares`` key of mlc-loaded-latency (one curve per
share; loadlat for the shares MLC's codes do not mix), parsing it back from a recorded command line, and a tiny
real loadlat run whose rows and memory_fit carry each curve's shares."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest

from conftest import two_allowed_cpus
from memstor.analysis.memory_curves import curve_table
from memstor.analysis.memory_fit import memory_fit_table, traffic_shares
from memstor.core.errors import UsageError
from memstor.core.schema import read_share_code, traffic_code_of_label, traffic_fraction, traffic_info
from memstor.experiments import mlc_loaded_latency as loaded_latency
from memstor.experiments._mlc_params import check_for_tool, needs_loadlat, share_codes, validate_params
from memstor.experiments._mlc_points import build_points
from memstor.measure import mlc
from memstor.parse.mlc_header import parse_options, traffic_of_code

EXP = "mlc-loaded-latency"


@pytest.mark.parametrize("pct, code, label, mix", [
    (100, "R", "read-only", 1.0), (90, "S90", "8:1", 8 / 9), (80, "W3", "3:1", 3 / 4), (75, "W2", "2:1", 2 / 3),
    (70, "S70", "4:3", 4 / 7), (60, "S60", "1:2", 1 / 3), (50, "S50", "write-only", 0.0),
    (40, "S40", "2:3-nt", 0.4), (33, "S33", "33:67-nt", 0.33), (10, "S10", "1:9-nt", 0.1),
    (0, "W6", "write-only-nt", 0.0)])
def test_read_share_codes_round_trip_to_their_dram_share(pct, code, label, mix):
    assert read_share_code(pct) == code
    assert traffic_info(code) == (label, pytest.approx(mix))
    assert traffic_code_of_label(label) == code
    assert traffic_fraction(label) == pytest.approx(mix)
    assert traffic_of_code(code)[:2] == (label, pytest.approx(mix))
    # the DRAM read share the mix makes (plain stores add their read for ownership) is the share asked for
    assert 100 * traffic_shares(label)[1] == pytest.approx(pct)


def test_unknown_codes_and_labels_stay_unknown():
    assert traffic_info("S101") is None and traffic_info("S") is None and traffic_info("X5") is None
    assert traffic_code_of_label("16:2") is None  # not the smallest group: no code writes it
    assert traffic_code_of_label("1:1-nt") == "W8" and traffic_code_of_label("2:3") is None  # 62.5 %: no share
    assert traffic_code_of_label("2:1") == "W2" and traffic_code_of_label("2:1-nt") == "W7"
    assert traffic_of_code("S101")[1] is None
    with pytest.raises(ValueError):
        read_share_code(101)


def test_plain_store_shares_reach_dram_with_their_read_for_ownership():
    # f reads per access, plain stores: DRAM reads f + (1 - f), writes 1 - f -> read share 1 / (2 - f)
    assert traffic_shares("4:3") == (pytest.approx(4 / 7), pytest.approx(0.7), "plain (read for ownership)")
    assert traffic_shares("write-only") == (0.0, 0.5, "plain (read for ownership)")
    assert traffic_shares("2:3-nt") == (0.4, 0.4, "non-temporal")
    assert traffic_shares("write-only-nt") == (0.0, 0.0, "non-temporal")


def test_recorded_command_line_gives_the_share():
    assert parse_options("--loaded_latency --read_share=70 -d0").code == "S70"
    assert parse_options("--loaded_latency --read_share=80").code == "W3"
    assert parse_options("--loaded_latency --read_share=900").code is None
    assert mlc.traffic_flag("S70") == "--read_share=70" and mlc.traffic_flag("W5") == "-W5"
    with pytest.raises(UsageError, match="S<P> for P % reads"):
        mlc.traffic_flag("S900")


@pytest.mark.usefixtures("faked_machine")  # conftest: CPUs 0-3, whatever runs the tests
def test_read_shares_add_one_curve_each_and_never_twice():
    p = validate_params({"traffic": ["R", "W5"], "read_shares": [100, 70, 50, 0], "access_bytes": [64, 256],
                         "pacing": ["fixed", "exp"], "load_cpus": ""})
    assert p.traffic == ("R", "W5") and p.read_shares == (100, 70, 50, 0)
    assert share_codes(p) == ("S70", "S50", "W6")  # 100 is R: measured once
    loaded = [pt.params for pt in build_points(p, "loadlat", huge=False) if pt.params["mode"] == "loaded_latency"]
    # traffic codes: every access size x pacing; the family's shares: the first access size and pacing
    assert len(loaded) == 2 * 2 * 2 + 3
    shares = [(q["traffic"], q["access_bytes"], q.get("pacing", "fixed")) for q in loaded[8:]]
    assert shares == [("S70", 64, "fixed"), ("S50", 64, "fixed"), ("W6", 64, "fixed")]
    assert needs_loadlat(p) == "exponential pacing"
    assert needs_loadlat(validate_params({"read_shares": [70], "load_cpus": ""})) == "read shares other than MLC's mixes"
    assert needs_loadlat(validate_params({"read_shares": [100, 80, 75, 0], "load_cpus": ""})) == ""
    with pytest.raises(UsageError, match=r"read_shares.*whole percentages 0\.\.100"):
        validate_params({"read_shares": [70, 101]})
    with pytest.raises(UsageError, match="read_shares"):
        validate_params({"read_shares": [70, 70]})


@pytest.mark.usefixtures("faked_machine")  # conftest: CPUs 0-3, whatever runs the tests
def test_mlc_is_refused_a_share_it_cannot_mix():
    p = validate_params({"tool": "mlc", "read_shares": [70], "load_cpus": ""})
    with pytest.raises(UsageError, match=r"read_shares.*Intel MLC mixes only its -W codes \(S70 are loadlat"):
        check_for_tool(p, "mlc")
    check_for_tool(validate_params({"tool": "mlc", "read_shares": [80], "load_cpus": ""}), "mlc")  # W3



@pytest.mark.fio
@pytest.mark.loadlat
def test_real_read_share_family_under_auto(tmp_path, loadlat_bin, monkeypatch):
    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    monkeypatch.setenv("PATH", f"{Path(__file__).parent / 'data' / 'mlc-standin'}{os.pathsep}/usr/bin:/bin")
    lat_cpu, load_cpu = two_allowed_cpus()
    # an `mlc` on PATH: auto would pick it, but only loadlat mixes 70 % reads
    params = {"tool": "auto", "traffic": ["R"], "read_shares": [70, 40], "access_bytes": [64],
              "delays": [0, 2000, 20000], "seconds_per_point": 0.2, "buffer_kib": 32768, "latency_cpu": lat_cpu,
              "load_cpus": str(load_cpu), "huge_pages": False, "max_remeasure": 0}
    df = loaded_latency.run_loaded_latency(params, data_root=tmp_path, host="h", progress=False)
    assert set(df["tool"]) == {"loadlat"} and (df["status"] == "done").all()
    loaded = df[df["test"] == "loaded_latency"]
    assert sorted(loaded["traffic"].unique()) == ["2:3-nt", "4:3", "read-only"]
    fractions = loaded.groupby("traffic")["read_fraction"].agg(["min", "max"])
    assert (fractions["min"] == fractions["max"]).all()
    assert fractions.loc["4:3", "min"] == pytest.approx(4 / 7) and fractions.loc["2:3-nt", "min"] == 0.4
    assert (loaded["bandwidth_MBps"] > 0).all() and (loaded["latency_ns"] > 0).all()
    metas = sorted(p.name for p in (tmp_path / "raw" / "h" / EXP).glob("loaded-latency_S70_*.meta.json"))
    assert len(metas) == 1
    table = pd.read_csv(tmp_path / "processed" / "h" / f"{EXP}.csv")
    fit, _ = memory_fit_table(curve_table(table))
    shares = fit.set_index("traffic")[["mix_read_share", "dram_read_share_est"]]
    assert shares.loc["4:3", "mix_read_share"] == pytest.approx(4 / 7)
    assert shares.loc["4:3", "dram_read_share_est"] == pytest.approx(0.7)
    assert shares.loc["2:3-nt", "dram_read_share_est"] == pytest.approx(0.4)
    assert not math.isnan(shares.loc["read-only", "mix_read_share"])
