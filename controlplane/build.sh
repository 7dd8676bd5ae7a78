#!/usr/bin/env bash
# Build upstream components pinned by the Go modules under controlplane/ into a cache outside the
# repository, and print the directory holding the binaries. A component is rebuilt only when its
# go.mod/go.sum/ldflags change (the cache key is their hash), so repeated runs cost nothing.
#
#   controlplane/build.sh helm            # -> prints e.g. /root/.cache/atlas-controlplane/helm-1a2b3c4d/bin
#
# Each component is its own module (controlplane/<component>/go.mod, `tool` directives) because
# upstream projects pin different k8s.io versions. The cache root is ATLAS_CONTROLPLANE_CACHE
# (default ~/.cache/atlas-controlplane). Build output goes to <key>/build.log; on failure the tail of
# that log is printed with the component's name and the script exits non-zero.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${ATLAS_CONTROLPLANE_CACHE:-$HOME/.cache/atlas-controlplane}

build_one() {
  local comp=$1 dir="$here/$1"
  [ -f "$dir/go.mod" ] || { echo "controlplane: unknown component '$comp' (known: $(cd "$here" && ls -d */ | tr -d / | tr '\n' ' '))" >&2; return 2; }
  local key
  # ldflags too: a binary linked with other flags (e.g. the version a component checks itself against) is another binary.
  key=$({ cat "$dir/go.mod" "$dir/go.sum" "$here/build.sh"; cat "$dir/ldflags" 2>/dev/null || true; } | sha256sum | cut -c1-12)
  local out="$cache/$comp-$key"
  if [ -f "$out/.complete" ]; then echo "$out/bin"; return 0; fi
  rm -rf "$out"; mkdir -p "$out/bin"
  local ldflags=""
  [ -f "$dir/ldflags" ] && ldflags=$(cat "$dir/ldflags")
  echo "controlplane: building $comp (cold builds take minutes; log: $out/build.log)" >&2
  # Every `tool` in the module is a binary to build.
  local tools
  tools=$(awk '/^tool[[:space:]]*\(/{b=1;next} b&&/^\)/{b=0} b{print $1} /^tool[[:space:]]+[^(]/{print $2}' "$dir/go.mod")
  if ! (cd "$dir" && go build -ldflags "$ldflags" -o "$out/bin/" $tools) >"$out/build.log" 2>&1; then
    echo "controlplane: building $comp failed:" >&2; tail -n 30 "$out/build.log" >&2; return 1
  fi
  touch "$out/.complete"
  echo "$out/bin"
}

[ $# -gt 0 ] || { echo "usage: $0 COMPONENT..." >&2; exit 2; }
for c in "$@"; do build_one "$c"; done
