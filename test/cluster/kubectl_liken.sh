#!/usr/bin/env bash
# kubectl-liken against the real local control plane (hack/local-cluster.sh), with only a read-only ClusterRole
# (get/list of resourceslices, resourceclaims, deviceclasses, pods, events, nodes): a ResourceSlice of three liken
# serial adapters on node-a; claim `held` allocated by the scheduler and reserved for its pod (held), two adapters
# free, claim `waits` asking for a serial number no node publishes (its pod Unschedulable). Each command's output is
# checked against the API objects as kubectl reads them, and printed (the README's goldens come from here).
# Brings the cluster up and always tears it down (trap). Needs LIKEN_KUBECTL_LIKEN (the binary).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER="$REPO/hack/local-cluster.sh"
PLUGIN=${LIKEN_KUBECTL_LIKEN:?set LIKEN_KUBECTL_LIKEN to the kubectl-liken binary}
NODE_NAME=${NODE_NAME:-node-a}
export NODE_NAME
TIMEOUT=60
NS=liken-plugin
WORK=$(mktemp -d)

passed=0
failed=0
check() {
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
    passed=$((passed + 1))
  else
    echo "FAIL: $1: got '$2', want '$3'" >&2
    failed=$((failed + 1))
  fi
}
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
cleanup() {
  local rc=$?
  if [ $rc -ne 0 ] || [ $failed -ne 0 ]; then
    kubectl get resourceslices -o yaml >&2 || true
    kubectl -n "$NS" get resourceclaims,pods -o yaml >&2 || true
  fi
  "$CLUSTER" down || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$("$CLUSTER" up)"
export PATH="$LIKEN_K8S_BIN:$PATH"

kubectl create namespace "$NS"
kubectl apply -f - <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: liken-viewer}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceslices, resourceclaims, deviceclasses]
  verbs: [get, list]
- apiGroups: [""]
  resources: [pods, events, nodes]
  verbs: [get, list]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: liken-viewer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: liken-viewer}
subjects: [{kind: ServiceAccount, name: viewer, namespace: $NS}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: serial.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh" && has(device.attributes["liken.sh"].subsystem) && device.attributes["liken.sh"].subsystem == "tty"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $NODE_NAME-liken.sh}
spec:
  driver: liken.sh
  nodeName: $NODE_NAME
  pool: {name: $NODE_NAME, generation: 1, resourceSliceCount: 1}
  devices:
  - name: usb-1-1-1-0
    attributes:
      liken.sh/subsystem: {string: tty}
      liken.sh/vendor: {string: "0403"}
      liken.sh/product: {string: "6001"}
      liken.sh/serial: {string: A50285BI}
      liken.sh/address: {string: "1-1"}
  - name: usb-1-2-1-0
    attributes:
      liken.sh/subsystem: {string: tty}
      liken.sh/vendor: {string: "067b"}
      liken.sh/product: {string: "2303"}
      liken.sh/address: {string: "1-2"}
  - name: usb-1-3-1-0
    attributes:
      liken.sh/subsystem: {string: tty}
      liken.sh/vendor: {string: "0403"}
      liken.sh/product: {string: "6015"}
      liken.sh/serial: {string: DN05K2}
      liken.sh/address: {string: "1-3"}
EOF
for pair in held:A50285BI waits:NOSUCHSERIAL; do
  name=${pair%%:*} serial=${pair#*:}
  kubectl -n "$NS" apply -f - <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $name}
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: serial.liken.sh
        selectors: [{cel: {expression: 'has(device.attributes["liken.sh"].serial) && device.attributes["liken.sh"].serial == "$serial"'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  resourceClaims: [{name: dev, resourceClaimName: $name}]
  containers:
  - {name: main, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: dev}]}}
EOF
done
check "pod held bound by the scheduler" \
  "$(wait_eq "$NODE_NAME" kubectl -n "$NS" get pod held -o jsonpath='{.spec.nodeName}')" "$NODE_NAME"
check "claim held reserved for pod held" \
  "$(wait_eq held kubectl -n "$NS" get resourceclaim held -o jsonpath='{.status.reservedFor[0].name}')" held
check "pod waits Unschedulable" "$(wait_eq Unschedulable kubectl -n "$NS" get pod waits \
  -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable

# A kubeconfig with the read-only role's token alone.
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
token=$(kubectl -n "$NS" create token viewer)
cat >"$WORK/viewer.kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: viewer
clusters: [{name: local, cluster: {server: '$server', certificate-authority: '$LIKEN_CLUSTER_DIR/pki/ca.crt'}}]
users: [{name: viewer, user: {token: '$token'}}]
contexts: [{name: viewer, context: {cluster: local, user: viewer, namespace: $NS}}]
EOF
check "the viewer may not create claims" \
  "$(KUBECONFIG=$WORK/viewer.kubeconfig kubectl auth can-i create resourceclaims -n "$NS" 2>/dev/null || true)" no
liken() { KUBECONFIG=$WORK/viewer.kubeconfig "$PLUGIN" "$@"; }

held_device=$(kubectl -n "$NS" get resourceclaim held -o jsonpath='{.status.allocation.devices.results[0].device}')
echo "--- kubectl liken devices"
liken devices | tee "$WORK/devices"
check "devices: one line per device of the slice" \
  "$(tail -n +2 "$WORK/devices" | awk '{print $2}' | sort | tr '\n' ' ')" \
  "$(kubectl get resourceslices --field-selector spec.driver=liken.sh -o jsonpath='{.items[*].spec.devices[*].name}' | tr ' ' '\n' | sort | tr '\n' ' ')"
check "devices: the allocated device is held by claim held and its pod" \
  "$(awk -v d="$held_device" '$2 == d {print $NF, $(NF-1), $(NF-2)}' "$WORK/devices")" "held -> $NS/held"
liken devices -o json >"$WORK/devices.json"
check "devices -o json: heldBy of the allocated device as reservedFor says" \
  "$(python3 -c 'import json,sys; d={i["device"]: i for i in json.load(open(sys.argv[1]))["items"]}; h=d[sys.argv[2]]["heldBy"]; print(" ".join(x["namespace"]+"/"+x["claim"]+":"+",".join(x["pods"]) for x in h))' "$WORK/devices.json" "$held_device")" \
  "$NS/held:$(kubectl -n "$NS" get resourceclaim held -o jsonpath='{.status.reservedFor[*].name}')"
echo "--- kubectl liken devices --free"
liken devices --free | tee "$WORK/free"
check "devices --free: the two devices no claim holds" "$(tail -n +2 "$WORK/free" | awk '{print $2}' | tr '\n' ' ')" \
  "$(for d in usb-1-1-1-0 usb-1-2-1-0 usb-1-3-1-0; do [ "$d" = "$held_device" ] || printf '%s ' "$d"; done)"
check "devices --attribute serial=DN05K2" "$(liken devices --attribute serial=DN05K2 | tail -n +2 | awk '{print $2}')" usb-1-3-1-0

echo "--- kubectl liken claims"
liken claims | tee "$WORK/claims"
check "claims: held reserved on the node with its device, waits pending" \
  "$(tail -n +2 "$WORK/claims" | awk '{print $1, $2, $3, $4}' | tr '\n' ';')" \
  "held reserved $NODE_NAME $held_device;waits pending <none> <none>;"
check "claims: the pods and their phases as the API has them" \
  "$(tail -n +2 "$WORK/claims" | awk '{print $(NF-1)}' | tr '\n' ' ')" \
  "held($(kubectl -n "$NS" get pod held -o jsonpath='{.status.phase}')) waits($(kubectl -n "$NS" get pod waits -o jsonpath='{.status.phase}')) "
check "claims -A lists the namespace" "$(liken claims -A | awk 'NR > 1 {print $1}' | sort -u)" "$NS"

echo "--- kubectl liken why waits"
liken why waits | tee "$WORK/why"
condition=$(kubectl -n "$NS" get pod waits -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}: {.status.conditions[?(@.type=="PodScheduled")].message}')
check "why: the scheduler's condition as the pod has it" "$(grep -c -F "PodScheduled: $condition" "$WORK/why")" 1
check "why: the request selector as written" \
  "$(grep -c -F 'request selector: has(device.attributes["liken.sh"].serial) && device.attributes["liken.sh"].serial == "NOSUCHSERIAL"' "$WORK/why")" 1
check "why: the free devices on $NODE_NAME with the serial the selector reads" \
  "$(awk '$1 == "'"$NODE_NAME"'" {print $2 "=" $NF}' "$WORK/why" | tr '\n' ' ')" \
  "$(for d in usb-1-2-1-0 usb-1-3-1-0; do [ "$d" = "$held_device" ] || { s=$(kubectl get resourceslice "$NODE_NAME-liken.sh" -o jsonpath="{.spec.devices[?(@.name==\"$d\")].attributes.liken\.sh/serial.string}"); printf '%s=%s ' "$d" "${s:-<none>}"; }; done)"
check "why held: nothing waits" "$(liken why pod/held | grep -c 'Nothing waits for a device')" 1
check "why of another namespace's claim without -n: not found, exit 1" "$(KUBECONFIG=$WORK/viewer.kubeconfig "$PLUGIN" why held -n default >/dev/null 2>&1; echo $?)" 1

# The README's uninstall order: no claim may be reserved for a pod when the driver goes.
echo "--- kubectl liken claims -A --held --exit-code"
rc=0; liken claims -A --held --exit-code >"$WORK/held" || rc=$?; cat "$WORK/held"
check "claims --held --exit-code: exit 3 while pod held reserves its claim" "$rc" 3
check "claims --held: the claim reserved for a pod" "$(awk 'NR > 1 {print $1 "/" $2}' "$WORK/held")" "$NS/held"
kubectl -n "$NS" delete pod held --grace-period=0 --force >/dev/null 2>&1
check "the claim's reservation is gone once its pod is" \
  "$(wait_eq "" kubectl -n "$NS" get resourceclaim held -o jsonpath='{.status.reservedFor}')" ""
rc=0; liken claims -A --held --exit-code >/dev/null 2>"$WORK/held.err" || rc=$?
check "claims --held --exit-code: exit 0 once no claim is reserved" "$rc" 0
check "claims --held says there is none" "$(cat "$WORK/held.err")" "No liken claims found."

echo "kubectl_liken: $passed passed, $failed failed"
[ $failed -eq 0 ]
