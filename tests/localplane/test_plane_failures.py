"""What a user meets when the plane cannot start: a port in use, a component that exits. Each is
reported with the component's own words and nothing is left running."""

import socket
import subprocess
import sys

import pytest

from placement.deploy.localplane import ComponentFailed, LocalPlane, Ports
from placement.deploy.localplane.plane import port_base

pytestmark = pytest.mark.controlplane


def test_a_port_in_use_is_named_with_its_component_and_nothing_starts():
    ports = Ports(port_base() + 20)  # beside the session's plane
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", ports.apiserver))
        taken.listen()
        plane = LocalPlane(ports=ports)
        with pytest.raises(ComponentFailed) as failure:
            plane.start()
    assert f"port {ports.apiserver} (kube-apiserver) is in use" in str(failure.value)
    assert plane.processes == []


def test_a_component_that_exits_is_reported_with_its_own_message_and_nothing_is_left_running(tmp_path):
    (tmp_path / "etcd").write_text("a file where etcd wants its data directory")
    plane = LocalPlane(workdir=tmp_path, ports=Ports(port_base() + 40), components=("etcd",))
    with pytest.raises(ComponentFailed) as failure:
        plane.start()
    assert failure.value.component == "etcd"
    assert "not a directory" in failure.value.message  # etcd's own words
    assert plane.running() == []


def test_an_unknown_port_base_is_refused_naming_the_setting(monkeypatch):
    monkeypatch.setenv("ATLAS_CONTROLPLANE_PORT_BASE", "http")
    with pytest.raises(ComponentFailed, match="ATLAS_CONTROLPLANE_PORT_BASE='http' is not a port number"):
        LocalPlane()


@pytest.mark.controlplane
def test_the_plane_starts_from_a_celery_worker_whose_address_space_is_limited(plane_binaries, tmp_path):
    # A Celery pool process runs with ATLAS_WORKER_MEMORY_LIMIT_MB as its soft RLIMIT_AS (config/celery.py);
    # the plane's Go programs and etcd's 10 GiB bbolt mmap must not inherit it ("Try on a control plane").
    script = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (2048 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))
from placement.deploy.localplane import LocalPlane, Ports
plane = LocalPlane(workdir=__import__("pathlib").Path({str(tmp_path)!r}), ports=Ports({port_base() + 80}), components=("etcd",))
plane.start()
print("running:", plane.running())
plane.stop()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "running: ['etcd']" in done.stdout
