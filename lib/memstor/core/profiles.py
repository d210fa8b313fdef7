"""Profiles: `params/<profile>.yaml`, one section per experiment, plus `--set KEY=VALUE` overrides.

Plain YAML and override handling only: which experiments exist and which optional keys a family takes is
the registry's (memstor.experiments.load_profile).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from memstor.core.errors import UsageError
from memstor.core.resources import resource_dir

DEFAULT_PROFILE = "standard"
# libyaml's safe loader when PyYAML has it: the same objects as yaml.safe_load, 10x faster on a profile (13 ms ->
# 1 ms for params/quick.yaml on the 2-vCPU VM), which `make all` reads once per notebook even with nothing to do.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def params_dir(root: Path | None = None) -> Path:
    """The folder holding the profile files: `<root>/params`, default the shipped profiles (package data: in
    the repository the folder `params/`)."""
    if root is not None:
        return Path(root) / "params"
    return resource_dir("profiles")


def profiles(root: Path | None = None) -> list[str]:
    """Names of the available profiles (quick, standard, full, and any user-added file)."""
    return sorted(p.stem for p in params_dir(root).glob("*.yaml"))


def read_profile(profile: str, root: Path | None = None) -> dict:
    """The whole profile file `params/<profile>.yaml` as a mapping of experiment sections; a `profile` ending
    in .yaml/.yml is a profile file of the user's (e.g. a copy of a shipped one, edited)."""
    own = profile.endswith((".yaml", ".yml"))
    path = Path(profile).expanduser() if own else params_dir(root) / f"{profile}.yaml"
    if not path.is_file():
        raise UsageError(
            f"unknown profile {profile!r} (no {path}); choose one of: {', '.join(profiles(root))}, "
            "or give a profile file FILE.yaml"
        )
    try:
        data = yaml.load(path.read_text(), Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{where}: not valid YAML; fix the file or restore it from git") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping of experiment sections")
    return data


def parse_override(text: str) -> tuple[str, object]:
    """`KEY=VALUE` -> (key, value); VALUE is read as YAML (`32` -> 32, `[4k,8k]` -> list, `x` -> 'x')."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--set {text!r}: expected KEY=VALUE, e.g. --set runtime_s=5")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def coerce(key: str, value: object, default: object, experiment: str) -> object:
    """Match an override's type to the profile's value (an int where an int is expected, ...)."""
    if default is None or value is None:
        return value
    if isinstance(default, list) and not isinstance(value, list):
        return [value]
    if isinstance(default, bool) or isinstance(value, type(default)):
        return value
    if isinstance(default, (int, float)) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return type(default)(value) if float(value) == type(default)(value) else value
    if isinstance(default, str):
        return str(value)
    raise UsageError(
        f"{experiment}: parameter {key}={value!r} should be {type(default).__name__} like {default!r}"
    )


def skipped(found: object) -> bool:
    """A profile section that leaves its family out: ``<experiment>: {skip: "why"}`` (one line, so that the
    Makefile finds it without Python)."""
    return isinstance(found, dict) and set(found) == {"skip"}


def section(profile: str, experiment: str, overrides: dict | None = None, optional: tuple = (),
            root: Path | None = None) -> dict:
    """The section `experiment` of `profile` with `overrides` applied (keys outside the section and
    `optional` are refused), plus ``profile``. The experiment name is not checked here (the registry does)."""
    data = read_profile(profile, root)
    found = data.get(experiment)
    if not isinstance(found, dict):
        raise UsageError(f"profile {profile!r} has no section {experiment!r}; add one to {profile}.yaml")
    if skipped(found):
        raise UsageError(f"profile {profile!r} leaves {experiment} out ({found['skip']}); run it with a profile "
                         f"that has it, e.g. --profile full")
    params = dict(found)
    for key, value in (overrides or {}).items():
        if key not in params and key not in optional:
            raise UsageError(
                f"unknown parameter {key!r} for {experiment}; known: {', '.join(sorted(set(params) | set(optional)))}"
            )
        params[key] = coerce(key, value, params.get(key), experiment)
    params["profile"] = profile
    return params
