#!/usr/bin/env bash
# End-to-end on kind: a real kubelet and containerd with CDI. Needs Docker, kind, kubectl, helm and jq on the host.
# Creates a cluster (CDI enabled in containerd, DRA feature gates), builds the images without Docker
# (hack/build-image.sh) and loads them, installs the chart with the worker running the driver on the recorded
# laptop, and runs the scenarios of the node tier that kind can run, with the same code (test/lib/checks.sh and
# test/lib/node-scenarios.sh): the driver pod Ready with its slice and metrics, template and direct claims with
# exactly their nodes inside the containers (the device-cgroup check only where the node uses cgroup v1),
# unprepare on pod delete, render shared and display exclusive; then a USB serial claim, a deleted slice coming
# back, a driver restart keeping prepared claims, and scan output passing server-side validation.
#
# The images come from hack/build-image.sh (the build tree's binary, busybox-static; loaded with kind load
# image-archive, so no registry is reached), or with --docker-build from the Dockerfile's test stage and Docker Hub.
#
# usage: hack/e2e-kind.sh [--keep] [--docker-build]
# Environment: KIND_CLUSTER (default liken-e2e), KIND_NODE_IMAGE, LIKEN_DRA (the binary for the images).
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
for tool in docker kind kubectl helm jq; do command -v "$tool" >/dev/null || { echo "e2e-kind: $tool is required"; exit 1; }; done
# shellcheck source=../test/lib/checks.sh
source "$REPO/test/lib/checks.sh"
# shellcheck source=../test/lib/node-scenarios.sh
source "$REPO/test/lib/node-scenarios.sh"
# shellcheck source=../test/lib/images.sh
source "$REPO/test/lib/images.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-kind.XXXXXX")
cleanup() { [ $KEEP = 1 ] || kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

cat >"$WORK/kind.yaml" <<'YAML'
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
# The images, before any cluster exists.
if [ $DOCKER_BUILD = 1 ]; then
  DRIVER_IMAGE=liken-dra:e2e WORKLOAD_IMAGE=busybox:1.36 PULL_POLICY=IfNotPresent
  docker build --target test -t "$DRIVER_IMAGE" "$REPO"
else
  [ -x "${LIKEN_DRA:-$REPO/build/liken-dra}" ] || "$REPO/hack/build.sh" liken-dra
  build_images "$WORK/images"
fi
kind create cluster --name "$CLUSTER" --config "$WORK/kind.yaml" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"}
if [ $DOCKER_BUILD = 1 ]; then
  kind load docker-image "$DRIVER_IMAGE" --name "$CLUSTER"
else
  for a in "${IMAGE_ARCHIVES[@]}"; do kind load image-archive "$a" --name "$CLUSTER"; done
fi

k() { kubectl "$@"; }
NODE=$(kubectl get nodes -l liken.sh/recording=laptop -o jsonpath='{.items[0].metadata.name}')
node_sh() { docker exec "$NODE" sh -c "$1"; }
CDI_DIR=/var/run/cdi
CLAIMS_DIR=/var/lib/kubelet/plugins/liken.sh/claims
DRIVER_NS=liken-system
DRIVER_SELECTOR=app.kubernetes.io/name=liken-dra

helm lint "$REPO/charts/liken-dra"
helm install liken "$REPO/charts/liken-dra" -n "$DRIVER_NS" --create-namespace --wait \
  --set image.repository="${DRIVER_IMAGE%:*}" --set image.tag="${DRIVER_IMAGE##*:}" --set image.pullPolicy=Never \
  --set testRecording=/usr/share/liken-dra/machines/laptop.umockdev --set resyncSeconds=5 \
  --set-string nodeSelector.liken\\.sh/recording=laptop
apply_device_classes

# The scenarios shared with the node tier (test/node/scenarios.sh).
node_scenario_driver_ready 11
k describe resourceslice "$NODE-liken.sh" | grep -q liken.sh/renderNode && pass "describe reads well" || fail "describe"
node_scenario_claims_in_containers
node_scenario_unprepare_on_delete
node_scenario_render_shared_display_exclusive

# kind only (so far).
claim serial-1 serial.liken.sh
workload_pod serial-1 direct serial-1
wait_until 120 pod_running serial-1 &&
  expect_eq "serial claim delivers tty and usbfs node" "/dev/bus/usb/001/003 c 189:2|/dev/ttyUSB0 c 188:0" \
    "$(container_dev_nodes serial-1 | grep -E 'ttyUSB|bus/usb' | paste -sd'|')" || fail "serial-1 $(pod_phase serial-1)"
k delete resourceslice "$NODE-liken.sh" >/dev/null
wait_until 15 slice_has_device "$NODE" pci-0000-00-02-0 && pass "deleted slice comes back" || fail "slice not restored"
k -n "$DRIVER_NS" delete pod -l "$DRIVER_SELECTOR" --wait >/dev/null
k -n "$DRIVER_NS" rollout status daemonset/liken-liken-dra --timeout=120s >/dev/null
claim render-3 gpu-render.liken.sh; workload_pod render-3 direct render-3
wait_until 120 pod_running render-3 && pass "prepare works after a driver restart" || fail "render-3 after restart"
node_file_exists "$(cdi_spec_file serial-1)" && pass "CDI specs survive the restart" || fail "CDI specs lost"
k -n "$DRIVER_NS" exec ds/liken-liken-dra -- /usr/bin/liken-dra scan --node-name x >"$WORK/scan.yaml" 2>/dev/null || true
k create --dry-run=server -f "$WORK/scan.yaml" >/dev/null && pass "scan output validates" || fail "scan output rejected"

# More scenarios shared with the node tier; they change the driver container's testbed, so they come last.
delete_pods serial-1 render-3
node_scenario_usb_reenumerate
node_scenario_status_and_health
summary e2e-kind
