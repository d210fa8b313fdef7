"""The structure limits hold (docs/DESIGN.md "Layers"): the import-linter contracts of pyproject.toml and
scripts/check-structure (no import cycle, at most 10 commented function-level imports, module and function
lengths) pass on the checkout; and the check itself finds what it should (a cycle, a long function)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "scripts" / "check-structure"


def test_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip(f"import-linter is not installed beside {sys.executable} (make env installs it)")
    run = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_structure_limits_hold():
    run = subprocess.run([sys.executable, str(CHECK), str(ROOT)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "no import cycle" in run.stdout


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A minimal checkout: lib/memstor/<files>, empty bench/ and lib/loadlat/."""
    for rel, text in files.items():
        path = tmp_path / "lib" / "memstor" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "bench").mkdir()
    (tmp_path / "lib" / "loadlat").mkdir()
    return tmp_path


def test_check_finds_a_cycle_through_a_function_level_import(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "a.py": "from memstor import b\n",
        "b.py": "def f():\n    # to show the check\n    from memstor import a\n    return a\n",
    })
    run = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "import cycle: memstor.a -> memstor.b" in run.stderr


def test_check_finds_uncommented_inner_imports_and_long_functions(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    root = _tree(tmp_path, {
        "__init__.py": "",
        "a.py": "X = 1\n",
        "b.py": f"def g():\n    from memstor.a import X\n    return X\n\n\ndef long():\n{body}",
    })
    run = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "b.py:2: memstor import inside a function without a comment" in run.stderr
    assert "long: 86 lines (limit 80)" in run.stderr


@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags not installed (C function lengths)")
def test_check_measures_c_functions(tmp_path):
    root = _tree(tmp_path, {"__init__.py": ""})
    body = "".join(f"    x += {i};\n" for i in range(125))
    (root / "lib" / "loadlat" / "t.c").write_text(f"int f(void)\n{{\n    int x = 0;\n{body}    return x;\n}}\n")
    run = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "t.c:1 f: 130 lines (limit 120)" in run.stderr
