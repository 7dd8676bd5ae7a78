"""An export: files of Kubernetes objects, Helm values and configs, rendered as YAML or a .zip."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from typing import Literal

import yaml

FileKind = Literal["manifests", "helm-values", "text"]


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # a file someone reads and edits: no &id001 anchors
        return True


def _str_presenter(dumper, value: str):
    # Embedded configs (mig-parted, device plugin, scheduler conf) read best as literal blocks.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def to_yaml(data) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


@dataclass
class ExportFile:
    """One file of the export.

    ``manifests``: Kubernetes objects (a multi-document YAML); ``helm-values``: one values document
    for ``chart`` (project name in targets.UPSTREAM); ``text``: ``body`` as is (README).
    """

    path: str
    kind: FileKind
    objects: list[dict] = field(default_factory=list)
    values: dict | None = None
    chart: str | None = None
    body: str = ""
    note: str = ""

    def render(self) -> str:
        if self.kind == "manifests":
            return "".join("---\n" + to_yaml(obj) for obj in self.objects)
        if self.kind == "helm-values":
            header = f"# Helm values for {self.chart}" + (f": {self.note}" if self.note else "") + "\n"
            return header + to_yaml(self.values or {})
        return self.body


@dataclass
class Export:
    name: str
    files: list[ExportFile]
    targets: dict[str, str]

    def file(self, path: str) -> ExportFile | None:
        return next((f for f in self.files if f.path == path), None)

    def objects(self) -> list[dict]:
        return [obj for f in self.files if f.kind == "manifests" for obj in f.objects]

    def helm_values(self) -> dict[str, dict]:
        return {f.chart: f.values for f in self.files if f.kind == "helm-values"}

    def zip_bytes(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for f in self.files:
                # A fixed timestamp keeps the archive byte-identical for the same stack and scenario.
                info = zipfile.ZipInfo(f"{self.name}/{f.path}", date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, f.render())
        return buffer.getvalue()

    def tree(self) -> list[dict]:
        """Files grouped by folder, for the deploy page."""
        folders: dict[str, list[ExportFile]] = {}
        for f in self.files:
            folder, _, _name = f.path.rpartition("/")
            folders.setdefault(folder, []).append(f)
        return [{"folder": k, "files": v} for k, v in folders.items()]
