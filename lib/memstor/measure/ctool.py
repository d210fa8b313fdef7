"""memstor's own C tools (loadlat, ioarrive): where their sources and builds are, how ``make`` compiles them, and
which executable a run uses. One implementation for every tool; each tool module names its own constants.

Side effects: :func:`build` runs the C compiler. Errors are one-line MemstorErrors that say the way out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memstor.core.errors import MemstorError


def repo_root() -> Path:
    """The repository root (the folder holding lib/ and build/)."""
    return Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class CTool:
    """One C tool: its name (the executable's and the make target's), its sources (``lib/<name>/*.c``), its build
    (``build/bin/<name>``) and the environment variable that points at another executable."""

    name: str
    env_var: str

    @property
    def source_dir(self) -> Path:
        """Sources relative to the repository root."""
        return Path("lib") / self.name

    @property
    def binary_relpath(self) -> Path:
        """Where ``make <name>`` puts the tool, relative to the repository root."""
        return Path("build") / "bin" / self.name

    def compile_command(self, root: Path | None = None, output: Path | None = None) -> list[str]:
        """The exact compile command of ``make <name>`` (C compiler from $CC, default ``cc``)."""
        root = Path(root) if root is not None else repo_root()
        output = Path(output) if output is not None else root / self.binary_relpath
        sources = sorted(str(p) for p in (root / self.source_dir).glob("*.c"))
        if not sources:
            raise MemstorError(f"no {self.name} sources in {root / self.source_dir}: is {root} the memstor "
                               "repository?")
        cc = os.environ.get("CC") or "cc"
        return [cc, "-O2", "-g", "-Wall", "-Wextra", "-pthread", "-o", str(output), *sources, "-lm"]

    def build(self, root: Path | None = None, output: Path | None = None) -> Path:
        """Compile the tool (``make <name>``) to ``output`` (default ``<root>/build/bin/<name>``); its path, or a
        MemstorError with the compiler's first error line."""
        root = Path(root) if root is not None else repo_root()
        output = Path(output) if output is not None else root / self.binary_relpath
        output.parent.mkdir(parents=True, exist_ok=True)
        cmd = self.compile_command(root, output)
        if shutil.which(cmd[0]) is None:
            raise MemstorError(f"C compiler {cmd[0]!r} not found: install gcc (apt-get install build-essential) "
                               "or set CC")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.splitlines() if "error" in ln] or proc.stderr.splitlines() or ["?"]
            raise MemstorError(f"building {self.name} failed ({' '.join(cmd[:2])} ...): {lines[0].strip()}")
        return output

    def binary(self, root: Path | None = None) -> Path:
        """The executable: ``$<env_var>`` when set, else ``<root>/build/bin/<name>``, else ``<name>`` on PATH;
        MemstorError "<name> is not built: run `make <name>` ..." when there is none."""
        env = os.environ.get(self.env_var)
        if env:
            path = Path(env).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return path
            raise MemstorError(f"{self.env_var}={env} is not an executable file: unset it or run `make {self.name}`")
        root = Path(root) if root is not None else repo_root()
        built = root / self.binary_relpath
        if built.is_file() and os.access(built, os.X_OK):
            return built
        on_path = shutil.which(self.name)
        if on_path:
            return Path(on_path)
        raise MemstorError(f"{self.name} is not built: run `make {self.name}` in the memstor checkout (or put a built "
                           f"{self.name} on PATH, or set {self.env_var}=/path/to/{self.name})")
