"""environment.yml (conda-forge) and requirements.in (pip) list the same top-level Python packages,
and requirements.txt pins every one of them."""

from __future__ import annotations

import re

import yaml

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
