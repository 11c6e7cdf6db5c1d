#!/usr/bin/env bash
# image.sh: stands in for LiteLLM's container image (ghcr.io/berriai/litellm),
# for the test kubelet that runs provisioned proxies as local processes.
#
#   image.sh litellm ARGS...   the image's entrypoint: `litellm ARGS...`
#   image.sh python ARGS...    the image's Python (the harness virtualenv)
#   image.sh migrations-dir    prints the folder of LiteLLM's SQL migrations
#                              (litellm_proxy_extras/migrations), one per subfolder
#
# `litellm` and `python` run with the harness's environment of LiteLLM: the
# Prisma engine overrides pointing at the query-engine shim, the `prisma`
# wrapper first on PATH, no cost map or telemetry from the network. What a
# pod's spec sets comes from the caller's environment and is left alone,
# DATABASE_URL and LITELLM_MASTER_KEY included (this script never sets them).
#
# Needs only the install cache: LITELLM_CROSSPLANE_CACHE, else
# $HOME/.cache/litellm-crossplane, else (a pod's HOME of its own) the same
# under the user's home from the password database. install.sh or up.sh
# fills it. Works from any working directory.
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/environment.sh
. "$here/lib/environment.sh"

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
[ $# -ge 1 ] || usage
command=$1
shift

# The default cache belongs to the user's home. A pod gets a HOME of its own:
# without LITELLM_CROSSPLANE_CACHE, look in the home the password database
# gives this user too.
if [ -z "${LITELLM_CROSSPLANE_CACHE:-}" ] && [ ! -f "$INSTALLED_ENV" ]; then
  account_home=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
  if [ -n "$account_home" ] && [ -f "$account_home/.cache/litellm-crossplane/litellm/installed.env" ]; then
    use_cache_root "$account_home/.cache/litellm-crossplane"
  fi
fi
need_cache
not_installed() {
  fail "the LiteLLM harness is not installed in $CACHE ($1): run $here/install.sh (or up.sh) first, with the same LITELLM_CROSSPLANE_CACHE"
}
[ -f "$INSTALLED_ENV" ] || not_installed "no $(basename -- "$INSTALLED_ENV")"
# shellcheck disable=SC1090
. "$INSTALLED_ENV"
[ "$(LITELLM_HARNESS_NO_CONSTRAINTS=${INSTALLED_UNCONSTRAINED:-} install_key)" = "${INSTALLED_KEY:-}" ] ||
  not_installed "it was installed from other versions than this checkout pins"
VENV=${INSTALLED_VENV:-$VENV} NODE_DIR=${INSTALLED_NODE_DIR:-$NODE_DIR}
[ -x "$VENV/bin/litellm" ] || not_installed "no $VENV/bin/litellm"
[ -d "$NODE_DIR/node_modules/@prisma/client" ] || not_installed "no npm packages in $NODE_DIR"
[ -x "${INSTALLED_NODE:-}" ] || not_installed "node (${INSTALLED_NODE:-unknown}) is gone"

case "$command" in
  litellm)
    shim_environment "$INSTALLED_NODE"
    exec "$VENV/bin/litellm" "$@"
    ;;
  python | python3)
    shim_environment "$INSTALLED_NODE"
    exec "$VENV/bin/python" "$@"
    ;;
  migrations-dir)
    [ $# -eq 0 ] || fail "migrations-dir takes no arguments"
    [ -d "$INSTALLED_MIGRATIONS" ] || not_installed "no $INSTALLED_MIGRATIONS"
    printf '%s\n' "$INSTALLED_MIGRATIONS"
    ;;
  -h | --help | help) usage ;;
  *) fail "unknown command '$command' (litellm, python or migrations-dir)" ;;
esac
