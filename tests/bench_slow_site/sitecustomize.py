"""Only for tests/test_bench.py (a child's PYTHONPATH): with MEMSTOR_TEST_PARSE_DELAY_S set, every file that
`memstor parse` reads waits that many seconds first (memstor.parse.files.parse_file is wrapped as the module is
imported): the deliberate slowdown of the parser that `make bench-check` must catch. Then the next
sitecustomize on sys.path (the fast tier's guard, tests/fast_tier_site) runs as it would have."""

import importlib.util
import os
import sys
import time

_DELAY_S = float(os.environ.get("MEMSTOR_TEST_PARSE_DELAY_S") or 0)
_HERE = os.path.dirname(os.path.abspath(__file__))


class _SlowParser:
    """A meta-path finder that wraps memstor.parse.files.parse_file in a sleep once the module is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "memstor.parse.files":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            real = module.parse_file

            def slow_parse_file(*args, **kwargs):
                time.sleep(_DELAY_S)
                return real(*args, **kwargs)

            module.parse_file = slow_parse_file

        spec.loader.exec_module = exec_module
        return spec


if _DELAY_S > 0:
    sys.meta_path.insert(0, _SlowParser())

for _entry in sys.path:  # the next sitecustomize, as if this one were not there
    _other = os.path.join(_entry or ".", "sitecustomize.py")
    if os.path.abspath(_entry or ".") != _HERE and os.path.isfile(_other):
        _spec = importlib.util.spec_from_file_location("_next_sitecustomize", _other)
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
        break
