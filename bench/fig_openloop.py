"""The ``openloop`` figures: achieved vs offered IOPS of fio-load-latency's open-loop points at 30, 60 and 90 % of
X_max."""

from __future__ import annotations

from common import Config, Figure, NotMeasured, Target, stop_all

from memstor.experiments import fio_load_latency as fll
from memstor.experiments import load_profile, run_experiment


def fig_openloop(cfg: Config) -> list[Figure]:
    """Achieved / offered IOPS of fio-load-latency's open-loop points at 30, 60 and 90 % of X_max (4K
    random read; target 0.95–1.05: the rate split neutralises fio's Poisson overshoot)."""
    utils = (30, 60, 90)
    figs = {u: Figure("openloop", f"openloop-u{u}", f"achieved / offered IOPS of a fio-load-latency point at {u} % "
                      "of X_max (4K random read, Poisson arrivals split over jobs)", Target(lo=0.95, hi=1.05),
                      "achieved", "offered") for u in utils}
    runtime = 1.0 if cfg.smoke else 3.0
    overrides = {"rw": ["randread"], "utilisation_pct": list(utils), "runtime_s": runtime, "ramp_s": 0.5,
                 "file_size": "64m" if cfg.smoke else "256m", "repetitions": 1}
    params = load_profile("quick", fll.EXPERIMENT, overrides)
    notes: list[str] = []
    try:
        for rep in range(cfg.reps):
            df = run_experiment(fll.EXPERIMENT, params, data_root=cfg.work / "openloop" / f"rep{rep}",
                                host=f"bench-rep{rep}", progress=False)
            rates = df[(df["phase"] == "rate") & (df["status"] == "done")]
            for u in utils:
                r = rates[rates["utilisation_pct"] == u]
                if r.empty:
                    raise NotMeasured(f"no successful point at {u} % of X_max")
                r = r.iloc[0]
                figs[u].add(rep, float(r["achieved_iops"]), float(r["offered_iops"]), "IOPS")
                notes.append(f"rep {rep} u{u}: {int(r['numjobs'])} jobs x {int(r['rate_per_job_iops'])} IOPS, "
                             f"open loop {r['open_loop']}, overloaded {r['overloaded']}")
            cfg.log(f"  openloop rep {rep}: X_max {float(rates['x_max_iops'].iloc[0]):.0f} IOPS "
                    f"({rates['x_max_source'].iloc[0]})")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line each
        stop_all(figs.values(), err)
    for u, f in figs.items():
        f.notes += [n for n in notes if f" u{u}:" in n]
    return list(figs.values())
