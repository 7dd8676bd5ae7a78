"""Reading and writing catalog YAML files (one file per project). Pure Python, no Django.

`read_catalog_dir` validates every file and the cross-references between them before anything is
written anywhere; it returns all errors at once, each naming file, field and reason.
`dump_document` writes the canonical form, so export -> import -> export is byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from placement.catalog.schemas import CatalogVocabulary, ProjectDocument, builtin_vocabulary, format_error_location
from placement.common.parsing import ParseProblem, load_yaml


@dataclass(frozen=True)
class CatalogError:
    file: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.reason}"


class CatalogInvalid(Exception):
    def __init__(self, errors: list[CatalogError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


def validation_errors(exc: ValidationError, file: str) -> list[CatalogError]:
    return [CatalogError(file, format_error_location(tuple(e["loc"])), e["msg"]) for e in exc.errors()]


def parse_document(data: Any, file: str, vocabulary: CatalogVocabulary | None = None) -> ProjectDocument:
    """Validate one parsed YAML/JSON document; raises CatalogInvalid naming file and field."""
    if not isinstance(data, dict):
        raise CatalogInvalid([CatalogError(file, "(document)", "expected a mapping of template fields")])
    try:
        return ProjectDocument.model_validate(data, context={"vocabulary": vocabulary or builtin_vocabulary()})
    except ValidationError as exc:
        raise CatalogInvalid(validation_errors(exc, file)) from None


def reference_errors(documents: dict[str, ProjectDocument], known_slugs: set[str] | None = None) -> list[CatalogError]:
    """Slugs named in requires / bundles / conflicts_with must exist in the catalog.

    `documents` maps a file name (or any label for error messages) to its document.
    """
    known = {doc.slug for doc in documents.values()} | (known_slugs or set())
    errors = []
    for file, doc in documents.items():
        p = doc.placement
        for field, slugs in (
            ("placement.dependencies.requires", p.dependencies.requires),
            ("placement.bundles", p.bundles),
            ("placement.conflicts_with", p.conflicts_with),
        ):
            for slug in slugs:
                if slug not in known:
                    errors.append(CatalogError(file, field, f"unknown project {slug!r}"))
                elif slug == doc.slug:
                    errors.append(CatalogError(file, field, "a project cannot refer to itself"))
    return errors


def read_catalog_dir(directory: Path, vocabulary: CatalogVocabulary | None = None) -> list[ProjectDocument]:
    """Parse and validate every *.yaml file; raise CatalogInvalid with every error found."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CatalogInvalid([CatalogError(str(directory), "(directory)", "not a directory")])
    files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    if not files:
        raise CatalogInvalid([CatalogError(str(directory), "(directory)", "no .yaml files found")])
    errors: list[CatalogError] = []
    by_slug: dict[str, ProjectDocument] = {}
    files_by_slug: dict[str, str] = {}
    for path in files:
        try:
            data = load_yaml(path.read_bytes())
        except ParseProblem as exc:
            reason = f"not valid YAML: {exc.reason}" if exc.syntax else exc.reason
            errors.append(CatalogError(path.name, exc.where or "(document)", reason))
            continue
        except OSError as exc:
            errors.append(CatalogError(path.name, "(document)", f"cannot read: {exc.strerror or exc}"))
            continue
        try:
            doc = parse_document(data, path.name, vocabulary)
        except CatalogInvalid as exc:
            errors.extend(exc.errors)
            continue
        except RecursionError:
            errors.append(CatalogError(path.name, "(document)", "nested too deeply to validate"))
            continue
        if doc.slug in by_slug:
            errors.append(CatalogError(path.name, "slug", f"duplicate slug {doc.slug!r} (also in {files_by_slug[doc.slug]})"))
            continue
        by_slug[doc.slug] = doc
        files_by_slug[doc.slug] = path.name
    errors.extend(reference_errors({files_by_slug[slug]: doc for slug, doc in by_slug.items()}))
    if errors:
        raise CatalogInvalid(errors)
    return [by_slug[s] for s in sorted(by_slug)]


def document_to_data(doc: ProjectDocument) -> dict[str, Any]:
    return doc.model_dump(mode="json", exclude_none=True)


def dump_document(doc: ProjectDocument) -> str:
    return yaml.safe_dump(document_to_data(doc), sort_keys=False, allow_unicode=True, width=100)


def write_catalog_dir(documents: list[ProjectDocument], directory: Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for doc in sorted(documents, key=lambda d: d.slug):
        path = directory / f"{doc.slug}.yaml"
        path.write_text(dump_document(doc), encoding="utf-8")
        written.append(path)
    return written
