"""Try a saved stack on the local control plane (placement.deploy.localplane): its bundle, as the manifests
endpoint serves it, applied to KWOK nodes shaped like its pools, beside the simulator's answer."""

from __future__ import annotations

from typing import Callable

import yaml

from placement.deploy.services.bundles import stack_export
from placement.stacks.models import Stack


def kueue_manager_config(export) -> dict | None:
    """The Kueue Configuration the bundle installs: the chart's `managerConfig.controllerManagerConfigYaml`
    in kueue/values.yaml (integrations for the bundle's workload kinds, waitForPodsReady, fair
    sharing), so the plane's Kueue runs with what an operator's `helm install` would give it."""
    values = export.file("kueue/values.yaml")
    text = ((values.values if values else {}).get("managerConfig") or {}).get("controllerManagerConfigYaml")
    return yaml.safe_load(text) if text else None


def try_stack(stack: Stack, *, run_id=None, scenario_name: str | None = None,
              progress: Callable[[str], None] | None = None) -> dict:
    """Start a plane, try the stack's bundle on it, stop the plane; the trial as a dict.
    Raises ValidationError (from stack_export) or placement.deploy.localplane.ComponentFailed."""
    from placement.deploy.localplane import LocalPlane
    from placement.deploy.localplane.trial import try_scenario

    result = stack_export(stack, run_id=run_id, scenario_name=scenario_name)
    with LocalPlane(kueue_config=kueue_manager_config(result.export), progress=progress) as plane:
        trial = try_scenario(plane.kube, result.scenario, export=result.export, progress=progress)
    return {"stack": stack.pk, "name": stack.name, "source": result.source, **trial.as_dict()}
