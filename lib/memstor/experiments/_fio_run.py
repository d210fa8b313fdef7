"""The sweep run every fio family shares: test file, engine, sweep, tidy rows, processed table.

Three entry points (called by `memstor.experiments.run_experiment`, i.e. by `memstor run` and the
notebooks) share one shape::

    fn(params, *, data_root, target_dir, host, progress, session=None) -> pd.DataFrame

Each validates its profile section (:mod:`memstor.experiments._fio_params`), prepares the test file and
chooses the I/O engine once (:mod:`memstor.experiments._fio_target`), runs or resumes its sweep
(`memstor.measure.sweep.run_sweep`, one fio run per point and repetition) and writes the tidy table
`<data>/processed/<host>/<experiment>.csv` (:mod:`memstor.experiments._fio_rows`).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from memstor.core.errors import MemstorError
from memstor.core.files import atomic_write
from memstor.core.fiohist import BINS_SUFFIX
from memstor.experiments._fio_params import FioCommon
from memstor.experiments._fio_points import fio_job, make_points
from memstor.experiments._fio_rows import result_bins, result_rows, to_frame
from memstor.experiments._fio_target import HeldTarget, Target, on_target, remove_when_full
from memstor.measure.fio import FioRunner
from memstor.measure.sweep import KEPT, SweepSession, processed_path, raw_dir, run_sweep


def family_run(experiment: str, configs_fn: Callable, validate: Callable) -> Callable[..., pd.DataFrame]:
    """The ``run`` of a fio family whose points are ``configs_fn(validate(params), engine)`` (fio-block-size,
    fio-rw-ratio): validate the profile section, then :func:`run_family`."""

    def run(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
            session: SweepSession | None = None) -> pd.DataFrame:
        return run_family(experiment, configs_fn, validate(params), data_root=data_root, target_dir=target_dir,
                          host=host, progress=progress, session=session)

    run.__doc__ = f"Run or resume {experiment}; write and return its tidy table (COLUMNS)."
    return run


def run_family(experiment: str, configs_fn, validated, *, data_root: Path, target_dir: Path | None, host: str,
               progress: bool, held: HeldTarget | None = None, session: SweepSession | None = None) -> pd.DataFrame:
    """Shared body of the fio families' ``run``: test file, engine, sweep, parse, CSV. ``configs_fn(validated,
    engine)`` lists the point parameters (:func:`point_params`); ``validated.common`` is a FioCommon.

    When the last sweep's manifest names this test file and every point of the plan is measured, the run
    only reads them: no test file is prepared and no fio process starts (re-running a notebook in the lab
    re-analyses). ``held``: a :class:`HeldTarget` shared by the calls of one run (see :func:`on_target`);
    ``session``: the run's SweepSession (memstor.measure.sweep; default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    c: FioCommon = validated.common
    data_root = Path(data_root)

    def body(t: Target) -> tuple[Target, list, list]:
        points = make_points([dict(cfg, medium=t.medium) for cfg in configs_fn(validated, t.engine)],
                             c.repetitions, str(t.tf.path))
        jobs = {p.name: fio_job(p, str(t.tf.path)) for p in points}
        runner = held.runner(jobs) if held is not None else FioRunner(jobs)
        results = run_sweep(experiment, points, runner, data_root, host,
                            sysinfo={"ioengine_requested": c.ioengine, **t.info}, progress=progress, session=session)
        remove_when_full(results, t.tf)
        return t, points, results

    t, points, results = on_target(experiment, c, data_root, target_dir, host, body, held, session=session)
    check_refused(experiment, results)
    df = to_frame(result_rows(results, host, t.note, data_root))
    out = write_table(df, data_root, host, experiment)
    write_bins(results, data_root, host, experiment)
    report_failures(experiment, df, len(points), out, data_root, host)
    return df


def check_refused(experiment: str, results: list) -> None:
    """MemstorError when every point was refused because another medium's data holds its name (then the
    processed table of that data is left as it is)."""
    refused = [r for r in results if r.status == "failed" and KEPT in (r.error or "")]
    if refused and len(refused) == len(results):
        raise MemstorError(f"{experiment}: {refused[0].error} (all {len(results)} points)")


def write_table(df: pd.DataFrame, data_root: Path, host: str, name: str) -> Path:
    """Write `df` atomically to ``<data>/processed/<host>/<name>.csv``; the path."""
    out = processed_path(data_root, host, name)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    atomic_write(out, buf.getvalue())
    return out


def write_bins(results: list, data_root: Path, host: str, experiment: str) -> Path:
    """Write the json+ histograms of `results` to ``<data>/processed/<host>/<experiment>-bins.csv`` (the
    processed bins table the analysis reads instead of the raw files); the path."""
    return write_table(result_bins(results, data_root), data_root, host, experiment + BINS_SUFFIX)


def report_failures(experiment: str, df: pd.DataFrame, n_points: int, out: Path, data_root: Path,
                    host: str) -> None:
    """MemstorError when every point failed; a one-line warning on stderr when some did."""
    failed = sorted(set(df.loc[df["status"] == "failed", "point"]))
    if failed and len(failed) == n_points:
        first = df.loc[df["status"] == "failed", "error"].iloc[0]
        raise MemstorError(f"{experiment}: all {n_points} points failed (first: {first}); "
                           f"see {raw_dir(data_root, host, experiment)} and rerun to retry")
    if failed:
        print(f"{experiment}: {len(failed)} of {n_points} points failed (status failed in {out}); "
              f"rerun the same command to retry them", file=sys.stderr)


def load(data_root: Path | str, host: str, experiment: str) -> pd.DataFrame:
    """The processed table of an experiment, read back from `<data>/processed/<host>/<experiment>.csv`."""
    path = processed_path(Path(data_root), host, experiment)
    if not path.is_file():
        raise MemstorError(f"{path}: no processed table; run `memstor run {experiment}` first")
    return pd.read_csv(path)
