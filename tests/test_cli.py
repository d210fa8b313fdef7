"""The `memstor` command line: exit statuses, one-line errors, the parse contract of DESIGN.md."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT
from memstor.core.schema import FIO_COLUMNS, MLC_COLUMNS


def memstor(*args, cwd=None):
    """Run the real command in a subprocess; return (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "memstor.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(stderr: str, *needles: str) -> None:
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_no_command_is_usage_error():
    code, _, err = memstor()
    assert code == 2 and "usage" in err.lower()


@pytest.mark.parametrize("args, needles", [
    (["run", "fio-nonsense"], ["unknown experiment", "fio-block-size"]),
    (["run", "fio-block-size", "--profile", "nope"], ["unknown profile", "quick", "standard", "full"]),
    (["run", "fio-block-size", "--set", "nokey=1"], ["unknown parameter", "runtime_s"]),
    (["run", "fio-block-size", "--set", "novalue"], ["KEY=VALUE"]),
    (["parse", "--kind", "xml", "x"], ["invalid choice"]),
    (["parse"], ["PATH"]),
])
def test_usage_errors_exit_2_with_one_line(args, needles):
    code, _, err = memstor(*args)
    assert code == 2
    assert_one_line_error(err, *needles)
    assert err.startswith("memstor: ") and "memstor: memstor" not in err  # the prefix once


def test_unknown_make_profile_stops_with_the_list_of_profiles():
    """`make all PROFILE=nosuch` must not say "Nothing to be done" and exit 0."""
    proc = subprocess.run(["make", "-n", "all", "PROFILE=nosuch"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "PROFILE=nosuch is not a profile: choose one of full pts quick standard" in proc.stderr


def test_params_prints_the_profile_section_with_overrides():
    code, out, err = memstor("params", "fio-queue-depth", "--profile", "quick", "--set", "numjobs=2",
                             "--add", "target_dir=/x")
    assert code == 0, err
    section = yaml.safe_load(out)
    quick = yaml.safe_load((ROOT / "params" / "quick.yaml").read_text())["fio-queue-depth"]
    assert section["iodepth"] == quick["iodepth"] and section["numjobs"] == 2
    assert section["profile"] == "quick" and section["target_dir"] == "/x"


def test_params_output_file_is_rewritten_only_on_change(tmp_path):
    out = tmp_path / "p.yaml"
    assert memstor("params", "fio-rw-ratio", "--profile", "quick", "-o", out)[0] == 0
    first = out.stat().st_mtime_ns
    assert memstor("params", "fio-rw-ratio", "--profile", "quick", "-o", out)[0] == 0
    assert out.stat().st_mtime_ns == first
    assert memstor("params", "fio-rw-ratio", "--profile", "standard", "-o", out)[0] == 0
    assert "profile: standard" in out.read_text()


def test_parse_missing_file_is_one_line_and_exit_1(tmp_path):
    missing = tmp_path / "nope.json"
    code, out, err = memstor("parse", "--kind", "fio", missing)
    assert code == 1
    assert_one_line_error(err, str(missing))
    assert out.splitlines()[0].split(",") == FIO_COLUMNS  # header still written


def test_parse_auto_detect_writes_both_tables(real, tmp_path):
    folder = real / "bernep__Advanced-Computer-Systems"
    code, _, err = memstor("parse", folder, "-o", tmp_path / "out")
    assert code in (0, 1), err
    assert "Traceback" not in err
    with open(tmp_path / "out" / "fio.csv") as f:
        fio = list(csv.DictReader(f))
    with open(tmp_path / "out" / "mlc.csv") as f:
        mlc = list(csv.DictReader(f))
    assert list(fio[0].keys()) == FIO_COLUMNS and list(mlc[0].keys()) == MLC_COLUMNS
    assert len(fio) > 0 and len(mlc) > 0
    assert {r["test"] for r in mlc} >= {"loaded_latency"}


def test_parse_kind_mlc_to_stdout(real):
    f = real / "hpcleuven__VscDocumentation" / "source" / "leuven" / "tier2_hardware" / "icelake_mlc.txt"
    code, out, err = memstor("parse", "--kind", "mlc", f)
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    loaded = [r for r in rows if r["test"] == "loaded_latency"]
    assert len(loaded) == 19
    assert float(loaded[0]["latency_ns"]) == pytest.approx(264.04)
    assert float(loaded[0]["bandwidth_MBps"]) == pytest.approx(351871.6)


def test_parse_mixed_kinds_to_stdout_is_usage_error(real):
    code, _, err = memstor("parse", real / "bernep__Advanced-Computer-Systems")
    assert code == 2
    assert_one_line_error(err, "-o OUTDIR")


def test_internal_errors_have_no_traceback_without_debug(tmp_path):
    # A directory where a CSV file should go: an OS error deep inside, reported in one line.
    (tmp_path / "x.csv").mkdir()
    code, _, err = memstor("parse", "--kind", "fio", ROOT / "README.md", "-o", tmp_path / "x.csv" / "")
    assert code in (1, 2)
    assert "Traceback" not in err


# ------------------------------------------------------------------------------ start-up: what is imported
# The start-up budget of memstor.cli (its docstring): help, version and usage errors import no subcommand
# module, `memstor parse` imports the parsers only. Checked in a fresh interpreter (sys.modules after main).
_IMPORTED = """
import sys
from memstor.cli import main
try:
    main(sys.argv[1:])
except SystemExit:  # argparse's --help and --version exit
    pass
print("IMPORTED", " ".join(sorted(sys.modules)))
"""
# What none of these command lines may import: the heavy libraries and the layers they do not use.
_HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "memstor.measure", "memstor.analysis", "memstor.report")


def imported(*args) -> set[str]:
    """The modules loaded after `memstor ARGS` ran in a fresh interpreter (stdout and stderr discarded)."""
    proc = subprocess.run([sys.executable, "-c", _IMPORTED, *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("IMPORTED "))
    return set(line.split()[1:])


def heavy(modules: set[str]) -> list[str]:
    """The modules of ``modules`` that are (or are under) a name of _HEAVY."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in _HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["parse"], ["nosuchcommand"], ["run", "--help"],
                                  ["cliffs", "x.log", "--block-size", "0"]])
def test_help_version_and_usage_errors_import_no_subcommand(args):
    modules = imported(*args)
    assert "memstor.cli" in modules  # the check ran
    assert heavy(modules) == [] and not any(m.startswith("memstor.cli.cmd_") for m in modules)
    assert not any(m.startswith("memstor.parse") for m in modules)


def test_parse_imports_the_parsers_only(real, tmp_path):
    one = real / "AIALRA-0__ECSE-4320-Advanced-Computer-Systems"
    modules = imported("parse", "--kind", "fio", next(iter(sorted(one.rglob("*.json")))), "-o", tmp_path / "x.csv")
    assert "memstor.cli.cmd_parse" in modules and "memstor.parse.fio_json" in modules
    assert heavy(modules) == [] and "memstor.core.fiohist" not in modules  # fiohist brings numpy
    assert [m for m in modules if m.startswith("memstor.cli.cmd_")] == ["memstor.cli.cmd_parse"]
    assert (tmp_path / "x.csv").read_text().startswith("source,host,jobname")


def test_a_subcommand_imports_its_module_when_it_runs(tmp_path):
    modules = imported("params", "fio-rw-ratio", "--profile", "quick", "-o", tmp_path / "p.yaml")
    assert [m for m in modules if m.startswith("memstor.cli.cmd_")] == ["memstor.cli.cmd_params"]
    assert heavy(modules) == [] and "profile: quick" in (tmp_path / "p.yaml").read_text()


def test_the_import_check_sees_a_heavy_subcommand(tmp_path):
    """The other side of the checks above: `memstor summary` runs the analysis, and its pandas shows."""
    modules = imported("summary", "--data", tmp_path, "-o", tmp_path / "s.csv")
    assert "memstor.cli.cmd_summary" in modules
    assert {"pandas", "memstor.analysis"} <= set(heavy(modules))
