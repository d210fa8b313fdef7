"""Tests of memstor.parse.mlc on the real public MLC outputs (tests/data/real) and on a few
hand-made synthetic inputs (tests/data/mlc/synthetic_*) for layouts the real files lack."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REAL
from memstor.core.schema import MLC_COLUMNS, MLC_TESTS, ParseResult
from memstor.parse.mlc import looks_like_mlc, parse_mlc

SYNTH = Path(__file__).resolve().parent / "data" / "mlc"
HPC = "hpcleuven__VscDocumentation/source/leuven"
AIALRA = "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project2 Cache"
CHRIS = "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project2/data"
ERIC = "EricFanexe__ECSE6320/Project1/results"
BERNEP = "bernep__Advanced-Computer-Systems/Project 3/results"
DUNCA = "duncachunk1__ECSE-4320/HW3/memoryResults"
FIUMAD = "fiumad__Advanced-Computer-Systems/proj1/exp1"


# ---------------------------------------------------------------------------------------------------
# helpers


def _read(path: Path) -> str:
    """File text as memstor reads it (UTF-8, undecodable bytes replaced, newlines untouched)."""
    return path.read_bytes().decode("utf-8", errors="replace")


def parse_real(rel: str) -> ParseResult:
    """Parse one real fixture (path relative to the fixtures folder)."""
    return parse_mlc(_read(REAL / rel), rel)


def loaded(res: ParseResult, run: int | None = None) -> list[dict]:
    """Loaded-latency rows (of one run)."""
    return [r for r in res.rows if r["test"] == "loaded_latency" and (run is None or r["run"] == run)]


def of_test(res: ParseResult, test: str) -> list[dict]:
    """Rows of one MLC test."""
    return [r for r in res.rows if r["test"] == test]


def _sources_entries() -> list[dict]:
    """The MLC files listed in SOURCES.md with the values read there (one dict per file)."""
    entries, folder = [], None
    for line in (REAL / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^### (\S+)/(\S+) @", line)
        if m:
            folder = f"{m.group(1)}__{m.group(2)}"
            continue
        cells = [c.strip() for c in line.split("|")]
        if folder is None or len(cells) < 8 or not cells[2].startswith("`"):
            continue
        if not cells[4].startswith("MLC"):
            continue
        entries.append({"rel": f"{folder}/{cells[2].strip('`')}", "checked": cells[1] == "✓",
                        "tool": cells[4], "options": cells[5].strip("`"), "values": cells[6],
                        "notes": cells[7]})
    return entries


SOURCES = _sources_entries()
NO_MEASUREMENT = [e for e in SOURCES if "NO MEASUREMENTS" in e["notes"] or "help/usage" in e["notes"]]
WITH_MEASUREMENT = [e for e in SOURCES if e not in NO_MEASUREMENT]


def _non_mlc_fixture_files() -> list[Path]:
    """Every real fixture that is not MLC output (fio JSON / text / terse)."""
    mlc = {e["rel"] for e in SOURCES}
    return sorted(p for p in REAL.rglob("*") if p.is_file() and p.name != "SOURCES.md"
                  and str(p.relative_to(REAL)) not in mlc)


# ---------------------------------------------------------------------------------------------------
# every real MLC file


def test_sources_lists_all_mlc_fixtures(real: Path) -> None:
    """SOURCES.md names 66 MLC files (61 with measurements, 5 without) and each one exists."""
    assert len(SOURCES) == 66
    assert len(WITH_MEASUREMENT) == 61 and len(NO_MEASUREMENT) == 5
    for e in SOURCES:
        assert (real / e["rel"]).is_file(), e["rel"]


@pytest.mark.parametrize("entry", WITH_MEASUREMENT, ids=lambda e: e["rel"])
def test_every_measured_mlc_fixture_parses(entry: dict) -> None:
    """Rows with exactly the schema keys, sane values, and the numbers SOURCES.md reads in the file."""
    res = parse_real(entry["rel"])
    assert res.rows, res.errors
    for row in res.rows:
        assert list(row) == MLC_COLUMNS
        assert row["source"] == entry["rel"]
        assert row["test"] in MLC_TESTS
        assert row["tool"] == "mlc"
        assert (row["latency_ns"] is not None) or (row["bandwidth_MBps"] is not None)
        for key in ("latency_ns", "bandwidth_MBps"):
            assert row[key] is None or 0 < row[key] < 1e7
    version = re.search(r"v[0-9][0-9a-z.]*", entry["tool"])
    assert {r["tool_version"] for r in res.rows} == {version.group(0) if version else ""}
    interrupted = "interrupted" in entry["notes"]
    assert bool(res.errors) == interrupted, res.errors
    _check_source_values(entry, res)


def _check_source_values(entry: dict, res: ParseResult) -> None:
    """Compare with every value SOURCES.md gives for the file."""
    vals = entry["values"]
    runs = sorted({r["run"] for r in loaded(res)})
    for m in re.finditer(r"T(\d+) rows=(\d+) first=\((\d+), ([\d.]+) ns, ([\d.]+) MB/s\) "
                         r"last=\((\d+), ([\d.]+) ns, ([\d.]+) MB/s\)", vals):
        table = loaded(res, runs[int(m.group(1)) - 1])
        assert len(table) == int(m.group(2))
        first, last = table[0], table[-1]
        assert (first["inject_delay"], first["latency_ns"], first["bandwidth_MBps"]) == (
            int(m.group(3)), float(m.group(4)), float(m.group(5)))
        assert (last["inject_delay"], last["latency_ns"], last["bandwidth_MBps"]) == (
            int(m.group(6)), float(m.group(7)), float(m.group(8)))
    m = re.search(r"loaded-latency tables=(\d+)", vals)
    assert len(runs) == (int(m.group(1)) if m else 0)
    peak = {r["traffic"]: r["bandwidth_MBps"] for r in of_test(res, "peak_injection_bandwidth")}
    m = re.search(r"ALL Reads x1: first=([\d.]+)", vals)
    assert peak.get("read-only") == (float(m.group(1)) if m else None)
    m = re.search(r"Stream-triad first=([\d.]+)", vals)
    assert peak.get("stream-triad") == (float(m.group(1)) if m else None)
    m = re.search(r"idle-latency matrix\[0\]\[0\]=([\d.]+) ns", vals)
    lat00 = [r["latency_ns"] for r in of_test(res, "latency_matrix") if (r["src_node"], r["dst_node"]) == (0, 0)]
    assert lat00 == ([float(m.group(1))] if m else [])
    m = re.search(r"bandwidth-matrix\[0\]\[0\] x1: first=([\d.]+) MB/s", vals)
    bw00 = [r["bandwidth_MBps"] for r in of_test(res, "bandwidth_matrix") if (r["src_node"], r["dst_node"]) == (0, 0)]
    assert bw00 == ([float(m.group(1))] if m else [])
    m = re.search(r"c2c L2->L2 HIT=([\d.]+) ns", vals)
    hit = [r["latency_ns"] for r in of_test(res, "c2c_latency") if r["detail"] == "Local Socket L2->L2 HIT"]
    assert hit == ([float(m.group(1))] if m else [])
    m = re.search(r"idle 'Each iteration took' x1: first=([\d.]+) (base frequency|core) clocks \(([\d.]+) ns\)", vals)
    idle = of_test(res, "idle_latency")
    assert [r["latency_ns"] for r in idle] == ([float(m.group(3))] if m else [])
    if m:
        assert idle[0]["detail"].startswith(f"{m.group(1)} {m.group(2)} clocks")
    for opt in re.findall(r"-W(\d+)|-(R)\b", entry["options"]):
        code = "R" if opt[1] else f"W{opt[0]}"
        expected = {"R": "read-only", "W3": "3:1", "W5": "1:1", "W6": "write-only-nt", "W7": "2:1-nt",
                    "W8": "1:1-nt", "W9": "3:1-nt"}[code]
        assert {r["traffic"] for r in loaded(res)} == {expected}
    m = re.search(r"-l(\d+)", entry["options"])
    if m:
        assert {r["access_bytes"] for r in loaded(res)} == {int(m.group(1))}


@pytest.mark.parametrize("entry", NO_MEASUREMENT, ids=lambda e: e["rel"])
def test_mlc_fixtures_without_measurement_give_one_error_line(entry: dict) -> None:
    """Header-only runs and MLC's help text: no rows, exactly one one-line error naming the file."""
    res = parse_real(entry["rel"])
    assert res.rows == []
    assert len(res.errors) == 1
    err = res.errors[0]
    assert err.startswith(entry["rel"] + ": ") and "\n" not in err
    if "help" in entry["notes"]:
        assert "usage text ('Invalid Argument:--help')" in err
    else:
        assert "header-only" in err


def test_real_mlc_fixture_tally(real: Path) -> None:
    """61 of 66 MLC files give rows; the row count adds up by hand: hpcleuven 82 + 6x38, fiumad 28 + 1,
    ChrisLvvvv 3x19, EricFanexe 15x19 + 15x1, bernep 8x19, duncachunk1 10x19, AIALRA-0 3x3 = 1047."""
    parsed = [e for e in SOURCES if parse_real(e["rel"]).rows]
    assert len(parsed) == 61
    assert sum(len(parse_real(e["rel"]).rows) for e in SOURCES) == 82 + 6 * 38 + 28 + 1 + 3 * 19 + 15 * 19 + 15 + 8 * 19 + 10 * 19 + 3 * 3


def test_looks_like_mlc_on_every_fixture() -> None:
    """Auto-detection claims every MLC file and no fio file (485 fixtures)."""
    for e in SOURCES:
        assert looks_like_mlc(_read(REAL / e["rel"])), e["rel"]
    others = _non_mlc_fixture_files()
    assert len(others) > 400
    claimed = [p for p in others if looks_like_mlc(_read(p))]
    assert claimed == []
    assert not looks_like_mlc("") and not looks_like_mlc("hello\nworld\n")


def test_fio_files_give_an_error_not_rows() -> None:
    """parse_mlc on fio output returns one 'no MLC measurement' error and no row."""
    for p in _non_mlc_fixture_files()[::25]:
        res = parse_mlc(_read(p), p.name)
        assert res.rows == [] and len(res.errors) == 1 and "no MLC or loadlat measurement" in res.errors[0]


# ---------------------------------------------------------------------------------------------------
# real files, values read by eye


def test_hpcleuven_v31a_broadwell_full_run() -> None:
    """v3.1a full default run, 4 NUMA nodes: every section, numbers as printed in the file."""
    res = parse_real(f"{HPC}/old_hardware/breniac/broadwell_mlc.txt")
    assert res.errors == []
    mat = {(r["src_node"], r["dst_node"]): r["latency_ns"] for r in of_test(res, "latency_matrix")}
    assert len(mat) == 16 and mat[(0, 0)] == 73.8 and mat[(0, 3)] == 196.0 and mat[(3, 2)] == 141.1
    peak = {r["traffic"]: (r["bandwidth_MBps"], r["read_fraction"]) for r in of_test(res, "peak_injection_bandwidth")}
    assert peak == {"read-only": (144906.6, 1.0), "3:1": (130347.1, 0.75), "2:1": (126626.7, 2 / 3),
                    "1:1": (114846.3, 0.5), "stream-triad": (125606.5, 2 / 3)}
    bw = {(r["src_node"], r["dst_node"]): r["bandwidth_MBps"] for r in of_test(res, "bandwidth_matrix")}
    assert bw[(0, 0)] == 36481.7 and bw[(3, 3)] == 36348.1 and bw[(1, 0)] == 20194.2
    assert {r["traffic"] for r in of_test(res, "bandwidth_matrix")} == {"read-only"}
    ll = loaded(res)
    assert [r["inject_delay"] for r in ll] == [0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300,
                                               1700, 2500, 3500, 5000, 9000, 20000]
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (203.58, 145200.4)
    assert (ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == (74.12, 1687.0)
    assert {(r["traffic"], r["read_fraction"], r["access_bytes"]) for r in ll} == {("read-only", 1.0, 64)}
    c2c = of_test(res, "c2c_latency")
    assert len(c2c) == 2 + 12 + 12
    local = {r["detail"]: r["latency_ns"] for r in c2c if r["src_node"] is None}
    assert local == {"Local Socket L2->L2 HIT": 34.4, "Local Socket L2->L2 HITM": 39.2}
    writer = {(r["src_node"], r["dst_node"]): r["latency_ns"] for r in c2c if "writer socket" in (r["detail"] or "")}
    reader = {(r["src_node"], r["dst_node"]): r["latency_ns"] for r in c2c if "reader socket" in (r["detail"] or "")}
    assert writer[(0, 1)] == 46.9 and writer[(3, 1)] == 85.5 and (0, 0) not in writer
    assert reader[(0, 3)] == 145.5 and reader[(3, 2)] == 94.1
    assert "LLC->LLC HITM" in c2c[2]["detail"]


@pytest.mark.parametrize("rel,version,ll_first,ll_last,all_reads,triad,lat00,bw00,hit", [
    (f"{HPC}/old_hardware/thinking/haswell_mlc.txt", "v3.1a", (200.00, 122365.1), (89.46, 1562.5),
     122130.1, 109274.7, 92.1, 60758.6, 33.2),
    (f"{HPC}/old_hardware/breniac/skylake_breniac_mlc_avx512.txt", "v3.5", (147.22, 221598.3), (79.21, 1936.2),
     221550.1, 168425.4, 79.8, 111180.9, 49.4),
    (f"{HPC}/tier2_hardware/icelake_mlc.txt", "v3.10", (264.04, 351871.6), (91.23, 2867.0),
     351762.1, 320198.4, 89.2, 175690.9, 60.1),
])
def test_hpcleuven_versions(rel, version, ll_first, ll_last, all_reads, triad, lat00, bw00, hit) -> None:
    """v3.1a / v3.5 / v3.10 full runs: first/last loaded row, ALL Reads, triad, [0][0]s, c2c HIT."""
    res = parse_real(rel)
    assert res.errors == [] and {r["tool_version"] for r in res.rows} == {version}
    ll = loaded(res)
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == ll_first
    assert (ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == ll_last
    peak = {r["traffic"]: r["bandwidth_MBps"] for r in of_test(res, "peak_injection_bandwidth")}
    assert (peak["read-only"], peak["stream-triad"]) == (all_reads, triad)
    assert of_test(res, "latency_matrix")[0]["latency_ns"] == lat00
    assert of_test(res, "bandwidth_matrix")[0]["bandwidth_MBps"] == bw00
    assert of_test(res, "c2c_latency")[0]["latency_ns"] == hit


def test_icelake_random_access_is_noted() -> None:
    """v3.10 could not disable prefetchers: latency rows say 'random access', bandwidth rows do not."""
    res = parse_real(f"{HPC}/tier2_hardware/icelake_mlc.txt")
    assert all("random access" in r["detail"] for r in of_test(res, "latency_matrix"))
    assert all("random access" in r["detail"] for r in loaded(res))
    assert all(r["detail"] is None for r in of_test(res, "peak_injection_bandwidth"))
    assert len(of_test(res, "c2c_latency")) == 2 + 2 + 2


def test_fiumad_v311a_full_default_run_and_idle() -> None:
    """v3.11a: the 1-node full run and the 'base frequency clocks' idle latency."""
    res = parse_real(f"{FIUMAD}/full_mlc.txt")
    assert res.errors == []
    assert [r["test"] for r in res.rows].count("latency_matrix") == 1
    assert of_test(res, "latency_matrix")[0]["latency_ns"] == 77.9
    assert [r["bandwidth_MBps"] for r in of_test(res, "peak_injection_bandwidth")] == [
        17602.0, 20384.0, 23013.0, 32980.6, 21714.6]
    assert of_test(res, "bandwidth_matrix")[0]["bandwidth_MBps"] == 17610.3
    ll = loaded(res)
    assert len(ll) == 19 and ll[0]["latency_ns"] == 345.17 and ll[-1]["bandwidth_MBps"] == 1063.8
    assert [r["latency_ns"] for r in of_test(res, "c2c_latency")] == [29.7, 30.5]
    idle = parse_real(f"{FIUMAD}/mlc_idle_latency.txt")
    assert idle.errors == [] and len(idle.rows) == 1
    row = idle.rows[0]
    assert (row["test"], row["latency_ns"], row["tool_version"]) == ("idle_latency", 78.6, "v3.11a")
    assert row["detail"] == "213.3 base frequency clocks per load; random access"
    assert (row["traffic"], row["src_node"], row["dst_node"], row["access_bytes"]) == (None, None, None, 64)


@pytest.mark.parametrize("name,traffic,fraction,access", [
    ("mlc_write0_64.txt", "read-only", 1.0, 64), ("mlc_write0_256.txt", "read-only", 1.0, 256),
    ("mlc_write25_64.txt", "3:1", 0.75, 64), ("mlc_write25_256.txt", "3:1", 0.75, 256),
    ("mlc_write50_64.txt", "1:1", 0.5, 64), ("mlc_write50_256.txt", "1:1", 0.5, 256),
    ("mlc_write100_64.txt", "write-only-nt", 0.0, 64), ("mlc_write100_256.txt", "write-only-nt", 0.0, 256),
])
def test_bernep_traffic_and_access_size(name, traffic, fraction, access) -> None:
    """v3.10 -R/-W3/-W5/-W6 with -l64/-l256: traffic, read fraction and access size from the command line."""
    ll = loaded(parse_real(f"{BERNEP}/{name}"))
    assert len(ll) == 19
    assert {(r["traffic"], r["read_fraction"], r["access_bytes"]) for r in ll} == {(traffic, fraction, access)}


def test_bernep_values_read_by_eye() -> None:
    """mlc_write25_64: rows 0, 10 and 18 as printed."""
    ll = loaded(parse_real(f"{BERNEP}/mlc_write25_64.txt"))
    assert (ll[0]["inject_delay"], ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (0, 207.22, 36076.5)
    assert (ll[10]["inject_delay"], ll[10]["latency_ns"], ll[10]["bandwidth_MBps"]) == (700, 92.56, 15589.7)
    assert (ll[18]["inject_delay"], ll[18]["latency_ns"], ll[18]["bandwidth_MBps"]) == (20000, 70.62, 1609.5)


@pytest.mark.parametrize("code,traffic", [("R", "read-only"), ("W-6", "write-only-nt"), ("W-7", "2:1-nt"),
                                          ("W-8", "1:1-nt"), ("W-9", "3:1-nt")])
@pytest.mark.parametrize("size", [64, 256, 1024])
def test_ericfanexe_throughput_and_bannerless_tables(code, traffic, size) -> None:
    """v3.11a -d0 single rows (traffic and -l from the command line) and the bannerless mlc_test_* tables:
    traffic from the label line above the table, access size unknown (never MLC's default guessed)."""
    one = loaded(parse_real(f"{ERIC}/mlc_throughput_{size}-{code}.txt"))
    assert len(one) == 1 and one[0]["inject_delay"] == 0
    assert (one[0]["traffic"], one[0]["access_bytes"], one[0]["tool_version"]) == (traffic, size, "v3.11a")
    assert "-d0" in one[0]["detail"]
    bare = parse_real(f"{ERIC}/mlc_test_{size}-{code}.txt")
    assert bare.errors == [] and len(bare.rows) == 19
    assert {(r["tool"], r["tool_version"], r["traffic"], r["access_bytes"]) for r in bare.rows} == {
        ("mlc", "", traffic, None)}
    assert all("traffic from the label line" in r["detail"] and "access size unknown" in r["detail"]
               for r in bare.rows)


def test_ericfanexe_values_read_by_eye() -> None:
    """mlc_test_1024-W-7 (label '2 reads and 1 non-temporal write') and mlc_throughput_64-R."""
    ll = loaded(parse_real(f"{ERIC}/mlc_test_1024-W-7.txt"))
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (424.07, 19156.4)
    assert (ll[7]["inject_delay"], ll[7]["latency_ns"], ll[7]["bandwidth_MBps"]) == (300, 353.15, 19453.9)
    assert ll[0]["read_fraction"] == pytest.approx(2 / 3)
    one = loaded(parse_real(f"{ERIC}/mlc_throughput_64-R.txt"))
    assert (one[0]["latency_ns"], one[0]["bandwidth_MBps"], one[0]["read_fraction"]) == (513.40, 32710.1, 1.0)


def test_duncachunk_windows_cmd_transcripts() -> None:
    """Windows cmd: CRLF, prompt lines, space-aligned table, no final newline; one run per file."""
    res = parse_real(f"{DUNCA}/Read_64.txt")
    assert "\r\n" in _read(REAL / DUNCA / "Read_64.txt")
    assert res.errors == []
    ll = loaded(res)
    assert len(ll) == 19 and {r["run"] for r in ll} == {0}
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (141.81, 23305.5)
    assert (ll[4]["inject_delay"], ll[4]["latency_ns"], ll[4]["bandwidth_MBps"]) == (50, 90.62, 28103.3)
    assert (ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == (61.68, 1131.1)
    assert {(r["traffic"], r["access_bytes"], r["tool_version"], r["detail"]) for r in ll} == {
        ("read-only", 64, "v3.10", "Windows")}
    w6 = loaded(parse_real(f"{DUNCA}/W6_256.txt"))
    assert (w6[0]["latency_ns"], w6[0]["bandwidth_MBps"], w6[0]["traffic"], w6[0]["access_bytes"]) == (
        294.83, 7493.4, "write-only-nt", 256)
    assert (w6[-1]["latency_ns"], w6[-1]["bandwidth_MBps"]) == (94.67, 682.0)


def test_duncachunk_file_without_banner_uses_its_command_line() -> None:
    """W8_64.txt starts at 'Command line parameters:' (no banner): tool mlc, empty version, -W8 -l64."""
    ll = loaded(parse_real(f"{DUNCA}/W8_64.txt"))
    assert len(ll) == 19
    assert {(r["tool"], r["tool_version"], r["traffic"], r["read_fraction"], r["access_bytes"]) for r in ll} == {
        ("mlc", "", "1:1-nt", 0.5, 64)}
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (303.56, 22433.5)
    assert (ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == (57.74, 1203.8)


@pytest.mark.parametrize("rep,first,last", [(1, (1261.27, 16790.5), (1243.62, 16126.7)),
                                            (2, (1259.98, 16731.1), (1253.59, 16729.7)),
                                            (3, (1253.57, 16735.4), (1252.27, 16741.0))])
def test_aialra_interrupted_runs_keep_rows_and_report(rep, first, last) -> None:
    """v3.11b interrupted sweeps (>= 1000 ns latencies, a delay with no values, 'Exiting...')."""
    rel = f"{AIALRA}/results/sec5/mlc_loaded_rep{rep}.raw"
    res = parse_real(rel)
    ll = loaded(res)
    assert [r["inject_delay"] for r in ll] == [0, 2, 8]
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == first
    assert (ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == last
    assert all(r["detail"].startswith("partial: run interrupted") and "-X" in r["detail"] for r in ll)
    assert len(res.errors) == 1
    err = res.errors[0]
    assert err.startswith(rel + ": ") and "\n" not in err
    assert "delay 00015 has no values" in err and "Exiting..." in err and "3 complete rows" in err


def test_chrislvvvv_concatenated_runs() -> None:
    """Three '==== Run N ====' runs: run = 0, 1, 2 with 19 rows each; v3.11b; default read-only."""
    res = parse_real(f"{CHRIS}/latency_20251001_233608.txt")
    assert res.errors == []
    assert [len(loaded(res, i)) for i in range(3)] == [19, 19, 19]
    assert {r["run"] for r in res.rows} == {0, 1, 2}
    assert (loaded(res, 0)[0]["latency_ns"], loaded(res, 0)[0]["bandwidth_MBps"]) == (210.00, 78816.3)
    assert (loaded(res, 1)[0]["latency_ns"], loaded(res, 1)[0]["bandwidth_MBps"]) == (263.66, 67919.2)
    assert (loaded(res, 2)[-1]["latency_ns"], loaded(res, 2)[-1]["bandwidth_MBps"]) == (155.95, 1083.9)
    assert {(r["traffic"], r["access_bytes"], r["tool_version"]) for r in res.rows} == {("read-only", 64, "v3.11b")}
    assert all(r["detail"] == "random access" for r in res.rows)


# ---------------------------------------------------------------------------------------------------
# synthetic inputs (hand-made: loadlat, PowerShell, the MLC modes no real file has on its own)


def test_synthetic_loadlat_output() -> None:
    """loadlat banner and '#' comments: three runs (loaded -W5 -l256, idle, bare peak lines)."""
    res = parse_mlc((SYNTH / "synthetic_loadlat_v0.1_three_runs.txt").read_text(), "ll.txt")
    assert res.errors == []
    assert {(r["tool"], r["tool_version"]) for r in res.rows} == {("loadlat", "v0.1")}
    ll = loaded(res)
    assert len(ll) == 19 and {r["run"] for r in ll} == {0}
    assert {(r["traffic"], r["read_fraction"], r["access_bytes"]) for r in ll} == {("1:1", 0.5, 256)}
    assert (ll[0]["inject_delay"], ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (0, 142.37, 9876.5)
    assert (ll[-1]["inject_delay"], ll[-1]["latency_ns"], ll[-1]["bandwidth_MBps"]) == (20000, 93.62, 53.4)
    idle = of_test(res, "idle_latency")
    assert [(r["run"], r["latency_ns"]) for r in idle] == [(1, 93.8)]
    assert idle[0]["detail"].startswith("281.4 core clocks")
    peak = of_test(res, "peak_injection_bandwidth")
    assert [(r["run"], r["traffic"], r["bandwidth_MBps"]) for r in peak] == [
        (2, "read-only", 10112.3), (2, "3:1", 9540.8), (2, "2:1", 9321.6), (2, "1:1", 8850.2),
        (2, "stream-triad", 9012.7)]
    assert looks_like_mlc((SYNTH / "synthetic_loadlat_v0.1_three_runs.txt").read_text())


def test_synthetic_powershell_transcript() -> None:
    """PowerShell transcript with CRLF: header/footer ignored (no 'End time' bandwidth row), 3 runs."""
    raw = (SYNTH / "synthetic_windows_powershell_transcript.txt").read_bytes()
    assert b"\r\n" in raw
    res = parse_mlc(raw.decode(), "ps.txt")
    assert res.errors == []
    assert [r["test"] for r in res.rows] == ["idle_latency"] + ["max_bandwidth"] * 5 + ["loaded_latency"] * 5
    assert [r["run"] for r in res.rows] == [0] + [1] * 5 + [2] * 5
    assert res.rows[0]["latency_ns"] == 81.7
    assert [r["bandwidth_MBps"] for r in of_test(res, "max_bandwidth")] == [
        38744.12, 35011.48, 34620.90, 33105.77, 34987.03]
    ll = loaded(res)
    assert (ll[0]["latency_ns"], ll[0]["bandwidth_MBps"]) == (1102.45, 36120.4)
    assert {(r["traffic"], r["access_bytes"]) for r in ll} == {("2:1", 128)}
    assert all("Windows" in r["detail"] for r in res.rows)
    # PowerShell's '>' writes UTF-16: read back as UTF-8 with replacement it still parses the same.
    utf16 = parse_mlc(raw.decode().encode("utf-16").decode("utf-8", errors="replace"), "ps.txt")
    assert utf16.rows == res.rows


def test_synthetic_linux_modes_with_prompts() -> None:
    """latency matrix, bandwidth matrix -W5 -l128, c2c, idle -j1, peak; one run per bash prompt."""
    res = parse_mlc((SYNTH / "synthetic_linux_mlc_v3.9_five_modes_with_prompts.txt").read_text(), "m.txt")
    assert res.errors == []
    assert sorted({(r["run"], r["test"]) for r in res.rows}) == [
        (0, "latency_matrix"), (1, "bandwidth_matrix"), (2, "c2c_latency"), (3, "idle_latency"),
        (4, "peak_injection_bandwidth")]
    lat = {(r["src_node"], r["dst_node"]): r["latency_ns"] for r in of_test(res, "latency_matrix")}
    assert lat == {(0, 0): 81.6, (0, 1): 137.9, (1, 0): 137.5, (1, 1): 81.3}
    bw = of_test(res, "bandwidth_matrix")
    assert {(r["traffic"], r["read_fraction"], r["access_bytes"]) for r in bw} == {("1:1", 0.5, 128)}
    assert [r["bandwidth_MBps"] for r in bw] == [58384.5, 25589.4, 25592.1, 58411.0]
    c2c = of_test(res, "c2c_latency")
    assert [(r["src_node"], r["dst_node"], r["latency_ns"]) for r in c2c][2:] == [
        (0, 1, 113.9), (1, 0, 113.3), (0, 1, 177.0), (1, 0, 176.4)]
    idle = of_test(res, "idle_latency")[0]
    assert (idle["latency_ns"], idle["src_node"], idle["dst_node"]) == (135.1, None, 1)
    assert of_test(res, "peak_injection_bandwidth")[3]["bandwidth_MBps"] == 93811.6


# ---------------------------------------------------------------------------------------------------
# variants built from real text


BROADWELL = f"{HPC}/old_hardware/breniac/broadwell_mlc.txt"


def test_crlf_and_trailing_whitespace_do_not_change_rows() -> None:
    """CRLF line ends and extra trailing tabs/spaces give the same rows as the original text."""
    text = _read(REAL / BROADWELL)
    base = parse_mlc(text, "x").rows
    assert parse_mlc(text.replace("\n", "\r\n"), "x").rows == base
    assert parse_mlc("\n".join(line + " \t " for line in text.split("\n")), "x").rows == base


def test_space_aligned_table_with_long_latencies() -> None:
    """Tabs expanded to spaces (as a console copy does), also where latency >= 1000 ns eats the gap."""
    text = _read(REAL / AIALRA / "results/sec5/mlc_loaded_rep1.raw").expandtabs(8)
    ll = loaded(parse_mlc(text, "x"))
    assert [(r["latency_ns"], r["bandwidth_MBps"]) for r in ll] == [
        (1261.27, 16790.5), (1248.66, 16105.3), (1243.62, 16126.7)]


def test_concatenated_runs_without_separators_and_bannerless_tables() -> None:
    """Two real files pasted together (no separator) are runs 0 and 1; two bare tables also split."""
    a, b = _read(REAL / BERNEP / "mlc_write25_64.txt"), _read(REAL / BERNEP / "mlc_write100_256.txt")
    res = parse_mlc(a + b, "x")
    assert [len(loaded(res, i)) for i in (0, 1)] == [19, 19]
    assert loaded(res, 0)[0]["traffic"] == "3:1" and loaded(res, 1)[0]["traffic"] == "write-only-nt"
    assert loaded(res, 1)[0]["access_bytes"] == 256
    c, d = _read(REAL / ERIC / "mlc_test_64-R.txt"), _read(REAL / ERIC / "mlc_test_64-W-9.txt")
    res = parse_mlc(c + "\n" + d, "y")
    assert [r["traffic"] for r in loaded(res, 0)][:1] == ["read-only"]
    assert [r["traffic"] for r in loaded(res, 1)][:1] == ["3:1-nt"]
    assert len(loaded(res)) == 38


def test_bare_table_without_label_has_unknown_traffic() -> None:
    """No banner, no command line, no label: traffic and access size stay empty (not MLC's default)."""
    text = "\n".join(_read(REAL / ERIC / "mlc_test_64-W-6.txt").splitlines()[1:])
    ll = loaded(parse_mlc(text, "x"))
    assert len(ll) == 19
    assert {(r["traffic"], r["read_fraction"], r["access_bytes"]) for r in ll} == {(None, None, None)}
    assert "traffic unknown" in ll[0]["detail"]


def test_unknown_traffic_code_is_kept_verbatim() -> None:
    """-W11 (not in memstor's table): traffic 'W11', read fraction empty, a note in detail."""
    text = _read(REAL / BERNEP / "mlc_write25_64.txt").replace("-W3", "-W11")
    ll = loaded(parse_mlc(text, "x"))
    assert {(r["traffic"], r["read_fraction"]) for r in ll} == {("W11", None)}
    assert "unknown traffic code -W11" in ll[0]["detail"]


def test_exiting_outside_a_table_and_failures() -> None:
    """'Exiting...' after an error line and no table: one error quoting MLC's message, no rows."""
    text = ("Intel(R) Memory Latency Checker - v3.11\nCommand line parameters: --loaded_latency -b9g\n\n"
            "ERROR: Failed to allocate memory for buffer of size 9216.000MiB\nExiting...\n")
    res = parse_mlc(text, "f.txt")
    assert res.rows == [] and res.errors == ["f.txt: MLC reported 'ERROR: Failed to allocate memory for "
                                             "buffer of size 9216.000MiB' and measured nothing"]


def test_header_without_rows_is_an_error() -> None:
    """A loaded-latency header whose rows never came: one error line, no rows."""
    text = "".join(_read(REAL / BERNEP / "mlc_write25_64.txt").splitlines(keepends=True)[:10])
    res = parse_mlc(text, "h.txt")
    assert res.rows == [] and len(res.errors) == 1 and "table header without rows" in res.errors[0]


def test_cut_inside_last_number_never_gives_a_wrong_value() -> None:
    """A file cut inside the bandwidth of its last row drops that row (reported), never keeps '16126'."""
    text = _read(REAL / AIALRA / "results/sec5/mlc_loaded_rep1.raw")
    cut = text[: text.index("16126.7") + 5]
    res = parse_mlc(cut, "cut.txt")
    assert [r["bandwidth_MBps"] for r in loaded(res)] == [16790.5, 16105.3]
    assert len(res.errors) == 1 and "delay 00008 has no values" in res.errors[0]
    hit = "Local Socket L2->L2 HIT  latency\t34.4"
    c2c = _read(REAL / BROADWELL)
    res = parse_mlc(c2c[: c2c.index(hit) + len(hit) - 2], "c.txt")
    assert of_test(res, "c2c_latency") == []


def test_matrix_without_heading_is_reported() -> None:
    """A 'Numa node' matrix with no 'Measuring ...' heading cannot be latency or bandwidth: error."""
    text = "Intel(R) Memory Latency Checker - v3.10\n\t\tNuma node\nNuma node\t 0\n       0\t  89.2\n"
    res = parse_mlc(text, "m.txt")
    assert res.rows == [] and len(res.errors) == 1 and "without its 'Measuring" in res.errors[0]


# ---------------------------------------------------------------------------------------------------
# robustness and speed


_REAL_TEXTS = [_read(REAL / e["rel"]) for e in SOURCES] + [_read(p) for p in sorted(SYNTH.glob("synthetic_*"))]


def _key(row: dict) -> tuple:
    """A row without its free-text detail (marks such as 'partial' may differ after a cut)."""
    return tuple(v for k, v in row.items() if k != "detail")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(idx=st.integers(0, len(_REAL_TEXTS) - 1), frac=st.floats(0, 1))
def test_truncations_never_raise_nor_invent_rows(idx: int, frac: float) -> None:
    """Any prefix of a real (or synthetic) file parses without raising, and each row it gives is a row of
    the whole file: a text cut inside a number never yields a shortened number."""
    text = _REAL_TEXTS[idx]
    full = {_key(r) for r in parse_mlc(text, "s").rows}
    res = parse_mlc(text[: int(len(text) * frac)], "s")
    assert isinstance(res, ParseResult)
    assert all(list(r) == MLC_COLUMNS for r in res.rows)
    assert not any("internal parser error" in e for e in res.errors)
    assert all("\n" not in e and e.startswith("s: ") for e in res.errors)
    assert {_key(r) for r in res.rows} <= full


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(idx=st.integers(0, len(_REAL_TEXTS) - 1),
       flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=8))
def test_byte_flips_never_raise(idx: int, flips: list) -> None:
    """Random bytes written into real files: always a ParseResult, never a traceback or internal error."""
    data = bytearray(_REAL_TEXTS[idx].encode())
    for pos, byte in flips:
        data[int(pos * len(data))] = byte
    res = parse_mlc(data.decode("utf-8", errors="replace"), "f")
    assert isinstance(res, ParseResult)
    assert all(list(r) == MLC_COLUMNS for r in res.rows)
    assert not any("internal parser error" in e for e in res.errors)
    looks_like_mlc(data.decode("latin-1"))


def test_time_is_linear_and_hostile_lines_are_cheap() -> None:
    """Parse time grows ~linearly with size; huge lines of spaces, colons and digits stay fast."""
    text = _read(REAL / BROADWELL)

    def best(t: str) -> float:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            parse_mlc(t, "x")
            times.append(time.perf_counter() - t0)
        return min(times)

    small, big = best(text * 20), best(text * 160)
    assert big < small * 8 * 3  # 8x the text, allow 3x noise on a shared machine
    assert len(parse_mlc(text * 160, "x").rows) == 82 * 160
    hostile = ("ALL Reads" + " " * 200_000 + ":" + "1" * 10 + "\n" + " \t" * 200_000 + "\n"
               + "\n" * 200_000 + "Numa node" + "\t 0" * 100_000 + "\n" + "0 " * 100_000 + "\n")
    t0 = time.perf_counter()
    res = parse_mlc(hostile, "h")
    looks_like_mlc(hostile)
    looks_like_mlc("\n" * 200_000 + " " * 100_000)
    assert time.perf_counter() - t0 < 5
    assert res.rows == [] and len(res.errors) == 1


def test_no_latency_thread_table_and_avx512_binary() -> None:
    """-T tables (Inject/Bandwidth only): bandwidth rows, empty latency; ./mlc_avx512 prompts split runs."""
    text = ("user@h:~$ ./mlc_avx512 --loaded_latency -T -d0\nIntel(R) Memory Latency Checker - v3.10\n"
            "Command line parameters: --loaded_latency -T -d0\n\nInject\tBandwidth\nDelay\tMB/sec\n"
            "==========================\n 00000\t  98765.4\n"
            "user@h:~$ ./mlc_avx512 --idle_latency\nIntel(R) Memory Latency Checker - v3.10\n"
            "Each iteration took 181.4 clocks ( 67.2 ns)\n")
    res = parse_mlc(text, "t")
    assert res.errors == []
    assert [(r["run"], r["test"], r["inject_delay"], r["latency_ns"], r["bandwidth_MBps"]) for r in res.rows] == [
        (0, "loaded_latency", 0, None, 98765.4), (1, "idle_latency", None, 67.2, None)]


def test_read_only_line_gives_traffic_of_a_bare_table() -> None:
    """No banner or command line, but MLC's 'Using Read-only traffic type' line: read-only, size unknown."""
    lines = _read(REAL / CHRIS / "latency_20251001_233608.txt").splitlines()
    text = "\n".join(lines[8:33])  # from 'Measuring Loaded Latencies' to the end of run 1's table
    assert text.startswith("Measuring Loaded Latencies")
    ll = loaded(parse_mlc(text, "x"))
    assert len(ll) == 19
    assert {(r["traffic"], r["access_bytes"]) for r in ll} == {("read-only", None)}


# ---------------------------------------------------------------------------------------------------
# the real loadlat tool (built from lib/loadlat like `make loadlat`, into a temp folder)


@pytest.fixture(scope="module")
def loadlat_exe(loadlat_built) -> Path:
    """loadlat compiled by memstor.measure.loadlat.build (conftest: once per session)."""
    return loadlat_built


def _loadlat(exe: Path, *args: str) -> str:
    """stdout and stderr of one short loadlat run, merged as a shell '2>&1' capture would be."""
    proc = subprocess.run([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


@pytest.mark.loadlat
def test_real_loadlat_no_latency_thread_and_peak(loadlat_exe: Path) -> None:
    """-T prints 0.00 in the latency column: parsed as 'not measured', never as 0 ns; peak has 5 rows."""
    # 0.3 s: with -t0.1 a load thread descheduled on a busy 2-vCPU VM can miss the whole window (loadlat
    # then fails the point, as it should: "load thread on CPU 1 saw no measured window")
    text = _loadlat(loadlat_exe, "--loaded_latency", "-T", "-d0", "-t0.3", "-b8m", "-W6", "-l256")
    res = parse_mlc(text, "t.txt")
    assert res.errors == []
    (row,) = res.rows
    printed = re.search(r"^ 00000\t\s*([0-9.]+)\t\s*([0-9.]+)$", text, re.MULTILINE)
    assert printed.group(1) == "0.00"
    assert (row["tool"], row["latency_ns"], row["bandwidth_MBps"]) == ("loadlat", None, float(printed.group(2)))
    assert (row["traffic"], row["access_bytes"]) == ("write-only-nt", 256)
    assert "latency not measured (-T)" in row["detail"]
    peak = parse_mlc(_loadlat(loadlat_exe, "--peak_injection_bandwidth", "-t0.1", "-b8m"), "p.txt")
    assert peak.errors == []
    assert [r["traffic"] for r in peak.rows] == ["read-only", "3:1", "2:1", "1:1", "stream-triad"]
    assert all(r["bandwidth_MBps"] > 0 for r in peak.rows)


@pytest.mark.loadlat
def test_real_loadlat_interrupted_sweep(loadlat_exe: Path) -> None:
    """SIGINT after the first row: loadlat's '# interrupted by signal 2' note marks kept rows partial."""
    proc = subprocess.Popen([str(loadlat_exe), "--loaded_latency", "-t0.1", "-b8m"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if re.match(r"^ [0-9]{5}\t", line):
                break
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines) + rest
    res = parse_mlc(text, "i.txt")
    n = len(re.findall(r"^ [0-9]{5}\t", text, re.MULTILINE))
    assert 1 <= n < 19 and len(res.rows) == n
    assert all(r["detail"].startswith("partial: run interrupted") for r in res.rows)
    assert len(res.errors) == 1 and "loadlat stopped by signal 2" in res.errors[0]


def test_loadlat_failure_notes_become_errors() -> None:
    """loadlat's '# ... failed: why' notes: the point has no row and its reason is one error line."""
    head = "loadlat (Memory Latency Checker-compatible) - v0.1\nCommand line parameters: --idle_latency -b8m\n\n"
    res = parse_mlc(head + "# measurement failed: the latency thread never ran\n", "i.txt")
    assert res.rows == [] and res.errors == [
        "i.txt: loadlat reported 'measurement failed: the latency thread never ran' and measured nothing"]
    peak = (head.replace("--idle_latency", "--peak_injection_bandwidth")
            + "ALL Reads        :\t7693.5\t\n# 3:1 Reads-Writes  failed: no CPU time\n1:1 Reads-Writes :\t9819.7\t\n")
    res = parse_mlc(peak, "p.txt")
    assert [(r["traffic"], r["bandwidth_MBps"]) for r in res.rows] == [("read-only", 7693.5), ("1:1", 9819.7)]
    assert res.errors == ["p.txt: loadlat: 3:1 Reads-Writes failed: no CPU time"]
