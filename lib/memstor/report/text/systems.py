"""Report text, methods: the systems under test side by side (from each host's sysinfo.json) and one
example command per host x experiment from the meta sidecars (pure: Dataset in, DataFrame/text out)."""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path

import pandas as pd

from memstor.analysis.dataset import Dataset
from memstor.analysis.load_latency import qd_counts, runs_words, x_max_source_text
from memstor.core.schema import missing as _missing


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


def _shell_word(word: str) -> str:
    """A command word quoted for a POSIX shell only when needed ($DATA stays expandable)."""
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


def _tool_name(meta: dict, generator) -> str:
    """The tool of one point with its version ('ioarrive 0.1', 'fio-3.33'): the table's generator column, else the
    meta's tool; the version from the meta when it is that tool's."""
    tool = str(meta.get("tool") or "")
    gen = str(generator) if isinstance(generator, str) and generator else tool
    version = str(meta.get("tool_version") or "") if gen == tool else ""
    if version.startswith(gen):
        return version
    return f"{gen} {version}".strip() or "the tool"


def commands(ds: Dataset, width: int = 110) -> list:
    """One example command per host x experiment and tool from the meta sidecars, with what varies between points.

    Returns a list of dicts: host, experiment, points, configurations (distinct ``config`` of the table's rows of
    those points), runs (points per configuration: an int, or None where it varies), tools ([(tool with version,
    points)], counted from the table's ``generator`` column, else each point's meta; most points first), tool (the
    first's name), command (the first command of each tool, wrapped, one block per tool), varies (param names),
    params (the fixed ones; an X_max source's 'best of N runs' said as configurations and runs)."""
    out = []
    for h in ds.hosts:
        by_exp: dict = {}
        for m in h.metas:
            by_exp.setdefault(m.get("experiment"), []).append(m)
        table = ds.fio[ds.fio["host"].astype(str) == h.name] if "host" in ds.fio.columns else ds.fio
        for exp in sorted(by_exp):
            ms = sorted(by_exp[exp], key=lambda m: str(m.get("start_time") or ""))
            rows = table[table["table"] == exp] if "table" in table.columns else table.iloc[0:0]
            rows = rows.drop_duplicates("point") if "point" in rows.columns else rows.iloc[0:0]
            gen = dict(zip(rows["point"], rows["generator"])) if "generator" in rows.columns else {}
            conf = dict(zip(rows["point"], rows["config"])) if "config" in rows.columns else {}
            tools: dict[str, list] = {}
            for m in ms:
                tools.setdefault(_tool_name(m, gen.get(m.get("point"))), []).append(m)
            ranked = sorted(tools.items(), key=lambda kv: -len(kv[1]))
            configs = [conf[m["point"]] for m in ms if m.get("point") in conf]
            per = pd.Series(configs).value_counts() if configs else pd.Series(dtype=int)
            params = [m.get("params") or {} for m in ms]
            keys = sorted({k for p in params for k in p})
            varies = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in params}) > 1]
            same = {k: params[0].get(k) for k in keys if k not in varies}
            if isinstance(same.get("x_max_source"), str):
                same["x_max_source"] = x_max_source_text(same["x_max_source"], qd_counts(ds.fio, h.name),
                                                         same.get("rw"))
            blocks = []
            for _, tms in ranked:
                first = next((m for m in tms if m.get("command")), tms[0])
                blocks.append(_wrap_command(_with_data_var(first.get("command"), ds.data_dir)
                                            or "(no command recorded)", width))
            out.append({
                "host": h.name, "experiment": exp, "points": len(ms),
                "configurations": len(per) if len(per) else None,
                "runs": int(per.iloc[0]) if len(per) and per.nunique() == 1 else None,
                "tools": [(name, len(tms)) for name, tms in ranked], "tool": ranked[0][0],
                "command": "\n\n".join(blocks), "varies": varies, "params": same,
            })
    return out


def command_sentence(c: dict) -> str:
    """The provenance line of one :func:`commands` entry (markdown): '**vm / fio-load-latency** — 18 points
    (18 configurations, 1 run each): 16 with ioarrive 0.1, 2 with fio-3.33; varying: ...; fixed: .... The first
    command of each tool (...):'."""
    fixed = ", ".join(f"{k}={v}" for k, v in c["params"].items() if k != "test_file" and not _missing(v))
    counts = (f" ({runs_words(c['configurations'], c['points'])})" if c.get("configurations") else "")
    tools = c.get("tools") or [(c.get("tool") or "the tool", c["points"])]
    said = (f"with {tools[0][0]}" if len(tools) == 1 else
            ": " + ", ".join(f"{k} with {name}" for name, k in tools))
    first = "The first command" + (" of each tool" if len(tools) > 1 else "")
    return (f"**{c['host']} / {c['experiment']}** — {c['points']} points{counts} {said}; varying: "
            f"{', '.join(c['varies']) or 'nothing'}; fixed: {fixed or '–'}. {first} (every point's exact command "
            "is in its meta sidecar under `raw/`):").replace(" :", ":")
