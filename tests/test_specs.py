"""Spec sheets: the real D7-P5600 YAML, a second sheet, bad files, and the comparison row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memstor.analysis import specs
from memstor.analysis.specs import Conditions, SpecError

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT / "data" / "specs"
P5600 = SPEC_DIR / "intel-d7-p5600-1.6tb.yaml"


def test_p5600_sheet_carries_every_value_with_source_confidence_and_conditions():
    sheet = specs.load_spec(P5600)
    by_id = {v.id: v for v in sheet.values}
    assert sheet.device == "Intel SSD D7-P5600 1.6 TB"
    assert "was NOT available" in sheet.availability_note
    assert "per-model specification PDF" in sheet.availability_note
    expected = {
        "randwrite_4k_course": ("iops", "randwrite", 130_000),
        "randread_4k_1.6tb": ("iops", "randread", 400_000),
        "randwrite_4k_1.6tb": ("iops", "randwrite", 118_000),
        "seqread_series": ("bw_MBps", "read", 7_000),
        "seqwrite_series": ("bw_MBps", "write", 4_300),
        "randread_4k_series": ("iops", "randread", 1_000_000),
        "randwrite_4k_series": ("iops", "randwrite", 260_000),
    }
    assert set(by_id) == set(expected)
    for vid, (metric, rw, value) in expected.items():
        v = by_id[vid]
        assert (v.metric, v.rw, v.value) == (metric, rw, value)
        assert v.source and v.confidence
    assert [v.id for v in sheet.values if v.headline] == ["randwrite_4k_course"]
    rnd = by_id["randwrite_4k_course"].conditions
    assert (rnd.iodepth, rnd.numjobs, rnd.outstanding, rnd.bs_bytes) == (32, 4, 128, 4096)
    assert (rnd.span, rnd.state, rnd.target, rnd.mb) == ("full_device", "steady_state", "raw_device", "decimal")
    seq = by_id["seqread_series"].conditions
    assert (seq.bs_bytes, seq.outstanding) == (131072, 128)
    assert "UNVERIFIED" in seq.note
    facts = sheet.device_facts
    assert facts["interface"] == "PCIe 4.0 x4" and facts["protocol"] == "NVMe 1.3c"
    assert "96-layer" in facts["nand"] and "3 drive writes per day" in facts["endurance"]
    assert "15 mm" in facts["form_factor"]


def test_a_second_sheet_is_one_more_yaml(tmp_path):
    shutil.copy(P5600, tmp_path / "a-p5600.yaml")
    (tmp_path / "b-other.yml").write_text(
        "device: Other SSD 2 TB\n"
        "availability_note: datasheet read on the vendor site\n"
        "values:\n"
        "  - id: rr\n    metric: iops\n    rw: randread\n    value: 500000\n"
        "    iodepth: 64\n    numjobs: 4\n    bs_bytes: 4096\n    span: full_device\n"
        "    source: vendor datasheet\n    confidence: high\n",
        encoding="utf-8",
    )
    sheets = specs.load_specs(tmp_path)
    assert [s.device for s in sheets] == ["Intel SSD D7-P5600 1.6 TB", "Other SSD 2 TB"]
    other = sheets[1].values[0]
    assert other.conditions.outstanding == 256 and other.unit == "IOPS"
    table = specs.spec_values_table(sheets)
    assert len(table) == 8 and set(table["device"]) == {"Intel SSD D7-P5600 1.6 TB", "Other SSD 2 TB"}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("device: X\nvalues:\n  - id: a\n    metric: iops\n    rw: randread\n    value: 5\n    confidence: c\n",
         "value 'a': missing 'source'"),
        ("device: X\nvalues:\n  - id: a\n    metric: latency\n    rw: randread\n    value: 5\n"
         "    source: s\n    confidence: c\n", "parameter metric='latency' is invalid: choose one of iops, bw_MBps"),
        ("device: X\nvalues:\n  - id: a\n    metric: iops\n    rw: randread\n    value: -5\n"
         "    source: s\n    confidence: c\n", "parameter value=-5 is invalid: use a number > 0"),
        ("device: X\nvalues:\n  - id: a\n    metric: iops\n    rw: randread\n    value: 5\n    conditions: nope\n"
         "    source: s\n    confidence: c\n", "conditions 'nope' not defined"),
        ("device: X\nvalues: [\n", "not valid YAML"),
        ("values: []\n", "missing 'device'"),
    ],
)
def test_bad_sheet_gives_one_line_naming_file_and_field(tmp_path, body, needle):
    bad = tmp_path / "bad.yaml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(SpecError) as exc:
        specs.load_specs(tmp_path)
    msg = str(exc.value)
    assert needle in msg and str(bad) in msg and "\n" not in msg


def test_missing_spec_folder_is_a_usage_error(tmp_path):
    with pytest.raises(SpecError, match="spec folder .* not found"):
        specs.load_specs(tmp_path / "nope")


def test_compare_row_ratio_conditions_and_flag():
    sv = {v.id: v for v in specs.load_spec(P5600).values}["randwrite_4k_course"]
    measured = Conditions(iodepth=32, numjobs=4, bs_bytes=4096, span="file", span_bytes=256 * 2**20,
                          state="fresh", target="filesystem_file", mb="decimal")
    row = specs.compare(sv, 65_000.0, measured, device="D7", host="vm", selection="spec-conditions point")
    assert row["ratio"] == pytest.approx(0.5)
    assert row["flag"] == "differs: span, state, target"
    assert row["n_differ"] == 3
    assert row["measured_conditions"] == ("QD32x4=128, 4 KiB, 256 MiB file span, fresh, file on a filesystem, "
                                          "decimal MB")
    assert row["spec_conditions"] == "QD32x4=128, 4 KiB, full device, steady state, raw device, decimal MB"
    unknown = Conditions(iodepth=32, numjobs=1, bs_bytes=4096)
    row = specs.compare(sv, 130_000.0, unknown)
    assert row["flag"] == "differs: outstanding, span?, state?, target?"
    same = Conditions(iodepth=32, numjobs=4, bs_bytes=4096, span="full_device", state="steady_state",
                      target="raw_device")
    assert specs.compare(sv, 1.0, same)["flag"] == "matched"
    region = Conditions(iodepth=32, numjobs=4, bs_bytes=4096, span="region", span_bytes=256 * 2**20, state="fresh",
                        target="raw_device")  # S11-loop 14: a raw device's --size=256m, once 'span ?'
    row = specs.compare(sv, 65_000.0, region)
    assert row["flag"] == "differs: span, state" and "256 MiB of the device, fresh, raw device" in row["measured_conditions"]
    assert specs.state_text(region) == "fresh (256 MiB of the device)"
    none = specs.compare(sv, None, None)
    assert none["flag"] == "not measured" and none["ratio"] is None
