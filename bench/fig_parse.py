"""The ``parse`` figure: ``memstor parse --kind fio`` over thousands of copies of real fio JSON outputs vs a bare
``json.load`` loop over the same files: wall time."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from common import ROOT, Config, Figure, NotMeasured, Target, fmt4, median, paired, require_ok, timed_cpu

from memstor.parse.fio import parse_fio

#: The real public tool outputs the parse figure copies (see its SOURCES.md).
REAL = ROOT / "tests" / "data" / "real"
#: Repositories in REAL whose fio JSON outputs the parse figure copies.
PARSE_SOURCES = ("AIALRA-0__ECSE-4320-Advanced-Computer-Systems", "fiumad__Advanced-Computer-Systems")

#: The baseline of the parse figure: walk DIR like `memstor parse` does and json.load every file.
JSON_LOOP = (
    "import json, os, sys\n"
    "n = 0\n"
    "for top, dirs, files in os.walk(sys.argv[1]):\n"
    "    dirs.sort()\n"
    "    for name in sorted(files):\n"
    "        with open(os.path.join(top, name), encoding='utf-8') as fh:\n"
    "            json.load(fh)\n"
    "        n += 1\n"
    "print(n)\n"
)


def parse_sources(real: Path = REAL) -> list[Path]:
    """The real fio JSON outputs the parse figure copies: *.json of PARSE_SOURCES that json.load reads
    as an object with "jobs" (sorted, for a reproducible mix)."""
    found = []
    for repo in PARSE_SOURCES:
        for p in sorted((real / repo).rglob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                doc = json.loads(p.read_text(encoding="utf-8"))
                if isinstance(doc, dict) and doc.get("jobs"):
                    found.append(p)
    return found


def make_parse_corpus(sources: Sequence[Path], n_files: int, dest: Path) -> int:
    """Copy sources round-robin into dest until it holds n_files files (100 per sub-folder); returns
    the number of fio rows memstor's parser makes of them (the expected row count of the CSV)."""
    rows_per = {}
    for src in sources:
        res = parse_fio(src.read_text(encoding="utf-8"), str(src))
        if res.errors or not res.rows:
            raise NotMeasured(f"{src}: memstor.parse.fio does not read this real file cleanly "
                              f"({(res.errors or ['no rows'])[0]}); fix the parser first")
        rows_per[src] = len(res.rows)
    expected = 0
    for i in range(n_files):
        src = sources[i % len(sources)]
        sub = dest / f"d{i // 100:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, sub / f"{i:05d}-{src.name}")
        expected += rows_per[src]
    return expected


def memstor_command() -> list[str]:
    """argv prefix of the `memstor` command of this interpreter's environment."""
    exe = Path(sys.executable).parent / "memstor"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "memstor.cli"]


#: Runs of each side per repetition of the parse figure; the shortest counts (see fig_startup.best_times).
PARSE_RUNS = 3


def fig_parse(cfg: Config) -> list[Figure]:
    """Parse throughput: `memstor parse --kind fio` / a bare json.load loop, both subprocesses: wall time, the
    shortest of PARSE_RUNS runs of each per repetition (target ≤ 1.5, issue 39's acceptance)."""
    fig = Figure("parse", "parse", "wall time of `memstor parse --kind fio DIR -o out.csv` / a `python -c` loop of "
                 f"bare json.load over the same files (both fresh processes; the shortest of {PARSE_RUNS} runs each "
                 "per repetition)", Target(hi=1.5), "memstor parse", "json.load")
    try:
        sources = parse_sources()
        if not sources:
            raise NotMeasured(f"no real fio JSON files under {REAL} ({', '.join(PARSE_SOURCES)})")
        n_files = cfg.parse_files or (200 if cfg.smoke else 5000)
        corpus = cfg.work / "parse" / "corpus"
        expected_rows = make_parse_corpus(sources, n_files, corpus)
    except NotMeasured as err:
        fig.not_measured = str(err)
        return [fig]
    out_csv = cfg.work / "parse" / "out.csv"
    parse_cmd = memstor_command() + ["parse", "--kind", "fio", str(corpus), "-o", str(out_csv)]
    json_cmd = [cfg.python, "-c", JSON_LOOP, str(corpus)]

    def once(who: str) -> tuple[float, float]:
        """(wall, CPU) seconds of one run of `who` (memstor parse | json.load loop), checked for completeness."""
        if who == "memstor":
            with contextlib.suppress(OSError):
                out_csv.unlink()
            secs, cpu_s, res = timed_cpu(parse_cmd, what="memstor parse")
            require_ok(res, "memstor parse")
            with open(out_csv, encoding="utf-8") as fh:
                rows = sum(1 for _ in fh) - 1
            if rows != expected_rows:
                fig.failure = f"memstor parse wrote {rows} rows, expected {expected_rows}"
            return secs, cpu_s
        secs, cpu_s, res = timed_cpu(json_cmd, what="json.load loop")
        require_ok(res, "the json.load loop")
        if res.stdout.strip() != str(n_files):
            fig.failure = f"the json.load loop read {res.stdout.strip()} files, expected {n_files}"
        return secs, cpu_s

    def best(who: str) -> tuple[float, float]:
        """(shortest wall, mean CPU) seconds of PARSE_RUNS runs of `who`."""
        runs = [once(who) for _ in range(1 if cfg.smoke else PARSE_RUNS)]
        return min(r[0] for r in runs), sum(r[1] for r in runs) / len(runs)

    cpu: list[float] = []
    try:
        once("memstor"), once("json")  # untimed warm-up: page cache, .pyc files
        paired(cfg, fig, ("memstor", lambda: best("memstor")), ("json.load", lambda: best("json")), cpu)
    except NotMeasured as err:
        fig.stopped(str(err))
        return [fig]
    fps = [n_files / s.numerator for s in fig.samples]
    fig.notes.append(f"{n_files} files ({len(sources)} distinct real fio JSON from "
                     f"{' and '.join(p.split('__')[0] for p in PARSE_SOURCES)}), {expected_rows} rows; memstor parse "
                     f"{fmt4(median(fps))} files/s ({fmt4(min(fps))}–{fmt4(max(fps))}), json.load "
                     f"{fmt4(median([n_files / s.denominator for s in fig.samples]))} files/s; CPU-time ratio "
                     f"{fmt4(median(cpu))}")
    return [fig]
