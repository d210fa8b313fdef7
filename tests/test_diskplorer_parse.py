"""diskplorer's result files -> the mixed-load cell table (memstor.parse.diskplorer, `memstor parse --kind diskplorer`).

The fixture is a real diskplorer result (scylladb/diskplorer, m7gd.4xlarge, fio-3.36): three of its 441 cells
copied verbatim (tests/data/diskplorer/SOURCES.md). The values below were read by eye from that file.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memstor.parse.diskplorer import (
    MIXED_LOAD_COLUMNS,
    looks_like_diskplorer,
    parse_diskplorer,
    rows_from_doc,
)
from memstor.parse.files import parse_paths

DATA = Path(__file__).parent / "data" / "diskplorer"
REAL = DATA / "scylladb__diskplorer" / "latency-matrix-results" / "m7gd.4xlarge.excerpt.json"


def _text() -> str:
    return REAL.read_text(encoding="utf-8")


def _rows(doc: dict, **kw) -> list[dict]:
    errors: list = []
    rows = rows_from_doc(doc, "x.json", errors, **kw)
    assert errors == []
    return rows


def _cli(*args) -> subprocess.CompletedProcess:
    """The installed `memstor` command beside this interpreter (.venv/bin/memstor), else python -m memstor.cli."""
    exe = Path(sys.executable).with_name("memstor")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memstor.cli"]
    return subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, timeout=120)


def test_fixture_is_whole_fio_json_plus():
    """The copy is intact: every histogram's bins add up to fio's sample count, and every percentile fio
    printed is one of its bins (a digit lost in copying would break one of these)."""
    doc = json.loads(_text())
    assert doc["fio version"] == "fio-3.36" and len(doc["jobs"]) == 3
    for job in doc["jobs"]:
        for direction in ("read", "write"):
            clat = job[direction]["clat_ns"]
            if clat["N"]:
                assert sum(clat["bins"].values()) == clat["N"], (job["jobname"], direction)
                assert {int(k) for k in clat["bins"]} >= set(clat["percentile"].values())


def test_real_file_rows():
    result = parse_diskplorer(_text(), str(REAL))
    assert result.errors == []
    rows = result.rows
    assert [(r["cell"], r["direction"]) for r in rows] == [
        ("w00r00", "read"), ("w00r01", "read"), ("w01r19", "read"), ("w01r19", "write")]
    assert all(set(r) == set(MIXED_LOAD_COLUMNS) for r in rows)
    assert all(r["tool"] == "diskplorer" and r["source"] == str(REAL) for r in rows)
    # diskplorer times from submission (fio clat): no lag, open loop unknown; it has no version of its own
    assert all(r["lag_p99_us"] is None and r["open_loop"] is None and r["tool_version"] is None for r in rows)
    base, low, mixed_read, mixed_write = rows
    # r_idx=0: the name says r_iops=0, the one read job's options say rate_iops 10 (diskplorer's floor)
    assert base["read_offered_iops"] == 10 and base["offered_iops"] == 10
    assert base["achieved_iops"] == pytest.approx(10.399653) and base["bs_bytes"] == 512
    assert base["write_offered_MBps"] == 0
    assert base["resp_p99_us"] == pytest.approx(96.768) and base["resp_p50_us"] == pytest.approx(79.36)
    # job(r_idx=1,w_idx=0,write_bw=0,r_iops=13445): iops 13436.318789, bw_bytes 6879651, clat mean 72443.732785 ns
    assert low["read_offered_iops"] == 13445 and low["achieved_iops"] == pytest.approx(13436.318789)
    assert low["achieved_pct"] == pytest.approx(100 * 13436.318789 / 13445)
    assert low["bw_MBps"] == pytest.approx(6.879651) and low["resp_mean_us"] == pytest.approx(72.443732785)
    assert low["resp_p95_us"] == pytest.approx(80.384) and low["resp_p99_9_us"] == pytest.approx(120.32)
    # job(r_idx=19,w_idx=1,write_bw=30235996,r_iops=255454): read p99 220160 ns, write bw_bytes 30241671
    for row in (mixed_read, mixed_write):
        assert row["write_offered_MBps"] == pytest.approx(30.235996) and row["read_offered_iops"] == 255454
    assert mixed_read["resp_p99_us"] == pytest.approx(220.16) and mixed_read["resp_p99_9_us"] == pytest.approx(346.112)
    assert mixed_read["achieved_iops"] == pytest.approx(260800.039999) and mixed_read["bw_MBps"] == pytest.approx(133.530132)
    assert mixed_write["bw_MBps"] == pytest.approx(30.241671) and mixed_write["achieved_iops"] == pytest.approx(230.69231)
    assert mixed_write["achieved_pct"] == pytest.approx(100 * 30241671 / 30235996)
    assert mixed_write["resp_p99_us"] == pytest.approx(140.288) and mixed_write["resp_mean_us"] == pytest.approx(114.589373736)
    # the write block size is not in the file (fio reports the options of the group's last job, a read)
    assert mixed_write["bs_bytes"] is None and mixed_write["offered_iops"] is None
    # every cell of the excerpt held: diskplorer's plotter keeps them all
    assert all(r["held_note"] is None for r in rows)


def test_the_97_percent_rule_both_sides():
    doc = json.loads(_text())
    mixed = doc["jobs"][2]
    # held: at exactly 97 % diskplorer keeps the cell (it drops achieved < 0.97 x offered)
    mixed["read"]["iops"] = 0.97 * 255454
    rows = _rows(doc)
    assert rows[2]["achieved_pct"] == pytest.approx(97.0) and rows[2]["held_note"] is None
    # dropped: reads under 97 %; both rows of the cell carry the reason, the cell's values are kept
    mixed["read"]["iops"] = 0.912 * 255454
    rows = _rows(doc)
    note = "read achieved 91.2 % of offered (diskplorer drops < 97 %)"
    assert rows[2]["held_note"] == note and rows[3]["held_note"] == note
    assert rows[2]["resp_p99_us"] == pytest.approx(220.16)
    assert rows[0]["held_note"] is None and rows[1]["held_note"] is None
    # writes under 97 % of the offered bytes/s too: both reasons
    mixed["write"]["bw_bytes"] = int(0.95 * 30235996)
    rows = _rows(doc)
    assert rows[3]["held_note"] == note + "; write achieved 95.0 % of offered (diskplorer drops < 97 %)"
    # another allowed error (its README's hard-disk example allowed 15 %): the same cell holds
    assert all(r["held_note"] is None for r in _rows(doc, hold_fraction=0.85))


def test_runs_that_are_no_cells_and_the_calibration_block_size():
    doc = json.loads(_text())
    calib = copy.deepcopy(doc["jobs"][2])
    calib["jobname"] = "max-write-bw"
    calib["job options"] = {"rw": "write", "bs": "131072", "iodepth": "64"}
    prepare = dict(copy.deepcopy(doc["jobs"][0]), jobname="prepare")
    doc["jobs"] = [prepare, calib, *doc["jobs"]]
    rows = _rows(doc)
    assert len(rows) == 4
    write = rows[3]
    assert write["bs_bytes"] == 131072 and write["offered_iops"] == pytest.approx(30235996 / 131072)
    text = json.dumps(doc)
    assert looks_like_diskplorer(text)


def test_plain_fio_json_is_not_diskplorer(real):
    fio_json = next(real.rglob("*.json"))
    text = fio_json.read_text(encoding="utf-8", errors="replace")
    assert not looks_like_diskplorer(text)
    out = parse_paths([fio_json])
    assert out.rows["diskplorer"] == [] and out.rows["fio"]
    forced = parse_diskplorer(text, str(fio_json))
    assert forced.rows == [] and len(forced.errors) == 1
    assert forced.errors[0].startswith(f"{fio_json}: no diskplorer cells") and "--kind fio" in forced.errors[0]


@pytest.mark.parametrize("damage", ["truncated", "garbled", "not json", "bad cell"])
def test_bad_input_is_one_line(tmp_path, damage):
    text = _text()
    bad = tmp_path / "bad.json"
    if damage == "truncated":
        bad.write_text(text[: len(text) // 2])
    elif damage == "garbled":
        bad.write_text(text.replace('"read": {', '"read": {{', 1))
    elif damage == "not json":
        bad.write_text("diskplorer finished\n")
    else:  # valid JSON, one cell's read section damaged: the other cells stay
        doc = json.loads(text)
        doc["jobs"][1]["read"] = "n/a"
        bad.write_text(json.dumps(doc))
    proc = _cli("parse", "--kind", "diskplorer", bad)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{bad}: ")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    if damage == "bad cell":
        assert "cell w00r01" in lines[0] and [r["cell"] for r in rows] == ["w00r00", "w01r19", "w01r19"]
    else:
        assert "--result-file" in lines[0] and rows == []


def test_cli_kind_auto_and_outdir(tmp_path):
    proc = _cli("parse", "--kind", "diskplorer", REAL)
    assert proc.returncode == 0 and proc.stderr == ""
    reader = csv.DictReader(io.StringIO(proc.stdout))
    rows = list(reader)
    assert reader.fieldnames == list(MIXED_LOAD_COLUMNS) and len(rows) == 4
    assert rows[2]["resp_p99_us"] == "220.16" and rows[3]["bw_MBps"] == "30.241671"
    assert rows[3]["bs_bytes"] == "" and rows[3]["lag_p99_us"] == "" and rows[3]["open_loop"] == ""
    # detected without --kind: stdout, and -o OUTDIR writes diskplorer.csv beside fio.csv and mlc.csv
    auto = _cli("parse", REAL)
    assert auto.returncode == 0 and auto.stdout == proc.stdout
    out = tmp_path / "out"
    done = _cli("parse", DATA, "-o", out)
    assert done.returncode == 0, done.stderr
    assert (out / "diskplorer.csv").read_text() == proc.stdout
    assert (out / "fio.csv").read_text().count("\n") == 1  # the header only: the file went to diskplorer.csv
    # --kind fio still reads it as the fio json+ it also is: one row per job, by the options fio reports (the
    # group's last job, a read: the mixed cell's writes are only in the diskplorer table)
    as_fio = _cli("parse", "--kind", "fio", REAL)
    fio_rows = list(csv.DictReader(io.StringIO(as_fio.stdout)))
    assert as_fio.returncode == 0 and [r["direction"] for r in fio_rows] == ["read"] * 3
