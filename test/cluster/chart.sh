#!/usr/bin/env bash
# The Helm chart against the real API server: lint, schema, server-side dry run of everything it renders, and the
# least-privilege promises (RBAC and the own-node admission policy) with a pod-bound ServiceAccount token. On a
# release without the associated-node check (before 1.36) the same RBAC applies and the test checks, instead, what
# the README documents the credentials can reach there.
set -euo pipefail
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/hack/lib/k8s-release.sh"
CHART=$REPO/charts/liken-dra
FAILURES=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILURES=$((FAILURES + 1)); }
WORK=$(mktemp -d)
trap '[ "${LIKEN_KEEP:-0}" = 1 ] || "$REPO/hack/local-cluster.sh" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

eval "$("$REPO/hack/local-cluster.sh" up)"
helm() { "$LIKEN_K8S_BIN/helm" "$@"; }
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }

helm lint "$CHART" >/dev/null && pass "helm lint" || fail "helm lint"
helm template liken "$CHART" -n liken-system --set storageRoles=maybe >/dev/null 2>&1 &&
  fail "the schema accepts storageRoles=maybe" || pass "values.schema.json rejects a bad storageRoles"
helm template liken "$CHART" -n liken-system >"$WORK/all.yaml"
k apply --dry-run=server -f "$WORK/all.yaml" >/dev/null && pass "helm template applies with --dry-run=server" ||
  fail "the API server rejects the rendered chart"
grep -q "maxSurge: 1" "$WORK/all.yaml" && grep -q "maxUnavailable: 0" "$WORK/all.yaml" &&
  pass "rolling update starts the new pod beside the old one (maxSurge 1, maxUnavailable 0)" || fail "rolling update settings"
grep -q "hostPort\|containerPort" "$WORK/all.yaml" && fail "the pod declares a port (a surge pod could not be scheduled)" ||
  pass "the pod declares no host port"
grep -q "fieldPath: metadata.uid" "$WORK/all.yaml" && pass "the pod UID reaches the driver (socket names)" || fail "no POD_UID"

# The real objects: ServiceAccount, RBAC and the admission policy.
helm template liken "$CHART" -n liken-system --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml \
  --show-only templates/admission-policy.yaml | k apply -f - >/dev/null
# A driver pod on node-a (never runs: there is no kubelet) to bind a token to, as the kubelet would.
k -n liken-system apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: driver-node-a}
spec:
  nodeName: node-a
  serviceAccountName: liken-dra
  containers: [{name: c, image: registry.invalid/none}]
YAML
uid=$(k -n liken-system get pod driver-node-a -o jsonpath='{.metadata.uid}')
token=$(k -n liken-system create token liken-dra --bound-object-kind Pod --bound-object-name driver-node-a \
  --bound-object-uid "$uid")
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
: >"$WORK/empty.kubeconfig"  # the token alone, not the admin's client certificate
d() { KUBECONFIG="$WORK/empty.kubeconfig" "$LIKEN_K8S_BIN/kubectl" --server "$server" --token "$token" \
  --certificate-authority "$LIKEN_CLUSTER_DIR/pki/ca.crt" "$@"; }
can_i() { d auth can-i "$@" 2>/dev/null || true; }

slice() { # NODE
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $1-liken.sh}
spec: {driver: liken.sh, nodeName: $1, pool: {name: $1, generation: 1, resourceSliceCount: 1}, devices: []}
YAML
}
sleep 2  # the policy takes a moment to load
slice node-a | d create -f - >/dev/null 2>&1 && pass "the node's driver writes its own node's slice" ||
  fail "the node's driver cannot write its own slice"
out=$(slice node-b | d create -f - 2>&1) && fail "the node's driver wrote another node's slice" ||
  { grep -q "may not write ResourceSlices" <<<"$out" && pass "another node's slice is refused by the admission policy" ||
    fail "refused for another reason: $out"; }
d delete resourceslice node-a-liken.sh >/dev/null && pass "it deletes its own slice" || fail "cannot delete own slice"

# status.devices: the driver reports on claims allocated on its own node only. Claims allocated by the admin (as the
# scheduler would): own-node on node-a (a liken.sh device and another driver's), other-node on node-b.
allocate() { # CLAIM NODE
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: any.liken.sh}}]}}
YAML
  k patch resourceclaim "$1" -n default --subresource=status --type=merge -p "$(jq -cn --arg n "$2" '{status: {allocation: {
    devices: {results: [{request: "r", driver: "liken.sh", pool: $n, device: "dev-0"},
                        {request: "r", driver: "other.example.com", pool: $n, device: "dev-0"}]},
    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: "metadata.name", operator: "In", values: [$n]}]}]}}}}')" >/dev/null
}
# apply_status CLAIM NODE DRIVER [UID] [ENTRIES]: the driver's server-side apply of status.devices, as the daemon sends
# it (fieldManager liken.sh); prints the HTTP code, the body goes to $WORK/apply.json.
apply_status() {
  local entries=${5-$(jq -cn --arg n "$2" --arg d "$3" '[{driver: $d, pool: $n, device: "dev-0", data: {devicePaths: ["/dev/x"]},
    conditions: [{type: "Ready", status: "True", reason: "Prepared", message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}]}]')}
  jq -cn --arg c "$1" --arg u "${4:-}" --argjson e "$entries" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
    metadata: ({name: $c, namespace: "default"} + (if $u == "" then {} else {uid: $u} end)), status: {devices: $e}}' |
    curl -sS --cacert "$LIKEN_CLUSTER_DIR/pki/ca.crt" -H "Authorization: Bearer $token" -X PATCH \
      -H 'Content-Type: application/apply-patch+yaml' --data-binary @- -o "$WORK/apply.json" -w '%{http_code}' \
      "$server/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/$1/status?fieldManager=liken.sh&force=true"
}
entries() { k get resourceclaim "$1" -n default -o json | jq -r '[.status.devices[]? | "\(.driver)/\(.pool)/\(.device)"] | join(" ")'; }
allocate own-node node-a
allocate other-node node-b
code=$(apply_status own-node node-a liken.sh)
[ "$code" = 200 ] && [ "$(entries own-node)" = "liken.sh/node-a/dev-0" ] &&
  pass "the driver writes status.devices of a claim allocated on its own node (server-side apply)" ||
  fail "own-node status write: HTTP $code $(jq -r .message "$WORK/apply.json" 2>/dev/null | head -c 300)"
# What the driver's token may not do, on every release. From 1.36 the API server's associated-node check refuses some
# of it first (422, in validation, before admission); before 1.36 only the chart's admission policy
# (<release>-liken-dra-own-node-claim-status) stands in the way, and refuses with 403 and its message.
# refused WHAT POLICY_TEXT [SERVER_TEXT]: the last write ($code, $WORK/apply.json) was refused by the API server
# (422 naming SERVER_TEXT, only where the release checks the node) or by the policy (403 naming POLICY_TEXT).
refused() {
  local message
  message=$(jq -r .message "$WORK/apply.json" 2>/dev/null || true)
  if [ "$code" = 403 ] && grep -q "liken-dra-own-node-claim-status" <<<"$message" && grep -qF "$2" <<<"$message"; then
    pass "$1: refused by the admission policy (403)"
  elif [ -n "${3:-}" ] && [ "$code" = 422 ] && k8s_serves node-scoped-status && grep -qF "$3" <<<"$message"; then
    pass "$1: refused by the API server's associated-node check (422)"
  else
    fail "$1: HTTP $code $(head -c 300 <<<"$message")"
  fi
}
# patch_status CLAIM TYPE PATCH: a status patch with the current token (TYPE merge or json); prints the HTTP code.
patch_status() {
  curl -sS --cacert "$LIKEN_CLUSTER_DIR/pki/ca.crt" -H "Authorization: Bearer $token" -X PATCH \
    -H "Content-Type: application/$2-patch+json" --data-binary "$3" -o "$WORK/apply.json" -w '%{http_code}' \
    "$server/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/$1/status"
}
status_of() { k get resourceclaim "$1" -n default -o json | jq -c '{allocation: .status.allocation, reservedFor: .status.reservedFor}'; }
code=$(apply_status other-node node-b liken.sh)
refused "another node's liken.sh entry" 'may change only the status.devices entries of driver liken.sh in pool "node-a"' \
  'requires resource="resourceclaims/driver", verb="[arbitrary-node:patch]'
[ -z "$(entries other-node)" ] || fail "another node's claim got entries: $(entries other-node)"
good_token=$token
token=$(k -n liken-system create token liken-dra) # the same account, a token bound to no pod (no node)
code=$(apply_status own-node node-a liken.sh "" '[]')
refused "a token of the same account bound to no pod's node" 'only with a token bound to its pod on a node' \
  'arbitrary-node:patch]'
token=$good_token
code=$(apply_status own-node node-a other.example.com)
refused "another driver's entry on its own node" 'may change only the status.devices entries' \
  '"other.example.com" is forbidden'
[ "$(entries own-node)" = "liken.sh/node-a/dev-0" ] || fail "the refusals changed the entries: $(entries own-node)"
before=$(status_of own-node)
code=$(patch_status own-node merge '{"status": {"allocation": null}}')
refused "deallocating its own node's claim" "may not change a claim's allocation or reservedFor" "binding"
code=$(patch_status own-node merge '{"status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "0c1f8a5e-0000-4000-8000-000000000001"}]}}')
refused "reserving its own node's claim for a pod" "may not change a claim's allocation or reservedFor" "binding"
[ "$(status_of own-node)" = "$before" ] || fail "allocation or reservedFor changed: $(status_of own-node)"
code=$(apply_status own-node node-a liken.sh "" "$(jq -cn '[{driver: "liken.sh", pool: "node-a", device: "dev-0",
  data: {devicePaths: ["/dev/y"]}, conditions: [{type: "Ready", status: "False", reason: "DeviceUnplugged", message: "",
  lastTransitionTime: "2026-01-01T00:00:01Z"}]}]')")
[ "$code" = 200 ] && [ "$(k get resourceclaim own-node -n default -o json | jq -r '.status.devices[0].data.devicePaths[0]')" = /dev/y ] &&
  pass "the driver changes its own entry (data, condition)" || fail "changing its own entry: HTTP $code"
k patch resourceclaim own-node -n default --subresource=status --type=json --field-manager=other-driver \
  -p '[{"op": "add", "path": "/status/devices/-", "value": {"driver": "other.example.com", "pool": "node-a", "device": "dev-0"}}]' >/dev/null
code=$(patch_status own-node merge '{"status": {"devices": []}}')
refused "a merge patch of status.devices that drops another driver's entry" 'may change only the status.devices entries' \
  '"other.example.com" is forbidden'
code=$(patch_status own-node json '[{"op": "remove", "path": "/status/devices/1"}]')
refused "a JSON patch that removes another driver's entry" 'may change only the status.devices entries' \
  '"other.example.com" is forbidden'
[ "$(entries own-node)" = "liken.sh/node-a/dev-0 other.example.com/node-a/dev-0" ] ||
  fail "another driver's entry changed: [$(entries own-node)]"
code=$(apply_status own-node node-a liken.sh "" '[]')
[ "$code" = 200 ] && [ "$(entries own-node)" = "other.example.com/node-a/dev-0" ] &&
  pass "applying no entries removes the driver's own and keeps another driver's" ||
  fail "clearing: HTTP $code, entries now [$(entries own-node)]"
code=$(apply_status own-node node-a liken.sh "0c1f8a5e-0000-4000-8000-000000000000")
[ "$code" = 422 ] && grep -q 'metadata.uid' "$WORK/apply.json" && [ "$(entries own-node)" = "other.example.com/node-a/dev-0" ] &&
  pass "the claim's UID in the apply guards it (422 on metadata.uid for a claim recreated under its name)" ||
  fail "apply with a wrong UID: HTTP $code"
[ "$(can_i 'arbitrary-node:patch' resourceclaims/liken.sh --subresource=driver -n default)" = no ] &&
  [ "$(can_i 'associated-node:patch' resourceclaims/liken.sh --subresource=driver -n default)" = yes ] &&
  [ "$(can_i update resourceclaims --subresource=status -A)" = no ] &&
  ! grep -Eq '^ *verbs:.*arbitrary-node' "$WORK/all.yaml" &&
  pass "RBAC: associated-node:patch of resourceclaims/driver liken.sh and status patch only; no arbitrary-node verb" ||
  fail "RBAC for status.devices is not exactly associated-node:patch"
[ "$(can_i delete pods -A)" = no ] && pass "RBAC: no pod deletion" || fail "RBAC allows deleting pods"
[ "$(can_i create resourceclaims -A)" = no ] && pass "RBAC: no claim writes" || fail "RBAC allows writing claims"
[ "$(can_i list pods -A)" = yes ] && pass "RBAC: reads pods" || fail "RBAC cannot read pods"
echo "chart: $FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]
