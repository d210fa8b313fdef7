"""The ``latency`` and ``bandwidth`` figures: loadlat's idle latency vs an independent pointer chase
(``bench/chase.c``), and its delay-0 read bandwidth vs likwid-bench."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from common import Config, Figure, NotMeasured, Target, interleaved, last_line, require_ok, timed

from memstor.parse.mlc import parse_mlc


def _tool(cfg: Config, name: str) -> Path:
    """build/bin/<name> of the repository, built on the fly for the chase; NotMeasured when absent."""
    path = cfg.root / "build" / "bin" / name
    if name == "chase" and not path.exists() and (cfg.root / "bench" / "chase.c").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["cc", "-O2", "-o", str(path), str(cfg.root / "bench" / "chase.c")],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise NotMeasured(f"cc -O2 -o build/bin/chase bench/chase.c failed: {last_line(res.stderr)}")
    if not (path.is_file() and os.access(path, os.X_OK)):
        how = "make loadlat" if name == "loadlat" else "cc -O2 -o build/bin/chase bench/chase.c"
        raise NotMeasured(f"{path} not found: build it ({how})")
    return path


def loadlat_values(text: str, field_name: str) -> list[float]:
    """The `latency_ns` or `bandwidth_MBps` values in loadlat's MLC-style output (memstor.parse.mlc)."""
    res = parse_mlc(text, "loadlat")
    return [float(r[field_name]) for r in res.rows if r.get(field_name) is not None]


def chase_ns(text: str) -> float:
    """ns per load from the pointer chase's output (``ns per load: X``; else the last ``X ns``)."""
    m = re.findall(r"ns per load:\s*([0-9]+(?:\.[0-9]+)?)", text)
    if not m:
        m = re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*ns\b", text)
    if not m:
        raise NotMeasured(f"the pointer chase printed no 'ns per load: X' line: {last_line(text)!r}")
    return float(m[-1])


def huge_evidence(loadlat_out: str, chase_out: str) -> str:
    """What each tool says about huge pages: loadlat's AnonHugePages line and chase's huge_KiB=."""
    ll = re.search(r"AnonHugePages in buffers:\s*([^\n]*)", loadlat_out)
    ch = re.search(r"buffer_MiB=(\d+)\s+huge_KiB=(-?\d+)", chase_out)
    parts = [f"loadlat AnonHugePages {ll.group(1).strip()}" if ll else "loadlat: no huge-page line"]
    parts.append(f"chase huge {int(ch.group(2)) / 1024:.0f} of {ch.group(1)} MiB" if ch else "chase: no huge_KiB")
    return ", ".join(parts)


def fig_latency(cfg: Config) -> list[Figure]:
    """loadlat idle latency / the independent pointer chase, 1 GiB with huge pages (target 0.85–1.15)."""
    fig = Figure("latency", "latency", "loadlat --idle_latency ns per load / the independent random pointer "
                 "chase build/bin/chase (bench/chase.c), both over 1 GiB with huge pages (madvise)",
                 Target(0.85, 1.15), "loadlat", "chase")
    size = "256m" if cfg.smoke else "1g"
    try:
        loadlat, chase = _tool(cfg, "loadlat"), _tool(cfg, "chase")
    except NotMeasured as err:
        fig.not_measured = str(err)
        return [fig]
    seconds = 1 if cfg.smoke else 2
    ll_cmd = [str(loadlat), "--idle_latency", f"-b{size}", "-L", f"-t{seconds}"]
    # chase [MiB] [seconds] [nohuge]: huge pages (madvise) by default
    ch_cmd = [str(chase), "256" if cfg.smoke else "1024", str(seconds)]
    outs = {}
    try:
        for rep in range(cfg.reps):
            v = {}
            for who, cmd in interleaved(rep, ("loadlat", ll_cmd), ("chase", ch_cmd)):
                _, res = timed(cmd, timeout=600, what=who)
                require_ok(res, shlex.join(cmd))
                outs[who] = res.stdout
                if who == "loadlat":
                    vals = loadlat_values(res.stdout, "latency_ns")
                    if not vals:
                        raise NotMeasured(f"loadlat printed no idle latency: {last_line(res.stdout)!r}")
                    v[who] = vals[-1]
                else:
                    v[who] = chase_ns(res.stdout)
            fig.add(rep, v["loadlat"], v["chase"], "ns")
            cfg.log(f"  latency rep {rep}: loadlat {v['loadlat']:.1f} ns, chase {v['chase']:.1f} ns")
    except NotMeasured as err:
        fig.stopped(str(err))
    if len(outs) == 2:
        fig.notes.append(huge_evidence(outs["loadlat"], outs["chase"]) + " (last repetition)")
    fig.notes.append(f"buffer {size}; commands: {shlex.join(ll_cmd)} | {shlex.join(ch_cmd)}")
    return [fig]


def likwid_mbps(text: str) -> float:
    """likwid-bench's `MByte/s:` value (decimal MB/s, 10^6 bytes/s)."""
    m = re.findall(r"^MByte/s:\s*([0-9.]+)", text, re.M)
    if not m:
        raise NotMeasured(f"likwid-bench printed no MByte/s line: {last_line(text)!r}")
    return float(m[-1])


def fig_bandwidth(cfg: Config) -> list[Figure]:
    """loadlat delay-0 read bandwidth / likwid-bench load_avx, 1 and 2 threads (target ≥ 0.70 each)."""
    threads = (1, 2)
    figs = [Figure("bandwidth", f"bandwidth-{n}t", f"loadlat --loaded_latency -d0 -T -R with {n} load "
                   f"thread(s) MB/s / likwid-bench -t load_avx -w S0:1GB:{n} MB/s", Target(lo=0.70),
                   "loadlat", "likwid-bench") for n in threads]
    try:
        loadlat = _tool(cfg, "loadlat")
        likwid = shutil.which("likwid-bench")
        if likwid is None:
            raise NotMeasured("likwid-bench not installed (Debian/Ubuntu: sudo apt-get install likwid; "
                              "or scripts/install-system-deps --bench)")
    except NotMeasured as err:
        for f in figs:
            f.not_measured = str(err)
        return figs
    total = "100MB" if cfg.smoke else "1GB"
    total_bytes = 100e6 if cfg.smoke else 1e9
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    for n, fig in zip(threads, figs):
        if n > len(cpus):
            fig.not_measured = f"{n} threads need {n} CPUs; this process may use {len(cpus)}"
            continue
        # the same total footprint as likwid's S0:<total>:<n>, in whole MiB per thread (page multiple)
        mib = max(1, round(total_bytes / n / 2**20))
        ll_cmd = [str(loadlat), "--loaded_latency", "-d0", "-T", "-R", f"-b{mib}m",
                  "-k" + ",".join(str(c) for c in cpus[:n]), "-t1" if cfg.smoke else "-t2"]
        lk_cmd = [likwid, "-t", "load_avx", "-w", f"S0:{total}:{n}"]
        try:
            for rep in range(cfg.reps):
                v = {}
                for who, cmd in interleaved(rep, ("loadlat", ll_cmd), ("likwid", lk_cmd)):
                    _, res = timed(cmd, timeout=600, what=who)
                    if who == "likwid" and res.returncode != 0:
                        raise NotMeasured(f"likwid-bench cannot run in this VM (exit {res.returncode}): "
                                          f"{last_line(res.stderr or res.stdout)}")
                    require_ok(res, shlex.join(cmd))
                    if who == "loadlat":
                        vals = loadlat_values(res.stdout, "bandwidth_MBps")
                        if not vals:
                            raise NotMeasured(f"loadlat printed no bandwidth: {last_line(res.stdout)!r}")
                        v[who] = vals[0]
                    else:
                        v[who] = likwid_mbps(res.stdout)
                fig.add(rep, v["loadlat"], v["likwid"], "MBps")
                cfg.log(f"  bandwidth {n}t rep {rep}: loadlat {v['loadlat']:.0f} MB/s, likwid {v['likwid']:.0f} MB/s")
        except NotMeasured as err:
            fig.stopped(str(err))
        fig.notes.append(f"MB = 10^6 bytes; {shlex.join(ll_cmd)} | {shlex.join(lk_cmd)}")
    return figs
