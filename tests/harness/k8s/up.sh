#!/usr/bin/env bash
# Starts etcd and the test API server on 127.0.0.1 from an empty state dir,
# waits until the API server is ready, and prints `export ...` lines:
#
#   eval "$(tests/harness/k8s/up.sh)"
#
# stdout carries nothing but those lines; progress and errors go to stderr.
# Builds first (build.sh: instant when nothing changed) unless
# LITELLM_CROSSPLANE_K8S_BIN names a directory with the binaries.
#
# Environment (defaults):
#   LITELLM_CROSSPLANE_K8S_DIR        state dir (/tmp/litellm-crossplane-k8s), emptied first
#   LITELLM_CROSSPLANE_K8S_PORT       API server port (6443)
#   LITELLM_CROSSPLANE_K8S_ETCD_PORT  etcd client port (2379)
#   LITELLM_CROSSPLANE_K8S_ETCD_PEER_PORT  etcd peer port (2380)
#   LITELLM_CROSSPLANE_K8S_BIN        prebuilt binaries (default: build.sh's output)
#   LITELLM_CROSSPLANE_K8S_APISERVER_ARGS  more API server flags (e.g. --v=4)
#   LITELLM_CROSSPLANE_K8S_TIMEOUT    seconds to wait for readiness (60)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${LITELLM_CROSSPLANE_K8S_DIR:-/tmp/litellm-crossplane-k8s}
port=${LITELLM_CROSSPLANE_K8S_PORT:-6443}
etcd_port=${LITELLM_CROSSPLANE_K8S_ETCD_PORT:-2379}
peer_port=${LITELLM_CROSSPLANE_K8S_ETCD_PEER_PORT:-2380}
timeout=${LITELLM_CROSSPLANE_K8S_TIMEOUT:-60}
server=litellm-crossplane-apiserver
marker=.litellm-crossplane-k8s

say() { printf 'up.sh: %s\n' "$*" >&2; }
fail() { say "error: $*"; exit 1; }

case $dir in /*) ;; *) fail "LITELLM_CROSSPLANE_K8S_DIR must be an absolute path: $dir" ;; esac
for tool in openssl curl base64 setsid; do
  command -v "$tool" >/dev/null || fail "$tool is needed"
done

if [ -n "${LITELLM_CROSSPLANE_K8S_BIN:-}" ]; then
  bin=$LITELLM_CROSSPLANE_K8S_BIN
else
  bin=$("$here/build.sh" | tail -n 1) || fail "build.sh failed"
fi
for b in "$server" etcd; do
  [ -x "$bin/$b" ] || fail "no $b in $bin"
done

# ---- a fresh state dir ---------------------------------------------------------
# Only a dir this script made (it has the marker) is ever emptied, and never
# while what it started still runs.
if [ -e "$dir" ]; then
  [ -f "$dir/$marker" ] || fail "$dir exists and was not made by up.sh; remove it or choose another LITELLM_CROSSPLANE_K8S_DIR"
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    if kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      fail "a harness is running from $dir (pid $(cat "$pidfile")); stop it with $here/down.sh"
    fi
  done
fi
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$port" "$etcd_port" "$peer_port"; do
  port_taken "$p" && fail "port $p on 127.0.0.1 is in use (set LITELLM_CROSSPLANE_K8S_PORT / _ETCD_PORT / _ETCD_PEER_PORT)"
done
rm -rf "$dir"
mkdir -p "$dir/pki"
touch "$dir/$marker"
t0=$(date +%s%N)

# ---- certificates ------------------------------------------------------------
# One CA (ECDSA P-256 keys: quick to make) signs the serving certificate
# and the client certificate of the kubeconfig (tests, kubectl, curl), in
# group system:masters as an admin's on a real cluster (no authorizer looks
# at it here). The API server's own clients use its loopback connection.
pki=$dir/pki
new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$1.key" 2>/dev/null; }
issue() {  # name subject extensions...
  local name=$1 subject=$2
  shift 2
  new_key "$name"
  openssl req -new -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr" 2>/dev/null
  printf '%s\n' "$@" > "$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}
new_key ca
openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=litellm-crossplane-test-ca" -days 3650 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$pki/ca.crt" 2>/dev/null
issue server "/CN=$server" "basicConstraints=critical,CA:FALSE" \
  "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost"
issue admin "/O=system:masters/CN=litellm-crossplane-admin" "basicConstraints=critical,CA:FALSE" \
  "keyUsage=critical,digitalSignature" "extendedKeyUsage=clientAuth"
rm -f "$pki/ca.srl"
chmod 600 "$pki"/*.key

api=https://127.0.0.1:$port
cat > "$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: litellm-crossplane-test
  cluster:
    server: $api
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: litellm-crossplane-admin
  user:
    client-certificate-data: $(base64 -w0 < "$pki/admin.crt")
    client-key-data: $(base64 -w0 < "$pki/admin.key")
contexts:
- name: litellm-crossplane-test
  context:
    cluster: litellm-crossplane-test
    user: litellm-crossplane-admin
    namespace: default
current-context: litellm-crossplane-test
EOF
chmod 600 "$dir/kubeconfig"

# ---- processes -----------------------------------------------------------------
# Each runs in a session of its own (setsid), detached from this shell;
# its pid goes to <name>.pid for down.sh.
started=()
abort() {
  say "start-up failed; the end of the logs:"
  for log in "$dir"/etcd.log "$dir"/apiserver.log; do
    if [ -f "$log" ]; then echo "== $log" >&2; tail -n 30 "$log" >&2; fi
  done
  for name in "${started[@]}"; do
    if [ -s "$dir/$name.pid" ]; then kill "$(cat "$dir/$name.pid")" 2>/dev/null || true; fi
  done
  exit 1
}
launch() {  # name command...
  local name=$1
  shift
  # The pid is written by the process itself before it becomes the command,
  # so it is right whether or not setsid had to fork.
  # shellcheck disable=SC2016 # $$, $0 and $@ are the inner shell's
  setsid bash -c 'echo $$ > "$0"; exec "$@"' "$dir/$name.pid" "$@" > "$dir/$name.log" 2>&1 < /dev/null &
  started+=("$name")
  for _ in $(seq 200); do
    [ -s "$dir/$name.pid" ] && return 0
    sleep 0.01
  done
  say "$name did not start"
  abort
}
alive() { kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }
# wait_for name url curl-args...: until url answers 200, the process dies, or the timeout.
wait_for() {
  local name=$1 url=$2 deadline=$((SECONDS + timeout))
  shift 2
  until curl -sf -o /dev/null --max-time 2 "$@" "$url"; do
    alive "$name" || { say "$name exited"; abort; }
    [ "$SECONDS" -lt "$deadline" ] || { say "$name not ready after ${timeout}s"; abort; }
    sleep 0.05
  done
}

launch etcd "$bin/etcd" --name test --data-dir "$dir/etcd" --unsafe-no-fsync --log-level warn \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "test=http://127.0.0.1:$peer_port" --initial-cluster-state new
wait_for etcd "http://127.0.0.1:$etcd_port/health"

# The defaults that matter for tests (no authorization, no GC, only the
# NamespaceLifecycle admission plugin) are compiled in (main.go).
# shellcheck disable=SC2086 # extra args are split on purpose
launch apiserver "$bin/$server" \
  --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --secure-port "$port" \
  --tls-cert-file "$pki/server.crt" --tls-private-key-file "$pki/server.key" \
  --client-ca-file "$pki/ca.crt" \
  ${LITELLM_CROSSPLANE_K8S_APISERVER_ARGS:-}
# /readyz turns 200 once etcd answers, the informers synced and the
# start-up hooks (the default namespaces among them) finished.
wait_for apiserver "$api/readyz" --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key"

{
  printf 'export %s=%q\n' \
    KUBECONFIG "$dir/kubeconfig" \
    LITELLM_CROSSPLANE_K8S_DIR "$dir" \
    LITELLM_CROSSPLANE_K8S_SERVER "$api" \
    LITELLM_CROSSPLANE_K8S_CA "$pki/ca.crt" \
    LITELLM_CROSSPLANE_K8S_CLIENT_CERT "$pki/admin.crt" \
    LITELLM_CROSSPLANE_K8S_CLIENT_KEY "$pki/admin.key" \
    LITELLM_CROSSPLANE_K8S_ETCD "http://127.0.0.1:$etcd_port"
} > "$dir/env.sh"
say "ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms at $api (etcd pid $(cat "$dir/etcd.pid"), apiserver pid $(cat "$dir/apiserver.pid"); logs in $dir)"
cat "$dir/env.sh"
