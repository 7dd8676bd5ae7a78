"""A small HTTPS client for the local API server: discovery, server-side apply, get, list, delete.
Plain urllib with the admin client certificate; no kubectl, no client library."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

FIELD_MANAGER = "atlas"


class KubeError(Exception):
    """The API server refused a request; ``message`` is its own Status message."""

    def __init__(self, code: int, message: str, reason: str = ""):
        super().__init__(f"{code} {reason}: {message}".strip())
        self.code, self.message, self.reason = code, message, reason


@dataclass(frozen=True)
class Resource:
    group_version: str
    plural: str
    namespaced: bool


class Kube:
    def __init__(self, server: str, ca: str, cert: str, key: str, timeout: float = 30.0):
        self.server = server.rstrip("/")
        self.timeout = timeout
        self._ctx = ssl.create_default_context(cafile=ca)
        self._ctx.load_cert_chain(cert, key)
        self._resources: dict[tuple[str, str], Resource] = {}

    # --- raw requests ------------------------------------------------------------------------
    def request(self, method: str, path: str, body=None, content_type: str = "application/json", query=None):
        url = self.server + path + (("?" + urllib.parse.urlencode(query)) if query else "")
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type,
                                                                              "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self._ctx, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                status = json.loads(raw)
                raise KubeError(exc.code, status.get("message", raw.decode(errors="replace")), status.get("reason", "")) from None
            except ValueError:
                raise KubeError(exc.code, raw.decode(errors="replace")) from None
        return json.loads(raw) if raw else None

    def healthy(self) -> bool:
        try:
            url = self.server + "/readyz"
            with urllib.request.urlopen(urllib.request.Request(url), context=self._ctx, timeout=5) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError, ssl.SSLError):
            return False

    # --- discovery ---------------------------------------------------------------------------
    def refresh(self) -> None:
        self._resources.clear()
        versions = [("v1", "/api/v1")]
        for group in self.request("GET", "/apis")["groups"]:
            versions += [(v["groupVersion"], f"/apis/{v['groupVersion']}") for v in group["versions"]]
        for gv, path in versions:
            try:
                listing = self.request("GET", path)
            except KubeError:
                continue  # an aggregated API that does not answer
            for r in listing.get("resources", []):
                if "/" not in r["name"]:
                    self._resources[(gv, r["kind"])] = Resource(gv, r["name"], r["namespaced"])

    def resource(self, api_version: str, kind: str) -> Resource:
        key = (api_version, kind)
        if key not in self._resources:
            self.refresh()
        if key not in self._resources:
            raise KubeError(404, f'the server does not serve kind "{kind}" in version "{api_version}"', "NotFound")
        return self._resources[key]

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        r = self.resource(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        ns = f"/namespaces/{namespace or 'default'}" if r.namespaced else ""
        return f"{base}{ns}/{r.plural}" + (f"/{name}" if name else "")

    # --- objects -----------------------------------------------------------------------------
    def apply(self, obj: dict) -> dict:
        meta = obj.get("metadata", {})
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        return self.request("PATCH", path, obj, content_type="application/apply-patch+yaml",
                            query={"fieldManager": FIELD_MANAGER, "force": "true"})

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict:
        return self.request("GET", self.path(api_version, kind, namespace, name))

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[dict]:
        r = self.resource(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        path = f"{base}/namespaces/{namespace}/{r.plural}" if (namespace and r.namespaced) else f"{base}/{r.plural}"
        return self.request("GET", path, query={"labelSelector": label_selector} if label_selector else None)["items"]

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None,
               grace_seconds: int | None = None) -> None:
        """Delete, dependents in the background; ``grace_seconds=0`` removes a pod at once, without waiting for
        its kubelet to confirm (``kubectl delete --force --grace-period=0``)."""
        body = {"propagationPolicy": "Background"}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        try:
            self.request("DELETE", self.path(api_version, kind, namespace, name), body)
        except KubeError as exc:
            if exc.code != 404:
                raise
