#!/usr/bin/env bash
# down.sh: stop the LiteLLM proxy and PostgreSQL that up.sh started for the
# state dir (LITELLM_HARNESS_DIR, default /tmp/litellm-crossplane-litellm),
# and delete that dir. Only what up.sh recorded is stopped: the proxy's
# process group (by PID and start time) and the cluster of $STATE/pg/data.
# A dir without the harness's marker file is never touched. The install
# cache is kept.
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/postgres.sh
. "$here/lib/postgres.sh"
# shellcheck source=lib/proxy.sh
. "$here/lib/proxy.sh"

[ $# -eq 0 ] || fail "usage: $0 (no arguments; LITELLM_HARNESS_DIR names the harness)"
[ -e "$STATE" ] || { say "nothing to do: $STATE does not exist"; exit 0; }
[ -f "$MARKER" ] || fail "$STATE is not a LiteLLM harness of this kind (no $(basename -- "$MARKER")); not touching it"
lock_state
[ -f "$MARKER" ] || { say "nothing to do: $STATE was removed meanwhile"; exit 0; }

load_state || say "warning: $STATE_ENV is missing; stopping what can be found"
PG_BINDIR=${PG_BINDIR:-$(find_pg_bin || true)}
proxy_stop
if [ -f "$PGDATA/PG_VERSION" ]; then
  [ -n "$PG_BINDIR" ] || fail "cannot find pg_ctl to stop PostgreSQL in $PGDATA (set PG_BIN)"
  pg_stop
  ! pg_running || fail "PostgreSQL in $PGDATA is still running; $STATE is kept"
fi
rm -rf -- "$STATE"
say "stopped; removed $STATE"
