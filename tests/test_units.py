"""memstor.core.units: sizes read exactly as fio reads them (checked against the real fio), durations."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from memstor.core.units import format_size, parse_duration_s, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4k", 4096), ("4K", 4096), ("4kb", 4096), ("4KB", 4096), ("1m", 1048576), ("1M", 1048576),
        ("1g", 1024**3), ("512", 512), ("4096b", 4096), ("0x1000", 4096),
        # fio's compatibility mode (kb_base=1024): IEC prefixes are powers of ten
        ("4KiB", 4000), ("4kib", 4000), ("1MiB", 1000000), ("64KiB", 64000),
        # fio's strtoll stops at the dot: "1.5k" is 1 byte for fio
        ("1.5k", 1),
    ],
)
def test_parse_size_default_kb_base(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_parse_size_kb_base_1000_swaps_prefixes() -> None:
    assert parse_size("4k", kb_base=1000) == 4000
    assert parse_size("4KiB", kb_base=1000) == 4096
    assert parse_size("2m", kb_base=1000) == 2000000


@pytest.mark.parametrize("bad", ["", "k", "abc", "100%", "  "])
def test_parse_size_rejects_non_sizes(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_size(bad)


def test_parse_size_rejects_odd_kb_base() -> None:
    with pytest.raises(ValueError, match="kb_base"):
        parse_size("4k", kb_base=1023)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt install fio)")
@pytest.mark.parametrize("text", ["4k", "4KiB", "64KiB", "1m", "2KiB", "4096b"])
@pytest.mark.fio
def test_parse_size_matches_real_fio(text: str) -> None:
    """fio prints the block size it understood in its job line: bs=(R) 4000B-4000B (values chosen so
    that fio's print is exact)."""
    out = subprocess.run(
        ["fio", "--name=x", "--ioengine=null", "--size=1m", f"--bs={text}", "--rw=read",
         "--output-format=normal"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    printed = re.search(r"bs=\(R\) ([\d.]+)(B|KiB)-", out)
    assert printed, out
    value = float(printed.group(1)) * (1024 if printed.group(2) == "KiB" else 1)
    assert parse_size(text) == round(value)


@pytest.mark.parametrize(
    ("n", "text"),
    [(4096, "4k"), (1048576, "1m"), (131072, "128k"), (3 * 1024**3, "3g"), (1000, "1000"), (512, "512"), (0, "0")],
)
def test_format_size(n: int, text: str) -> None:
    assert format_size(n) == text
    assert parse_size(text) == n


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10", 10.0), ("10s", 10.0), ("500ms", 0.5), ("500msec", 0.5), ("1m", 60.0), ("2h", 7200.0),
     ("1d", 86400.0), ("250us", 0.00025), ("1.5", 1.5), (30, 30.0)],
)
def test_parse_duration_s(text, seconds: float) -> None:
    assert parse_duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "ten", "10 parsecs", "5x"])
def test_parse_duration_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="fio time"):
        parse_duration_s(bad)


def test_size_text_gives_an_exact_quarter_its_two_decimals() -> None:
    """S12-loop 9: the kernel's 1,310,720-byte L2 printed '1.2 MiB' beside a level ending at '1 MiB-1.4 MiB'. Two
    decimals where they are exact and one would misstate; one decimal otherwise; whole numbers bare."""
    from memstor.core.units import size_text

    assert size_text(1_310_720) == "1.25 MiB" and size_text(int(2.75 * 2**20)) == "2.75 MiB"
    assert size_text(int(1.5 * 2**30)) == "1.5 GiB" and size_text(4096) == "4 KiB" and size_text(100) == "100 B"
    assert size_text(11_585) == "11.3 KiB" and size_text(int(13.5 * 2**20)) == "13.5 MiB"
    assert size_text(370_771) == "362.1 KiB"  # not exact in two decimals: one
