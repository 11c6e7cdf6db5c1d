#!/usr/bin/env bash
# Runs the whole test suite with the real parts: starts the Kubernetes API
# server harness and the LiteLLM proxy harness from ../shared (the first run
# builds/installs them, later runs reuse their caches), then `cargo test`
# with LITELLM_CROSSPLANE_REQUIRE_HARNESS=1 so no test can skip.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${LITELLM_CROSSPLANE_SHARED:-$(cd .. && pwd)/shared}
[ -d "$SHARED/k8s" ] && [ -d "$SHARED/litellm" ] || {
  echo "tests/run.sh: no harnesses at $SHARED (set LITELLM_CROSSPLANE_SHARED)" >&2
  exit 2
}

cleanup() {
  "$SHARED/litellm/down.sh" >/dev/null 2>&1 || true
  "$SHARED/k8s/down.sh" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== starting the Kubernetes API server harness" >&2
eval "$("$SHARED/k8s/up.sh")"
echo "== starting the LiteLLM proxy harness" >&2
eval "$("$SHARED/litellm/up.sh")"
export KUBECONFIG LITELLM_URL LITELLM_MASTER_KEY
export LITELLM_CROSSPLANE_REQUIRE_HARNESS=1

echo "== generated files are current" >&2
cargo run --quiet --bin crdgen -- --check
echo "== cargo test" >&2
cargo test "$@"
