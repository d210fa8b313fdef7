"""memstor.parse.fio on outputs of the real fio, generated now on a small temp file (short runs)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from memstor.parse.fio import clat_bins, load_fio_json, parse_fio

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt install fio)")]

SIZE = "8m"  # test file size; 8 MiB / 4 KiB = 2048 I/Os per full pass
IOS_PER_PASS = 8 * 1024 * 1024 // 4096


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> Path:
    """An 8 MiB file written once, so read jobs do not have to lay it out."""
    path = tmp_path_factory.mktemp("fio") / "testfile"
    path.write_bytes(b"\x5a" * (8 * 1024 * 1024))
    return path


def _fio(target: Path, *args: str, fmt: str = "json", check: bool = False) -> str:
    """Run fio on the temp file (psync, buffered, bs=4k) and return its stdout."""
    cmd = ["fio", f"--filename={target}", f"--size={SIZE}", "--bs=4k", "--ioengine=psync",
           "--direct=0", f"--output-format={fmt}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _only(rows: list[dict], **where) -> list[dict]:
    """Rows whose columns equal the given values."""
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def test_numjobs_without_group_reporting_one_row_per_clone(target: Path) -> None:
    out = _fio(target, "--name=clones", "--rw=randread", "--numjobs=2", check=True)
    result = parse_fio(out, "clones.json")
    assert result.errors == []
    assert [(r["jobname"], r["numjobs"], r["total_ios"]) for r in result.rows] == [
        ("clones", 2, IOS_PER_PASS), ("clones", 2, IOS_PER_PASS)]


def test_numjobs_with_group_reporting_one_aggregate(target: Path) -> None:
    json_out = _fio(target, "--name=agg", "--rw=randread", "--numjobs=2", "--group_reporting", check=True)
    text_out = _fio(target, "--name=agg", "--rw=randread", "--numjobs=2", "--group_reporting",
                    fmt="normal", check=True)
    for out in (json_out, text_out):
        rows = parse_fio(out, "agg").rows
        assert [(r["numjobs"], r["direction"], r["total_ios"]) for r in rows] == [(2, "read", 2 * IOS_PER_PASS)]
        assert rows[0]["iops"] == pytest.approx(rows[0]["total_ios"] / rows[0]["runtime_s"], rel=1e-9)


def test_randrw_mix_70(target: Path) -> None:
    out = _fio(target, "--name=mix", "--rw=randrw", "--rwmixread=70", check=True)
    rows = parse_fio(out, "mix.json").rows
    assert [(r["direction"], r["rw"], r["rwmixread"]) for r in rows] == [
        ("read", "randrw", 70), ("write", "randrw", 70)]
    reads, writes = rows[0]["total_ios"], rows[1]["total_ios"]
    assert reads + writes == IOS_PER_PASS
    assert reads / (reads + writes) == pytest.approx(0.70, abs=0.05)
    for row in rows:  # bw is decimal MB/s of the bytes moved
        assert row["bw_MBps"] == pytest.approx(row["iops"] * 4096 / 1e6, rel=0.01)
        assert row["lat_min_us"] <= row["clat_p50_us"] <= row["clat_p99_99_us"] <= row["lat_max_us"] * 1.02


def test_json_plus_bins_sum_to_total_ios(target: Path) -> None:
    out = _fio(target, "--name=hist", "--rw=randrw", "--rwmixread=50", fmt="json+", check=True)
    doc = load_fio_json(out)
    rows = parse_fio(out, "hist.json").rows
    for row in rows:
        bins = clat_bins(doc["jobs"][0], row["direction"])
        assert bins and sum(bins.values()) == row["total_ios"]


def test_status_interval_last_document_counts(target: Path) -> None:
    out = _fio(target, "--name=si", "--rw=randread", "--time_based", "--runtime=2", "--status-interval=1",
               check=True)
    docs = [m.start() for m in re.finditer(r"^\{", out, re.M)]
    assert len(docs) >= 2
    last = json.loads(out[docs[-1]:])
    rows = parse_fio(out, "si.json").rows
    assert len(rows) == 1 and rows[0]["total_ios"] == last["jobs"][0]["read"]["total_ios"]
    assert rows[0]["total_ios"] > json.JSONDecoder().raw_decode(out, docs[0])[0]["jobs"][0]["read"]["total_ios"]
    truncated = out + out[docs[-1]: docs[-1] + 500]  # a run killed while writing one more document
    assert parse_fio(truncated, "si.json").rows == rows


def test_error_job_and_error_line_before_json(target: Path) -> None:
    args = ("--name=full", "--filename=/dev/full", "--rw=write", "--size=1m")
    out = _fio(target, *args)
    assert re.match(r"fio: .*err=28", out)  # fio prints the error into stdout, before the JSON
    rows = parse_fio(out, "full.json").rows
    assert [(r["direction"], r["error"]) for r in rows] == [("write", 28)]
    assert all(rows[0][c] is None for c in ("iops", "bw_MBps", "lat_mean_us", "clat_p50_us", "total_ios"))
    for fmt in ("normal", "terse"):
        text_rows = parse_fio(_fio(target, *args, fmt=fmt), f"full.{fmt}").rows
        assert [(r["direction"], r["error"], r["iops"]) for r in text_rows] == [("write", 28, None)]


def test_normal_and_terse_agree_with_json_of_the_same_run(target: Path) -> None:
    out = _fio(target, "--name=x3", "--rw=randrw", "--rwmixread=60", fmt="json,normal,terse", check=True)
    start = out.index("\n{") + 1
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(out, start)
    json_rows = parse_fio(out[start:end], "x3.json").rows
    text = out[:start] + out[end:]
    normal = "\n".join(line for line in text.splitlines() if not line.startswith("3;"))
    terse = "\n".join(line for line in text.splitlines() if line.startswith("3;"))
    for other, tol in ((parse_fio(text, "mixed").rows, 1e-6), (parse_fio(normal, "normal").rows, 1e-6),
                       (parse_fio(terse, "terse").rows, 1e-3)):
        assert [r["direction"] for r in other] == ["read", "write"]
        for j, t in zip(json_rows, other):
            assert t["iops"] == pytest.approx(j["iops"], rel=tol, abs=1)  # terse prints integer IOPS
            assert t["bw_MBps"] == pytest.approx(j["bw_MBps"], rel=0.002)
            assert t["lat_mean_us"] == pytest.approx(j["lat_mean_us"], abs=0.006)
            assert t["runtime_s"] == j["runtime_s"]
    mixed = parse_fio(text, "mixed").rows
    assert [r["total_ios"] for r in mixed] == [r["total_ios"] for r in json_rows]
    assert [(r["rw"], r["bs_bytes"], r["ioengine"]) for r in mixed] == [("randrw", 4096, "psync")] * 2


# ---------------------------------------------------------------------------------- client/server
def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(log: Path) -> tuple[subprocess.Popen, int]:
    """A fio server on loopback; skips the test with the reason when it does not come up."""
    port = _free_port()
    with log.open("w") as fh:
        proc = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=fh, stderr=subprocess.STDOUT)
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    pytest.skip(f"fio --server could not start on 127.0.0.1:{port}: {log.read_text()[:200]}")


def test_client_server_two_servers(target: Path, tmp_path: Path) -> None:
    job = tmp_path / "cs.fio"
    job.write_text(f"[global]\nfilename={target}\nsize={SIZE}\nioengine=psync\nbs=4k\n"
                   "[cs]\nrw=randread\nnumjobs=2\ngroup_reporting\n")
    servers = [_start_server(tmp_path / f"server{i}.log") for i in range(2)]
    try:
        cmd = ["fio", "--output-format=json"]
        for _, port in servers:
            cmd += [f"--client=ip:127.0.0.1,{port}", str(job)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        for server, _ in servers:
            server.kill()
            server.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "All clients" in out
    rows = parse_fio(out, "cs.json").rows
    assert sorted(r["host"] for r in rows) == sorted(f"127.0.0.1:{port}" for _, port in servers)
    assert all(r["jobname"] == "cs" and r["numjobs"] == 2 and r["total_ios"] == 2 * IOS_PER_PASS for r in rows)
    assert all(r["ioengine"] == "psync" and r["bs_bytes"] == 4096 for r in rows)  # global options apply
