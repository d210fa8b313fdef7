"""The figures of the fio-queue-depth experiment: ``qd`` (its best 4K randread IOPS vs a hand-written fio grid),
``precision`` (the sweep with ``precision_pct`` vs at its fixed runtime), ``auto-grid`` (``iodepth: auto`` vs
the listed depths) and ``honesty`` (the one-run batch-means interval vs the between-run interval)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from common import Config, Figure, NotMeasured, Target, require_ok, stop_all, timed

from memstor.analysis.summary import summary_table
from memstor.core.errors import first_line
from memstor.experiments import fio_queue_depth as queue_depth
from memstor.experiments import load_profile, run_experiment


def hand_grid(smoke: bool) -> list[tuple[int, int]]:
    """(numjobs, iodepth) of the hand-tuned fio search."""
    if smoke:
        return [(1, 32), (2, 32)]
    return [(nj, qd) for nj in (1, 2, 4) for qd in (16, 32, 64, 128, 256)]


def hand_fio_command(filename: str, size: str, engine: str, numjobs: int, iodepth: int, runtime_s: float,
                     ramp_s: float, output: Path) -> list[str]:
    """A fio command line written by hand (no memstor code): 4K random reads, O_DIRECT, group reporting."""
    return ["fio", "--name=hand", f"--filename={filename}", f"--size={size}", "--rw=randread", "--bs=4k",
            f"--ioengine={engine}", "--direct=1", f"--numjobs={numjobs}", f"--iodepth={iodepth}",
            "--time_based", f"--runtime={int(runtime_s * 1000)}ms", f"--ramp_time={int(ramp_s * 1000)}ms",
            "--norandommap", "--randrepeat=0", "--group_reporting", "--allow_file_create=0",
            "--output-format=json", f"--output={output}"]


def fio_read_iops(path: Path) -> float:
    """Read IOPS summed over the jobs of a fio JSON output (one group-reported job here)."""
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    jobs = doc.get("jobs") or []
    if not jobs or any(j.get("error") for j in jobs):
        raise NotMeasured(f"{path.name}: fio reported an error or no job")
    return float(sum(j["read"]["iops"] for j in jobs))


def fig_qd(cfg: Config) -> list[Figure]:
    """Best 4K randread IOPS of memstor's queue-depth sweep / best of a hand-tuned fio grid (≥ 0.95)."""
    fig = Figure("qd", "qd-best-iops", "best 4K randread IOPS of the fio-queue-depth experiment "
                 "(memstor.experiments.fio_queue_depth) / best of a hand-written fio grid numjobs x iodepth on the "
                 "same test file", Target(lo=0.95), "memstor", "hand-tuned fio")
    runtime, ramp = (0.5, 0.2) if cfg.smoke else (2.0, 1.0)
    overrides = {"rw": ["randread"], "runtime_s": runtime, "ramp_s": ramp, "repetitions": 1}
    if cfg.smoke:
        overrides.update(iodepth=[1, 32], file_size="64m", spec_numjobs=2)
    params = load_profile("standard", "fio-queue-depth", overrides)
    data = cfg.work / "qd" / "data"
    grid = hand_grid(cfg.smoke)
    best_hand: dict = {}
    try:
        for rep in range(cfg.reps):
            v = {}
            for who in (("memstor", "hand") if rep % 2 == 0 or "file" not in best_hand else ("hand", "memstor")):
                if who == "memstor":
                    df = queue_depth.run_queue_depth(params, data_root=data, target_dir=None, host=f"bench-rep{rep}",
                                                 progress=False)
                    ok = df[(df["rw"] == "randread") & (df["direction"] == "read") & (df["bs_bytes"] == 4096)
                            & df["iops"].notna()]
                    if "status" in ok.columns:
                        ok = ok[ok["status"] != "failed"]
                    if ok.empty:
                        raise NotMeasured("the queue-depth sweep produced no 4K randread IOPS")
                    best = ok.loc[ok["iops"].idxmax()]
                    v[who] = float(best["iops"])
                    manifest = json.loads((data / "raw" / f"bench-rep{rep}" / "fio-queue-depth" /
                                           "manifest.json").read_text())
                    info = manifest.get("sysinfo") or {}
                    best_hand.update(file=info["test_file"], engine=info.get("ioengine", "io_uring"),
                                     size=str(params["file_size"]))
                    best_hand.setdefault("memstor_points", []).append(
                        f"qd{int(best['iodepth'])}xnj{int(best['numjobs'])}")
                else:
                    if not Path(best_hand["file"]).is_file():
                        raise NotMeasured(f"memstor's test file {best_hand['file']} vanished after the sweep")
                    iops = {}
                    for nj, qd in grid:
                        out = cfg.work / "qd" / f"hand-r{rep}-nj{nj}-qd{qd}.json"
                        cmd = hand_fio_command(best_hand["file"], best_hand["size"], best_hand["engine"], nj, qd,
                                               runtime, ramp, out)
                        _, res = timed(cmd, timeout=runtime + ramp + 120, what="fio")
                        require_ok(res, "hand-tuned fio")
                        iops[(nj, qd)] = fio_read_iops(out)
                    arg = max(iops, key=iops.get)
                    v[who] = iops[arg]
                    best_hand.setdefault("hand_points", []).append(f"qd{arg[1]}xnj{arg[0]}")
            fig.add(rep, v["memstor"], v["hand"], "IOPS")
            cfg.log(f"  qd rep {rep}: memstor best {v['memstor']:.0f} IOPS, hand-tuned best {v['hand']:.0f} IOPS")
    except NotMeasured as err:
        fig.stopped(str(err))
    except Exception as err:  # noqa: BLE001 - a MemstorError from the experiment: one line in the report
        msg = f"{type(err).__name__}: {first_line(err)}"
        if fig.samples:
            fig.failure = msg
        else:
            fig.not_measured = msg
    if best_hand:
        fig.notes.append(f"{runtime:g} s + {ramp:g} s ramp per point, file {best_hand.get('size')}, "
                         f"engine {best_hand.get('engine')}; best memstor point per rep "
                         f"{','.join(best_hand.get('memstor_points', []))}; best hand point per rep "
                         f"{','.join(best_hand.get('hand_points', []))}; grid numjobs x iodepth "
                         f"{sorted({g[0] for g in grid})} x {sorted({g[1] for g in grid})}")
    return [fig]


def _hw_pct(df, metric: str):
    """Half-widths of the 95 % intervals of `metric` in % of its value, one per row with an interval."""
    lo, hi, v = df[f"{metric}_ci_low"], df[f"{metric}_ci_high"], df[metric]
    return ((hi - lo) / 2 / v * 100).dropna()


def _qd_sweep(cfg: Config, overrides: dict, data: Path, host: str):
    """(wall s, table) of one fio-queue-depth sweep from nothing (fresh data folder) with the standard
    profile and `overrides`."""
    params = load_profile("standard", "fio-queue-depth", overrides)
    t0 = time.perf_counter()
    df = run_experiment("fio-queue-depth", params, data_root=data, host=host, progress=False)
    return time.perf_counter() - t0, df[df["status"] == "done"]


def fig_precision(cfg: Config) -> list[Figure]:
    """Time to precision (issue 18, acceptance 4): wall time of the standard fio-queue-depth sweep with
    precision_pct 2 / the same sweep at its fixed runtime (target ≤ 0.5), plus the achieved half-widths of
    both (notes: median and worst over points, IOPS and mean latency)."""
    fig = Figure("precision", "precision-time", "wall time of the standard fio-queue-depth sweep with "
                 "precision_pct=2 (each point stops when its IOPS and mean latency are within ±2 %, 95 %) / the same "
                 "sweep at the fixed runtime_s", Target(hi=0.5), "precision_pct 2", "fixed runtime")
    small = {"file_size": "64m", "iodepth": [1, 16], "rw": ["randread"], "spec_numjobs": 2, "runtime_s": 3,
             "ramp_s": 0.5} if cfg.smoke else {}
    aims = {"precision_pct": 2, "max_runtime_s": 6} if cfg.smoke else {"precision_pct": 2}
    try:
        for rep in range(cfg.reps):
            walls, hws = {}, {}
            order = ("fixed", "precise") if rep % 2 == 0 else ("precise", "fixed")
            for who in order:
                data = cfg.work / "precision" / f"{who}-rep{rep}"
                wall, df = _qd_sweep(cfg, dict(small, **(aims if who == "precise" else {})), data, f"bench-{who}")
                if df.empty:
                    raise NotMeasured(f"the {who} sweep measured no point")
                walls[who] = wall
                hws[who] = (_hw_pct(df, "iops"), _hw_pct(df, "lat_mean_us"),
                            int(df["precision_reached"].map(lambda x: str(x) == "True").sum()), len(df))
                shutil.rmtree(data / "scratch", ignore_errors=True)
            fig.add(rep, walls["precise"], walls["fixed"], "s")
            for who in order:
                iops, lat, reached, n = hws[who]
                fig.notes.append(
                    f"rep {rep} {who}: {walls[who]:.0f} s, half-width % IOPS median {iops.median():.2f} worst "
                    f"{iops.max():.2f}, mean latency median {lat.median():.2f} worst {lat.max():.2f} "
                    f"({len(iops)} of {n} points with an interval" + (f", {reached} reached ±2 %)" if who == "precise"
                                                                     else ")"))
            cfg.log(f"  precision rep {rep}: {walls['precise']:.0f} s with precision_pct 2, {walls['fixed']:.0f} s "
                    "fixed")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([fig], err)
    return [fig]


def fig_auto_grid(cfg: Config) -> list[Figure]:
    """The adaptive queue-depth grid (issue 18, acceptance 5): the standard fio-queue-depth sweep of 4K randread
    with ``iodepth: auto`` vs the same with the standard listed depths (1..1024), no spec-conditions point:
    wall time (target < 1) and best IOPS (target ≥ 0.97); fio's measured seconds and the depths in the notes."""
    time_fig = Figure("auto-grid", "auto-grid-time", "wall time of the standard 4K randread queue-depth sweep with "
                      "iodepth: auto / with the listed depths 1..1024", Target(hi=0.99), "auto", "listed")
    best_fig = Figure("auto-grid", "auto-grid-best", "best IOPS of the same two sweeps: auto / listed",
                      Target(lo=0.97), "auto", "listed")
    base = {"rw": ["randread"], "spec_iodepth": 0}
    if cfg.smoke:
        base.update(file_size="64m", runtime_s=0.5, ramp_s=0, max_iodepth=8)
    try:
        for rep in range(cfg.reps):
            walls, tables = {}, {}
            order = ("listed", "auto") if rep % 2 == 0 else ("auto", "listed")
            for who in order:
                data = cfg.work / "auto-grid" / f"{who}-rep{rep}"
                over = dict(base, iodepth="auto") if who == "auto" else dict(base)
                if cfg.smoke and who == "listed":
                    over["iodepth"] = [1, 2, 4, 8]
                wall, df = _qd_sweep(cfg, over, data, f"bench-{who}")
                if df.empty:
                    raise NotMeasured(f"the {who} sweep measured no point")
                walls[who], tables[who] = wall, df
                shutil.rmtree(data / "scratch", ignore_errors=True)
            time_fig.add(rep, walls["auto"], walls["listed"], "s")
            best = {who: float(df["iops"].max()) for who, df in tables.items()}
            best_fig.add(rep, best["auto"], best["listed"], "IOPS")
            for who in order:
                df = tables[who]
                top = df.loc[df["iops"].idxmax()]
                time_fig.notes.append(
                    f"rep {rep} {who}: {walls[who]:.0f} s wall, {df['runtime_s'].sum():.0f} s measured by fio, "
                    f"{len(df)} points (depths {','.join(str(int(d)) for d in sorted(df['iodepth']))}), best "
                    f"{top['iops']:,.0f} IOPS at depth {int(top['iodepth'])}")
            cfg.log(f"  auto-grid rep {rep}: auto {walls['auto']:.0f} s, {best['auto']:,.0f} IOPS; listed "
                    f"{walls['listed']:.0f} s, {best['listed']:,.0f} IOPS")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([time_fig, best_fig], err)
    return [time_fig, best_fig]


def fig_honesty(cfg: Config) -> list[Figure]:
    """Honesty of the one-run interval (issue 18, acceptance 3): one 4K QD1 randread point run 5 times at
    10 s; the mean within-run (batch-means) half-width of IOPS / the between-run t-interval's half-width
    (target 0.5–2: the one-run interval neither hides nor inflates the run-to-run spread)."""
    figs = {m: Figure("honesty", f"honesty-{m}", f"mean within-run 95 % half-width of {m} (batch means, one 10 s "
                      f"run each) / between-run 95 % half-width (t-interval over the 5 runs), 4K QD1 randread",
                      Target(lo=0.5, hi=2.0), "within-run", "between-run") for m in ("iops", "lat_mean_us")}
    overrides = {"rw": ["randread"], "iodepth": [1], "spec_iodepth": 0, "repetitions": 5, "file_size": "1g"}
    if cfg.smoke:
        overrides.update(runtime_s=3, ramp_s=0.5, file_size="64m", repetitions=3)
    try:
        for rep in range(cfg.reps):
            data = cfg.work / "honesty" / f"rep{rep}"
            _, df = _qd_sweep(cfg, overrides, data, "bench-honesty")
            summ = summary_table(df, data)
            row = summ[summ["direction"] == "read"].iloc[0]
            for m, f in figs.items():
                within = _hw_pct(df, m).mean()
                between = (row[f"{m}_ci_high"] - row[f"{m}_ci_low"]) / 2 / row[m] * 100
                f.add(rep, within, between, "% of the mean")
                f.notes.append(f"rep {rep}: {int(row['n'])} runs, mean {m} {row[m]:.4g}, within-run half-widths "
                               + ", ".join(f"{x:.2f}" for x in _hw_pct(df, m)) + f" %, between-run {between:.2f} %")
            shutil.rmtree(data / "scratch", ignore_errors=True)
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line each
        stop_all(figs.values(), err)
    return list(figs.values())
