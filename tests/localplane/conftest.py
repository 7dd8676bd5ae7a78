"""One local control plane for the whole session (tests marked `controlplane`): started once, each
test cleans what it created. Ports: ATLAS_CONTROLPLANE_PORT_BASE (default placement.deploy.localplane.plane).

The whole-plane tests run when ATLAS_CONTROLPLANE_TESTS=1: they need the binaries built by
controlplane/build.sh (hours on a cold machine) and take minutes; docs/controlplane.md ("Status") records
the last run. The failure-mode tests always run."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def plane():
    if os.environ.get("ATLAS_CONTROLPLANE_TESTS") != "1":
        pytest.skip("whole-plane tests are opt-in until the plane has been seen to start: ATLAS_CONTROLPLANE_TESTS=1")
    from placement.deploy.localplane import LocalPlane

    with LocalPlane() as p:
        yield p
