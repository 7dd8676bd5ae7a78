"""One local control plane for the whole session (tests marked `controlplane`): started once, each
test cleans what it created. Ports: ATLAS_CONTROLPLANE_PORT_BASE (default placement.localplane.plane)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def plane():
    from placement.localplane import LocalPlane

    with LocalPlane() as p:
        yield p
