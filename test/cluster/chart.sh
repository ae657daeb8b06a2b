#!/usr/bin/env bash
# The Helm chart against the real API server: lint, schema, server-side dry run of everything it renders, and the
# least-privilege promises (RBAC and the own-node admission policy) with a pod-bound ServiceAccount token.
set -euo pipefail
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHART=$REPO/charts/liken-dra
FAILURES=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILURES=$((FAILURES + 1)); }
WORK=$(mktemp -d)
trap '"$REPO/hack/local-cluster.sh" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

eval "$("$REPO/hack/local-cluster.sh" up)"
helm() { "$LIKEN_K8S_BIN/helm" "$@"; }
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }

helm lint "$CHART" >/dev/null && pass "helm lint" || fail "helm lint"
helm template liken "$CHART" -n liken-system --set storageRoles=maybe >/dev/null 2>&1 &&
  fail "the schema accepts storageRoles=maybe" || pass "values.schema.json rejects a bad storageRoles"
helm template liken "$CHART" -n liken-system >"$WORK/all.yaml"
k apply --dry-run=server -f "$WORK/all.yaml" >/dev/null && pass "helm template applies with --dry-run=server" ||
  fail "the API server rejects the rendered chart"
grep -q "maxSurge: 0" "$WORK/all.yaml" && grep -q "maxUnavailable: 1" "$WORK/all.yaml" &&
  pass "rolling update replaces one pod at a time (host network: no surge beside the old pod)" || fail "rolling update settings"
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
[ "$(can_i delete pods -A)" = no ] && pass "RBAC: no pod deletion" || fail "RBAC allows deleting pods"
[ "$(can_i create resourceclaims -A)" = no ] && pass "RBAC: no claim writes" || fail "RBAC allows writing claims"
[ "$(can_i list pods -A)" = yes ] && pass "RBAC: reads pods" || fail "RBAC cannot read pods"
echo "chart: $FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]
