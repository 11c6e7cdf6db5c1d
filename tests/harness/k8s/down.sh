#!/usr/bin/env bash
# Stops the API server and etcd that up.sh started, by the pids in the
# state dir, and removes the state dir (--keep leaves it, with the logs).
#
# Environment: LITELLM_CROSSPLANE_K8S_DIR (/tmp/litellm-crossplane-k8s).
set -euo pipefail

dir=${LITELLM_CROSSPLANE_K8S_DIR:-/tmp/litellm-crossplane-k8s}
marker=.litellm-crossplane-k8s

say() { printf 'down.sh: %s\n' "$*" >&2; }

keep=
case ${1:-} in
  --keep) keep=1 ;;
  '') ;;
  *) say "usage: $0 [--keep]"; exit 2 ;;
esac

if [ ! -d "$dir" ]; then
  say "nothing to stop: no $dir"
  exit 0
fi
if [ ! -f "$dir/$marker" ]; then
  say "error: $dir was not made by up.sh; leaving it alone"
  exit 1
fi

# stop name program: SIGTERM, up to 10 s for a clean exit, then SIGKILL.
# Only if the pid still runs that program (pids are reused).
stop() {
  local name=$1 program=$2 pid cmd
  [ -s "$dir/$name.pid" ] || return 0
  pid=$(cat "$dir/$name.pid")
  cmd=$( { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null || true)
  if [ -n "$cmd" ] && [[ " $cmd" == *"/$program "* ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      say "killed $name (pid $pid) after 10 s"
    else
      say "stopped $name (pid $pid)"
    fi
  fi
  rm -f "$dir/$name.pid"
}

stop apiserver litellm-crossplane-apiserver
stop etcd etcd
if [ -z "$keep" ]; then
  rm -rf "$dir"
fi
