#!/usr/bin/env bash
# reset.sh: wipe all LiteLLM data of a running harness, between tests.
#
#   reset.sh         stop the proxy, replace its database with a fresh copy of
#                    the pristine migrated one, start the proxy again and wait
#                    until it is ready (as long as a proxy start; it also
#                    clears the proxy's in-memory caches)
#   reset.sh --hot   empty every LiteLLM table while the proxy keeps running
#                    (well under a second; the proxy may go on serving keys,
#                    teams or models from its caches for a while)
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/environment.sh
. "$here/lib/environment.sh"
# shellcheck source=lib/postgres.sh
. "$here/lib/postgres.sh"
# shellcheck source=lib/proxy.sh
. "$here/lib/proxy.sh"

hot=0
case "${1:-}" in
  "") ;;
  --hot) hot=1 ;;
  *) fail "usage: $0 [--hot]" ;;
esac
[ $# -le 1 ] || fail "usage: $0 [--hot]"

lock_state
load_state || fail "no harness in $STATE (start one with up.sh)"
pg_running || fail "the PostgreSQL of $STATE is not running (down.sh, then up.sh)"

if [ "$hot" = 1 ]; then
  psql_as postgres "$DB_NAME" <<'SQL'
DO $$
DECLARE tables text;
BEGIN
  SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') INTO tables
    FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations';
  IF tables IS NOT NULL THEN
    EXECUTE 'TRUNCATE ' || tables || ' RESTART IDENTITY CASCADE';
  END IF;
END $$;
SQL
  say "emptied every LiteLLM table of $STATE (the proxy kept running)"
  exit 0
fi

begin=$SECONDS
# the installation the harness was started with
CACHE=${HARNESS_CACHE:-$CACHE} VENV=${HARNESS_VENV:-$VENV} NODE_DIR=${HARNESS_NODE_DIR:-$NODE_DIR}
PRISMA_HOME=$CACHE/prisma
if [ ! -x "$VENV/bin/litellm" ] || [ ! -d "$NODE_DIR/node_modules" ]; then
  fail "the installation this harness was started with ($VENV) is gone: down.sh, then up.sh"
fi
proxy_stop
pg_copy_live_database
proxy_start
save_state
proxy_wait_ready || fail "the LiteLLM proxy did not become ready after the reset (log: $PROXY_LOG)"
say "reset done in $((SECONDS - begin)) s"
