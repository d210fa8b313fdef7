"""Every throughput against its physical ceiling (issue 31, part 4): the DRAM peak from real recorded
``dmidecode`` outputs (tests/data/dmidecode/, SOURCES.md names each one; the values asserted were read there
by eye), the storage interface ceiling from the PCIe/SATA link (the recorded sysfs trees of tests/data/drive/),
the ceilings table, the storage points above their link, and this machine's own dmidecode, run for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import ceilings
from memstor.analysis import drive as adrive
from memstor.analysis.ceilings import (
    ABOVE_COLUMNS,
    ABOVE_TEXT,
    CEILING_COLUMNS,
    above_ceiling,
    ceilings_table,
    link_ceiling,
    pcie_ceiling,
    pct_of_ceiling,
    serial_ceiling,
    storage_ceiling,
)
from memstor.core.errors import ParseError
from memstor.measure import dram
from memstor.measure import drive as measure
from memstor.measure.sysinfo import collect
from memstor.parse.dmidecode import NO_DEVICES, dram_peak, parse_dmidecode_memory, populated_channels, records

DATA = Path(__file__).resolve().parent / "data"
DMI = DATA / "dmidecode"
T480S = DMI / "u-root__u-root/cmds/exp/dmidecode/testdata/Lenovo-ThinkPad-T480.orig.txt"
X399 = DMI / "u-root__u-root/cmds/exp/dmidecode/testdata/GigaByte-X399.orig.txt"
C3_SMALL = DMI / "metal-toolbox__ironlib/fixtures/asrr/e3c246d4i-nl/dmidecode"
VIRTUALBOX = DMI / "puppetlabs__facter/spec/fixtures/dmi_decode_virtualbox"
SYSROOT = DATA / "drive" / "sysroot"
GEN4 = SYSROOT / "nvme-gen4x4"
MULTIPATH = SYSROOT / "nvme-multipath"
SAMSUNG_SATA = DATA / "drive/prometheus-community__smartctl_exporter/testdata/SAMSUNG_MZ7WD240HAFV-00003_21.json"
GIB = 1 << 30

#: What this VM's dmidecode 3.4 printed as root (tests/data/dmidecode/SOURCES.md): no SMBIOS at all.
VM_STDOUT = "# dmidecode 3.4\nScanning /dev/mem for entry point.\n"
VM_STDERR = "/dev/mem: No such file or directory\n"
VM_REASON = ("no SMBIOS table (dmidecode: /dev/mem: No such file or directory): a VM whose hypervisor gives the "
             "guest none, or a board without SMBIOS")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- dmidecode (real)


@pytest.mark.parametrize("path, slots, sizes_gib, channels, mts, peak", [
    # ThinkPad T480s: ChannelA-DIMM0 8 GB and ChannelB-DIMM0 16 GB, "Configured Memory Speed: 2400 MT/s" on
    # both -> 2 channels x 2,400 MT/s x 8 B = 38,400 MB/s.
    (T480S, 2, [8, 16], 2, 2400, 38_400),
    # X399 AORUS XTREME: eight 16 GB DIMMs, "DIMM 0"/"DIMM 1" in each of "P0 CHANNEL A".."D", 2933 MT/s
    # configured -> 4 channels (two DIMMs per channel count once) x 2,933 x 8 = 93,856 MB/s.
    (X399, 8, [16] * 8, 4, 2933, 93_856),
    # c3.small.x86: 16384 MB in ChannelA-DIMM0 and ChannelB-DIMM0, DIMM1 slots "No Module Installed"; rated
    # "Speed: 2666 MT/s" but "Configured Memory Speed: 2400 MT/s" -> 2 x 2,400 x 8 = 38,400 MB/s.
    (C3_SMALL, 4, [16, None, 16, None], 2, 2400, 38_400),
])
def test_real_dmidecode_outputs(path, slots, sizes_gib, channels, mts, peak):
    parsed = parse_dmidecode_memory(read(path))
    dimms = parsed["dimms"]
    assert len(dimms) == slots and parsed["dmidecode_version"] == "3.2"
    assert [d["size_bytes"] // GIB if d["size_bytes"] else None for d in dimms] == sizes_gib
    assert [d["populated"] for d in dimms] == [s is not None for s in sizes_gib]
    got = dram_peak(dimms)
    assert (got["channels"], got["mts"], got["bus_bytes"], got["peak_MBps"], got["reason"]) == \
        (channels, mts, 8, peak, None)
    assert got["how"].startswith(f"{channels} channels × {mts:,} MT/s × 8 B (DDR4")
    assert got["how"].endswith(f"= {peak:,} MB/s")
    json.dumps(parsed)  # a sysinfo.json block as is


def test_server_record_fields():
    """The c3.small.x86 read field by field: ECC widths, rated vs configured speed, the type 16 array."""
    parsed = parse_dmidecode_memory(read(C3_SMALL))
    a = parsed["dimms"][0]
    assert (a["locator"], a["bank_locator"], a["type"], a["form_factor"], a["rank"]) == \
        ("ChannelA-DIMM0", "BANK 0", "DDR4", "SODIMM", 2)
    assert (a["speed_MTps"], a["configured_speed_MTps"], a["speed_unit"]) == (2666, 2400, "MT/s")
    assert (a["data_width_bits"], a["total_width_bits"], a["part_number"]) == (64, 72, "18ASF2G72HZ-2G6E1")
    assert "serial" not in " ".join(a)  # serial numbers are not kept
    empty = parsed["dimms"][1]
    assert (empty["locator"], empty["size_bytes"], empty["type"], empty["speed_MTps"], empty["manufacturer"]) == \
        ("ChannelA-DIMM1", None, None, None, None)
    assert parsed["arrays"] == [{"handle": "0x0015", "location": "System Board Or Motherboard", "use": "System Memory",
                                 "error_correction": "Single-bit ECC", "max_capacity_bytes": 128 * GIB,
                                 "devices": 4}]
    assert populated_channels([d for d in parsed["dimms"] if d["populated"]])[1] == \
        "channels from the locators 'ChannelA-DIMM0', 'ChannelB-DIMM0'"


def test_x399_channels_come_from_the_bank_locators():
    dimms = parse_dmidecode_memory(read(X399))["dimms"]
    n, how = populated_channels(dimms)
    assert n == 4 and how == ("channels from the bank locators 'P0 CHANNEL A', 'P0 CHANNEL B', 'P0 CHANNEL C', "
                              "'P0 CHANNEL D'")


def test_a_vm_without_memory_devices_is_unknown_with_the_reason():
    """VirtualBox 6.1 (a real dump): BIOS, system, board and chassis records, no type 16 or 17."""
    parsed = parse_dmidecode_memory(read(VIRTUALBOX))
    assert parsed["dmidecode_version"] == "3.1" and parsed["dimms"] == [] and parsed["arrays"] == []
    got = dram_peak(parsed["dimms"])
    assert got["peak_MBps"] is None and got["reason"] == f"unknown ({NO_DEVICES})"
    rec = dram.record_of(read(VIRTUALBOX), "", 0)
    assert rec["available"] is False and rec["reason"] == NO_DEVICES == \
        "no SMBIOS memory devices (a VM: the hypervisor hides them)"
    # the profile's values stand in for what the hypervisor hides
    given = dram_peak([], channels=2, mts=3200)
    assert given["peak_MBps"] == 51_200 and given["how"].startswith("2 channels × 3,200 MT/s × 8 B")


def test_full_dump_records_keep_their_types_and_lists():
    recs = records(read(T480S))
    types = [r["type"] for r in recs]
    assert types.count(17) == 2 and types.count(16) == 1 and 4 in types and 127 in types
    bios = next(r for r in recs if r["type"] == 0)
    assert bios["fields"]["Vendor"] == "LENOVO" and "UEFI is supported" in bios["fields"]["Characteristics"]


@pytest.mark.parametrize("text", ["", "hello\nworld\n", '{"a": 1}'])
def test_not_dmidecode_output_is_a_parse_error(text):
    with pytest.raises(ParseError, match=r"^dmidecode: not dmidecode output"):
        parse_dmidecode_memory(text)


# ------------------------------------------------------------------- dmidecode (constructed records)
# CONSTRUCTED, not recorded (tests/data/dmidecode/SOURCES.md: no DDR5, LPDDR or pre-3.2 recording under an
# allowing licence was found). Field names and spellings are dmidecode's own (dmi_memory_device in dmidecode.c).


def _device(locator: str, bank: str, size: str, mtype: str, speed: str, configured: str, width: int = 64,
            configured_label: str = "Configured Memory Speed") -> str:
    return (f"Handle 0x0040, DMI type 17, 92 bytes\nMemory Device\n\tTotal Width: {width} bits\n\tData Width: "
            f"{width} bits\n\tSize: {size}\n\tLocator: {locator}\n\tBank Locator: {bank}\n\tType: {mtype}\n"
            f"\tSpeed: {speed}\n\t{configured_label}: {configured}\n\n")


def test_old_dmidecode_prints_mhz_for_mt_s():
    """dmidecode < 3.2: "1333 MHz" and "Configured Clock Speed" (the data rate: DDR3-1333)."""
    text = "# dmidecode 2.12\nSMBIOS 2.7 present.\n\n" + "".join(
        _device(f"Channel{ch}-DIMM0", bank, "4096 MB", "DDR3", "1333 MHz", "1333 MHz",
                configured_label="Configured Clock Speed") for ch, bank in (("A", "BANK 0"), ("B", "BANK 2")))
    dimms = parse_dmidecode_memory(text)["dimms"]
    assert [(d["configured_speed_MTps"], d["speed_unit"], d["size_bytes"]) for d in dimms] == \
        [(1333, "MHz", 4 * GIB)] * 2
    assert dram_peak(dimms)["peak_MBps"] == 2 * 1333 * 8


def test_ddr5_is_8_bytes_per_dimm_channel():
    """DDR5 on an Intel client: one DIMM per controller; each DIMM's two 32-bit subchannels are 8 B together."""
    text = "".join(_device(f"Controller{c}-ChannelA-DIMM0", "BANK 0", "16 GB", "DDR5", "5600 MT/s", "4800 MT/s")
                   for c in (0, 1))
    got = dram_peak(parse_dmidecode_memory(text)["dimms"])
    assert (got["channels"], got["mts"], got["bus_bytes"], got["peak_MBps"]) == (2, 4800, 8, 76_800)


def test_lpddr_bus_is_the_devices_widths():
    """LPDDR5: eight 16-bit devices are a 128-bit (16 B) bus."""
    text = "".join(_device(f"Controller{c}-Channel{ch}", "BANK 0", "2 GB", "LPDDR5", "6400 MT/s", "6400 MT/s", 16)
                   for c in (0, 1) for ch in "ABCD")
    got = dram_peak(parse_dmidecode_memory(text)["dimms"])
    assert (got["channels"], got["bus_bytes"], got["peak_MBps"]) == (8, 2, 8 * 2 * 6400)
    assert got["how"].startswith("8 LPDDR5 devices of 16 + 16")


def test_locators_without_a_channel_are_not_guessed():
    """Dell PowerEdge style: "A1".."A4" and "Not Specified" name a socket and slots, not channels."""
    text = "".join(_device(f"A{i}", "Not Specified", "32 GB", "DDR4", "2933 MT/s", "2933 MT/s") for i in (1, 2, 3, 4))
    dimms = parse_dmidecode_memory(text)["dimms"]
    got = dram_peak(dimms)
    assert got["peak_MBps"] is None and got["mts"] == 2933
    assert got["reason"] == "unknown (locators 'A1', 'A2', 'A3', 'A4': no channel pattern fits them)"
    assert got["how"].startswith("? channels × 2,933 MT/s × 8 B")
    assert dram_peak(dimms, channels=4)["peak_MBps"] == 4 * 2933 * 8


@pytest.mark.parametrize("pairs, channels", [
    ([("DIMM 0", "P0 CHANNEL A"), ("DIMM 1", "P0 CHANNEL A"), ("DIMM 0", "P0 CHANNEL B")], 2),
    ([("DIMMA1", "P0_Node0_Channel0_Dimm0"), ("DIMMA2", "P0_Node0_Channel0_Dimm1"),
      ("DIMMD1", "P0_Node1_Channel0_Dimm0"), ("DIMMA1", "P1_Node0_Channel0_Dimm0")], 3),  # node counts too
    ([("DIMM_A1", "NODE 0 CHANNEL 0 DIMM 0"), ("DIMM_B1", "NODE 0 CHANNEL 1 DIMM 0")], 2),
    ([("SODIMM0", "CHANNEL A DIMM0"), ("SODIMM1", "CHANNEL B DIMM0")], 2),
    ([("CPU1_DIMM_A1", "NODE 1"), ("CPU1_DIMM_A2", "NODE 1"), ("CPU2_DIMM_A1", "NODE 2")], 2),
    ([("P1-DIMMA1", None), ("P1-DIMMB1", None), ("P2-DIMMA1", None)], 3),
    ([("DIMM_P0_A0", "BANK 0"), ("DIMM_P0_A1", "BANK 1"), ("DIMM_P1_A0", "BANK 0")], 2),
    ([("CPU0 Channel0 DIMM0", "NODE 0"), ("CPU0 Channel1 DIMM0", "NODE 0")], 2),
    ([("DIMM_A1", "BANK 0"), ("DIMM_A2", "BANK 0"), ("DIMM_B1", "BANK 1")], 2),
    ([("PROC 1 DIMM 1", None), ("PROC 1 DIMM 4", None)], None),  # HPE: slots, no channel
    ([("DIMM 0", "BANK 0"), ("DIMM 0", "BANK 2")], None),
])
def test_channel_patterns(pairs, channels):
    """The locator spellings the module docstring lists (constructed pairs, as vendors name them)."""
    dimms = [{"locator": loc, "bank_locator": bank} for loc, bank in pairs]
    n, how = populated_channels(dimms)
    assert n == channels, how
    assert how.startswith("channels from the") if channels else how.startswith("unknown (locators ")


# ------------------------------------------------------------------------------ dmidecode, run


@pytest.fixture
def bin_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def _fake_dmidecode(bin_dir: Path, code: int, out: str, err: str = "", sleep_s: float = 0) -> None:
    script = bin_dir / "dmidecode"
    script.write_text(f"#!{sys.executable}\nimport sys, time\ntime.sleep({sleep_s})\n"
                      f"sys.stdout.write({out!r}); sys.stderr.write({err!r}); sys.exit({code})\n")
    script.chmod(0o755)


def test_dram_record_from_a_stand_in_dmidecode(bin_dir, monkeypatch):
    """A stand-in dmidecode on PATH plays the T480s recording; memstor runs it as root."""
    _fake_dmidecode(bin_dir, 0, read(T480S))
    monkeypatch.setattr(dram, "is_root", lambda: True)
    rec = dram.dram_record()
    assert rec["available"] is True and rec["source"] == "dmidecode -t memory"
    assert len(rec["dimms"]) == 2 and rec["peak"]["peak_MBps"] == 38_400
    json.dumps(rec)


@pytest.mark.parametrize("setup, reason", [
    ("missing", dram.NOT_INSTALLED),
    ("user", "not root (dmidecode reads the SMBIOS table, which only root may read)"),
    ("vm", VM_REASON),
    ("slow", "took more than 1 s"),
])
def test_dram_record_not_available(bin_dir, monkeypatch, setup, reason):
    monkeypatch.setattr(dram, "is_root", lambda: setup != "user")
    if setup == "missing":
        monkeypatch.setattr(dram, "binary", lambda: None)
    _fake_dmidecode(bin_dir, 1 if setup == "vm" else 0, VM_STDOUT if setup == "vm" else read(T480S),
                    VM_STDERR if setup == "vm" else "", sleep_s=20 if setup == "slow" else 0)
    # a generous limit where the stand-in answers (a loaded machine starts Python slowly: 0.3 s was flaky),
    # a short one for the stand-in that sleeps far beyond it
    rec = dram.dram_record(timeout_s=1.0 if setup == "slow" else 30.0)
    assert rec["available"] is False and reason in rec["reason"], rec
    assert rec["status"] == f"not available ({rec['reason']})" and "\n" not in rec["status"]


def test_this_machines_dmidecode():
    """For real (dmidecode starts in milliseconds: the fast tier's guard lists only the slow programs). On the
    lab's Firecracker VM, as root with dmidecode installed: no SMBIOS table at all (SOURCES.md)."""
    rec = dram.dram_record()
    exe = dram.binary()
    if exe is None:
        assert rec["reason"] == dram.NOT_INSTALLED
        return
    if os.geteuid() != 0:
        assert rec["reason"] == dram.NOT_ROOT
        return
    res = subprocess.run([exe, "-t", "memory"], capture_output=True, text=True, timeout=30)
    if "Memory Device" in res.stdout:
        assert rec["available"] is True and len(rec["dimms"]) == res.stdout.count("\nMemory Device\n")
    elif not Path("/sys/firmware/dmi").exists() and not Path("/dev/mem").exists():
        assert (res.stdout, res.stderr, res.returncode) == (VM_STDOUT, VM_STDERR, 1)
        assert rec == measure.not_available(VM_REASON)
    else:
        assert rec["available"] is False and rec["reason"]


@pytest.mark.fio  # collect() also starts fio --version
@pytest.mark.loadlat  # and loadlat --version
def test_sysinfo_has_the_dram_block():
    info = collect()
    assert info["dram"] == dram.dram_record()


# ------------------------------------------------------------------------------ link arithmetic


@pytest.mark.parametrize("gtps, lanes, raw, payload_factor", [
    (8.0, 4, 8 * 4 * 128 / 130 / 8 * 1000, 256 / 280),     # Gen3 x4: 3,938 MB/s before the packet overhead
    (16.0, 4, 16 * 4 * 128 / 130 / 8 * 1000, 256 / 280),   # Gen4 x4: 7,877 MB/s
    (5.0, 1, 5 * 1 * 8 / 10 / 8 * 1000, 256 / 280),        # Gen2 x1: 500 MB/s (8b/10b)
    (64.0, 16, 64 * 16 * 242 / 256 / 8 * 1000, 256 / 280),  # Gen6 x16, FLIT 242/256
])
def test_pcie_link_arithmetic(gtps, lanes, raw, payload_factor):
    got = pcie_ceiling(gtps, lanes)
    assert got["raw_MBps"] == pytest.approx(raw) and got["ceiling_MBps"] == pytest.approx(raw * payload_factor)
    assert "max payload assumed 256 B" in got["how"]


def test_pcie_numbers_as_stated():
    assert round(pcie_ceiling(8, 4)["raw_MBps"]) == 3938 and round(pcie_ceiling(8, 4)["ceiling_MBps"]) == 3601
    assert round(pcie_ceiling(16, 4)["raw_MBps"]) == 7877 and round(pcie_ceiling(16, 4)["ceiling_MBps"]) == 7202
    assert pcie_ceiling(8, 4)["how"] == ("8 GT/s × 4 lanes × 128/130 / 8 = 3,938 MB/s; × 256/280 (max payload "
                                         "assumed 256 B, 24 B TLP overhead) = 3,601 MB/s")
    assert pcie_ceiling(8, 4, max_payload_bytes=512)["ceiling_MBps"] == pytest.approx(3938.4615 * 512 / 536, rel=1e-6)
    assert pcie_ceiling(4.0, 4)["reason"] == "unknown (4 GT/s is no PCIe rate)"
    assert pcie_ceiling(None, 4)["ceiling_MBps"] is None


def test_sata_and_sas():
    assert serial_ceiling(6.0)["ceiling_MBps"] == 600 and serial_ceiling(3.0)["ceiling_MBps"] == 300
    assert serial_ceiling(12.0, "SCSI")["ceiling_MBps"] == 1200
    assert serial_ceiling(22.5, "SCSI")["ceiling_MBps"] == pytest.approx(2400)
    assert serial_ceiling(6.0)["how"].startswith("SATA 6 Gb/s × 8/10 / 8 = 600 MB/s")
    assert link_ceiling({"interface_speed_current_Gbps": 6.0, "protocol": "ATA"})["ceiling_MBps"] == 600


# ------------------------------------------------------------------- the recorded sysfs trees


def _record(root: Path, dev: str) -> dict:
    return measure.record_of(measure.locate(dev, True, root), root, with_health=False)


@pytest.mark.parametrize("root, dev, ceiling", [
    (GEN4, "/dev/nvme0n1", 16 * 4 * 128 / 130 / 8 * 1000 * 256 / 280),  # 980 PRO, 16.0 GT/s x4
    (MULTIPATH, "/dev/nvme0n1", 8 * 4 * 128 / 130 / 8 * 1000 * 256 / 280),  # PM1733 trained at 8.0 GT/s x4
])
def test_recorded_trees_give_their_drives_ceiling(bin_dir, root, dev, ceiling):
    got = storage_ceiling(_record(root, dev))
    assert got["ceiling_MBps"] == pytest.approx(ceiling) and got["reason"] is None


def test_recorded_sata_disk_with_its_smartctl(bin_dir):
    """sda of the gen4x4 tree (no link files: AHCI) with a stand-in smartctl playing the real SM843T recording
    (interface_speed current 6.0 Gb/s)."""
    script = bin_dir / "smartctl"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write(open({str(SAMSUNG_SATA)!r}).read())\n"
                      "sys.exit(64)\n")
    script.chmod(0o755)
    assert storage_ceiling(_record(GEN4, "/dev/sda"))["ceiling_MBps"] == 600


def test_recorded_sata_disk_without_smartctl_says_why(bin_dir):
    got = storage_ceiling(_record(GEN4, "/dev/sda"))
    assert got["ceiling_MBps"] is None
    assert got["reason"] == ("unknown (SCSI/SATA disk sda: no SATA/SAS link speed recorded (smartctl: smartctl not "
                             "installed (install the smartmontools package; scripts/install-system-deps does)))")


def test_virtual_disks_have_no_visible_link():
    why = "not an NVMe device (virtio disk vda): no PCIe link of its own"
    vda = {"disk": "vda", "disk_label": "virtio disk vda", "pcie_link": measure.pcie_section(measure.not_available(why))}
    got = storage_ceiling(vda)
    assert got["ceiling_MBps"] is None and got["reason"] == "unknown (virtio disk: the host's link is not visible)"
    fabric = {"disk": "nvme1n1", "disk_label": "NVMe drive nvme1n1",
              "pcie_link": measure.pcie_section(measure.not_available("NVMe over tcp: no PCIe link"))}
    assert storage_ceiling(fabric)["reason"] == "unknown (NVMe over fabrics: the fabric's speed is not recorded)"
    spans = {"disk": None, "reason": "dm-0 spans 2 disks (sda, sdb): one drive's identity and health would not "
             "describe it"}
    assert storage_ceiling(spans)["reason"].startswith("unknown (dm-0 spans 2 disks")
    assert storage_ceiling(None)["reason"] == "unknown (no drive record)"


# ------------------------------------------------------------------------------ the tables


def _sysinfo(dram_text: str | None, drive: dict | None) -> dict:
    rec = dram.record_of(dram_text, "", 0) if dram_text is not None else dram.record_of(VM_STDOUT, VM_STDERR, 1)
    return {"dram": rec, "drive": drive}


def test_ceilings_table():
    table = ceilings_table({"t480s": _sysinfo(read(T480S), _record(GEN4, "/dev/nvme0n1")),
                            "vm": _sysinfo(None, None), "old": {"drive": None}, "imported": None}, None)
    assert list(table.columns) == list(CEILING_COLUMNS) and set(table["unit"]) == {"MB/s"}
    by = {(r.host, r.what): r for r in table.itertuples()}
    assert by["t480s", "DRAM peak"].ceiling == 38_400 and by["t480s", "DRAM peak"].reason == ""
    assert by["t480s", "DRAM peak"].how.startswith("2 channels × 2,400 MT/s × 8 B (DDR4, 2 DIMMs")
    assert by["t480s", "storage interface"].ceiling == pytest.approx(7201.758, rel=1e-6)
    assert pd.isna(by["vm", "DRAM peak"].ceiling) and by["vm", "DRAM peak"].reason == f"unknown ({VM_REASON})"
    assert by["vm", "storage interface"].reason == "unknown (no drive record)"
    assert by["old", "DRAM peak"].reason == ("unknown (sysinfo.json has no dram record: measured before memstor "
                                             "read dmidecode)")
    assert by["imported", "DRAM peak"].reason == "unknown (imported data: no sysinfo.json)"
    given = ceilings_table({"vm": _sysinfo(None, None), "t480s": _sysinfo(read(T480S), None)}, None,
                           memory_channels=2, memory_mts=3200)
    assert list(given.loc[given["what"] == "DRAM peak", "ceiling"]) == [51_200, 51_200]


def test_ceilings_table_from_the_drive_table():
    """A host whose sysinfo has no drive section: its drive comes from the drive table's rows."""
    drives = pd.DataFrame(adrive.drive_rows("lab", _record(MULTIPATH, "/dev/nvme0n1")), columns=adrive.DRIVE_COLUMNS)
    table = ceilings_table({}, drives)
    row = table[(table["host"] == "lab") & (table["what"] == "storage interface")].iloc[0]
    assert row["ceiling"] == pytest.approx(3600.879, rel=1e-6) and row["how"].startswith("8 GT/s × 4 lanes")


def test_above_ceiling_flags_only_what_the_link_cannot_carry():
    """Gen3 x4 (3,601 MB/s usable): a 5,000 MB/s read is the page cache (or compression), 3,000 MB/s is not."""
    ceilings = ceilings_table({"lab": {"drive": _record(MULTIPATH, "/dev/nvme0n1")}}, None)
    points = pd.DataFrame({"host": ["lab", "lab", "lab", "other"], "rw": ["read", "read", "randread", "read"],
                           "bs_bytes": [1 << 20, 1 << 20, 4096, 1 << 20], "direction": ["read"] * 4,
                           "bw_MBps": [5000.0, 3000.0, None, 9000.0]})
    out = above_ceiling(points, ceilings)
    assert list(out.columns) == list(points.columns) + list(ABOVE_COLUMNS)
    assert len(out) == 1 and out.loc[0, "bw_MBps"] == 5000.0
    assert out.loc[0, "ceiling_MBps"] == pytest.approx(3600.879, rel=1e-6)
    assert out.loc[0, "pct_of_ceiling"] == pytest.approx(100 * 5000 / 3600.879, rel=1e-6)
    assert out.loc[0, "flag"] == ABOVE_TEXT == "not the drive (page cache, compression or another device)"
    assert above_ceiling(points.iloc[1:2], ceilings).empty
    assert above_ceiling(points[["bw_MBps"]], ceilings).empty


def test_pct_of_ceiling():
    assert pct_of_ceiling(1800, 3600) == 50.0
    assert pct_of_ceiling(None, 3600) is None and pct_of_ceiling(10, None) is None
    assert pct_of_ceiling(10, float("nan")) is None and pct_of_ceiling(10, 0) is None


def test_ceiling_use_and_the_spec_comparison_keeps_points_above_the_link_out():
    from memstor.report import text

    ceil = pd.DataFrame([{"host": "h", "what": ceilings.DRAM, "ceiling": 38400.0, "unit": "MB/s",
                          "how": "2 channels × 2,400 MT/s × 8 B", "reason": None},
                         {"host": "h", "what": ceilings.STORAGE, "ceiling": 3601.0, "unit": "MB/s",
                          "how": "PCIe 3.0 x4", "reason": None}])
    head = pd.DataFrame({"host": "h", "key": ["peak_bw_MBps", "seq_read_MBps", "seq_write_MBps"],
                         "value": [30720.0, 3300.0, 2800.0], "detail": ["peak injection", "bs 128 KiB", "bs 128 KiB"]})
    use = ceilings.ceiling_use(ceil, head).set_index("what")
    assert use.loc[ceilings.DRAM, "pct_of_ceiling"] == pytest.approx(80.0)
    assert use.loc[ceilings.STORAGE, "measured"] == 3300.0 and use.loc[ceilings.STORAGE, "pct_of_ceiling"] == pytest.approx(91.6, abs=0.1)
    shown = text.ceilings_display(ceilings.ceiling_use(ceil, head))
    assert shown["% of ceiling"].tolist() == ["80 %", "92 %"] and "2,400 MT/s" in shown["from"].iloc[0]
    pts = pd.DataFrame({"host": "h", "bw_MBps": [5000.0, 3000.0], "rw": ["read", "read"]})
    assert ceilings.within_ceiling(pts, ceil)["bw_MBps"].tolist() == [3000.0]
    assert len(ceilings.above_ceiling(pts, ceil)) == 1


def test_profile_keys_give_a_vm_its_dram_ceiling(tmp_path):
    """memory_channels / memory_mts of a profile's mlc-loaded-latency section reach the ceilings table
    (memstor.analysis.profile_settings.dram_overrides); 0 means SMBIOS; a word is refused naming the key."""
    from memstor.analysis.profile_settings import dram_overrides
    from memstor.core.errors import UsageError

    profile = tmp_path / "vm.yaml"
    profile.write_text("mlc-loaded-latency: {memory_channels: 2, memory_mts: 0}\n")
    assert dram_overrides(str(profile)) == {"memory_channels": 2}
    profile.write_text("mlc-loaded-latency: {memory_channels: 2, memory_mts: 3200}\n")
    dram = dram_overrides(str(profile))
    assert dram == {"memory_channels": 2, "memory_mts": 3200}
    table = ceilings_table({"vm": _sysinfo(None, None)}, None, **dram)
    (row,) = table[table["what"] == "DRAM peak"].itertuples()
    assert row.ceiling == 51_200 and "profile's memory_channels" in row.how
    assert dram_overrides("quick") == {} and dram_overrides("pts") == {}  # pts leaves the memory section out
    profile.write_text("mlc-loaded-latency: {memory_channels: two}\n")
    with pytest.raises(UsageError, match="memory_channels='two': use a whole number"):
        dram_overrides(str(profile))
