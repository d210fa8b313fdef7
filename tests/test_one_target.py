"""one_target (issue 38, seventh read S11-loop 2): every storage experiment of a device measured the target most of
its points measured, the one sysinfo.json (page 1) names. Built from the loop run's point metas
(tests/data/review-s11/loop/targets.json, SOURCES.md there): nine experiments on /dev/loop0, the mixed-load map on
a file on vda, and sysinfo.json written by the mixed-load map last."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd

from memstor.analysis.validity.targets import off_target, target_rows

DATA = json.loads((Path(__file__).resolve().parent / "data" / "review-s11" / "loop" / "targets.json").read_text())
HOST = "vm-loop328"


def _rows(metas, sysinfo_device=None) -> pd.DataFrame:
    sysinfo = {HOST: {"device": sysinfo_device}} if sysinfo_device else None
    return pd.DataFrame(target_rows(metas, sysinfo)).set_index("subject")


def test_the_mixed_load_map_on_another_drive_and_sysinfo_naming_it_fail():
    """The loop run: the mixed-load map's 6 points on a file on vda against 92 storage points on /dev/loop0 fail,
    with both targets named, and are left out; sysinfo.json naming vda fails; the ten fio experiments pass; the
    memory experiments have no row."""
    v = _rows(DATA["metas"], DATA["sysinfo_device"])
    mixed = v.loc["mixed-load-map"]
    assert (mixed["status"], mixed["value"], mixed["low"], mixed["high"]) == ("fail", 0.0, 1.0, 1.0)
    assert mixed["evidence"] == ("6 on a file on vda (filesystem) of its 6 points, while the device's storage points "
                                 "measured /dev/loop0 (raw device)")
    assert v.loc["sysinfo.json", "status"] == "fail" and "while 92 of 98 storage points measured /dev/loop0" in \
        v.loc["sysinfo.json", "evidence"]
    fio = v.drop(index=["mixed-load-map", "sysinfo.json"])
    assert len(fio) == 10 and set(fio["status"]) == {"pass"} and set(fio["value"]) == {1.0}
    assert not any(s.startswith(("mem-", "mlc-")) for s in v.index)
    assert off_target(DATA["metas"], {HOST: {"device": DATA["sysinfo_device"]}}) == {(HOST, "mixed-load-map")}


def test_one_target_passes_where_every_point_and_sysinfo_agree_and_is_unchecked_without_records():
    """The other sides: the mixed-load map's points on /dev/loop0 too, sysinfo naming it: every row passes, nothing
    is left out; one point of an experiment elsewhere fails it (a share below 1); no device recorded: unchecked."""
    loop = next(m["device"] for m in DATA["metas"] if m["experiment"] == "fio-queue-depth")
    same = [dict(m, device=loop) if m["experiment"] == "mixed-load-map" else m for m in DATA["metas"]]
    v = _rows(same, loop)
    assert set(v["status"]) == {"pass"} and off_target(same, {HOST: {"device": loop}}) == set()
    one_off = copy.deepcopy(same)
    i = next(i for i, m in enumerate(one_off) if m["experiment"] == "fio-block-size")
    one_off[i]["device"] = DATA["sysinfo_device"]
    row = _rows(one_off).loc["fio-block-size"]
    assert row["status"] == "fail" and row["value"] == 7 / 8 and row["evidence"].startswith("1 on a file on vda")
    bare = [dict(m, device=None) for m in DATA["metas"]]
    v = _rows(bare, DATA["sysinfo_device"])
    assert set(v["status"]) == {"unchecked"} and "sysinfo.json" not in v.index
    assert v.loc["fio-queue-depth", "evidence"].startswith("not checked: none of its 10 points recorded its target")
