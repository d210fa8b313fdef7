"""The ``steady`` figure: the quick profile's fio-steady-state run from nothing to its verdict vs the seconds fio
measured in it, with the standard profile's estimated duration in the notes."""

from __future__ import annotations

import time

from common import Config, Figure, NotMeasured, Target, median, stop_all

from memstor.analysis import steady_state as ss
from memstor.core.units import parse_size
from memstor.experiments import load_profile, run_experiment


def fig_steady_state(cfg: Config) -> list[Figure]:
    """Time to the steady-state verdict of the quick profile's fio-steady-state run / the time fio measured
    in it (preconditioning + rounds); notes: verdict, rounds and the standard profile's estimate."""
    fig = Figure("steady", "ss-time-to-verdict", "wall time of `memstor run fio-steady-state --profile quick` "
                 "from nothing to its verdict / the seconds fio measured in it (preconditioning passes + rounds "
                 "x runtime_s)", Target(hi=1.5), "wall", "fio measured")
    overrides = {"file_size": "64m", "runtime_s": 0.5, "max_rounds": 6} if cfg.smoke else {}
    params = load_profile("quick", ss.EXPERIMENT, overrides)
    std = load_profile("standard", ss.EXPERIMENT)
    verdicts, per_point, pc_bps = [], [], []
    try:
        for rep in range(cfg.reps):
            t0 = time.perf_counter()
            df = run_experiment(ss.EXPERIMENT, params, data_root=cfg.work / "steady" / f"rep{rep}",
                                host=f"bench-rep{rep}", progress=False)
            wall = time.perf_counter() - t0
            done = df[df["status"] == "done"]
            if done.empty:
                raise NotMeasured("the steady-state run measured no round")
            pc_s, rounds = float(done["precondition_s"].iloc[0]), int(done["round"].max())
            fig.add(rep, wall, pc_s + float(done["runtime_s"].sum()), "s")
            v = ss.verdict_row(f"rep{rep}", done)
            verdicts.append(f"{v['verdict']} ({rounds} rounds, {wall:.0f} s)")
            per_point.append((wall - pc_s) / rounds)  # wall seconds per round, fio start-up included
            if pc_s > 0:
                pc_bps.append(float(done["precondition_bytes"].iloc[0]) / pc_s)
            cfg.log(f"  steady rep {rep}: {verdicts[-1]}")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([fig], err)
    if verdicts:
        overhead = median(per_point) - float(params["runtime_s"])  # s per round beyond its runtime
        span = parse_size(str(std["file_size"]))
        pc = std["precondition_passes"] * span / median(pc_bps) if pc_bps else float("nan")
        lo = pc + ss.WINDOW_ROUNDS * (std["runtime_s"] + overhead)
        hi = pc + std["max_rounds"] * (std["runtime_s"] + overhead)
        fig.notes.append("verdicts: " + "; ".join(verdicts))
        fig.notes.append(f"standard profile estimate: {lo / 60:.1f}–{hi / 60:.1f} min (preconditioning "
                         f"{std['precondition_passes']} x {std['file_size']} at the measured "
                         f"{median(pc_bps) / 1e6:.0f} MB/s, then 5–{std['max_rounds']} rounds of "
                         f"{std['runtime_s']} s + {overhead:.2f} s measured overhead)" if pc_bps else
                         "standard profile estimate: preconditioning speed not measured")
    return [fig]
