"""memstor.parse.fio on every real fio output in tests/data/real (values read by hand, see SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstor.core.errors import ParseError
from memstor.core.schema import FIO_COLUMNS
from memstor.parse.fio import clat_bins, iodepth_levels, load_fio_json, looks_like_fio, parse_fio

PKB = "GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio"
AIALRA = "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project3 SSD/results"
CHRIS = "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project3/results"
ERIC = "EricFanexe__ECSE6320/Project3/results"
MMN = "MMN0001__Repo-for-Advanced-Computer-Systems/Project3/log&json data"
BERNEP = "bernep__Advanced-Computer-Systems/Project 3/results"
DUNCA = "duncachunk1__ECSE-4320/HW3/fioResults"
FANG = "fangyunh__Advanced-Computer-Systems/SSD_performance/data"
FIUMAD = "fiumad__Advanced-Computer-Systems/proj3/fio_results"
YAYUE = "YayueHou__ECSE6320-Advanced-computer-Systems-Fall2023/Project 3/results"
ZMAN = "Zman350x__AdvancedComputerSystemsProjects/OctoberProject3/fio"


def _parse(real: Path, rel: str):
    """ParseResult of one fixture file (read as UTF-8 text, newlines kept as they are)."""
    path = real / rel
    return parse_fio(path.read_text(encoding="utf-8", errors="replace"), rel)


def _row(result, jobname: str, direction: str, index: int = 0) -> dict:
    """The index-th row of a job and direction."""
    rows = [r for r in result.rows if r["jobname"] == jobname and r["direction"] == direction]
    assert len(rows) > index, [(r["jobname"], r["direction"]) for r in result.rows]
    return rows[index]


def _fio_files(real: Path) -> list[Path]:
    """Every fixture file that holds fio output, found by content (many .txt there are MLC)."""
    files = []
    for path in sorted(real.rglob("*")):
        if path.is_file() and path.name != "SOURCES.md":
            if looks_like_fio(path.read_text(encoding="utf-8", errors="replace")):
                files.append(path)
    return files


# ------------------------------------------------------------------------------------ coverage
def test_every_fio_fixture_gives_rows(real: Path) -> None:
    files = _fio_files(real)
    by_suffix = {s: sum(1 for f in files if f.suffix == s) for s in (".json", ".txt", ".log")}
    assert by_suffix == {".json": 248, ".txt": 166, ".log": 5}  # 248 JSON + 171 text files
    for path in files:
        result = parse_fio(path.read_text(encoding="utf-8", errors="replace"), str(path))
        assert result.errors == [], result.errors
        assert result.rows, path
        for row in result.rows:
            assert list(row) == FIO_COLUMNS
            assert row["direction"] in ("read", "write", "trim")
            assert row["source"] == str(path)
            assert row["error"] == 0 and row["iops"] > 0 and row["bw_MBps"] > 0
            assert row["fio_version"].startswith("fio-")
            assert row["lat_mean_us"] is not None and row["lat_min_us"] <= row["lat_mean_us"] <= row["lat_max_us"]


def test_mlc_files_are_not_fio_and_give_one_line_error(real: Path) -> None:
    mlc = [p for p in sorted(real.rglob("*mlc*")) if p.is_file()]
    assert len(mlc) >= 40
    for path in mlc:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not looks_like_fio(text), path
        result = parse_fio(text, path.name)
        assert result.rows == []
        assert len(result.errors) == 1 and "\n" not in result.errors[0]
        assert result.errors[0].startswith(f"{path.name}: ")


def test_truncated_json_gives_one_line_error(real: Path) -> None:
    text = (real / FIUMAD / "test_combination_bs4k_rw50_qd64.json").read_text()
    result = parse_fio(text[: len(text) // 2], "half.json")
    assert result.rows == []
    assert result.errors == [result.errors[0]] and result.errors[0].startswith("half.json: ")
    assert "\n" not in result.errors[0]
    with pytest.raises(ParseError):
        load_fio_json(text[: len(text) // 2])


def test_text_without_results_gives_one_line_error(real: Path) -> None:
    text = (real / ERIC / "fio_results_50-4096-16-20241016042932.txt").read_text()
    header_only = "\n".join(text.splitlines()[:3])  # job line, fio-3.16, Starting 1 process
    result = parse_fio(header_only, "cut.txt")
    assert result.rows == [] and len(result.errors) == 1
    assert result.errors[0].startswith("cut.txt: ") and "interrupted" in result.errors[0]


# ---------------------------------------------------------------------------------- fio 2.x JSON
def test_fio_2_1_4_json_usec_and_kib(real: Path) -> None:
    result = _parse(real, f"{PKB}/fio-parser-sample-result.json")
    assert len(result.rows) == 5  # 5 jobs, one active direction each (2.1.4 prints no job options)
    row = _row(result, "sequential_write", "write")
    assert row["lat_mean_us"] == pytest.approx(478737.47)  # fio 2.x lat is already usec
    assert row["lat_min_us"] == 189438 and row["lat_max_us"] == 869970
    assert row["iops"] == 133
    assert row["bw_MBps"] == pytest.approx(68118 * 1024 / 1e6)  # bw 68118 KiB/s, decimal MB/s
    assert row["clat_p50_us"] == 444416 and row["clat_p90_us"] == 610304 and row["clat_p99_99_us"] == 872448
    assert row["runtime_s"] == pytest.approx(5.314)
    assert row["fio_version"] == "fio-2.1.4"
    assert row["rw"] is None and row["iodepth"] is None  # options unknown, not invented
    assert _row(result, "random_read_test_parallel", "read")["lat_mean_us"] == pytest.approx(198058.86)


def test_fio_2_17_json_global_options_and_defaults(real: Path) -> None:
    result = _parse(real, f"{PKB}/hist/pkb-7fb0c9d8-0_fio.json")
    assert [(r["rw"], r["direction"]) for r in result.rows] == [("randread", "read"), ("randwrite", "write")]
    row = result.rows[0]
    assert row["iops"] == pytest.approx(8086.673998) and row["lat_mean_us"] == pytest.approx(245.531122)
    assert row["bs_bytes"] == 16384 and row["numjobs"] == 2 and row["iodepth"] == 1
    assert row["ioengine"] == "libaio" and row["direct"] == 1  # from "global options"
    assert row["total_ios"] == 80891 and row["runtime_s"] == pytest.approx(10.003)
    assert result.rows[1]["lat_mean_us"] == pytest.approx(810.977136)


# ---------------------------------------------------------------------------------- fio 3.x JSON
def test_fio_3_28_json_randrw(real: Path) -> None:
    result = _parse(real, f"{FIUMAD}/test_combination_bs4k_rw50_qd64.json")
    read, write = _row(result, "test_combination", "read"), _row(result, "test_combination", "write")
    assert read["iops"] == pytest.approx(97554.996334) and write["iops"] == pytest.approx(97525.731618)
    assert read["lat_mean_us"] == pytest.approx(626.926533142)  # lat_ns / 1000
    assert write["lat_mean_us"] == pytest.approx(27.684764459)
    assert read["bw_MBps"] == pytest.approx(399.585264)  # bw_bytes / 1e6
    assert read["clat_p50_us"] == pytest.approx(337.92) and read["clat_p99_9_us"] == pytest.approx(5406.72)
    assert read["total_ios"] == 2926845 and read["runtime_s"] == pytest.approx(30.002)
    assert (read["rw"], read["rwmixread"], read["iodepth"], read["bs_bytes"]) == ("randrw", 50, 64, 4096)
    assert read["fio_version"] == "fio-3.28"


def test_fio_3_36_json_custom_percentile_list(real: Path) -> None:
    result = _parse(real, f"{AIALRA}/rw_mix/mix_R70W30_1.json")
    read = _row(result, "mix_R70W30", "read")
    assert read["iops"] == pytest.approx(71944.237051) and read["lat_mean_us"] == pytest.approx(435.472001894)
    assert read["bw_MBps"] == pytest.approx(294.687827)
    assert read["clat_p50_us"] == pytest.approx(134.144) and read["clat_p99_9_us"] == pytest.approx(3391.488)
    assert read["clat_p90_us"] is None and read["clat_p99_99_us"] is None  # percentile_list=50:95:99:99.9
    assert (read["rwmixread"], read["ioengine"], read["direct"]) == (70, "io_uring", 1)
    assert _row(result, "mix_R70W30", "write")["lat_mean_us"] == pytest.approx(20.6511263)


def test_fio_3_36_json_plus_bins(real: Path) -> None:
    text = (real / CHRIS / "qd_sweep.json").read_text()
    result = parse_fio(text, "qd_sweep.json")
    assert [r["jobname"] for r in result.rows] == ["qd-1", "qd-2", "qd-4", "qd-8", "qd-16", "qd-32", "qd-64", "qd-128"]
    first = result.rows[0]
    assert first["iops"] == pytest.approx(6775.174161) and first["lat_mean_us"] == pytest.approx(146.486871417)
    assert [r["iodepth"] for r in result.rows] == [1, 2, 4, 8, 16, 32, 64, 128]  # global iodepth=1 overridden
    doc = load_fio_json(text)
    for job, row in zip(doc["jobs"], result.rows):
        bins = clat_bins(job, "read")
        assert sum(bins.values()) == row["total_ios"]
        clat = job["read"]["clat_ns"]  # bins are fio's histogram buckets (within ~1.6 % of a value)
        assert min(bins) == pytest.approx(clat["min"], rel=0.02) and max(bins) == pytest.approx(clat["max"], rel=0.02)
        levels = iodepth_levels(job)  # % of time at each depth: the job's iodepth dominates
        assert max(levels, key=levels.get) == (str(row["iodepth"]) if row["iodepth"] < 64 else ">=64")
    assert clat_bins(doc["jobs"][0], "write") == {}


def test_mmn_numjobs_with_trailing_comma(real: Path) -> None:
    row = _row(_parse(real, f"{MMN}/NJ_32,_run1.json"), "NJ32,_run1", "read")
    assert row["numjobs"] == 32 and row["iops"] == pytest.approx(127669.666367)
    assert row["lat_mean_us"] == pytest.approx(249.083579627)


def test_mixed_job_with_rwmixread_0_has_only_write_row(real: Path) -> None:
    result = _parse(real, f"{MMN}/Mix_0R_0W.json")
    assert [(r["direction"], r["rwmixread"]) for r in result.rows] == [("write", 0)]
    assert result.rows[0]["iops"] == pytest.approx(4031.832272)


# ---------------------------------------------------------------------------------- normal text
def test_fio_3_16_text(real: Path) -> None:
    result = _parse(real, f"{ERIC}/fio_results_50-4096-16-20241016042932.txt")
    read, write = _row(result, "randrw_test", "read"), _row(result, "randrw_test", "write")
    assert read["iops"] == pytest.approx(577617 / 60.001)  # IOPS=9626 printed; exact from issued/runtime
    assert read["bw_MBps"] == pytest.approx(39.4, rel=0.005)  # "(39.4MB/s)": decimal
    assert read["lat_mean_us"] == 855.12 and read["lat_max_us"] == pytest.approx(1273700)  # max=1273.7k usec
    assert read["clat_p50_us"] == 709 and read["clat_p99_99_us"] == 1958
    assert write["lat_mean_us"] == 797.71 and write["total_ios"] == 576871
    assert (read["rw"], read["ioengine"], read["iodepth"], read["bs_bytes"]) == ("randrw", "libaio", 16, 4096)
    assert read["rwmixread"] is None  # not printed in text and both directions ran
    assert read["fio_version"] == "fio-3.16"


def test_fio_3_16_wsl_crlf_prompts_numjobs(real: Path) -> None:
    result = _parse(real, f"{DUNCA}/readOutput128.txt")
    assert [r["bs_bytes"] for r in result.rows] == [4096, 32768, 131072]  # 3 runs after "sudo fio" prompts
    first = result.rows[0]
    assert first["numjobs"] == 4 and first["ioengine"] == "sync" and first["iodepth"] == 128
    assert first["iops"] == pytest.approx(551227 / 1.001)  # IOPS=551k
    assert first["bw_MBps"] == pytest.approx(2256, rel=0.001)  # BW=2151MiB/s (2256MB/s)
    assert first["lat_mean_us"] == 5.43
    assert first["clat_p50_us"] == pytest.approx(4.704)  # percentiles printed in nsec
    assert result.rows[2]["bw_MBps"] == pytest.approx(30600, rel=0.001)  # 28.5GiB/s (30.6GB/s)
    assert len(_parse(real, f"{DUNCA}/mixedOutput128.txt").rows) == 6


def test_fio_3_28_text(real: Path) -> None:
    result = _parse(real, f"{BERNEP}/fio_read_128.txt")
    assert [(r["rw"], r["direction"]) for r in result.rows] == [("randwrite", "write")]
    row = result.rows[0]
    assert row["iops"] == pytest.approx(224770 / 20.001)  # IOPS=11.2k
    assert row["bw_MBps"] == pytest.approx(1473, rel=0.001)  # (1473MB/s)
    assert row["lat_mean_us"] == 1332.43 and row["clat_p99_9_us"] == 467665
    assert row["bs_bytes"] == 131072 and row["fio_version"] == "fio-3.28"
    yayue = _parse(real, f"{YAYUE}/fio_results_70-4096-32.txt").rows[0]
    assert yayue["lat_mean_us"] == 1941.82 and yayue["total_ios"] == 329476


def test_fio_3_36_text_log(real: Path) -> None:
    row = _parse(real, f"{MMN}/randread.log").rows[0]
    assert row["iops"] == pytest.approx(163289 / 30.001)  # IOPS=5442
    assert row["lat_mean_us"] == 183.01 and row["ioengine"] == "psync"


def test_windows_fio_3_38(real: Path) -> None:
    result = _parse(real, f"{FANG}/fio_output2.txt")
    read, write = _row(result, "test", "read"), _row(result, "test", "write")
    assert read["iops"] == pytest.approx(131040 / 1.809) and write["iops"] == pytest.approx(131104 / 1.809)
    assert read["lat_mean_us"] == 301.19 and write["lat_mean_us"] == 207.51
    assert read["ioengine"] == "windowsaio" and read["fio_version"] == "fio-3.38"
    msec = _parse(real, f"{FANG}/fio_output40.txt").rows[0]
    assert msec["lat_mean_us"] == pytest.approx(87820)  # "lat (msec): ... avg=87.82"
    assert msec["clat_p50_us"] == pytest.approx(92000)  # "clat percentiles (msec)" 50th=[92]


# ---------------------------------------------------------------------------------- terse + normal
def test_fio_3_36_terse_and_normal(real: Path) -> None:
    result = _parse(real, f"{ZMAN}/rand4k_qd1_result.txt")
    assert len(result.rows) == 2  # the terse line and the normal block describe the same job
    read, write = _row(result, "randread4k", "read"), _row(result, "randread4k", "write")
    assert read["lat_mean_us"] == pytest.approx(61.010907)  # terse's 6 decimals (normal: 61.01)
    assert write["lat_mean_us"] == pytest.approx(10.410904)
    assert read["iops"] == pytest.approx(831841 / 60.001) and read["total_ios"] == 831841
    assert read["clat_p50_us"] is None and read["clat_p99_us"] == 139  # percentile_list 95:99 only


def test_fio_3_36_multi_group(real: Path) -> None:
    result = _parse(real, f"{ZMAN}/rand4k_tail_result.txt")
    assert [(r["jobname"], r["groupid"], r["iodepth"]) for r in result.rows] == [("qd8", 0, 8), ("qd64", 1, 64)]
    assert result.rows[0]["clat_p50_us"] == 61  # "50.0th=[   61]"
    assert result.rows[1]["lat_mean_us"] == pytest.approx(153.789947)
    mix = _parse(real, f"{ZMAN}/rand_mix_sweep_result.txt")
    assert [r["jobname"] for r in mix.rows] == ["randread", "randwrite", "rand7030", "rand7030", "rand3070",
                                                "rand3070", "rand5050", "rand5050"]
