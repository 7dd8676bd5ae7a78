"""Writes to the catalog: vocabulary sync, project save, YAML import and export."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from placement.catalog.files import CatalogInvalid, read_catalog_dir, write_catalog_dir
from placement.catalog.models import Capability, CatalogVersion, Layer, Map, Project, ProjectFacet, ProjectLayer
from placement.catalog.schemas import CatalogVocabulary, ProjectDocument, builtin_vocabulary, units_served
from placement.catalog.selectors.catalog import catalog_documents, project_document
from placement.review.models import Revision


def vocabulary_sync(vocabulary: CatalogVocabulary) -> None:
    """Upsert maps, layers and capabilities from the vocabulary (fixtures are the source)."""
    for map_def in vocabulary.maps:
        map_obj, _ = Map.objects.update_or_create(
            slug=map_def.slug,
            defaults={"name": map_def.name, "description": map_def.description, "order": map_def.order},
        )
        for order, layer in enumerate(map_def.layers):
            Layer.objects.update_or_create(
                map=map_obj,
                code=layer.code,
                defaults={"name": layer.name, "description": layer.description, "order": order},
            )
    for order, cap in enumerate(vocabulary.capabilities):
        Capability.objects.update_or_create(
            slug=cap.slug,
            defaults={
                "name": cap.name,
                "owner_map": cap.owner_map,
                "owner_layers": cap.owner_layers,
                "owner_plane": cap.owner_plane,
                "description": cap.description,
                "order": order,
            },
        )


def _search_text(doc: ProjectDocument) -> str:
    p = doc.placement
    parts = [doc.slug, doc.name, doc.summary, p.promise, *p.non_promise, *p.capabilities, *p.failure_modes]
    return " ".join(parts).lower()


def project_index_refresh(project: Project, doc: ProjectDocument, layers: dict[tuple[str, str], int]) -> None:
    """Rebuild the filter index rows (layers and facets) of one project from its document."""
    ProjectLayer.objects.filter(project=project).delete()
    ProjectFacet.objects.filter(project=project).delete()
    links = []
    for map_slug, placed in doc.placement.maps.items():
        links.append(ProjectLayer(project=project, layer_id=layers[(map_slug, placed.primary)], role=ProjectLayer.PRIMARY))
        links += [
            ProjectLayer(project=project, layer_id=layers[(map_slug, code)], role=ProjectLayer.SECONDARY)
            for code in placed.secondary
        ]
    ProjectLayer.objects.bulk_create(links)
    p = doc.placement
    facets = [ProjectFacet(project=project, facet=ProjectFacet.UNIT, value=u) for u in units_served(p.model_dump(mode="json"))]
    facets += [ProjectFacet(project=project, facet=ProjectFacet.ENFORCEMENT, value=e.value) for e in p.enforcement_points]
    facets += [ProjectFacet(project=project, facet=ProjectFacet.CAPABILITY, value=c) for c in p.capabilities]
    if p.landscape is not None:
        facets.append(ProjectFacet(project=project, facet=ProjectFacet.CNCF, value=p.landscape.cncf_status.value))
    archived = p.landscape is not None and p.landscape.archived
    facets.append(ProjectFacet(project=project, facet=ProjectFacet.STATUS, value="archived" if archived else "active"))
    ProjectFacet.objects.bulk_create(facets)


def _layer_ids() -> dict[tuple[str, str], int]:
    return {(l.map.slug, l.code): l.id for l in Layer.objects.select_related("map")}


def _write(project: Project, doc: ProjectDocument, layers: dict[tuple[str, str], int]) -> Project:
    """Make `doc` the accepted state of `project` (a new accepted version)."""
    project.version += 1
    project.accepted = True
    project.slug, project.name, project.kind = doc.slug, doc.name, doc.kind.value
    project.homepage, project.summary = doc.homepage, doc.summary
    project.placement = doc.placement.model_dump(mode="json")
    project.search_text = _search_text(doc)
    project.save()
    project_index_refresh(project, doc, layers)
    return project


def catalog_changed() -> None:
    """Move the catalog version (one row, `CatalogVersion`): every page and API payload cached for
    the old version is then neither served nor answered with a 304 again. The two writers of the
    accepted catalog call it inside their transaction: accepting a proposal and importing."""
    now = timezone.now()
    if not CatalogVersion.objects.filter(pk=1).update(value=F("value") + 1, changed_at=now):
        CatalogVersion.objects.get_or_create(pk=1, defaults={"value": 1, "changed_at": now})


def project_apply(project: Project, doc: ProjectDocument) -> Project:
    """Internal to the review service: callers have checked permissions and the base version."""
    project = _write(project, doc, _layer_ids())
    catalog_changed()
    return project


def catalog_import(directory: Path, *, vocabulary: CatalogVocabulary | None = None) -> list[Project]:
    """Validate every file first, then write all of them in one transaction, or nothing.

    Raises CatalogInvalid (file, field, reason for each error) before touching the database.
    """
    vocabulary = vocabulary or builtin_vocabulary()
    documents = read_catalog_dir(Path(directory), vocabulary)
    with transaction.atomic():
        vocabulary_sync(vocabulary)
        layers = _layer_ids()
        existing = {p.slug: p for p in Project.objects.filter(slug__in=[d.slug for d in documents])}
        saved, changed = [], []
        for doc in documents:
            project = existing.get(doc.slug)
            if project is not None and project.accepted and _unchanged(project, doc):
                saved.append(project)  # same document: no new version, no new revision
                continue
            project = _write(project or Project(), doc, layers)
            saved.append(project)
            changed.append((project, doc))
        # The import is history too: each changed file becomes an accepted revision.
        Revision.objects.bulk_create(
            Revision(
                project=project,
                document=doc.model_dump(mode="json"),
                base_version=project.version - 1,
                number=project.version,
                reason=f"Imported from {Path(directory).name}/{doc.slug}.yaml",
                status=Revision.ACCEPTED,
            )
            for project, doc in changed
        )
        catalog_changed()  # the vocabulary may have changed even when no project did
        return saved


def _unchanged(project: Project, doc: ProjectDocument) -> bool:
    return project_document(project).model_dump(mode="json") == doc.model_dump(mode="json")


def catalog_export(directory: Path) -> list[Path]:
    return write_catalog_dir(catalog_documents(), Path(directory))


__all__ = ["CatalogInvalid", "catalog_changed", "catalog_export", "catalog_import", "project_apply", "vocabulary_sync"]
