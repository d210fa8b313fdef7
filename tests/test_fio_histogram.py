"""One fio histogram implementation (memstor.core.fiohist) and processed data that stands on its own.

1. Over every real json+ fixture in tests/data: memstor's percentiles from the bins equal the percentiles
   fio printed in the same file (each printed percentile, each job, direction and histogram kind).
2. Every table that shows a percentile of one point shows the same number: the parsed rows, the cluster
   aggregate, the clones' merge of the summary, the latency CDF and the load-latency table.
3. A measured data folder's ``processed/`` alone gives byte-identical report tables (the analysis reads
   the processed bins tables, never ``data/raw/``); without bins tables what needs them is not available.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT
from memstor.analysis import histograms, storage
from memstor.analysis import synthesis as syn
from memstor.analysis.cluster import cluster_aggregate
from memstor.analysis.summary import summary_table
from memstor.core import fiohist
from memstor.experiments import fio_load_latency as fll
from memstor.experiments import load_profile, run_experiment
from memstor.parse.fio import load_fio_json, parse_fio
from memstor.parse.fio_bins import bin_rows
from memstor.report.tables import write_tables

DATA = ROOT / "tests" / "data"
SPECS = ROOT / "data" / "specs"
FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make env installs it)")
#: The clat_p* columns of the fio schema and their percentiles.
COLUMNS = {fiohist.pct_column(p): p for p in fiohist.DEFAULT_PERCENTILES}


def _json_plus_fixtures() -> list[Path]:
    """Every fio JSON fixture under tests/data with json+ bins."""
    found = []
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.stat().st_size > 64 << 20:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if '"bins"' in text and '"fio version"' in text:
            found.append(path)
    return found


FIXTURES = _json_plus_fixtures()


def _histograms(doc: dict):
    """(job, direction, kind, histogram dict, printed percentiles dict) of every histogram in a document."""
    for job in doc.get("jobs", []):
        for direction in ("read", "write", "trim"):
            for kind in fiohist.KINDS:
                block = (job.get(direction) or {}).get(f"{kind}_ns") or {}
                if block.get("bins"):
                    yield job, direction, kind, block["bins"], block.get("percentile") or {}


def test_the_fixtures_are_found():
    assert len(FIXTURES) >= 5  # the ChrisLvvvv json+ sweeps (SOURCES.md)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(DATA)))
def test_percentiles_from_bins_equal_the_ones_fio_printed(path):
    doc = load_fio_json(path.read_text(encoding="utf-8", errors="replace"))
    checked = 0
    for job, direction, kind, bins, printed in _histograms(doc):
        assert printed, f"{job['jobname']} {direction}: bins without fio's percentiles"
        ours = fiohist.percentiles(bins, [float(k) for k in printed])
        for key, value in printed.items():
            assert ours[float(key)] == value, (job["jobname"], direction, kind, key)
            checked += 1
    assert checked > 0


#: json+ fixtures with a direction that no fio row shows: fio prints the options of a group_reporting group's LAST
#: job, and memstor.parse.fio gives rows for the directions those options ask for, so the writes of diskplorer's
#: mixed cells (a write job, then read jobs, one group) have bins but no fio row (memstor.parse.diskplorer reads
#: them). Strict: when the fio parser gives those rows, this fails and the mark goes.
_NO_FIO_ROW = {DATA / "diskplorer" / "scylladb__diskplorer" / "latency-matrix-results" / "m7gd.4xlarge.excerpt.json"}


@pytest.mark.parametrize("path", [
    pytest.param(p, id=str(p.relative_to(DATA)), marks=[pytest.mark.xfail(
        strict=True, raises=KeyError, reason="a group's write half has no fio row (see _NO_FIO_ROW)")]
        if p in _NO_FIO_ROW else []) for p in FIXTURES])
def test_every_table_shows_the_same_percentile_of_a_point(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    doc = load_fio_json(text)
    source = str(path.relative_to(DATA))
    rows = {(r["jobname"], r["direction"]): r for r in parse_fio(text, source).rows}
    bins = pd.DataFrame(bin_rows(doc, source), columns=list(fiohist.BIN_COLUMNS))
    for job, direction, kind, hist, _ in _histograms(doc):
        if kind != "clat":
            continue
        row = rows[(job["jobname"], direction)]
        parsed = {col: row[col] for col in COLUMNS}
        assert all(v is not None for v in parsed.values())
        ours = {col: v / 1000.0 for col, v in zip(COLUMNS, fiohist.percentiles(hist, COLUMNS.values()).values())}
        cluster = cluster_aggregate({"h": {"jobs": [job]}}, direction)
        merged = histograms.job_percentiles(bins, source, job["jobname"], job["groupid"], direction, COLUMNS)
        cdf = storage.latency_cdf(bins[bins["source"] == source], direction, jobname=job["jobname"])
        from_cdf = {col: storage.percentile_from_cdf(cdf, p) for col, p in COLUMNS.items()}
        for col in COLUMNS:
            assert ours[col] == parsed[col] == cluster[col] == merged[col] == from_cdf[col], (job["jobname"], col)


def test_clones_merged_from_the_processed_bins_give_fio_numbers(tmp_path):
    """Two clones of one job (numjobs 2 without group_reporting): the summary's percentiles come from their
    merged histograms in the processed bins table; doubling a histogram keeps fio's percentiles."""
    path = DATA / "real" / "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems" / "Project3" / "results" / "qd_sweep.json"
    text = path.read_text()
    doc = load_fio_json(text)
    job = doc["jobs"][0]
    twin = {**doc, "jobs": [job, job]}
    source = "raw/x/imported/qd.json"
    fio = pd.DataFrame(parse_fio(json.dumps(twin), source).rows).assign(host="dev", table="imported")
    folder = tmp_path / "processed" / "dev"
    folder.mkdir(parents=True)
    pd.DataFrame(bin_rows(twin, source)).to_csv(folder / "fio-bins.csv", index=False)
    summ = summary_table(fio, tmp_path)
    printed = job["read"]["clat_ns"]["percentile"]
    (row,) = summ.to_dict("records")
    assert row["clat_p99_us"] == printed["99.000000"] / 1000 and row["clat_p99_9_us"] == printed["99.900000"] / 1000
    assert summary_table(fio, tmp_path / "elsewhere")["clat_p99_us"].isna().all()  # no bins: not available


def test_rows_of_one_bin_add_up_when_directions_or_clones_merge():
    """A mixed job's read and write histograms (and a job's clones) share bins: their counts add, never the last
    one kept (a reviewer found a DIRTH T1Q1 p99 of 2,212 µs from 7,196 of 20,127 I/Os, above both directions'
    own p99s); the merged p99 lies between the directions' p99s (both sides)."""
    rows = pd.DataFrame({"source": "s", "kind": "clat", "jobname": "j", "groupid": 0,
                         "direction": ["read"] * 3 + ["write"] * 3,
                         "latency_ns": [1_000, 2_000, 50_000, 2_000, 50_000, 90_000],
                         "count": [900, 90, 10, 10, 900, 90]})
    merged = histograms.as_histogram(histograms.select(rows, source="s", direction="total"))
    assert merged == {1_000: 900, 2_000: 100, 50_000: 910, 90_000: 90}
    assert sum(merged.values()) == 2_000
    p99 = {d: fiohist.percentiles(histograms.as_histogram(histograms.select(rows, direction=d)), [99.0])[99.0]
           for d in ("read", "write", "total")}
    assert p99["read"] <= p99["total"] <= p99["write"]


@needs_fio
@pytest.mark.fio
def test_load_latency_percentiles_are_the_total_latency_fio_printed(tmp_path):
    out = tmp_path / "lat.json"
    subprocess.run([FIO, "--name=job", f"--filename={tmp_path / 'f'}", "--size=8m", "--rw=randread", "--bs=4k",
                    "--runtime=1", "--time_based", "--ioengine=psync", "--lat_percentiles=1",
                    "--output-format=json+", f"--output={out}"], check=True, capture_output=True, timeout=120)
    text = out.read_text()
    doc = load_fio_json(text)
    row = parse_fio(text, "lat.json").rows[0]
    cols = fll.load_columns(row, {"phase": "probe", "iodepth": 1}, doc, pd.DataFrame(columns=["direction", "iops"]))
    printed = doc["jobs"][0]["read"]["lat_ns"]["percentile"]
    assert cols["lat_p50_us"] == printed["50.000000"] / 1000
    assert cols["lat_p99_us"] == printed["99.000000"] / 1000
    assert cols["lat_p99_9_us"] == printed["99.900000"] / 1000


# ------------------------------------------------------------------------------ processed data alone
TINY = {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "repetitions": 1, "ioengine": "psync", "direct": 0}


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """A short real run: the queue-depth sweep (QD 1 and 4) and the open loop on it (two offered rates)."""
    if FIO is None:
        pytest.skip("fio is not installed")
    data = tmp_path_factory.mktemp("alone") / "data"
    qd = load_profile("quick", "fio-queue-depth", {**TINY, "rw": ["randread"], "iodepth": [1, 4],
                                                    "spec_iodepth": 0})
    run_experiment("fio-queue-depth", qd, data_root=data, host="dev", progress=False)
    ll = load_profile("quick", fll.EXPERIMENT, {**TINY, "rw": ["randread"], "utilisation_pct": [30, 60],
                                               "slo_p99_us": [100000]})
    run_experiment(fll.EXPERIMENT, ll, data_root=data, host="dev", progress=False)
    return data


def _tables(data: Path, out: Path) -> dict[str, bytes]:
    """{file name: bytes} of the report tables built from `data` (what `make report` writes)."""
    write_tables(syn.synthesise(data, SPECS, [100000.0]), out)
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.csv"))}


@needs_fio
@pytest.mark.fio
def test_processed_alone_gives_byte_identical_report_tables(measured, tmp_path):
    bins = measured / "processed" / "dev" / "fio-queue-depth-bins.csv"
    assert bins.is_file() and "raw/dev/fio-queue-depth/" in bins.read_text()  # relative to the data folder
    alone = tmp_path / "alone"
    shutil.copytree(measured / "processed", alone / "processed")
    with_raw = _tables(measured, tmp_path / "with-raw")
    without = _tables(alone, tmp_path / "without-raw")
    assert with_raw.keys() == without.keys() and "load_latency_models.csv" in with_raw
    for name in with_raw:
        assert with_raw[name] == without[name], name
    models = pd.read_csv(tmp_path / "without-raw" / "load_latency_models.csv")
    assert len(models) and models["service_source"].str.startswith("QD1 point").all()  # from the bins table


@needs_fio
@pytest.mark.fio
def test_processed_without_bins_tables_says_not_available(measured, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(measured / "processed", old / "processed")
    for path in (old / "processed" / "dev").glob("*-bins.csv"):
        path.unlink()  # a data folder written before the bins tables existed
    S = syn.synthesise(old, SPECS, [100000.0])
    assert S.load_models is None or S.load_models.empty  # no service time: no model, not a wrong one
    cdfs = storage.qd_cdfs(pd.read_csv(old / "processed" / "dev" / "fio-queue-depth.csv"), old)
    assert cdfs.empty
