"""The catalog as a landscape: one card per project grouped by its primary control-plane layer,
and the same rows as CSV. Reads the accepted documents only (one query)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from placement.schemas import ProjectDocument
from placement.selectors.catalog import catalog_documents, catalog_vocabulary

CSV_COLUMNS = [
    "slug", "name", "kind", "layer", "plane", "license", "repository", "cncf_status", "vendor",
    "latest_release", "release_date", "kubernetes_versions", "archived", "as_of", "evidence", "homepage",
]


@dataclass(frozen=True)
class LandscapeGroup:
    code: str
    name: str
    documents: list[ProjectDocument]


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


def landscape_groups(*, include_archived: bool = False, cncf: str = "") -> list[LandscapeGroup]:
    documents = [
        d for d in catalog_documents()
        if (include_archived or not (d.placement.landscape and d.placement.landscape.archived))
        and (not cncf or (d.placement.landscape and d.placement.landscape.cncf_status.value == cncf))
    ]
    control = next(m for m in catalog_vocabulary().maps if m.slug == "control-plane")
    groups = []
    for layer in control.layers:
        members = [d for d in documents if d.placement.maps["control-plane"].primary == layer.code]
        groups.append(LandscapeGroup(layer.code, layer.name, sorted(members, key=lambda d: d.name.lower())))
    return groups


def landscape_csv() -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for doc in catalog_documents():
        writer.writerow(landscape_row(doc))
    return out.getvalue()
