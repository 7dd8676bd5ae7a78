"""The one-page template refuses incomplete or wrong documents, naming the field and the reason."""

import copy

import pytest

from placement.catalog.files import CatalogInvalid, parse_document


def errors_of(data) -> dict[str, str]:
    with pytest.raises(CatalogInvalid) as exc:
        parse_document(data, "x.yaml")
    return {e.field: e.reason for e in exc.value.errors}


def test_valid_document_parses(kueue_data):
    doc = parse_document(kueue_data, "kueue.yaml")
    assert doc.placement.plane == "control"
    assert doc.placement.layers_on("control-plane") == ["L1"]


def test_missing_promise_is_named(kueue_data):
    data = copy.deepcopy(kueue_data)
    del data["placement"]["promise"]
    assert errors_of(data) == {"placement.promise": "Field required"}


def test_empty_sources_are_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["sources"] = []
    assert "placement.sources" in errors_of(data)


def test_wrong_type_is_named(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["non_promise"] = "one string instead of a list"
    errors = errors_of(data)
    assert "placement.non_promise" in errors
    assert "list" in errors["placement.non_promise"].lower()


def test_unknown_layer_is_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["maps"]["control-plane"]["primary"] = "L9"
    errors = errors_of(data)
    assert any("unknown layer 'L9'" in reason for reason in errors.values())


def test_missing_map_placement_is_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    del data["placement"]["maps"]["architecture"]
    assert any("no placement on map 'architecture'" in r for r in errors_of(data).values())


def test_unknown_resource_unit_is_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["resource_units"] = ["whole_gpu", "quantum_gpu"]
    errors = errors_of(data)
    assert "placement.resource_units[1]" in errors


def test_unknown_capability_is_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["capabilities"].append("teleportation")
    assert any("unknown capability 'teleportation'" in r for r in errors_of(data).values())


def test_unknown_field_is_refused(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["colour"] = "green"
    assert "placement.colour" in errors_of(data)


def test_source_url_must_be_a_link(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["sources"][0]["url"] = "not a url"
    assert "placement.sources[0].url" in errors_of(data)


def test_primary_layer_cannot_also_be_secondary(kueue_data):
    data = copy.deepcopy(kueue_data)
    data["placement"]["maps"]["control-plane"]["secondary"] = ["L1"]
    assert any("both primary and secondary" in r for r in errors_of(data).values())
