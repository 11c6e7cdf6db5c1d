# shellcheck shell=bash
# The LiteLLM proxy of a harness. Sourced after common.sh and environment.sh;
# needs LITELLM_PORT, PG_PORT and LITELLM_MASTER_KEY.
#
# The proxy is started in a session of its own (setsid), so that its process
# group holds exactly the proxy and what it starts (the query-engine shim,
# Prisma CLI calls). Its PID and start time are recorded in $STATE_ENV.

proxy_start() {
  port_busy "$LITELLM_PORT" && fail "port 127.0.0.1:$LITELLM_PORT is already in use (set LITELLM_PORT)"
  mkdir -p "$LOGS"
  local pid
  pid=$(
    shim_environment
    export DATABASE_URL LITELLM_MASTER_KEY
    DATABASE_URL=$(database_url)
    export STORE_MODEL_IN_DB=True DISABLE_SCHEMA_UPDATE=true
    # a caller's own database settings must not leak into the harness's proxy
    unset DIRECT_URL DATABASE_URL_READ_REPLICA DATABASE_HOST DATABASE_USERNAME \
      DATABASE_PASSWORD DATABASE_NAME DATABASE_SCHEMA
    cd "$STATE"
    # 8>&-: the proxy must not hold the state lock
    setsid "$VENV/bin/litellm" --config "$CONFIG_FILE" --host 127.0.0.1 --port "$LITELLM_PORT" \
      </dev/null >>"$PROXY_LOG" 2>&1 8>&- &
    echo $!
  )
  PROXY_PID=$pid
  PROXY_START=$(proc_start "$pid") || fail "the proxy exited at once (log: $PROXY_LOG)"
  say "LiteLLM proxy started (pid $pid), log: $PROXY_LOG"
}

# Waits until /health/readiness reports the database connected.
proxy_wait_ready() {
  local deadline=$((SECONDS + ${LITELLM_START_TIMEOUT:-240})) answer=
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! same_process "$PROXY_PID" "$PROXY_START"; then
      say "the proxy exited during start-up; end of $PROXY_LOG:"
      tail -n 40 "$PROXY_LOG" >&2 || true
      return 1
    fi
    answer=$(curl -s -m 5 "http://127.0.0.1:$LITELLM_PORT/health/readiness" 2>/dev/null || true)
    case "$answer" in
      *'"db":"connected"'* | *'"db": "connected"'*) return 0 ;;
    esac
    sleep 1
  done
  say "the proxy was not ready after ${LITELLM_START_TIMEOUT:-240} s (last answer: ${answer:-none}); end of $PROXY_LOG:"
  tail -n 40 "$PROXY_LOG" >&2 || true
  return 1
}

# PIDs of the processes still in the proxy's process group that run the
# harness's programs (the venv's Python, the shim, the Prisma CLI). The group
# is named by the proxy's PID; while any member lives no new process can get
# that PID, so a member found is one the proxy started. If the PID has been
# given to another process, the group is not the proxy's any more.
proxy_group() {
  local stat fields pid now cache=${HARNESS_CACHE:-$CACHE}
  if now=$(proc_start "$PROXY_PID") && [ "$now" != "$PROXY_START" ]; then
    return 0   # another live process has the PID now
  fi
  for stat in /proc/[0-9]*/stat; do
    fields=$(cat "$stat" 2>/dev/null) || continue
    fields=${fields##*) }
    # shellcheck disable=SC2086
    set -- $fields   # $1 state, $2 ppid, $3 process group
    [ "${3:-}" = "$PROXY_PID" ] || continue
    pid=${stat#/proc/}
    pid=${pid%/stat}
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -e "$cache/" -e "$HARNESS_HOME/" && printf '%s\n' "$pid"
  done
  return 0
}

proxy_stop() {
  [ -n "${PROXY_PID:-}" ] || return 0
  local pids i
  if same_process "$PROXY_PID" "$PROXY_START"; then
    say "stopping the LiteLLM proxy (pid $PROXY_PID)"
    kill -TERM "$PROXY_PID" 2>/dev/null || true
    # LiteLLM stops its query engine (the shim) itself on the way out.
    for i in $(seq 1 75); do same_process "$PROXY_PID" "$PROXY_START" || break; sleep 0.2; done
  fi
  pids=$(proxy_group)
  if [ -n "$pids" ]; then
    say "stopping what is left of the proxy's processes: $(echo $pids)"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for i in $(seq 1 25); do [ -z "$(proxy_group)" ] && break; sleep 0.2; done
    pids=$(proxy_group)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || { say "killing $(echo $pids)"; kill -KILL $pids 2>/dev/null || true; }
  fi
  PROXY_PID= PROXY_START=
}

proxy_config() {
  if [ -n "${LITELLM_CONFIG:-}" ]; then
    cp -- "$LITELLM_CONFIG" "$CONFIG_FILE"
    grep -q 'os.environ/LITELLM_MASTER_KEY' "$CONFIG_FILE" ||
      say "warning: $LITELLM_CONFIG does not say 'master_key: os.environ/LITELLM_MASTER_KEY'; LITELLM_MASTER_KEY may not be the admin key"
  else
    cat >"$CONFIG_FILE" <<'EOF'
# written by the LiteLLM test harness (up.sh); LITELLM_CONFIG names your own
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
  store_model_in_db: true
EOF
  fi
}
