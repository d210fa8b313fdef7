"""Read-share traffic: loadlat ``--read_share=P`` as a traffic code (``S<P>``, memstor.core.schema), the
``read_shares`` key of mlc-loaded-latency (one curve per share, loadlat only), parsing it back from a
recorded command line, and a tiny real loadlat run whose rows and memory_fit carry each curve's shares."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.memory_curves import curve_table
from memstor.analysis.memory_fit import memory_fit_table, traffic_shares
from memstor.core.errors import MemstorError, UsageError
from memstor.core.schema import read_share_code, traffic_code_of_label, traffic_fraction, traffic_info
from memstor.experiments import mlc_loaded_latency as loaded_latency
from memstor.experiments._mlc_params import check_for_tool, needs_loadlat, validate_params
from memstor.measure import mlc
from memstor.parse.mlc_header import parse_options, traffic_of_code

EXP = "mlc-loaded-latency"


@pytest.mark.parametrize("pct, code, label", [
    (100, "R", "read-only"), (90, "S90", "9:1"), (80, "S80", "4:1"), (75, "W3", "3:1"), (70, "S70", "7:3"),
    (60, "W4", "3:2"), (50, "W5", "1:1"), (33, "S33", "33:67"), (10, "S10", "1:9"), (0, "S0", "write-only")])
def test_read_share_codes_round_trip(pct, code, label):
    assert read_share_code(pct) == code
    assert traffic_info(code) == (label, pct / 100)
    assert traffic_code_of_label(label) == code
    assert traffic_fraction(label) == pytest.approx(pct / 100)
    assert traffic_of_code(code) == (label, pct / 100, "")


def test_unknown_codes_and_labels_stay_unknown():
    assert traffic_info("S101") is None and traffic_info("S") is None and traffic_info("X5") is None
    assert traffic_code_of_label("14:6") is None  # not the smallest group: no code writes it
    assert traffic_code_of_label("2:1") == "W2" and traffic_code_of_label("2:1-nt") == "W7"
    assert traffic_of_code("S101")[1] is None
    with pytest.raises(ValueError):
        read_share_code(101)


def test_plain_store_shares_reach_dram_with_their_read_for_ownership():
    # f reads per access, plain stores: DRAM reads f + (1 - f), writes 1 - f -> read share 1 / (2 - f)
    assert traffic_shares("7:3") == (0.7, pytest.approx(1 / 1.3), "plain (read for ownership)")
    assert traffic_shares("write-only") == (0.0, 0.5, "plain (read for ownership)")
    assert traffic_shares("write-only-nt") == (0.0, 0.0, "non-temporal")


def test_recorded_command_line_gives_the_share():
    assert parse_options("--loaded_latency --read_share=70 -d0").code == "S70"
    assert parse_options("--loaded_latency --read_share=50").code == "W5"
    assert parse_options("--loaded_latency --read_share=900").code is None
    assert mlc.traffic_flag("S70") == "--read_share=70" and mlc.traffic_flag("W5") == "-W5"
    with pytest.raises(UsageError, match="S<P> for P % reads"):
        mlc.traffic_flag("S900")


def test_read_shares_add_one_curve_each_and_never_twice():
    p = validate_params({"traffic": ["R", "W5"], "read_shares": [100, 70, 50, 0], "load_cpus": ""})
    assert p.traffic == ("R", "W5", "S70", "S0")  # 100 is R, 50 is W5: measured once
    assert p.read_shares == (100, 70, 50, 0)
    assert needs_loadlat(p) == "read shares other than MLC's mixes"
    assert needs_loadlat(validate_params({"read_shares": [75, 60], "load_cpus": ""})) == ""
    with pytest.raises(UsageError, match=r"read_shares.*whole percentages 0\.\.100"):
        validate_params({"read_shares": [70, 101]})
    with pytest.raises(UsageError, match="read_shares"):
        validate_params({"read_shares": [70, 70]})


def test_mlc_is_refused_a_share_it_cannot_mix():
    p = validate_params({"tool": "mlc", "read_shares": [70], "load_cpus": ""})
    with pytest.raises(UsageError, match=r"read_shares.*Intel MLC mixes only its -W codes \(S70 are loadlat"):
        check_for_tool(p, "mlc")
    check_for_tool(validate_params({"tool": "mlc", "read_shares": [60], "load_cpus": ""}), "mlc")  # W4


@pytest.fixture(scope="module")
def loadlat_bin(tmp_path_factory) -> Path:
    """The real loadlat: build/bin/loadlat, or compiled into a temp folder when not built yet."""
    from memstor.measure import loadlat

    try:
        return Path(loadlat.binary())
    except MemstorError:
        return Path(loadlat.build(output=tmp_path_factory.mktemp("loadlat") / "loadlat"))


@pytest.mark.fio
@pytest.mark.loadlat
def test_real_read_share_family_under_auto(tmp_path, loadlat_bin, monkeypatch):
    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    monkeypatch.setenv("PATH", f"{Path(__file__).parent / 'data' / 'mlc-standin'}{os.pathsep}/usr/bin:/bin")
    # an `mlc` on PATH: auto would pick it, but only loadlat mixes 70 % reads
    params = {"tool": "auto", "traffic": ["R"], "read_shares": [70, 0], "access_bytes": [64],
              "delays": [0, 2000, 20000], "seconds_per_point": 0.2, "buffer_kib": 32768, "latency_cpu": 0,
              "load_cpus": "", "huge_pages": False, "max_remeasure": 0}
    df = loaded_latency.run_loaded_latency(params, data_root=tmp_path, host="h", progress=False)
    assert set(df["tool"]) == {"loadlat"} and (df["status"] == "done").all()
    loaded = df[df["test"] == "loaded_latency"]
    assert sorted(loaded["traffic"].unique()) == ["7:3", "read-only", "write-only"]
    fractions = loaded.groupby("traffic")["read_fraction"].agg(["min", "max"])
    assert (fractions["min"] == fractions["max"]).all()
    assert fractions.loc["7:3", "min"] == 0.7 and fractions.loc["write-only", "min"] == 0.0
    assert (loaded["bandwidth_MBps"] > 0).all() and (loaded["latency_ns"] > 0).all()
    metas = sorted(p.name for p in (tmp_path / "raw" / "h" / EXP).glob("loaded-latency_S70_*.meta.json"))
    assert len(metas) == 1
    table = pd.read_csv(tmp_path / "processed" / "h" / f"{EXP}.csv")
    fit, _ = memory_fit_table(curve_table(table))
    shares = fit.set_index("traffic")[["mix_read_share", "dram_read_share_est"]]
    assert shares.loc["7:3", "mix_read_share"] == pytest.approx(0.7)
    assert shares.loc["7:3", "dram_read_share_est"] == pytest.approx(1 / 1.3)
    assert shares.loc["write-only", "dram_read_share_est"] == pytest.approx(0.5)
    assert not math.isnan(shares.loc["read-only", "mix_read_share"])
