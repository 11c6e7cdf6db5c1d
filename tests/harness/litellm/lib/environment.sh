# shellcheck shell=bash
# The environment LiteLLM runs in under the harness (the proxy of up.sh, the
# commands of image.sh, and `prisma generate` at install time). Sourced after
# common.sh. It never sets DATABASE_URL or LITELLM_MASTER_KEY: those belong
# to whoever starts the proxy.

shim_environment() {
  local node=${1:-$(command -v node || true)}
  [ -n "$node" ] || fail "node not found (the query-engine shim runs on Node.js)"
  # read by shim/engines/query-engine and shim/path/prisma
  export LITELLM_SHIM_VENV=$VENV
  export LITELLM_SHIM_NODE=$node
  export LITELLM_SHIM_NODE_MODULES=$NODE_DIR/node_modules
  # `prisma` (migrate diff answered by the shim) before the venv's commands
  export PATH="$HARNESS_HOME/shim/path:$VENV/bin:${PATH:-/usr/local/bin:/usr/bin:/bin}"
  # prisma-client-py: its CLI home, and the engines it runs instead of the
  # native binaries it would download
  export PRISMA_HOME_DIR=$PRISMA_HOME
  export PRISMA_NODEENV_CACHE_DIR=$PRISMA_HOME/nodeenv
  export PRISMA_EXPECTED_ENGINE_VERSION=$PRISMA_ENGINE_COMMIT
  export PRISMA_QUERY_ENGINE_BINARY=$HARNESS_HOME/shim/engines/query-engine
  export PRISMA_SCHEMA_ENGINE_BINARY=$HARNESS_HOME/shim/engines/schema-engine
  # the Prisma CLI: use those binaries, check no checksum, and let any
  # download it still tries fail at once (a closed loopback port) instead of
  # waiting on a host that is not reachable
  export PRISMA_CLI_QUERY_ENGINE_TYPE=binary
  export PRISMA_CLIENT_ENGINE_TYPE=binary
  export PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING=1
  export PRISMA_ENGINES_MIRROR=http://127.0.0.1:9
  export PRISMA_HIDE_UPDATE_MESSAGE=1
  export CHECKPOINT_DISABLE=1
  # LiteLLM: no model cost map or telemetry from the network
  export LITELLM_LOCAL_MODEL_COST_MAP=True
  export LITELLM_TELEMETRY=False
}
