"""What a scenario's pool advertises, per extended resource, under its stack's data planes.

Used to derive quotas (e.g. Kueue nominal quotas by tenant weight) that cover every resource the
mechanism's pods will request, so an admission layer added to a stack is not inadmissible by
construction. Builds nodes exactly as the simulator does.
"""

from __future__ import annotations

from scheduler_core.cluster import GPU, Node
from scheduler_core.scenario import Scenario

GPU_MEMORY = "nvidia.com/gpumem"  # HAMi's per-pod memory request, in MiB


def advertised_capacity(scenario: Scenario) -> dict[str, float]:
    totals: dict[str, float] = {}
    for group in scenario.pool.node_groups:
        layouts = group.mig_layouts(scenario.parameters.driver_slot_choice)
        data_plane = scenario.stack.data_plane_for(group.name)
        node = Node(f"{group.name}-probe", group.name, 0, 0, group.spec, group.gpus_per_node, group.link,
                    group.numa_nodes, data_plane, layouts)
        for resource, count in node.advertised.items():
            # HAMi slots are tracked internally as "hami/nvidia.com/gpu" but pods' quota usage
            # counts them as nvidia.com/gpu (DeviceRequest.quota_usage).
            if data_plane.mechanism == "hami" and resource == "hami/" + GPU:
                resource = GPU
            totals[resource] = totals.get(resource, 0.0) + count * group.count
        if data_plane.mechanism == "hami":
            memory = sum(c.memory_mib for c in node.contexts) * data_plane.hami.device_memory_scaling
            totals[GPU_MEMORY] = totals.get(GPU_MEMORY, 0.0) + memory * group.count
    return dict(sorted(totals.items()))
