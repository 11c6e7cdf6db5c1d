#!/usr/bin/env bash
# Runs the whole test suite with the real parts: starts the Kubernetes API
# server harness and the LiteLLM proxy harness from ../shared (the first run
# builds/installs them, later runs reuse their caches), then `cargo test`
# with LITELLM_CROSSPLANE_REQUIRE_HARNESS=1 and --include-ignored, so the
# tests that need the harnesses run and none can skip.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${LITELLM_CROSSPLANE_SHARED:-$(cd .. && pwd)/shared}
[ -d "$SHARED/k8s" ] && [ -d "$SHARED/litellm" ] || {
  echo "tests/run.sh: no harnesses at $SHARED (set LITELLM_CROSSPLANE_SHARED)" >&2
  exit 2
}

# A second proxy that refuses caller-chosen keys, for the key fallback.
NOCUSTOM_DIR=/tmp/litellm-harness-nocustom

cleanup() {
  LITELLM_HARNESS_DIR=$NOCUSTOM_DIR "$SHARED/litellm/down.sh" >/dev/null 2>&1 || true
  "$SHARED/litellm/down.sh" >/dev/null 2>&1 || true
  "$SHARED/k8s/down.sh" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== starting the Kubernetes API server harness" >&2
eval "$("$SHARED/k8s/up.sh")"
echo "== starting the LiteLLM proxy harness" >&2
eval "$("$SHARED/litellm/up.sh")"
echo "== starting a second LiteLLM proxy with disable_custom_api_keys and the platform's credentials" >&2
# Its environment holds provider credentials as a platform's proxy would
# (fake ones: an OpenAI key, an AWS profile file, a Google service account,
# Azure variables, ...), so the tenancy tests can show that no tenant's
# model makes it fall back on them.
LITELLM_PLATFORM_CREDENTIALS=$NOCUSTOM_DIR-credentials
tests/fixtures/platform-credentials.sh "$LITELLM_PLATFORM_CREDENTIALS"
LITELLM_NOCUSTOM_URL=$(
  set -a
  . "$LITELLM_PLATFORM_CREDENTIALS/env"
  set +a
  LITELLM_HARNESS_DIR=$NOCUSTOM_DIR LITELLM_PORT=4100 PG_PORT=55433 \
    LITELLM_CONFIG="$PWD/tests/fixtures/litellm-nocustom.yaml" "$SHARED/litellm/up.sh" |
    sed -n 's/^export LITELLM_URL=//p' | tr -d "'\""
)
export KUBECONFIG LITELLM_URL LITELLM_MASTER_KEY LITELLM_NOCUSTOM_URL LITELLM_PLATFORM_CREDENTIALS
export LITELLM_CROSSPLANE_REQUIRE_HARNESS=1
# The test kubelet (tests/support/kubelet.rs) runs provisioned proxies from
# the harness's installation: its lib.sh and the cache with venv and shim
# (lib.sh's own default when LITELLM_HARNESS_CACHE is unset).
export LITELLM_CROSSPLANE_SHARED=$SHARED
export LITELLM_HARNESS_CACHE=${LITELLM_HARNESS_CACHE:-$HOME/.cache/litellm-harness}

echo "== generated files are current" >&2
cargo run --quiet --bin crdgen -- --check
echo "== cargo test" >&2
# The tests that need these harnesses are #[ignore]d, so that a plain
# `cargo test` reports them as ignored rather than passed: run them too.
has_separator=0
for arg in "$@"; do
  [ "$arg" = "--" ] && has_separator=1
done
if [ "$has_separator" = 1 ]; then
  cargo test "$@" --include-ignored
else
  cargo test "$@" -- --include-ignored
fi
