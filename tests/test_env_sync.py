"""environment.yml (conda-forge) and requirements.in (pip) list the same top-level Python packages,
and requirements.txt pins every one of them."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conftest import ROOT

NON_PYTHON = {"python", "fio", "pandoc"}  # conda-only extras: the interpreter and system tools


def _names(lines):
    return {re.split(r"[<>=!~ \[]", ln.strip(), maxsplit=1)[0].lower() for ln in lines
            if ln.strip() and not ln.strip().startswith(("#", "-"))}


def test_environment_yml_matches_requirements_in():
    conda = {re.split(r"[<>=! ]", d, maxsplit=1)[0].lower()
             for d in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
             if isinstance(d, str)}
    pip = _names((ROOT / "requirements.in").read_text().splitlines())
    assert conda - NON_PYTHON == pip


def test_lock_pins_every_top_level_package():
    pins = {m.group(1).lower() for m in
            re.finditer(r"^([A-Za-z0-9_.-]+)==", (ROOT / "requirements.txt").read_text(), re.M)}
    missing = _names((ROOT / "requirements.in").read_text().splitlines()) - pins
    assert not missing, f"requirements.txt lacks pins for {missing}: run make lock"


def _lowest_python(requires: str) -> Version:
    """The lowest CPython 3.x.y (x 8-14, y 0-30) that a Requires-Python specifier admits."""
    spec = SpecifierSet(requires)
    return next(v for v in (Version(f"3.{m}.{p}") for m in range(8, 15) for p in range(31)) if v in spec)


def test_requires_python_is_the_lowest_python_the_lock_installs_on():
    """requires-python is the highest of the locked packages' own Requires-Python floors (read from the
    installed metadata of every pin: make env installs the lock): lower, and pip would install memstor on a
    Python where the lock cannot be installed; higher, and it would refuse one where it can."""
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements.txt").read_text(), re.M))
    floors = {}
    for name, version in pins.items():
        dist = metadata.distribution(name)
        assert dist.version == version, f"{name} {dist.version} installed, the lock pins {version}: run make env"
        if dist.metadata.get("Requires-Python"):
            floors[name] = _lowest_python(dist.metadata["Requires-Python"])
    needed = max(floors.values())
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert _lowest_python(requires) == needed, (
        f"requires-python {requires!r}; the lock needs >={needed} "
        f"({', '.join(sorted(n for n, v in floors.items() if v == needed))})")
