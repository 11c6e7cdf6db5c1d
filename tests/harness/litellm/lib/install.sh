# shellcheck shell=bash
# Installing the harness into the cache ($CACHE). Sourced after common.sh.
# Every step checks a stamp first, so a warm cache costs no network and
# little time; installs are serialised by $CACHE/install.lock.

PYTHON=${LITELLM_HARNESS_PYTHON:-python3}

# Debian packages the harness uses; installed with apt-get when root, else
# named in the error.
ensure_system_packages() {
  local missing=() cmd
  find_pg_bin >/dev/null || missing+=(postgresql)
  command -v psql >/dev/null || missing+=(postgresql-client)
  if ! command -v node >/dev/null || ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
    missing+=(nodejs)
  fi
  command -v npm >/dev/null || missing+=(npm)
  command -v curl >/dev/null || missing+=(curl)
  command -v "$PYTHON" >/dev/null || missing+=(python3)
  "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  if [ ${#missing[@]} -gt 0 ]; then
    is_root || fail "missing system packages: ${missing[*]} (e.g. sudo apt-get install ${missing[*]})"
    command -v apt-get >/dev/null || fail "missing system packages (${missing[*]}) and no apt-get to install them"
    say "installing system packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  for cmd in flock setsid realpath sha256sum; do
    command -v "$cmd" >/dev/null || fail "$cmd not found (coreutils/util-linux)"
  done
  if is_root; then
    command -v runuser >/dev/null || fail "runuser not found (util-linux)"
    id postgres >/dev/null 2>&1 || fail "running as root, but there is no 'postgres' user to run PostgreSQL"
  fi
  find_pg_bin >/dev/null || fail "no PostgreSQL server programs (initdb, pg_ctl) found; set PG_BIN"
  "$PYTHON" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 15) else 1)' ||
    fail "$PYTHON is $("$PYTHON" -V 2>&1); LiteLLM $LITELLM_VERSION needs Python 3.10 to 3.14 (set LITELLM_HARNESS_PYTHON)"
}

# The shim's npm packages, exactly as package-lock.json has them.
ensure_node_modules() {
  local want
  want=$(node_inputs)
  if [ "$(cat "$NODE_DIR/.stamp" 2>/dev/null)" = "$want" ] && [ -d "$NODE_DIR/node_modules/@prisma/client" ]; then
    return 0
  fi
  say "installing the query-engine shim's npm packages (log: $INSTALL_LOGS/npm.log)"
  rm -rf "$NODE_DIR"   # a broken earlier attempt
  mkdir -p "$NODE_DIR"
  cp "$HARNESS_HOME/shim/package.json" "$HARNESS_HOME/shim/package-lock.json" "$NODE_DIR/"
  # --ignore-scripts: no install script is needed (the WebAssembly engine
  # ships inside @prisma/client), and none may try to download anything.
  (cd "$NODE_DIR" && npm ci --ignore-scripts --no-audit --no-fund) >"$INSTALL_LOGS/npm.log" 2>&1 ||
    { tail -n 25 "$INSTALL_LOGS/npm.log" >&2; fail "npm ci failed (log: $INSTALL_LOGS/npm.log)"; }
  printf '%s\n' "$want" >"$NODE_DIR/.stamp"
}

# A virtualenv with LiteLLM's proxy and prisma-client-py.
ensure_venv() {
  local want constraints=()
  want="$(venv_inputs) $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  if [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$want" ] && [ -x "$VENV/bin/litellm" ]; then
    return 0
  fi
  [ -n "${LITELLM_HARNESS_NO_CONSTRAINTS:-}" ] || constraints=(--constraint "$PIP_CONSTRAINTS")
  say "installing ${PIP_REQUIREMENTS[*]} into a virtualenv (log: $INSTALL_LOGS/pip.log)"
  rm -rf "$VENV"   # a broken earlier attempt, or another Python
  "$PYTHON" -m venv "$VENV" >"$INSTALL_LOGS/pip.log" 2>&1 ||
    { tail -n 25 "$INSTALL_LOGS/pip.log" >&2; fail "could not create a virtualenv with $PYTHON"; }
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
    "${constraints[@]}" "${PIP_REQUIREMENTS[@]}" >>"$INSTALL_LOGS/pip.log" 2>&1 ||
    { tail -n 25 "$INSTALL_LOGS/pip.log" >&2; fail "pip install failed (log: $INSTALL_LOGS/pip.log)"; }
  printf '%s\n' "$want" >"$VENV/.stamp"
  rm -f "$VENV/.client-stamp"
}

extras_dir() {
  "$VENV/bin/python" -c 'import os, litellm_proxy_extras as m; print(os.path.dirname(m.__file__))'
}

# prisma-client-py's generated client for LiteLLM's schema. `prisma generate`
# npm-installs the Prisma CLI 5.4.2 into $PRISMA_HOME; the engine overrides in
# shim_environment keep it from downloading any engine binary.
ensure_prisma_client() {
  local schema want package
  schema="$(extras_dir)/schema.prisma"
  [ -f "$schema" ] || fail "no schema.prisma in litellm_proxy_extras ($schema)"
  want=$(fingerprint "$schema" "$PRISMA_ENGINE_COMMIT" "$(cat "$VENV/.stamp")")
  if [ "$(cat "$VENV/.client-stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  say "generating prisma-client-py's client for LiteLLM's schema (log: $INSTALL_LOGS/prisma-generate.log)"
  mkdir -p "$PRISMA_HOME"
  # The generated client records the engine paths `prisma generate` was given
  # and, when one exists, runs it with --version (printing on stdout) each
  # time it connects. It is given throw-away copies, removed afterwards: the
  # engine in use is always the one of PRISMA_QUERY_ENGINE_BINARY.
  rm -rf "$CACHE/generate"
  mkdir -p "$CACHE/generate"
  cp "$HARNESS_HOME/shim/engines/query-engine" "$HARNESS_HOME/shim/engines/schema-engine" "$CACHE/generate/"
  (
    shim_environment
    export PRISMA_QUERY_ENGINE_BINARY=$CACHE/generate/query-engine
    export PRISMA_SCHEMA_ENGINE_BINARY=$CACHE/generate/schema-engine
    cd "$PRISMA_HOME"
    "$VENV/bin/prisma" generate --schema "$schema"
  ) >"$INSTALL_LOGS/prisma-generate.log" 2>&1 ||
    { tail -n 25 "$INSTALL_LOGS/prisma-generate.log" >&2; fail "prisma generate failed (log: $INSTALL_LOGS/prisma-generate.log)"; }
  rm -rf "$CACHE/generate"
  # The generated client is ~12 MB of Python that every proxy start imports:
  # compile it once here (bytecode writing is often off where tests run).
  package=$("$VENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("prisma").submodule_search_locations[0])')
  "$VENV/bin/python" -m compileall -q "$package" >/dev/null 2>&1 ||
    say "warning: could not byte-compile $package (proxy starts will be slower)"
  printf '%s\n' "$want" >"$VENV/.client-stamp"
}

write_installed_env() {
  local extras tmp
  extras=$(extras_dir)
  [ -d "$extras/migrations" ] || fail "no migrations folder in litellm_proxy_extras ($extras)"
  tmp=$INSTALLED_ENV.tmp
  {
    printf '# written by %s/install.sh; read by image.sh\n' "$HARNESS_HOME"
    printf 'INSTALLED_KEY=%q\n' "$(install_key)"
    printf 'INSTALLED_UNCONSTRAINED=%q\n' "${LITELLM_HARNESS_NO_CONSTRAINTS:-}"
    printf 'INSTALLED_NODE=%q\n' "$(command -v node)"
    printf 'INSTALLED_VENV=%q\n' "$VENV"
    printf 'INSTALLED_NODE_DIR=%q\n' "$NODE_DIR"
    printf 'INSTALLED_MIGRATIONS=%q\n' "$extras/migrations"
    printf 'INSTALLED_SCHEMA=%q\n' "$extras/schema.prisma"
  } >"$tmp"
  mv -f "$tmp" "$INSTALLED_ENV"
}

# Installs of other versions, once no process uses them any more (every
# process the harness starts has both paths in its environment).
remove_unused_installs() {
  local dir
  for dir in "$CACHE"/venv-* "$CACHE"/node-* "$CACHE"/venv "$CACHE"/node; do
    [ -d "$dir" ] && [ "$dir" != "$VENV" ] && [ "$dir" != "$NODE_DIR" ] || continue
    if grep -qsF "$dir/" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null; then
      say "keeping $dir (other versions, still in use)"
    else
      say "removing $dir (other versions, unused)"
      rm -rf -- "$dir"
    fi
  done
}

# Everything, under the install lock. Progress on stderr.
install_all() {
  need_cache
  mkdir -p "$CACHE" "$INSTALL_LOGS"
  (
    exec 9>>"$CACHE/install.lock"
    flock -w 1800 9 || fail "timed out waiting for $CACHE/install.lock (another install running?)"
    local t0=$SECONDS
    ensure_system_packages
    ensure_node_modules
    ensure_venv
    ensure_prisma_client
    write_installed_env
    remove_unused_installs
    say "installed in $CACHE ($((SECONDS - t0)) s)"
  )
}
