"""The drive wired in: which disk a test-file folder or raw device is on (recorded sysfs trees), the
drive record of ``memstor sysinfo`` and of sysinfo.json (identity, PCIe link, health before/after and
the difference), and memstor.analysis.drive's tables. Tool outputs are the real recordings of
tests/data/drive/ (SOURCES.md names each one), played by stand-in ``nvme`` / ``smartctl`` programs;
one test reads this machine's own drive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

import memstor.experiments as experiments
from memstor.analysis import drive as adrive
from memstor.analysis.dataset import Dataset, HostData, load_dataset
from memstor.analysis.specs import SpecSheet, load_specs
from memstor.core.schema import FIO_COLUMNS
from memstor.measure import drive as measure
from memstor.parse.drive import parse_nvme_smart_log
from test_drive import AUTOVAL, GEN4, IRONIC_SN730, MULTIPATH, SAMSUNG_SATA, fake_tool, read

SYSROOT = Path(__file__).resolve().parent / "data" / "sysroot"
LVM_MD = SYSROOT / "nvme-lvm-md"
BTRFS_LUKS = SYSROOT / "nvme-btrfs-luks"
SPECS = Path(__file__).resolve().parents[1] / "data" / "specs"
ID_NS = json.dumps({"nsze": 1953525168, "ncap": 1953525168, "nuse": 1, "flbas": 0,
                    "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]})  # constructed (SOURCES.md)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch) -> Path:
    """A PATH holding only the stand-in tools a test writes (none: no nvme, no smartctl)."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def assert_value_or_reason(section: dict) -> None:
    """Every field of a section is a value or a complete not-available record."""
    assert section["fields"], section
    for field, v in section["fields"].items():
        if isinstance(v, dict):
            assert v["available"] is False and v["reason"], (field, v)
            assert v["status"] == f"not available ({v['reason']})" and "\n" not in v["status"]


def nvme_tools(bin_dir: Path, smart_log: str | None = None) -> Path:
    """A stand-in nvme answering id-ctrl (WD SN730), id-ns and smart-log (autoval recording or smart_log)."""
    return fake_tool(bin_dir, "nvme", {"id-ctrl": (0, read(IRONIC_SN730), ""), "id-ns": (0, ID_NS, ""),
                                       "smart-log": (0, smart_log or read(AUTOVAL / "nvme_smartlog.json"), "")})


# --------------------------------------------------------------------------------- which disk


@pytest.mark.parametrize("root, path, raw, block, disk", [
    (LVM_MD, "/", False, "nvme0n1p2", "nvme0n1"),            # a partition -> its disk
    (LVM_MD, "/data/scratch", False, "dm-0", "sda"),        # LVM on sda1 (holders/ only in this tree)
    (LVM_MD, "/dev/md127", True, "md127", "sdc"),           # md on a whole disk
    (BTRFS_LUKS, "/data", False, "dm-0", "sda"),            # btrfs on LUKS on sda1 (anonymous 0:NN)
    (BTRFS_LUKS, "/home", False, "nvme0n1p2", "nvme0n1"),   # btrfs subvolume
    (GEN4, "/dev/nvme0n1p1", True, "nvme0n1p1", "nvme0n1"),
])
def test_locate_finds_the_one_disk(root, path, raw, block, disk):
    where = measure.locate(path, raw, root)
    assert (where["block_device"], where["disks"], where["disk"], where["reason"]) == (block, [disk], disk, None)
    assert where["disk_label"].endswith(disk)


@pytest.mark.parametrize("root, path, raw, reason", [
    (LVM_MD, "/proc", False, "proc on /proc is not on a local block device"),
    (GEN4, "/dev/nope", True, "/dev/nope is not a block device (no nope in /sys/class/block)"),
])
def test_locate_without_a_disk_says_why(root, path, raw, reason):
    where = measure.locate(path, raw, root)
    assert where["disk"] is None and where["reason"] == reason
    rec = measure.record_of(where, root)
    for name in ("identity", "pcie_link", "health"):
        assert rec[name]["available"] is False and rec[name]["reason"] == reason
        assert_value_or_reason(rec[name])


@pytest.fixture
def striped(tmp_path) -> Path:
    """A sysfs tree (written here, kernel layout): md0 striped over sda and sdb, dm-1 on the partition sda1."""
    root = tmp_path / "root"
    devs = root / "sys/devices"
    for rel in ("pci/block/sda/sda1", "pci/block/sdb", "virtual/block/md0/slaves", "virtual/block/dm-1/slaves"):
        (devs / rel).mkdir(parents=True)
    (devs / "pci/block/sda/sda1/partition").write_text("1\n")
    cls = root / "sys/class/block"
    cls.mkdir(parents=True)
    for name, rel in (("sda", "pci/block/sda"), ("sda1", "pci/block/sda/sda1"), ("sdb", "pci/block/sdb"),
                      ("md0", "virtual/block/md0"), ("dm-1", "virtual/block/dm-1")):
        (cls / name).symlink_to(devs / rel)
    for holder, member in (("md0", "sda"), ("md0", "sdb"), ("dm-1", "sda1")):
        (devs / ("virtual/block/" + holder) / "slaves" / member).symlink_to(cls / member)
    return root


def test_several_disks_are_not_one_drive(striped, bin_dir):
    assert measure.underlying_disks("md0", striped) == ["sda", "sdb"]
    assert measure.underlying_disks("dm-1", striped) == ["sda"]  # slaves/sda1 -> its disk
    where = measure.locate("/dev/md0", True, striped)
    assert where["disk"] is None and where["disks"] == ["sda", "sdb"]
    assert where["reason"] == "md0 spans 2 disks (sda, sdb): one drive's identity and health would not describe it"
    rec = measure.drive_record("/dev/md0", True, striped)
    assert rec["health"]["fields"]["temperature_C"]["status"].startswith("not available (md0 spans 2 disks")
    assert measure.locate("/dev/dm-1", True, striped)["disk"] == "sda"


# ------------------------------------------------------------------------------ drive records


def test_drive_record_nvme_with_nvme_cli(bin_dir):
    log = nvme_tools(bin_dir)
    rec = measure.drive_record("/dev/nvme0n1p1", raw=True, root=GEN4)
    assert rec["disk"] == "nvme0n1" and rec["disk_label"] == "NVMe drive nvme0n1"
    ident, link, health = (rec[k]["fields"] for k in ("identity", "pcie_link", "health"))
    assert (ident["model"], ident["firmware"]) == ("WDC PC SN730 SDBQNTY-256G-1001", "11170101")
    assert (ident["lba_format_index"], ident["lba_size_bytes"], ident["metadata_size_bytes"]) == (0, 512, 0)
    assert ident["volatile_write_cache"] is True and ident["capacity_bytes"] == 1953525168 * 512
    assert ident["nvme_version"] == "1.3" and ident["serial_number_private"]
    assert (link["current_link_speed_GTps"], link["current_link_width"], link["pcie_generation_max"]) == (16.0, 4, 4)
    assert (health["temperature_C"], health["percentage_used_pct"], health["data_units_written"]) == (33, 0, 47217872)
    assert health["media_errors"] == 0 and rec["health"]["source"] == "nvme-cli"
    for name in ("identity", "pcie_link", "health"):
        assert_value_or_reason(rec[name])
    assert log.read_text().splitlines() == ["id-ctrl /dev/nvme0 -o json", "id-ns /dev/nvme0n1 -o json",
                                            "smart-log /dev/nvme0 -o json"]  # each tool once


def test_drive_record_without_tools_keeps_sysfs_and_says_why(bin_dir):
    rec = measure.drive_record("/dev/nvme0n1", raw=True, root=GEN4)
    ident = rec["identity"]["fields"]
    assert ident["model"] == "Samsung SSD 980 PRO 1TB" and ident["capacity_bytes"] == 1000204886016
    assert ident["volatile_write_cache"] is True  # sysfs write back
    assert ident["lba_format_index"]["reason"].startswith("not in sysfs; nvme not installed (install the nvme-cli")
    assert rec["pcie_link"]["fields"]["max_link_width"] == 4
    assert rec["health"]["available"] is False
    assert "smartctl not installed (install the smartmontools package" in rec["health"]["reason"]
    assert_value_or_reason(rec["identity"])
    assert_value_or_reason(rec["health"])


def test_drive_record_sata_with_smartctl(bin_dir):
    fake_tool(bin_dir, "smartctl", {"*": (64, read(SAMSUNG_SATA), "")})
    rec = measure.drive_record("/dev/sda", raw=True, root=GEN4)
    ident = rec["identity"]["fields"]
    assert ident["model"] == "SAMSUNG MZ7WD240HAFV-00003" and ident["interface_speed_max_Gbps"] == 6.0
    assert ident["lba_format_index"]["reason"] == "NVMe only (SCSI/SATA disk sda is not NVMe)"
    assert rec["pcie_link"]["reason"] == "not an NVMe device (SCSI/SATA disk sda): no PCIe link of its own"
    h = rec["health"]["fields"]
    assert (h["percentage_used_pct"], h["media_errors"], h["temperature_C"]) == (9, 0, 27)
    assert h["data_units_written"]["reason"] == "smartctl reports none for this drive"  # ATA: bytes, not NVMe units


def test_permission_denied_is_a_reason(bin_dir):
    fake_tool(bin_dir, "nvme", {"*": (1, "", "open: Permission denied\n")})
    refused = {"json_format_version": [1, 0], "smartctl": {"version": [7, 4], "exit_status": 2, "messages": [
        {"string": "Smartctl open device: /dev/nvme0n1 failed: Permission denied", "severity": "error"}]}}
    fake_tool(bin_dir, "smartctl", {"*": (2, json.dumps(refused), "")})
    rec = measure.drive_record("/dev/nvme0n1", raw=True, root=GEN4)
    assert rec["health"]["status"] == "not available (permission denied (needs root))"
    assert rec["identity"]["fields"]["model"] == "Samsung SSD 980 PRO 1TB"  # sysfs needs no privileges


def test_drive_record_on_this_machine(tmp_path):
    """The real drive under a temporary folder: never an exception, every field a value or a reason,
    the disk and its size as sysfs says them (read here independently)."""
    rec = measure.drive_record(tmp_path)
    json.dumps(rec)
    for name in ("identity", "pcie_link", "health"):
        assert_value_or_reason(rec[name])
    st = os.stat(tmp_path).st_dev
    node = Path(f"/sys/dev/block/{os.major(st)}:{os.minor(st)}")
    if not node.exists():
        assert rec["disk"] is None and "not on a local block device" in rec["reason"]
        return
    d = node.resolve()
    d = d.parent if (d / "partition").exists() else d
    if (d / "slaves").is_dir() and any((d / "slaves").iterdir()):
        assert rec["block_device"] == d.name
        return
    assert rec["disk"] == d.name
    size = rec["identity"]["fields"]["capacity_bytes"]
    assert size == int((d / "size").read_text()) * 512
    raw = measure.drive_record(f"/dev/{d.name}", raw=True)
    assert raw["disk"] == d.name and raw["identity"]["fields"]["capacity_bytes"] == size
    if d.name.startswith("vd"):  # a virtio disk: no NVMe/SMART, no PCIe link of its own
        assert rec["health"]["reason"] == f"not an NVMe or SMART device (virtio disk {d.name})"
        assert rec["pcie_link"]["reason"].startswith(f"not an NVMe device (virtio disk {d.name})")


@pytest.mark.fio
@pytest.mark.loadlat
def test_memstor_sysinfo_has_the_drive(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "memstor.cli", "sysinfo", "--target", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    info = json.loads(proc.stdout)
    assert info["drive"]["path"] == str(tmp_path) and set(info["drive"]) >= {"identity", "pcie_link", "health"}
    assert info["drive"]["block_device"] == measure.locate(tmp_path)["block_device"]
    proc = subprocess.run([sys.executable, "-m", "memstor.cli", "sysinfo", "--device", "/dev/null"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    drive = json.loads(proc.stdout)["drive"]
    assert drive["raw"] is True and drive["reason"] == "/dev/null is not a block device (no null in /sys/class/block)"


# ------------------------------------------------------------------------- before, after, runs


def snapshot(units: int, temp_K: int = 306, device: str = "nvme0n1") -> dict:
    """A health section of the autoval smart-log recording with data_units_written and temperature set."""
    log = json.loads(read(AUTOVAL / "nvme_smartlog.json"))
    log.update(data_units_written=units, temperature=temp_K)
    rec = dict(parse_nvme_smart_log(json.dumps(log)), available=True, device=device, collected_at=f"t{units}")
    return measure.health_section(rec)


def nvme_run(where: dict, before: dict, after: dict) -> dict:
    return {**where, "identity": {"available": True, "fields": {"model": "M", "serial_number_private": "S1"}},
            "health_before": before, "health_after": after, "health_delta": measure.delta_section(before, after)}


def test_delta_section_and_merge_keep_the_earliest_before():
    where = {"disk": "nvme0n1"}
    first = nvme_run(where, snapshot(47217872), snapshot(47219872, 310))
    d = first["health_delta"]["fields"]
    assert d["data_units_written"] == 2000 and d["data_written_bytes"] == 2000 * 512000
    assert d["temperature_C"] == 4 and d["media_errors"] == 0 and d["percentage_used_pct"] == 0
    second = nvme_run(where, snapshot(47220000), snapshot(47221000))
    merged = measure.merge_runs(first, second)
    assert merged["health_before"]["collected_at"] == "t47217872" and merged["health_after"]["collected_at"] == "t47221000"
    assert merged["health_delta"]["fields"]["data_units_written"] == 47221000 - 47217872
    other = dict(second, identity={"available": True, "fields": {"model": "M", "serial_number_private": "S2"}})
    assert measure.merge_runs(first, other)["health_before"]["collected_at"] == "t47220000"  # another drive
    moved = dict(second, disk="nvme1n1")
    assert measure.merge_runs(first, moved)["health_before"]["collected_at"] == "t47220000"
    unread = dict(first, health_before=measure.unavailable_section(measure.HEALTH_FIELDS, "nvme not installed"))
    assert measure.merge_runs(unread, second)["health_before"]["collected_at"] == "t47220000"


def test_delta_of_a_counter_that_went_down_says_so():
    d = measure.delta_section(snapshot(5000), snapshot(4000))
    assert d["fields"]["data_units_written"]["status"] == "not available (went down (5000 -> 4000): another " \
                                                          "drive or a reset, no difference taken)"
    gone = measure.delta_section(measure.unavailable_section(measure.HEALTH_FIELDS, "no tool"), snapshot(1))
    assert gone["status"] == "not available (health before the experiments: no tool)"
    assert_value_or_reason(gone)


@pytest.fixture
def stub_storage_family(monkeypatch):
    """run_experiment with a storage family whose run only logs the call, and health snapshots that log
    theirs and count data units up by 1000 each time."""
    calls: list[str] = []
    count = iter(range(1000, 100000, 1000))

    def run(params, *, data_root, target_dir, host, progress, session):
        calls.append("run")
        session.measured += 1  # it measured a point (a run that measures nothing leaves sysinfo.json alone)
        return pd.DataFrame({"status": ["done"]})

    def fake_snapshot(where, root=measure.SYSTEM_ROOT):
        calls.append(f"snapshot {where['disk']}")
        return snapshot(next(count), device=where["disk"] or "?")

    fam = types.SimpleNamespace(KIND="fio", EXPERIMENT="fio-stub", run=run)
    monkeypatch.setattr(experiments._registry, "family", lambda name: fam)  # the registry run_experiment asks
    monkeypatch.setattr(measure, "health_snapshot", fake_snapshot)
    return calls


@pytest.mark.fio
@pytest.mark.loadlat
def test_run_experiment_snapshots_around_the_sweep(tmp_path, stub_storage_family):
    data = tmp_path / "data"
    experiments.run_experiment("fio-stub", {}, data_root=data, host="t", progress=False)
    disk = measure.locate(data / "scratch")["disk"]
    assert stub_storage_family == [f"snapshot {disk}", "run", f"snapshot {disk}"]
    info = json.loads((data / "processed" / "t" / "sysinfo.json").read_text())
    drv = info["drive"]
    assert drv["disk"] == disk and drv["health_before"]["fields"]["data_units_written"] == 1000
    assert drv["health_delta"]["fields"]["data_units_written"] == 1000
    assert_value_or_reason(drv["identity"])
    experiments.run_experiment("fio-stub", {}, data_root=data, host="t", progress=False)
    drv = json.loads((data / "processed" / "t" / "sysinfo.json").read_text())["drive"]
    assert drv["health_before"]["fields"]["data_units_written"] == 1000  # the earliest, same drive
    assert drv["health_after"]["fields"]["data_units_written"] == 4000
    assert drv["health_delta"]["fields"]["data_units_written"] == 3000
    storage_path = json.loads((data / "processed" / "t" / "sysinfo.json").read_text())["machine"]["storage_path"]
    experiments.write_sysinfo(data, "t", None, {"kind": "memory"})  # a memory run keeps the storage record
    info = json.loads((data / "processed" / "t" / "sysinfo.json").read_text())
    assert info["drive"] == drv
    assert storage_path and info["machine"]["storage_path"] == storage_path  # and what its target's path means


# ------------------------------------------------------------------------------------ analysis


def host(name: str, sysinfo: dict | None) -> HostData:
    return HostData(name=name, tables=["fio.csv"], sysinfo=sysinfo)


def dataset(hosts: list[HostData], fio_hosts: list[str]) -> Dataset:
    return Dataset(data_dir=Path("."), hosts=hosts, fio=pd.DataFrame({"host": fio_hosts}), mlc=pd.DataFrame())


@pytest.fixture
def nvme_drive(bin_dir) -> dict:
    """A storage run's drive section for the GEN4 tree with nvme-cli (the real recordings), 2000 data
    units written between the snapshots, 33 -> 37 C."""
    nvme_tools(bin_dir)
    where = measure.locate("/dev/nvme0n1", True, GEN4)
    before = measure.health_snapshot(where, GEN4)
    log = json.loads(read(AUTOVAL / "nvme_smartlog.json"))
    log.update(data_units_written=log["data_units_written"] + 2000, temperature=310)
    nvme_tools(bin_dir, json.dumps(log))
    after = measure.health_snapshot(where, GEN4)
    return json.loads(json.dumps(measure.run_record(where, before, after, GEN4), sort_keys=True))  # as stored


@pytest.fixture
def vda_drive() -> dict:
    """A virtio disk's drive section as this kind of VM stores it (sysfs only; built from measure's records)."""
    why = "not an NVMe or SMART device (virtio disk vda)"
    ident = {"device": "vda", "available": False, "reason": why, "status": f"not available ({why})",
             "sources": ["sysfs"], "tools": {"smartctl": measure.not_available(why)}, "notes": [],
             "capacity_bytes": 274877906944, "logical_block_size_bytes": 512, "physical_block_size_bytes": 4096,
             "write_cache": "write back",
             "volatile_write_cache": True, "rotational": True}
    where = {"path": "/x", "raw": False, "block_device": "vda", "disks": ["vda"], "disk": "vda",
             "disk_label": "virtio disk vda", "reason": None}
    na = measure.unavailable_section(measure.HEALTH_FIELDS, why)
    return {**where, "identity": measure.identity_section(ident),
            "pcie_link": measure.pcie_section(measure.not_available(
                "not an NVMe device (virtio disk vda): no PCIe link of its own")),
            "health_before": na, "health_after": na, "health_delta": measure.delta_section(na, na)}


def test_drive_table_rows_units_and_reasons(nvme_drive, vda_drive):
    ds = dataset([host("box", {"drive": nvme_drive}), host("vm", {"drive": vda_drive}),
                  host("old", {"cpu": {}}), HostData(name="imported", tables=["fio.csv"]),
                  HostData(name="mem", tables=["mlc.csv"], sysinfo={"device": {"kind": "memory"}})],
                 ["box", "vm", "old", "imported"])
    t = adrive.drive_table(ds)
    assert list(t.columns) == list(adrive.DRIVE_COLUMNS)
    assert list(dict.fromkeys(t["host"])) == ["box", "vm", "old", "imported"]  # memory-only left out
    assert not t["field"].str.endswith("_private").any()
    box = t[t["host"] == "box"].set_index("field")
    assert list(box.index[:3]) == ["model", "firmware", "capacity_bytes"]  # measure's order, not sorted
    assert box.loc["model", "value"] == "WDC PC SN730 SDBQNTY-256G-1001" and box.loc["model", "section"] == "identity"
    assert (box.loc["capacity_bytes", "unit"], box.loc["current_link_speed_GTps", "unit"]) == ("bytes", "GT/s per lane")
    assert (box.loc["max_link_width", "value"], box.loc["max_link_width", "unit"]) == (4, "lanes")
    w = box.loc["data_written_bytes"]
    assert (w["section"], w["available"], w["delta"]) == ("health", True, 2000 * 512000)
    assert w["value_after"] - w["value_before"] == 2000 * 512000 and w["value"] == w["value_after"]
    temp = box.loc["temperature_C"]
    assert (temp["value_before"], temp["value_after"], temp["delta"], temp["unit"]) == (33, 37, 4, "°C")
    assert temp["note"] == "33 → 37, delta +4"
    assert box.loc["critical_warning", "note"] == "0 → 0" and pd.isna(box.loc["critical_warning", "delta"])
    vm = t[t["host"] == "vm"].set_index("field")
    assert vm.loc["capacity_bytes", "available"] and vm.loc["capacity_bytes", "value"] == 274877906944
    assert vm.loc["model", "note"] == "not available (not in sysfs; not an NVMe or SMART device (virtio disk vda))"
    assert vm.loc["lba_format_index", "note"] == "not available (NVMe only (virtio disk vda is not NVMe))"
    assert vm.loc["volatile_write_cache", "note"] == ""
    assert not vm.loc[vm["section"] == "pcie_link", "available"].any()
    assert (vm.loc[vm["section"] == "health", "note"] == "not available (not an NVMe or SMART device (virtio disk vda))").all()
    assert set(vm["section"]) == {"identity", "pcie_link", "health"}
    assert t.loc[t["host"] == "old", "note"].item().startswith("not available (sysinfo.json has no drive record")
    assert t.loc[t["host"] == "imported", "note"].item() == "not available (imported data: no sysinfo.json, so no drive record)"


def test_drive_table_of_a_live_sysinfo_and_through_load_dataset(tmp_path, bin_dir):
    nvme_tools(bin_dir)
    live = measure.drive_record("/dev/nvme0n1", True, GEN4)  # memstor sysinfo's shape: health now
    folder = tmp_path / "processed" / "box"
    folder.mkdir(parents=True)
    (folder / "sysinfo.json").write_text(json.dumps({"drive": live}, sort_keys=True, default=str))
    row = dict.fromkeys(FIO_COLUMNS, "")
    row.update(source="x.json", jobname="j", rw="randread", direction="read", bs_bytes=4096, iodepth=1, iops=1000)
    pd.DataFrame([row], columns=list(FIO_COLUMNS)).to_csv(folder / "fio.csv", index=False)
    t = adrive.drive_table(load_dataset(tmp_path)).set_index("field")
    assert t.loc["temperature_C", "value"] == 33 and t.loc["temperature_C", "value_after"] == 33
    assert pd.isna(t.loc["temperature_C", "value_before"]) and t.loc["lba_size_bytes", "value"] == 512


def sheet(interface: str | None) -> SpecSheet:
    return SpecSheet(path=Path("x.yaml"), device=f"drive {interface}", vendor="v", availability_note="",
                     device_facts={} if interface is None else {"interface": interface})


def test_interface_check_matched_differs_and_not_available(bin_dir, vda_drive):
    nvme_tools(bin_dir)
    gen4 = measure.run_record(measure.locate("/dev/nvme0n1", True, GEN4), {}, {}, GEN4)
    gen3 = measure.run_record(measure.locate("/dev/nvme0n1", True, MULTIPATH), {}, {}, MULTIPATH)
    ds = dataset([host("gen4", {"drive": gen4}), host("gen3", {"drive": gen3}), host("vm", {"drive": vda_drive})],
                 ["gen4", "gen3", "vm"])
    sheets = load_specs(SPECS) + [sheet("PCIe Gen3 x4"), sheet("SATA 6 Gb/s"), sheet(None)]
    t = adrive.interface_check(ds, sheets)
    assert list(t.columns) == list(adrive.INTERFACE_COLUMNS) and len(t) == 3 * 4
    p5600 = t[t["device"] == "Intel SSD D7-P5600 1.6 TB"].set_index("host")
    assert p5600.loc["gen4", "measured_interface"] == "PCIe 4.0 x4" and p5600.loc["gen4", "flag"] == "matched"
    assert p5600.loc["gen3", "measured_interface"] == "PCIe 3.0 x4 (max PCIe 4.0 x4)"
    assert p5600.loc["gen3", "flag"] == ("differs: PCIe 3.0 x4 measured, sheet says PCIe 4.0 x4 (the drive can "
                                         "PCIe 4.0 x4: the slot or the link trained lower)")
    assert p5600.loc["vm", "flag"] == "not available (not an NVMe device (virtio disk vda): no PCIe link of its own)"
    assert pd.isna(p5600.loc["vm", "measured_interface"])
    g3 = t[t["device"] == "drive PCIe Gen3 x4"].set_index("host")
    assert g3.loc["gen3", "flag"] == "matched"
    assert g3.loc["gen4", "flag"] == "differs: PCIe 4.0 x4 measured, sheet says PCIe Gen3 x4"
    assert (t.loc[t["device"] == "drive SATA 6 Gb/s", "flag"] ==
            "not available (sheet interface 'SATA 6 Gb/s' is not a PCIe link)").all()
    assert (t.loc[t["device"] == "drive None", "flag"] == "not available (the sheet states no interface)").all()


@pytest.mark.parametrize("text, parsed", [("PCIe 4.0 x4", (4, 4)), ("PCIe Gen4x4", (4, 4)), ("NVMe PCIe Gen 3.0 x2", (3, 2)),
                                          ("PCI Express 5.0", (5, None)), ("SATA 6 Gb/s", None), ("", None)])
def test_parse_spec_interface(text, parsed):
    assert adrive.parse_spec_interface(text) == parsed


def test_drive_line(nvme_drive, vda_drive):
    line = adrive.drive_line(nvme_drive)
    assert line.startswith("NVMe drive nvme0n1: WDC PC SN730 SDBQNTY-256G-1001, firmware 11170101, 1000.2 GB, ")
    assert "; PCIe 4.0 x4; health: 1.0 GB written during the runs, 33 → 37 °C, 0 % used, 0 media errors" in line
    vm = adrive.drive_line(vda_drive)
    assert vm.startswith("virtio disk vda: model not available (not in sysfs; not an NVMe or SMART device")
    assert "274.9 GB, 6 of 12 identity fields read; PCIe link not available" in vm
    assert vm.endswith("health not available (not an NVMe or SMART device (virtio disk vda))")
    assert adrive.drive_line({"path": "/dev/shm", "disk": None, "reason": "tmpfs on /dev/shm is not on a local "
                              "block device"}) == "/dev/shm: not available (tmpfs on /dev/shm is not on a local block device)"
    assert "\n" not in line and "\n" not in vm


def test_a_failing_drive_reader_never_stops_a_run(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(measure, "health", boom)
    monkeypatch.setattr(measure, "identity", boom)
    where = measure.locate("/dev/nvme0n1", True, GEN4)
    snap = measure.health_snapshot(where, GEN4)
    assert snap["status"] == "not available (reading health failed (RuntimeError: boom))"
    rec = measure.run_record(where, snap, snap, GEN4)
    assert rec["identity"]["reason"] == "reading the drive failed (RuntimeError: boom)"
    assert_value_or_reason(rec["identity"])
    assert_value_or_reason(rec["health_delta"])
