"""The MLC runner path end to end: command lines, tool choice, a real sweep driven by the stand-in `mlc`
(which replays recorded real MLC output, tests/data/mlc-standin/), resume, failures, and a tiny real
loadlat run through memstor.experiments.run_experiment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from conftest import two_allowed_cpus
from memstor.analysis import memory
from memstor.core.errors import UsageError
from memstor.core.schema import MLC_COLUMNS
from memstor.experiments import mlc_loaded_latency as loaded_latency
from memstor.measure import mlc
from memstor.measure.sweep import Point

STANDIN_DIR = Path(__file__).resolve().parent / "data" / "mlc-standin"
STANDIN = STANDIN_DIR / "mlc"
EXP = "mlc-loaded-latency"


@pytest.fixture
def standin(monkeypatch, tmp_path, faked_machine) -> Path:
    """Put the stand-in mlc first on PATH; its command lines are logged to the returned file. The sweep is
    planned for conftest's faked machine (CPUs 0-3: latency CPU 0, load CPUs 1-3), whatever runs the tests."""
    log = tmp_path / "mlc-calls.jsonl"
    monkeypatch.setenv("PATH", f"{STANDIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("MLC_STANDIN_LOG", str(log))
    for var in ("MLC_STANDIN_FAIL", "MLC_STANDIN_REPLAY", "MLC_STANDIN_RC"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(mlc, "hugetlb_free_bytes", lambda *a, **k: 1 << 40)  # reserved huge pages: -L usable
    return log


@pytest.fixture
def no_mlc_path(monkeypatch):
    """A PATH without any `mlc` (system folders only)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")



def calls(log: Path) -> list[list[str]]:
    """The stand-in's logged measurement command lines (memstor.measure.sysinfo's `mlc --version` left out)."""
    if not log.exists():
        return []
    argvs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [a for a in argvs if a != ["--version"]]


def small(**kw) -> dict:
    """Small parameters for the stand-in (delays that MLC's default list holds)."""
    p = {"tool": "mlc", "traffic": ["R", "W6"], "access_bytes": [64, 256], "delays": [0, 100, 1000, 20000],
         "seconds_per_point": 1, "buffer_kib": 65536, "latency_cpu": 0, "load_cpus": ""}
    p.update(kw)
    return p


def run(params: dict, data: Path, host: str = "h1") -> pd.DataFrame:
    return loaded_latency.run_loaded_latency(params, data_root=data, target_dir=None, host=host, progress=False)


def point(params: dict, mode: str, tool: str = "mlc", huge: bool = True, **match) -> str:
    """The name of the sweep point of `params` with this mode (and huge_pages / traffic / access_bytes)."""
    pts = loaded_latency.build_points(loaded_latency.validate_params(params), tool, huge=huge)
    hits = [pt.name for pt in pts if pt.params["mode"] == mode
            and all(pt.params.get(k) == v for k, v in match.items())]
    assert len(hits) == 1, (mode, match, hits)
    return hits[0]


# ------------------------------------------------------------------------------------ command lines


def test_command_lines_use_mlc_syntax_with_attached_values():
    assert mlc.idle_latency_args(1048576, 0, 2) == ["--idle_latency", "-b1048576", "-c0", "-t2"]
    assert mlc.peak_bandwidth_args(262144, [1, 2, 3, 5], 1) == [
        "--peak_injection_bandwidth", "-b262144", "-k1-3,5", "-t1"]
    assert mlc.loaded_latency_args("W5", 256, 65536, 0, [1], 0.5, delay_file="/x/d.txt") == [
        "--loaded_latency", "-b65536", "-c0", "-k1", "-t0.5", "-l256", "-W5", "-g/x/d.txt"]
    assert mlc.loaded_latency_args("R", 64, 65536, 2, [0, 1], 2, delay=0)[-2:] == ["-R", "-d0"]
    # huge pages (-L, MLC's large pages / loadlat's THP) and random load addresses (-U)
    assert mlc.idle_latency_args(1048576, 0, 2, huge_pages=True) == ["--idle_latency", "-b1048576", "-c0", "-t2", "-L"]
    assert mlc.peak_bandwidth_args(65536, [1], 1, huge_pages=True, random_access=True)[-2:] == ["-U", "-L"]
    assert mlc.loaded_latency_args("W5", 64, 65536, 0, [1], 1, delay=0, huge_pages=True)[-3:] == ["-W5", "-L", "-d0"]
    base = {"mode": "idle_latency", "buffer_kib": 65536, "latency_cpu": 0, "seconds": 1.0}
    assert mlc.point_args({**base, "huge_pages": True})[-1] == "-L"
    assert "-L" not in mlc.point_args({**base, "huge_pages": False})
    assert mlc.delay_file_text([0, 100, 20000]) == "0\n100\n20000\n"
    with pytest.raises(ValueError):
        mlc.loaded_latency_args("R", 64, 1, 0, [1], 1)  # neither -d nor -g


def test_cpu_lists_round_trip():
    assert mlc.format_cpus([5, 1, 2, 3, 3]) == "1-3,5"
    assert mlc.parse_cpus("1-3,5") == [1, 2, 3, 5]
    assert mlc.parse_cpus(4) == [4]
    assert mlc.parse_cpus([0, "2-3"]) == [0, 2, 3]
    for bad in ("1-", "a", "3-1", "-2"):
        with pytest.raises(ValueError):
            mlc.parse_cpus(bad)


# ------------------------------------------------------------------------------------- tool choice


def test_auto_picks_mlc_on_path(standin):
    assert mlc.resolve_tool("auto") == ("mlc", str(STANDIN))


def test_auto_picks_loadlat_without_mlc(no_mlc_path, loadlat_bin, monkeypatch):
    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    tool, exe = mlc.resolve_tool("auto")
    assert tool == "loadlat" and Path(exe) == loadlat_bin


def test_mlc_path_parameter(no_mlc_path, tmp_path):
    assert mlc.resolve_tool("auto", str(STANDIN)) == ("mlc", str(STANDIN))
    assert mlc.resolve_tool("mlc", str(STANDIN_DIR)) == ("mlc", str(STANDIN))  # a folder holding mlc
    with pytest.raises(UsageError, match=r"^mlc_path='/nonexistent/mlc': no such file"):
        mlc.resolve_tool("auto", "/nonexistent/mlc")
    plain = tmp_path / "mlc"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    with pytest.raises(UsageError, match="not executable; run 'chmod"):
        mlc.resolve_tool("mlc", str(plain))


def test_tool_mlc_without_mlc_says_where_to_get_it(no_mlc_path):
    with pytest.raises(UsageError) as err:
        mlc.resolve_tool("mlc")
    msg = str(err.value)
    assert "\n" not in msg and "intel.com" in msg and "tool=loadlat" in msg


# --------------------------------------------------------------------------- sweep via the stand-in


@pytest.mark.fio
@pytest.mark.loadlat
def test_sweep_with_standin_writes_processed_csv(standin, tmp_path):
    data = tmp_path / "data"
    df = run(small(), data)
    csv = data / "processed" / "h1" / f"{EXP}.csv"
    table = pd.read_csv(csv)
    assert list(table.columns[: len(MLC_COLUMNS)]) == MLC_COLUMNS
    assert {"point", "status", "host"} <= set(table.columns)
    assert list(table.columns[-len(loaded_latency.SETTING_COLUMNS):]) == loaded_latency.SETTING_COLUMNS
    assert (table["status"] == "done").all() and table["error"].isna().all()
    assert set(table["tool"]) == {"mlc"}
    # MLC has no sub-windows: no per-point interval, and the note says why (issue 18)
    assert table[loaded_latency.CI_COLUMNS[:4]].isna().all().all() and table["ci_method"].isna().all()
    assert (table["ci_note"] == "no sub-windows (MLC)").all()

    # idle latency, twice (MLC -L large pages, then 4 KiB pages), and peak injection bandwidth: the recorded
    # values (fiumad, MLC v3.11a; SOURCES.md)
    idle = table[table["test"] == "idle_latency"]
    assert idle["latency_ns"].tolist() == [78.6, 78.6]
    assert idle["pages"].tolist() == ["2M (MLC -L)", "4K"] and idle["huge_pages"].tolist() == [True, False]
    assert (idle["load_threads"] == 0).all() and (idle["buffer_kib"] == 65536).all()
    assert idle["random"].tolist() == [True, True]  # the recording says MLC enabled random access
    peak = table[table["test"] == "peak_injection_bandwidth"].set_index("traffic")["bandwidth_MBps"]
    assert peak["read-only"] == 17602.0 and peak["stream-triad"] == 21714.6 and len(peak) == 5

    # one loaded-latency row per traffic x access size x requested delay, in delay order
    loaded = table[table["test"] == "loaded_latency"]
    assert len(loaded) == 2 * 2 * 4
    for (traffic, size), g in loaded.groupby(["traffic", "access_bytes"]):
        assert g["inject_delay"].tolist() == [0, 100, 1000, 20000], (traffic, size)
    assert set(loaded["pages"]) == {"2M (MLC -L)"} and set(loaded["load_random"]) == {False}
    assert set(loaded["load_threads"]) == {3}  # every faked CPU but the latency CPU
    r64 = loaded[(loaded["traffic"] == "read-only") & (loaded["access_bytes"] == 64)].set_index("inject_delay")
    assert r64.loc[0, "latency_ns"] == 111.22 and r64.loc[0, "bandwidth_MBps"] == 43078.9   # bernep -R -l64
    assert r64.loc[20000, "latency_ns"] == 66.72 and r64.loc[20000, "bandwidth_MBps"] == 1127.3
    w6 = loaded[(loaded["traffic"] == "write-only-nt") & (loaded["access_bytes"] == 256)].set_index("inject_delay")
    assert w6.loc[20000, "latency_ns"] == 118.57 and w6.loc[20000, "bandwidth_MBps"] == 585.5  # ✓ in SOURCES.md
    assert set(w6["read_fraction"]) == {0.0}
    assert len(df) == len(table)

    # exact command lines: one invocation per point, all delays through one -g file, -L where huge pages
    argvs = calls(standin)
    assert [a[0] for a in argvs] == ["--idle_latency"] * 2 + ["--peak_injection_bandwidth"] + ["--loaded_latency"] * 4
    assert argvs[0] == ["--idle_latency", "-b65536", "-c0", "-t1", "-L"]
    assert argvs[1] == ["--idle_latency", "-b65536", "-c0", "-t1"]
    assert argvs[2][-1] == "-L"
    assert argvs[3][:8] == ["--loaded_latency", "-b65536", "-c0", "-k1-3", "-t1", "-l64", "-R", "-L"]
    assert argvs[3][8].startswith("-g")
    assert argvs[6][5:7] == ["-l256", "-W6"]

    raw = data / "raw" / "h1" / EXP
    meta = json.loads((raw / f"{point(small(), 'loaded_latency', traffic='W6', access_bytes=256)}.meta.json").read_text())
    assert meta["status"] == "done" and meta["tool"] == "mlc" and meta["tool_version"] == "v3.10"
    assert meta["tool_choice"] == "mlc" and "-L" in meta["command"]
    assert meta["command"][0] == str(STANDIN) and meta["delay_file"]["delays"] == [0, 100, 1000, 20000]
    # MLC could not change the prefetchers in the recorded idle run: one clear note, not a failure
    idle_meta = json.loads((raw / f"{point(small(), 'idle_latency', huge_pages=True)}.meta.json").read_text())
    assert idle_meta["status"] == "done"
    assert "modprobe msr" in idle_meta["note"] and "root" in idle_meta["note"] and "\n" not in idle_meta["note"]
    assert table.loc[table["test"] == "idle_latency", "note"].iloc[0] == idle_meta["note"]


@pytest.mark.fio
@pytest.mark.loadlat
def test_mlc_without_reserved_huge_pages_runs_without_L(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mlc, "hugetlb_free_bytes", lambda *a, **k: 0)
    df = run(small(traffic=["R"], access_bytes=[64]), tmp_path / "data")
    argvs = calls(standin)
    assert [a[0] for a in argvs] == ["--idle_latency", "--peak_injection_bandwidth", "--loaded_latency"]
    assert not any("-L" in a for a in argvs)
    assert set(df["pages"]) == {"4K"} and df["huge_pages"].eq(False).all()
    assert "huge pages not used" in capsys.readouterr().err and df.attrs["huge_pages"] is False
    # huge_pages: false asks for 4 KiB pages only, and says nothing
    run(small(traffic=["R"], access_bytes=[64], huge_pages=False), tmp_path / "data2")
    assert "huge pages not used" not in capsys.readouterr().err


@pytest.mark.fio
@pytest.mark.loadlat
def test_single_delay_uses_d(standin, tmp_path):
    df = run(small(traffic=["W3"], access_bytes=[64], delays=[0]), tmp_path / "data")
    loaded = calls(standin)[-1]
    assert loaded[-1] == "-d0" and not any(a.startswith("-g") for a in loaded)
    row = df[df["test"] == "loaded_latency"].iloc[0]
    assert (row["traffic"], row["latency_ns"], row["bandwidth_MBps"]) == ("3:1", 207.22, 36076.5)  # ✓ bernep


@pytest.mark.fio
@pytest.mark.loadlat
def test_resume_reruns_nothing_then_only_changed_points(standin, tmp_path):
    data = tmp_path / "data"
    first = run(small(), data)
    n = len(calls(standin))
    second = run(small(), data)
    assert len(calls(standin)) == n  # nothing rerun
    manifest = json.loads((data / "raw" / "h1" / EXP / "manifest.json").read_text())
    assert {p["status"] for p in manifest["points"]} == {"done"}  # as the first run left it: nothing written
    pd.testing.assert_frame_equal(first, second)  # a resumed point reads back the same rows (status done)

    # a truncated raw file (a row lost) is not complete: that point alone is measured again
    raw = data / "raw" / "h1" / EXP / f"{point(small(), 'loaded_latency', traffic='R', access_bytes=64)}.txt"
    lines = raw.read_text().splitlines(keepends=True)
    raw.write_text("".join(ln for ln in lines if not ln.startswith(" 20000")))
    run(small(), data)
    assert [a[5:7] for a in calls(standin)[n:]] == [["-l64", "-R"]]

    # changed delays: the loaded-latency points rerun, idle and peak stay cached
    n = len(calls(standin))
    third = run(small(delays=[0, 100]), data)
    assert [a[0] for a in calls(standin)[n:]] == ["--loaded_latency"] * 4
    assert set(third.loc[third["test"] == "loaded_latency", "inject_delay"]) == {0, 100}
    manifest = json.loads((data / "raw" / "h1" / EXP / "manifest.json").read_text())
    assert [p["status"] for p in manifest["points"]] == ["cached"] * 3 + ["done"] * 4
    assert set(third["status"]) == {"done"}


@pytest.mark.fio
@pytest.mark.loadlat
def test_failing_tool_marks_points_failed_with_one_line(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLC_STANDIN_FAIL", "1")  # MLC's real "Invalid Argument" usage text, exit 22
    df = run(small(traffic=["R"], access_bytes=[64]), tmp_path / "data")
    assert list(df["status"]) == ["failed"] * 4
    assert list(df["test"]) == ["idle_latency", "idle_latency", "peak_injection_bandwidth", "loaded_latency"]
    assert list(df["pages"]) == ["2M (MLC -L)", "4K", "2M (MLC -L)", "2M (MLC -L)"]
    for err in df["error"]:
        assert "\n" not in err and "mlc exited with status 22" in err and "Invalid Argument" in err
    assert df["latency_ns"].isna().all() and df["bandwidth_MBps"].isna().all()
    loaded = df.iloc[3]
    assert (loaded["traffic"], loaded["access_bytes"]) == ("read-only", 64)
    idle = point(small(traffic=["R"], access_bytes=[64]), "idle_latency", huge_pages=True)
    meta = json.loads((tmp_path / "data" / "raw" / "h1" / EXP / f"{idle}.meta.json").read_text())
    assert meta["status"] == "failed" and meta["command"][1] == "--idle_latency"
    assert not (tmp_path / "data" / "raw" / "h1" / EXP / f"{idle}.txt").exists()
    assert "4 of 4 points failed" in capsys.readouterr().err


@pytest.mark.fio
@pytest.mark.loadlat
def test_interrupted_mlc_run_is_incomplete(standin, tmp_path, monkeypatch):
    # a real MLC run killed after 3 delays ("Exiting..."): the point failed, nothing kept as complete
    monkeypatch.setenv("MLC_STANDIN_REPLAY", "AIALRA-0_mlc_loaded_rep1.raw")
    df = run(small(traffic=["R"], access_bytes=[64], delays=[0, 2, 8, 15]), tmp_path / "data")
    loaded = df[df["test"] == "loaded_latency"]
    assert list(loaded["status"]) == ["failed"]
    assert "interrupted" in loaded["error"].iloc[0]
    idle = df[df["test"] == "idle_latency"]
    assert len(idle) == 2 and idle["error"].str.contains("no idle latency in the output").all()


@pytest.mark.fio
@pytest.mark.loadlat
def test_missing_delay_rows_fail_the_point(standin, tmp_path):
    # delay 2000 is not in the recorded MLC table, so the stand-in (like a broken run) prints no row
    df = run(small(traffic=["R"], access_bytes=[64], delays=[0, 2000]), tmp_path / "data")
    loaded = df[df["test"] == "loaded_latency"]
    assert list(loaded["status"]) == ["failed"]
    assert "no latency/bandwidth row for inject delay 2000 (1 of 2 delays)" in loaded["error"].iloc[0]


@pytest.mark.fio
@pytest.mark.loadlat
def test_complete_checks_expected_rows(standin, tmp_path):
    data = tmp_path / "data"
    run(small(traffic=["R"], access_bytes=[64]), data)
    points = loaded_latency.build_points(loaded_latency.validate_params(small(traffic=["R"], access_bytes=[64])), "mlc")
    runner = mlc.MlcRunner("mlc", str(STANDIN), points)
    raw = data / "raw" / "h1" / EXP
    for pt in points:
        assert runner.complete(raw / f"{pt.name}.txt"), pt.name
    loaded = raw / f"{points[-1].name}.txt"
    params = dict(points[-1].params, delays=[0, 100, 1000, 20000, 2])
    other = mlc.MlcRunner("mlc", str(STANDIN), [Point(points[-1].name, params)])
    assert not other.complete(loaded)  # delay 2 missing
    assert not runner.complete(raw / "nonexistent.txt")


def test_privilege_notes_from_real_output(real):
    text = (real / "fiumad__Advanced-Computer-Systems/proj1/exp1/mlc_idle_latency.txt").read_text()
    notes = mlc.privilege_notes(text)
    assert notes == ["Unable to modify prefetchers (try executing 'modprobe msr')"]
    line = mlc.privilege_summary("mlc", notes)
    assert "sudo modprobe msr" in line and "root" in line and "random access" in line
    clean = (real / "bernep__Advanced-Computer-Systems/Project 3/results/mlc_write0_64.txt").read_text()
    assert mlc.privilege_notes(clean) == [] and mlc.privilege_summary("mlc", []) is None
    assert mlc.tool_version(text) == "v3.11a" and mlc.tool_version(clean) == "v3.10"


# ---------------------------------------------------------------------------------- real loadlat


@pytest.mark.fio
@pytest.mark.loadlat
def test_real_loadlat_tiny_run_through_run_experiment(tmp_path, loadlat_bin, monkeypatch, no_mlc_path):
    pytest.importorskip("memstor.measure.sysinfo", reason="memstor.measure.sysinfo (run_experiment writes sysinfo.json)")
    from memstor.experiments import run_experiment

    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    lat_cpu, load_cpu = two_allowed_cpus()
    # max_remeasure 0: one raw file per point (re-measurements of gate failures: tests/test_memory_gate.py)
    params = {"tool": "auto", "mlc_path": "", "traffic": ["R"], "access_bytes": [64], "delays": [0, 1000, 20000],
              "seconds_per_point": 0.2, "buffer_kib": 65536, "latency_cpu": lat_cpu, "load_cpus": str(load_cpu),
              "profile": "test", "max_remeasure": 0}
    df = run_experiment(EXP, params, data_root=tmp_path / "data", host="tiny", progress=False)
    assert (df["status"] == "done").all() and set(df["tool"]) == {"loadlat"}
    assert (tmp_path / "data" / "processed" / "tiny" / "sysinfo.json").is_file()
    table = pd.read_csv(tmp_path / "data" / "processed" / "tiny" / f"{EXP}.csv")
    loaded = table[table["test"] == "loaded_latency"].set_index("inject_delay")
    assert list(loaded.index) == [0, 1000, 20000]
    assert (loaded["latency_ns"] > 0).all()
    # 20000 delay-loop cycles (microseconds) between 64-byte requests cut bandwidth by far more than 5x
    assert loaded.loc[0, "bandwidth_MBps"] > 5 * loaded.loc[20000, "bandwidth_MBps"] > 0
    assert memory.idle_latency_ns(table) > 0
    assert memory.peak_bandwidth_MBps(table)["read-only"] > 0
    # both idle points parse: huge pages (-L, when the kernel offers transparent huge pages) and 4 KiB pages
    idle = table[table["test"] == "idle_latency"].set_index("pages")["latency_ns"]
    assert (idle > 0).all()
    raw = tmp_path / "data" / "raw" / "tiny" / EXP
    if mlc.thp_mode() in ("always", "madvise"):
        metas = [json.loads(m.read_text()) for m in raw.glob("idle-latency_*.meta.json")]
        assert sorted("-L" in m["command"] for m in metas) == [False, True]
        share = [m["loadlat_json"]["huge_pages"]["huge_fraction"] for m in metas if "-L" in m["command"]][0]
        assert len(idle) == 2 and "4K" in idle.index
        huge = f"2M (THP, {share * 100:.0f} %)" if share > 0 else "4K (THP requested, none granted)"
        assert huge in idle.index  # what loadlat really got, from its '# huge pages' line
        if share >= 0.5:
            walk = memory.page_walk(table)
            assert walk["huge_page_ns"] == idle[huge] and walk["small_page_ns"] == idle["4K"]
            assert memory.idle_latency_ns(table) == idle[huge]
    else:
        assert list(idle.index) == ["4K"]
    (loaded_meta,) = raw.glob("loaded-latency_R_l64_*.meta.json")
    meta = json.loads(loaded_meta.read_text())
    assert meta["tool"] == "loadlat" and meta["tool_choice"] == "auto" and meta["tool_version"].startswith("v")
    assert any(a.startswith("--json=") for a in meta["command"])
    assert meta["loadlat_json"]["calibration"]["delay_ns_per_unit"] > 0


def test_privilege_failure_line_names_the_fix():
    # MLC on AMD without huge pages prints these lines (MLC source, app_exit(EINVAL)) and no numbers
    out = ("Intel(R) Memory Latency Checker - v3.11\n\n"
           "*************   Hugepages need to be allocated using /proc/sys/vm/nr_hugepages ******\n"
           "*************   Without large pages, the latencies are not accurate\n")
    notes = mlc.privilege_notes(out)
    assert notes == ["Hugepages need to be allocated using /proc/sys/vm/nr_hugepages"]
    assert mlc._last_words(out) == notes[0]
    assert "echo 4000 > /proc/sys/vm/nr_hugepages" in mlc.privilege_summary("mlc", notes)
    # our own command line (a delay file under /root) is never taken for a privilege problem
    assert mlc.privilege_notes("Command line parameters: --loaded_latency -g/root/d.txt\n") == []
