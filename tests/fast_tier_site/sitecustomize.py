"""Installed in every Python child of a fast-tier test (tests/fast_tier_guard.py puts this folder on
PYTHONPATH): the same guard on subprocess.Popen, so the fio that a `python -m memstor.cli run` child starts is
caught too. It does nothing outside the fast tier."""

import os

if os.environ.get("MEMSTOR_FAST_TIER") == "1":
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        "fast_tier_guard", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "fast_tier_guard.py"))
    _guard = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_guard)
    _guard.install()
