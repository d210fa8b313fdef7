"""Fleet runs of the fio families (issue 20): ``memstor run fio-… --hosts hosts.yaml``.

For each host of the file: memstor prepares and marks the test file there over SSH (memstor.measure.fleet_target;
a refused target fails that host's points before any fio job starts there), then every grid position runs on all
hosts at once through fio's client/server (memstor.measure.fleet_sweep). Each host's raw outputs, tidy table
and sysinfo land under its label as if it had been measured locally (``data/raw/<label>/<experiment>/``,
``data/processed/<label>/<experiment>.csv``); the cluster aggregate of every grid position goes to
``data/processed/<fleet>/<experiment>-cluster.csv`` (memstor.analysis.cluster; ``<fleet>`` is the host file's
stem), which the report shows as ``cluster.csv``.

A family runs at once on every host when it defines ``FLEET_CONFIGS(validated, engine)``, the point parameters
of its fixed grid. Adaptive grids (``iodepth: auto``) and precision targets (``precision_pct``) decide per host
as they measure, which a simultaneous fleet point cannot; they are refused in one line. The other families
(memory, steady state, open loop) run memstor itself on each host over SSH, one host after the other
(:func:`run_remote`), and their data comes back into the same layout.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
from memstor.analysis.cluster import cluster_aggregate
from memstor.core.errors import MemstorError, UsageError
from memstor.core.files import atomic_write, read_json
from memstor.core.schema import CLUSTER_COLUMNS, CLUSTER_SUFFIX
from memstor.measure.fleet import FleetError, run_ssh, ssh_argv
from memstor.measure.fleet_hosts import load_hosts
from memstor.measure.fleet_sweep import HostPlan, RawFiles, run_fleet_sweep
from memstor.measure.fleet_target import remote_target
from memstor.measure.sweep import MANIFEST, PointResult, check_name, is_cached, meta_path, raw_dir, raw_path


def fleet_name(hosts_file: Path) -> str:
    """The folder name of a fleet's cluster tables: the host file's stem, made file-safe."""
    name = Path(hosts_file).stem
    check_name("host", name)
    return name


def check_fleet_family(fam, validated) -> None:
    """UsageError (one line) when ``fam``'s parameters ask for what a simultaneous fleet point cannot do."""
    if getattr(validated, "auto", False):
        raise UsageError(f"{fam.EXPERIMENT}: iodepth: auto decides per host as it measures; give a list of depths "
                         "for --hosts (--set iodepth=[1,4,16,64])")
    if validated.common.device or validated.common.confirm_device:
        raise UsageError(f"{fam.EXPERIMENT}: with --hosts a raw device is named in the host file (device: and "
                         "confirm_device: of that host), not in the profile")
    if validated.common.precision_pct:
        raise UsageError(f"{fam.EXPERIMENT}: precision_pct stops each host's point at its own time; drop it for "
                         "--hosts (every host runs the same fixed runtime_s)")


def run_fleet(fam, params: dict, hosts_file: Path, data_root: Path, *, progress: bool = True,
              ssh_extra=()) -> pd.DataFrame:
    """Run or resume a fio family on every host of ``hosts_file`` at once; write each host's table, sysinfo and
    the cluster table; return the hosts' tables concatenated (a ``host`` column tells them apart)."""
    hosts = load_hosts(hosts_file)
    fleet = fleet_name(hosts_file)
    if fleet in {h.label for h in hosts}:
        raise UsageError(f"{hosts_file}: a host is labelled {fleet!r} like the file, whose name the fleet's "
                         "cluster tables take (data/processed/<file name>/): rename the file or the label")
    if not hasattr(fam, "FLEET_CONFIGS"):
        return run_remote(fam, params, hosts, data_root, ssh_extra=ssh_extra)
    validated = fam.validate(params)
    check_fleet_family(fam, validated)
    c: _fio_params.FioCommon = validated.common
    data_root = Path(data_root)
    plans, refused, targets, recorded = [], {}, {}, set()
    for h in hosts:
        try:
            targets[h.label] = remote_target(h, c.file_size_bytes, c.ioengine, c.direct, ssh_extra)
            plans.append(_plan(fam, validated, h, targets[h.label]))
            continue
        except FleetError as e:
            error = str(e)
        # a host that cannot take part now keeps what it measured before (its last sweep's target)
        t = _recorded_target(fam.EXPERIMENT, c, h, data_root)
        plan = _plan(fam, validated, h, t) if t else None
        measured = {p.name for p in plan.points if _cached(data_root, fam.EXPERIMENT, h, p)} if plan else set()
        if plan is None or len(measured) < len(plan.points):
            refused[h.label] = (error, plan, measured)
            print(f"{fam.EXPERIMENT}: {error}; its points not measured yet are marked failed, the other hosts run",
                  file=sys.stderr)
            continue
        print(f"{fam.EXPERIMENT}: {error}; every point of {h.label} is measured: its data is re-read",
              file=sys.stderr)
        assert t is not None  # the plan was made from it
        targets[h.label] = t
        recorded.add(h.label)
        plans.append(plan)
    results = run_fleet_sweep(fam.EXPERIMENT, plans, data_root, progress=progress, ssh_extra=ssh_extra) if plans else {}
    tables = []
    for h in hosts:
        if h.label in refused:
            df = _fio_rows.to_frame(_refused_rows(fam, validated, h, data_root, *refused[h.label]))
        else:
            t = targets[h.label]
            note = f"{t['ioengine']} ({t['ioengine_why']})"
            df = _fio_rows.to_frame(_fio_rows.result_rows(results[h.label], h.label, note, data_root))
            if h.label not in recorded:
                _write_host_sysinfo(data_root, h, t)
        _fio_run.write_table(df, data_root, h.label, fam.EXPERIMENT)
        _fio_run.write_bins(results.get(h.label, []), data_root, h.label, fam.EXPERIMENT)
        tables.append(df)
    table = pd.concat(tables, ignore_index=True)
    cluster = cluster_table(results, data_root)
    _fio_run.write_table(cluster, data_root, fleet, fam.EXPERIMENT + CLUSTER_SUFFIX)
    failed = table[table["status"] == "failed"]
    if len(failed) == len(table):
        raise MemstorError(f"{fam.EXPERIMENT}: every point failed on every host (first: {failed['error'].iloc[0]}); "
                           "rerun the same command to retry")
    return table


def _plan(fam, validated, h, t: dict):
    """The HostPlan of host ``h`` on its prepared target ``t`` (memstor.measure.fleet_target's description)."""
    c = validated.common
    configs = [dict(cfg, medium=t["medium"]) for cfg in fam.FLEET_CONFIGS(validated, t["ioengine"])]
    points = _fio_points.make_points(configs, c.repetitions, t["path"])
    jobs = {p.name: _fio_points.fio_job(p, t["path"]) for p in points}
    sysinfo = {"ioengine_requested": c.ioengine, "ioengine": t["ioengine"], "ioengine_why": t["ioengine_why"],
               "test_file": t["path"], "test_file_bytes": t["size_bytes"], "ssh": h.ssh,
               "remote_hostname": t["hostname"], "fio_version": t["fio_version"]}
    return HostPlan(h, points, jobs, sysinfo)


def _cached(data_root: Path, experiment: str, h, point) -> bool:
    """True when host ``h``'s point is measured in its raw folder here (memstor.measure.sweep.is_cached)."""
    return is_cached(point, RawFiles(), raw_dir(data_root, h.label, experiment))


def _recorded_target(experiment: str, c, h, data_root: Path) -> dict | None:
    """Host ``h``'s target as its last sweep of ``experiment`` recorded it (manifest), when that was this test
    file size and engine request; else None. Used only to re-read what was measured there: nothing is ever
    measured on a recorded target (the refusal rules are checked on the host)."""
    man = read_json(raw_dir(data_root, h.label, experiment) / MANIFEST) or {}
    info, entries = man.get("sysinfo") or {}, man.get("points") or []
    medium = next((e.get("params", {}).get("medium") for e in entries if isinstance(e, dict)), None)
    if not (info.get("test_file") and info.get("ioengine") and medium and info.get("ioengine_requested") == c.ioengine
            and info.get("test_file_bytes") == c.file_size_bytes):
        return None
    return {"path": info["test_file"], "size_bytes": info["test_file_bytes"], "ioengine": info["ioengine"],
            "ioengine_why": info.get("ioengine_why", ""), "medium": medium,
            "hostname": info.get("remote_hostname"), "fio_version": info.get("fio_version")}


def _refused_rows(fam, validated, h, data_root: Path, error: str, plan, measured: set) -> list:
    """Rows of a host that could not take part: its points ``measured`` before (of ``plan``, from its recorded
    target) re-read, every other point failed with ``error``."""
    c = validated.common
    if plan is None:
        points = _fio_points.make_points(fam.FLEET_CONFIGS(validated, c.ioengine), c.repetitions, "")
        return [r for p in points for r in _fio_rows.failed_rows(p.params, p.name, h.label, error)]
    folder = raw_dir(data_root, h.label, fam.EXPERIMENT)
    results = [PointResult(p, "cached", raw_path(folder, p, ".json"), meta_path(folder, p)) if p.name in measured
               else PointResult(p, "failed", None, meta_path(folder, p), error) for p in plan.points]
    t = plan.sysinfo
    return _fio_rows.result_rows(results, h.label, f"{t['ioengine']} ({t['ioengine_why']})", data_root)


def _write_host_sysinfo(data_root: Path, host, target: dict) -> None:
    """``processed/<label>/sysinfo.json`` of a fleet host: what memstor there reported (its host name, fio,
    test file and medium) and the SSH destination; the machine's full description needs memstor sysinfo
    run there (``ssh HOST memstor sysinfo``)."""
    out = Path(data_root) / "processed" / host.label / "sysinfo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    info = {"hostname": target["hostname"], "fleet_host": {"ssh": host.ssh, **target},
            "device": {"kind": "fleet-host", "label": host.label, "medium": target["medium"],
                       "test_file": target["path"]}}
    atomic_write(out, json.dumps(info, indent=2, sort_keys=True, default=str) + "\n")


def cluster_table(results: dict, data_root: Path) -> pd.DataFrame:
    """One row per grid position and direction: summed IOPS and MB/s over the hosts measured there and the
    cluster latency percentiles (µs) of their merged json+ bins (memstor.analysis.cluster.cluster_aggregate);
    never fio's "All clients" entry, never averaged percentiles. A position with no host measured has no row."""
    labels = list(results)
    rows = []
    n = max((len(rs) for rs in results.values()), default=0)
    for i in range(n):
        docs, first = {}, None
        for label in labels:
            res = results[label][i]
            if res.raw is None:
                continue
            first = first or res.point
            docs[label] = json.loads(Path(res.raw).read_text(encoding="utf-8"))
        if not docs:
            continue
        assert first is not None  # set with the first doc
        p = first.params
        for direction in _fio_rows.directions(p["rw"], p.get("rwmixread")):
            agg = cluster_aggregate(docs, direction)
            rows.append({"experiment": p.get("experiment"), "point": first.name, "rw": p["rw"], "bs": p["bs"],
                         "iodepth": p["iodepth"], "numjobs": p["numjobs"], "rep": p.get("rep"),
                         "direction": direction, "hosts": " ".join(agg["hosts"]), "n_hosts": len(agg["hosts"]),
                         "iops": agg["iops"], "bw_MBps": agg["bw_MBps"], "total_ios": agg["total_ios"],
                         **{k: agg[k] for k in CLUSTER_COLUMNS if k.startswith("clat_p")},
                         "percentile_method": "merged json+ bins of every host (fio's rule)"})
    return pd.DataFrame(rows, columns=list(CLUSTER_COLUMNS))


#: The data root memstor uses on a host for the experiments it runs there (under the host's target).
REMOTE_DATA = "memstor-data"
#: Longest a remote experiment may take, seconds (a full steady-state run takes hours).
REMOTE_TIMEOUT_S = 48 * 3600.0


def run_remote(fam, params: dict, hosts: list, data_root: Path, *, ssh_extra=()) -> pd.DataFrame:
    """The families that do not run on a fleet at once (memory, steady state, open loop): memstor itself on each
    host over SSH, one host after the other, with the same parameters (``--set`` for every key) and its data
    root in ``<target>/memstor-data`` there (so a rerun resumes there); then that host's raw and processed folders
    come back here under its label (``tar`` over SSH). A host that fails is reported in one line; the others run.
    Returns the hosts' tables concatenated."""
    tables, failed = [], []
    for h in hosts:
        try:
            _remote_run(fam.EXPERIMENT, params, h, ssh_extra)
            _fetch(h, fam.EXPERIMENT, Path(data_root), ssh_extra)
        except FleetError as e:
            failed.append(str(e))
            print(f"{fam.EXPERIMENT}: {e}", file=sys.stderr)
            continue
        table = Path(data_root) / "processed" / h.label / f"{fam.EXPERIMENT}.csv"
        if table.is_file():
            tables.append(pd.read_csv(table))
    if not tables:
        raise MemstorError(f"{fam.EXPERIMENT}: no host measured it ({failed[0] if failed else 'no table came back'})")
    table = pd.concat(tables, ignore_index=True)
    if failed and "status" in table.columns:  # the CLI's exit status 1: some of the run failed
        table = pd.concat([table, pd.DataFrame([{"host": f.split(":")[0], "status": "failed", "error": f}
                                                for f in failed])], ignore_index=True)
    return table


def _remote_data(h) -> str:
    if not h.target:
        raise UsageError(f"{h.label}: a host with device: has no folder for memstor's data there; give it target:")
    return f"{h.target.rstrip('/')}/{REMOTE_DATA}"


def _remote_run(experiment: str, params: dict, h, ssh_extra) -> None:
    """``memstor run EXPERIMENT`` on host ``h`` with ``params``; FleetError with its last stderr line when it
    fails as a whole (exit 2 or worse: exit 1, some points failed, still brings the data back)."""

    sets = [a for k, v in params.items() if k != "profile" for a in ("--set", f"{k}={json.dumps(v)}")]
    profile = ["--profile", str(params["profile"])] if params.get("profile") else []
    argv = [*shlex.split(h.memstor), "run", experiment, *profile, "--data", _remote_data(h), "--host", h.label,
            "--no-progress", *sets]
    if experiment.startswith("fio-") and not (params.get("device") or params.get("confirm_device")):
        argv += ["--target", str(h.target)]
    r = run_ssh(h, shlex.join(argv), ssh_extra, timeout=REMOTE_TIMEOUT_S)
    if r.returncode not in (0, 1):
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise FleetError(f"{h.label}: memstor run {experiment} there failed: {why.removeprefix('memstor: ')}")


def _fetch(h, experiment: str, data_root: Path, ssh_extra) -> None:
    """Copy ``raw/<label>/<experiment>/`` and ``processed/<label>/`` of the host's memstor data here (tar over
    SSH; files that exist here are replaced by the host's, which measured them)."""

    remote = f"tar -C {shlex.quote(_remote_data(h))} -cf - raw/{h.label}/{experiment} processed/{h.label}"
    data_root.mkdir(parents=True, exist_ok=True)
    with subprocess.Popen(ssh_argv(h, ssh_extra, "-o", "BatchMode=yes", h.ssh, remote), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as src:
        untar = subprocess.run(["tar", "-C", str(data_root), "-xf", "-"], stdin=src.stdout, capture_output=True)
        assert src.stderr is not None  # stderr=PIPE
        err = src.stderr.read().decode(errors="replace")
    if src.returncode != 0 or untar.returncode != 0:
        why = (err.strip().splitlines() or untar.stderr.decode(errors="replace").strip().splitlines()
               or ["tar failed"])[-1]
        raise FleetError(f"{h.label}: cannot copy its {experiment} data back: {why}")
