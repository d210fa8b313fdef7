"""The drive's identity and health: parsers on real recorded tool outputs (tests/data/drive/, SOURCES.md
names each one), the sysfs reading over recorded trees (tests/data/drive/sysroot/), and the tool runs
with stand-in ``nvme`` / ``smartctl`` programs on PATH (or none at all). Values asserted here were read
by eye from the recordings."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from memstor.core.errors import ParseError
from memstor.measure import drive as measure
from memstor.parse import drive as parse
from memstor.parse.drive import (
    parse_nvme_id_ctrl,
    parse_nvme_id_ns,
    parse_nvme_smart_log,
    parse_smartctl_json,
    public,
)

DATA = Path(__file__).resolve().parent / "data" / "drive"
SYSROOT = DATA / "sysroot"
GEN4 = SYSROOT / "nvme-gen4x4"
MULTIPATH = SYSROOT / "nvme-multipath"

IRONLIB_NVME = DATA / "metal-toolbox__ironlib/fixtures/utils/smartctl/nvme0.json"
IRONLIB_ID_CTRL_TEXT = DATA / "metal-toolbox__ironlib/fixtures/utils/nvme/nvmecli-id-ctrl"
EXPORTER = DATA / "prometheus-community__smartctl_exporter/testdata"
SAMSUNG_NVME = EXPORTER / "SAMSUNG_MZVL21T0HCLR-00B00_23.json"
SAMSUNG_SATA = EXPORTER / "SAMSUNG_MZ7WD240HAFV-00003_21.json"
WD_RED_HDD = EXPORTER / "WDC_WD20EFRX-68EUZN0_17.json"
AUTOVAL = DATA / "opencomputeproject__ocp-diag-autoval-ssd/src/autoval_ssd/unittest/mock/util_outputs"
IRONIC_SN730 = (DATA / "openstack__ironic-python-agent/ironic_python_agent/tests/unit/samples"
                / "hardware_samples.NVME_CLI_INFO_TEMPLATE_CRYPTO_SUPPORTED.json")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ smartctl -j (real)


def test_smartctl_nvme_toshiba_ironlib():
    r = parse_smartctl_json(read(IRONLIB_NVME))
    assert (r["protocol"], r["model"], r["firmware"]) == ("NVMe", "KXG60ZNV256G TOSHIBA", "AGGA4104")
    assert r["capacity_bytes"] == 256060514304 and r["lba_size_bytes"] == 512
    assert (r["temperature_C"], r["percentage_used_pct"], r["media_errors"]) == (55, 0, 0)
    assert r["data_units_written"] == 683891
    assert r["data_written_bytes"] == 683891 * 512000 == 350152192000
    assert r["power_on_hours"] == 3415 and r["smart_passed"] is True and r["smartctl_version"] == "7.1"
    assert r["serial_number_private"] == "Z9DF70I8FY3L"
    assert "serial_number_private" not in public(r) and public(r)["model"] == "KXG60ZNV256G TOSHIBA"


def test_smartctl_nvme_samsung_tab_indented_and_redacted():
    r = parse_smartctl_json(read(SAMSUNG_NVME))
    assert r["model"] == "SAMSUNG MZVL21T0HCLR-00B00" and r["firmware"] == "REDACTED"
    assert r["capacity_bytes"] == 1024209543168 and r["lba_size_bytes"] == 512
    assert (r["temperature_C"], r["percentage_used_pct"]) == (29, 16)
    assert r["data_units_written"] == 113662783 and r["data_written_bytes"] == 113662783 * 512000
    assert r["media_errors"] == 0 and r["available_spare_pct"] == 100 and r["power_on_hours"] == 10423


def test_smartctl_sata_ssd_maps_its_attributes():
    r = parse_smartctl_json(read(SAMSUNG_SATA))
    assert (r["protocol"], r["model"]) == ("ATA", "SAMSUNG MZ7WD240HAFV-00003")
    assert r["capacity_bytes"] == 240057409536 and r["rotation_rpm"] == 0
    assert r["temperature_C"] == 27
    assert r["percentage_used_pct"] == 9  # Wear_Leveling_Count normalized 91
    assert r["data_units_written"] is None
    assert r["data_written_bytes"] == 216456537880 * 512  # Total_LBAs_Written x 512-byte LBAs
    assert r["media_errors"] == 0  # 187 Uncorrectable_Error_Cnt
    assert r["interface_speed_current_Gbps"] == r["interface_speed_max_Gbps"] == 6.0
    assert any("Wear_Leveling_Count" in n for n in r["notes"])


def test_smartctl_hdd_without_wear_or_write_attributes_gives_none():
    r = parse_smartctl_json(read(WD_RED_HDD))
    assert r["model"] == "WDC WD20EFRX-68EUZN0" and r["rotation_rpm"] == 5400
    assert r["temperature_C"] == 34 and r["power_on_hours"] == 47657
    assert r["percentage_used_pct"] is None and r["data_written_bytes"] is None and r["media_errors"] is None


def test_smartctl_own_error_message_is_the_parse_error():
    text = json.dumps({"json_format_version": [1, 0], "smartctl": {"version": [7, 4], "exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/nvme0 failed: Permission denied", "severity": "error"}]}})
    with pytest.raises(ParseError, match="Permission denied"):
        parse_smartctl_json(text)


# -------------------------------------------------------------------------- nvme smart-log (real)


def test_nvme_smart_log_v1_spacing_autoval():
    r = parse_nvme_smart_log(read(AUTOVAL / "nvme_smartlog.json"))
    assert r["temperature_C"] == 33  # 306 K
    assert (r["percentage_used_pct"], r["data_units_written"], r["media_errors"]) == (0, 47217872, 0)
    assert r["critical_warning"] == 0  # the recording spells it "critical_warrning"
    assert r["power_on_hours"] == 1244


@pytest.mark.parametrize("log, temp, pct", [
    ({"Temperature": 311, "percentage_used": 4, "data_units_written": "1,234", "media_errors": 0}, 38, 4),
    ({"temperature": "37 C", "percent_used": "5%", "data_units_written": 10, "media_errors": 0}, 37, 5),
    ({"temperature": "37°C (310 K)", "percent_used": 1, "data_units_written": 10, "media_errors": 0}, 37, 1),
    ({"temperature": "310 K", "percent_used": 1, "data_units_written": 10, "media_errors": 0}, 37, 1),
    ({"temperature": 41, "percent_used": 0, "data_units_written": 10, "media_errors": 0}, 41, 0),
    ({"nvme0": {"temperature": 300, "percent_used": 0, "data_units_written": 10, "media_errors": 0}}, 27, 0),
    ({"critical_warning": {"value": 4, "ro": 0}, "temperature": 300, "percent_used": 0, "data_units_written": 1,
      "media_errors": 2}, 27, 0),
])
def test_nvme_smart_log_key_and_unit_variants(log, temp, pct):
    """Constructed from nvme-cli's printers (nvme-print-json.c across 1.x/2.x): capitalised Temperature,
    percentage_used, strings with units or thousands separators, a device wrapper, -H objects."""
    r = parse_nvme_smart_log(json.dumps(log))
    assert (r["temperature_C"], r["percentage_used_pct"]) == (temp, pct)
    assert r["data_units_written"] in (1, 10, 1234)


def test_nvme_smart_log_refuses_smartctl_output():
    with pytest.raises(ParseError, match="smartctl"):
        parse_nvme_smart_log(read(IRONLIB_NVME))


# ---------------------------------------------------------------------------- nvme id-ctrl (real)


def test_id_ctrl_json_v1_samsung_pm983_without_volatile_cache():
    r = parse_nvme_id_ctrl(read(AUTOVAL / "id_ctrl.json"))
    assert (r["model"], r["firmware"]) == ("Unknown MZ1LB960HAJQ-000FB", "EDA76F2Q")
    assert r["capacity_bytes"] == 900185481216
    assert (r["vwc"], r["volatile_write_cache"]) == (0, False)
    assert r["nvme_version"] == "1.2" and r["pci_vendor_id"] == "0x144d" and r["namespaces"] == 1
    assert r["serial_number_private"] == "S43ANA0M405593"


def test_id_ctrl_json_wd_sn730_has_volatile_write_cache():
    r = parse_nvme_id_ctrl(read(IRONIC_SN730))
    assert r["model"] == "WDC PC SN730 SDBQNTY-256G-1001" and r["firmware"] == "11170101"
    assert (r["vwc"], r["volatile_write_cache"]) == (7, True)
    assert r["capacity_bytes"] == 256060514304 and r["nvme_version"] == "1.3"


def test_id_ctrl_normal_text_micron_9300():
    r = parse_nvme_id_ctrl(read(IRONLIB_ID_CTRL_TEXT))
    assert (r["model"], r["firmware"]) == ("Micron_9300_MTFDHAL3T8TDP", "11300DN0")
    assert r["capacity_bytes"] == 3840755982336 and r["volatile_write_cache"] is False
    assert r["pci_vendor_id"] == "0x1344" and r["nvme_version"] == "1.2" and r["namespaces"] == 32


def test_id_ctrl_zero_tnvmcap_is_not_a_capacity():
    r = parse_nvme_id_ctrl('{"mn":"X","fr":"1","tnvmcap":0,"vwc":1}')
    assert r["capacity_bytes"] is None and r["volatile_write_cache"] is True and r["notes"]


# ------------------------------------------------------------- nvme id-ns (constructed, see SOURCES)

# The five LBA formats a real drive lists in nvme-cli issue #2811 (`nvme id-ns -o json | jq .lbafs`).
ISSUE_2811_LBAFS = [{"ms": 0, "ds": 9, "rp": 1}, {"ms": 8, "ds": 9, "rp": 3}, {"ms": 0, "ds": 12, "rp": 0},
                    {"ms": 8, "ds": 12, "rp": 2}, {"ms": 64, "ds": 12, "rp": 3}]


def test_id_ns_json_v1_layout():
    text = ('{\n  "nsze" : 1953525168,\n  "ncap" : 1953525168,\n  "nuse" : 1953525168,\n  "nlbaf" : 1,\n'
            '  "flbas" : 0,\n  "lbafs" : [\n    {\n      "ms" : 0,\n      "ds" : 9,\n      "rp" : 2\n    },\n'
            '    {\n      "ms" : 0,\n      "ds" : 12,\n      "rp" : 0\n    }\n  ]\n}\n')
    r = parse_nvme_id_ns(text)
    assert (r["lba_format_index"], r["lba_size_bytes"], r["metadata_size_bytes"]) == (0, 512, 0)
    assert r["size_bytes"] == 1953525168 * 512 and [f["lba_size_bytes"] for f in r["lba_formats"]] == [512, 4096]


def test_id_ns_json_v2_with_metadata_format_in_use():
    lbafs = [dict(f, lbaf=i, in_use=int(i == 1)) for i, f in enumerate(ISSUE_2811_LBAFS)]
    r = parse_nvme_id_ns(json.dumps({"nsze": 1000, "ncap": 1000, "nuse": 10, "nlbaf": 4, "flbas": 1, "lbafs": lbafs}))
    assert (r["lba_format_index"], r["lba_size_bytes"], r["metadata_size_bytes"]) == (1, 512, 8)
    assert r["lba_formats"][4] == {"index": 4, "lba_size_bytes": 4096, "metadata_size_bytes": 64,
                                   "relative_performance": 3}


def test_id_ns_flbas_high_bits_select_format_16_and_up():
    lbafs = [{"ms": 0, "ds": 9, "rp": 0}] * 17 + [{"ms": 16, "ds": 12, "rp": 0}]
    r = parse_nvme_id_ns(json.dumps({"nsze": 8, "flbas": 0x21, "lbafs": lbafs}))  # bits 6:5 = 1, 3:0 = 1
    assert (r["lba_format_index"], r["lba_size_bytes"], r["metadata_size_bytes"]) == (17, 4096, 16)


def test_id_ns_normal_and_human_text():
    normal = ("NVME Identify Namespace 1:\nnsze    : 0x74706db0\nncap    : 0x74706db0\nnuse    : 0x358418\n"
              "nlbaf   : 1\nflbas   : 0x1\nlbaf  0 : ms:0   lbads:9  rp:0x2 \nlbaf  1 : ms:0   lbads:12 rp:0 (in use)\n")
    r = parse_nvme_id_ns(normal)
    assert (r["lba_format_index"], r["lba_size_bytes"], r["size_blocks"]) == (1, 4096, 0x74706DB0)
    human = ("NVME Identify Namespace 1:\nnsze    : 0x20000000\nflbas   : 0x2\n  [3:0] : 0x2\tLeast significant\n"
             "LBA Format  0 : Metadata Size: 0   bytes - Data Size: 512 bytes - Relative Performance: 0x1 Better\n"
             "LBA Format  1 : Metadata Size: 8   bytes - Data Size: 512 bytes - Relative Performance: 0x3 Degraded\n"
             "LBA Format  2 : Metadata Size: 0   bytes - Data Size: 4096 bytes - Relative Performance: 0 Best (in use)\n")
    r = parse_nvme_id_ns(human)
    assert (r["lba_format_index"], r["lba_size_bytes"], r["metadata_size_bytes"]) == (2, 4096, 0)


@pytest.mark.parametrize("text, reason", [
    ('{"flbas": 3, "lbafs": [{"ms": 0, "ds": 9}]}', "selects LBA format 3"),
    ('{"flbas": 0, "lbafs": [{"ms": 0, "ds": 0}]}', "no data size"),
    ('{"flbas": 0}', "no LBA formats"),
])
def test_id_ns_impossible_formats(text, reason):
    with pytest.raises(ParseError, match=reason):
        parse_nvme_id_ns(text)


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("fn", [parse_smartctl_json, parse_nvme_smart_log, parse_nvme_id_ctrl, parse_nvme_id_ns])
@pytest.mark.parametrize("text", ["", "   \n", "not json at all", "[1, 2]", "{", "{}", '{"a": {"b": [1]}}\n\x1b[31m'])
def test_bad_input_is_a_one_line_parse_error(fn, text):
    with pytest.raises(ParseError) as info:
        fn(text)
    msg = str(info.value)
    assert msg and "\n" not in msg and "\x1b" not in msg and "Traceback" not in msg


@pytest.mark.parametrize("text, gtps", [("16.0 GT/s PCIe", 16.0), ("8 GT/s", 8.0), ("2.5 GT/s PCIe", 2.5),
                                        ("Unknown", None), ("Unknown speed", None), ("", None), (None, None)])
def test_pcie_link_speed_text(text, gtps):
    assert parse.parse_pcie_link_speed(text) == gtps


def test_pcie_width_and_generation():
    assert [parse.parse_pcie_link_width(t) for t in ("4", "x16", "0", "", None)] == [4, 16, None, None, None]
    assert [parse.pcie_generation(g) for g in (2.5, 8.0, 16.0, 32.0, 3.0, None)] == [1, 3, 4, 5, None, None]


# -------------------------------------------------------------------------------- sysfs (recorded)


@pytest.mark.parametrize("name, disk", [("nvme0n1", "nvme0n1"), ("/dev/nvme0n1", "nvme0n1"),
                                        ("nvme0n1p1", "nvme0n1"), ("/dev/nvme0", "nvme0")])
def test_pcie_link_gen4_x4(name, disk):
    link = measure.pcie_link(name, root=GEN4)
    assert link["available"] is True and link["device"] == disk and link["controller"] == "nvme0"
    assert link["pci_address"] == "0000:01:00.0"
    assert (link["current_link_speed_GTps"], link["current_link_width"]) == (16.0, 4)
    assert (link["max_link_speed_GTps"], link["max_link_width"]) == (16.0, 4)
    assert (link["pcie_generation_current"], link["pcie_generation_max"], link["link_below_max"]) == (4, 4, False)


def test_pcie_link_multipath_head_finds_its_controller_and_a_slower_slot():
    link = measure.pcie_link("nvme0n1", root=MULTIPATH)  # the head is nvme0n1, its controller nvme1
    assert link["controller"] == "nvme1" and link["pci_address"] == "0000:5e:00.0"
    assert (link["current_link_speed_GTps"], link["max_link_speed_GTps"], link["current_link_width"]) == (8.0, 16.0, 4)
    assert (link["pcie_generation_current"], link["pcie_generation_max"], link["link_below_max"]) == (3, 4, True)


@pytest.mark.parametrize("name, reason", [("sda", "not an NVMe device"), ("nvme7n1", "no NVMe controller")])
def test_pcie_link_not_available(name, reason):
    link = measure.pcie_link(name, root=GEN4)
    assert link["available"] is False and reason in link["reason"]
    assert link["status"] == f"not available ({link['reason']})"


def test_sysfs_identity_of_nvme_and_sata():
    n = measure.sysfs_identity("nvme0n1p1", root=GEN4)
    assert (n["model"], n["firmware"], n["capacity_bytes"]) == ("Samsung SSD 980 PRO 1TB", "5B2QGXA7", 1000204886016)
    assert n["write_cache"] == "write back" and n["logical_block_size_bytes"] == 512
    s = measure.sysfs_identity("sda", root=GEN4)
    assert (s["model"], s["firmware"], s["rotational"]) == ("Samsung SSD 870", "1B6Q", False)
    m = measure.sysfs_identity("nvme0n1", root=MULTIPATH)
    assert m["model"] == "SAMSUNG MZWLJ3T8HBLS-00007" and m["write_cache"] == "write through"
    assert m["logical_block_size_bytes"] == 4096


# -------------------------------------------------------------------------------- tools on PATH


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """A PATH holding only the stand-in tools a test writes (none: no nvme, no smartctl)."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def fake_tool(bin_dir: Path, name: str, outputs: dict[str, tuple[int, str, str]]) -> Path:
    """A stand-in ``name`` that logs its argv and answers its first argument from ``outputs``:
    subcommand -> (exit status, stdout, stderr); ``*`` matches any."""
    log = bin_dir / f"{name}.argv"
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\nimport json, sys, time\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        f"outputs = json.loads({json.dumps(json.dumps(outputs))})\n"
        "code, out, err = outputs.get(sys.argv[1], outputs.get('*', [1, '', 'unknown command']))\n"
        "if code == 'sleep':\n    time.sleep(30)\n"
        "sys.stdout.write(out); sys.stderr.write(err); sys.exit(code)\n")
    script.chmod(0o755)
    return log


def test_missing_tools_are_not_available_with_the_reason(bin_dir):
    h = measure.health("nvme0n1", root=GEN4)
    assert h["available"] is False and "nvme not installed (install the nvme-cli package" in h["reason"]
    assert h["status"] == f"not available ({h['reason']})"
    s = measure.health("sda", root=GEN4)
    assert s["available"] is False
    assert s["reason"] == "smartctl not installed (install the smartmontools package; scripts/install-system-deps does)"
    ident = measure.identity("nvme0n1", root=GEN4)  # sysfs still names the drive
    assert ident["available"] is True and ident["sources"] == ["sysfs"] and ident["model"] == "Samsung SSD 980 PRO 1TB"
    assert ident["tools"]["nvme"]["status"] == ("not available (nvme not installed (install the nvme-cli package; "
                                                "scripts/install-system-deps does))")
    assert ident["volatile_write_cache"] is True and ident["pcie"]["current_link_width"] == 4


def test_not_an_nvme_or_smart_device(bin_dir):
    h = measure.health("loop0", root=GEN4)
    assert h["available"] is False and h["reason"] == "not an NVMe or SMART device (loop device loop0)"
    ident = measure.identity("loop0", root=GEN4)
    assert ident["available"] is False and "no such block device loop0" in ident["reason"]


def test_nvme_cli_identity_and_health(bin_dir):
    id_ns = json.dumps({"nsze": 1953525168, "ncap": 1953525168, "nuse": 1, "flbas": 0,
                        "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]})
    log = fake_tool(bin_dir, "nvme", {"id-ctrl": (0, read(IRONIC_SN730), ""), "id-ns": (0, id_ns, ""),
                                      "smart-log": (0, read(AUTOVAL / "nvme_smartlog.json"), "")})
    ident = measure.identity("nvme0n1p1", root=GEN4)
    assert ident["available"] is True and ident["sources"] == ["sysfs", "nvme-cli"]
    assert ident["model"] == "WDC PC SN730 SDBQNTY-256G-1001" and ident["firmware"] == "11170101"
    assert ident["volatile_write_cache"] is True and ident["lba_size_bytes"] == 512
    assert ident["capacity_bytes"] == 1953525168 * 512 and ident["nvm_capacity_bytes"] == 256060514304
    assert "serial_number_private" not in public(ident)
    h = measure.health("nvme0n1", root=GEN4)
    assert h["available"] is True and h["source"] == "nvme-cli"
    assert (h["temperature_C"], h["percentage_used_pct"], h["data_units_written"]) == (33, 0, 47217872)
    assert log.read_text().splitlines() == ["id-ctrl /dev/nvme0 -o json", "id-ns /dev/nvme0n1 -o json",
                                            "smart-log /dev/nvme0 -o json"]


def test_nvme_cli_asks_the_multipath_controller(bin_dir):
    log = fake_tool(bin_dir, "nvme", {"smart-log": (0, read(AUTOVAL / "nvme_smartlog.json"), "")})
    assert measure.health("nvme0n1", root=MULTIPATH)["temperature_C"] == 33
    assert log.read_text().splitlines() == ["smart-log /dev/nvme1 -o json"]


def test_smartctl_for_sata_and_as_the_nvme_fallback(bin_dir):
    fake_tool(bin_dir, "smartctl", {"*": (64, read(SAMSUNG_SATA), "")})  # bit 6: error log has entries
    h = measure.health("sda", root=GEN4)
    assert h["available"] is True and h["source"] == "smartctl"
    assert (h["percentage_used_pct"], h["data_written_bytes"], h["media_errors"]) == (9, 216456537880 * 512, 0)
    ident = measure.identity("sda", root=GEN4)
    assert ident["model"] == "SAMSUNG MZ7WD240HAFV-00003" and ident["interface_speed_max_Gbps"] == 6.0
    fake_tool(bin_dir, "nvme", {"*": (1, "", "open: Permission denied\n")})
    fake_tool(bin_dir, "smartctl", {"*": (0, read(IRONLIB_NVME), "")})
    h = measure.health("nvme0n1", root=GEN4)
    assert h["source"] == "smartctl" and h["temperature_C"] == 55
    assert "earlier source: permission denied (needs root)" in h["notes"]


def test_permission_denied_needs_root(bin_dir):
    fake_tool(bin_dir, "nvme", {"*": (1, "", "open: Permission denied\n")})
    refused = {"json_format_version": [1, 0], "smartctl": {"version": [7, 4], "exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/nvme0n1 failed: Permission denied", "severity": "error"}]}}
    fake_tool(bin_dir, "smartctl", {"*": (2, json.dumps(refused), "")})
    h = measure.health("nvme0n1", root=GEN4)
    assert h["available"] is False and h["reason"] == "permission denied (needs root)"
    assert h["status"] == "not available (permission denied (needs root))"


def test_a_hanging_tool_is_abandoned(bin_dir, monkeypatch):
    monkeypatch.setattr(measure, "CMD_TIMEOUT_S", 0.5)
    fake_tool(bin_dir, "nvme", {"*": ("sleep", "", "")})
    h = measure.health("nvme0n1", root=GEN4)
    assert h["available"] is False and "took more than" in h["reason"]


# ------------------------------------------------------------------------------------ the difference


def test_health_delta_before_and_after():
    before = dict(parse_nvme_smart_log(read(AUTOVAL / "nvme_smartlog.json")), available=True, device="nvme0n1")
    after = dict(before, data_units_written=before["data_units_written"] + 2000, temperature_C=45,
                 percentage_used_pct=1, power_on_hours=1245)
    after["data_written_bytes"] = parse.data_written_bytes(after["data_units_written"])
    d = measure.health_delta(before, after)
    assert d["available"] is True
    assert d["data_units_written"] == 2000 and d["data_written_bytes"] == 2000 * 512000 == 1024000000
    assert (d["percentage_used_pct"], d["media_errors"], d["power_on_hours"]) == (1, 0, 1)
    assert (d["temperature_C"], d["temperature_before_C"], d["temperature_after_C"]) == (12, 33, 45)


def test_health_delta_counter_going_down_or_missing_side():
    before = {"available": True, "device": "sda", "data_written_bytes": 10, "media_errors": None, "temperature_C": 30}
    after = {"available": True, "device": "sda", "data_written_bytes": 5, "media_errors": 1, "temperature_C": 29}
    d = measure.health_delta(before, after)
    assert d["data_written_bytes"] is None and d["media_errors"] is None and d["temperature_C"] == -1
    assert any("went down" in n for n in d["notes"])
    gone = measure.health_delta(measure.not_available("nvme-cli not installed"), after)
    assert gone["available"] is False
    assert gone["status"] == "not available (health before the experiments: nvme-cli not installed)"


def test_fixture_sysroot_symlinks_stay_inside_their_tree():
    for tree in (GEN4, MULTIPATH):
        for link in (p for p in tree.rglob("*") if p.is_symlink()):
            assert not os.readlink(link).startswith("/"), link
            assert tree.resolve() in link.resolve().parents, link
