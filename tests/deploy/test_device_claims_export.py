"""Issue 34: the export writes a workload's DRA claim and HAMi card filters as the scenario states them.

Field names are resource.k8s.io/v1's (ResourceClaimSpec.devices.requests[].exactly: deviceClassName,
allocationMode, count, selectors[].cel.expression; PodResourceClaim.resourceClaimName /
resourceClaimTemplateName)."""

from __future__ import annotations

from placement.deploy.workloads import workload_files
from scheduler_core.scenario import parse_scenario


def _objects(mechanism: str, unit: dict) -> list[dict]:
    sc = parse_scenario({
        "name": "claims", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2}]},
        "stack": {"data_plane": {"mechanism": mechanism}},
        "workloads": [{"kind": "batch", "name": "job", "duration": "1h", "memory_gib": 8, "unit": unit}]})
    (file,) = [f for f in workload_files(sc) if f.path == "workloads/job.yaml"]
    return file.objects


def _pod_spec(obj: dict) -> dict:
    spec = obj["spec"]
    while "template" not in spec:
        spec = next(v for v in spec.values() if isinstance(v, dict) and ("template" in v or "spec" in v))
        spec = spec.get("spec", spec)
    return spec["template"]["spec"]


def test_a_stated_claim_is_written_with_its_class_selectors_and_mode():
    sel = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
    objs = _objects("dra", {"dra": {"device_class": "mig.nvidia.com", "selectors": [sel], "count": 2}})
    template = objs[0]
    assert template["kind"] == "ResourceClaimTemplate"
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly == {"deviceClassName": "mig.nvidia.com", "allocationMode": "ExactCount", "count": 2,
                       "selectors": [{"cel": {"expression": sel}}]}


def test_a_shared_claim_is_one_resourceclaim_the_pods_name():
    objs = _objects("dra", {"dra": {"allocation_mode": "All", "resource_claim_name": "shared-gpus"}})
    claim = objs[0]
    assert claim["kind"] == "ResourceClaim" and claim["metadata"]["name"] == "shared-gpus"
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu.nvidia.com",
                                                                  "allocationMode": "All"}
    assert _pod_spec(objs[-1])["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "shared-gpus"}]


def test_hami_card_filters_are_pod_annotations():
    objs = _objects("hami", {"hami": {"gpu": 1, "gpumem": 8192}, "annotations": {"nvidia.com/use-gputype": "A100"}})
    spec = objs[-1]["spec"]
    while "template" not in spec:
        spec = next(v for v in spec.values() if isinstance(v, dict))
    assert spec["template"]["metadata"]["annotations"]["nvidia.com/use-gputype"] == "A100"
