# shellcheck shell=bash
# Settings and small helpers of the LiteLLM harness, sourced by every script
# (never run). Nothing here prints to stdout.

HARNESS_HOME=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd)

# ---- pinned versions: change together, then run install.sh, up.sh and smoke.sh ----
LITELLM_VERSION=1.108.7        # 1.109+ needs the package litellm-proxy, not on PyPI
PRISMA_PY_VERSION=0.11.0       # prisma-client-py; 0.15 breaks LiteLLM 1.108
PRISMA_ENGINE_COMMIT=ac9d7041ed77bcc8a8dbd2ab6616b39013829574  # the engine prisma-client-py 0.11.0 (Prisma 5.4.2) expects

# sha256 (first 20 hex digits) of the named files' contents and of any extra words.
fingerprint() {
  local f
  {
    for f in "$@"; do
      if [ -f "$f" ]; then cat -- "$f"; else printf '%s\n' "$f"; fi
    done
  } | sha256sum | cut -c1-20
}

# What an install is made of: when any of it changes, install.sh redoes the part.
PIP_REQUIREMENTS=("litellm[proxy]==$LITELLM_VERSION" "prisma==$PRISMA_PY_VERSION"
  # LiteLLM's Vertex AI route imports it for service-account credentials
  google-auth)
PIP_CONSTRAINTS=$HARNESS_HOME/python/constraints.txt
venv_inputs() { fingerprint "${PIP_REQUIREMENTS[*]}" "${LITELLM_HARNESS_NO_CONSTRAINTS:+unconstrained}" "$PIP_CONSTRAINTS"; }
node_inputs() { fingerprint "$HARNESS_HOME/shim/package.json" "$HARNESS_HOME/shim/package-lock.json"; }
install_key() { fingerprint "$(venv_inputs)" "$(node_inputs)" "$PRISMA_ENGINE_COMMIT"; }

# ---- the install cache ----------------------------------------------------------------
# use_cache_root ROOT: the harness's cache is ROOT/litellm.
use_cache_root() {
  CACHE_ROOT=$1
  CACHE=${CACHE_ROOT:+$(realpath -m -- "$CACHE_ROOT")/litellm}
  # One folder per set of versions: an install of other versions never
  # removes a venv or npm tree a running proxy still uses.
  VENV=$CACHE/venv-$(venv_inputs)
  NODE_DIR=$CACHE/node-$(node_inputs)  # package.json, package-lock.json, node_modules of the shim
  PRISMA_HOME=$CACHE/prisma            # prisma-client-py's home: its Prisma CLI (npm) lives below
  INSTALL_LOGS=$CACHE/logs
  INSTALLED_ENV=$CACHE/installed.env   # written last by install.sh; read by image.sh
}
if [ -n "${LITELLM_CROSSPLANE_CACHE:-}" ]; then
  use_cache_root "$LITELLM_CROSSPLANE_CACHE"
elif [ -n "${HOME:-}" ]; then
  use_cache_root "$HOME/.cache/litellm-crossplane"
else
  use_cache_root ""
fi

# ---- a running harness (state dir) ------------------------------------------------------
STATE=$(realpath -m -- "${LITELLM_HARNESS_DIR:-/tmp/litellm-crossplane-litellm}")
MARKER=$STATE/.litellm-crossplane-harness   # only dirs holding it are ever stopped or deleted
STATE_ENV=$STATE/harness.env                # what up.sh started: ports, key, pids
PGDATA=$STATE/pg/data
PG_LOG=$STATE/pg/postgres.log
LOGS=$STATE/logs
PROXY_LOG=$LOGS/proxy.log
CONFIG_FILE=$STATE/config.yaml
STATE_LOCK=$(dirname -- "$STATE")/.$(basename -- "$STATE").lock

DB_NAME=litellm
DB_TEMPLATE=litellm_pristine
DB_USER=litellm
DB_PASSWORD=litellm

say() { printf '[litellm-harness] %s\n' "$*" >&2; }
fail() { printf '[litellm-harness] error: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
need_cache() { [ -n "$CACHE" ] || fail "neither LITELLM_CROSSPLANE_CACHE nor HOME is set: cannot locate the install cache"; }

# PostgreSQL server programs: $PG_BIN, else the newest /usr/lib/postgresql/*/bin, else PATH.
find_pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && { printf '%s\n' "$PG_BIN"; return 0; }
    return 1
  fi
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then printf '%s\n' "$dir"; return 0; fi
  dir=$(command -v initdb 2>/dev/null) && { dirname -- "$(readlink -f -- "$dir")"; return 0; }
  return 1
}

# Runs a command as the `postgres` OS user when root (PostgreSQL refuses root).
as_db_owner() {
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# Something accepts TCP connections on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Field 22 of /proc/PID/stat (start time in clock ticks) of a live process:
# with the PID it names one process for good, even after the PID is reused.
proc_start() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat   # split on spaces: field 3 of the file (the state) is $1 here
  [ "$1" != Z ] || return 1   # a zombie has ended already
  printf '%s\n' "${20}"
}

# The process $1 is alive and is the one that started at tick $2.
same_process() { [ -n "${1:-}" ] && [ -n "${2:-}" ] && [ "$(proc_start "$1" 2>/dev/null)" = "$2" ]; }

# Exclusive use of the state dir for up/down/reset (file descriptor 8).
lock_state() {
  exec 8>>"$STATE_LOCK" || fail "cannot open the lock file $STATE_LOCK"
  flock -w 900 8 || fail "another up/down/reset held $STATE_LOCK for 15 minutes"
}

# Load what up.sh recorded (fails when there is no harness in the state dir).
load_state() {
  [ -f "$MARKER" ] && [ -f "$STATE_ENV" ] || return 1
  # shellcheck disable=SC1090
  . "$STATE_ENV"
}

# Record what up.sh started (read back by load_state).
save_state() {
  {
    printf '# the LiteLLM harness in this directory (written by up.sh)\n'
    printf 'LITELLM_PORT=%q\nPG_PORT=%q\nLITELLM_MASTER_KEY=%q\n' "$LITELLM_PORT" "$PG_PORT" "$LITELLM_MASTER_KEY"
    printf 'PG_BINDIR=%q\nHARNESS_CACHE=%q\n' "$PG_BINDIR" "$CACHE"
    printf 'HARNESS_VENV=%q\nHARNESS_NODE_DIR=%q\n' "$VENV" "$NODE_DIR"
    printf 'PROXY_PID=%q\nPROXY_START=%q\n' "${PROXY_PID:-}" "${PROXY_START:-}"
  } >"$STATE_ENV.tmp"
  mv -f "$STATE_ENV.tmp" "$STATE_ENV"
}

database_url() { printf 'postgresql://%s:%s@127.0.0.1:%s/%s\n' "$DB_USER" "$DB_PASSWORD" "$PG_PORT" "$DB_NAME"; }
