"""What `memstor` imports only when a command line needs it (issue 39: `memstor parse` and the help import only
what they use): the experiment registry with the profiles' YAML (13 ms of start-up) for a command line that names
`run`, the MLC and loadlat parsers (6 ms) for a file that is not fio output. Both sides of each: the modules stay
out where they are not used, come in where they are, and what they give is still there."""

from __future__ import annotations

import pytest

from test_cli import imported, memstor

# Modules a command line that neither names `run` nor reads the profiles must not import.
_PROFILES = ("yaml", "memstor.core.profiles", "memstor.experiments")
_OTHER_PARSERS = ("memstor.parse.mlc", "memstor.parse.loadlat_hierarchy")


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["parse"], ["nosuchcommand"], ["summary", "--nosuch"]])
def test_help_and_usage_errors_read_no_profiles(args):
    modules = imported(*args)
    assert "memstor.cli" in modules and not modules & set(_PROFILES)


def test_parse_of_fio_output_imports_neither_the_profiles_nor_the_other_parsers(real, tmp_path):
    folder = real / "fiumad__Advanced-Computer-Systems" / "proj3"
    assert sorted(folder.rglob("*.json"))
    modules = imported("parse", "--kind", "fio", folder, "-o", tmp_path / "fio.csv")
    assert "memstor.parse.fio_json" in modules and not modules & set(_PROFILES + _OTHER_PARSERS)
    assert len((tmp_path / "fio.csv").read_text().splitlines()) > 10


def test_parse_of_mlc_output_imports_its_parsers_when_it_meets_it(real, tmp_path):
    mlc = real / "hpcleuven__VscDocumentation" / "source" / "leuven" / "old_hardware" / "genius" / "skylake_mlc.txt"
    modules = imported("parse", mlc, "-o", tmp_path)
    assert set(_OTHER_PARSERS) <= modules and not modules & set(_PROFILES)
    assert len((tmp_path / "mlc.csv").read_text().splitlines()) > 10


def test_run_help_lists_every_experiment_from_the_registry():
    code, out, _ = memstor("run", "--help")
    assert code == 0 and {"yaml", "memstor.experiments"} <= imported("run", "--help")
    for name in ("fio-block-size", "fio-queue-depth", "mlc-loaded-latency"):
        assert name in out.replace("-\n", "-").replace("\n", " ").replace(" ", "")
    code, out, _ = memstor("--help")
    assert code == 0 and "fio-block-size" not in out  # the top-level help never listed them
