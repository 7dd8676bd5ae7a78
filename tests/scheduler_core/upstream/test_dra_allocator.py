"""kube-scheduler's structured-parameters allocator, ported from kubernetes/kubernetes
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go``
(the table ``TestAllocator`` runs for every allocator implementation; at 008b3652, partitionable cases as
at the stored revision of the same file).

Each case states the claims to allocate (requests: class, count or ``All``, CEL selectors), the
DeviceClasses (``class(classA, driverA)``: ``device.driver == "driver-a"``), the node's ResourceSlices
(pools, devices, counter sets) and the devices already allocated, and expects upstream's result: per
claim the (request, pool, device) pairs in order, None when the claims cannot all be allocated, or the
error. Cases using features the model does not state (admin access, prioritized lists, device taints,
binding conditions, consumable capacity, node selectors of slices) are listed in docs/upstream-tests.md.
"""

import pytest

from scheduler_core.dra import Claim, Device, DraError, Request, allocate, compile_selector, parse_quantity
from scheduler_core.dra import Pool as _Pool

WHERE = "kubernetes@008b3652 structured/internal/allocatortesting/allocator_testing.go TestAllocator"
A, B = "driver-a", "driver-b"
CLASSES = {"class-a": (f'device.driver == "{A}"',), "class-b": (f'device.driver == "{B}"',)}
GI = 2**30


def Pool(name, devices, driver=A, counter_sets=None):  # noqa: N802 - reads as upstream's slice helpers
    return _Pool(name, devices, driver, counter_sets or {})


def mem(name, gib, consumes=None):
    """A device with ``memory`` capacity (the ``fromCounters`` devices publish their consumption)."""
    cons = tuple((cs, {k: (v * GI if k == "memory" else v) for k, v in c.items()}) for cs, c in (consumes or []))
    return Device(name, capacity={"memory": gib * GI} if gib else {}, consumes=cons)


def part(name, consumes):
    return mem(name, 0, consumes)


def one(pool, driver=A):
    return Pool(pool, [Device("device-1")], driver)


def req(name="req-0", cls="class-a", count=1, *sel, mode="ExactCount"):
    return Request(name, cls, tuple(sel), count, mode)


def claim(name, *requests):
    return Claim(name, tuple(requests))


def at_least(gib):
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gib}Gi")) >= 0'


SMALL_LARGE = [mem("device-1", 1), mem("device-2", 2)]
LARGE_SMALL = [mem("device-2", 2), mem("device-1", 1)]
ALL_A = req("req-0", "class-a", mode="All")
ONE_B = req("req-0", "class-b")
ONE_A = req("req-0", "class-a")


def sets(**counters):
    return {"counter-set-1": {k: (v * GI if k == "memory" else v) for k, v in counters.items()}}


# (name, claims, pools, allocated, expected per claim [(request, pool, device)] or None)
CASES = [
    ("simple", [claim("claim-0", req())], [one("pool-1")], [], [[("req-0", "pool-1", "device-1")]]),
    ("small-and-large", [claim("claim-0", req("req-0", "class-a", 1, at_least(1)), req("req-1", "class-a", 1, at_least(2)))],
     [Pool("pool-1", SMALL_LARGE)], [], [[("req-0", "pool-1", "device-1"), ("req-1", "pool-1", "device-2")]]),
    ("small-and-large-backtrack-requests",
     [claim("claim-0", req("req-0", "class-a", 1, at_least(1)), req("req-1", "class-a", 1, at_least(2)))],
     [Pool("pool-1", LARGE_SMALL)], [], [[("req-0", "pool-1", "device-1"), ("req-1", "pool-1", "device-2")]]),
    ("small-and-large-backtrack-claims",
     [claim("claim-0", req("req-0", "class-a", 1, at_least(1))), claim("claim-1", req("req-1", "class-a", 1, at_least(2)))],
     [Pool("pool-1", LARGE_SMALL)], [], [[("req-0", "pool-1", "device-1")], [("req-1", "pool-1", "device-2")]]),
    ("devices-split-across-different-slices", [claim("claim-0", req("req-0", "class-a", 2))],
     [one("pool-1"), one("pool-2")], [], [[("req-0", "pool-1", "device-1"), ("req-0", "pool-2", "device-1")]]),
    ("no-slices", [claim("claim-0", req())], [], [], None),
    ("not-enough-suitable-devices", [claim("claim-0", req("req-0")), claim("claim-0", req("req-1"))],
     [one("pool-1")], [], None),
    ("all-devices-single", [claim("claim-0", ALL_A)], [one("pool-1")], [], [[("req-0", "pool-1", "device-1")]]),
    ("all-devices-many", [claim("claim-0", ALL_A)], [one("pool-1"), one("pool-2")], [],
     [[("req-0", "pool-1", "device-1"), ("req-0", "pool-2", "device-1")]]),
    ("all-devices-plus-another", [claim("claim-0", ALL_A), claim("claim-1", ONE_B)],
     [one("pool-1"), one("pool-1", B)], [], [[("req-0", "pool-1", "device-1")], [("req-0", B, "pool-1", "device-1")]]),
    ("all-devices-plus-another-reversed", [claim("claim-1", ONE_B), claim("claim-0", ALL_A)],
     [one("pool-1"), one("pool-1", B)], [], [[("req-0", B, "pool-1", "device-1")], [("req-0", "pool-1", "device-1")]]),
    ("all-devices-many-plus-another", [claim("claim-0", ALL_A), claim("claim-1", ONE_B)],
     [Pool("pool-1", [Device("device-1"), Device("device-2")]), one("pool-1", B)], [],
     [[("req-0", "pool-1", "device-1"), ("req-0", "pool-1", "device-2")], [("req-0", B, "pool-1", "device-1")]]),
    ("all-devices-many-plus-another-reversed", [claim("claim-1", ONE_B), claim("claim-0", ALL_A)],
     [Pool("pool-1", [Device("device-1"), Device("device-2")]), one("pool-1", B)], [],
     [[("req-0", B, "pool-1", "device-1")], [("req-0", "pool-1", "device-1"), ("req-0", "pool-1", "device-2")]]),
    ("all-devices-no-solution", [claim("claim-1", ONE_A), claim("claim-0", ALL_A)], [one("pool-1")], [], None),
    ("all-devices-no-solution-reversed", [claim("claim-0", ALL_A), claim("claim-1", ONE_A)], [one("pool-1")], [],
     None),
    ("all-devices-slice-without-devices", [claim("claim-0", ALL_A)], [Pool("pool-1", [])], [], None),
    ("all-devices-no-slices", [claim("claim-0", ALL_A)], [], [], None),
    ("all-devices-some-allocated", [claim("claim-0", ALL_A)],
     [Pool("pool-1", [Device("device-1"), Device("device-2")])], [("pool-1", "device-1")], None),
    ("partitionable-devices-single-device", [claim("claim-0", req())],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"memory": 4})])], counter_sets=sets(memory=8))], [],
     [[("req-0", "pool-1", "device-1")]]),
    ("partitionable-devices-multiple-devices", [claim("claim-0", req("req-0"), req("req-1"))],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"memory": 4})]),
                      part("device-2", [("counter-set-1", {"memory": 6})]),
                      part("device-3", [("counter-set-1", {"memory": 4})])], counter_sets=sets(memory=8))], [],
     [[("req-0", "pool-1", "device-1"), ("req-1", "pool-1", "device-3")]]),
    ("partitionable-devices-multiple-counters", [claim("claim-0", req("req-0"), req("req-1"))],
     [Pool("pool-1", [
         part("device-1", [("counter-set-1", {"memory": 4, "cpus": 6}), ("counter-set-2", {"cpus": 4, "memory": 2})]),
         part("device-2", [("counter-set-1", {"memory": 6, "cpus": 4}), ("counter-set-2", {"cpus": 6, "memory": 6})]),
         part("device-3", [("counter-set-1", {"memory": 4, "cpus": 4}), ("counter-set-2", {"cpus": 4, "memory": 4})])],
         counter_sets={**sets(cpus=8, memory=18), "counter-set-2": {"cpus": 12, "memory": 18 * GI}})], [],
     [[("req-0", "pool-1", "device-2"), ("req-1", "pool-1", "device-3")]]),
    ("partitionable-devices-multiple-pools", [claim("claim-0", req("req-0"), req("req-1"))],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"cpus": 6, "memory": 4})]),
                      part("device-2", [("counter-set-1", {"cpus": 4, "memory": 6})]),
                      part("device-3", [("counter-set-1", {"cpus": 4, "memory": 4})])],
           counter_sets=sets(cpus=8, memory=18)),
      Pool("pool-2", [part("device-1", [("counter-set-1", {"cpus": 6, "memory": 4})]),
                      part("device-2", [("counter-set-1", {"cpus": 1, "memory": 7})]),
                      part("device-3", [("counter-set-1", {"cpus": 1, "memory": 7})])],
           counter_sets=sets(cpus=8, memory=18))],
     [("pool-1", "device-2"), ("pool-1", "device-3"), ("pool-2", "device-1")],
     [[("req-0", "pool-2", "device-2"), ("req-1", "pool-2", "device-3")]]),
    ("partitionable-devices-unused-counters-in-counter-set", [claim("claim-0", req("req-0", "class-a", 2))],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"memory": 5})]),
                      part("device-2", [("counter-set-1", {"memory": 4})]),
                      part("device-3", [("counter-set-1", {"memory": 4})])],
           counter_sets={"counter-set-1": {"memory": 8 * GI, "unused": GI}})], [],
     [[("req-0", "pool-1", "device-2"), ("req-0", "pool-1", "device-3")]]),
    ("partitionable-devices-no-capacity-available", [claim("claim-0", req())],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"memory": 4})]),
                      part("device-2", [("counter-set-1", {"memory": 16})])], counter_sets=sets(memory=18))],
     [("pool-1", "device-2")], None),
    ("partitionable-devices-overallocated-capacity-pool", [claim("claim-0", req())],
     [Pool("pool-1", [part("device-1", [("counter-set-1", {"memory": 4})]),
                      part("device-2", [("counter-set-1", {"memory": 20})])], counter_sets=sets(memory=18))],
     [("pool-1", "device-2")], None),
]


@pytest.mark.parametrize("name,claims,pools,allocated,want", CASES, ids=[c[0] for c in CASES])
def test_allocator_matches_upstream(name, claims, pools, allocated, want):
    got = allocate(claims, CLASSES, pools, [(A, p, d) for p, d in allocated])
    if want is not None:  # (request, pool, device) of driver-a, or (request, driver, pool, device)
        want = [[(e[0], (A, *e[1:]) if len(e) == 3 else e[1:]) for e in per_claim] for per_claim in want]
    assert got == want, f"{WHERE} / {name}"


def test_other_node_uses_only_that_nodes_driver():
    # "other-node": node-2's slice carries driver-a's device; node-1's (driver-b) is not on the node. The
    # model allocates per node: the node's pools are the only candidates.
    assert allocate([claim("claim-0", req())], CLASSES, [one("pool-2")]) == [[("req-0", (A, "pool-2", "device-1"))]]
    assert allocate([claim("claim-0", req())], CLASSES, [one("pool-1", B)]) is None


@pytest.mark.parametrize("name,claims,message", [
    ("no-classes / unknown-class", [claim("claim-0", req("req-0", "unknown-class"))],
     "could not retrieve device class unknown-class"),
    ("empty-class", [claim("claim-0", req("req-0", ""))], "claim claim-0, request req-0: missing device class name"),
])
def test_allocator_errors_match_upstream(name, claims, message):
    with pytest.raises(DraError, match=message):
        allocate(claims, CLASSES, [one("pool-1")])


# ------------------------------------------------------------------ the model's own selector checks
def test_selectors_read_attributes_of_the_drivers_domain():
    d = Device("gpu-0", {"type": "gpu", "productName": "NVIDIA A100-SXM4-80GB", "index": 0}, {"memory": 80 * GI})
    sel = compile_selector("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB' && "
                           "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0")
    assert sel(d, "gpu.nvidia.com")
    assert not sel(d, "other.example.com")  # another driver's attribute domain
    assert compile_selector("device.attributes['gpu.nvidia.com'].index != 1")(d, "gpu.nvidia.com")
    assert not compile_selector("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")(d, "gpu.nvidia.com")


@pytest.mark.parametrize("expr", [
    "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')",
    "device.driver == 'a' || device.driver == 'b'",
    "device.capacity['gpu.nvidia.com'].memory >= 40",
])
def test_unsupported_cel_is_refused_naming_the_field(expr):
    with pytest.raises(DraError, match="workloads.0.unit.dra.selectors.0"):
        compile_selector(expr, "workloads.0.unit.dra.selectors.0")


def test_quantities():
    assert parse_quantity("80Gi") == 80 * GI and parse_quantity("1k") == 1000 and parse_quantity("4") == 4
    with pytest.raises(DraError, match="whole quantity"):
        parse_quantity("1.5Gi")
