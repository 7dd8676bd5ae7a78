"""Reads of the catalog: vocabulary, documents, the layer map and filtered project lists."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Max, Prefetch, QuerySet
from django.utils import timezone

from placement.catalog.lint import is_stale
from placement.catalog.models import Capability, Layer, Map, Project, ProjectLayer
from placement.catalog.schemas import (
    ENFORCEMENT_POINT_LABELS,
    RESOURCE_UNIT_LABELS,
    CapabilityDefinition,
    CatalogVocabulary,
    Landscape,
    LayerDefinition,
    MapDefinition,
    Placement,
    ProjectDocument,
    builtin_vocabulary,
    sources_by_field,
)


def catalog_vocabulary() -> CatalogVocabulary:
    """The maps and capabilities in the database; the built-in fixtures before the first import."""
    maps = list(Map.objects.prefetch_related("layers"))
    if not maps:
        return builtin_vocabulary()
    return CatalogVocabulary(
        maps=[
            MapDefinition(
                slug=m.slug,
                name=m.name,
                description=m.description,
                order=m.order,
                layers=[LayerDefinition(code=l.code, name=l.name, description=l.description) for l in m.layers.all()],
            )
            for m in maps
        ],
        capabilities=[
            CapabilityDefinition(
                slug=c.slug,
                name=c.name,
                owner_map=c.owner_map,
                owner_layers=c.owner_layers,
                owner_plane=c.owner_plane,
                description=c.description,
            )
            for c in Capability.objects.all()
        ],
    )


def project_document(project: Project) -> ProjectDocument:
    """The stored project as its template document (already validated when it was written)."""
    return ProjectDocument.model_validate(project_document_data(project), context={"vocabulary": _TRUSTED})


class _TrustedVocabulary(CatalogVocabulary):
    """Stored placements were validated on write; re-reading them skips the vocabulary check."""

    def placement_errors(self, placement: Placement) -> list[str]:
        return []


_TRUSTED = _TrustedVocabulary(maps=[], capabilities=[])


def project_document_data(project: Project) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "kind": project.kind,
        "homepage": project.homepage,
        "summary": project.summary,
        "placement": project.placement,
    }


def catalog_documents() -> list[ProjectDocument]:
    return [project_document(p) for p in Project.objects.filter(accepted=True).order_by("slug")]


def catalog_version() -> str:
    """Changes whenever any project is written: the rules engine rebuilds its graph on change."""
    agg = Project.objects.filter(accepted=True).aggregate(latest=Max("updated_at"), count=Count("id"))
    latest = agg["latest"].isoformat() if agg["latest"] else "empty"
    return f"{agg['count']}:{latest}"


def project_list_queryset() -> QuerySet[Project]:
    """Projects with everything a list row shows, in a fixed number of queries."""
    return Project.objects.filter(accepted=True).only("slug", "name", "kind", "summary", "placement", "updated_at").prefetch_related(
        Prefetch("layer_links", queryset=ProjectLayer.objects.select_related("layer__map"))
    )


def landscape_stale(meta: Landscape | dict | None) -> bool:
    """Whether an entry's facts are older than ATLAS_CATALOG_STALE_DAYS (page and API)."""
    if isinstance(meta, dict):  # a stored placement's landscape (the list reads JSON, not documents)
        meta = Landscape.model_construct(archived=bool(meta.get("archived")),
                                         as_of=dt.date.fromisoformat(meta["as_of"]) if meta.get("as_of") else None)
    return is_stale(meta, timezone.now().date(), settings.ATLAS_CATALOG_STALE_DAYS)


def project_template_context(doc: ProjectDocument) -> dict:
    """What the one-page template (`_project_template.html`) shows of a document, with labels."""
    vocabulary = catalog_vocabulary()
    layer_names = {(m.slug, layer.code): layer.name for m in vocabulary.maps for layer in m.layers}
    placements = [
        {
            "map": m,
            "primary": (doc.placement.maps[m.slug].primary, layer_names.get((m.slug, doc.placement.maps[m.slug].primary), "")),
            "secondary": [(c, layer_names.get((m.slug, c), "")) for c in doc.placement.maps[m.slug].secondary],
        }
        for m in vocabulary.maps
        if m.slug in doc.placement.maps
    ]
    return {
        "doc": doc,
        "p": doc.placement,
        "field_sources": list(sources_by_field(doc.placement.sources).items()),
        "stale": landscape_stale(doc.placement.landscape),
        "placements": placements,
        "unit_labels": {u.value: RESOURCE_UNIT_LABELS[u] for u in RESOURCE_UNIT_LABELS},
        "enforcement_labels": {e.value: ENFORCEMENT_POINT_LABELS[e] for e in ENFORCEMENT_POINT_LABELS},
        "capability_names": {c.slug: c.name for c in vocabulary.capabilities},
    }


@dataclass
class MapCell:
    primary: list[Project] = field(default_factory=list)
    secondary: list[Project] = field(default_factory=list)
    proposed: str = ""  # "primary" or "secondary": where a proposed project would land (placement_preview)


@dataclass
class LayerRow:
    layer: Layer
    cells: list[MapCell]


def pending_project_ids() -> set[int]:
    """Projects with a proposal waiting for review (the map marks them)."""
    from placement.review.models import Revision

    return set(Revision.objects.filter(status=Revision.PROPOSED).values_list("project_id", flat=True))


def layer_map_grid(map_slug: str = "control-plane", column_map: str = "planes") -> tuple[list[Layer], list[LayerRow]]:
    """Rows are the layers of `map_slug`, columns the layers of `column_map` (the planes)."""
    columns = list(Layer.objects.filter(map__slug=column_map).order_by("order"))
    rows = list(Layer.objects.filter(map__slug=map_slug).order_by("order"))
    links = ProjectLayer.objects.filter(layer__map__slug__in=[map_slug, column_map]).select_related("project", "layer")
    row_of: dict[int, dict[int, str]] = defaultdict(dict)
    plane_of: dict[int, int] = {}
    projects: dict[int, Project] = {}
    for link in links:
        projects[link.project_id] = link.project
        if link.layer.map_id == (rows[0].map_id if rows else None):
            row_of[link.project_id][link.layer_id] = link.role
        elif link.role == ProjectLayer.PRIMARY:
            plane_of[link.project_id] = link.layer_id
    grid = []
    column_index = {c.id: i for i, c in enumerate(columns)}
    for row in rows:
        cells = [MapCell() for _ in columns]
        for project_id, roles in row_of.items():
            role = roles.get(row.id)
            if role is None or plane_of.get(project_id) not in column_index:
                continue
            cell = cells[column_index[plane_of[project_id]]]
            (cell.primary if role == ProjectLayer.PRIMARY else cell.secondary).append(projects[project_id])
        for cell in cells:
            cell.primary.sort(key=lambda p: p.name.lower())
            cell.secondary.sort(key=lambda p: p.name.lower())
        grid.append(LayerRow(layer=row, cells=cells))
    return columns, grid


def placement_preview(doc: ProjectDocument, map_slug: str = "control-plane", column_map: str = "planes"):
    """The layer map as on the home page, with the cells a proposed project would take marked, so a
    reviewer sees where it lands among the projects already there."""
    columns, rows = layer_map_grid(map_slug, column_map)
    maps = doc.placement.maps
    if map_slug not in maps or column_map not in maps:
        return columns, rows
    column = next((i for i, c in enumerate(columns) if c.code == maps[column_map].primary), None)
    if column is None:
        return columns, rows
    for row in rows:
        if row.layer.code == maps[map_slug].primary:
            row.cells[column].proposed = "primary"
        elif row.layer.code in maps[map_slug].secondary:
            row.cells[column].proposed = "secondary"
    return columns, rows


@dataclass
class PreviewCell:
    role: str  # "primary", "secondary" or "" (the project being proposed is not in this cell)
    neighbours: list[str]  # accepted projects placed here (primary), by name


def draft_placement_preview(placed: dict[str, tuple[str, list[str]]]) -> dict:
    """Where a project being typed into the form lands, from its placement fields alone (map slug ->
    (primary, secondaries); the document need not be valid yet): the home map's grid with its cells
    marked and the accepted neighbours named, and its layers on every map. (`placement_preview`
    above does the same for a whole, valid document on the review page.)"""
    columns, rows = layer_map_grid()
    layer, layer_secondary = placed.get("control-plane", ("", []))
    plane, plane_secondary = placed.get("planes", ("", []))
    grid = []
    for row in rows:
        cells = []
        for column, cell in zip(columns, row.cells):
            here = row.layer.code == layer and column.code == plane
            also = (row.layer.code in layer_secondary and column.code == plane) or (
                row.layer.code == layer and column.code in plane_secondary
            )
            role = "primary" if here else ("secondary" if also else "")
            cells.append(PreviewCell(role=role, neighbours=[p.name for p in cell.primary]))
        grid.append({"layer": row.layer, "cells": cells})
    names = {(m.slug, l.code): l.name for m in catalog_vocabulary().maps for l in m.layers}
    maps = [
        {
            "name": m.name,
            "primary": names.get((m.slug, placed[m.slug][0]), ""),
            "secondary": [names.get((m.slug, code), code) for code in placed[m.slug][1]],
        }
        for m in catalog_vocabulary().maps
        if placed.get(m.slug, ("", []))[0]
    ]
    return {"columns": columns, "grid": grid, "maps": maps, "placed": bool(layer and plane)}
