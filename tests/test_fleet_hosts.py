"""Host files of fleet runs (issue 20): typed model and one-line errors naming file, host and key."""

import pytest

from memstor.core.errors import UsageError
from memstor.measure.fleet_hosts import Host, load_hosts


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # errors name the file as given: "hosts.yaml: ..."


def _write(tmp_path, text):
    (tmp_path / "hosts.yaml").write_text(text)
    return "hosts.yaml"


def test_issue_example_and_defaults(tmp_path):
    key = tmp_path / "id_ed25519"
    key.write_text("k")
    hosts = load_hosts(_write(tmp_path, f"""
hosts:
  - ssh: root@node1          # SSH destination
    target: /mnt/nvme/memstor
    label: node1-nvme
    memstor: memstor
  - ssh: admin@10.0.0.2
    port: 2222
    identity_file: {key}
    device: /dev/nvme1n1
    confirm_device: /dev/nvme1n1
"""))
    assert hosts[0] == Host(ssh="root@node1", label="node1-nvme", target="/mnt/nvme/memstor")
    h = hosts[1]
    assert (h.label, h.hostname, h.port, h.device, h.target, h.memstor) == (
        "10.0.0.2", "10.0.0.2", 2222, "/dev/nvme1n1", None, "memstor")
    assert h.ssh_args() == ["-p", "2222", "-i", str(key), "-o", "IdentitiesOnly=yes"]


@pytest.mark.parametrize("entry, message", [
    ("- ssh: root@n1\n    target: /t\n  - ssh: root@node2\n    target: scratch",
     "hosts.yaml: host 2 (root@node2): target: must be an absolute path, got 'scratch'"),
    ("- ssh: root@n1\n    label: node2", "hosts.yaml: host 1 (node2): target: missing"),
    ("- target: /t", "hosts.yaml: host 1: ssh: missing (required)"),
    ("- ssh: '-oProxyCommand=x'\n    target: /t", "hosts.yaml: host 1 (-oProxyCommand=x): ssh: not an SSH destination"),
    ("- ssh: n1\n    target: /t\n    port: 70000", "hosts.yaml: host 1 (n1): port: must be an integer 1..65535"),
    ("- ssh: n1\n    target: /t\n    prot: 22", "hosts.yaml: host 1 (n1): prot: unknown key"),
    ("- ssh: n1\n    device: /dev/sdb", "hosts.yaml: host 1 (n1): confirm_device: a raw device is written only when named twice"),
    ("- ssh: n1\n    device: /dev/sdb\n    confirm_device: /dev/sdc", "confirm_device: a raw device"),
    ("- ssh: n1\n    target: /t\n    device: /dev/sdb\n    confirm_device: /dev/sdb", "device: give either target:"),
    ("- ssh: n1\n    target: /t\n    identity_file: /nonexistent/key", "identity_file: no such file /nonexistent/key"),
    ("- ssh: n1\n    target: /t\n    label: 'a b'", "host 1 (a b): label: must be letters"),
    ("- ssh: n1\n    target: /t\n  - ssh: root@n1\n    target: /u", "hosts.yaml: host 2 (n1): label: same as host 1"),
    ("- just-a-string", "hosts.yaml: host 1: entry: must be a mapping"),
])
def test_errors_name_file_host_and_key(tmp_path, entry, message):
    with pytest.raises(UsageError) as e:
        load_hosts(_write(tmp_path, "hosts:\n  " + entry + "\n"))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text, message", [
    ("", "hosts.yaml: expected a mapping with a 'hosts:' list"),
    ("hosts: []", "hosts.yaml: hosts: must be a non-empty list"),
    ("hosts:\n  - ssh: n1\n    target: /t\nextra: 1", "hosts.yaml: extra: unknown top-level key"),
    ("hosts: [ssh: : :", "hosts.yaml: not valid YAML at line 1"),
])
def test_file_level_errors(tmp_path, text, message):
    with pytest.raises(UsageError) as e:
        load_hosts(_write(tmp_path, text))
    assert str(e.value).startswith(message)


def test_missing_file(tmp_path):
    with pytest.raises(UsageError, match="cannot read host file"):
        load_hosts(tmp_path / "nope.yaml")
