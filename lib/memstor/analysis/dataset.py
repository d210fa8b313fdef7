"""Load a data root for analysis: every device folder under ``<data>/processed/`` (memstor's experiment
tables and imported ``fio.csv`` / ``mlc.csv``), its ``sysinfo.json`` and its points' provenance. Nothing
under ``<data>/raw/`` is opened: a copied ``processed/`` folder gives the same data set.

Input layout (``<data>`` is the data root, default ``data/``)::

    <data>/processed/<device>/<experiment>.csv         memstor runs (one table per registered family)
    <data>/processed/<device>/fio.csv, mlc.csv          imported: memstor parse FILES -o <data>/processed/<device>/
    <data>/processed/<device>/sysinfo.json              the machine (memstor runs)
    <data>/processed/<device>/<experiment>-metas.json   provenance: the meta sidecar of every memstor point
    <data>/processed/<device>/<experiment>-bins.csv     json+ histograms as tidy bins (memstor.analysis.histograms)

Every folder under ``processed/`` is one device and appears side by side with the others in every table.

Which tables are experiment tables, and of which schema (fio or mlc), the caller may say (``kinds``: the
registry of memstor.experiments, a layer above, passed by the CLI and the notebooks); without it the folder
says it itself (:func:`table_kinds`), so that a copied ``processed/`` folder loads on its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core.errors import UsageError, first_line
from memstor.core.schema import (
    CLUSTER_COLUMNS,
    CLUSTER_SUFFIX,
    FIO_COLUMNS,
    METAS_SUFFIX,
    MLC_COLUMNS,
    truthy,
)

IMPORTED = {"fio.csv": "fio", "mlc.csv": "mlc"}


IMPORTED_TABLE = "imported"


FIO_NUMERIC = ("bs_bytes", "iodepth", "numjobs", "rwmixread", "iops", "bw_MBps", "lat_mean_us", "lat_stddev_us",
               "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us", "clat_p99_us", "clat_p99_9_us",
               "clat_p99_99_us", "runtime_s", "total_ios", "file_size_bytes", "cpu_usr_pct", "cpu_sys_pct")


MLC_NUMERIC = ("run", "read_fraction", "access_bytes", "inject_delay", "latency_ns", "bandwidth_MBps",
               "src_node", "dst_node")


class NoData(UsageError):
    """No processed table under the data root."""


# -------------------------------------------------------------------------------------------- loading


@dataclass
class HostData:
    """Everything found for one host folder ``<data>/processed/<host>/``."""

    name: str
    tables: list = field(default_factory=list)      # file names read (fio-queue-depth.csv, fio.csv...)
    kinds: dict = field(default_factory=dict)       # experiment tables read: {experiment: "fio" | "mlc"}
    sysinfo: dict | None = None
    metas: list = field(default_factory=list)       # meta sidecars (dicts, plus 'experiment', 'meta_path')
    metas_not_shown: int = 0                        # raw points not in the tables (e.g. an earlier run)
    problems: list = field(default_factory=list)    # one-line problems (unreadable table...)


@dataclass
class Dataset:
    """All hosts of a data root: fio and MLC rows with a ``host`` and a ``table`` column."""

    data_dir: Path
    hosts: list
    fio: pd.DataFrame
    mlc: pd.DataFrame
    skipped: list = field(default_factory=list)   # problems of host folders left out (nothing readable)
    cluster: pd.DataFrame = None  # fleet runs' cluster rows (memstor.experiments._fleet), with a ``fleet`` column
    side: dict = field(default_factory=dict)  # {"<experiment>-<what>": rows of every host} (:func:`side_tables`)

    def side_table(self, name: str) -> pd.DataFrame:
        """A family's side table of every host (``fio-write-saturation-seconds``...), with ``host``; empty
        when no host has one."""
        return self.side.get(name, pd.DataFrame(columns=["host"]))

    @property
    def metas(self) -> list:
        """Every host's point meta sidecars (HostData.metas), each with its device (host folder) as ``host``."""
        return [dict(m, host=h.name) for h in self.hosts for m in h.metas]

    @property
    def host_names(self) -> list:
        """Host folder names, sorted."""
        return [h.name for h in self.hosts]

    def usable_cpus(self) -> dict[str, float]:
        """{host: the CPUs its run could use} (sysinfo ``shape.usable_cpus``; hosts that did not record it left
        out)."""
        return {h.name: float(u) for h in self.hosts if (u := ((h.sysinfo or {}).get("shape") or {}).get("usable_cpus"))}

    def host(self, name: str) -> HostData:
        """The HostData called `name`."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    @property
    def problems(self) -> list:
        """All one-line loading problems."""
        return [p for h in self.hosts for p in h.problems] + list(self.skipped)


def _read_csv(path: Path, host: HostData) -> pd.DataFrame | None:
    """A CSV as a DataFrame, or None with a one-line problem recorded."""
    try:
        df = pd.read_csv(path, low_memory=False)
    except pd.errors.EmptyDataError:
        host.problems.append(f"{path}: empty file; rerun the experiment or `memstor parse` that wrote it")
        return None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        host.problems.append(f"{path}: cannot read ({first_line(err)}); rerun what wrote it")
        return None
    return df


def _normalise(df: pd.DataFrame, columns, numeric, host: str, table: str) -> pd.DataFrame:
    """A copy with every schema column (missing ones empty), the host folder as ``host``, ``table``, the
    numeric columns as numbers and ``status`` (``done`` when the table has none)."""
    df = df.copy()
    for col in columns:
        if col not in df.columns:
            df[col] = np.nan
    df["host"] = host
    df["table"] = table
    for col in numeric:
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    if "status" not in df.columns:
        df["status"] = "done"
    return df


def _normalise_fio(df: pd.DataFrame, host: str, table: str) -> pd.DataFrame:
    """fio rows with numeric columns, the host folder as ``host`` (fio's own as ``fio_host``), ``table``
    and an ``ok`` flag."""
    df = df.assign(fio_host=df["host"] if "host" in df.columns else np.nan)
    df = _normalise(df, FIO_COLUMNS, FIO_NUMERIC, host, table)
    for col in ("file_size_bytes", "point"):
        if col not in df.columns:
            df[col] = np.nan
    df["spec_point"] = df["spec_point"].map(truthy) if "spec_point" in df.columns else False
    if df["point"].isna().all():
        df["point"] = df["source"].map(lambda s: Path(str(s)).stem if isinstance(s, str) else None)
    err = pd.to_numeric(df["error"], errors="coerce")
    bad_err = df["error"].notna() & (err.isna() | (err != 0))
    df["ok"] = (~bad_err) & (df["status"].astype(str) != "failed") & df["iops"].notna()
    df["rwmixread"] = df["rwmixread"].where(df["rw"].isin(["rw", "randrw", "readwrite"]))
    df["outstanding_io"] = df["iodepth"] * df["numjobs"]
    return df


def _normalise_mlc(df: pd.DataFrame, host: str, table: str) -> pd.DataFrame:
    """MLC/loadlat rows with numeric columns, ``host``, ``table`` and ``ok``."""
    df = _normalise(df, MLC_COLUMNS, MLC_NUMERIC, host, table)
    df["ok"] = df["status"].astype(str) != "failed"
    return df


def _read_metas(folder: Path, host: HostData, shown: set) -> None:
    """Collect the points' provenance (``<experiment>-metas.json`` beside the experiment tables, written when
    the experiment ran: memstor.experiments._provenance) into host.metas: only the points the processed
    tables hold (``shown``: {(experiment, point)}), so that the methods section's counts, time ranges and
    commands describe exactly the data the tables show (points of an earlier run with other settings are
    counted in ``host.metas_not_shown``). An experiment table without its provenance file (measured before
    memstor wrote one) is said in host.problems; `memstor run` of that experiment writes it (points cached)."""
    for exp in sorted(t for t, k in host.kinds.items()):
        path = folder / f"{exp}{METAS_SUFFIX}"
        if not path.is_file():
            host.problems.append(f"{path.name}: missing in {folder.name}/; the methods section has no commands for "
                                 f"{exp} (run `memstor run {exp}` again with the same settings to write it)")
            continue
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            host.problems.append(f"{path.name}: unreadable ({err}); the provenance of {exp} is missing")
            continue
        for entry in entries if isinstance(entries, list) else []:
            if (exp, str(entry.get("point"))) not in shown:
                host.metas_not_shown += 1
            elif "error" in entry or not isinstance(entry.get("meta"), dict):
                host.problems.append(f"{entry.get('meta_path')}: {entry.get('error', 'no meta')}; "
                                     "provenance of that point is missing")
            else:
                info = dict(entry["meta"])
                info.setdefault("experiment", exp)
                info.setdefault("point", entry.get("point"))
                info["meta_path"] = entry.get("meta_path")
                host.metas.append(info)


#: Columns that make a processed table one of the fio schema (DESIGN.md) ...
FIO_MARKS = ("rw", "iops")
#: ... or of the mlc schema.
MLC_MARKS = ("test", "latency_ns")


def table_kinds(folder: Path) -> dict[str, str]:
    """{experiment: "fio" | "mlc"} of the experiment tables in one device folder, read from the folder
    itself, by file name: every ``<experiment>.csv`` whose header holds the fio schema's ``rw`` and ``iops``
    (fio) or the mlc schema's ``test`` and ``latency_ns`` (mlc). Left out: the imported ``fio.csv`` /
    ``mlc.csv`` (read apart), a family's side tables ``<experiment>-<what>.csv`` beside its
    ``<experiment>.csv`` (per-second rows, the steady-state matrix), and files without either header."""
    stems = {p.stem for p in folder.glob("*.csv")}
    paths = sorted(p for p in folder.glob("*.csv") if p.name not in IMPORTED)
    out = {}
    for path in paths:
        if any(path.stem.startswith(f"{other}-") for other in stems if other != path.stem):
            continue
        try:
            with path.open(encoding="utf-8", errors="replace") as f:
                header = set(f.readline().strip().split(","))
        except OSError:
            header = set()
        if not header - {""}:  # empty or unreadable: read like a table, so that its problem is reported
            out[path.stem] = "fio" if path.stem.startswith("fio") else "mlc"
        elif set(FIO_MARKS) <= header:
            out[path.stem] = "fio"
        elif set(MLC_MARKS) <= header:
            out[path.stem] = "mlc"
    return out


def load_dataset(data_dir: Path | str, kinds: Mapping[str, str] | None = None) -> Dataset:
    """Read every host under ``<data_dir>/processed/``; NoData (one line) when there is none.

    kinds: {experiment: "fio" | "mlc"} of the experiment tables to read, in reading order (the registry's,
    memstor.experiments.kinds()); None: each folder's own :func:`table_kinds`."""
    data_dir = Path(data_dir).expanduser()
    processed = data_dir / "processed"
    if not processed.is_dir():
        raise NoData(f"{processed}: no processed data; run `make all` (or `memstor run ...`) or import "
                     f"someone's files with `memstor parse FILES -o {processed}/<name>/`")
    hosts, fio_frames, mlc_frames, cluster_frames = [], [], [], []
    side: dict[str, list] = {}
    skipped: list[str] = []
    for folder in sorted(p for p in processed.iterdir() if p.is_dir() and not p.name.startswith(".")):
        clusters = sorted(folder.glob(f"*{CLUSTER_SUFFIX}.csv"))
        if clusters:  # a fleet's folder: its cluster tables, not a device
            cluster_frames += [_read_cluster(path, folder.name, skipped) for path in clusters]
            continue
        h = HostData(name=folder.name)
        for exp, kind in (table_kinds(folder) if kinds is None else kinds).items():
            path = folder / f"{exp}.csv"
            if path.is_file():
                df = _read_csv(path, h)
                if df is not None:
                    h.tables.append(path.name)
                    h.kinds[exp] = kind
                    if kind == "fio":
                        fio_frames.append(_normalise_fio(df, h.name, exp))
                    else:
                        mlc_frames.append(_normalise_mlc(df, h.name, exp))
        for name, kind in IMPORTED.items():
            path = folder / name
            if path.is_file():
                df = _read_csv(path, h)
                if df is not None and not df.empty:
                    h.tables.append(name)
                    norm = _normalise_fio if kind == "fio" else _normalise_mlc
                    (fio_frames if kind == "fio" else mlc_frames).append(norm(df, h.name, IMPORTED_TABLE))
        for name, df in side_tables(folder, h, list(h.kinds)).items():
            side.setdefault(name, []).append(df)
        info = folder / "sysinfo.json"
        if info.is_file():
            try:
                h.sysinfo = json.loads(info.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                h.problems.append(f"{info}: unreadable ({err}); the systems table misses this host")
        mine = [f for f in (*fio_frames, *mlc_frames) if len(f) and f["host"].iloc[0] == h.name]
        shown = {(t, str(pt)) for f in mine if "point" in f for t, pt in zip(f["table"], f["point"])}
        _read_metas(folder, h, shown)
        if h.tables or h.sysinfo:
            hosts.append(h)
        else:
            skipped.extend(h.problems)
    if not any(h.tables for h in hosts):
        why = f" ({skipped[0]})" if skipped else ""
        raise NoData(f"{processed}: no readable processed tables{why} (fio-*.csv, mlc-*.csv, fio.csv, mlc.csv) in any host "
                     f"folder; run `make all` or `memstor parse FILES -o {processed}/<name>/`")
    fio = pd.concat(fio_frames, ignore_index=True) if fio_frames else _normalise_fio(
        pd.DataFrame(columns=FIO_COLUMNS), "", "")
    mlc = pd.concat(mlc_frames, ignore_index=True) if mlc_frames else _normalise_mlc(
        pd.DataFrame(columns=MLC_COLUMNS), "", "")
    cluster = pd.concat([f for f in cluster_frames if f is not None], ignore_index=True) \
        if any(f is not None for f in cluster_frames) else pd.DataFrame(columns=["fleet", *CLUSTER_COLUMNS])
    return Dataset(data_dir=data_dir, hosts=hosts, fio=fio, mlc=mlc, skipped=skipped, cluster=cluster,
                   side={k: pd.concat(v, ignore_index=True) for k, v in side.items()})


#: Side tables that are not rows of their experiment: the fio json+ bins and the point provenance (read
#: apart, by memstor.analysis.histograms and :func:`_read_metas`).
_NOT_SIDE = ("-bins", "-metas")


def side_tables(folder: Path, host: HostData, experiments) -> dict[str, pd.DataFrame]:
    """A device folder's side tables ``<experiment>-<what>.csv`` of the experiments read (per-second rows,
    the steady-state matrix, drive temperatures...): {"<experiment>-<what>": rows with ``host``}."""
    out = {}
    for exp in experiments:
        for path in sorted(folder.glob(f"{exp}-*.csv")):
            if path.stem.endswith(_NOT_SIDE) or CLUSTER_SUFFIX in path.stem:
                continue
            df = _read_csv(path, host)
            if df is not None:
                out[path.stem] = df.assign(host=host.name)
    return out


def _read_cluster(path: Path, fleet: str, problems: list) -> pd.DataFrame | None:
    """A fleet's cluster table with its ``fleet`` name first; None with a one-line problem when unreadable."""
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        problems.append(f"{path}: unreadable ({first_line(err)}); the cluster table misses it")
        return None
    df.insert(0, "fleet", fleet)
    return df


# -------------------------------------------------------------------------------------- fio points


def experiment_metas(data_root, devices, experiment: str) -> list[dict]:
    """The point metas of one experiment on each device (``<data_root>/processed/<device>/<experiment>-metas.json``,
    memstor.experiments._provenance), each with ``host`` (the device), ``experiment`` and ``point``: what a notebook
    passes where the report passes Dataset.metas (e.g. wsat.wsat_table's jobs_disjoint label). A device without the
    file, or an unreadable one, adds nothing."""
    out = []
    for device in devices:
        path = Path(data_root).expanduser() / "processed" / str(device) / f"{experiment}{METAS_SUFFIX}"
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out += [dict(e["meta"], host=str(device), experiment=experiment, point=e.get("point"))
                for e in entries if isinstance(entries, list) and isinstance(e, dict) and isinstance(e.get("meta"), dict)]
    return out
