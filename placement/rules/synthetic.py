"""Synthetic catalog documents for tests and benchmarks (not catalog data).

`make_document` builds one valid `ProjectDocument` from the few fields the rules read, filling the
prose fields of the template with placeholders. `synthetic_catalog` grows a catalog to any size by
adding generated projects in the roles a stack needs (schedulers, admission, device handoffs,
mechanisms, exporters, workload APIs, platforms) next to optional real documents, so compose and
compare run on realistic candidate sets.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from placement.catalog.schemas import ProjectDocument

CONTROL_TO_PLANE = {"L0": "control", "L1": "control", "L2": "control", "L3": "control", "L4": "data"}
CONTROL_TO_ARCH = {
    "L0": "scheduling-decision",
    "L1": "cluster-governance",
    "L2": "scheduling-decision",
    "L3": "scheduling-decision",
    "L4": "node-execution",
}


def make_document(
    slug: str,
    *,
    kind: str = "component",
    layer: str = "L2",
    secondary: Sequence[str] = (),
    plane: str | None = None,
    plane_secondary: Sequence[str] = (),
    units: Sequence[str] = ("whole_gpu",),
    roles: dict[str, Sequence[str]] | None = None,
    capabilities: Sequence[str] = ("pod-binding",),
    misuses: dict[str, str] | None = None,
    requires: Sequence[str] = (),
    bundles: Sequence[str] = (),
    conflicts: Sequence[str] = (),
    name: str | None = None,
) -> ProjectDocument:
    """A valid catalog document; `roles` maps a contract point (advertise/bind/allocate) to units."""
    plane = plane or CONTROL_TO_PLANE[layer]
    if not misuses:
        misuses = {"hardware-partitioning": "Expect it to split a GPU"} if layer == "L1" else {
            "per-team-quota": "Expect it to enforce team quotas"
        }
    data = {
        "slug": slug,
        "name": name or slug.replace("-", " ").title(),
        "kind": kind,
        "homepage": f"https://example.org/{slug}",
        "summary": f"Synthetic project {slug}.",
        "placement": {
            "maps": {
                "control-plane": {"primary": layer, "secondary": list(secondary)},
                "planes": {"primary": plane, "secondary": list(plane_secondary)},
                "architecture": {"primary": CONTROL_TO_ARCH[layer], "secondary": []},
            },
            "resource_units": list(units),
            "enforcement_points": ["scheduler" if layer in ("L2", "L3") else "admission" if layer == "L1" else "node_agent"],
            "promise": f"{slug} does its job.",
            "non_promise": ["Nothing else."],
            "costs": {"overhead": "Low.", "reconfiguration": "Live.", "intrusiveness": "Low.", "compatibility": "Broad."},
            "observability": ["Metrics."],
            "dependencies": {"upstream": ["Something above."], "downstream": ["Something below."], "requires": list(requires)},
            "failure_modes": ["It breaks."],
            "contract_points": [
                {"point": point, "units": list(role_units), "how": f"{slug} {point}s {', '.join(role_units)}."}
                for point, role_units in (roles or {}).items()
            ],
            "capabilities": list(capabilities),
            "misuses": [
                {"expectation": text, "capability": cap, "why": "Another layer owns it."} for cap, text in misuses.items()
            ],
            "bundles": list(bundles),
            "conflicts_with": list(conflicts),
            "sources": [{"title": "Synthetic", "url": "https://example.org/synthetic", "tag": "U"}],
        },
    }
    return ProjectDocument.model_validate(data)


_SCHED_CAPS = ["gang-scheduling", "fair-sharing", "job-queueing", "preemption", "backfill", "topology-aware-placement", "bin-packing"]
_ADM_CAPS = ["admission-control", "job-queueing", "fair-sharing", "preemption"]
_UNITS = ["whole_gpu", "mig_instance", "memory_compute_share", "mps_share", "time_slice", "dra_device"]
_MECH = {
    "mig_instance": ["hardware-partitioning", "gpu-memory-isolation", "fault-isolation"],
    "memory_compute_share": ["gpu-sharing", "gpu-memory-isolation", "compute-isolation"],
    "mps_share": ["gpu-sharing", "compute-isolation"],
    "time_slice": ["gpu-sharing", "raise-per-gpu-utilisation"],
}


def _generated(i: int, rng: random.Random, existing: set[str]) -> ProjectDocument:
    role = rng.choices(
        ["scheduler", "admission", "handoff", "mechanism", "exporter", "workload", "platform"],
        weights=[20, 12, 18, 14, 12, 14, 10],
    )[0]
    slug = f"syn-{role}-{i}"
    if role == "scheduler":
        units = rng.sample(_UNITS, rng.randint(2, 5))
        caps = ["pod-binding", *rng.sample(_SCHED_CAPS, rng.randint(1, 5))]
        plugin = rng.random() < 0.3
        return make_document(slug, layer="L2", secondary=rng.choice([(), ("L1",), ("L3",)]), units=units,
                             roles={"bind": units}, capabilities=caps, requires=["kube-scheduler"] if plugin and "kube-scheduler" in existing else [])
    if role == "admission":
        units = rng.sample(_UNITS, rng.randint(2, 6))
        caps = ["per-team-quota", *rng.sample(_ADM_CAPS, rng.randint(1, 3))]
        return make_document(slug, layer="L1", units=units, roles={"bind": units}, capabilities=caps,
                             requires=["kube-scheduler"] if "kube-scheduler" in existing else [])
    if role == "handoff":
        units = rng.sample(_UNITS, rng.randint(1, 4))
        caps = ["device-discovery", "device-allocation", *rng.sample(["device-health", "gpu-sharing", "metering"], rng.randint(0, 2))]
        return make_document(slug, layer="L4", units=units, roles={"advertise": units, "allocate": units}, capabilities=caps)
    if role == "mechanism":
        unit = rng.choice(list(_MECH))
        return make_document(slug, kind="mechanism", layer="L4", units=[unit], capabilities=_MECH[unit])
    if role == "exporter":
        return make_document(slug, layer="L4", units=["node"], capabilities=rng.sample(["gpu-telemetry", "metering", "device-health"], 2))
    if role == "workload":
        return make_document(slug, layer="L0", secondary=("L3",), units=["whole_gpu", "mig_instance"],
                             capabilities=["workload-definition", "pod-lifecycle"])
    return make_document(slug, kind="platform", layer="L4", plane="platform", plane_secondary=["data"], units=["whole_gpu"],
                         capabilities=["driver-lifecycle", *rng.sample(["gpu-telemetry", "device-health", "self-service"], 2)])


def synthetic_catalog(size: int, *, base: Iterable[ProjectDocument] = (), seed: int = 7) -> list[ProjectDocument]:
    """`base` documents plus generated ones up to `size` projects in total (deterministic per seed)."""
    rng = random.Random(seed)
    documents = list(base)
    existing = {d.slug for d in documents}
    i = 0
    while len(documents) < size:
        doc = _generated(i, rng, existing)
        documents.append(doc)
        existing.add(doc.slug)
        i += 1
    return documents
