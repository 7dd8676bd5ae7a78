"""Reads for a review board: two (or more) projects' templates side by side, the difference between
two saved stacks, the saved evidence behind a ranked stack, and one search over the Atlas.

The side-by-side rows come from the template documents themselves (every field, nested fields
flattened), so a field added to `placement.catalog.schemas` shows up without a change here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from placement.catalog.models import Project
from placement.catalog.schemas import ENFORCEMENT_POINT_LABELS, RESOURCE_UNIT_LABELS
from placement.catalog.selectors.catalog import catalog_vocabulary, project_document_data
from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack

VALUE_WORDS = {
    **{u.value: label for u, label in RESOURCE_UNIT_LABELS.items()},
    **{e.value: label for e, label in ENFORCEMENT_POINT_LABELS.items()},
}
SKIP = {"slug"}  # the column heading already names the project


# --- templates side by side --------------------------------------------------------------------------


@dataclass
class TemplateRow:
    label: str
    cells: list[list[str]]  # per project, the lines of its value

    @property
    def differs(self) -> bool:
        return any(cell != self.cells[0] for cell in self.cells[1:])


def _label(path: tuple[str, ...], map_names: dict[str, str]) -> str:
    parts = [p for p in path if p != "placement"]
    if parts[:1] == ["maps"] and len(parts) > 1:
        return f"Placement: {map_names.get(parts[1], parts[1])}"
    return ": ".join(p.replace("_", " ").capitalize() if i == 0 else p.replace("_", " ") for i, p in enumerate(parts))


def _lines(value: Any, layer_names: dict[str, str]) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, list):
        return [line for item in value for line in _lines(item, layer_names)]
    if isinstance(value, dict):
        if set(value) <= {"primary", "secondary"}:  # a map placement
            secondary = ", ".join(layer_names.get(c, c) for c in value.get("secondary") or [])
            return [layer_names.get(value.get("primary", ""), value.get("primary", "")) + (f" (secondary: {secondary})" if secondary else "")]
        return [" · ".join(" / ".join(_lines(v, layer_names)) for v in value.values() if v not in (None, "", []))]
    return [VALUE_WORDS.get(str(value), str(value))]


def _flatten(document: dict, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for key, value in document.items():
        here = path + (key,)
        if isinstance(value, dict) and key in ("placement", "costs", "dependencies", "maps"):
            out.update(_flatten(value, here))
        elif here[-1] not in SKIP:
            out[here] = value
    return out


def templates_side_by_side(slugs: list[str]) -> tuple[list[Project], list[TemplateRow]]:
    """The accepted projects named (in that order) and one row per template field."""
    found = {p.slug: p for p in Project.objects.filter(slug__in=slugs, accepted=True)}
    projects = [found[s] for s in dict.fromkeys(slugs) if s in found]
    vocabulary = catalog_vocabulary()
    map_names = {m.slug: m.name for m in vocabulary.maps}
    layer_names = {l.code: l.name for m in vocabulary.maps for l in m.layers}
    flat = [_flatten(project_document_data(p)) for p in projects]
    paths = list(dict.fromkeys(path for doc in flat for path in doc))
    rows = [TemplateRow(_label(path, map_names), [_lines(doc.get(path), layer_names) for doc in flat]) for path in paths]
    return projects, rows


# --- two saved stacks --------------------------------------------------------------------------------


@dataclass
class DiffRow:
    label: str
    a: str
    b: str

    @property
    def differs(self) -> bool:
        return self.a != self.b


@dataclass
class StackDiff:
    a: Stack
    b: Stack
    slots: list[DiffRow]
    contracts: list[DiffRow]
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    request: list[DiffRow] = field(default_factory=list)


def _slot_key(slot: dict) -> str:
    return slot.get("slot", "") + (f" ({slot['pool']} pool)" if slot.get("pool") else "")


def _contract_key(contract: dict) -> str:
    return f"{str(contract.get('point', '')).title()} ({contract.get('pool', '')}, {VALUE_WORDS.get(contract.get('unit', ''), contract.get('unit', ''))})"


def stack_diff(a: Stack, b: Stack) -> StackDiff:
    """Slot by slot and contract by contract, what differs between two saved stacks."""
    def slots(stack: Stack) -> dict[str, str]:
        return {_slot_key(s): ((s.get("project") or {}).get("name") or "(empty)") for s in (stack.composition or {}).get("slots") or []}

    def contracts(stack: Stack) -> dict[str, str]:
        return {
            _contract_key(c): ("holds" if c.get("holds") else "does not hold") + (f" ({', '.join(c.get('by') or [])})" if c.get("by") else "")
            for c in (stack.composition or {}).get("contracts") or []
        }

    def rows(left: dict[str, str], right: dict[str, str]) -> list[DiffRow]:
        return [DiffRow(k, left.get(k, "—"), right.get(k, "—")) for k in dict.fromkeys([*left, *right])]

    def request(stack: Stack) -> dict[str, str]:
        r = stack.request or {}
        return {"Profile": stack.profile, "Pool": str(r.get("pool", "")), "SLO": str(r.get("slo", "profile default")), "Constraints": str(r.get("constraints", ""))}

    comps_a, comps_b = a.project_slugs, b.project_slugs
    return StackDiff(
        a=a,
        b=b,
        slots=rows(slots(a), slots(b)),
        contracts=rows(contracts(a), contracts(b)),
        only_a=[s for s in comps_a if s not in comps_b],
        only_b=[s for s in comps_b if s not in comps_a],
        request=rows(request(a), request(b)),
    )


# --- a ranked stack's evidence ----------------------------------------------------------------------


def _composition_key(slots) -> tuple:
    out = []
    for s in slots:
        s = s if isinstance(s, dict) else s.model_dump(mode="json")
        out.append((s.get("slot"), s.get("pool") or "", (s.get("project") or {}).get("slug") or ""))
    return tuple(sorted(out))


@dataclass
class SavedEvidence:
    stack: Stack
    runs: int
    succeeded: int
    latest: SimulationRun | None


def ranked_stack_evidence(ranked: list) -> dict[int, list[SavedEvidence]]:
    """For each ranked stack (by rank), the saved stacks with the same projects in the same slots
    and what has been simulated on them: the way from a ranking to its evidence."""
    wanted = {_composition_key(s.slots): s.rank for s in ranked}
    out: dict[int, list[SavedEvidence]] = {rank: [] for rank in wanted.values()}
    if not wanted:
        return out
    saved = Stack.objects.annotate(
        n_runs=Count("runs"), n_ok=Count("runs", filter=Q(runs__status=SimulationRun.SUCCEEDED))
    ).order_by("-created_at")[:500]
    for stack in saved:
        rank = wanted.get(_composition_key((stack.composition or {}).get("slots") or []))
        if rank is None:
            continue
        latest = stack.runs.defer("scenario", "timeseries").order_by("-created_at").first() if stack.n_runs else None
        out[rank].append(SavedEvidence(stack=stack, runs=stack.n_runs, succeeded=stack.n_ok, latest=latest))
    return out


# --- one search box -----------------------------------------------------------------------------------


@dataclass
class SearchResults:
    query: str
    projects: list[Project]
    capabilities: list[Any]
    stacks: list[Stack]

    @property
    def count(self) -> int:
        return len(self.projects) + len(self.capabilities) + len(self.stacks)


def atlas_search(query: str) -> SearchResults:
    """Projects (every word in their template text), capabilities and saved stacks by name."""
    terms = query.lower().split()
    if not terms:
        return SearchResults(query, [], [], [])
    condition = Q()
    for term in terms:
        condition &= Q(search_text__contains=term)
    projects = list(Project.objects.filter(accepted=True).filter(condition).order_by("name")[:50])
    capabilities = [
        c for c in catalog_vocabulary().capabilities
        if all(t in f"{c.slug} {c.name} {c.description}".lower() for t in terms)
    ]
    stack_condition = Q()
    for term in terms:
        stack_condition &= Q(name__icontains=term) | Q(profile__icontains=term)
    stacks = list(Stack.objects.filter(stack_condition).order_by("-created_at")[:20])
    return SearchResults(query, projects, capabilities, stacks)


# --- composed stacks as a comparison -------------------------------------------------------------


@dataclass
class StackComparisonRow:
    rank: int
    title: str
    score: float
    differs: list[str]  # project names this stack has that not every ranked stack has
    reasons: list[str]  # the two or three score items that weigh most, each once
    contracts_hold: int
    contracts_total: int
    tie_with: list[int] = field(default_factory=list)  # ranks of stacks with the same score
    own_reasons: list[str] = field(default_factory=list)  # the weightiest items not every stack scores alike


def _score_weights(stack) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in stack.score_breakdown:
        weights[item.reason] = weights.get(item.reason, 0.0) + item.points
    return weights


def _reason_text(reason: str, points: float) -> str:
    return f"{'+' if points > 0 else ''}{points:g}: {reason}"


def shared_score_reasons(stacks: list, limit: int = 4) -> list[str]:
    """The score items every ranked stack earns alike (said once above the comparison, not per row)."""
    if len(stacks) < 2:
        return []
    all_weights = [_score_weights(s) for s in stacks]
    shared = {r: w for r, w in all_weights[0].items() if w and all(other.get(r) == w for other in all_weights[1:])}
    return [_reason_text(r, w) for r, w in sorted(shared.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:limit]]


def stack_comparison(stacks: list) -> list[StackComparisonRow]:
    """The ranked stacks side by side: what sets each apart from the others (the projects not common
    to all), its score and the few reasons that decided it, and which stacks it ties with."""
    names: dict[str, str] = {}
    members: list[set[str]] = []
    for s in stacks:
        slugs = set(s.components)
        for slot in s.slots:
            if slot.project:
                names[slot.project.slug] = slot.project.name
        for support in s.supporting:  # a project a member requires, outside any slot
            names[support.project.slug] = support.project.name
        members.append(slugs)
    common = set.intersection(*members) if members else set()
    all_weights = [_score_weights(s) for s in stacks]
    rows = []
    for s, slugs, weights in zip(stacks, members, all_weights):
        top = sorted(weights.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:3]
        own = {r: w for r, w in weights.items()
               if w and (len(stacks) < 2 or any(other.get(r) != w for other in all_weights if other is not weights))}
        rows.append(
            StackComparisonRow(
                rank=s.rank, title=s.title, score=s.score,
                differs=sorted(names.get(slug, slug) for slug in slugs - common),
                reasons=[_reason_text(reason, points) for reason, points in top],
                contracts_hold=sum(1 for c in s.contracts if c.holds), contracts_total=len(s.contracts),
                own_reasons=[_reason_text(r, w) for r, w in sorted(own.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:3]],
            )
        )
    for row in rows:
        row.tie_with = [other.rank for other in rows if other is not row and other.score == row.score]
    return rows
