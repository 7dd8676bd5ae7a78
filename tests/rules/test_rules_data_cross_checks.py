"""A review board's edit of fixtures/rules/ that names something the engine does not know fails with
a problem that says where (file section) and what (the unknown name), one problem per mistake."""

from __future__ import annotations

import shutil

import pytest
import yaml

from placement.catalog.schemas import builtin_vocabulary
from placement.rules import RulesDataError, read_rules
from placement.rules.data import RulesData, builtin_rules

from .conftest import RULES_DIR


def _problems(**changes) -> list[str]:
    data = {**builtin_rules().model_dump(), **changes}
    return RulesData.model_validate(data).problems(builtin_vocabulary())


def _dump(name: str) -> list[dict]:
    return builtin_rules().model_dump()[name]


def test_the_shipped_tables_have_no_problem():
    assert _problems() == []


def test_a_table_missing_an_entry_names_what_is_missing():
    assert _problems(units=[u for u in _dump("units") if u["unit"] != "fraction"]) == ["units: missing ['fraction']"]
    assert _problems(verdicts=[v for v in _dump("verdicts") if v["verdict"] != "overlapping"]) == [
        "verdicts: missing ['overlapping']"]
    assert _problems(contract_points=[c for c in _dump("contract_points") if c["point"] != "bind"]) == [
        "contract_points: missing ['bind']"]
    assert _problems(isolation=[i for i in _dump("isolation") if i["level"] != "soft"]) == ["isolation: missing ['soft']"]
    assert _problems(unit_fit=[f for f in _dump("unit_fit") if f["unit"] != "mig_instance"]) == [
        "unit_fit: missing ['mig_instance']"]


def test_a_missing_slot_is_named():
    assert _problems(slots=[s for s in _dump("slots") if s["slot"] != "observability"]) == ["slots: missing ['observability']"]


def test_the_node_unit_needs_no_fit_rule():
    assert _problems(unit_fit=[f for f in _dump("unit_fit") if f["unit"] != "node"]) == []


def test_unknown_capabilities_are_named_with_the_section_that_names_them():
    gang = {**_dump("gang"), "capability": "telepathy"}
    assert _problems(gang=gang) == ["gang: unknown capability 'telepathy'"]
    excluded = [*_dump("excluded_capabilities"), {"capability": "telepathy", "why": "x"}]
    assert _problems(excluded_capabilities=excluded) == ["excluded_capabilities: unknown capability 'telepathy'"]
    goals = _dump("goals")
    goals[0]["capability_preferences"].append({"capability": "telepathy", "points": 1, "why": "x"})
    assert _problems(goals=goals) == [f"goals.{goals[0]['goal']}: unknown capability 'telepathy'"]


def test_unknown_tenancy_capabilities_are_named_for_required_and_preferred_ones():
    tenancy = _dump("tenancy")
    tenancy[0]["required_capabilities"].append({"capability": "telepathy", "why": "x"})
    tenancy[1]["capability_preferences"].append({"capability": "clairvoyance", "points": 1, "why": "x"})
    assert _problems(tenancy=tenancy) == [
        f"tenancy.{tenancy[0]['multi_tenant']}: unknown capability 'telepathy'",
        f"tenancy.{tenancy[1]['multi_tenant']}: unknown capability 'clairvoyance'",
    ]


def test_a_verdict_offering_an_unknown_axis_is_named():
    verdicts = _dump("verdicts")
    verdicts[0]["axes"].append("vibes")
    verdicts[1]["control_axes"] = ["mood"]
    assert _problems(verdicts=verdicts) == [
        f"verdicts.{verdicts[0]['verdict']}: unknown axis 'vibes'",
        f"verdicts.{verdicts[1]['verdict']}: unknown axis 'mood'",
    ]


def test_a_slot_on_an_unknown_map_layer_or_capability_is_named():
    slots = _dump("slots")
    slots[0]["map"] = "atlas"
    slots[1]["layers"] = ["L1", "L9"]
    slots[2]["any_capability"] = ["telepathy"]
    assert _problems(slots=slots) == [
        f"slots.{slots[0]['slot']}: unknown map 'atlas'",
        f"slots.{slots[1]['slot']}: unknown layer 'L9' on map 'control-plane'",
        f"slots.{slots[2]['slot']}: unknown capability 'telepathy'",
    ]


def test_a_profile_with_an_unknown_goal_repeated_pools_or_a_class_in_no_pool_is_named():
    profiles = _dump("profiles")
    first = profiles[0]
    first["default_slo"]["goal"] = "cheapest"
    first["required_capabilities"].append({"capability": "telepathy", "why": "x"})
    first["pools"].append({**first["pools"][0]})
    first["workloads"][0]["pool"] = "nowhere"
    name = first["profile"]
    assert _problems(profiles=profiles) == [
        f"profiles.{name}: unknown goal 'cheapest'",
        f"profiles.{name}: unknown capability 'telepathy'",
        f"profiles.{name}: pool names repeat",
        f"profiles.{name}.workloads.{first['workloads'][0]['name']}: unknown pool 'nowhere'",
    ]


def _copy_rules(tmp_path):
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_a_rules_file_that_is_not_a_mapping_is_refused_by_name(tmp_path):
    directory = _copy_rules(tmp_path)
    (directory / "units.yaml").write_text("- just\n- a list\n")
    with pytest.raises(RulesDataError) as exc:
        read_rules(directory)
    assert exc.value.problems == ["units.yaml: expected a mapping at the top level"]
    assert str(exc.value) == "units.yaml: expected a mapping at the top level"


def test_every_problem_of_an_edited_directory_is_reported_at_once(tmp_path):
    directory = _copy_rules(tmp_path)
    composition = yaml.safe_load((directory / "composition.yaml").read_text())
    composition["slots"][0]["any_capability"] = ["telepathy"]
    composition["slots"][1]["any_capability"] = ["clairvoyance"]
    (directory / "composition.yaml").write_text(yaml.safe_dump(composition))
    with pytest.raises(RulesDataError) as exc:
        read_rules(directory)
    assert len(exc.value.problems) == 2
    assert str(exc.value) == "; ".join(exc.value.problems)


def test_gpu_models_and_mig_tables_are_found_whatever_the_spelling():
    rules = builtin_rules()
    assert rules.gpu_model("  a100-80gb ").model == "A100-80GB"
    assert rules.gpu_model("A100-80GB").mig_capable is True
    assert rules.gpu_model("T4").mig_capable is False
    assert rules.gpu_model("TPU-v5") is None
    assert rules.mig_profiles_for(" a100-80gb") == rules.mig_profiles["A100-80GB"]
    assert rules.mig_profiles_for("T4") == {}
    assert rules.largest_gpu.memory_gb == max(m.memory_gb for m in rules.gpu_models)


def test_tenancy_rules_are_found_per_tenancy_and_default_to_no_demands():
    rules = builtin_rules()
    assert rules.tenancy_for(True).multi_tenant is True
    assert rules.tenancy_for(False).multi_tenant is False
    bare = RulesData.model_validate({**rules.model_dump(), "tenancy": []})
    none = bare.tenancy_for(True)
    assert (none.multi_tenant, none.required_capabilities, none.capability_preferences) == (True, [], [])


def test_the_projects_that_decide_who_binds_come_from_the_interface_table():
    rules = builtin_rules()
    assert rules.binder_sensitive == {slug for slug, i in rules.interfaces.items() if i.rewrites_scheduler_name or i.bound_by}
    assert {"hami", "volcano-vgpu-device-plugin"} <= rules.binder_sensitive
    assert "kueue" not in rules.binder_sensitive
