"""Bundles applied to the real control plane (kube-apiserver, Kueue, kube-scheduler, KWOK nodes), and the
differential check of the simulator against them. One plane for the session (conftest.py)."""

import json
import os
from pathlib import Path

import pytest

from placement.deploy import export_scenario
from placement.deploy.localplane.scenarios import generate, generate_kueue_features, workload_objects
from placement.deploy.localplane.trial import bundle_kueue_config, clean, try_scenario
from scheduler_core import load_scenario

pytestmark = pytest.mark.controlplane

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"
# The Kueue + kube-scheduler scenarios among the built-in ones.
KUEUE_SCENARIOS = ["starved-tenant-kueue", "form-b-hami-kueue", "topology-cliff-kueue-tas"]
# ATLAS_DIFFERENTIAL_SCENARIOS: how many generated scenarios (CI: 50); the report lands in
# ATLAS_DIFFERENTIAL_REPORT when set (docs/controlplane.md quotes it).
DIFFERENTIAL = int(os.environ.get("ATLAS_DIFFERENTIAL_SCENARIOS", "50"))
# seed -> the upstream behaviour that makes Kueue / kube-scheduler and the simulator differ (docs/controlplane.md)
KNOWN_DISAGREEMENTS: dict[int, str] = {}
# The same for generate_kueue_features (fair sharing, Cohort trees, flavorFungibility, preemption):
# ATLAS_DIFFERENTIAL_FEATURE_SCENARIOS seeds (default 20), report in ATLAS_DIFFERENTIAL_FEATURE_REPORT.
FEATURE_DIFFERENTIAL = int(os.environ.get("ATLAS_DIFFERENTIAL_FEATURE_SCENARIOS", "20"))
KNOWN_FEATURE_DISAGREEMENTS: dict[int, str] = {
    10: "a victim's quota is released when its Job has stopped (jobframework reconciler: !job.IsActive()), "
        "1.0-1.2 s after the preemption on the plane; a workload created 1.05 s after the preemptor got node b "
        "first. The simulator releases and requeues the victims at the instant of preemption.",
}


def _trial(plane, scenario, workloads=None):
    export = export_scenario(scenario)
    plane.use_kueue_config(bundle_kueue_config(export))  # Kueue as the bundle's helm install configures it
    try:
        return try_scenario(plane.kube, scenario, export=export, workloads=workloads)
    finally:
        clean(plane.kube, scenario, export, workloads)


@pytest.mark.parametrize("name", KUEUE_SCENARIOS)
def test_a_kueue_stacks_bundle_is_accepted_and_each_workload_runs_or_waits_as_the_simulator_says(plane, name):
    trial = _trial(plane, load_scenario(SCENARIOS / f"{name}.yaml"))
    assert [(r.file, r.kind, r.name, r.message) for r in trial.rejected] == []
    assert trial.workloads
    assert [(w.name, w.note) for w in trial.workloads if w.agree is False] == []


def _differential(plane, generator, seeds: int, known: dict[int, str], report_env: str) -> None:
    """Every seed's workloads on the plane and in the simulator; the report (per seed: agreement and each
    disagreement in both sides' words) lands in $report_env when set, rewritten after each seed. Fails on
    a disagreeing seed not in ``known``."""
    report, unexplained = [], []
    for seed in range(seeds):
        scenario = generator(seed)
        trial = _trial(plane, scenario, workload_objects(scenario))
        assert trial.rejected == [], (seed, trial.rejected)
        agree, judged = trial.agreement
        report.append({"seed": seed, "agree": agree, "judged": judged,
                       "disagreements": [{"workload": w.name, "note": w.note, "kueue": w.admission_message,
                                          "pending": w.pending_messages, "simulator": w.sim_reason}
                                         for w in trial.workloads if w.agree is False]})
        if agree < judged and seed not in known:
            unexplained.append(report[-1])
        if os.environ.get(report_env):  # after every seed: a long run can be read while it goes
            Path(os.environ[report_env]).write_text(json.dumps(report, indent=2))
    assert unexplained == []


def test_the_simulator_agrees_with_kueue_and_kube_scheduler_on_generated_scenarios(plane):
    _differential(plane, generate, DIFFERENTIAL, KNOWN_DISAGREEMENTS, "ATLAS_DIFFERENTIAL_REPORT")


def test_the_simulator_agrees_with_kueue_on_feature_scenarios_fair_sharing_cohort_trees_and_fungibility(plane):
    _differential(plane, generate_kueue_features, FEATURE_DIFFERENTIAL, KNOWN_FEATURE_DISAGREEMENTS,
                  "ATLAS_DIFFERENTIAL_FEATURE_REPORT")
