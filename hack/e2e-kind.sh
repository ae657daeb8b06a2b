#!/usr/bin/env bash
# End-to-end on kind: a real kubelet and containerd with CDI. Needs Docker, kind, kubectl and helm on the host.
# Creates a cluster (CDI enabled in containerd, DRA feature gates), builds and loads the image, installs the chart
# with the worker running the driver on the recorded laptop, and runs the scenarios of test/e2e/scenarios.sh that a
# real kubelet can show: publish and describe, render shared and display exclusive with the nodes inside the
# containers, a USB serial claim delivering its tty and usbfs node, a deleted slice coming back, a driver restart
# keeping prepared claims, and scan output passing server-side validation.
#
# The images come from hack/build-image.sh (the build tree's binary, busybox-static; loaded with kind load
# image-archive, so no registry is reached), or with --docker-build from the Dockerfile's test stage and Docker Hub.
#
# usage: hack/e2e-kind.sh [--keep] [--docker-build]     Environment: KIND_CLUSTER (default liken-e2e), KIND_NODE_IMAGE.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CLUSTER=${KIND_CLUSTER:-liken-e2e}
KEEP=0; DOCKER_BUILD=0
for arg in "$@"; do
  case "$arg" in
    --keep) KEEP=1 ;;
    --docker-build) DOCKER_BUILD=1 ;;
    *) echo "e2e-kind: unknown argument $arg"; exit 2 ;;
  esac
done
for tool in docker kind kubectl helm; do command -v "$tool" >/dev/null || { echo "e2e-kind: $tool is required"; exit 1; }; done

FAILURES=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILURES=$((FAILURES + 1)); }
wait_until() { local d=$((SECONDS + $1)); shift; until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $d ] || return 1; sleep 1; done; }
cleanup() { [ $KEEP = 1 ] || kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# The images, before any cluster exists.
if [ $DOCKER_BUILD = 1 ]; then
  IMAGE_REPOSITORY=liken-dra IMAGE_TAG=e2e WORKLOAD=busybox:1.36 WORKLOAD_PULL=IfNotPresent
  docker build --target test -t "$IMAGE_REPOSITORY:$IMAGE_TAG" "$REPO"
else
  "$REPO/hack/build.sh" liken-dra
  "$REPO/hack/build-image.sh" test busybox
  # shellcheck source=/dev/null
  . "$REPO/build/images/images.env"
  IMAGE_REPOSITORY=$LIKEN_IMAGE_REPOSITORY IMAGE_TAG=$LIKEN_TEST_IMAGE_TAG
  WORKLOAD=$LIKEN_BUSYBOX_IMAGE WORKLOAD_PULL=Never
fi

cat >"${TMPDIR:-/tmp}/liken-kind.yaml" <<'YAML'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
featureGates:
  DRAConsumableCapacity: true
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri"]
    enable_cdi = true
nodes:
- role: control-plane
- role: worker
  labels: {liken.sh/recording: laptop}
YAML
kind create cluster --name "$CLUSTER" --config "${TMPDIR:-/tmp}/liken-kind.yaml" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"}
if [ $DOCKER_BUILD = 1 ]; then
  kind load docker-image "$IMAGE_REPOSITORY:$IMAGE_TAG" --name "$CLUSTER"
else
  kind load image-archive "$LIKEN_TEST_IMAGE_ARCHIVE" --name "$CLUSTER"
  kind load image-archive "$LIKEN_BUSYBOX_IMAGE_ARCHIVE" --name "$CLUSTER"
fi
WORKER=$(kubectl get nodes -l liken.sh/recording=laptop -o jsonpath='{.items[0].metadata.name}')

helm lint "$REPO/charts/liken-dra"
helm install liken "$REPO/charts/liken-dra" -n liken-system --create-namespace --wait \
  --set image.repository="$IMAGE_REPOSITORY" --set image.tag="$IMAGE_TAG" --set image.pullPolicy=Never \
  --set testRecording=/usr/share/liken-dra/machines/laptop.umockdev \
  --set-string nodeSelector.liken\\.sh/recording=laptop

slice() { kubectl get resourceslice "$WORKER-liken.sh" -o json; }
wait_until 120 sh -c "kubectl get resourceslice $WORKER-liken.sh" && pass "slice published" || fail "no slice"
[ "$(slice | jq '.spec.devices | length')" = 11 ] && pass "11 devices" || fail "device count $(slice | jq '.spec.devices | length')"
kubectl describe resourceslice "$WORKER-liken.sh" | grep -q liken.sh/renderNode && pass "describe reads well" || fail "describe"

kubectl apply -f - <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-render.liken.sh}
spec: {selectors: [{cel: {expression: 'device.driver == "liken.sh" && device.attributes["liken.sh"].renderNode'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-display.liken.sh}
spec: {selectors: [{cel: {expression: 'device.driver == "liken.sh" && device.attributes["liken.sh"].displayNode'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: serial.liken.sh}
spec: {selectors: [{cel: {expression: 'device.driver == "liken.sh" && has(device.attributes["liken.sh"].subsystem) && device.attributes["liken.sh"].subsystem == "tty"'}}]}
YAML

claim_pod() { # NAME CLASS
  kubectl apply -f - <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1}
spec: {devices: {requests: [{name: dev, exactly: {deviceClassName: $2}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $WORKER
  containers:
  - {name: c, image: $WORKLOAD, imagePullPolicy: $WORKLOAD_PULL, command: [sleep, "3600"], resources: {claims: [{name: dev}]}}
  resourceClaims: [{name: dev, resourceClaimName: $1}]
YAML
}
running() { [ "$(kubectl get pod "$1" -o jsonpath='{.status.phase}')" = Running ]; }

claim_pod render-1 gpu-render.liken.sh; claim_pod render-2 gpu-render.liken.sh
wait_until 120 running render-1 && wait_until 120 running render-2 && pass "two claims share the render node" || fail "render pods"
kubectl exec render-1 -- ls -l /dev/dri/renderD128 >/dev/null && pass "render node inside the container" || fail "no render node in the container"
kubectl exec render-1 -- sh -c '! ls /dev/dri/card0' >/dev/null 2>&1 && pass "and nothing else of the GPU" || fail "card node leaked"
claim_pod display-1 gpu-display.liken.sh; claim_pod display-2 gpu-display.liken.sh
wait_until 120 running display-1 && pass "display claim runs" || fail "display-1"
sleep 10
[ "$(kubectl get resourceclaim display-2 -o jsonpath='{.status.allocation}')" = "" ] && pass "second display claim waits" || fail "display allocated twice"
claim_pod serial-1 serial.liken.sh
wait_until 120 running serial-1 && kubectl exec serial-1 -- ls /dev/ttyUSB0 /dev/bus/usb/001/003 >/dev/null &&
  pass "serial claim delivers tty and usbfs node" || fail "serial claim"
kubectl delete resourceslice "$WORKER-liken.sh"
wait_until 15 sh -c "kubectl get resourceslice $WORKER-liken.sh" && pass "deleted slice comes back" || fail "slice not restored"
kubectl -n liken-system delete pod -l app.kubernetes.io/name=liken-dra --wait
kubectl -n liken-system rollout status daemonset/liken-liken-dra --timeout=120s
claim_pod render-3 gpu-render.liken.sh
wait_until 120 running render-3 && pass "prepare works after a driver restart" || fail "render-3 after restart"
docker exec "$WORKER" sh -c 'ls /var/run/cdi/liken.sh-*.json' >/dev/null && pass "CDI specs survive the restart" || fail "CDI specs lost"
kubectl delete pod render-1 --wait
docker exec "$WORKER" sh -c "! ls /var/run/cdi/liken.sh-$(kubectl get resourceclaim render-1 -o jsonpath='{.metadata.uid}').json" >/dev/null 2>&1 &&
  pass "unprepare removes the CDI spec" || fail "CDI spec left behind"
docker exec "$WORKER" true && kubectl -n liken-system exec ds/liken-liken-dra -- liken-dra scan --node-name x >"${TMPDIR:-/tmp}/scan.yaml" 2>/dev/null || true
kubectl create --dry-run=server -f "${TMPDIR:-/tmp}/scan.yaml" >/dev/null && pass "scan output validates" || fail "scan output rejected"
echo "e2e-kind: $FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]
