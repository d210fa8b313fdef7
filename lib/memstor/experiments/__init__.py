"""Experiment families: the registry, and the one entry point that runs them (`memstor run`, notebooks).

A family is one module here, ``memstor/experiments/<name>.py`` with the experiment's name in snake case
(``fio_block_size.py`` is ``fio-block-size``); modules starting with ``_`` are shared helpers. A family
module defines:

- ``EXPERIMENT``: its name (``fio-block-size``), the section name in every ``params/<profile>.yaml``;
- ``NOTEBOOK``: its notebook's stem (``20-fio-block-size``: ``notebooks/20-fio-block-size.ipynb``);
- ``KIND``: the schema of its processed table, ``"fio"`` or ``"mlc"`` (how the synthesis reads it);
- ``validate(params) -> typed parameters`` (UsageError naming the parameter, the value and the way out);
- ``run(params, *, data_root, target_dir, host, progress) -> DataFrame`` (runs or resumes the sweep and
  writes ``<data>/processed/<host>/<EXPERIMENT>.csv``).

Adding a family is that module, its notebook and one section per profile: the CLI, the profiles, the
Makefile (which lists ``notebooks/[1-8]*.ipynb``) and the synthesis find it here.

Layer: experiments, below cli; it may import report, analysis, measure, parse and core. The registry
(:mod:`memstor.experiments._registry`) is cheap to import; ``run_experiment``, ``run_profile`` and
``write_sysinfo`` (:mod:`memstor.experiments._run`) are imported on first use. The fio families share
``_fio_params`` (validated parameters), ``_fio_points`` (point names, fio jobs), ``_fio_rows`` (tidy rows),
``_fio_target`` (test file, engine, medium) and ``_fio_run`` (the sweep run); ``_fleet`` runs them on
many hosts.
"""

from __future__ import annotations

from typing import Any

from memstor.experiments._registry import (
    check_experiment,
    families,
    family,
    kinds,
    load_profile,
    names,
    notebook_params,
)

__all__ = ["check_experiment", "families", "family", "kinds", "load_profile", "names", "notebook_params",
           "run_experiment", "run_profile", "write_sysinfo"]

#: Names served by :mod:`memstor.experiments._run`, imported on first use.
_RUN_NAMES = ("run_experiment", "run_profile", "write_sysinfo")


def __getattr__(name: str) -> Any:
    """``run_experiment``, ``run_profile`` and ``write_sysinfo`` from :mod:`memstor.experiments._run`."""
    if name in _RUN_NAMES:
        # lazy: _run brings pandas and the measure layer, +1.3 s on `memstor --help` (median of 7)
        from memstor.experiments import _run

        return getattr(_run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
