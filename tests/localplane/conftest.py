"""One local control plane for the whole session (tests marked `controlplane`): started once, each
test cleans what it created. Ports: ATLAS_CONTROLPLANE_PORT_BASE (default placement.deploy.localplane.plane).

The whole-plane tests run by default (`make test` builds the binaries first with controlplane/build.sh;
a cold build takes minutes, later runs reuse the cache): ATLAS_CONTROLPLANE_TESTS=0 skips them, e.g. for
a quick run on a machine without the binaries. The failure-mode tests always run. tests/conftest.py runs
the whole-plane tests last, after the rest of the suite."""

from __future__ import annotations

import os

import pytest


def _whole_plane_tests_on() -> None:
    if os.environ.get("ATLAS_CONTROLPLANE_TESTS", "1") == "0":
        pytest.skip("whole-plane tests switched off: ATLAS_CONTROLPLANE_TESTS=0")


@pytest.fixture(scope="session")
def plane_binaries():
    """The plane's binaries, built or taken from the cache (a build failure fails the test with the
    component's own message)."""
    _whole_plane_tests_on()
    from placement.deploy.localplane.plane import COMPONENTS, binary

    return {c: binary(c) for c in COMPONENTS}


@pytest.fixture(scope="session")
def plane(plane_binaries):
    from placement.deploy.localplane import LocalPlane

    with LocalPlane() as p:
        yield p
