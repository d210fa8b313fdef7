"""Synthesis across hosts: load every processed table, headline numbers, spec comparison, queueing tables.

Input layout (``<data>`` is the data root, default ``data/``)::

    <data>/processed/<host>/fio-block-size.csv, fio-rw-ratio.csv, fio-queue-depth.csv   memstor runs
    <data>/processed/<host>/mlc-loaded-latency.csv                                      memstor runs
    <data>/processed/<host>/fio.csv, mlc.csv          imported: memstor parse FILES -o <data>/processed/<host>/
    <data>/processed/<host>/sysinfo.json              the machine (memstor runs)
    <data>/raw/<host>/<experiment>/*.meta.json        provenance of every memstor point

Every folder under ``processed/`` is one host (one device under test) and appears side by side with the
others in every table. Units are in the column names (``_us``, ``_ns``, ``_MBps`` = 10^6 bytes/s, ``iops``).
Failed points (status failed or fio error set) never enter a number; they are counted.
"""

from __future__ import annotations

import json
import math
import shlex
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis import queueing, specs
from memstor.errors import MemstorError, UsageError
from memstor.schema import FIO_COLUMNS, MLC_COLUMNS


def experiment_kinds() -> dict[str, str]:
    """{experiment: "fio" | "mlc"} of every registered family (memstor.experiments), in notebook order."""
    from memstor.experiments import families

    return {m.EXPERIMENT: m.KIND for m in families()}


IMPORTED = {"fio.csv": "fio", "mlc.csv": "mlc"}
IMPORTED_TABLE = "imported"
FIO_NUMERIC = ("bs_bytes", "iodepth", "numjobs", "rwmixread", "iops", "bw_MBps", "lat_mean_us", "lat_stddev_us",
               "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us", "clat_p99_us", "clat_p99_9_us",
               "clat_p99_99_us", "runtime_s", "total_ios", "file_size_bytes")
MLC_NUMERIC = ("run", "read_fraction", "access_bytes", "inject_delay", "latency_ns", "bandwidth_MBps",
               "src_node", "dst_node")
#: Keys that identify one fio measurement point (repetitions share them).
POINT_KEY = ["host", "rw", "direction", "bs_bytes", "iodepth", "numjobs", "rwmixread"]


class NoData(UsageError):
    """No processed table under the data root."""


# -------------------------------------------------------------------------------------------- loading


@dataclass
class HostData:
    """Everything found for one host folder ``<data>/processed/<host>/``."""

    name: str
    tables: list = field(default_factory=list)      # file names read (fio-queue-depth.csv, fio.csv...)
    sysinfo: dict | None = None
    metas: list = field(default_factory=list)       # meta sidecars (dicts, plus 'experiment', 'meta_path')
    problems: list = field(default_factory=list)    # one-line problems (unreadable table...)


@dataclass
class Dataset:
    """All hosts of a data root: fio and MLC rows with a ``host`` and a ``table`` column."""

    data_dir: Path
    hosts: list
    fio: pd.DataFrame
    mlc: pd.DataFrame
    skipped: list = field(default_factory=list)   # problems of host folders left out (nothing readable)

    @property
    def host_names(self) -> list:
        """Host folder names, sorted."""
        return [h.name for h in self.hosts]

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


def _truthy(v) -> bool:
    """CSV booleans: True/'True'/'true'/1/'1'/'yes' -> True; empty/NaN/False -> False."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return False
    return str(v).strip().lower() in ("true", "1", "yes", "1.0")


def _read_csv(path: Path, host: HostData) -> pd.DataFrame | None:
    """A CSV as a DataFrame, or None with a one-line problem recorded."""
    try:
        df = pd.read_csv(path, low_memory=False)
    except pd.errors.EmptyDataError:
        host.problems.append(f"{path}: empty file; rerun the experiment or `memstor parse` that wrote it")
        return None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        host.problems.append(f"{path}: cannot read ({str(err).splitlines()[0]}); rerun what wrote it")
        return None
    return df


def _normalise_fio(df: pd.DataFrame, host: str, table: str) -> pd.DataFrame:
    """fio rows with numeric columns, the host folder as ``host``, ``table`` and an ``ok`` flag."""
    df = df.copy()
    for col in FIO_COLUMNS:
        if col not in df.columns:
            df[col] = np.nan
    if "host" in df.columns:
        df["fio_host"] = df["host"]
    df["host"] = host
    df["table"] = table
    for col in FIO_NUMERIC:
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    for col in ("file_size_bytes", "point"):
        if col not in df.columns:
            df[col] = np.nan
    df["spec_point"] = df["spec_point"].map(_truthy) if "spec_point" in df.columns else False
    if "status" not in df.columns:
        df["status"] = "done"
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
    df = df.copy()
    for col in MLC_COLUMNS:
        if col not in df.columns:
            df[col] = np.nan
    df["host"] = host
    df["table"] = table
    for col in MLC_NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    if "status" not in df.columns:
        df["status"] = "done"
    df["ok"] = df["status"].astype(str) != "failed"
    return df


def _read_metas(data_dir: Path, host: HostData) -> None:
    """Collect ``<data>/raw/<host>/<experiment>/*.meta.json`` into host.metas."""
    raw = data_dir / "raw" / host.name
    if not raw.is_dir():
        return
    for meta in sorted(raw.glob("*/*.meta.json")):
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            host.problems.append(f"{meta}: unreadable meta sidecar ({err}); provenance of that point is missing")
            continue
        if isinstance(info, dict):
            info.setdefault("experiment", meta.parent.name)
            info.setdefault("point", meta.name[: -len(".meta.json")])
            info["meta_path"] = str(meta)
            host.metas.append(info)


def load_dataset(data_dir: Path | str) -> Dataset:
    """Read every host under ``<data_dir>/processed/``; NoData (one line) when there is none."""
    data_dir = Path(data_dir).expanduser()
    processed = data_dir / "processed"
    if not processed.is_dir():
        raise NoData(f"{processed}: no processed data; run `make all` (or `memstor run ...`) or import "
                     f"someone's files with `memstor parse FILES -o {processed}/<name>/`")
    hosts, fio_frames, mlc_frames, skipped = [], [], [], []
    for folder in sorted(p for p in processed.iterdir() if p.is_dir() and not p.name.startswith(".")):
        h = HostData(name=folder.name)
        for exp, kind in experiment_kinds().items():
            path = folder / f"{exp}.csv"
            if path.is_file():
                df = _read_csv(path, h)
                if df is not None:
                    h.tables.append(path.name)
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
        info = folder / "sysinfo.json"
        if info.is_file():
            try:
                h.sysinfo = json.loads(info.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                h.problems.append(f"{info}: unreadable ({err}); the systems table misses this host")
        _read_metas(data_dir, h)
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
    return Dataset(data_dir=data_dir, hosts=hosts, fio=fio, mlc=mlc, skipped=skipped)


# -------------------------------------------------------------------------------------- fio points


def point_medians(fio: pd.DataFrame) -> pd.DataFrame:
    """One row per fio point (POINT_KEY) of the successful rows: medians over repetitions.

    Columns: POINT_KEY, outstanding_io, iops, bw_MBps, lat_mean_us, clat_p99_us (medians), n (rows),
    spec_point (any), tables (which tables contributed), file_size_bytes, point (first point name).
    """
    good = fio[fio["ok"]].copy()
    if good.empty:
        return pd.DataFrame(columns=[*POINT_KEY, "outstanding_io", "iops", "bw_MBps", "lat_mean_us",
                                     "clat_p99_us", "n", "spec_point", "tables", "file_size_bytes", "point"])
    good["rwmixread"] = good["rwmixread"].fillna(-1)
    agg = good.groupby(POINT_KEY, dropna=False, sort=True).agg(
        outstanding_io=("outstanding_io", "first"),
        iops=("iops", "median"),
        bw_MBps=("bw_MBps", "median"),
        lat_mean_us=("lat_mean_us", "median"),
        clat_p99_us=("clat_p99_us", "median"),
        n=("iops", "size"),
        spec_point=("spec_point", "any"),
        tables=("table", lambda s: ",".join(sorted(set(s)))),
        file_size_bytes=("file_size_bytes", "max"),
        point=("point", "first"),
    ).reset_index()
    agg["rwmixread"] = agg["rwmixread"].where(agg["rwmixread"] >= 0)
    return agg


def _select(pts: pd.DataFrame, host: str, rw: str, bs: int | None = 4096, direction: str | None = None):
    """Points of `host` for a single-direction workload `rw` (direction = read/write from rw)."""
    direction = direction or ("write" if "write" in rw else "read")
    sel = pts[(pts["host"] == host) & (pts["rw"] == rw) & (pts["direction"] == direction)]
    if bs is not None:
        sel = sel[sel["bs_bytes"] == bs]
    return sel


# -------------------------------------------------------------------------------------- headlines

HEADLINE_METRICS = [
    ("idle_latency_ns", "Idle memory latency", "ns"),
    ("peak_bw_MBps", "Peak memory bandwidth", "MB/s"),
    ("qd1_randread_lat_us", "4K QD1 random read latency", "µs"),
    ("qd1_randwrite_lat_us", "4K QD1 random write latency", "µs"),
    ("best_randread_iops", "Best 4K random read", "IOPS"),
    ("best_randwrite_iops", "Best 4K random write", "IOPS"),
    ("seq_read_MBps", "Sequential read", "MB/s"),
    ("seq_write_MBps", "Sequential write", "MB/s"),
]


def idle_latency(mlc: pd.DataFrame, host: str) -> tuple[float | None, str]:
    """(ns, how): MLC idle_latency, else the local entries of the idle latency matrix, else the loaded
    latency at the largest inject delay (the lightest load, an upper estimate)."""
    m = mlc[(mlc["host"] == host) & mlc["ok"] & mlc["latency_ns"].notna()]
    idle = m[m["test"] == "idle_latency"]
    if not idle.empty:
        return float(idle["latency_ns"].median()), "idle latency"
    mat = m[(m["test"] == "latency_matrix") & (m["src_node"] == m["dst_node"])]
    if not mat.empty:
        return float(mat["latency_ns"].min()), "latency matrix, local node"
    ll = m[(m["test"] == "loaded_latency") & m["inject_delay"].notna()]
    if not ll.empty:
        top = ll[ll["inject_delay"] == ll["inject_delay"].max()]
        return float(top["latency_ns"].median()), f"loaded latency at delay {int(top['inject_delay'].iloc[0])}"
    return None, ""


def peak_bandwidth(mlc: pd.DataFrame, host: str) -> tuple[float | None, str]:
    """(MB/s, how): the highest peak-injection / max bandwidth, else the highest loaded-latency bandwidth."""
    m = mlc[(mlc["host"] == host) & mlc["ok"] & mlc["bandwidth_MBps"].notna()]
    peak = m[m["test"].isin(["peak_injection_bandwidth", "max_bandwidth"])]
    if not peak.empty:
        i = peak["bandwidth_MBps"].idxmax()
        return float(peak.loc[i, "bandwidth_MBps"]), f"peak injection, {peak.loc[i, 'traffic']}"
    ll = m[m["test"] == "loaded_latency"]
    if not ll.empty:
        i = ll["bandwidth_MBps"].idxmax()
        return float(ll.loc[i, "bandwidth_MBps"]), f"loaded latency, {ll.loc[i, 'traffic']}"
    return None, ""


def _qd_text(row) -> str:
    """'QD32x4' for a point row."""
    return f"QD{int(row['iodepth'])}x{int(row['numjobs'])}"


def headline_long(ds: Dataset, pts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Headline numbers per host, long form: host, key, metric, unit, value, detail (how/where measured)."""
    pts = point_medians(ds.fio) if pts is None else pts
    rows = []
    for host in ds.host_names:
        vals: dict = {}
        vals["idle_latency_ns"] = idle_latency(ds.mlc, host)
        vals["peak_bw_MBps"] = peak_bandwidth(ds.mlc, host)
        for rw in ("randread", "randwrite"):
            q1 = _select(pts, host, rw)
            q1 = q1[(q1["iodepth"] == 1) & (q1["numjobs"] == 1) & q1["lat_mean_us"].notna()]
            vals[f"qd1_{rw}_lat_us"] = ((float(q1["lat_mean_us"].median()), "QD1x1 mean latency")
                                       if not q1.empty else (None, ""))
            sel = _select(pts, host, rw)
            if sel.empty:
                vals[f"best_{rw}_iops"] = (None, "")
            else:
                r = sel.loc[sel["iops"].idxmax()]
                vals[f"best_{rw}_iops"] = (float(r["iops"]), f"at {_qd_text(r)}")
        for rw, key in (("read", "seq_read_MBps"), ("write", "seq_write_MBps")):
            sel = _select(pts, host, rw, bs=None)
            if sel.empty:
                vals[key] = (None, "")
            else:
                r = sel.loc[sel["bw_MBps"].idxmax()]
                vals[key] = (float(r["bw_MBps"]), f"bs {specs._size_text(int(r['bs_bytes']))}, {_qd_text(r)}")
        for key, label, unit in HEADLINE_METRICS:
            value, detail = vals[key]
            rows.append({"host": host, "key": key, "metric": label, "unit": unit, "value": value,
                         "detail": detail})
    return pd.DataFrame(rows)


def headline_table(long: pd.DataFrame) -> pd.DataFrame:
    """Hosts side by side: one row per metric ('metric (unit)'), one column per host, cells as text
    'value (detail)'; '–' where not measured."""
    hosts = list(dict.fromkeys(long["host"]))
    out = []
    for key, label, unit in HEADLINE_METRICS:
        row = {"metric": f"{label} ({unit})"}
        for h in hosts:
            r = long[(long["host"] == h) & (long["key"] == key)]
            v = r["value"].iloc[0] if not r.empty else None
            d = r["detail"].iloc[0] if not r.empty else ""
            row[h] = "–" if v is None or v != v else (fmt_number(v) + (f" ({d})" if d else ""))
        out.append(row)
    return pd.DataFrame(out)


def fmt_number(v: float | None) -> str:
    """A number for tables: thousands separators, about 3-4 significant digits; '–' for missing."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


# ------------------------------------------------------------------------------------- systems


def _flat(d, prefix: str = "") -> dict:
    """Nested dict -> {'a.b': value} (lists kept as values)."""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                out.update(_flat(v, key))
            else:
                out[key] = v
    return out


def _pick(flat: dict, *needles: str):
    """The first value whose key contains all the words of one needle ('cpu model'), else None."""
    for needle in needles:
        words = needle.lower().split()
        for k, v in flat.items():
            kl = k.lower()
            if all(w in kl for w in words) and v not in (None, "", [], {}):
                return v
    return None


SYSTEM_FIELDS = [
    ("CPU", ("cpu.model", "cpu model", "model name")),
    ("Logical CPUs", ("cpu.logical_cpus", "logical", "cpu count")),
    ("Memory (GiB)", ("memory.total_bytes", "mem total bytes", "memtotal")),
    ("NUMA nodes", ("memory.numa_nodes", "numa nodes")),
    ("OS", ("os.name", "os name")),
    ("Kernel", ("os.kernel", "kernel")),
    ("Test file folder", ("target.path", "target path")),
    ("Block device", ("target.source", "target device")),
    ("Filesystem", ("target.fstype", "fstype", "filesystem")),
    ("fio", ("tools.fio", "fio version")),
    ("Memory tool (sysinfo)", ("tools.mlc", "tools.loadlat")),
    ("memstor", ("memstor_version", "memstor version")),
]


def _sys_value(label: str, v) -> str:
    """A sysinfo value as short text (bytes -> GiB for the memory row)."""
    if isinstance(v, (list, tuple)):
        v = ", ".join(str(x) for x in v[:3])
    if label.startswith("Memory (GiB)") and isinstance(v, (int, float)) and v > 2**20:
        return f"{v / 2**30:.1f}"
    text = " ".join(str(v).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _disk_text(info: dict) -> str | None:
    """'vda, 256.0 GiB, rotational, vendor 0x1af4' from sysinfo target.disks (first disk)."""
    disks = ((info or {}).get("target") or {}).get("disks") or []
    if not disks or not isinstance(disks[0], dict):
        return None
    d = disks[0]
    parts = [str(d.get("name") or "?")]
    if d.get("model"):
        parts.append(str(d["model"]))
    if d.get("size_bytes"):
        parts.append(f"{d['size_bytes'] / 2**30:.0f} GiB")
    if d.get("rotational") is not None:
        parts.append("rotational" if d["rotational"] else "non-rotational")
    if d.get("vendor") and not d.get("model"):
        parts.append(f"vendor {d['vendor']}")
    return ", ".join(parts)


def systems_table(ds: Dataset) -> pd.DataFrame:
    """Systems under test side by side: one row per property, one column per host ('–' if unknown).

    From sysinfo.json where present; imported hosts show their tool versions from the tables."""
    out = []
    flats = {h.name: _flat(h.sysinfo or {}) for h in ds.hosts}
    for label, needles in SYSTEM_FIELDS:
        row = {"property": label}
        for h in ds.hosts:
            flat = flats[h.name]
            v = next((flat[n] for n in needles if flat.get(n) not in (None, "", [], {})), None)
            if v is None:
                v = _pick(flat, *[n.replace(".", " ").replace("_", " ") for n in needles])
            if v is None and label == "fio":
                vs = ds.fio.loc[ds.fio["host"] == h.name, "fio_version"].dropna().unique()
                v = ", ".join(sorted(map(str, vs))) or None
            row[h.name] = "–" if v is None else _sys_value(label, v)
        if any(v != "–" for k, v in row.items() if k != "property"):
            out.append(row)
        if label == "Block device":
            disk = {h.name: _disk_text(h.sysinfo) for h in ds.hosts}
            if any(disk.values()):
                out.append({"property": "Disk", **{k: v or "–" for k, v in disk.items()}})
    row = {"property": "Memory tool"}
    for h in ds.hosts:
        m = ds.mlc[ds.mlc["host"] == h.name]
        tools = sorted({f"{t} {v}".strip() for t, v in zip(m["tool"].fillna(""), m["tool_version"].fillna(""))
                        if t})
        row[h.name] = ", ".join(tools) or "–"
    out.append(row)
    row = {"property": "Data"}
    for h in ds.hosts:
        row[h.name] = "measured by memstor" if h.sysinfo else "imported (memstor parse)"
    out.append(row)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------- spec comparison


def _meta_index(host: HostData) -> dict:
    """{point name: meta dict} for one host."""
    return {m.get("point"): m for m in host.metas}


def _command_option(cmd, name: str) -> str | None:
    """Value of --name=VALUE (or --name VALUE) in a command list."""
    if not isinstance(cmd, list):
        return None
    for i, tok in enumerate(cmd):
        tok = str(tok)
        if tok.startswith(f"--{name}="):
            return tok.split("=", 1)[1]
        if tok == f"--{name}" and i + 1 < len(cmd):
            return str(cmd[i + 1])
    return None


def measured_conditions(point: pd.Series, host: HostData) -> specs.Conditions:
    """Conditions of a measured point (a point_medians row): outstanding I/O, bs, span, state, target.

    memstor points: span = the test file (size from the table or the meta sidecar), state fresh (short
    runs on a test file, no preconditioning), target from the meta's test file / fio --filename (a /dev
    path = raw device). Imported points: what the table says; span, state and target unknown."""
    c = specs.Conditions(
        iodepth=int(point["iodepth"]) if point["iodepth"] == point["iodepth"] else None,
        numjobs=int(point["numjobs"]) if point["numjobs"] == point["numjobs"] else None,
        bs_bytes=int(point["bs_bytes"]) if point["bs_bytes"] == point["bs_bytes"] else None,
        mb="decimal",
    )
    tables = str(point.get("tables", ""))
    if any(experiment_kinds().get(t) == "fio" for t in tables.split(",")):
        meta = _meta_index(host).get(point.get("point")) or {}
        params = meta.get("params") or {}
        filename = params.get("test_file") or _command_option(meta.get("command"), "filename") or ""
        size = point.get("file_size_bytes")
        if not (size == size and size) and params.get("file_size"):
            from memstor.units import parse_size
            try:
                size = parse_size(str(params["file_size"]))
            except ValueError:
                size = None
        if str(filename).startswith("/dev/"):
            c.target, c.span = "raw_device", "unknown"
        else:
            c.target, c.span = "filesystem_file", "file"
            c.span_bytes = int(size) if size == size and size else None
        c.state = "fresh"
    return c


def _spec_point_choice(pts: pd.DataFrame, host: str, sv: specs.SpecValue) -> tuple[pd.Series | None, str]:
    """The measured point to compare with spec value `sv`, and how it was chosen.

    4K random IOPS: the spec-conditions point (spec_point true) when present, else the point with the
    same rw and block size and the outstanding I/O closest to the spec's (log scale). MB/s: same rw,
    closest block size, then closest outstanding I/O."""
    sc = sv.conditions
    cands = _select(pts, host, sv.rw, bs=None)
    if cands.empty:
        return None, ""
    if sv.metric == "iops" and sc.bs_bytes:
        same_bs = cands[cands["bs_bytes"] == sc.bs_bytes]
        spec_pts = same_bs[same_bs["spec_point"]]
        if not spec_pts.empty:
            r = spec_pts.iloc[0]
            return r, f"spec-conditions point ({_qd_text(r)})"
        if not same_bs.empty:
            cands = same_bs
    target_n = sc.outstanding or 1
    target_bs = sc.bs_bytes or 131072
    d = cands.assign(
        _dbs=(np.log2(cands["bs_bytes"].astype(float)) - math.log2(target_bs)).abs(),
        _dn=(np.log2(cands["outstanding_io"].astype(float)) - math.log2(target_n)).abs(),
        _dj=(cands["numjobs"] != (sc.numjobs or 1)).astype(int),
        _neg=-cands[sv.metric],
    ).sort_values(["_dbs", "_dn", "_dj", "_neg"])
    r = d.iloc[0]
    how = "best matching point" + ("" if sv.metric != "iops" else ", no spec-conditions point")
    return r, f"{how} ({_qd_text(r)}, bs {specs._size_text(int(r['bs_bytes']))})"


def spec_comparison(ds: Dataset, sheets: list, pts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Measured vs spec for every host x spec value: measured, spec, ratio, both conditions, flag.

    Columns: host, device, id, metric, unit, measured, spec, ratio (measured / spec), measured_conditions,
    spec_conditions, flag ('matched' or 'differs: ...'), n_differ, selection, headline. Headline rows
    first. Hosts without any fio measurement are left out."""
    pts = point_medians(ds.fio) if pts is None else pts
    rows = []
    for h in ds.hosts:
        if pts[pts["host"] == h.name].empty:
            continue
        for sheet in sheets:
            for sv in sheet.values:
                r, how = _spec_point_choice(pts, h.name, sv)
                measured = None if r is None else float(r[sv.metric])
                cond = None if r is None else measured_conditions(r, h)
                rows.append(specs.compare(sv, measured, cond, device=sheet.device, host=h.name, selection=how))
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["_order"] = (~df["headline"]).astype(int)
    return df.sort_values(["_order", "device", "host"], kind="stable").drop(columns="_order").reset_index(drop=True)


def spec_table(comp: pd.DataFrame) -> pd.DataFrame:
    """The comparison for display: short headers with units, numbers formatted, conditions both sides."""
    if comp.empty:
        return comp
    return pd.DataFrame({
        "host": comp["host"],
        "spec value": comp["metric"] + comp["headline"].map(lambda b: " ★" if b else ""),
        "unit": comp["unit"],
        "measured": comp["measured"].map(fmt_number),
        "spec": comp["spec"].map(fmt_number),
        "ratio": comp["ratio"].map(lambda v: "–" if v is None or v != v else f"{v:.2f}"),
        "conditions": [
            f"measured: {m}" + (f" [{_short_selection(sel)}]" if sel else "") + f"\nspec: {s}"
            for m, s, sel in zip(comp["measured_conditions"], comp["spec_conditions"], comp["selection"])],
        "flag": comp["flag"],
    })


def _short_selection(selection: str) -> str:
    """'spec point' or 'closest point' from a selection text."""
    if selection.startswith("spec-conditions"):
        return "spec point"
    return "closest point; no spec point" if "no spec-conditions" in selection else "closest point"


# ------------------------------------------------------------------------------------- queueing


def qd_points(ds: Dataset, pts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Queue-depth sweep points: 4K randread/randwrite per host, medians over repetitions.

    Hosts with a fio-queue-depth table use only that table; imported hosts use every 4K random point.
    Adds ``in_sweep``: the point enters the fit (every N = iodepth x numjobs once: of several points with
    the same N the one with most runs, then fewest jobs; spec-conditions points are shown, not fitted)."""
    if pts is None:
        pts = point_medians(ds.fio)
    out = []
    for host in ds.host_names:
        hp = pts[(pts["host"] == host) & (pts["bs_bytes"] == 4096)]
        if hp["tables"].str.contains("fio-queue-depth").any():
            hp = hp[hp["tables"].str.contains("fio-queue-depth")]
        for rw, direction in (("randread", "read"), ("randwrite", "write")):
            sel = hp[(hp["rw"] == rw) & (hp["direction"] == direction) & hp["iops"].notna()].copy()
            if sel.empty:
                continue
            sel["in_sweep"] = False
            nonspec = sel[~sel["spec_point"]].sort_values(["outstanding_io", "n", "numjobs"],
                                                          ascending=[True, False, True])
            sel.loc[nonspec.drop_duplicates("outstanding_io").index, "in_sweep"] = True
            out.append(sel)
    if not out:
        return pd.DataFrame(columns=[*pts.columns, "in_sweep"])
    return pd.concat(out, ignore_index=True).sort_values(["host", "rw", "outstanding_io"]).reset_index(drop=True)


def littles_law(qd: pd.DataFrame) -> pd.DataFrame:
    """Little's law for every queue-depth point: N (intended), X (IOPS), R (us), X*R and the residual %.

    residual_pct = 100 (X R - N) / N; a large negative residual means fewer I/Os were really in flight
    than asked for (the engine or the device could not keep the queue full)."""
    rows = []
    for _, r in qd.iterrows():
        n, x, lat = float(r["outstanding_io"]), float(r["iops"]), r["lat_mean_us"]
        ok = lat == lat and lat is not None and n > 0
        rows.append({
            "host": r["host"], "rw": r["rw"], "iodepth": int(r["iodepth"]), "numjobs": int(r["numjobs"]),
            "N_outstanding": n, "X_iops": x, "R_mean_us": float(lat) if ok else None,
            "XR_outstanding": queueing.littles_law_outstanding(x, float(lat)) if ok else None,
            "residual_pct": queueing.littles_law_residual_pct(n, x, float(lat)) if ok else None,
            "spec_point": bool(r["spec_point"]), "n_runs": int(r["n"]),
        })
    return pd.DataFrame(rows)


def knee_fits(qd: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Fit X(N) <= min(N / R_min, X_max) and N* = X_max R_min per host x workload (the sweep points).

    Returns (table, fits) where fits maps (host, rw) -> queueing.KneeFit. Table columns: host, rw, points,
    N_range, R_min_fit_us, X_max_fit_iops, N_star_fit, r2, R_min_meas_us (latency at the smallest N),
    X_max_meas_iops (highest IOPS), N_star_meas, saturated, note."""
    rows, fits = [], {}
    for (host, rw), g in qd[qd["in_sweep"]].groupby(["host", "rw"], sort=True):
        base = {"host": host, "rw": rw, "points": int(len(g)),
                "N_range": f"{int(g['outstanding_io'].min())}-{int(g['outstanding_io'].max())}"}
        try:
            f = queueing.fit_closed_bounds(g["outstanding_io"], g["iops"], g["lat_mean_us"])
        except ValueError as err:
            rows.append({**base, "note": str(err)})
            continue
        fits[(host, rw)] = f
        note = "" if f.saturated else "sweep ends below the knee: X_max is a lower estimate"
        if not f.r2 == f.r2 or f.r2 < 0.5:
            note = "poor fit (R² < 0.5): the points do not follow the two asymptotes; read N* with care"
        rows.append({**base, "R_min_fit_us": f.r_min_us, "X_max_fit_iops": f.x_max_iops, "N_star_fit": f.n_star,
                     "r2": f.r2, "R_min_meas_us": f.r_min_measured_us, "X_max_meas_iops": f.x_max_measured_iops,
                     "N_star_meas": f.n_star_measured, "saturated": f.saturated, "note": note})
    return pd.DataFrame(rows), fits


def memory_curves(mlc: pd.DataFrame) -> pd.DataFrame:
    """Loaded-latency points per curve (host, tool, traffic, access_bytes, inject_delay): medians over
    runs/repetitions. Columns: host, tool, traffic, access_bytes, inject_delay, latency_ns, bandwidth_MBps, n."""
    m = mlc[mlc["ok"] & (mlc["test"] == "loaded_latency") & mlc["latency_ns"].notna()
            & mlc["bandwidth_MBps"].notna()].copy()
    if m.empty:
        return pd.DataFrame(columns=["host", "tool", "traffic", "access_bytes", "inject_delay", "latency_ns",
                                     "bandwidth_MBps", "n"])
    m["traffic"] = m["traffic"].fillna("read-only")
    m["access_bytes"] = m["access_bytes"].fillna(64)
    m["tool"] = m["tool"].fillna("mlc")
    return m.groupby(["host", "tool", "traffic", "access_bytes", "inject_delay"], sort=True).agg(
        latency_ns=("latency_ns", "median"), bandwidth_MBps=("bandwidth_MBps", "median"),
        n=("latency_ns", "size")).reset_index()


def _memory_note(f) -> str:
    """Caveat of a loaded-latency fit: poor fit (latency does not rise with load) or knee not reached."""
    if not f.r2 == f.r2 or f.r2 < 0.5:
        return "poor fit: latency does not rise with bandwidth as the model expects; the knee is not meaningful"
    return "" if f.knee_reached else "curve stays below the knee"


def memory_fits(curves: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """M/M/1-style fit R = R0 + a rho/(1 - rho), rho = bandwidth / peak, of every loaded-latency curve.

    Returns (table, fits); fits maps (host, tool, traffic, access_bytes) -> queueing.LatencyCurveFit.
    Table columns: host, tool, traffic, access_B, points, R0_ns, a_ns, peak_fit_MBps, bw_max_MBps, r2,
    knee_rho, knee_bw_MBps, knee_lat_ns, knee_delay (inject delay of the nearest point), knee_reached, note."""
    rows, fits = [], {}
    for key, g in curves.groupby(["host", "tool", "traffic", "access_bytes"], sort=True):
        host, tool, traffic, acc = key
        base = {"host": host, "tool": tool, "traffic": traffic, "access_B": int(acc), "points": int(len(g))}
        try:
            f = queueing.fit_loaded_latency(g["bandwidth_MBps"], g["latency_ns"], inject_delay=g["inject_delay"])
        except (ValueError, RuntimeError) as err:
            rows.append({**base, "note": str(err).splitlines()[0]})
            continue
        fits[key] = f
        rows.append({**base, "R0_ns": f.r0_ns, "a_ns": f.a_ns, "peak_fit_MBps": f.peak_MBps,
                     "bw_max_MBps": f.bw_max_MBps, "r2": f.r2, "knee_rho": f.knee_rho,
                     "knee_bw_MBps": f.knee_bw_MBps, "knee_lat_ns": f.knee_latency_ns,
                     "knee_delay": f.knee_inject_delay, "knee_reached": f.knee_reached,
                     "note": _memory_note(f)})
    return pd.DataFrame(rows), fits


# ------------------------------------------------------------------------------------ provenance


def provenance(ds: Dataset) -> pd.DataFrame:
    """Per host x table: rows, points, failed points, tool versions, time span, memstor version, data path.

    Columns: host, table, rows, points, failed, tools, measured (UTC) (time span from the meta sidecars).
    The table's path is ``<data>/processed/<host>/<table>``."""
    rows = []
    for h in ds.hosts:
        metas = pd.DataFrame(h.metas) if h.metas else pd.DataFrame()
        for t in h.tables:
            table = t[:-4]
            kind = "fio" if (experiment_kinds().get(table) == "fio" or t == "fio.csv") else "mlc"
            src = ds.fio if kind == "fio" else ds.mlc
            tab = IMPORTED_TABLE if t in IMPORTED else table
            d = src[(src["host"] == h.name) & (src["table"] == tab)]
            if t in IMPORTED:
                d = d if kind == "fio" else d
            if kind == "fio":
                tools = sorted({str(v) for v in d["fio_version"].dropna()})
                npts = d["point"].nunique()
                failed = d.loc[~d["ok"], "point"].nunique()
            else:
                tools = sorted({f"{a} {b}".strip() for a, b in zip(d["tool"].fillna(""), d["tool_version"].fillna(""))})
                npts = d["source"].nunique() if table == "mlc" else len(d)
                failed = int((~d["ok"]).sum())
            m = metas[metas["experiment"] == table] if not metas.empty and "experiment" in metas else pd.DataFrame()
            span = "imported (no meta)"
            if "start_time" in m and not m.empty:
                a = str(m["start_time"].min())[:16].replace("T", " ")
                b = str(m["end_time"].max())[:16].replace("T", " ") if "end_time" in m else ""
                span = f"{a} to {b[11:] if b[:10] == a[:10] else b}"
            rows.append({
                "host": h.name, "table": t, "rows": int(len(d)), "points": int(npts), "failed": int(failed),
                "tools": ", ".join(tools) or "–", "measured (UTC)": span,
            })
    return pd.DataFrame(rows)


def _shell_word(word: str) -> str:
    """A command word quoted for a POSIX shell only when needed ($DATA stays expandable)."""
    import re

    if re.fullmatch(r"[\w@%+=:,./$-]+", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"' if "$DATA" in word else shlex.quote(word)


def _wrap_command(cmd, width: int = 110) -> str:
    """A command list as shell text wrapped at spaces with ' \\' continuations (fits a printed page)."""
    text = " ".join(_shell_word(str(c)) for c in cmd) if isinstance(cmd, list) else str(cmd)
    lines = textwrap.wrap(text, width=width - 2, break_long_words=False, break_on_hyphens=False,
                          subsequent_indent="    ")
    return " \\\n".join(lines)


def _with_data_var(cmd, data_dir: Path):
    """The command with the data root written as $DATA (shorter; the report names the folder)."""
    if not isinstance(cmd, list):
        return cmd
    root = str(Path(data_dir).resolve())
    return [str(c).replace(root, "$DATA") for c in cmd]


def commands(ds: Dataset, width: int = 110) -> list:
    """One example command per host x experiment from the meta sidecars, with what varies between points.

    Returns a list of dicts: host, experiment, points, command (wrapped text), varies (param names), params."""
    out = []
    for h in ds.hosts:
        by_exp: dict = {}
        for m in h.metas:
            by_exp.setdefault(m.get("experiment"), []).append(m)
        for exp in sorted(by_exp):
            ms = sorted(by_exp[exp], key=lambda m: str(m.get("start_time") or ""))
            first = next((m for m in ms if m.get("command")), ms[0])
            params = [m.get("params") or {} for m in ms]
            keys = sorted({k for p in params for k in p})
            varies = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in params}) > 1]
            fixed = {k: params[0].get(k) for k in keys if k not in varies}
            out.append({
                "host": h.name, "experiment": exp, "points": len(ms),
                "command": _wrap_command(_with_data_var(first.get("command"), ds.data_dir)
                                         or "(no command recorded)", width),
                "tool": f"{first.get('tool', '')} {first.get('tool_version', '')}".strip(),
                "varies": varies, "params": fixed,
            })
    return out


# ------------------------------------------------------------------------------------ everything


@dataclass
class Synthesis:
    """Every table of the report, computed once from a data root and the spec sheets."""

    dataset: Dataset
    sheets: list
    points: pd.DataFrame
    headline: pd.DataFrame
    spec: pd.DataFrame
    qd: pd.DataFrame
    little: pd.DataFrame
    knees: pd.DataFrame
    knee_fits: dict
    curves: pd.DataFrame
    mem: pd.DataFrame
    mem_fits: dict


def synthesise(data_dir: Path | str, specs_dir: Path | str) -> Synthesis:
    """Load every host under ``<data_dir>/processed`` and the spec sheets, and compute every table."""
    ds = load_dataset(data_dir)
    sheets = specs.load_specs(specs_dir)
    pts = point_medians(ds.fio)
    qd = qd_points(ds, pts)
    knees, kfits = knee_fits(qd)
    curves = memory_curves(ds.mlc)
    mem, mfits = memory_fits(curves)
    return Synthesis(
        dataset=ds, sheets=sheets, points=pts, headline=headline_long(ds, pts),
        spec=spec_comparison(ds, sheets, pts), qd=qd, little=littles_law(qd), knees=knees, knee_fits=kfits,
        curves=curves, mem=mem, mem_fits=mfits,
    )


__all__ = [
    "Dataset", "HostData", "MemstorError", "NoData", "Synthesis", "commands", "fmt_number", "headline_long",
    "headline_table", "knee_fits", "littles_law", "load_dataset", "measured_conditions", "memory_curves",
    "memory_fits", "point_medians", "provenance", "qd_points", "spec_comparison", "spec_table",
    "synthesise", "systems_table",
]


# ------------------------------------------------------------------------- display (short headers)


def little_display(little: pd.DataFrame) -> pd.DataFrame:
    """Little's-law table with short headers and units, for the report."""
    if little.empty:
        return little
    return pd.DataFrame({
        "host": little["host"], "workload": little["rw"], "QD": little["iodepth"], "jobs": little["numjobs"],
        "N (I/Os)": little["N_outstanding"].astype(int), "X (IOPS)": little["X_iops"],
        "R (µs)": little["R_mean_us"], "X·R (I/Os)": little["XR_outstanding"],
        "residual (%)": little["residual_pct"].map(lambda v: "–" if v is None or v != v else f"{v:+.1f}"),
        "spec point": little["spec_point"].map(lambda b: "yes" if b else ""),
    })


def knee_display(knees: pd.DataFrame) -> pd.DataFrame:
    """Knee table (fitted and measured inputs of N* = X_max R_min) with short headers and units."""
    if knees.empty:
        return knees
    k = knees.copy()
    for col in ("R_min_fit_us", "X_max_fit_iops", "N_star_fit", "r2", "R_min_meas_us", "X_max_meas_iops",
                "N_star_meas"):
        if col not in k.columns:
            k[col] = np.nan
    return pd.DataFrame({
        "host": k["host"], "workload": k["rw"], "points": k["points"], "N range (I/Os)": k["N_range"],
        "R_min fit (µs)": k["R_min_fit_us"], "X_max fit (IOPS)": k["X_max_fit_iops"],
        "N* fit (I/Os)": k["N_star_fit"], "R²": k["r2"].map(lambda v: "–" if v != v else f"{v:.3f}"),
        "R at N_min (µs)": k["R_min_meas_us"], "X max meas. (IOPS)": k["X_max_meas_iops"],
        "N* meas. (I/Os)": k["N_star_meas"],
    })


def memory_display(mem: pd.DataFrame) -> pd.DataFrame:
    """Memory-curve fit table with short headers and units."""
    if mem.empty:
        return mem
    m = mem.copy()
    for col in ("R0_ns", "a_ns", "peak_fit_MBps", "bw_max_MBps", "r2", "knee_rho", "knee_bw_MBps", "knee_lat_ns",
                "knee_delay"):
        if col not in m.columns:
            m[col] = np.nan
    return pd.DataFrame({
        "host": m["host"], "traffic": m["traffic"] + ", " + m["access_B"].astype(str) + " B",
        "points": m["points"], "R0 (ns)": m["R0_ns"], "a (ns)": m["a_ns"], "peak fit (MB/s)": m["peak_fit_MBps"],
        "max meas. (MB/s)": m["bw_max_MBps"], "R²": m["r2"].map(lambda v: "–" if v != v else f"{v:.3f}"),
        "knee ρ": m["knee_rho"].map(lambda v: "–" if v != v else f"{v:.2f}"),
        "knee BW (MB/s)": m["knee_bw_MBps"], "knee R (ns)": m["knee_lat_ns"],
        "nearest delay": m["knee_delay"],
    })


def knee_sentences(knees: pd.DataFrame) -> list:
    """One sentence per host x workload stating N* with its inputs (markdown)."""
    out = []
    for _, k in knees.iterrows():
        if k.get("N_star_fit") is None or k.get("N_star_fit") != k.get("N_star_fit"):
            out.append(f"**{k['host']}, 4K {k['rw']}**: no fit — {k.get('note') or 'too few points'}.")
            continue
        s = (f"**{k['host']}, 4K {k['rw']}**: N* = X_max × R_min = {fmt_number(k['X_max_fit_iops'])} IOPS × "
             f"{fmt_number(k['R_min_fit_us'])} µs = **{k['N_star_fit']:.1f} I/Os in flight** (fit of "
             f"{int(k['points'])} points, N = {k['N_range']}, R² = {k['r2']:.3f}); from the measured inputs "
             f"(latency {fmt_number(k['R_min_meas_us'])} µs at the smallest N, best "
             f"{fmt_number(k['X_max_meas_iops'])} IOPS) N* = {k['N_star_meas']:.1f}.")
        if k.get("note"):
            s += f" Note: {k['note']}."
        out.append(s)
    return out


def memory_sentences(mem: pd.DataFrame) -> list:
    """One sentence per loaded-latency curve: fitted parameters, R² and where the knee lies (markdown)."""
    out = []
    for _, m in mem.iterrows():
        name = f"**{m['host']}, {m['traffic']} {m['access_B']} B ({m['tool']})**"
        if m.get("R0_ns") is None or m.get("R0_ns") != m.get("R0_ns"):
            out.append(f"{name}: no fit — {m.get('note') or 'too few points'}.")
            continue
        if m.get("note", "").startswith("poor fit"):
            out.append(f"{name}: R0 = {m['R0_ns']:.1f} ns, a = {m['a_ns']:.3g} ns, R² = {m['r2']:.3f} — "
                       f"{m['note']}.")
            continue
        where = (f"reached at about {fmt_number(m['knee_bw_MBps'])} MB/s (ρ = {m['knee_rho']:.2f}, nearest "
                 f"inject delay {fmt_number(m['knee_delay'])})" if m["knee_reached"] else
                 f"not reached: it would lie at {fmt_number(m['knee_bw_MBps'])} MB/s (ρ = {m['knee_rho']:.2f}), "
                 f"above the highest bandwidth measured")
        out.append(f"{name}: R0 = {m['R0_ns']:.1f} ns, a = {m['a_ns']:.1f} ns, peak = "
                   f"{fmt_number(m['peak_fit_MBps'])} MB/s, R² = {m['r2']:.3f}; the knee (latency "
                   f"{m['knee_lat_ns']:.0f} ns = 2 R0) is {where}.")
    return out
