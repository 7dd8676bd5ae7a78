"""The rules engine: verdicts, misuse checks and stack composition over the catalog graph.

Pure Python (networkx, pydantic, PyYAML); it never imports Django, so services, pages, the REST
API, tests and benchmarks all call it the same way. Rules are data in fixtures/rules/ (see
`placement.rules.data`); the catalog documents are `placement.catalog.schemas.ProjectDocument`.

Public API
----------
``build_graph(documents, vocabulary=None, *, rules=None, version=None) -> CatalogGraph``
    Build the networkx graph of projects, resource units, capabilities, contract points and
    layers from catalog documents. Cached: the same catalog version returns the same graph.
    Pass ``version`` (e.g. the Django catalog revision) to skip hashing the documents; without
    it a content fingerprint is computed. ``graph.version`` is echoed in every result.

``compare(graph, slugs) -> ComparisonResult``
    A verdict for every pair of two or more projects: comparable, unit_mismatch, cross_layer,
    platform_vs_mechanism or overlapping, with the valid comparison axes, the contract points and
    graph path joining cross-layer pairs, and a plain-language explanation. ``slugs`` may also be a
    ``CompareRequest`` (body of POST /api/v1/compare/).

``check_misuse(graph, slug, capability) -> MisuseVerdict``
    Whether asking a project for a capability asks the layer that owns it; if not, which layer
    does and which catalog projects provide it.

``known_misuses(graph) -> list[MisuseVerdict]``
    Every misuse recorded in the catalog (the seed's placement table and more), checked.

``compose(graph, request: ComposeRequest, budget: SearchBudget | None = None) -> ComposeResult``
    Ranked stacks (one project per slot, per pool for the data-plane slots) for a workload
    profile, SLO, pool and constraints, with contract checks, score breakdown and why each ranks
    where it does; impossible requests return ``feasible=False`` with ``failures`` naming the slot
    that cannot be filled and why. Body of POST /api/v1/stacks/compose/.

``compatible(graph, with_slug, profile, *, slo=None, pool=None) -> CompatibleResult``
    Stacks containing a project and the projects that fit next to it (and those that conflict),
    for a profile's default SLO unless one is given. Body of
    GET /api/v1/stacks/compatible/?with=<slug>&profile=<profile>.

Errors
------
``RulesInputError`` (a ``ValueError``) for unknown slugs, profiles, capabilities or bad request
fields; ``.errors`` maps the request field to messages, ready for a 400 response.

Example
-------
>>> from placement.catalog.files import read_catalog_dir
>>> from placement.rules import build_graph, compare, compose, ComposeRequest
>>> graph = build_graph(read_catalog_dir("fixtures/catalog"))
>>> compare(graph, ["hami", "volcano"]).pairs[0].verdict                 # doctest: +SKIP
<Verdict.CROSS_LAYER: 'cross_layer'>
>>> compose(graph, ComposeRequest(profile="training")).stacks[0].title  # doctest: +SKIP
'NVIDIA Multi-Instance GPU (MIG) + Volcano'

Rules data (fixtures/rules/, read by ``placement.rules.data``)
----------------------------------------------------------
capabilities.yaml  capability -> owning map/layer/plane (also the catalog vocabulary)
units.yaml         per resource unit: isolation level, memory/compute/fault isolation, MIG need,
                   granularity, reconfiguration; GPU models and whether they are MIG-capable
comparison.yaml    verdicts with their valid axes, the axes' questions, the three contract points
composition.yaml   stack slots (layer, kind, capability, contract role), cluster baseline, default
                   scheduler, component cost, native-handoff bonus, excluded capabilities (VM
                   handoffs), SLO isolation -> accepted unit levels, SLO goal and tenancy points
profiles.yaml      workload profiles: default SLO, pools (by isolation level), required
                   capabilities, unit and capability points with their reasons, default-scheduler points
"""

from placement.rules.compare import compare
from placement.rules.compatible import compatible
from placement.rules.compose import compose
from placement.rules.context import SearchBudget
from placement.rules.data import (
    Isolation,
    RulesData,
    SlotName,
    Verdict,
    builtin_rules,
    read_rules,
)
from placement.rules.errors import RulesDataError, RulesInputError
from placement.rules.graph import (
    CatalogGraph,
    build_graph,
    catalog_fingerprint,
    clear_graph_cache,
)
from placement.rules.misuse import check_misuse, known_misuses
from placement.rules.models import (
    CompareRequest,
    ComparisonResult,
    CompatibleResult,
    ComposeRequest,
    ComposeResult,
    Constraints,
    MisuseStatus,
    MisuseVerdict,
    PairVerdict,
    Pool,
    Slo,
    Stack,
)

__all__ = [
    "CatalogGraph",
    "ComparisonResult",
    "CompareRequest",
    "CompatibleResult",
    "ComposeRequest",
    "ComposeResult",
    "Constraints",
    "Isolation",
    "MisuseStatus",
    "MisuseVerdict",
    "PairVerdict",
    "Pool",
    "RulesData",
    "RulesDataError",
    "RulesInputError",
    "Slo",
    "SlotName",
    "Stack",
    "Verdict",
    "build_graph",
    "builtin_rules",
    "catalog_fingerprint",
    "check_misuse",
    "clear_graph_cache",
    "compare",
    "compatible",
    "SearchBudget",
    "compose",
    "known_misuses",
    "read_rules",
]
