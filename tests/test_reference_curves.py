"""The shipped Mess reference curves: files, licence, units, and the closest-platform ranking."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.reference_curves import (
    CLOSEST_COLUMNS,
    REFERENCE_COLUMNS,
    closest_platforms,
    load_mess_curves,
    reference_caption,
)
from memstor.core.errors import MemstorError
from memstor.core.resources import resource_dir

MESS = Path(__file__).resolve().parents[1] / "data" / "reference" / "mess"


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return load_mess_curves()


def test_files_exist_and_parse(reference: pd.DataFrame) -> None:
    for name in ("curves.csv", "platforms.csv", "SOURCES.md", "LICENSE-Mess.txt"):
        assert (MESS / name).is_file(), name
    assert list(reference.columns) == list(REFERENCE_COLUMNS)
    assert len(reference) > 1000
    assert sum(f.stat().st_size for f in MESS.iterdir()) < 1_000_000


def test_resource_dir_finds_the_reference_folder() -> None:
    folder = resource_dir("reference")
    assert (folder / "mess" / "curves.csv").is_file()
    assert (folder / "mess").resolve() == MESS.resolve()


def test_at_least_three_platforms_each_with_licence_and_source(reference: pd.DataFrame) -> None:
    platforms = pd.read_csv(MESS / "platforms.csv", dtype=str, keep_default_na=False)
    assert platforms["platform"].is_unique
    assert len(platforms) >= 3
    assert set(platforms["platform"]) == set(reference["platform"])
    for column in ("licence", "source_repo", "source_commit", "source_path", "cpu", "memory"):
        assert (platforms[column].str.strip() != "").all(), column
    assert set(platforms["licence"]) == {"BSD-3-Clause"}
    assert platforms["source_commit"].str.fullmatch(r"[0-9a-f]{40}").all()


def test_units_and_ranges(reference: pd.DataFrame) -> None:
    assert reference["read_share_pct"].between(0, 100).all()
    assert (reference["bandwidth_MBps"] > 0).all()
    assert (reference["latency_ns"] > 0).all()
    # MB/s, not GB/s: every platform peaks between 10 GB/s and 1 TB/s; latencies in ns, not cycles
    peaks = reference.groupby("platform")["bandwidth_MBps"].max()
    assert peaks.between(10_000, 1_000_000).all(), peaks
    unloaded = reference.groupby("platform")["latency_ns"].min()
    assert unloaded.between(40, 250).all(), unloaded


def test_every_platform_has_its_read_only_curve(reference: pd.DataFrame) -> None:
    for platform, curve in reference.groupby("platform"):
        top = curve[curve["read_share_pct"] == curve["read_share_pct"].max()]
        assert curve["read_share_pct"].max() == 100, platform
        assert len(top) >= 10, platform


def test_licence_and_sources_text(reference: pd.DataFrame) -> None:
    licence = (MESS / "LICENSE-Mess.txt").read_text()
    assert "Copyright (c)" in licence and "Barcelona Supercomputing Center" in licence
    assert "Redistribution and use in source and binary forms" in licence
    sources = (MESS / "SOURCES.md").read_text()
    for platform in reference["platform"].unique():
        assert platform in sources, platform
    for needle in ("Esmaili-Dokht", "MICRO", "BSD-3-Clause", "read share", "MB/s"):
        assert needle in sources, needle


@pytest.mark.parametrize("with_share", [True, False])
def test_a_platform_is_closest_to_itself(reference: pd.DataFrame, with_share: bool) -> None:
    platforms = list(reference["platform"].unique())
    for platform in platforms:
        own = reference[(reference["platform"] == platform) & (reference["read_share_pct"] == 100)]
        measured = own[["bandwidth_MBps", "latency_ns"] + (["read_share_pct"] if with_share else [])]
        ranked = closest_platforms(measured, reference, n=3)
        assert list(ranked.columns) == list(CLOSEST_COLUMNS)
        assert len(ranked) == min(3, len(platforms))
        assert ranked["platform"].iloc[0] == platform
        assert ranked["distance"].iloc[0] == pytest.approx(0.0, abs=1e-12)
        assert ranked["distance"].is_monotonic_increasing


def test_a_slice_of_a_platform_that_reaches_a_third_of_its_peak_is_still_closest_to_it(
        reference: pd.DataFrame) -> None:
    """A 16-vCPU slice of a many-channel server: its load threads reach a fraction of the socket's peak. The
    comparison is made where its curve is, so the platform it is a slice of stays the nearest (a reviewer saw a
    DDR5 Sapphire Rapids slice matched to a DDR4 Skylake by peak bandwidth)."""
    for platform in reference["platform"].unique():
        own = reference[(reference["platform"] == platform) & (reference["read_share_pct"] == 100)]
        part = own[own["bandwidth_MBps"] <= own["bandwidth_MBps"].max() / 3][["bandwidth_MBps", "latency_ns"]]
        if len(part) < 2:
            continue
        ranked = closest_platforms(part, reference, n=3)
        assert ranked["platform"].iloc[0] == platform, (platform, ranked)
        assert ranked["distance"].iloc[0] == pytest.approx(0.0, abs=1e-9)


def test_a_platform_that_cannot_reach_the_measured_bandwidth_is_as_far_as_it_falls_short(
        reference: pd.DataFrame) -> None:
    platform = reference["platform"].iloc[0]
    own = reference[(reference["platform"] == platform) & (reference["read_share_pct"] == 100)]
    beyond = own[["bandwidth_MBps", "latency_ns"]].copy()
    beyond.loc[beyond["bandwidth_MBps"].idxmax(), "bandwidth_MBps"] *= 2.0        # twice its own peak
    ranked = closest_platforms(beyond, reference, n=100).set_index("platform")
    assert ranked.loc[platform, "distance"] == pytest.approx(math.log(2.0), rel=1e-9)


def test_closest_uses_only_read_only_points_when_shares_are_given(reference: pd.DataFrame) -> None:
    measured = pd.DataFrame({"bandwidth_MBps": [1000.0, 50_000.0], "latency_ns": [90.0, 150.0],
                             "read_share_pct": [50, 50]})
    assert closest_platforms(measured, reference).empty
    ranked = closest_platforms(measured.drop(columns="read_share_pct"), reference, n=100)
    assert len(ranked) == reference["platform"].nunique()
    assert ranked["measured_idle_latency_ns"].eq(90.0).all()
    assert ranked["measured_peak_MBps"].eq(50_000.0).all()


def test_empty_measured_gives_empty_table(reference: pd.DataFrame) -> None:
    empty = pd.DataFrame(columns=["bandwidth_MBps", "latency_ns"])
    ranked = closest_platforms(empty, reference)
    assert ranked.empty
    assert list(ranked.columns) == list(CLOSEST_COLUMNS)


def _copy_mess(tmp_path: Path) -> Path:
    folder = tmp_path / "mess"
    folder.mkdir(parents=True)
    for name in ("curves.csv", "platforms.csv"):
        shutil.copy(MESS / name, folder / name)
    return folder


def test_malformed_curves_name_the_file(tmp_path: Path) -> None:
    folder = _copy_mess(tmp_path)
    (folder / "curves.csv").write_text("platform,read_share_pct,bandwidth_MBps,latency_ns\n"
                                       "amd-zen2-epyc-7742,100,fast,116\n")
    with pytest.raises(MemstorError, match="curves.csv"):
        load_mess_curves(folder)
    (folder / "curves.csv").write_text("platform,bandwidth\nx,1\n")
    with pytest.raises(MemstorError, match="curves.csv.*missing column"):
        load_mess_curves(folder)
    (folder / "curves.csv").write_text('platform,read_share_pct\n"unterminated,1\n')
    with pytest.raises(MemstorError, match="curves.csv"):
        load_mess_curves(folder)


def test_missing_or_inconsistent_platforms_name_the_file(tmp_path: Path) -> None:
    folder = _copy_mess(tmp_path)
    (folder / "platforms.csv").unlink()
    with pytest.raises(MemstorError, match="platforms.csv"):
        load_mess_curves(folder)
    shutil.copy(MESS / "platforms.csv", folder / "platforms.csv")
    platforms = pd.read_csv(folder / "platforms.csv", dtype=str)
    platforms.iloc[1:].to_csv(folder / "platforms.csv", index=False)
    with pytest.raises(MemstorError, match="platforms.csv.*no metadata"):
        load_mess_curves(folder)
    assert len(load_mess_curves(_copy_mess(tmp_path / "again"))) > 0


def test_caption_names_source_and_licence() -> None:
    caption = reference_caption(["intel-skylake-6146", "amd-zen2-epyc-7742", "intel-skylake-6146"])
    assert caption.startswith("Published curves: Mess (Esmaili-Dokht et al., MICRO 2024), BSD-3-Clause;")
    assert caption.count("intel-skylake-6146") == 1 and "amd-zen2-epyc-7742" in caption
    assert "\n" not in caption
