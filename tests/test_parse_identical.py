"""`memstor parse` writes what it wrote before issue 39's second round of speed-ups, byte for byte: the CSV of every
real fio fixture is pinned (tests/data/golden), and each new fast path is held to the rule it stands in for: the
CSV lines to csv.writer's, the walk's path texts to pathlib's, the one-open read to the stat-then-read refusals,
the layouts remembered per spec option to the options spec_from_options reads."""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
import socket
from pathlib import Path

import pytest

from memstor.cli import main
from memstor.core.schema import FIO_COLUMNS
from memstor.parse import files
from memstor.parse.fio_spec import SPEC_OPTIONS, spec_from_options

DATA = Path(__file__).resolve().parent / "data"
#: `memstor parse --kind fio real` (from tests/data) as written before the speed-ups (tests/data/golden/SOURCES.md).
GOLDEN = DATA / "golden" / "parse-real-fio.csv"


def test_parse_writes_the_pinned_csv_of_every_real_fio_fixture(tmp_path, monkeypatch):
    """The pinned files, named in the pinned order (fixtures added later do not change the check): the same bytes,
    598 lines of JSON, json+, normal text and terse output of fio 2.1.4 to 3.38."""
    pinned = GOLDEN.read_bytes()
    with open(GOLDEN, encoding="utf-8", newline="") as fh:
        sources = list(dict.fromkeys(row["source"] for row in csv.DictReader(fh)))
    assert len(sources) > 400 and pinned.count(b"\n") == 598
    monkeypatch.chdir(DATA)
    out = tmp_path / "fio.csv"
    assert main(["parse", "--kind", "fio", *sources, "-o", str(out)]) == 0
    assert out.read_bytes() == pinned


def _csv_writer_text(rows: list, names: list) -> str:
    """What rows_csv wrote before: csv.writer, ``lineterminator="\\n"``, ``row.get`` of each name."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(names)
    writer.writerows([row.get(name) for name in names] for row in rows)
    return buf.getvalue()


# Cells a row can hold, the ones csv.writer quotes among them (comma, quote, LF; CR, which it leaves alone on
# some Python versions and quotes on others, goes to csv.writer either way).
_CELLS = (None, "", " ", "plain", "job(r_idx=0,w_idx=0)", 'say "hi"', "two\nlines", "cr\rhere", "crlf\r\n", "\x00nul",
          "tab\there", "ünï", "\udcff surrogate", True, False, 0, -1, 1 << 70, 0.1 + 0.2, -0.0, 1e-7, 1e16, 1e22, math.inf,
          -math.inf, math.nan, 123.456)


def test_rows_csv_is_csv_writers_text_byte_for_byte():
    """Every cell kind in every position of a fio row, rows that lack columns or have others, and tables of one
    column (a lone empty cell is written "") and of none."""
    names = list(FIO_COLUMNS)
    base = {name: i for i, name in enumerate(names)}
    rows = [base | {name: cell} for name, cell in zip(itertools.cycle(names), _CELLS * 3)]
    rows += [dict(zip(names, itertools.islice(itertools.cycle(_CELLS), k, k + len(names)))) for k in range(len(_CELLS))]
    rows += [{"source": "only one column"}, {"other": 1}, {}]
    assert files.rows_csv(rows, names) == _csv_writer_text(rows, names)
    for one in ([{"a": None}, {"a": ""}, {"a": "x,y"}, {"a": 1.5}, {}], []):
        assert files.rows_csv(one, ["a"]) == _csv_writer_text(one, ["a"])
    assert files.rows_csv(rows, []) == _csv_writer_text(rows, [])
    assert files.rows_csv([], names) == ",".join(names) + "\n"


def _pathlib_walk(root: str) -> list[str]:
    """The files a walk of ``root`` yielded before, as texts: ``str(Path(top) / name)`` over ``os.walk(Path(root))``."""
    found = []
    for top, dirs, names in os.walk(Path(root)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [str(Path(top) / n) for n in sorted(names) if not n.startswith(".") and not n.endswith(".csv")]
    return found


@pytest.mark.parametrize("root", [".", "./", "tree", "tree/", "./tree", "tree//sub/..", "TMP"])
def test_a_walk_names_each_file_as_pathlib_does(tmp_path, monkeypatch, root):
    """The source column and every error line name a found file by these texts: the current folder's files without
    "./" (Path(".") / "a" is "a"), no doubled or trailing slash, ".." kept."""
    for rel in ("a.json", "tree/b.json", "tree/sub/c.txt", "tree/sub/deep/d.json", "tree/.hidden/e.json", "tree/f.csv"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    monkeypatch.chdir(tmp_path)
    root = str(tmp_path) if root == "TMP" else root
    walked = [path for path, named in files.expand([root])]
    assert walked == _pathlib_walk(root) and len(walked) >= 2
    assert list(files.expand(["./a.json", "tree//b.json"])) == [("a.json", True), ("tree/b.json", True)]


def test_reading_refuses_what_is_no_regular_file_by_its_kind(tmp_path, monkeypatch):
    """One open per file, and the same one-line refusals as a stat before the read: a FIFO (without waiting for a
    writer), a socket (which cannot be opened), a device, a folder, a file over the size limit, a missing file."""
    os.mkfifo(tmp_path / "fifo.json")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.json"))
    (tmp_path / "big.json").write_text("{}" * 10)
    (tmp_path / "broken.json").symlink_to(tmp_path / "nowhere")
    not_regular = "not a regular file (device, FIFO or socket); give tool output files or folders"
    try:
        for name in ("fifo.json", "sock.json", "/dev/null"):
            with pytest.raises(OSError, match=r"^not a regular file \(device, FIFO or socket\)"):
                files.read_text(tmp_path / name)
        with pytest.raises(OSError, match="^a directory; give tool output files or folders"):
            files.read_text(tmp_path)
        monkeypatch.setattr(files, "MAX_FILE_BYTES", 19)
        with pytest.raises(OSError, match="^file is 0 MB, larger than the 0 MB limit"):
            files.read_text(tmp_path / "big.json")
        with pytest.raises(FileNotFoundError):
            files.read_text(tmp_path / "broken.json")
        outcome = files.parse_paths([tmp_path / "sock.json", tmp_path / "broken.json"], "fio")
        assert outcome.errors == [f"{tmp_path / 'sock.json'}: cannot read: {not_regular}",
                                  f"{tmp_path / 'broken.json'}: cannot read: No such file or directory"]
    finally:
        sock.close()


def test_reading_decodes_boms_and_bad_bytes_as_before(tmp_path):
    text = 'fio "jobs" ünï\r\n'
    for name, data, expected in (("u8.txt", text.encode(), text), ("bom8.txt", b"\xef\xbb\xbf" + text.encode(), text),
                                 ("bom16.txt", b"\xff\xfe" + text.encode("utf-16-le"), text),
                                 ("bad.txt", b"a\xff\xfeb", "a\ufffd\ufffdb"), ("empty.txt", b"", "")):
        (tmp_path / name).write_bytes(data)
        assert files.read_text(tmp_path / name) == files.read_text(str(tmp_path / name)) == expected


class _Recording(dict):
    """Job options that note every key asked of them (any look at all of them is noted as '*')."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: set = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)

    def __iter__(self):
        self.asked.add("*")
        return super().__iter__()

    def items(self):
        self.asked.add("*")
        return super().items()

    def keys(self):
        self.asked.add("*")
        return super().keys()

    def values(self):
        self.asked.add("*")
        return super().values()


def test_spec_options_name_every_option_spec_from_options_reads():
    """fio_json remembers a job's layout per the values of SPEC_OPTIONS only: an option that spec_from_options reads
    and SPEC_OPTIONS does not name would let two jobs that differ in it share a layout."""
    values = {"rw": ("randrw", "read:8"), "readwrite": ("rw",), "bs": ("8k,32k", ""), "blocksize": ("4k",),
              "bsrange": ("1k-4k",), "blocksize_range": ("2k-2k",), "bssplit": ("4k/50",), "kb_base": ("1000",),
              "rwmixread": ("70",), "rwmixwrite": ("30",), "iodepth": ("32,",), "numjobs": ("4",),
              "ioengine": ("libaio",), "direct": ("1", ""), "buffered": ("0",), "size": ("1G",), "name": ("j",)}
    asked: set = set()
    for size, variant in itertools.product(range(4), range(2)):
        for present in itertools.combinations(sorted(values), size):
            opts = _Recording({key: values[key][variant % len(values[key])] for key in present})
            for version, defaults in (("fio-3.36", True), ("fio-2.1.4", True), (None, False)):
                spec_from_options(opts, version, defaults)
            asked |= opts.asked
    assert asked <= set(SPEC_OPTIONS) and "*" not in asked
    assert set(SPEC_OPTIONS) <= asked  # every name is one it reads (none kept there for nothing)
