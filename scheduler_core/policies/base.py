"""The extension points every control-plane policy plugs into, and the machinery they share.

:class:`ControlPlanePolicy` names the extension points (the scheduling cycle calls them by name) and
tabulates which policy implements which; :class:`Policy` and :class:`QueuedPolicy` are the bases of
the L2 schedulers.

:class:`ShapeQueue` keeps waiting workloads in FIFO buckets keyed by
``(queue, priority, shape)``.  Within one scheduling pass capacity only
shrinks, so once a workload of some shape fails to fit, every later workload
of the same shape in the same pass would fail too: the pass skips the whole
bucket.  That keeps a pass O(buckets + placements) instead of O(backlog),
which is what makes 50,000-job runs linear in the number of jobs.  It is
exact, not a heuristic, as long as the fit test depends only on the shape
(resources, node selector, topology requirement) - which is how the shape
key is built.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import TYPE_CHECKING, Callable, Hashable, Iterator

from scheduler_core.cluster import held_domain

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import DeviceRequest, Node
    from scheduler_core.policies.port import ClusterPort
    from scheduler_core.workloads import Workload


class ShapeQueue:
    """FIFO buckets of workloads with lazy removal (tokens guard against stale entries)."""

    def __init__(self, keys: dict | None = None) -> None:
        self.buckets: dict[Hashable, deque] = {}
        self.member: dict[int, tuple[Hashable, int]] = {}
        self._tokens = itertools.count()  # a fresh token per push: an older entry of the workload is stale
        # One object per distinct key (shared with other queues when given), so that comparing keys finds
        # them identical at once instead of comparing their requests field by field.
        self.canonical: dict = {} if keys is None else keys

    def __len__(self) -> int:
        return len(self.member)

    def push(self, wl: "Workload", key: Hashable, now: float) -> None:
        if wl.uid in self.member:
            return
        key = self.canonical.setdefault(key, key)
        token = next(self._tokens)
        self.member[wl.uid] = (key, token)
        wl.enqueued_at = now
        self.buckets.setdefault(key, deque()).append((token, wl))

    def remove(self, wl: "Workload") -> None:
        self.member.pop(wl.uid, None)

    def _valid(self, wl: "Workload", tok: int) -> bool:
        """Whether a bucket entry is the workload's live one: tokens are unique, so the token alone says
        it (the live entry's key is the bucket's)."""
        entry = self.member.get(wl.uid)
        return entry is not None and entry[1] == tok

    def head(self, key: Hashable) -> "Workload | None":
        dq = self.buckets.get(key)
        member = self.member
        while dq:
            tok, wl = dq[0]
            entry = member.get(wl.uid)
            if entry is not None and entry[1] == tok:
                return wl
            dq.popleft()
        if dq is not None:  # emptied by the loop: drop the bucket
            del self.buckets[key]
        return None

    def pop(self, key: Hashable) -> "Workload | None":
        wl = self.head(key)
        if wl is not None:
            self.buckets[key].popleft()
            del self.member[wl.uid]
        return wl

    def iter_bucket(self, key: Hashable) -> Iterator["Workload"]:
        """Valid members of one bucket in FIFO order (for StrictFIFO checks and reporting)."""
        # No copy: callers do not mutate the queue while iterating, and usually stop early.
        for tok, wl in self.buckets.get(key, ()):
            if self._valid(wl, tok):
                yield wl

    def keys(self) -> list[Hashable]:
        return list(self.buckets)

    def scan(self, order: Callable[["Workload"], tuple], keys: list[Hashable] | None = None,
             heads: list["Workload"] | None = None) -> "Scan":
        """A pass over ``keys`` (default every bucket); ``heads``: each key's :meth:`head`, when the caller
        has just looked them up."""
        return Scan(self, order, self.keys() if keys is None else keys, heads)

    def waiting_requests(self) -> list[tuple["DeviceRequest", str | None]]:
        """The distinct (request, node group) shapes at the head of the live buckets."""
        heads = (self.head(key) for key in self.keys())
        return list(dict.fromkeys((wl.request, wl.node_group) for wl in heads if wl is not None))


class Scan:
    """One pass over a :class:`ShapeQueue` in policy order, skipping failed buckets.

    ``next()`` returns ``(key, workload)``; after trying it call
    ``done(key)`` (placed: the bucket's next workload comes up), ``keep(key)``
    (still has pending pods, try again later in this pass) or
    ``fail(key)`` (the shape does not fit: skip the bucket for this pass).
    """

    def __init__(self, q: ShapeQueue, order: Callable[["Workload"], tuple], keys: list[Hashable],
                 heads: list["Workload"] | None = None) -> None:
        self.q = q
        self.order = order
        self.heap: list = []
        self._seq = itertools.count()  # heap tie-breaker (the heapq docs' idiom): keys are never compared
        if heads is None:
            for key in keys:
                self._push(key)
        else:  # the same entries _push would make, from heads already looked up
            for key, wl in zip(keys, heads):
                heapq.heappush(self.heap, (order(wl), next(self._seq), key))

    def _push(self, key: Hashable) -> None:
        wl = self.q.head(key)
        if wl is not None:
            heapq.heappush(self.heap, (self.order(wl), next(self._seq), key))

    def has_next(self) -> bool:
        """Whether ``next()`` would return a workload (drops stale entries from the top)."""
        while self.heap:
            if self.q.head(self.heap[0][2]) is not None:
                return True
            heapq.heappop(self.heap)
        return False

    def next(self) -> tuple[Hashable, "Workload"] | None:
        while self.heap:
            _, _, key = heapq.heappop(self.heap)
            wl = self.q.head(key)
            if wl is not None:
                return key, wl
        return None

    def done(self, key: Hashable) -> None:
        self.q.pop(key)
        self._push(key)

    def keep(self, key: Hashable) -> None:
        self._push(key)

    def fail(self, key: Hashable) -> None:
        pass  # the bucket is dropped from this pass


def kube_order(wl: "Workload") -> tuple:
    """kube-scheduler activeQ: higher (pod) priority first, then earlier creation."""
    return (-wl.pod_priority, wl.enqueued_at, wl.seq)


class ControlPlanePolicy:
    """The extension points of a control-plane policy, in the spirit of kube-scheduler's scheduling framework.

    The cluster simulation's scheduling cycle (``ClusterSimulation._cycle``) calls the cycle points by
    name, for the L1 admission controller (Kueue) first and then for the L2 scheduler::

        open_session() -> admit() -> allocate() -> preempt() -> reclaim()     each policy in turn
        end_pass()                                                          scheduler, then admission

    Inside those, a policy orders its waiting workloads with :meth:`queue_order` and picks node scoring
    with :meth:`score`.  Filter (does a pod fit a node: NodeResourcesFit, device plugin, HAMi's Fit),
    Reserve and Bind are the simulation's, reached through the port (``plan``, ``bind_plan``,
    ``place_pods_individually``); Permit (all-or-nothing) is the gang placement of :meth:`Policy.place_gang`.
    A point a policy does not implement is a no-op.  The framework's names for the points: queue_order
    QueueSort; open_session a Volcano or KAI session's opening; admit PreEnqueue (Kueue: admission);
    allocate Filter, Score, Reserve, Permit, Bind; score Score; preempt PostFilter; reclaim Volcano's
    and KAI's reclaim action; end_pass the end of the cycle.  Which policy implements which point:

    ============  ================  ================  ======================  =================  ===================
    point         kube-default      coscheduling      volcano                 kai                kueue (admission)
    ============  ================  ================  ======================  =================  ===================
    queue_order   priority, then    as kube-default   ``priority`` plugin,    priority, then     as kube-default,
                  creation                            then creation           creation           per ClusterQueue
    open_session  -                 -                 deserved shares         fair share down    -
                                                      (proportion or          the queue tree
                                                      capacity)
    admit         -                 -                 enqueue action          -                  quota: flavors,
                                                      (overcommit, queue                         preemption, partial
                                                      capability)                                admission, TAS
    allocate      pod by pod        PodGroups         allocate action:        leaf queues by     -
                                    all-or-nothing    queues by share, gang   saturation, gang
                                    (Permit),
                                    backoff
    score         Least or          as kube-default;  binpack, nodeorder,     binpack; pack for  -
                  MostAllocated;    pack a required   network-topology-aware  topology
                  HAMi's node       topology
                  policy
    preempt       ``preempt_for``   -                 preempt action (within  preempt action     inside admit
                  per pod, inside                     a queue)                (within a queue,   (classic or fair
                  allocate                                                    ``kai.preempt``)   sharing)
    reclaim       -                 -                 reclaim action (across  reclaim from       inside admit
                                                      queues)                 queues above fair  (cohort)
                                                                              share
    end_pass      forget the        as kube-default   as kube-default         as kube-default    as kube-default;
                  pass's new                                                                     forget that quota
                  buckets                                                                        was freed
    ============  ================  ================  ======================  =================  ===================

    Outside the cycle the simulation calls the lifecycle hooks: a scheduler's ``enqueue``, ``remove``
    and ``on_finish``; the admission controller's ``submit``, ``is_admitted``, ``on_ready``,
    ``on_finish`` and ``requeue``; and either's ``waiting_requests`` (stranded capacity) and
    ``explain`` (why a workload still waits).
    """

    name = "policy"
    sim: "ClusterPort"

    # -- the scheduling cycle's extension points, in the order the simulation calls them --------------
    #: QueueSort: the order waiting workloads are tried in (kube-scheduler's activeQ unless overridden).
    queue_order: Callable[["Workload"], tuple] = staticmethod(kube_order)

    def open_session(self) -> None:
        """Start of a pass: the shares it works with (Volcano's deserved, KAI's fair share)."""

    def admit(self) -> None:
        """Who may try to be placed: L1 admission (Kueue's quota), or a scheduler's own gate (Volcano's
        enqueue action)."""

    def allocate(self) -> None:
        """Filter, Score, Reserve, Permit and Bind for the waiting pods, in :meth:`queue_order`."""

    def score(self, wl: "Workload") -> tuple[str, str | None]:
        """Score: how nodes are ranked for ``wl``'s pods, as (strategy, required topology level); by
        default kube-scheduler's NodeResourcesFit scoring (HAMi's node policy for HAMi pods)."""
        return self.sim.kube_scoring(wl), None

    def preempt(self) -> None:
        """PostFilter: evict lower-priority workloads so that starving ones fit."""

    def reclaim(self) -> None:
        """Take back resources that other queues hold above their share."""

    def end_pass(self) -> None:
        """Post-cycle: forget what this pass knew about new work."""


class Policy(ControlPlanePolicy):
    """Base of L2 schedulers: a queue of workloads with pending pods and a pass over it."""

    def __init__(self, sim: "ClusterPort") -> None:
        self.sim = sim
        self.queue = ShapeQueue()
        self.new_keys: set = set()

    def key(self, wl: "Workload") -> Hashable:
        return (wl.priority, wl.shape())

    def enqueue(self, wl: "Workload") -> None:
        if wl.pending > 0:
            key = self.key(wl)
            self.queue.push(wl, key, self.sim.now)
            self.new_keys.add(key)

    def pass_keys(self) -> list[Hashable]:
        """Buckets worth trying in this pass.

        Capacity only shrinks between full passes, so a bucket that failed
        before fails again unless something was freed (``sim.full_pass``:
        pods released, a node became schedulable, a timer expired).  Without
        that, only buckets that received new workloads are tried - which is
        how kube-scheduler parks unschedulable pods until a cluster event.
        Queue-based policies widen this to every bucket of a queue with new
        work, since new demand changes that queue's share.
        """
        if self.sim.full_pass:
            return self.queue.keys()
        return [k for k in self.queue.keys() if k in self.new_keys]

    def end_pass(self) -> None:
        self.new_keys.clear()

    def remove(self, wl: "Workload") -> None:
        self.queue.remove(wl)

    def on_finish(self, wl: "Workload") -> None:
        self.queue.remove(wl)

    def waiting_requests(self) -> list:
        return self.queue.waiting_requests()

    def explain(self, wl: "Workload") -> str:
        """Why ``wl``'s pods still wait, in kube-scheduler's words."""
        if wl.pending <= 0:
            return "no pod pending: its controller recreates the failed pod(s) after a backoff"
        msg = self.sim.unschedulable(wl)
        if msg is not None:
            return msg
        if wl.topology_required and wl.pods:  # bound pods fix the domain the others must join
            held = self.sim.topology_unschedulable(wl, wl.topology_required)
            if held is not None:
                return held[0]
        if wl.nominated_until > self.sim.now:
            return "waiting for preemption victims to terminate (nominated)"
        return "Pending: fits now, waiting for the next scheduling cycle"

    # -- helpers shared by gang schedulers --------------------------------------
    def place_gang(self, wl: "Workload", strategy: str, level: str | None = None, max_pods: int | None = None) -> bool:
        """All-or-nothing placement of the workload's pending pods (at least up to min_member).

        ``max_pods`` caps how many are placed (Volcano proportion: pods beyond the queue's deserved share wait)."""
        sim = self.sim
        need = wl.pending if max_pods is None else min(wl.pending, max_pods)
        if need <= 0:
            return True
        floor = max(1, min(need, wl.min_member - len(wl.pods)))
        if not sim.quick_fit(wl, floor):
            return False
        nodes = self.placed_domain(wl, level)
        plan = sim.plan(wl, need, strategy, level, nodes) if need == floor or sim.quick_fit(wl, need) else None
        if plan is None and floor < need:
            plan = sim.plan(wl, floor, strategy, level, nodes)  # elastic gang: start with minMember
        if plan is None:
            return False
        sim.bind_plan(wl, plan)
        return True

    def placed_domain(self, wl: "Workload", level: str | None) -> list["Node"] | None:
        """The nodes a gang's next pods may take when ``level`` is required and some pods are bound (the
        domain those hold); None: no restriction."""
        if level is None or not wl.pods:
            return None
        return held_domain(wl, self.sim.candidate_nodes(wl))


class QueuedPolicy(Policy):
    """Base of schedulers with their own queues (Volcano, KAI): buckets are keyed by queue first,
    and new work in a queue re-tries every bucket of that queue, since it changes the queue's share."""

    def key(self, wl: "Workload") -> Hashable:
        return (wl.queue, wl.priority, wl.shape(), wl.pods_total, wl.min_member)

    def pass_keys(self) -> list[Hashable]:
        if self.sim.full_pass:
            return self.queue.keys()
        queues = {k[0] for k in self.new_keys}
        return [k for k in self.queue.keys() if k[0] in queues]

    @staticmethod
    def _pending(wl: "Workload") -> int:
        """Pods of the job still waiting; Volcano counts a gang's whole group."""
        return wl.pending

    def _starving(self) -> Iterator["Workload"]:
        """The head of each bucket this pass looks at whose job still waits for pods: the jobs that
        preempt and reclaim act for."""
        for key in self.pass_keys():
            wl = self.queue.head(key)
            if wl is not None and self._pending(wl) > 0:
                yield wl
