"""Profiles: `params/<profile>.yaml`, one section per experiment, plus `--set KEY=VALUE` overrides."""

from __future__ import annotations

from pathlib import Path

import yaml

from memstor.errors import UsageError

DEFAULT_PROFILE = "standard"


def params_dir(root: Path | None = None) -> Path:
    """The folder holding the profile files: `<root>/params`, default the repository's."""
    if root is not None:
        return Path(root) / "params"
    return Path(__file__).resolve().parents[2] / "params"


def profiles(root: Path | None = None) -> list[str]:
    """Names of the available profiles (quick, standard, full, and any user-added file)."""
    return sorted(p.stem for p in params_dir(root).glob("*.yaml"))


def check_experiment(experiment: str) -> str:
    """Return `experiment` when it is known, else raise UsageError listing the known ones."""
    from memstor.experiments import names

    if experiment not in names():
        raise UsageError(f"unknown experiment {experiment!r}; choose one of: {', '.join(names())}")
    return experiment


def _read_profile(profile: str, root: Path | None) -> dict:
    path = params_dir(root) / f"{profile}.yaml"
    if not path.is_file():
        raise UsageError(
            f"unknown profile {profile!r} (no {path}); choose one of: {', '.join(profiles(root))}"
        )
    try:
        data = yaml.safe_load(path.read_text())
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


def _coerce(key: str, value: object, default: object, experiment: str) -> object:
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


def _optional_keys(experiment: str) -> tuple:
    """Keys `experiment` takes beside its profile section's (the family's OPTIONAL_KEYS, e.g. precision_pct)."""
    from memstor.experiments import family

    return tuple(getattr(family(experiment), "OPTIONAL_KEYS", ()))


def load_profile(profile: str, experiment: str, overrides: dict | None = None,
                 root: Path | None = None) -> dict:
    """Parameters of `experiment` in `profile`, with `overrides` applied (unknown keys are refused)."""
    check_experiment(experiment)
    data = _read_profile(profile, root)
    section = data.get(experiment)
    if not isinstance(section, dict):
        raise UsageError(f"profile {profile!r} has no section {experiment!r}; add one to {profile}.yaml")
    params = dict(section)
    optional = _optional_keys(experiment) if overrides else ()
    for key, value in (overrides or {}).items():
        if key not in params and key not in optional:
            raise UsageError(
                f"unknown parameter {key!r} for {experiment}; known: {', '.join(sorted(set(params) | set(optional)))}"
            )
        params[key] = _coerce(key, value, params.get(key), experiment)
    params["profile"] = profile
    return params
