"""Guard rails on catalog content that the per-file schema cannot see (issue 12). Pure Python.

A catalog that validates file by file can still contradict itself: a capability claimed in one
field and ruled out in another, a conflict declared on one side only, a resource advertised that
no project hands to a container, a fact without an evidence grade, an entry nobody re-checked
for a year. Issue 33: nor can a typed date stand in for reading - as_of is bounded by the sources
read, recalled facts cannot look fresh, an old release needs a note, a `requires` the entry calls
optional is refused, and a release must be a tag the recorded upstream data lists. `lint_documents` finds these across the whole catalog and returns every finding as
`file: field: reason`; `python manage.py lint_catalog`, `import_catalog` and a test run it.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from placement.catalog.files import CatalogError, CatalogInvalid, read_catalog_dir
from placement.catalog.schemas import ContractPoint, Landscape, ProjectDocument, SourceTag, newest_read
from placement.catalog.upstream import UPSTREAM_DIR, UpstreamState, recorded_upstream

# An entry's landscape facts (latest release, CNCF status) go stale: re-check within a year.
DEFAULT_MAX_AGE_DAYS = 365
# A latest release this much older than as_of is suspicious unless a note says why (no release since).
STALE_RELEASE_DAYS = 365
# Landscape facts every entry must back with a source read on a known day.
BACKED_FACTS = ("landscape.latest_release", "landscape.license")
# Words by which an entry's own text makes a project one option among others, just before its name
# ("a scheduler such as KAI", "or another PodGang-aware scheduler") or just after it ("X is optional",
# "KAI Scheduler, Volcano, or kube-scheduler").
_BEFORE = r"(?:such as|e\.g\.|for example|optionally|optional|or another|or an?|alternatives? to|instead of)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?"
_AFTER = r"[^.;]{0,60}?(?:\bis optional|\bare optional|\(optional\)|[,)]\s+or\s+)"
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


def is_stale(meta: Landscape | None, today: dt.date, max_age_days: int = DEFAULT_MAX_AGE_DAYS) -> bool:
    """Facts older than the review age (or never read) are stale; an archived repository no longer
    changes, so its facts are not. The linter, the project page and the API share this rule."""
    if meta is None or meta.archived:
        return False
    return meta.as_of is None or (today - meta.as_of).days > max_age_days


def _provenance_errors(file: str, doc: ProjectDocument, today: dt.date, max_age_days: int) -> list[CatalogError]:
    """A date cannot stand in for reading: as_of is at most the day of the newest source read, the
    release and licence each have a source read on a known day, "V" needs a read upstream source,
    and recalled ("U") facts cannot carry a recent date."""
    p, meta = doc.placement, doc.placement.landscape
    newest = newest_read(p.sources)
    errors = []
    if newest is None:
        errors.append(CatalogError(file, "placement.sources",
                                   "no source records the day it was read (checked) with a grade other than U; "
                                   "as_of cannot be derived"))
    elif meta.as_of is not None and meta.as_of > newest:
        errors.append(CatalogError(file, "placement.landscape.as_of",
                                   f"{meta.as_of.isoformat()} is newer than the newest source read ({newest.isoformat()}); "
                                   "as_of comes from the sources, not from a typed date"))
    for fact in BACKED_FACTS:
        if not any(s.read and fact in s.supports for s in p.sources):
            errors.append(CatalogError(file, f"placement.{fact}", "no source read on a known day supports it (supports + checked)"))
    if meta.evidence in (SourceTag.VERIFIED, SourceTag.VERIFIED_CODE) and not any(
        s.read and s.tag in (SourceTag.VERIFIED, SourceTag.VERIFIED_CODE) and any(f.startswith("landscape.") for f in s.supports)
        for s in p.sources
    ):
        errors.append(CatalogError(file, "placement.landscape.evidence",
                                   f"{meta.evidence.value!r} but no source read upstream (V or V-code, checked) supports a landscape fact"))
    if meta.evidence == SourceTag.UNVERIFIED and meta.as_of is not None and (today - meta.as_of).days <= max_age_days:
        errors.append(CatalogError(file, "placement.landscape.evidence",
                                   f"recalled facts (U) carry a recent as_of ({meta.as_of.isoformat()}); read a source and grade it"))
    if meta.as_of is not None and (meta.as_of - meta.latest_release.date).days > STALE_RELEASE_DAYS and not meta.note:
        errors.append(CatalogError(file, "placement.landscape.latest_release",
                                   f"{meta.latest_release.version} of {meta.latest_release.date.isoformat()} is more than "
                                   f"{STALE_RELEASE_DAYS} days older than as_of {meta.as_of.isoformat()}; re-check it or add a note"))
    return errors


def _release_errors(file: str, doc: ProjectDocument, upstream: dict[str, UpstreamState]) -> list[CatalogError]:
    """The latest release must be a tag the recorded upstream data lists (when it was recorded after
    that release: a snapshot older than the release cannot list it)."""
    meta = doc.placement.landscape
    state = upstream.get(meta.repository)
    if state is None or meta.latest_release.date > state.checked or state.lists(meta.latest_release.version):
        return []
    return [CatalogError(file, "placement.landscape.latest_release.version",
                         f"{meta.latest_release.version!r} is not a release tag of {meta.repository} "
                         f"(recorded {state.checked.isoformat()}: {state.read_from})")]


def _text_sentences(doc: ProjectDocument) -> list[str]:
    p = doc.placement
    texts = [doc.summary, p.promise, *p.non_promise, p.costs.compatibility, p.costs.intrusiveness,
             *p.dependencies.upstream, *p.dependencies.downstream, *p.failure_modes]
    return [part for text in texts for part in re.split(r"(?<=[.;])\s+|\(|\)", text) if part.strip()]


def _name_pattern(doc: ProjectDocument) -> str:
    """How an entry's text names a project: its name or slug (any case, not as the start of a
    compound such as DRA-aware), or an upper-case first word of its name (KAI) as written."""
    names = [rf"(?i:\b{re.escape(n)}\b)(?!-)" for n in (doc.name, doc.slug)]
    first = doc.name.split(" ")[0]
    if len(first) >= 3 and first.isupper():
        names.append(rf"\b{re.escape(first)}\b(?![-.])")
    return "(?:" + "|".join(names) + ")"


def _optional_requires_errors(files: dict[str, str], docs: dict[str, ProjectDocument]) -> list[CatalogError]:
    errors = []
    for slug, doc in docs.items():
        sentences = _text_sentences(doc)
        for i, other in enumerate(doc.placement.dependencies.requires):
            if other not in docs:
                continue
            name = _name_pattern(docs[other])
            pattern = re.compile(rf"(?i:{_BEFORE}){name}|{name}(?i:{_AFTER})")
            optional = next((s for s in sentences if pattern.search(s)), None)
            if optional:
                errors.append(CatalogError(files[slug], f"placement.dependencies.requires[{i}]",
                                           f"requires {other!r}, but the entry's own text makes it an option: {optional.strip()!r}"))
    return errors


def _landscape_errors(file: str, doc: ProjectDocument, today: dt.date, max_age_days: int) -> list[CatalogError]:
    meta = doc.placement.landscape
    if meta is None:
        return [CatalogError(file, "placement.landscape", "no landscape metadata (license, repository, CNCF status, ...)")]
    errors = _provenance_errors(file, doc, today, max_age_days)
    if meta.as_of is None:
        return errors
    age = (today - meta.as_of).days
    if is_stale(meta, today, max_age_days):
        errors.append(CatalogError(file, "placement.landscape.as_of",
                                   f"checked {meta.as_of.isoformat()}, {age} days ago; re-check entries within {max_age_days} days"))
    if meta.as_of > today:
        errors.append(CatalogError(file, "placement.landscape.as_of", f"{meta.as_of.isoformat()} is in the future"))
    if meta.latest_release.date > meta.as_of:
        errors.append(CatalogError(file, "placement.landscape.latest_release.date",
                                   f"release date {meta.latest_release.date.isoformat()} is after the as-of date"))
    return errors


def lint_documents(
    documents: dict[str, ProjectDocument], *, today: dt.date | None = None, max_age_days: int = DEFAULT_MAX_AGE_DAYS,
    upstream: dict[str, UpstreamState] | None = None,
) -> list[CatalogError]:
    """`documents` maps a file name to its parsed document; returns every finding, sorted by file.
    `upstream` is the recorded upstream data by repository URL (default: fixtures/upstream)."""
    today = today or dt.datetime.now(dt.UTC).date()
    upstream = recorded_upstream(UPSTREAM_DIR) if upstream is None else upstream
    files = {doc.slug: file for file, doc in documents.items()}
    docs = {doc.slug: doc for doc in documents.values()}
    errors: list[CatalogError] = []
    for file, doc in documents.items():
        errors += _capability_errors(file, doc)
        errors += _source_errors(file, doc)
        errors += _landscape_errors(file, doc, today, max_age_days)
        if doc.placement.landscape is not None:
            errors += _release_errors(file, doc, upstream)
    errors += _relation_errors(files, docs)
    errors += _optional_requires_errors(files, docs)
    errors += _advertise_errors(files, docs)
    return sorted(errors, key=lambda e: (e.file, e.field))


def lint_catalog_dir(directory: Path, **options) -> list[CatalogError]:
    """Parse the directory (schema errors first, as import does), then lint the whole catalog."""
    try:
        parsed = read_catalog_dir(Path(directory))
    except CatalogInvalid as exc:
        return exc.errors
    return lint_documents({f"{doc.slug}.yaml": doc for doc in parsed}, **options)
