"""The other sections of MLC's default run in the memory experiment (issue 19): profile key ``sections``, one point
per section through the MLC runner (the stand-in replays the real recorded MLC v3.11a default run, section by
section), and the report's memory_sections table (also from real imported MLC default runs, 2-socket Xeons)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.memory import sections_table
from memstor.core.errors import UsageError
from memstor.experiments import mlc_loaded_latency as loaded_latency
from memstor.measure import mlc
from memstor.parse.mlc import parse_mlc
from test_mlc_runner import calls, run, small, standin  # noqa: F401 - the fixture is used by name

HPC = Path(__file__).resolve().parent / "data" / "real" / "hpcleuven__VscDocumentation" / "source" / "leuven"


def test_section_command_lines():
    assert mlc.section_args("latency_matrix", 65536, 1) == ["--latency_matrix", "-b65536", "-t1"]
    assert mlc.section_args("bandwidth_matrix", 65536, 0.5, huge_pages=True) == [
        "--bandwidth_matrix", "-b65536", "-t0.5", "-L"]
    assert mlc.section_args("max_bandwidth", 1024, 2) == ["--max_bandwidth", "-b1024", "-t2"]
    assert mlc.section_args("c2c_latency", 1024, 2, huge_pages=True) == ["--c2c_latency", "-t2"]
    with pytest.raises(UsageError, match="choose among latency_matrix"):
        mlc.section_args("idle", 1, 1)


def test_sections_are_validated():
    p = loaded_latency.validate_params(small(sections=["c2c_latency", "--latency_matrix"]))
    assert p.sections == ("c2c_latency", "latency_matrix")
    assert loaded_latency.validate_params(small(sections=[])).sections == ()
    with pytest.raises(UsageError, match=r"sections.*use a list of latency_matrix, bandwidth_matrix, max_bandwidth"):
        loaded_latency.validate_params(small(sections=["c2c"]))
    with pytest.raises(UsageError, match="sections"):
        loaded_latency.validate_params(small(sections=["c2c_latency", "c2c_latency"]))


@pytest.mark.usefixtures("standin")
@pytest.mark.fio
@pytest.mark.loadlat
def test_each_section_is_one_point_through_the_mlc_runner(tmp_path):
    data = tmp_path / "data"
    df = run(small(traffic=["R"], access_bytes=[64], delays=[0, 20000],
                   sections=["latency_matrix", "bandwidth_matrix", "c2c_latency", "max_bandwidth"]), data)
    argvs = calls(tmp_path / "mlc-calls.jsonl")  # the stand-in fixture's log
    modes = [a[0] for a in argvs]
    for m in ("--latency_matrix", "--bandwidth_matrix", "--c2c_latency", "--max_bandwidth"):
        assert modes.count(m) == 1
    assert ["--c2c_latency", "-t1"] in argvs and ["--latency_matrix", "-b65536", "-t1", "-L"] in argvs
    done = df[df["status"] == "done"]
    lat = done[done["test"] == "latency_matrix"]
    assert lat[["src_node", "dst_node", "latency_ns"]].values.tolist() == [[0, 0, 77.9]]  # fiumad, MLC v3.11a
    bw = done[done["test"] == "bandwidth_matrix"]
    assert bw["bandwidth_MBps"].tolist() == [17610.3]
    c2c = done[done["test"] == "c2c_latency"].set_index("detail")["latency_ns"]
    assert c2c.to_dict() == {"Local Socket L2->L2 HIT": 29.7, "Local Socket L2->L2 HITM": 30.5}
    # no recording of MLC --max_bandwidth exists: the point is marked failed with the tool's reason, never a number
    mx = df[df["test"] == "max_bandwidth"]
    assert len(mx) == 1 and mx["status"].iloc[0] == "failed" and mx["bandwidth_MBps"].isna().all()
    assert "no recorded MLC output for --max_bandwidth" in mx["error"].iloc[0]
    # the other points are what they were without sections
    assert len(done[done["test"] == "loaded_latency"]) == 2
    table = sections_table(df.assign(source=df["point"]))
    assert set(table["section"]) == {"latency_matrix", "bandwidth_matrix", "c2c_latency"}
    assert table.loc[table["what"] == "Local Socket L2->L2 HITM", "value"].tolist() == [30.5]


@pytest.mark.usefixtures("standin")
@pytest.mark.fio
@pytest.mark.loadlat
def test_repeated_sections_are_pooled_only_within_their_configuration(tmp_path):
    df = run(small(traffic=["R"], access_bytes=[64], delays=[0], sections=["c2c_latency"], repetitions=2),
             tmp_path / "data")
    table = sections_table(df.assign(source=df["point"]))
    hitm = table[table["what"] == "Local Socket L2->L2 HITM"].iloc[0]
    assert hitm["n"] == 2 and hitm["value"] == pytest.approx(30.5) and hitm["ci_method"] == "repetitions"
    assert hitm["ci_low"] == pytest.approx(30.5) and hitm["ci_high"] == pytest.approx(30.5)


def _imported(name: str) -> pd.DataFrame:
    path = next(HPC.rglob(name))
    df = pd.DataFrame(parse_mlc(path.read_text(encoding="utf-8", errors="replace"), str(path)).rows)
    return df.assign(host=name.removesuffix(".txt"))


def test_sections_table_of_a_real_two_socket_default_run():
    """broadwell_mlc.txt: MLC on a 4-node (cluster-on-die) Broadwell (hpcleuven, SOURCES.md)."""
    t = sections_table(_imported("broadwell_mlc.txt"))
    lat = t[t["section"] == "latency_matrix"]
    assert len(lat) == 16 and set(lat["what"]) == {"idle latency"} and set(lat["unit"]) == {"ns"}
    assert lat[(lat["src_node"] == 0) & (lat["dst_node"] == 1)]["value"].tolist() == [151.1]
    bw = t[t["section"] == "bandwidth_matrix"]
    assert len(bw) == 16 and set(bw["unit"]) == {"MB/s"}
    assert bw[(bw["src_node"] == 3) & (bw["dst_node"] == 3)]["value"].tolist() == [36348.1]
    c2c = t[t["section"] == "c2c_latency"]
    local = c2c[c2c["what"].str.startswith("Local")].set_index("what")["value"]
    assert local.to_dict() == {"Local Socket L2->L2 HIT": 34.4, "Local Socket L2->L2 HITM": 39.2}
    assert (c2c["n"] == 1).all() and (c2c["ci_method"] == "").all()
    # sections first in MLC's order; every value once (nothing pooled across node pairs or kinds)
    assert list(dict.fromkeys(t["section"])) == ["latency_matrix", "bandwidth_matrix", "c2c_latency"]
    assert not t.duplicated(["host", "section", "what", "src_node", "dst_node"]).any()


def test_report_shows_the_sections():
    from memstor.report.text import sections_display

    shown = sections_display(sections_table(_imported("skylake_breniac_mlc_avx512.txt")))
    row = shown[(shown["section"] == "idle latency matrix") & (shown["nodes (CPU → memory; writer → reader)"] == "0 → 1")]
    assert row["value (95 % CI)"].tolist() == ["131.4 ns"]
    assert "Local Socket L2->L2 HITM" in set(shown["what"])
    assert sections_display(sections_table(pd.DataFrame())).empty
