"""Record an upstream repository's release tags and licence from a local git snapshot.

    python tools/record_upstream.py /path/to/snapshot.git owner/name [--prefix operator/]

Writes fixtures/upstream/<owner>+<name>.json: the tags (name, date) the snapshot lists, the
licence its LICENSE file states and the snapshot's newest commit date. `lint_catalog` refuses a
`latest_release` that the recorded tags of its repository do not list, and `refresh_catalog`
reads the same shape from the GitHub API. A development tool: nothing at run time calls it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "upstream"
STABLE = re.compile(r"^v?\d+(\.\d+){1,3}$")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def licence(text: str) -> str | None:
    head = text[:3000]
    if "Apache License" in head and "Version 2.0" in head:
        return "Apache-2.0"
    if re.search(r"MIT License|Permission is hereby granted, free of charge", head):
        return "MIT"
    if "BSD 3-Clause" in head or "Neither the name" in head:
        return "BSD-3-Clause"
    if "GNU GENERAL PUBLIC LICENSE" in head and "Version 2" in head:
        return "GPL-2.0"
    return None


def _key(name: str) -> tuple:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def newest_release(tags: list[dict], prefix: str) -> dict | None:
    """The highest stable version tagged within 180 days of the newest stable tag (not simply the
    newest tag: a patch of an old line comes later);
    without a stable release, the newest pre-release that is not a release candidate."""
    own = [t for t in tags if t["name"].startswith(prefix) and "/" not in t["name"][len(prefix):]]
    stable = [t for t in own if STABLE.match(t["name"][len(prefix):])]
    if stable:  # a stray old tag with a high number (KAI's v0.20.1 of 2025) is not the latest line
        newest = max(t["date"] for t in stable)
        recent = [t for t in stable if (dt.date.fromisoformat(newest) - dt.date.fromisoformat(t["date"])).days <= 180]
        return max(recent, key=lambda t: _key(t["name"][len(prefix):]))
    pre = [t for t in own if "rc" not in t["name"].lower()]
    return pre[0] if pre else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("snapshot")
    parser.add_argument("repo", help="owner/name")
    parser.add_argument("--prefix", default="", help="release tags carry this prefix, e.g. cluster-autoscaler-")
    args = parser.parse_args()
    lines = git(args.snapshot, "for-each-ref", "--sort=-creatordate", "--format=%(refname:short) %(creatordate:short)", "refs/tags")
    tags = [dict(zip(("name", "date"), line.split(" ", 1))) for line in lines.splitlines() if line.strip()]
    latest = newest_release(tags, args.prefix)
    files = git(args.snapshot, "ls-tree", "--name-only", "HEAD").split()
    lic_file = next((f for f in files if f.upper().startswith(("LICENSE", "LICENCE", "COPYING"))), None)
    lic = licence(git(args.snapshot, "show", f"HEAD:{lic_file}")) if lic_file else None
    head = git(args.snapshot, "log", "-1", "--format=%H %cs").split()
    data = {
        "repository": f"https://github.com/{args.repo}",
        "read_from": f"git snapshot {head[0][:12]} (release tags and {lic_file or 'no LICENSE file'})",
        # the snapshot holds everything up to its newest commit or tag, whichever is later
        "checked": max([head[1], *(t["date"] for t in tags[:1])]),
        "license": lic,
        "latest_release": latest,
        "tags": tags[:300],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.repo.replace('/', '+')}.json"
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(path, latest, lic, head[1])


if __name__ == "__main__":
    main()
