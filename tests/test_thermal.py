"""Drive temperature and throttling during long runs (issue 29, part 3): the readings parsed from real
recorded tool outputs (tests/data/smart/, SOURCES.md names each one; values asserted here were read by eye
from the files), the thermal verdict on constructed cliffs with temperature series built from those
readings, and the sampler: its "not available" path on this machine for real, and its writing and stopping
with an injected reader (no tool is started by those)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.thermal import (
    CRITICAL_MARGIN_C,
    THERMAL_SERIES_COLUMNS,
    VERDICT_COLUMNS,
    thermal_series,
    thermal_verdict,
)
from memstor.core.errors import ParseError
from memstor.measure import thermal
from memstor.measure.thermal import ThermalSampler, probe
from memstor.parse import smart
from memstor.parse.smart import (
    THERMAL_FIELDS,
    parse_reading,
    parse_thermal_log,
    thresholds_from_id_ctrl,
    with_thresholds,
)

DATA = Path(__file__).resolve().parent / "data"
SMART = DATA / "smart"
DOCBOT_TEXT = SMART / "noahbailey__docbot/docs/general/hddtemp.nvme-smart-log.txt"
AUTOVAL = SMART / "opencomputeproject__ocp-diag-autoval-ssd/src/autoval_ssd/unittest/mock/util_outputs"
AUTOVAL_LOG, AUTOVAL_ID_CTRL = AUTOVAL / "nvme_smartlog.json", AUTOVAL / "id_ctrl.json"
SCRUTINY = SMART / "AnalogJ__scrutiny/webapp/backend/pkg/models/testdata"
INTEL_660P = SCRUTINY / "smart-nvme.json"
EVO_970 = SCRUTINY / "smart-nvme-failed.json"
EVO_860_SATA = SCRUTINY / "smart-ata-full.json"
SAT_A_ONLY = SCRUTINY / "smart-sat.json"
GEN4_SYSROOT = DATA / "drive/sysroot/nvme-gen4x4"  # recorded by hand (tests/data/drive/SOURCES.md)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# -------------------------------------------------------------------------------- real readings


def test_nvme_cli_text_docbot():
    r = parse_reading(read(DOCBOT_TEXT), "hddtemp.nvme-smart-log.txt")
    assert (r["source"], r["protocol"]) == ("nvme-cli text", "NVMe")
    assert r["temperature_c"] == 34 and r["temperature_sensors_c"] == [34, 30]
    assert (r["warning_temp_time_min"], r["critical_comp_time_min"]) == (0, 0)
    assert (r["thm_temp1_trans_count"], r["thm_temp2_trans_count"]) == (0, 0)
    assert (r["thm_temp1_total_time_s"], r["thm_temp2_total_time_s"]) == (0, 0)
    assert r["data_units_written"] == 135654  # printed "135,654"
    assert r["data_written_bytes"] == 135654 * 512_000 == 69_454_848_000
    assert (r["critical_warning"], r["temperature_flag"]) == (0, False)
    assert r["warning_temp_c"] is None and r["critical_temp_c"] is None  # smart-log holds no thresholds
    assert set(THERMAL_FIELDS) <= set(r)


def test_nvme_cli_json_autoval_with_id_ctrl_thresholds():
    r = parse_reading(read(AUTOVAL_LOG))
    assert (r["source"], r["protocol"]) == ("nvme-cli", "NVMe")
    assert r["temperature_c"] == 306 - 273 == 33  # "temperature" : 306 (kelvin)
    assert r["temperature_sensors_c"] == [33]  # "temperature_sensor_1" : 306
    assert r["data_units_written"] == 47217872 and r["data_written_bytes"] == 47217872 * 512_000
    assert (r["warning_temp_time_min"], r["critical_comp_time_min"]) == (0, 0)
    assert [r[k] for k in ("thm_temp1_trans_count", "thm_temp2_trans_count", "thm_temp1_total_time_s",
                           "thm_temp2_total_time_s")] == [0, 0, 0, 0]
    assert r["critical_warning"] == 0  # spelled "critical_warrning" in the recording
    limits = thresholds_from_id_ctrl(read(AUTOVAL_ID_CTRL))
    assert limits == {"warning_temp_c": 353 - 273, "critical_temp_c": 365 - 273} == {"warning_temp_c": 80,
                                                                                     "critical_temp_c": 92}
    both = with_thresholds(r, limits)
    assert (both["warning_temp_c"], both["critical_temp_c"], both["temperature_c"]) == (80, 92, 33)


def test_smartctl_nvme_intel_660p():
    r = parse_reading(read(INTEL_660P))
    assert (r["source"], r["protocol"], r["temperature_c"]) == ("smartctl", "NVMe", 36)
    assert r["data_units_written"] == 7773431 and r["data_written_bytes"] == 7773431 * 512_000
    assert (r["warning_temp_time_min"], r["critical_comp_time_min"], r["critical_warning"]) == (0, 0, 0)
    # smartctl's JSON never carries the thermal-management counters, and 7.1 prints no thresholds
    assert all(r[k] is None for k in ("thm_temp1_trans_count", "thm_temp2_trans_count", "thm_temp1_total_time_s",
                                      "thm_temp2_total_time_s", "warning_temp_c", "critical_temp_c"))
    assert r["temperature_sensors_c"] is None


def test_smartctl_nvme_970_evo_sensors():
    r = parse_reading(read(EVO_970))
    assert r["temperature_c"] == 35 and r["temperature_sensors_c"] == [35, 39]  # already °C in smartctl's JSON
    assert r["data_units_written"] == 65602088 and r["temperature_flag"] is False


def test_smartctl_sata_860_evo_sct_limits():
    r = parse_reading(read(EVO_860_SATA))
    assert (r["protocol"], r["temperature_c"]) == ("ATA", 36)
    assert (r["warning_temp_c"], r["critical_temp_c"]) == (70, 70)  # SCT op_limit_max / limit_max
    assert r["data_written_bytes"] == 64777770148 * 512  # Total_LBAs_Written x 512-byte sectors
    assert r["data_units_written"] is None and r["critical_warning"] is None and r["temperature_flag"] is None
    assert r["warning_temp_time_min"] is None and r["thm_temp1_trans_count"] is None


def test_smartctl_sata_attributes_only():
    r = parse_reading(read(SAT_A_ONLY))  # smartctl -jA: attributes and the current temperature only
    assert (r["protocol"], r["temperature_c"]) == ("ATA", 29)
    assert all(r[k] is None for k in THERMAL_FIELDS if k != "temperature_c")


# ------------------------------------------------------------------------------- unit conversions


@pytest.mark.parametrize(("printed", "celsius"), [
    ("34 C", 34), ("44 C (317 Kelvin)", 44), ("40 °C (313 K)", 40), ("34 °C (307 K, 93 °F)", 34),
    ("32°C (305 Kelvin)", 32), ("309 Kelvin", 36), ("309 K", 36), ("309", 36), ("36 Celsius", 36),
])
def test_text_temperature_units(printed, celsius):
    # the forms nvme-cli 1.x-2.x and smartctl print (seen in public outputs); one line of text each
    r = parse_reading(f"critical_warning : 0\ntemperature : {printed}\n")
    assert r["temperature_c"] == celsius


def test_text_counters_and_thresholds_in_other_layouts():
    # constructed: nvme-cli 2.x labels with a locale's thousands dots, smartctl's text labels and thresholds
    text = ("critical_warning : 0x02\ntemperature : 71 °C (344 K)\nData Units Written : 118.217.927 (60.5 TB)\n"
            "Warning  Comp. Temp. Threshold:     70 Celsius\nCritical Comp. Temp. Threshold:     85 Celsius\n"
            "Warning  Comp. Temperature Time:    12\nThermal Temp. 1 Transition Count:   3\n"
            "Thermal Temp. 1 Total Time:         584\nTemperature Sensor 2:               75 Celsius\n")
    r = parse_reading(text)
    assert (r["temperature_c"], r["warning_temp_c"], r["critical_temp_c"]) == (71, 70, 85)
    assert r["data_units_written"] == 118217927 and r["data_written_bytes"] == 118217927 * 512_000
    assert (r["warning_temp_time_min"], r["thm_temp1_trans_count"], r["thm_temp1_total_time_s"]) == (12, 3, 584)
    assert r["temperature_sensors_c"] == [75] and r["thm_temp2_trans_count"] is None
    assert (r["critical_warning"], r["temperature_flag"]) == (2, True)  # bit 1: temperature


def test_kelvin_thresholds_zero_means_not_reported():
    assert thresholds_from_id_ctrl('{"wctemp": 0, "cctemp": 358}') == {"warning_temp_c": None, "critical_temp_c": 85}
    assert thresholds_from_id_ctrl("wctemp    : 348\ncctemp    : 353\n") == {"warning_temp_c": 75, "critical_temp_c": 80}


# -------------------------------------------------------------------------------- garbled input


@pytest.mark.parametrize("text", [read(AUTOVAL_LOG)[:200], read(DOCBOT_TEXT).splitlines()[0], "", "[1, 2]"])
def test_garbled_reading_is_one_line_naming_the_source(text):
    with pytest.raises(ParseError) as err:
        parse_reading(text, "data/raw/host/thermal.jsonl line 7")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("data/raw/host/thermal.jsonl line 7: ")
    assert "rerun" in msg


def test_id_ctrl_is_not_a_reading():
    with pytest.raises(ParseError, match="id-ctrl"):
        parse_reading(read(AUTOVAL_ID_CTRL), "id_ctrl.json")


def test_damaged_sampler_file(tmp_path):
    good = json.dumps({"kind": "sample", "t_s": 0.0, "ok": True, "raw": read(DOCBOT_TEXT)})
    log = parse_thermal_log(f'{{"kind": "header", "available": true}}\n{good}\n{{"kind": "sam', "t.jsonl")
    assert [s["temperature_c"] for s in log["samples"]] == [34] and "truncated" in log["notes"][0]
    with pytest.raises(ParseError, match=r"^t\.jsonl line 2: not JSON") as err:
        parse_thermal_log(f'{{"kind": "header", "available": true}}\nnot json\n{good}\n', "t.jsonl")
    assert "\n" not in str(err.value)


# ----------------------------------------------------------------------------------- the verdict


def cliffs(*times: float, before: float = 2000.0, after: float = 700.0) -> pd.DataFrame:
    """A cliffs table as analysis.cliffs.find_cliffs returns it (columns only; constructed drops)."""
    n = len(times)
    return pd.DataFrame({"t_s": list(times), "gb_written": [t * 1.5 for t in times],
                         "level_before": [before] * n, "level_before_lo": [before * 0.98] * n,
                         "level_before_hi": [before * 1.02] * n, "level_after": [after] * n,
                         "level_after_lo": [after * 0.98] * n, "level_after_hi": [after * 1.02] * n,
                         "ratio": [after / before] * n, "kind": ["cliff"] * n, "unit": ["MBps"] * n})


def series_from(reading: dict, temps: dict[float, float], **changes: dict[float, int]) -> pd.DataFrame:
    """A temperature series built from a real reading: its fields at every sample, the temperature (and any
    counter named in ``changes``) replaced at the given times."""
    samples = []
    for t, temp in sorted(temps.items()):
        s = {**reading, "t_s": t, "ok": True, "temperature_c": temp}
        for field, values in changes.items():
            s[field] = values[t]
        samples.append(s)
    return thermal_series(samples)


AUTOVAL_READING = with_thresholds(parse_reading(read(AUTOVAL_LOG)), thresholds_from_id_ctrl(read(AUTOVAL_ID_CTRL)))


def test_heating_to_the_warning_temperature_is_thermal():
    # the autoval drive starts at its recorded 33 °C and heats 1 °C every 6 s to its WCTEMP of 80 °C
    temps = {float(t): 33.0 + min(t / 6, 48) for t in range(0, 361, 5)}
    th = series_from(AUTOVAL_READING, temps)
    assert list(th.columns) == list(THERMAL_SERIES_COLUMNS) and th.attrs["available"] is True
    first_hot = min(t for t, c in temps.items() if c >= 80)  # 285 s: 33 + 285/6 = 80.5 °C
    v = thermal_verdict(cliffs(first_hot + 4.0, 60.0), th)
    assert list(v["kind"]) == ["thermal", "cliff"] and list(v["cliff_kind"]) == ["cliff", "cliff"]
    assert list(v["thermal_verdict"]) == ["thermal", "not thermal"]
    assert v["thermal_evidence"][0] == "composite 80.5 °C ≥ warning 80 °C at t=285 s"
    assert v["thermal_evidence"][1].startswith("max composite 44.7 °C < warning 80 °C within ±10 s of t=60 s")  # 33 + 70/6
    assert set(VERDICT_COLUMNS) <= set(v.columns) and v["thermal_available"].all()


def test_cool_drive_stays_a_cliff():
    th = series_from(AUTOVAL_READING, {float(t): 33.0 for t in range(0, 600, 5)})  # its recorded 33 °C throughout
    v = thermal_verdict(cliffs(312.0), th)
    assert v["kind"][0] == "cliff" and v["thermal_verdict"][0] == "not thermal"
    assert v["thermal_evidence"][0] == ("max composite 33 °C < warning 80 °C within ±10 s of t=312 s; "
                                        "TMT1 transitions +0; TMT2 transitions +0; warning-temperature time +0 min; "
                                        "critical-temperature time +0 min")


def test_throttle_counter_increments_are_thermal():
    # the docbot drive (no thresholds known) at its recorded 34 °C; TMT1 goes 0 -> 3 at 310 s
    reading = parse_reading(read(DOCBOT_TEXT))
    times = [float(t) for t in range(0, 600, 5)]
    th = series_from(reading, dict.fromkeys(times, 34.0),
                     thm_temp1_trans_count={t: 0 if t < 310 else 3 for t in times})
    assert th["tmt1_transitions_delta"].max() == 3 and th["tmt1_transitions_delta"].iloc[0] == 0
    v = thermal_verdict(cliffs(312.0, 100.0), th)
    assert list(v["kind"]) == ["thermal", "cliff"]
    assert v["thermal_evidence"][0] == "TMT1 transitions +3"
    assert v["thermal_verdict"][1] == "not thermal"  # counters known and flat, no threshold: not thermal


def test_warning_time_increase_and_offset():
    times = [float(t) for t in range(0, 120, 5)]
    th = series_from(AUTOVAL_READING, dict.fromkeys(times, 60.0),
                     warning_temp_time_min={t: 0 if t < 50 else 1 for t in times})
    # the sampler started 30 s after the cliffs' clock: sample t_s 50 is cliff time 80
    assert thermal_verdict(cliffs(80.0), th, offset_s=30.0)["thermal_evidence"][0] == "warning-temperature time +1 min"
    assert thermal_verdict(cliffs(80.0), th)["thermal_verdict"][0] == "not thermal"


def test_only_critical_known_uses_the_stated_margin():
    reading = {**AUTOVAL_READING, "warning_temp_c": None}  # CCTEMP 92 °C only: the level is 92 - 5 = 87 °C
    th = series_from(reading, {0.0: 80.0, 5.0: 86.0, 10.0: 88.0, 15.0: 88.0})
    v = thermal_verdict(cliffs(12.0), th)
    assert CRITICAL_MARGIN_C == 5.0 and v["kind"][0] == "thermal"
    assert v["thermal_evidence"][0].startswith("composite 88 °C ≥ critical 92 °C − 5 °C margin 87 °C at t=10 s")


def test_without_thermal_data_kinds_stay():
    v = thermal_verdict(cliffs(312.0), None, reason="virtual disk vda (virtio disk)")
    assert v["kind"][0] == "cliff" and not v["thermal_available"][0]
    assert v["thermal_verdict"][0] == "not available (virtual disk vda (virtio disk))"
    far = series_from(AUTOVAL_READING, {0.0: 90.0, 5.0: 90.0})
    v = thermal_verdict(cliffs(312.0), far)
    assert v["kind"][0] == "cliff" and v["thermal_verdict"][0] == "not available (no thermal sample within ±10 s of t=312 s)"
    rise = cliffs(3.0, before=500.0, after=900.0)
    assert thermal_verdict(rise, far)["thermal_verdict"][0] == "not a drop"


# --------------------------------------------------------------------------------- probe and sampler


def test_probe_reasons_on_a_recorded_nvme_tree():
    # no tool is started: missing tools and a non-root user are decided before any trial reading
    cmd, why = probe("/dev/nvme0n1", raw=True, root=GEN4_SYSROOT, which=lambda tool: None)
    assert cmd is None and why.startswith("nvme not installed (install the nvme-cli package")
    assert "smartctl not installed" in why
    cmd, why = probe("/dev/sda", raw=True, root=GEN4_SYSROOT, which=lambda tool: f"/usr/sbin/{tool}", euid=1000)
    assert cmd is None and why == "not root: reading the SMART/health log of SCSI/SATA disk sda needs root (run memstor as root)"
    assert thermal.reading_command("nvme0n1", "nvme", GEN4_SYSROOT) == ["nvme", "smart-log", "/dev/nvme0", "-o", "json"]
    assert thermal.thresholds_command(["smartctl", "-j", "-A", "/dev/sda"]) == ["smartctl", "-j", "-x", "/dev/sda"]


VDA = Path("/sys/class/block/vda")


@pytest.mark.skipif(not VDA.exists(), reason="this test reads the machine's virtio disk vda")
def test_sampler_not_available_on_this_vm_disk(tmp_path):
    """For real: this VM's disk is virtio vda (nvme and smartctl may well be installed: a virtual disk has no
    drive to ask, so no tool is started)."""
    out = tmp_path / "thermal.jsonl"
    with ThermalSampler("/dev/vda", out, interval_s=0.05) as sampler:
        time.sleep(0.05)
    assert sampler.available is False and sampler.error is None
    expected = "virtual disk vda (virtio disk): the host's drive and its temperature are not visible here"
    assert sampler.reason == expected
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["available"] is False and json.loads(lines[0])["reason"] == expected
    log = parse_thermal_log(out.read_text(), str(out))
    v = thermal_verdict(cliffs(312.0), thermal_series(log))
    assert v["thermal_verdict"][0] == f"not available ({expected})" and v["kind"][0] == "cliff"


@pytest.mark.fio  # finding the disk under a file may run blkid (the filesystem's UUID)
@pytest.mark.skipif(not VDA.exists(), reason="this test reads the machine's virtio disk vda")
def test_probe_a_real_file_under_tmp(tmp_path):
    target = tmp_path / "memstor-testfile"
    target.write_bytes(b"\0" * 4096)
    cmd, why = probe(target)
    if os.stat(target).st_dev != os.stat("/").st_dev:
        pytest.skip(f"{tmp_path} is not on the root filesystem here ({why})")
    assert cmd is None and why.startswith("virtual disk vda (virtio disk)")


def fake_reader(texts: list[str]):
    """A reader that returns the given outputs in turn (an Exception instance is raised instead)."""
    calls = iter(texts * 1000)

    def reader() -> str:
        item = next(calls)
        if isinstance(item, Exception):
            raise item
        return item

    return reader


def test_sampler_writes_and_stops_cleanly(tmp_path):
    out = tmp_path / "raw" / "thermal.jsonl"
    broken = RuntimeError("nvme smart-log /dev/nvme0 -o json took more than 10 s")
    reader = fake_reader([read(AUTOVAL_LOG), broken, "garbage"])
    before = threading.active_count()
    with ThermalSampler(tmp_path / "ignored", out, interval_s=0.02, reader=reader,
                        thresholds_reader=lambda: read(AUTOVAL_ID_CTRL)) as sampler:
        time.sleep(0.25)
    assert threading.active_count() <= before and sampler.available and sampler.error is None
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["kind"] == "header" and records[0]["interval_s"] == 0.02
    assert records[-1]["kind"] == "end" and records[-1]["samples"] == sampler.samples >= 6
    samples = [r for r in records if r["kind"] == "sample"]
    assert len(samples) == sampler.samples and sampler.failed == sum(not s["ok"] for s in samples) >= 2
    assert samples[0]["ok"] and samples[0]["raw"] == read(AUTOVAL_LOG)
    assert samples[0]["parsed"]["temperature_c"] == 33 and samples[0]["parsed"]["warning_temp_c"] == 80
    assert samples[1]["reason"] == "RuntimeError: nvme smart-log /dev/nvme0 -o json took more than 10 s"
    assert samples[2]["raw"] == "garbage" and "no 'temperature' line" in samples[2]["reason"]
    assert [s["t_s"] for s in samples] == sorted(s["t_s"] for s in samples) and samples[0]["t_s"] < 0.02
    log = parse_thermal_log(out.read_text(), str(out))  # parsed again from the raw outputs
    assert [s["temperature_c"] for s in log["samples"] if s["ok"]] == [33] * (len(samples) - sampler.failed)
    th = thermal_series(log)
    assert len(th) == len(samples) - sampler.failed and th["warning_temp_c"].eq(80).all()


def test_sampler_never_raises_into_the_measurement(tmp_path):
    out = tmp_path / "thermal.jsonl"
    with pytest.raises(KeyError, match="the measurement's own"):
        with ThermalSampler("x", out, interval_s=0.01, reader=fake_reader([read(DOCBOT_TEXT)])):
            raise KeyError("the measurement's own")
    assert json.loads(out.read_text().splitlines()[-1])["kind"] == "end"  # stopped and closed anyway
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    sampler = ThermalSampler("x", blocked / "thermal.jsonl", reader=fake_reader(["x"]))
    with sampler:
        pass
    assert sampler.available is False and sampler.error and "cannot write" in sampler.error
    assert str(smart.WAY_OUT).startswith("rerun")
