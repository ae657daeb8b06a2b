#!/usr/bin/env bash
# Smoke test of the local control plane (hack/local-cluster.sh) for DRA: publishes a ResourceSlice for driver
# liken.sh on node-a with one device that allows multiple allocations, then checks that
#   - the stored slice kept allowMultipleAllocations (DRAConsumableCapacity),
#   - the scheduler allocates a ResourceClaim (status.allocation) and binds the pod to node-a,
#   - a second claim/pod is allocated the same device (only possible with allowMultipleAllocations),
#   - the fake node stays Ready and untainted.
# On a release whose API server drops allowMultipleAllocations (1.34/1.35 with default gates, hack/lib/k8s-release.sh)
# it checks the documented degraded behaviour instead: the field is gone, the device is exclusive (the second claim
# stays unallocated), and two pods share it by naming one ResourceClaim.
# Brings the cluster up and always tears it down (trap). Exits non-zero on failure.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER="$REPO/hack/local-cluster.sh"
. "$REPO/hack/lib/k8s-release.sh"
sharing=yes
k8s_serves render-sharing || sharing=no
NODE_NAME=${NODE_NAME:-node-a}
export NODE_NAME
TIMEOUT=${SMOKE_TIMEOUT:-60}
NS=liken-smoke

passed=0
failed=0
# check DESCRIPTION GOT EXPECTED
check() {
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
    passed=$((passed + 1))
  else
    echo "FAIL: $1: got '$2', want '$3'" >&2
    failed=$((failed + 1))
  fi
}

diagnostics() {
  echo "--- diagnostics" >&2
  kubectl get nodes,resourceslices,deviceclasses -o wide >&2 || true
  kubectl -n "$NS" get resourceclaims,pods -o yaml >&2 || true
  local logs="${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}/logs"
  for c in kube-scheduler kube-apiserver kube-controller-manager; do
    echo "--- last lines of $c.log" >&2
    tail -n 30 "$logs/$c.log" >&2 || true
  done
}

cleanup() {
  local rc=$?
  if [ $rc -ne 0 ] || [ $failed -ne 0 ]; then diagnostics; fi
  "$CLUSTER" down || true
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$("$CLUSTER" up)"
export PATH="$LIKEN_K8S_BIN:$PATH"
kubectl version

# Polls until "$@" prints $expected (or the timeout passes); prints what it saw last.
wait_eq() {
  local expected=$1 got="" deadline=$((SECONDS + TIMEOUT))
  shift
  while :; do
    got=$("$@" 2>/dev/null || true)
    [ "$got" = "$expected" ] && break
    [ $SECONDS -ge $deadline ] && break
    sleep 0.5
  done
  echo "$got"
}

kubectl create namespace "$NS"
kubectl apply -f - <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: liken-smoke
spec:
  selectors:
  - cel:
      expression: device.driver == "liken.sh"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: $NODE_NAME-liken-smoke
spec:
  driver: liken.sh
  nodeName: $NODE_NAME
  pool:
    name: $NODE_NAME
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: dev-0
    allowMultipleAllocations: true
    attributes:
      liken.sh/renderNode:
        bool: true
EOF

stored_sharing=$(kubectl get resourceslice "$NODE_NAME-liken-smoke" -o jsonpath='{.spec.devices[0].allowMultipleAllocations}')
if [ $sharing = yes ]; then
  check "stored ResourceSlice kept allowMultipleAllocations" "$stored_sharing" true
else
  check "release $(k8s_minor) without DRAConsumableCapacity dropped allowMultipleAllocations (documented)" "$stored_sharing" ""
fi
check "stored ResourceSlice kept attribute liken.sh/renderNode" \
  "$(kubectl get resourceslice "$NODE_NAME-liken-smoke" -o jsonpath='{.spec.devices[0].attributes.liken\.sh/renderNode.bool}')" true

for x in a b; do
  kubectl -n "$NS" apply -f - <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-$x
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: liken-smoke
        selectors:
        - cel:
            expression: device.attributes["liken.sh"].renderNode == true
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-$x
spec:
  nodeSelector:
    kubernetes.io/hostname: $NODE_NAME
  resourceClaims:
  - name: gpu
    resourceClaimName: claim-$x
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      claims:
      - name: gpu
EOF
done

allocated=(a b)
[ $sharing = yes ] || allocated=(a)
for x in "${allocated[@]}"; do
  check "pod-$x bound by the scheduler" \
    "$(wait_eq "$NODE_NAME" kubectl -n "$NS" get pod "pod-$x" -o jsonpath='{.spec.nodeName}')" "$NODE_NAME"
  check "claim-$x allocated (status.allocation)" "$(kubectl -n "$NS" get resourceclaim "claim-$x" -o \
    jsonpath='{.status.allocation.devices.results[0].driver}/{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}')" \
    "liken.sh/$NODE_NAME/dev-0"
  check "claim-$x reserved for pod-$x" \
    "$(kubectl -n "$NS" get resourceclaim "claim-$x" -o jsonpath='{.status.reservedFor[0].name}')" "pod-$x"
done
if [ $sharing = yes ]; then
  share=$(kubectl -n "$NS" get resourceclaim claim-b -o jsonpath='{.status.allocation.devices.results[0].shareID}')
  check "claim-b holds a shared allocation (has a shareID)" "$([ -n "$share" ] && echo yes)" yes
else
  check "pod-b unschedulable: the device is exclusive (documented)" "$(wait_eq Unschedulable kubectl -n "$NS" get pod \
    pod-b -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable
  check "claim-b not allocated" "$(kubectl -n "$NS" get resourceclaim claim-b -o jsonpath='{.status.allocation}')" ""
fi
# Sharing on every release: two pods name one ResourceClaim (the README's way on a release without render sharing).
kubectl -n "$NS" apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: pod-a2
spec:
  nodeSelector:
    kubernetes.io/hostname: $NODE_NAME
  resourceClaims:
  - name: gpu
    resourceClaimName: claim-a
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      claims:
      - name: gpu
EOF
check "pod-a2 naming claim-a bound by the scheduler" \
  "$(wait_eq "$NODE_NAME" kubectl -n "$NS" get pod pod-a2 -o jsonpath='{.spec.nodeName}')" "$NODE_NAME"
check "claim-a reserved for pod-a and pod-a2" "$(wait_eq "pod-a pod-a2" kubectl -n "$NS" get resourceclaim claim-a \
  -o jsonpath='{.status.reservedFor[*].name}')" "pod-a pod-a2"

check "node $NODE_NAME Ready and untainted" \
  "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}|{.spec.taints}')" "True|"

driver_kubeconfig="${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}/driver.kubeconfig"
check "driver kubeconfig may create resourceslices" \
  "$(KUBECONFIG=$driver_kubeconfig kubectl auth can-i create resourceslices.resource.k8s.io --all-namespaces)" yes
check "driver kubeconfig may not delete pods" \
  "$(KUBECONFIG=$driver_kubeconfig kubectl auth can-i delete pods --all-namespaces 2>/dev/null || true)" no

echo "smoke: $passed passed, $failed failed"
[ $failed -eq 0 ]
