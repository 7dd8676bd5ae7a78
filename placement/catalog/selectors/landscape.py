"""The catalog as a landscape: one card per project grouped by its primary control-plane layer,
and the same rows as CSV. Reads the accepted documents only (one query)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import catalog_documents, catalog_vocabulary

CSV_COLUMNS = [
    "slug", "name", "kind", "layer", "plane", "license", "repository", "cncf_status", "vendor",
    "latest_release", "release_date", "kubernetes_versions", "archived", "as_of", "evidence", "homepage",
]


@dataclass(frozen=True)
class LandscapeCategory:
    code: str
    name: str
    documents: list[ProjectDocument]


@dataclass(frozen=True)
class LandscapeGroup:
    """One layer of the control-plane map, its projects split by the architecture view's category
    (device discovery, scheduling decision, node execution, cluster governance), as the CNCF
    landscape splits a category into subcategories."""

    code: str
    name: str
    documents: list[ProjectDocument]
    categories: list[LandscapeCategory] = field(default_factory=list)


@dataclass(frozen=True)
class LandscapeFilters:
    """The page's filters, all in the URL so a filtered landscape is a link."""

    cncf: str = ""
    kind: str = ""
    plane: str = ""
    q: str = ""
    include_archived: bool = False

    def keep(self, doc: ProjectDocument) -> bool:
        meta = doc.placement.landscape
        if not self.include_archived and meta and meta.archived:
            return False
        if self.cncf and not (meta and meta.cncf_status.value == self.cncf):
            return False
        if self.kind and doc.kind.value != self.kind:
            return False
        if self.plane and doc.placement.plane != self.plane:
            return False
        return not self.q or self.q.lower() in f"{doc.name} {doc.slug} {meta.vendor if meta else ''}".lower()


def landscape_row(doc: ProjectDocument) -> dict[str, str]:
    meta = doc.placement.landscape
    p = doc.placement
    row = {
        "slug": doc.slug, "name": doc.name, "kind": doc.kind.value,
        "layer": p.maps["control-plane"].primary if "control-plane" in p.maps else "", "plane": p.plane,
        "homepage": doc.homepage,
    }
    if meta is not None:
        row.update({
            "license": meta.license, "repository": meta.repository, "cncf_status": meta.cncf_status.value,
            "vendor": meta.vendor, "latest_release": meta.latest_release.version,
            "release_date": meta.latest_release.date.isoformat(), "kubernetes_versions": meta.kubernetes_versions,
            "archived": "yes" if meta.archived else "no", "as_of": meta.as_of.isoformat() if meta.as_of else "", "evidence": meta.evidence.value,
        })
    return {column: row.get(column, "") for column in CSV_COLUMNS}


def landscape_groups(filters: LandscapeFilters | None = None) -> list[LandscapeGroup]:
    filters = filters or LandscapeFilters()
    documents = [d for d in catalog_documents() if filters.keep(d)]
    maps = {m.slug: m for m in catalog_vocabulary().maps}
    categories = [(layer.code, layer.name) for layer in maps["architecture"].layers] if "architecture" in maps else []
    groups = []
    for layer in maps["control-plane"].layers:
        members = sorted(
            (d for d in documents if d.placement.maps["control-plane"].primary == layer.code), key=lambda d: d.name.lower()
        )
        split = [
            LandscapeCategory(code, name, [d for d in members if _category(d) == code]) for code, name in categories
        ]
        other = [d for d in members if _category(d) not in {code for code, _ in categories}]
        if other:
            split.append(LandscapeCategory("", "Other", other))
        groups.append(LandscapeGroup(layer.code, layer.name, members, [c for c in split if c.documents]))
    return groups


def _category(doc: ProjectDocument) -> str:
    placed = doc.placement.maps.get("architecture")
    return placed.primary if placed else ""


def landscape_csv() -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for doc in catalog_documents():
        writer.writerow(landscape_row(doc))
    return out.getvalue()
