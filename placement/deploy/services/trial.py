"""Try a saved stack on the local control plane (placement.deploy.localplane): its bundle, as the manifests
endpoint serves it, applied to KWOK nodes shaped like its pools, beside the simulator's answer."""

from __future__ import annotations

from typing import Callable

from placement.deploy.services.bundles import stack_export
from placement.stacks.models import Stack


def try_stack(stack: Stack, *, run_id=None, scenario_name: str | None = None,
              progress: Callable[[str], None] | None = None) -> dict:
    """Start a plane, try the stack's bundle on it, stop the plane; the trial as a dict.
    Raises ValidationError (from stack_export) or placement.deploy.localplane.ComponentFailed."""
    from placement.deploy.localplane import LocalPlane
    from placement.deploy.localplane.trial import (bundle_coscheduling_values, bundle_kueue_config,
                                                   bundle_volcano_values, try_on_plane)

    result = stack_export(stack, run_id=run_id, scenario_name=scenario_name)
    export = result.export
    with LocalPlane(kueue_config=bundle_kueue_config(export), volcano_values=bundle_volcano_values(export),
                    coscheduling_values=bundle_coscheduling_values(export), progress=progress) as plane:
        trial = try_on_plane(plane, result.scenario, export=result.export, progress=progress)
    return {"stack": stack.pk, "name": stack.name, "source": result.source, **trial.as_dict()}
