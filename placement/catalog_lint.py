"""Guard rails on catalog content that the per-file schema cannot see (issue 12). Pure Python.

A catalog that validates file by file can still contradict itself: a capability claimed in one
field and ruled out in another, a conflict declared on one side only, a resource advertised that
no project hands to a container, a fact without an evidence grade, an entry nobody re-checked
for a year. `lint_documents` finds these across the whole catalog and returns every finding as
`file: field: reason`; `python manage.py lint_catalog`, `import_catalog` and a test run it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from placement.catalog_files import CatalogError, CatalogInvalid, read_catalog_dir
from placement.schemas import ContractPoint, ProjectDocument

# An entry's landscape facts (latest release, CNCF status) go stale: re-check within a year.
DEFAULT_MAX_AGE_DAYS = 365
# Files that live beside the project, not in it, are no citation (cite the chapter and section).
_PATH_PREFIXES = ("seeds/", "reference/")


def _capability_errors(file: str, doc: ProjectDocument) -> list[CatalogError]:
    p = doc.placement
    errors = [
        CatalogError(file, "placement.capabilities", f"{slug!r} is claimed while the non-promises rule it out (denied_capabilities)")
        for slug in p.capabilities if slug in p.denied_capabilities
    ]
    errors += [
        CatalogError(file, f"placement.misuses[{i}].capability",
                     f"{m.capability!r} is recorded as a misuse (not provided) but also claimed in capabilities")
        for i, m in enumerate(p.misuses) if m.capability in p.capabilities
    ]
    return errors


def _relation_errors(files: dict[str, str], docs: dict[str, ProjectDocument]) -> list[CatalogError]:
    errors = []
    for slug, doc in docs.items():
        p, file = doc.placement, files[slug]
        for i, other in enumerate(p.conflicts_with):
            if other not in docs:
                errors.append(CatalogError(file, f"placement.conflicts_with[{i}]", f"unknown project {other!r}"))
            elif slug not in docs[other].placement.conflicts_with:
                errors.append(CatalogError(file, f"placement.conflicts_with[{i}]",
                                           f"conflict with {other!r} is not symmetric: {files[other]} does not list {slug!r}"))
            if other in p.dependencies.requires:
                errors.append(CatalogError(file, f"placement.conflicts_with[{i}]", f"{other!r} is both required and in conflict"))
        for i, other in enumerate(p.dependencies.requires):
            if other not in docs:
                errors.append(CatalogError(file, f"placement.dependencies.requires[{i}]", f"unknown project {other!r}"))
            elif slug in docs[other].placement.conflicts_with:
                errors.append(CatalogError(file, f"placement.dependencies.requires[{i}]",
                                           f"requires {other!r}, which declares a conflict with {slug!r}"))
            elif other == slug:
                errors.append(CatalogError(file, f"placement.dependencies.requires[{i}]", "a project cannot require itself"))
    return errors


def _advertise_errors(files: dict[str, str], docs: dict[str, ProjectDocument]) -> list[CatalogError]:
    allocated = {
        unit for doc in docs.values() for role in doc.placement.contract_points
        if role.point == ContractPoint.ALLOCATE for unit in role.units
    }
    errors = []
    for slug, doc in docs.items():
        for i, role in enumerate(doc.placement.contract_points):
            if role.point != ContractPoint.ADVERTISE:
                continue
            for unit in role.units:
                if unit not in allocated:
                    errors.append(CatalogError(files[slug], f"placement.contract_points[{i}].units",
                                               f"advertises {unit.value!r} but no catalog project allocates it"))
    return errors


def _source_errors(file: str, doc: ProjectDocument) -> list[CatalogError]:
    errors = []
    for i, source in enumerate(doc.placement.sources):
        if source.tag is None:
            errors.append(CatalogError(file, f"placement.sources[{i}].tag", "source has no evidence grade (V, V-code, D, S, U)"))
        cited = source.section or ""
        if cited.startswith(_PATH_PREFIXES) or (source.url or "").startswith(_PATH_PREFIXES):
            errors.append(CatalogError(file, f"placement.sources[{i}]",
                                       "cites a file beside the project; cite the chapter or note by title and section"))
    return errors


def _landscape_errors(file: str, doc: ProjectDocument, today: dt.date, max_age_days: int) -> list[CatalogError]:
    meta = doc.placement.landscape
    if meta is None:
        return [CatalogError(file, "placement.landscape", "no landscape metadata (license, repository, CNCF status, ...)")]
    errors = []
    age = (today - meta.as_of).days
    if age > max_age_days:
        errors.append(CatalogError(file, "placement.landscape.as_of",
                                   f"checked {meta.as_of.isoformat()}, {age} days ago; re-check entries within {max_age_days} days"))
    if meta.as_of > today:
        errors.append(CatalogError(file, "placement.landscape.as_of", f"{meta.as_of.isoformat()} is in the future"))
    if meta.latest_release.date > meta.as_of:
        errors.append(CatalogError(file, "placement.landscape.latest_release.date",
                                   f"release date {meta.latest_release.date.isoformat()} is after the as-of date"))
    return errors


def lint_documents(
    documents: dict[str, ProjectDocument], *, today: dt.date | None = None, max_age_days: int = DEFAULT_MAX_AGE_DAYS
) -> list[CatalogError]:
    """`documents` maps a file name to its parsed document; returns every finding, sorted by file."""
    today = today or dt.datetime.now(dt.UTC).date()
    files = {doc.slug: file for file, doc in documents.items()}
    docs = {doc.slug: doc for doc in documents.values()}
    errors: list[CatalogError] = []
    for file, doc in documents.items():
        errors += _capability_errors(file, doc)
        errors += _source_errors(file, doc)
        errors += _landscape_errors(file, doc, today, max_age_days)
    errors += _relation_errors(files, docs)
    errors += _advertise_errors(files, docs)
    return sorted(errors, key=lambda e: (e.file, e.field))


def lint_catalog_dir(directory: Path, **options) -> list[CatalogError]:
    """Parse the directory (schema errors first, as import does), then lint the whole catalog."""
    try:
        parsed = read_catalog_dir(Path(directory))
    except CatalogInvalid as exc:
        return exc.errors
    return lint_documents({f"{doc.slug}.yaml": doc for doc in parsed}, **options)
