"""What upstream says about a catalog entry now: latest release, licence, archived flag, CNCF status.

Pure Python, no Django. Two readers share one shape (`UpstreamState`):

- the recorded upstream data in `fixtures/upstream/<owner>+<name>.json` (release tags and licence
  read from a git snapshot by `tools/record_upstream.py`); `lint_catalog` refuses a latest release
  that these tags do not list;
- `GitHubLandscapeClient`, which reads the GitHub REST API (repository, latest release) and the
  CNCF landscape data. It takes the function that fetches a URL, so production passes an HTTP
  getter and tests pass recorded responses (tests stay offline).

`differences` turns a state into the field changes `manage.py refresh_catalog` files as proposals.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel, ConfigDict

from placement.catalog.schemas import FIXTURES_DIR, CncfStatus, ProjectDocument

UPSTREAM_DIR = FIXTURES_DIR / "upstream"
GITHUB_API = "https://api.github.com"
LANDSCAPE_URL = "https://raw.githubusercontent.com/cncf/landscape/master/landscape.yml"
_GITHUB_REPO = re.compile(r"^https://github\.com/([^/]+)/([^/#?]+?)(?:\.git)?/?$")


class Tag(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    date: dt.date


class UpstreamState(BaseModel):
    """An upstream repository's state on `checked`; None where the reader could not tell."""

    model_config = ConfigDict(extra="ignore")
    repository: str
    read_from: str
    checked: dt.date
    license: str | None = None
    latest_release: Tag | None = None
    tags: list[Tag] = []
    archived: bool | None = None
    cncf_status: CncfStatus | None = None

    def lists(self, version: str) -> bool:
        """Whether the tags hold this release (`v0.20.0 (device plugin)` names tag v0.20.0)."""
        tag = version.split(" ")[0]
        return any(t.name == tag for t in self.tags)


def github_repo(url: str) -> str | None:
    """`https://github.com/NVIDIA/k8s-device-plugin` -> `NVIDIA/k8s-device-plugin`."""
    match = _GITHUB_REPO.match(url or "")
    return f"{match.group(1)}/{match.group(2)}" if match else None


def recorded_upstream(directory: Path = UPSTREAM_DIR) -> dict[str, UpstreamState]:
    """Repository URL -> recorded state, from every JSON file of the directory."""
    directory = Path(directory)
    if not directory.is_dir():
        return {}
    states = {}
    for path in sorted(directory.glob("*.json")):
        state = UpstreamState.model_validate(json.loads(path.read_text(encoding="utf-8")))
        states[state.repository] = state
    return states


class UpstreamUnavailable(Exception):
    """Upstream could not be read (network, rate limit, no recorded response); the entry is skipped."""


class UpstreamClient(Protocol):
    def read(self, doc: ProjectDocument) -> UpstreamState | None:
        """The entry's upstream state, or None when it has no repository this client can read."""


Fetch = Callable[[str], Any]  # URL -> parsed JSON (or text for the landscape file); raises on failure


class GitHubLandscapeClient:
    """Production reader: GitHub's REST API for the repository and its latest release, the CNCF
    landscape (landscape.yml) for maturity. `fetch(url)` returns parsed JSON for API URLs and the
    text for LANDSCAPE_URL; a repository GitHub answers 404 for is reported as None."""

    def __init__(self, fetch: Fetch, *, today: dt.date | None = None):
        self._fetch = fetch
        self._today = today or dt.datetime.now(dt.UTC).date()
        self._landscape: dict[str, CncfStatus] | None = None

    def _cncf(self) -> dict[str, CncfStatus]:
        if self._landscape is None:
            self._landscape = landscape_statuses(self._fetch(LANDSCAPE_URL))
        return self._landscape

    def read(self, doc: ProjectDocument) -> UpstreamState | None:
        meta = doc.placement.landscape
        repo = github_repo(meta.repository) if meta else None
        if repo is None:
            return None
        info = self._fetch(f"{GITHUB_API}/repos/{repo}")
        if info is None:
            raise UpstreamUnavailable(f"GitHub has no repository {repo}")
        release = self._fetch(f"{GITHUB_API}/repos/{repo}/releases/latest")
        latest = None
        if isinstance(release, dict) and release.get("tag_name"):
            latest = Tag(name=release["tag_name"], date=dt.date.fromisoformat(release["published_at"][:10]))
        licence = ((info.get("license") or {}).get("spdx_id")) if isinstance(info, dict) else None
        return UpstreamState(
            repository=meta.repository,
            read_from=f"GitHub REST API repos/{repo} and releases/latest; CNCF landscape.yml",
            checked=self._today,
            license=None if licence in (None, "NOASSERTION") else licence,
            latest_release=latest,
            tags=[latest] if latest else [],
            archived=bool(info.get("archived")) if isinstance(info, dict) else None,
            # a repository the landscape does not list says nothing: Kubernetes SIG projects share
            # Kubernetes' status, vendor projects are simply absent
            cncf_status=self._cncf().get(meta.repository.rstrip("/").lower()),
        )


class RecordedFetch:
    """`fetch` for tests and offline runs: URL -> recorded body from `<directory>/responses.json`
    (JSON bodies as JSON, the landscape file as a string)."""

    def __init__(self, directory: Path):
        path = Path(directory) / "responses.json"
        self._responses = json.loads(path.read_text(encoding="utf-8"))

    def __call__(self, url: str) -> Any:
        if url not in self._responses:
            raise UpstreamUnavailable(f"no recorded response for {url}")
        return self._responses[url]


def http_fetch(token: str | None = None, timeout: float = 20.0) -> Fetch:
    """`fetch` for production: GitHub's REST API (a token raises the rate limit) and raw files."""
    import urllib.error
    import urllib.request

    def fetch(url: str) -> Any:
        headers = {"Accept": "application/vnd.github+json", "User-Agent": "gpu-placement-atlas"}
        if token and url.startswith(GITHUB_API):
            headers["Authorization"] = f"Bearer {token}"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
                body = response.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None  # no release yet, or no such repository
            raise UpstreamUnavailable(f"{url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError) as exc:
            raise UpstreamUnavailable(f"{url}: {exc}") from None
        return body if url == LANDSCAPE_URL else json.loads(body)

    return fetch


def landscape_statuses(text: str) -> dict[str, CncfStatus]:
    """repo_url (lower case) -> CNCF maturity, from the landscape's landscape.yml."""
    data = yaml.safe_load(text) or {}
    found: dict[str, CncfStatus] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            # landscape.yml writes each entry as `- item:` followed by its fields on the same mapping
            if "item" in node and node.get("repo_url") and node.get("project") in {"sandbox", "incubating", "graduated"}:
                found[str(node["repo_url"]).rstrip("/").lower()] = CncfStatus(node["project"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return found


@dataclass(frozen=True)
class FieldChange:
    field: str  # placement.landscape.<name>
    old: Any
    new: Any

    def describe(self) -> str:
        return f"{self.field.removeprefix('placement.landscape.')}: {self.old} -> {self.new}"


def differences(doc: ProjectDocument, state: UpstreamState) -> list[FieldChange]:
    """What upstream says differently from the entry: release, licence, archived, CNCF status.
    Unknown values (None) are no difference; a release that only gains a suffix in the catalog
    (`v0.20.0 (device plugin)`) is the same release."""
    meta = doc.placement.landscape
    if meta is None:
        return []
    changes = []
    latest = state.latest_release
    if latest is not None and meta.latest_release.version.split(" ")[0] != latest.name:
        changes.append(FieldChange("placement.landscape.latest_release",
                                   f"{meta.latest_release.version} ({meta.latest_release.date.isoformat()})",
                                   f"{latest.name} ({latest.date.isoformat()})"))
    if state.license is not None and state.license != meta.license:
        changes.append(FieldChange("placement.landscape.license", meta.license, state.license))
    if state.archived is not None and state.archived != meta.archived:
        changes.append(FieldChange("placement.landscape.archived", meta.archived, state.archived))
    if state.cncf_status is not None and state.cncf_status != meta.cncf_status:
        changes.append(FieldChange("placement.landscape.cncf_status", meta.cncf_status.value, state.cncf_status.value))
    return changes


def apply_state(doc: ProjectDocument, state: UpstreamState, changes: list[FieldChange]) -> ProjectDocument:
    """The entry with the changed facts taken from upstream and the read recorded as a source that
    supports exactly those fields (so `as_of` moves to the day it was read)."""
    data = doc.model_dump(mode="json", exclude_none=True)
    meta = data["placement"]["landscape"]
    fields = []
    for change in changes:
        name = change.field.removeprefix("placement.landscape.")
        fields.append(f"landscape.{name}")
        if name == "latest_release":
            meta["latest_release"] = {"version": state.latest_release.name, "date": state.latest_release.date.isoformat()}
        elif name == "cncf_status":
            meta["cncf_status"] = state.cncf_status.value
        else:
            meta[name] = getattr(state, name)
    meta.pop("as_of", None)  # derived again from the sources, now including this read
    meta["evidence"] = "V"
    data["placement"]["sources"].append({
        "title": f"{state.read_from} ({github_repo(state.repository) or state.repository})",
        "url": state.repository, "tag": "V", "supports": fields, "checked": state.checked.isoformat(),
    })
    return ProjectDocument.model_validate(data)
