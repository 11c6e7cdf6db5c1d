#!/usr/bin/env bash
# install.sh: install what the LiteLLM harness needs, and nothing else
# (up.sh runs it too). Missing Debian packages (when root), the query-engine
# shim's npm packages, a virtualenv with LiteLLM's proxy and prisma-client-py,
# and prisma-client-py's client generated for LiteLLM's schema, all in
#   ${LITELLM_CROSSPLANE_CACHE:-$HOME/.cache/litellm-crossplane}/litellm
# A second run with nothing changed does no network and takes about a second.
# Progress goes to stderr; nothing is printed on stdout.
set -euo pipefail
here=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd)
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/environment.sh
. "$here/lib/environment.sh"
# shellcheck source=lib/install.sh
. "$here/lib/install.sh"

case "${1:-}" in
  "") ;;
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
  *) fail "usage: $0 (no arguments; see README.md for the variables)" ;;
esac
install_all
