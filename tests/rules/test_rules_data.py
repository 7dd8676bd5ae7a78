"""The rule tables in fixtures/rules/ are data a review board can read, extend and break loudly."""

from __future__ import annotations

import shutil

import pytest
import yaml

from placement.catalog.schemas import ContractPoint, ResourceUnit, builtin_vocabulary
from placement.rules import RulesDataError, Verdict, read_rules
from placement.rules.data import SlotName

from .conftest import RULES_DIR


def test_rule_tables_load_and_agree_with_the_vocabulary():
    rules = read_rules()
    assert {u.unit for u in rules.units} == set(ResourceUnit)
    assert {v.verdict for v in rules.verdicts} == set(Verdict)
    assert {c.point for c in rules.contract_points} == set(ContractPoint)
    assert {s.slot for s in rules.slots} == set(SlotName)
    assert set(rules.profile) == {"training", "online_inference", "batch_inference", "interactive", "mixed"}
    assert rules.problems(builtin_vocabulary()) == []


def test_comparable_verdict_offers_the_seed_axes():
    axes = read_rules().verdict[Verdict.COMPARABLE].axes
    assert axes == ["isolation", "overhead", "observability", "reconfiguration_cost"]


def test_capability_owner_table_keeps_the_seed_capabilities():
    slugs = {c["slug"] for c in yaml.safe_load((RULES_DIR / "capabilities.yaml").read_text())}
    for slug in ("per-team-quota", "fair-sharing", "gang-scheduling", "gpu-memory-isolation", "fault-isolation",
                 "raise-per-gpu-utilisation", "topology-aware-placement", "device-health", "metering"):
        assert slug in slugs


def test_a_profile_naming_an_unknown_capability_is_rejected_with_its_location(tmp_path):
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    profiles = yaml.safe_load((tmp_path / "profiles.yaml").read_text())
    profiles["profiles"][0]["capability_preferences"].append({"capability": "telepathy", "points": 1, "why": "x"})
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(profiles))
    with pytest.raises(RulesDataError) as exc:
        read_rules(tmp_path)
    assert any("profiles.training" in p and "telepathy" in p for p in exc.value.problems)
