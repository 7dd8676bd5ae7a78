"""`manage.py refresh_catalog`: compare every accepted entry with upstream and file what changed as
a proposal in the review queue, with the source it was read from. Nothing is edited silently:
a reviewer accepts or rejects each proposal like any other. An unchanged entry files nothing, and
an entry that already has the same change waiting for review is not proposed twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from placement.catalog.models import Project
from placement.catalog.selectors.catalog import project_document
from placement.catalog.upstream import FieldChange, UpstreamClient, UpstreamUnavailable, apply_state, differences
from placement.review.models import Revision
from placement.review.services import revision_propose


@dataclass
class RefreshReport:
    proposed: dict[str, list[FieldChange]] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    already_proposed: list[str] = field(default_factory=list)
    not_readable: dict[str, str] = field(default_factory=dict)  # slug -> why


def catalog_refresh(client: UpstreamClient, *, user, slugs: list[str] | None = None) -> RefreshReport:
    report = RefreshReport()
    projects = Project.objects.filter(accepted=True).order_by("slug")
    if slugs:
        projects = projects.filter(slug__in=slugs)
    for project in projects:
        doc = project_document(project)
        try:
            state = client.read(doc)
        except UpstreamUnavailable as exc:
            report.not_readable[project.slug] = str(exc)
            continue
        if state is None:
            report.not_readable[project.slug] = "no repository the client can read"
            continue
        changes = differences(doc, state)
        if not changes:
            report.unchanged.append(project.slug)
            continue
        proposed = apply_state(doc, state, changes)
        pending = Revision.objects.filter(project=project, status=Revision.PROPOSED, base_version=project.version)
        if any(r.document.get("placement", {}).get("landscape") == proposed.placement.model_dump(mode="json")["landscape"]
               for r in pending):
            report.already_proposed.append(project.slug)
            continue
        reason = (f"Upstream differs ({state.read_from}, read {state.checked.isoformat()}): "
                  + "; ".join(c.describe() for c in changes))
        revision_propose(project, proposed, user=user, reason=reason)
        report.proposed[project.slug] = changes
    return report
