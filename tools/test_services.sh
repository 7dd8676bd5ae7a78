#!/usr/bin/env bash
# The services `make test` needs, on a bare Debian machine: install what is missing from Debian's
# packages (PostgreSQL, Redis, Chromium, poppler-utils), start a private PostgreSQL cluster and a Redis server on
# loopback for one command, and stop what it started when that command ends (pass or fail).
#
#   tools/test_services.sh install            # apt-get install whatever is missing
#   tools/test_services.sh run -- CMD ARGS... # start both, run CMD with DATABASE_URL/ATLAS_TEST_BROKER_URL set, stop both
#
# Ports: ATLAS_TEST_PG_PORT (default 55432) and ATLAS_TEST_REDIS_PORT (default 56379), away from a
# developer's own 5432/6379. A port already in use is refused with its number, and nothing is started.
set -euo pipefail

PG_PORT=${ATLAS_TEST_PG_PORT:-55432}
REDIS_PORT=${ATLAS_TEST_REDIS_PORT:-56379}

log() { echo "test-services: $*" >&2; }

need_packages() {
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)  # reads the board pack's PDF in tests
  echo "${missing[@]:-}"
}

install() {
  local missing
  missing=$(need_packages)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: $missing (run as root, or: sudo apt-get install $missing)"
    exit 1
  fi
  log "installing $missing"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  # Debian's postinst starts services where it can; this script starts its own.
  command -v pg_ctlcluster >/dev/null 2>&1 && pg_lsclusters -h 2>/dev/null | while read -r ver name _; do
    pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" stop >/dev/null 2>&1 || true
  done
  pkill -x redis-server >/dev/null 2>&1 || true
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

PG_BIN=
STATE=
PG_STARTED=
REDIS_STARTED=

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop_all() {
  local rc=$?
  if [ -n "$REDIS_STARTED" ]; then
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || kill "$(cat "$STATE/redis.pid" 2>/dev/null)" 2>/dev/null || true
    log "stopped Redis on 127.0.0.1:$REDIS_PORT"
  fi
  if [ -n "$PG_STARTED" ]; then
    as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -m fast -w stop >/dev/null 2>&1 || true
    log "stopped PostgreSQL on 127.0.0.1:$PG_PORT"
  fi
  [ -n "$STATE" ] && rm -rf "$STATE"
  exit "$rc"
}

start_all() {
  for port in "$PG_PORT" "$REDIS_PORT"; do
    if ! port_free "$port"; then
      log "port 127.0.0.1:$port is in use; set ATLAS_TEST_PG_PORT / ATLAS_TEST_REDIS_PORT to free ports"
      exit 1
    fi
  done
  PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
  STATE=$(mktemp -d /tmp/atlas-test-services.XXXXXX)
  chmod 755 "$STATE"
  trap stop_all EXIT INT TERM
  mkdir "$STATE/pg"
  [ "$(id -u)" = 0 ] && chown postgres: "$STATE/pg"
  as_pg "$PG_BIN/initdb" -D "$STATE/pg" -U postgres --auth=trust --encoding=UTF8 --no-sync >"$STATE/initdb.log" 2>&1 \
    || { log "initdb failed:"; cat "$STATE/initdb.log" >&2; exit 1; }
  # Tests only: no fsync, no durability; loopback only.
  if ! as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -l "$STATE/pg/server.log" -w -t 60 start \
      -o "-h 127.0.0.1 -p $PG_PORT -k $STATE/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null; then
    log "PostgreSQL did not start:"; cat "$STATE/pg/server.log" >&2; exit 1
  fi
  PG_STARTED=1
  log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log" --dir "$STATE"
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 || { log "Redis did not start:"; cat "$STATE/redis.log" >&2; exit 1; }
  REDIS_STARTED=1
  log "Redis $(redis-server --version | awk '{print $3}' | cut -d= -f2) on 127.0.0.1:$REDIS_PORT"
}

case "${1:-}" in
  install) install ;;
  run)
    shift; [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || { log "usage: $0 run -- CMD ARGS..."; exit 2; }
    install
    start_all
    export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/test"
    export ATLAS_TEST_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/15"
    export ATLAS_TEST_PG_URL="postgres://postgres@127.0.0.1:$PG_PORT"
    set +e
    "$@"
    rc=$?
    set -e
    exit "$rc"
    ;;
  *) echo "usage: $0 install | run -- CMD ARGS..." >&2; exit 2 ;;
esac
