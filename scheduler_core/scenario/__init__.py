"""Scenario documents: pool, stack, tenants, workloads, events, horizon, seed.

A scenario is one pydantic model (:class:`Scenario`), read from YAML or JSON
with :func:`load_scenario` / :func:`parse_scenario`.  Shape errors come from
pydantic; cross-references (a workload's tenant, a tenant's queue, an
event's node, a MIG layout) are checked afterwards by
:func:`check_references`.  Both kinds surface as :class:`ScenarioError`
with field paths such as ``workloads.2.tenant`` so the CLI can print them
without a traceback.

Every number that is a modelling assumption lives in :class:`ModelParameters`
with a default and the domain-facts.md section that justifies it.

One module per part of the document, each importing only the ones above it:

* :mod:`.pool` - node groups (``pool``);
* :mod:`.stack` - data plane and control plane (``stack``);
* :mod:`.parameters` - modelling assumptions (``parameters``);
* :mod:`.workloads` - ``tenants`` and ``workloads``;
* :mod:`.document` - :class:`Scenario` itself, ``events`` and ``sampling``;
* :mod:`.limits` - how big a scenario may be, and what a run of it will cost;
* :mod:`.checks` - cross-field checks (:func:`check_references`);
* :mod:`.loading` - :func:`load_scenario`, :func:`parse_scenario`, :class:`ScenarioError`.

Every model's name is re-exported here: ``from scheduler_core.scenario import X`` works for all of them.
"""

from scheduler_core.hami import HamiConfig
from scheduler_core.scenario.checks import check_references
from scheduler_core.scenario.document import Sampling, Scenario, ScenarioEvent
from scheduler_core.scenario.loading import ScenarioError, load_scenario, parse_scenario
from scheduler_core.scenario.parameters import ModelParameters
from scheduler_core.scenario.pool import MigSetting, NodeGroup, Pool
from scheduler_core.scenario.stack import (
    ClusterQueue,
    ControlPlane,
    CoschedulingConfig,
    DataPlane,
    KaiConfig,
    KaiQueue,
    KaiResourceQuota,
    KubeSchedulerConfig,
    KueueConfig,
    KueueFlavorQuotas,
    KueuePreemption,
    KueueQuota,
    MpsConfig,
    QueueResource,
    QueueResources,
    Stack,
    TimeSlicingConfig,
    VolcanoAction,
    VolcanoConfig,
    VolcanoPlugin,
    VolcanoQueue,
    WaitForPodsReady,
)
from scheduler_core.scenario.workloads import (
    Arrival,
    DeviceUnit,
    DurationDist,
    DurationSpec,
    HamiResources,
    InferenceWorkload,
    IntChoice,
    IntSpec,
    KvCache,
    RateStep,
    ServiceTime,
    Slo,
    TaskRole,
    Tenant,
    Topology,
    TrainingWorkload,
    Workload,
)

__all__ = [
    "Scenario", "ScenarioError", "load_scenario", "parse_scenario", "check_references",
    "ModelParameters", "NodeGroup", "Pool", "Stack", "DataPlane", "ControlPlane",
    "TrainingWorkload", "InferenceWorkload", "Tenant", "ScenarioEvent",
    # the other models and types of the document
    "MigSetting", "TimeSlicingConfig", "MpsConfig", "HamiConfig", "KubeSchedulerConfig", "CoschedulingConfig",
    "VolcanoAction", "VolcanoPlugin", "QueueResource", "QueueResources", "VolcanoQueue", "VolcanoConfig",
    "KueueQuota", "KueueFlavorQuotas", "KueuePreemption", "ClusterQueue", "WaitForPodsReady", "KueueConfig",
    "KaiResourceQuota", "KaiQueue", "KaiConfig", "DurationDist", "IntChoice", "DurationSpec", "IntSpec",
    "Arrival", "HamiResources", "DeviceUnit", "Topology", "TaskRole", "KvCache", "RateStep", "ServiceTime",
    "Slo", "Workload", "Sampling",
]
