"""Export -> import -> export is the identity for generated catalogs, not only the shipped one:
texts with YAML-significant characters, several lines or any script, list fields in any order."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.catalog.files import write_catalog_dir
from placement.catalog.schemas import ProjectDocument
from placement.catalog.services.catalog import catalog_export, catalog_import
from tests.conftest import CATALOG_DIR

pytestmark = pytest.mark.django_db

TRICKY = ["yes", "no", "null", "~", "- item", "key: value", "# not a comment", "'quoted'", '"double"', "|", ">",
          "%", "@", "`", "1e3", "0x10", "2026-12-01", "…", "GPU 显存", "\t tab"]  # fmt: skip
TEXT = (
    st.one_of(
        st.sampled_from(TRICKY),
        st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30),
        st.lists(st.sampled_from(TRICKY + ["line"]), min_size=2, max_size=3).map("\n".join),
    )
    .map(str.strip)
    .filter(bool)
)
BASES = ["kueue", "hami", "mig", "dcgm-exporter", "gpu-operator"]


@st.composite
def generated_document(draw, index: int) -> ProjectDocument:
    data = yaml.safe_load((CATALOG_DIR / f"{draw(st.sampled_from(BASES))}.yaml").read_text())
    data["slug"] = f"generated-{index}-{draw(st.integers(0, 999))}"
    data["name"], data["summary"] = draw(TEXT), draw(TEXT)
    placement = data["placement"]
    placement["promise"] = draw(TEXT)
    placement["non_promise"] = draw(st.lists(TEXT, min_size=1, max_size=3))
    placement["failure_modes"] = draw(st.lists(TEXT, min_size=1, max_size=3))
    placement["costs"]["overhead"] = draw(TEXT)
    for name in ("resource_units", "enforcement_points", "capabilities"):
        placement[name] = draw(st.permutations(placement[name]))
    for misuse in placement["misuses"]:
        misuse["why"] = draw(TEXT)
    # references to other catalog projects are left out: a generated catalog stands alone
    placement["dependencies"]["requires"], placement["bundles"], placement["conflicts_with"] = [], [], []
    return ProjectDocument.model_validate(data)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_export_import_export_of_a_generated_catalog_is_byte_identical(tmp_path_factory, data):
    documents = [data.draw(generated_document(i)) for i in range(data.draw(st.integers(1, 3)))]
    generated, first, second = (tmp_path_factory.mktemp(n) for n in ("generated", "first", "second"))
    write_catalog_dir(documents, generated)
    catalog_import(generated)
    catalog_export(first)
    catalog_import(first)
    catalog_export(second)
    for doc in documents:
        name = f"{doc.slug}.yaml"
        assert (second / name).read_text(encoding="utf-8") == (first / name).read_text(encoding="utf-8")
        assert (second / name).read_bytes() == (first / name).read_bytes()
        assert ProjectDocument.model_validate(yaml.safe_load((first / name).read_text(encoding="utf-8"))) == doc
