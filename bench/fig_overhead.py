"""The ``overhead`` figure: a sweep of fio points through memstor (``run_sweep`` + ``FioRunner``) vs the same fio
command lines run by bash: wall time."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from common import Config, Figure, Target, require_ok, timed

from memstor.core.errors import MemstorError
from memstor.measure import fio, sweep
from memstor.measure.target import prepare_test_file


def make_test_file(size_bytes: int, data_root: Path):
    """A test file of size_bytes for fio (memstor.measure.target's own, filled: reads hit the device)."""
    return prepare_test_file(size_bytes, Path(data_root))


def _overhead_jobs(smoke: bool) -> list[tuple[str, dict]]:
    """The sweep's points: (name, FioJob kwargs). 8 x 1 s (rw x bs x iodepth), or 2 x 0.5 s in smoke."""
    if smoke:
        grid = [("randread", "4k", 1), ("randwrite", "4k", 8)]
        runtime = 0.5
    else:
        grid = [(rw, bs, qd) for rw in ("randread", "randwrite") for bs in ("4k", "64k") for qd in (1, 16)]
        runtime = 1.0
    return [(f"{rw}-bs{bs}-qd{qd}", dict(rw=rw, bs=bs, iodepth=qd, runtime_s=runtime, ramp_s=0))
            for rw, bs, qd in grid]


def direct_script(commands: Sequence[Sequence[str]], out_dir: Path) -> str:
    """A bash script running the fio command lines one after the other, each --output= redirected into
    out_dir (same file name as memstor's raw output, without the temp suffix)."""
    lines = ["set -e"]
    for cmd in commands:
        argv = []
        for a in cmd:
            if a.startswith("--output="):
                name = Path(a.split("=", 1)[1]).name.split(".tmp")[0]
                a = f"--output={out_dir / name}"
            argv.append(a)
        lines.append(shlex.join(argv))
    return "\n".join(lines) + "\n"


def fig_overhead(cfg: Config) -> list[Figure]:
    """Harness overhead: wall time of a memstor sweep / the same fio commands in bash (target ≤ 1.10)."""
    fig = Figure("overhead", "overhead", "wall time of a sweep of 8 fio points x 1 s through memstor "
                 "(run_sweep + FioRunner, fresh data folder, no progress bar) / the same 8 fio command lines "
                 "(from the points' .meta.json) run by bash", Target(hi=1.10), "memstor", "bash")
    try:
        fio.fio_binary()
    except MemstorError as err:  # no fio: one line with the install command
        fig.not_measured = str(err)
        return [fig]
    work = cfg.work / "overhead"
    specs = _overhead_jobs(cfg.smoke)
    size = "64m" if cfg.smoke else "256m"
    tf = make_test_file(64 << 20 if cfg.smoke else 256 << 20, work / "data")
    jobs = {name: fio.FioJob(name=name, size=size, filename=str(tf.path), **kw) for name, kw in specs}
    points = [sweep.Point(name, {"bench": "overhead", **kw}, est_s=kw["runtime_s"]) for name, kw in specs]
    runner = fio.FioRunner(jobs, tf)
    # Untimed warm-up: probes O_DIRECT and the engine once (FioRunner caches the choice) and warms the
    # fio binary and the file's metadata.
    warm = sweep.run_sweep("bench-warmup", points[:1], runner, work / "warmup", "bench", progress=False)
    if warm[0].status != "done":
        fig.not_measured = f"fio warm-up point failed: {warm[0].error}"
        return [fig]
    commands: list[list[str]] = []
    for rep in range(cfg.reps):
        order = ("memstor", "bash") if rep % 2 == 0 or not commands else ("bash", "memstor")
        t = {}
        for who in order:
            if who == "memstor":
                data = work / f"rep{rep}"
                t0 = time.perf_counter()
                results = sweep.run_sweep("bench-overhead", points, runner, data, "bench", progress=False)
                t[who] = time.perf_counter() - t0
                bad = [r for r in results if r.status != "done"]
                if bad:
                    fig.failure = f"memstor point {bad[0].point.name}: {bad[0].status} {bad[0].error or ''}".strip()
                    return [fig]
                if not commands:
                    commands = [json.loads(r.meta.read_text())["command"] for r in results]
            else:
                direct = work / f"direct{rep}"
                direct.mkdir(parents=True, exist_ok=True)
                script = work / f"direct{rep}.sh"
                script.write_text(direct_script(commands, direct))
                secs, res = timed(["bash", str(script)], what="the bash loop of fio commands")
                require_ok(res, "the bash loop of fio commands")
                t[who] = secs
                missing = [p.name for p in points if not fio.json_complete(direct / f"{p.name}.json")]
                if missing:
                    fig.failure = f"direct fio run of {missing[0]} wrote no complete JSON"
                    return [fig]
        fig.add(rep, t["memstor"], t["bash"], "s")
        cfg.log(f"  overhead rep {rep}: memstor {t['memstor']:.2f} s, bash {t['bash']:.2f} s")
    meta0 = json.loads((work / "rep0" / "raw" / "bench" / "bench-overhead" /
                        f"{points[0].name}.meta.json").read_text())
    fig.notes.append(f"{len(points)} points x {specs[0][1]['runtime_s']:g} s, ioengine {meta0.get('ioengine')}, "
                     f"test file {size}")
    return [fig]
