from pathlib import Path

import pytest

from placement.catalog.files import read_catalog_dir
from placement.rules import build_graph

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def graph():
    return build_graph(read_catalog_dir(ROOT / "fixtures" / "catalog"))
