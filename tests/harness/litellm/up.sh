#!/usr/bin/env bash
# up.sh: start a real LiteLLM proxy with a real PostgreSQL on 127.0.0.1, for
# the integration tests. Installs what is missing first (install.sh), makes a
# fresh PostgreSQL cluster in the state dir, applies LiteLLM's SQL migrations,
# starts the proxy and waits until it reports its database connected.
#
#   eval "$(tests/harness/litellm/up.sh)"
#
# stdout holds only `export` lines (LITELLM_URL, LITELLM_MASTER_KEY,
# LITELLM_DATABASE_URL, LITELLM_HARNESS_DIR); progress goes to stderr.
# If the harness of the state dir is already up and healthy it is reused;
# leftovers of a dead one are cleaned up first. See README.md for the options.
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/environment.sh
. "$here/lib/environment.sh"
# shellcheck source=lib/install.sh
. "$here/lib/install.sh"
# shellcheck source=lib/postgres.sh
. "$here/lib/postgres.sh"
# shellcheck source=lib/proxy.sh
. "$here/lib/proxy.sh"

[ $# -eq 0 ] || fail "usage: $0 (no arguments; options are environment variables, see README.md)"

asked_port=${LITELLM_PORT:-}
asked_pg_port=${PG_PORT:-}
asked_key=${LITELLM_MASTER_KEY:-}
LITELLM_PORT=${LITELLM_PORT:-4000}
PG_PORT=${PG_PORT:-55432}
LITELLM_MASTER_KEY=${LITELLM_MASTER_KEY:-sk-test-master-0000}

valid_port() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ]; }
valid_port "$LITELLM_PORT" || fail "LITELLM_PORT must be a port number, not '$LITELLM_PORT'"
valid_port "$PG_PORT" || fail "PG_PORT must be a port number, not '$PG_PORT'"
[ "$LITELLM_PORT" != "$PG_PORT" ] || fail "LITELLM_PORT and PG_PORT must differ"
[[ $LITELLM_MASTER_KEY == sk-* ]] || fail "LITELLM_MASTER_KEY must start with 'sk-' (LiteLLM refuses other master keys)"
[[ $LITELLM_MASTER_KEY =~ ^[A-Za-z0-9._~-]+$ ]] || fail "LITELLM_MASTER_KEY may only hold letters, digits and . _ ~ -"
if [ -n "${LITELLM_CONFIG:-}" ]; then
  [ -f "$LITELLM_CONFIG" ] || fail "LITELLM_CONFIG=$LITELLM_CONFIG is not a file"
  LITELLM_CONFIG=$(realpath -- "$LITELLM_CONFIG")
fi
case "$STATE" in
  / | /tmp | /var | /var/tmp | /home | /root | "${HOME:-/root}") fail "refusing to use $STATE as the state dir (LITELLM_HARNESS_DIR)" ;;
esac

print_exports() {
  printf 'export LITELLM_URL=%q\n' "http://127.0.0.1:$LITELLM_PORT"
  printf 'export LITELLM_MASTER_KEY=%q\n' "$LITELLM_MASTER_KEY"
  printf 'export LITELLM_DATABASE_URL=%q\n' "$(database_url)"
  printf 'export LITELLM_HARNESS_DIR=%q\n' "$STATE"
}

healthy() {
  same_process "${PROXY_PID:-}" "${PROXY_START:-}" && pg_running &&
    curl -s -m 5 "http://127.0.0.1:$LITELLM_PORT/health/readiness" | grep -Eq '"db": ?"connected"'
}

need_cache
mkdir -p "$(dirname -- "$STATE")"
lock_state

# ---- an existing harness in the state dir: reuse it, or clean up its leftovers ----
if [ -f "$MARKER" ]; then
  if load_state && [ -n "${PG_BINDIR:-}" ] && healthy; then
    say "already up in $STATE; reusing it (down.sh first for a fresh one)"
    for setting in "LITELLM_PORT:$asked_port" "PG_PORT:$asked_pg_port" "LITELLM_MASTER_KEY:$asked_key"; do
      name=${setting%%:*} asked=${setting#*:}
      [ -z "$asked" ] || [ "$asked" = "${!name}" ] ||
        say "warning: $name=$asked was asked for, but the running harness has ${!name} (printed below)"
    done
    print_exports
    exit 0
  fi
  say "leftovers of a stopped harness in $STATE: cleaning up"
  PG_BINDIR=${PG_BINDIR:-$(find_pg_bin || true)}
  proxy_stop
  [ -z "$PG_BINDIR" ] || pg_stop
  if [ -n "$PG_BINDIR" ] && pg_running; then fail "could not stop the old PostgreSQL of $STATE"; fi
  rm -rf -- "$STATE"
  LITELLM_PORT=${asked_port:-4000} PG_PORT=${asked_pg_port:-55432} LITELLM_MASTER_KEY=${asked_key:-sk-test-master-0000}
  unset PROXY_PID PROXY_START
elif [ -e "$STATE" ] && [ -n "$(ls -A -- "$STATE" 2>/dev/null)" ]; then
  fail "$STATE exists, is not empty and is not a harness of this kind; choose another LITELLM_HARNESS_DIR"
fi

started=$SECONDS
port_busy "$PG_PORT" && fail "port 127.0.0.1:$PG_PORT is already in use (set PG_PORT)"
port_busy "$LITELLM_PORT" && fail "port 127.0.0.1:$LITELLM_PORT is already in use (set LITELLM_PORT)"

install_all
# shellcheck disable=SC1090
. "$INSTALLED_ENV"
PG_BINDIR=$(find_pg_bin) || fail "no PostgreSQL server programs found (set PG_BIN)"
installed=$SECONDS

mkdir -p "$STATE" "$LOGS"
chmod 755 "$STATE"
: >"$MARKER"
save_state
proxy_config

# On failure: stop what was started, keep the state dir (logs) for a look.
cleanup_on_failure() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    say "start-up failed: stopping what was started; logs are kept in $STATE (down.sh removes it)"
    proxy_stop || true
    pg_stop || true
  fi
}
trap cleanup_on_failure EXIT
trap 'exit 130' INT TERM

pg_create_cluster
pg_start
pg_create_litellm_database "$INSTALLED_MIGRATIONS" "$INSTALLED_SCHEMA"
database_ready=$SECONDS
say "PostgreSQL ready on 127.0.0.1:$PG_PORT ($((database_ready - installed)) s)"

proxy_start
save_state
proxy_wait_ready || fail "the LiteLLM proxy did not become ready (log: $PROXY_LOG)"
say "LiteLLM $LITELLM_VERSION ready on http://127.0.0.1:$LITELLM_PORT (proxy $((SECONDS - database_ready)) s, total $((SECONDS - started)) s)"
trap - EXIT
print_exports
