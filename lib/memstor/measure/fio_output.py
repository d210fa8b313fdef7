"""What fio wrote, checked: its JSON document (text before it tolerated), its own error line, and whether a
raw output file holds a complete measurement (jobs, none with an error). Pure text checks, no process runs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memstor.core.errors import MemstorError, ParseError, PointFailed
from memstor.parse.fio import load_fio_json


def load_json(text: str) -> dict:
    """The last complete fio JSON document in ``text`` (text before it tolerated); ParseError if none."""
    return load_fio_json(text)



def first_error_line(*texts: str) -> str:
    """fio's own first error line among texts (stderr, text before the JSON), else the first line."""
    lines = [ln.strip() for t in texts if t for ln in t.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("{", "}", '"'))]
    for ln in lines:
        if re.search(r"error|err=|fio: |invalid|denied|not permitted|no such|failed", ln, re.IGNORECASE):
            return ln
    return lines[0] if lines else "no error message"



def _text_before_json(text: str) -> str:
    m = re.search(r"^\{", text, re.MULTILINE)
    return text[: m.start()] if m else text



_JOB_SIGNAL = re.compile(r"fio: pid=\d+, got signal=(\d+)")



def check_fio_output(point: str, returncode: int, stderr: str, out_text: str) -> dict:
    """The fio JSON of a run, or PointFailed("point NAME: ...") naming fio's own error."""
    before = _text_before_json(out_text)
    if returncode != 0:
        raise PointFailed(f"point {point}: fio exited {returncode}: {first_error_line(stderr, before)}")
    try:
        doc = load_json(out_text)
    except ParseError:
        raise PointFailed(f"point {point}: fio wrote no JSON result: {first_error_line(stderr, out_text)}") from None
    jobs = doc.get("jobs") or []
    if not jobs:
        raise PointFailed(f"point {point}: fio's JSON has no jobs: {first_error_line(stderr, before)}")
    killed = _JOB_SIGNAL.search(f"{stderr}\n{before}")
    if killed:  # fio-3.33 exits 0 with a JSON of zeros when a job process dies of a signal
        raise PointFailed(f"point {point}: a fio job died of signal {killed.group(1)} ({killed.group(0).strip()})")
    for j in jobs:
        err = j.get("error", 0)
        if err:
            why = os.strerror(err) if isinstance(err, int) and err > 0 else str(err)
            raise PointFailed(
                f"point {point}: fio job {j.get('jobname')!r} error {err} ({why}): {first_error_line(stderr, before)}"
            )
    return doc



def json_complete(raw: Path) -> bool:
    """True when ``raw`` holds a fio JSON document with jobs and no job error."""
    try:
        doc = load_json(Path(raw).read_text(encoding="utf-8", errors="replace"))
    except (OSError, MemstorError):
        return False
    jobs = doc.get("jobs") or []
    return bool(jobs) and all(not j.get("error", 0) for j in jobs)
