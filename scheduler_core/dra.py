"""DRA with structured parameters (resource.k8s.io/v1), as kube-scheduler's allocator sees it.

A driver publishes its devices in ResourceSlices: per node a pool of devices, each with attributes
(``type``, ``productName``, ``profile``...) and capacity (``memory`` in bytes), and, for partitionable
devices (KEP 4815), the shared counters each device consumes from its pool's counter sets. A
ResourceClaim asks, per request, for ``count`` devices (``allocationMode: ExactCount``) or every matching
device (``All``) of a DeviceClass, narrowed by CEL selectors. The allocator
(``k8s.io/dynamic-resource-allocation/structured``) walks the claims and their requests in order and
takes, for each device a request needs, the first device in ResourceSlice order that matches the class
and request selectors, is not allocated, and whose counters still fit; when a later request finds none it
backtracks to the previous choice. A pod's claims are allocated together or not at all.

Selectors are a small, explicit subset of CEL (:func:`compile_selector`): conjunctions (``&&``) of

* ``device.driver == '<driver>'``
* ``device.attributes['<domain>'].<name> == <value>`` (or ``!=``; strings, integers, ``true``/``false``)
* ``device.capacity['<domain>'].<name>.compareTo(quantity('<q>')) <op> 0`` with ``op`` one of
  ``>= > <= < == !=``

Anything else is refused with an error naming the field; there is no general CEL engine here. An
attribute or capacity a device does not publish makes the selector false (CEL would raise a runtime
error for the device, which the allocator also treats as not matching after reporting it).

The NVIDIA DRA driver (NVIDIA/k8s-dra-driver-gpu) publishes a whole GPU as type ``gpu`` and a MIG
device as type ``mig``; its DeviceClasses ``gpu.nvidia.com`` and ``mig.nvidia.com`` select
``device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`` (or
``'mig'``), so a claim of the first class never gets a MIG device (:data:`NVIDIA_CLASSES`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable, Iterable

NVIDIA_DRIVER = "gpu.nvidia.com"
# deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-{gpu,mig}.yaml (k8s-dra-driver-gpu 2240711)
NVIDIA_CLASSES: dict[str, tuple[str, ...]] = {
    "gpu.nvidia.com": ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",),
    "mig.nvidia.com": ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",),
}

# kube-scheduler's DynamicResources plugin (pkg/scheduler/framework/plugins/dynamicresources) Filter statuses.
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


class DraError(ValueError):
    """A claim, class or selector the allocator (or this model of it) cannot work with."""


# ------------------------------------------------------------------ quantities
_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_QUANTITY = re.compile(r"^([0-9]+)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")


def parse_quantity(text: str, where: str = "quantity") -> int:
    """A Kubernetes quantity in whole units (``1Gi`` -> 1073741824); decimals are refused."""
    m = _QUANTITY.match(text.strip())
    if not m:
        raise DraError(f"{where}: {text!r} is not a whole quantity such as 80Gi, 512Mi or 4")
    return int(m.group(1)) * _SUFFIX[m.group(2) or ""]


# ------------------------------------------------------------------ objects
@dataclass(frozen=True)
class Device:
    """One device of a ResourceSlice: attributes and capacity of the driver's domain, counters consumed."""

    name: str
    attributes: dict = field(default_factory=dict)
    capacity: dict = field(default_factory=dict)  # name -> whole units (bytes for memory)
    consumes: tuple = ()  # ((counter set, {counter: amount}), ...)

    def __hash__(self) -> int:
        return hash(self.name)


@dataclass
class Pool:
    """A driver's resource pool on one node: its devices in ResourceSlice order and its counter sets."""

    name: str
    devices: list[Device]
    driver: str = NVIDIA_DRIVER
    counter_sets: dict = field(default_factory=dict)  # set -> {counter: capacity}


@dataclass(frozen=True)
class Request:
    """One request of a claim (``spec.devices.requests[].exactly``)."""

    name: str
    device_class: str
    selectors: tuple[str, ...] = ()
    count: int = 1
    allocation_mode: str = "ExactCount"  # or "All"


@dataclass(frozen=True)
class Claim:
    name: str
    requests: tuple[Request, ...]


DeviceId = tuple[str, str, str]  # (driver, pool, device), as upstream's DeviceID


# ------------------------------------------------------------------ selectors
_STR = r"'([^']*)'|\"([^\"]*)\""
_DRIVER = re.compile(rf"^device\.driver\s*(==|!=)\s*(?:{_STR})$")
_ATTR = re.compile(rf"^device\.attributes\[(?:{_STR})\]\.([A-Za-z][A-Za-z0-9_]*)\s*(==|!=)\s*(.+)$")
_CAP = re.compile(rf"^device\.capacity\[(?:{_STR})\]\.([A-Za-z][A-Za-z0-9_]*)\.compareTo\(\s*quantity\(\s*(?:{_STR})\s*\)\s*\)"
                  r"\s*(>=|<=|==|!=|>|<)\s*0$")
_OPS: dict[str, Callable[[int], bool]] = {">=": lambda c: c >= 0, ">": lambda c: c > 0, "<=": lambda c: c <= 0,
                                          "<": lambda c: c < 0, "==": lambda c: c == 0, "!=": lambda c: c != 0}
SUPPORTED = ("device.driver == '<driver>'", "device.attributes['<domain>'].<name> == <value> (or !=)",
             "device.capacity['<domain>'].<name>.compareTo(quantity('<q>')) <op> 0")

Selector = Callable[[Device, str], bool]


def _literal(text: str, where: str):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    raise DraError(f"{where}: {text!r} is not a string, integer or boolean literal")


def _term(term: str, where: str) -> Selector:
    term = term.strip()
    while term.startswith("(") and term.endswith(")"):
        term = term[1:-1].strip()
    if m := _DRIVER.match(term):
        op, driver = m.group(1), m.group(2) if m.group(2) is not None else m.group(3)
        return (lambda d, drv: drv == driver) if op == "==" else (lambda d, drv: drv != driver)
    if m := _ATTR.match(term):
        domain = m.group(1) if m.group(1) is not None else m.group(2)
        name, op, value = m.group(3), m.group(4), _literal(m.group(5), where)

        def attr(d: Device, drv: str) -> bool:
            if domain != drv or name not in d.attributes:
                return False
            return (d.attributes[name] == value) == (op == "==")
        return attr
    if m := _CAP.match(term):
        domain = m.group(1) if m.group(1) is not None else m.group(2)
        name, q = m.group(3), m.group(4) if m.group(4) is not None else m.group(5)
        amount, test = parse_quantity(q, where), _OPS[m.group(6)]

        def cap(d: Device, drv: str) -> bool:
            if domain != drv or name not in d.capacity:
                return False
            v = d.capacity[name]
            return test((v > amount) - (v < amount))
        return cap
    raise DraError(f"{where}: unsupported CEL expression {term!r}; this model reads conjunctions (&&) of "
                   + "; ".join(SUPPORTED))


@lru_cache(maxsize=1024)
def compile_selector(expression: str, where: str = "selector") -> Selector:
    """A predicate (device, driver) for a CEL selector of the supported forms; :class:`DraError` naming
    ``where`` for anything else (``||``, functions, other fields)."""
    if "||" in expression:
        raise DraError(f"{where}: '||' is not supported; state alternatives as separate requests or classes")
    terms = [_term(t, where) for t in expression.split("&&")]
    return lambda d, drv: all(t(d, drv) for t in terms)


# ------------------------------------------------------------------ allocator
@dataclass
class _Candidate:
    pool: Pool
    device: Device

    @property
    def id(self) -> DeviceId:
        return (self.pool.driver, self.pool.name, self.device.name)


def _selectors(req: Request, classes: dict[str, tuple[str, ...]], where: str) -> list[Selector]:
    if not req.device_class:
        raise DraError(f"{where}: missing device class name")
    if req.device_class not in classes:
        raise DraError(f"{where}: could not retrieve device class {req.device_class}")
    exprs = [(f"deviceclass {req.device_class} selector", e) for e in classes[req.device_class]]
    exprs += [(f"{where} selector", e) for e in req.selectors]
    return [compile_selector(e, w) for w, e in exprs]


def _consumed(pools: Iterable[Pool], ids: Iterable[DeviceId]) -> dict:
    by_id = {(p.driver, p.name, d.name): (p, d) for p in pools for d in p.devices}
    used: dict = {}
    for i in ids:
        if i in by_id:
            p, d = by_id[i]
            for cset, counters in d.consumes:
                for k, v in counters.items():
                    key = (p.driver, p.name, cset, k)
                    used[key] = used.get(key, 0) + v
    return used


def allocate(claims: list[Claim], classes: dict[str, tuple[str, ...]], pools: list[Pool],
             allocated: Iterable[DeviceId] = ()) -> list[list[tuple[str, DeviceId]]] | None:
    """Allocate ``claims`` together on one node's ``pools`` (ResourceSlice order), ``allocated`` devices
    being taken: per claim the (request, device) pairs, or None when they cannot all be allocated."""
    taken = set(allocated)
    used = _consumed(pools, taken)
    # One entry per device to choose: (claim index, request, candidates); All expands to every match.
    slots: list[tuple[int, Request, list[_Candidate]]] = []
    for ci, claim in enumerate(claims):
        for req in claim.requests:
            where = f"claim {claim.name}, request {req.name}"
            sels = _selectors(req, classes, where)
            matching = [_Candidate(p, d) for p in pools for d in p.devices if all(s(d, p.driver) for s in sels)]
            if req.allocation_mode == "All":
                if not matching or any(c.id in taken for c in matching):
                    return None
                slots += [(ci, req, [c]) for c in matching]
            else:
                slots += [(ci, req, matching)] * req.count
    chosen: list[_Candidate] = []
    picked: set[DeviceId] = set()

    def fits(c: _Candidate) -> bool:
        if c.id in taken or c.id in picked:
            return False
        for cset, counters in c.device.consumes:
            have = c.pool.counter_sets.get(cset)
            if have is None:
                return False
            for k, v in counters.items():
                if used.get((c.pool.driver, c.pool.name, cset, k), 0) + v > have.get(k, 0):
                    return False
        return True

    def take(c: _Candidate, sign: int) -> None:
        (picked.add if sign > 0 else picked.discard)(c.id)
        for cset, counters in c.device.consumes:
            for k, v in counters.items():
                key = (c.pool.driver, c.pool.name, cset, k)
                used[key] = used.get(key, 0) + sign * v

    def walk(i: int) -> bool:
        if i == len(slots):
            return True
        for c in slots[i][2]:
            if fits(c):
                take(c, 1)
                chosen.append(c)
                if walk(i + 1):
                    return True
                chosen.pop()
                take(c, -1)
        return False

    if not walk(0):
        return None
    out: list[list[tuple[str, DeviceId]]] = [[] for _ in claims]
    for (ci, req, _), c in zip(slots, chosen):
        out[ci].append((req.name, c.id))
    return out
