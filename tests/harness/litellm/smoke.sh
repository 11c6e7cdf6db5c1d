#!/usr/bin/env bash
# smoke.sh: the harness's own end-to-end test of LiteLLM's admin API: team,
# key, budget and model created, read, updated and deleted with caller-chosen
# ids, each step checked in the API's answers and in the rows of PostgreSQL,
# with metadata full of awkward characters to test escaping through the
# query-engine shim. Exits non-zero if any check fails.
#
# Tests the harness of LITELLM_HARNESS_DIR (default /tmp/litellm-crossplane-litellm)
# when one is there; otherwise the proxy of LITELLM_URL / LITELLM_MASTER_KEY
# (and LITELLM_DATABASE_URL for the database checks) from the environment.
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"

[ $# -eq 0 ] || fail "usage: $0 (no arguments)"
if load_state; then
  url=http://127.0.0.1:$LITELLM_PORT key=$LITELLM_MASTER_KEY db=$(database_url)
elif [ -n "${LITELLM_URL:-}" ] && [ -n "${LITELLM_MASTER_KEY:-}" ]; then
  url=$LITELLM_URL key=$LITELLM_MASTER_KEY db=${LITELLM_DATABASE_URL:-}
else
  fail "no harness in $STATE, and LITELLM_URL / LITELLM_MASTER_KEY are not set (start one with up.sh)"
fi
case "$url" in
  http://127.0.0.1:* | http://localhost:* | http://\[::1\]:*) ;;
  *) fail "$url is not on this machine's loopback; smoke.sh only talks to 127.0.0.1" ;;
esac
command -v python3 >/dev/null || fail "python3 is needed"
[ -z "$db" ] || command -v psql >/dev/null || { say "warning: no psql; skipping the database checks"; db=; }
SMOKE_URL=$url SMOKE_KEY=$key SMOKE_DB=$db exec python3 "$here/python/smoke.py"
