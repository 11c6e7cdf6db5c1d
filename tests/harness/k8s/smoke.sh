#!/usr/bin/env bash
# The harness's own end-to-end test, against a running harness (up.sh):
# every behaviour README.md promises, through HTTP with curl (python3 reads
# the JSON answers), then a few kubectl commands if kubectl is installed.
# Everything happens in a namespace and a CRD group of its own, removed at
# the end. Prints one line per check and `N passed, N failed` last.
#
# Environment: LITELLM_CROSSPLANE_K8S_DIR (/tmp/litellm-crossplane-k8s);
# LITELLM_CROSSPLANE_K8S_SMOKE_KUBECTL=0 skips the kubectl part.
set -euo pipefail

dir=${LITELLM_CROSSPLANE_K8S_DIR:-/tmp/litellm-crossplane-k8s}
[ -f "$dir/env.sh" ] || { echo "smoke.sh: no harness at $dir (run up.sh first)" >&2; exit 1; }
# shellcheck disable=SC1091
. "$dir/env.sh"
command -v python3 >/dev/null || { echo "smoke.sh: python3 is needed" >&2; exit 1; }

ns=smoke-$$-$RANDOM
group=smoke$$.litellm-crossplane.test
crd=widgets.$group
tmp=$(mktemp -d)
watch_pid=
passed=0
failed=0

cleanup() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- helpers -------------------------------------------------------------------
curl_args=(-sS --cacert "$LITELLM_CROSSPLANE_K8S_CA" --cert "$LITELLM_CROSSPLANE_K8S_CLIENT_CERT"
           --key "$LITELLM_CROSSPLANE_K8S_CLIENT_KEY" -A litellm-crossplane-smoke)
# call METHOD PATH [BODY [CONTENT-TYPE]]: the answer's body goes to $tmp/body,
# its status to $code.
code=
call() {
  local args=("${curl_args[@]}" -o "$tmp/body" -w '%{http_code}' -X "$1" "$LITELLM_CROSSPLANE_K8S_SERVER$2")
  if [ $# -ge 3 ]; then
    args+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
  fi
  code=$(curl "${args[@]}")
}
apply_type=application/apply-patch+yaml
merge_type=application/merge-patch+json

ok() { passed=$((passed + 1)); echo "ok     $*"; }
not_ok() { failed=$((failed + 1)); echo "FAILED $*"; echo "       last answer ($code): $(head -c 600 "$tmp/body")"; }

# py EXPR: a Python expression over d (the last answer's JSON), printed.
py() {
  python3 - "$tmp/body" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d, "any": any, "all": all, "len": len})
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# check DESC WANT-CODE EXPR: the status and a Python condition over d.
check() {
  local desc=$1 want=$2 expr=${3:-True}
  if [ "$code" = "$want" ] && [ "$(py "$expr" 2>/dev/null)" = true ]; then
    ok "$desc"
  else
    not_ok "$desc (want $want and $expr)"
  fi
}

# until_true TRIES METHOD PATH EXPR: repeats a GET until the condition holds.
until_true() {
  local tries=$1 path=$2 expr=$3 i
  for ((i = 0; i < tries; i++)); do
    call GET "$path"
    [ "$code" = 200 ] && [ "$(py "$expr" 2>/dev/null)" = true ] && return 0
    sleep 0.1
  done
  return 1
}

# ---- discovery and OpenAPI -------------------------------------------------------
call GET /version
check "/version answers" 200 'd["major"] == "1" and d["gitVersion"].startswith("v1.")'
call GET /readyz
if [ "$code" = 200 ]; then ok "/readyz is 200"; else not_ok "/readyz"; fi
call GET /api
check "/api lists v1" 200 '"v1" in d["versions"]'
call GET /api/v1
check "/api/v1 lists the core resources" 200 \
  'all(r in [x["name"] for x in d["resources"]] for r in ["namespaces", "namespaces/status", "secrets", "configmaps", "services", "services/status", "serviceaccounts", "events", "pods", "pods/status"])'
call GET /apis
check "/apis lists the built-in groups" 200 \
  'all(g in [x["name"] for x in d["groups"]] for g in ["apiextensions.k8s.io", "apps", "batch", "coordination.k8s.io", "events.k8s.io", "policy", "networking.k8s.io"])'
code=$(curl "${curl_args[@]}" -o "$tmp/body" -w '%{http_code}' \
  -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$LITELLM_CROSSPLANE_K8S_SERVER/apis")
check "aggregated discovery lists deployments" 200 \
  'd["kind"] == "APIGroupDiscoveryList" and any(r["resource"] == "deployments" for g in d["items"] for v in g["versions"] for r in v["resources"])'
call GET /openapi/v2
check "/openapi/v2 has the built-in types" 200 \
  'all(k in d["definitions"] for k in ["io.k8s.api.core.v1.Secret", "io.k8s.api.apps.v1.Deployment", "io.k8s.api.events.v1.Event", "io.k8s.api.policy.v1.PodDisruptionBudget", "io.k8s.api.networking.v1.Ingress"])'
call GET /openapi/v3
check "/openapi/v3 lists the group versions" 200 \
  'all(p in d["paths"] for p in ["api/v1", "apis/apps/v1", "apis/batch/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1", "apis/policy/v1", "apis/networking.k8s.io/v1"])'

# ---- namespaces ----------------------------------------------------------------------
call GET /api/v1/namespaces
check "default namespaces exist, labelled" 200 \
  'all(any(n["metadata"]["name"] == want and n["metadata"]["labels"]["kubernetes.io/metadata.name"] == want for n in d["items"]) for want in ["default", "kube-system", "kube-public", "kube-node-lease"])'
call POST /api/v1/namespaces "{\"metadata\":{\"name\":\"$ns\"}}"
check "namespace create: Active, labelled" 201 \
  "d['status']['phase'] == 'Active' and d['metadata']['labels']['kubernetes.io/metadata.name'] == '$ns'"
call POST /api/v1/namespaces/missing-$ns/configmaps '{"metadata":{"name":"x"}}'
check "NamespaceLifecycle: no objects in a missing namespace" 404 'd["reason"] == "NotFound"'
call DELETE /api/v1/namespaces/kube-system
check "NamespaceLifecycle: kube-system cannot be deleted" 403 'True'
call GET "/api/v1/namespaces?fieldSelector=metadata.name%3D$ns"
check "namespaces: field selector metadata.name" 200 "[n['metadata']['name'] for n in d['items']] == ['$ns']"

# ---- a CRD: structural schema, CEL, defaulting, pruning, list-type map, status -----
cat > "$tmp/crd.json" <<EOF
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "$crd"},
 "spec": {"group": "$group", "scope": "Namespaced",
  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
  "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["min", "max"],
     "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must not exceed max"}],
     "properties": {
      "min": {"type": "integer"}, "max": {"type": "integer"},
      "mode": {"type": "string", "default": "auto"},
      "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
       "items": {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}},
    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}}
EOF
call POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$(cat "$tmp/crd.json")"
if [ "$code" = 201 ]; then ok "CRD created"; else not_ok "CRD create"; fi
if until_true 100 "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$crd" \
     'any(c["type"] == "Established" and c["status"] == "True" for c in d["status"]["conditions"])'; then
  ok "CRD established"
else
  not_ok "CRD established"
fi
if until_true 100 /apis "'$group' in [g['name'] for g in d['groups']]"; then
  ok "the CRD group is in /apis"
else
  not_ok "the CRD group is in /apis"
fi
w=/apis/$group/v1/namespaces/$ns/widgets
until_true 50 "$w" 'd["kind"] == "WidgetList"' || true
call POST "$w" "{\"apiVersion\":\"$group/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"good\"},\"spec\":{\"min\":1,\"max\":3,\"bogus\":1}}"
check "custom resource: defaulted, unknown field pruned, generation 1" 201 \
  'd["spec"]["mode"] == "auto" and "bogus" not in d["spec"] and d["metadata"]["generation"] == 1'
call POST "$w" "{\"apiVersion\":\"$group/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"bad\"},\"spec\":{\"min\":5,\"max\":3}}"
check "custom resource: CEL rule rejects" 422 '"min must not exceed max" in d["message"] and d["reason"] == "Invalid"'
call PATCH "$w/good/status" '{"status":{"ready":true}}' "$merge_type"
check "custom resource: /status writes status, not generation" 200 'd["status"]["ready"] is True and d["metadata"]["generation"] == 1'
call PATCH "$w/good" '{"spec":{"max":4},"status":{"ready":false}}' "$merge_type"
check "custom resource: spec change bumps generation, main endpoint ignores status" 200 \
  'd["metadata"]["generation"] == 2 and d["status"]["ready"] is True'
call PATCH "$w/good?fieldManager=one" "{\"apiVersion\":\"$group/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"good\"},\"spec\":{\"min\":1,\"max\":4,\"ports\":[{\"name\":\"a\",\"port\":1}]}}" "$apply_type"
call PATCH "$w/good?fieldManager=two" "{\"apiVersion\":\"$group/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"good\"},\"spec\":{\"ports\":[{\"name\":\"b\",\"port\":2}]}}" "$apply_type"
check "server-side apply merges a list-type map by key" 200 \
  'sorted(p["name"] for p in d["spec"]["ports"]) == ["a", "b"] and {m["manager"] for m in d["metadata"]["managedFields"]} >= {"one", "two"}'
call PATCH "$w/good?fieldManager=two" "{\"apiVersion\":\"$group/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"good\"},\"spec\":{\"max\":9}}" "$apply_type"
check "server-side apply: a conflict is 409" 409 'd["reason"] == "Conflict"'
call PATCH "$w/good" '{"metadata":{"finalizers":["smoke.test/hold"]}}' "$merge_type"
call DELETE "$w/good"
check "finalizer: delete marks the object" 200 '"deletionTimestamp" in d["metadata"]'
call PATCH "$w/good" '{"metadata":{"finalizers":null}}' "$merge_type"
call GET "$w/good"
check "finalizer: removing it deletes the object" 404 'True'

# ---- secrets and configmaps -----------------------------------------------------------
s=/api/v1/namespaces/$ns/secrets
call POST "$s" '{"metadata":{"name":"s1"},"stringData":{"user":"alice"}}'
check "secret: stringData folded into data, type Opaque" 201 \
  'd["data"]["user"] == "YWxpY2U=" and "stringData" not in d and d["type"] == "Opaque"'
call PATCH "$s/s1" '{"stringData":{"user":"bob"}}' "$merge_type"
check "secret: stringData in a patch" 200 'd["data"]["user"] == "Ym9i"'
call PATCH "$s/s1" '{"type":"kubernetes.io/basic-auth"}' "$merge_type"
check "secret: type is immutable" 422 'True'
call POST "$s" '{"metadata":{"name":"tls"},"type":"kubernetes.io/tls","data":{"tls.crt":""}}'
check "secret: a TLS secret needs tls.key" 422 '"tls.key" in d["message"]'
call POST "$s" '{"metadata":{"name":"frozen"},"immutable":true,"data":{"k":"dg=="}}'
call PATCH "$s/frozen" '{"data":{"k":"dzI="}}' "$merge_type"
check "secret: immutable: true holds" 422 '"immutable" in d["message"]'
call GET "$s?fieldSelector=type%3DOpaque,metadata.name%3Ds1"
check "secret: field selectors type and metadata.name" 200 '[x["metadata"]["name"] for x in d["items"]] == ["s1"]'

cm=/api/v1/namespaces/$ns/configmaps
call GET "$cm"
rv=$(py 'd["metadata"]["resourceVersion"]')
curl "${curl_args[@]}" -N "$LITELLM_CROSSPLANE_K8S_SERVER$cm?watch=1&resourceVersion=$rv" > "$tmp/watch" 2>/dev/null &
watch_pid=$!
call POST "$cm" '{"metadata":{"name":"c1"},"data":{"k":"first"}}'
check "configmap create" 201 'd["data"]["k"] == "first" and "generation" not in d["metadata"]'
stale=$(cat "$tmp/body")
call PUT "$cm/c1" "${stale/\"first\"/\"second\"}"
check "configmap update" 200 'd["data"]["k"] == "second"'
call PUT "$cm/c1" "${stale/\"first\"/\"third\"}"
check "configmap: stale resourceVersion is 409" 409 'd["reason"] == "Conflict"'
for _ in $(seq 50); do grep -q '"type":"ADDED".*"name":"c1"' "$tmp/watch" && break; sleep 0.1; done
if grep -q '"type":"ADDED".*"name":"c1"' "$tmp/watch" && grep -q '"type":"MODIFIED"' "$tmp/watch"; then
  ok "watch sees the create and the update"
else
  not_ok "watch: $(head -c 300 "$tmp/watch")"
fi
kill "$watch_pid" 2>/dev/null || true
watch_pid=

# ---- services, serviceaccounts, leases ------------------------------------------------
call POST "/api/v1/namespaces/$ns/services" '{"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}'
check "service: defaults" 201 \
  'd["spec"]["type"] == "ClusterIP" and d["spec"]["ports"][0]["protocol"] == "TCP" and d["spec"]["ports"][0]["targetPort"] == 80 and d["spec"]["sessionAffinity"] == "None"'
call PATCH "/api/v1/namespaces/$ns/services/web/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.2"}]}}}' "$merge_type"
check "service: /status" 200 'd["status"]["loadBalancer"]["ingress"][0]["ip"] == "127.0.0.2"'
call POST "/api/v1/namespaces/$ns/services" '{"metadata":{"name":"Bad_Name"},"spec":{"ports":[{"port":80}]}}'
check "service: name must be a DNS-1035 label" 422 'True'
call POST "/api/v1/namespaces/$ns/serviceaccounts" '{"metadata":{"name":"robot"}}'
check "serviceaccount create" 201 'd["metadata"]["name"] == "robot"'
l=/apis/coordination.k8s.io/v1/namespaces/$ns/leases
call PATCH "$l/leader?fieldManager=smoke" "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"leader\"},\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15}}" "$apply_type"
check "lease: server-side apply creates" 201 'd["spec"]["holderIdentity"] == "a"'

# ---- deployments ---------------------------------------------------------------------------
dp=/apis/apps/v1/namespaces/$ns/deployments
deployment='{"metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}},"status":{"replicas":7}}'
call POST "$dp" "$deployment"
check "deployment: generation 1, defaults, status reset" 201 \
  'd["metadata"]["generation"] == 1 and d["spec"]["replicas"] == 1 and d["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%" and d["spec"]["template"]["spec"]["restartPolicy"] == "Always" and d.get("status", {}).get("replicas") is None'
call PATCH "$dp/web/status" '{"status":{"replicas":1,"readyReplicas":1,"observedGeneration":1},"metadata":{"labels":{"x":"y"}}}' "$merge_type"
check "deployment: /status writes status only" 200 \
  'd["status"]["readyReplicas"] == 1 and d["metadata"]["generation"] == 1 and "x" not in d["metadata"].get("labels", {})'
call PATCH "$dp/web" '{"metadata":{"labels":{"team":"a"}}}' "$merge_type"
check "deployment: a metadata change keeps generation" 200 'd["metadata"]["generation"] == 1'
call PATCH "$dp/web" '{"spec":{"replicas":3},"status":{"readyReplicas":9}}' "$merge_type"
check "deployment: spec change bumps generation, main endpoint ignores status" 200 \
  'd["metadata"]["generation"] == 2 and d["status"]["readyReplicas"] == 1'
call PATCH "$dp/web/status?fieldManager=smoke-status&force=true" \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"status\":{\"availableReplicas\":3}}" "$apply_type"
check "deployment: server-side apply on /status" 200 \
  'd["status"]["availableReplicas"] == 3 and any(m["manager"] == "smoke-status" and m.get("subresource") == "status" for m in d["metadata"]["managedFields"])'
call POST "$dp" '{"metadata":{"name":"odd"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"y"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}'
check "deployment: selector must match the template" 422 '"selector" in d["message"]'

# ---- jobs and pods --------------------------------------------------------------------------
call POST "/apis/batch/v1/namespaces/$ns/jobs" '{"metadata":{"name":"once"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}}'
check "job: selector and controller-uid labels generated, defaults" 201 \
  'd["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == d["metadata"]["uid"] and d["spec"]["template"]["metadata"]["labels"]["job-name"] == "once" and d["spec"]["backoffLimit"] == 6'
call POST "/apis/batch/v1/namespaces/$ns/jobs" '{"metadata":{"name":"bad"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}'
check "job: restartPolicy must be OnFailure or Never" 422 'True'
pods=/api/v1/namespaces/$ns/pods
call POST "$pods" '{"metadata":{"name":"p1"},"spec":{"nodeName":"node-a","containers":[{"name":"c","image":"i"}]}}'
check "pod: created Pending" 201 'd["status"]["phase"] == "Pending"'
call PATCH "$pods/p1/status" '{"status":{"phase":"Running"}}' "$merge_type"
call POST "$pods" '{"metadata":{"name":"p2"},"spec":{"nodeName":"node-b","containers":[{"name":"c","image":"i"}]}}'
call GET "$pods?fieldSelector=spec.nodeName%3Dnode-a,status.phase%3DRunning"
check "pod: field selectors spec.nodeName and status.phase" 200 '[p["metadata"]["name"] for p in d["items"]] == ["p1"]'

# ---- poddisruptionbudgets and ingresses ----------------------------------------------------
pdb=/apis/policy/v1/namespaces/$ns/poddisruptionbudgets
call POST "$pdb" '{"metadata":{"name":"web"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"currentHealthy":5}}'
check "pdb: created, generation 1, status reset" 201 \
  'd["metadata"]["generation"] == 1 and d["spec"]["maxUnavailable"] == 1 and d.get("status", {}).get("currentHealthy", 0) == 0'
call PATCH "$pdb/web" '{"spec":{"maxUnavailable":"50%"}}' "$merge_type"
check "pdb: a spec change bumps generation" 200 'd["metadata"]["generation"] == 2 and d["spec"]["maxUnavailable"] == "50%"'
call PATCH "$pdb/web/status" '{"status":{"currentHealthy":2,"desiredHealthy":1,"disruptionsAllowed":1,"expectedPods":2}}' "$merge_type"
check "pdb: /status writes status" 200 'd["status"]["disruptionsAllowed"] == 1 and d["metadata"]["generation"] == 2'
call POST "$pdb" '{"metadata":{"name":"both"},"spec":{"minAvailable":1,"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}}}'
check "pdb: minAvailable and maxUnavailable not both" 422 '"cannot be both set" in d["message"]'
call POST "$pdb" '{"metadata":{"name":"pct"},"spec":{"minAvailable":"150%"}}'
check "pdb: a percentage of at most 100%" 422 '"100%" in d["message"]'
ing=/apis/networking.k8s.io/v1/namespaces/$ns/ingresses
call POST "$ing" '{"metadata":{"name":"web"},"spec":{"ingressClassName":"nginx","tls":[{"hosts":["a.example.com"],"secretName":"tls"}],"rules":[{"host":"a.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}'
check "ingress: created" 201 'd["metadata"]["generation"] == 1 and d["spec"]["rules"][0]["host"] == "a.example.com"'
call PATCH "$ing/web/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}}' "$merge_type"
check "ingress: /status writes status" 200 'd["status"]["loadBalancer"]["ingress"][0]["ip"] == "10.0.0.1"'
call POST "$ing" '{"metadata":{"name":"bad"},"spec":{"rules":[{"host":"10.0.0.1","http":{"paths":[{"path":"/","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}'
check "ingress: a DNS host and a pathType required" 422 '"pathType" in d["message"] and "IP address" in d["message"]'

# ---- events in both versions ------------------------------------------------------------------
call POST "/apis/events.k8s.io/v1/namespaces/$ns/events" "{\"metadata\":{\"name\":\"e1\"},\"eventTime\":\"2024-01-01T00:00:00.000000Z\",\"reportingController\":\"smoke\",\"reportingInstance\":\"smoke-1\",\"action\":\"Test\",\"reason\":\"Tested\",\"type\":\"Normal\",\"note\":\"hello\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"$ns\",\"name\":\"p1\",\"apiVersion\":\"v1\"}}"
check "events.k8s.io/v1 event created" 201 'd["note"] == "hello"'
call GET "/api/v1/namespaces/$ns/events?fieldSelector=involvedObject.name%3Dp1,involvedObject.kind%3DPod,reason%3DTested,type%3DNormal"
check "the same event as core/v1, by field selectors" 200 \
  '[(e["metadata"]["name"], e["message"], e["reportingComponent"]) for e in d["items"]] == [("e1", "hello", "smoke")]'
call POST "/api/v1/namespaces/$ns/events" "{\"metadata\":{\"name\":\"e2\"},\"reason\":\"Other\",\"type\":\"Warning\",\"message\":\"from core\",\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"$ns\",\"name\":\"p2\"}}"
call GET "/apis/events.k8s.io/v1/namespaces/$ns/events?fieldSelector=regarding.name%3Dp2"
check "a core/v1 event in events.k8s.io/v1, by regarding.name" 200 \
  '[(e["metadata"]["name"], e["note"], e["type"]) for e in d["items"]] == [("e2", "from core", "Warning")]'

# ---- kubectl ------------------------------------------------------------------------------------
if [ "${LITELLM_CROSSPLANE_K8S_SMOKE_KUBECTL:-1}" != 0 ] && command -v kubectl >/dev/null; then
  if kubectl api-resources -o name 2>/dev/null | grep -qx "widgets.$group"; then
    ok "kubectl api-resources lists the CRD"
  else
    not_ok "kubectl api-resources"
  fi
  if out=$(kubectl get deployments,secrets,events -n "$ns" 2>&1) && grep -q 'deployment.apps/web' <<<"$out"; then
    ok "kubectl get"
  else
    not_ok "kubectl get: $out"
  fi
  if out=$(printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-kubectl, namespace: %s}\ndata: {a: b}\n' "$ns" \
             | kubectl apply --server-side -f - 2>&1); then
    ok "kubectl apply --server-side"
  else
    not_ok "kubectl apply: $out"
  fi
  if out=$(kubectl explain deployment.spec.strategy 2>&1) && grep -q 'rollingUpdate' <<<"$out"; then
    ok "kubectl explain (OpenAPI v3)"
  else
    not_ok "kubectl explain: $out"
  fi
fi

# ---- clean up (no namespace controller: objects first) ------------------------------------
for path in "$dp" "/apis/batch/v1/namespaces/$ns/jobs" "$pods" "$s" "$cm" "/api/v1/namespaces/$ns/services" \
            "/api/v1/namespaces/$ns/serviceaccounts" "$l" "/api/v1/namespaces/$ns/events" "$w" "$pdb" "$ing"; do
  call DELETE "$path"
done
call DELETE "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$crd"
call DELETE "/api/v1/namespaces/$ns"

echo "smoke: $passed passed, $failed failed"
[ "$failed" = 0 ]
