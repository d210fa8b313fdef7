"""What this fio does, measured with it rather than assumed from its version number.

memstor runs on fio 3.28 to 3.43. Where the releases differ in something memstor relies on, the fact is read
from a tiny run of the fio that will do the work (the null engine, 0.2 s, no file), once per binary and
process, and recorded with the version (sysinfo, the points' meta). Measured with the releases in
third_party/fio (2-vCPU KVM VM, `make fio-matrix`):

- ``iolog_timestamps``: ``write_iolog`` writes "fio version 3 iolog" with a submission time (us) per line from
  fio 3.31 on; 3.28 writes "fio version 2 iolog" without times, so no inter-arrival time can be read from it.
- ``json_job_start``: each job of the JSON carries ``job_start`` (ms since the epoch) from fio 3.36 on; 3.28
  and 3.33 do not, so a job's start is the document's end time minus its run time.
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from memstor.core.errors import MemstorError
from memstor.measure.fio_engine import fio_binary, fio_version

#: Seconds after which the facts run is given up (it takes ~0.3 s).
FACTS_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class FioFacts:
    """Behaviours of one fio binary, measured with it."""

    fio_version: str
    iolog_timestamps: bool  # write_iolog writes per-I/O times (iolog v3)
    json_job_start: bool  # the JSON's jobs carry job_start (ms since the epoch)

    def as_dict(self) -> dict:
        """The facts as a JSON-ready dict (for sysinfo and meta sidecars)."""
        return asdict(self)


def fio_facts() -> FioFacts:
    """The facts of the fio memstor runs (``$MEMSTOR_FIO`` or PATH); measured once per binary and process."""
    binary = fio_binary()
    return _facts_of(binary, fio_version())


@functools.lru_cache(maxsize=8)
def _facts_of(binary: str, version: str) -> FioFacts:
    """One null-engine run of ``binary`` with an iolog and a JSON document; MemstorError when it cannot run."""
    with tempfile.TemporaryDirectory(prefix="memstor-fio-facts-") as tmp:
        work = Path(tmp)
        cmd = [binary, "--name=facts", "--ioengine=null", "--size=1m", "--rw=randread", "--bs=4k",
               "--time_based", "--runtime=200ms", f"--write_iolog={work / 'io.log'}",
               "--output-format=json", f"--output={work / 'out.json'}"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=FACTS_TIMEOUT_S, cwd=work)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise MemstorError(f"{binary}: the fio facts run did not finish ({err}); reinstall fio") from None
        try:
            doc = json.loads((work / "out.json").read_text(encoding="utf-8", errors="replace"))
            head = (work / "io.log").read_text(encoding="utf-8", errors="replace").splitlines()[:1]
        except (OSError, ValueError):
            reason = (res.stderr or "no output").strip().splitlines()[:1]
            raise MemstorError(f"{binary}: the fio facts run gave no JSON or iolog (exit {res.returncode}: "
                               f"{' '.join(reason)}); reinstall fio") from None
    jobs = [j for j in doc.get("jobs", []) if isinstance(j, dict)]
    return FioFacts(fio_version=version, iolog_timestamps=bool(head) and iolog_has_times(head[0]),
                    json_job_start=bool(jobs) and all("job_start" in j for j in jobs))


def iolog_has_times(header: str) -> bool:
    """Whether an iolog's first line announces per-I/O times (``fio version 3 iolog`` and later)."""
    words = header.split()
    return len(words) >= 3 and words[:2] == ["fio", "version"] and words[2].isdigit() and int(words[2]) >= 3
