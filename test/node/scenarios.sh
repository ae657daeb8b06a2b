#!/usr/bin/env bash
# The node tier: the driver installed as users install it (helm install of charts/liken-dra) on a real node of the
# local control plane: the upstream kubelet, containerd v2 and runc on this machine (hack/local-node.sh), with the
# driver's test image reading a recorded machine (`testRecording`). Workload pods get their devices through CDI
# from the real kubelet's NodePrepareResources calls; the checks look inside the containers and at the node.
#
# usage: test/node/scenarios.sh [SCENARIO...]   (default: all; names are the scenario_* functions below)
# Environment: LIKEN_CLUSTER_DIR, LIKEN_NODE_DIR (state dirs), LIKEN_NODE_IMAGE_DIR (where the image archives are
# built), LIKEN_NODE_KEEP=1 leaves the cluster and node running for a look. Exit 0 when every check passed; 77
# (skipped) when this machine cannot run a node (not root, or no cgroup v1/v2 controllers).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/checks.sh
source "$REPO/test/lib/checks.sh"
# shellcheck source=../lib/node-scenarios.sh
source "$REPO/test/lib/node-scenarios.sh"
# shellcheck source=../lib/images.sh
source "$REPO/test/lib/images.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-node.XXXXXX")
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-$WORK/cluster}
NODE=localhost
DRIVER_NS=liken-system
DRIVER_SELECTOR=app.kubernetes.io/name=liken-dra
RELEASE=liken
# Recordings inside the driver's test image.
LAPTOP=/usr/share/liken-dra/machines/laptop.umockdev
LAPTOP_DEVICES=11
HARMLESS=/usr/share/liken-dra/machines/harmless-nodes.umockdev

log() { echo "node: $*" >&2; }

[ "$(id -u)" = 0 ] || { echo "skip: the node tier needs root (mounts, cgroups, network namespaces)"; exit 77; }
[ -d /sys/fs/cgroup ] || { echo "skip: no cgroup filesystem"; exit 77; }

cleanup() {
  local rc=$?
  if [ "${LIKEN_NODE_KEEP:-0}" = 1 ]; then
    log "kept running: eval \"\$($REPO/hack/local-cluster.sh env)\"; work directory $WORK"
    return
  fi
  if [ "$rc" -ne 0 ] || [ "$FAILURES" -gt 0 ]; then
    for f in "${LIKEN_NODE_DIR:-/var/lib/liken-node}"/logs/kubelet.log "${LIKEN_NODE_DIR:-/var/lib/liken-node}"/logs/containerd.log; do
      [ -f "$f" ] && { echo "--- tail of $f"; grep -E ' E[0-9]{4} |level=error' "$f" | tail -n 15 || true; }
    done
  fi
  "$REPO/hack/local-node.sh" down >/dev/null 2>&1 || true
  "$REPO/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(NODE_NAME=$NODE LIKEN_DRIVER_ACCOUNT=0 "$REPO/hack/local-cluster.sh" up)"
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }
helm() { "$LIKEN_K8S_BIN/helm" "$@"; }
node_sh() { PATH="$LIKEN_K8S_BIN:$PATH" sh -c "$1"; }
restart_kubelet() { "$REPO/hack/local-node.sh" restart kubelet >/dev/null; }

build_images "$WORK/images" # sets DRIVER_IMAGE, WORKLOAD_IMAGE, SANDBOX_IMAGE, IMAGE_ARCHIVES
eval "$(LIKEN_SANDBOX_IMAGE=$SANDBOX_IMAGE "$REPO/hack/local-node.sh" up "${IMAGE_ARCHIVES[@]}")"
CDI_DIR=$LIKEN_NODE_CDI_ROOT
CLAIMS_DIR=$LIKEN_NODE_KUBELET_ROOT/plugins/liken.sh/claims

# helm_driver VERB [--set ...]: installs or upgrades the chart as a user would, with the test image and recording.
helm_driver() {
  local verb=$1
  shift
  helm "$verb" "$RELEASE" "$REPO/charts/liken-dra" -n "$DRIVER_NS" --create-namespace --wait --timeout 4m \
    --set image.repository="${DRIVER_IMAGE%:*}" --set image.tag="${DRIVER_IMAGE##*:}" --set image.pullPolicy=Never \
    --set kubeletRoot="$LIKEN_NODE_KUBELET_ROOT" --set cdiRoot="$LIKEN_NODE_CDI_ROOT" \
    --set metadataRoot="$LIKEN_NODE_METADATA_ROOT" \
    --set apiServer.host=127.0.0.1 --set-string apiServer.port="${LIKEN_APISERVER_PORT:-6443}" \
    --set resyncSeconds=5 "$@"
}

# --- scenarios ----------------------------------------------------------------------------------------------------

scenario_driver_ready() { node_scenario_driver_ready "$LAPTOP_DEVICES"; }
scenario_claims_in_containers() { node_scenario_claims_in_containers; }
scenario_unprepare_on_delete() { node_scenario_unprepare_on_delete; }
scenario_render_shared_display_exclusive() { node_scenario_render_shared_display_exclusive; }
scenario_startup_figure() { node_scenario_startup_figure; }
scenario_usb_reenumerate() { node_scenario_usb_reenumerate; }
scenario_status_and_health() { node_scenario_status_and_health; }
scenario_restarts() { node_scenario_restarts helm_driver upgrade --set testRecording="$LAPTOP" --set verbosity=1; }
scenario_rolling_update() {
  local v # the other verbosity than now, so the upgrade changes the pod template and rolls
  v=$(k -n "$DRIVER_NS" get daemonset -l "$DRIVER_SELECTOR" -o jsonpath='{.items[0].spec.template.spec.containers[0].args}' |
    grep -o -- '--v=[0-9]' | cut -d= -f2)
  node_scenario_rolling_update_keeps_a_plugin helm_driver upgrade --set testRecording="$LAPTOP" --set verbosity=$((1 - ${v:-0}))
}
scenario_cdi_dir_emptied() { node_scenario_cdi_dir_emptied; delete_pods keep-1; }
scenario_delivered_nodes_read() {
  helm_driver upgrade --set testRecording="$HARMLESS" >/dev/null ||
    { fail "helm upgrade to the harmless-numbers recording"; return 1; }
  wait_until 60 sh -c "driver_metrics | grep -q '^liken_published_devices'" || true
  node_scenario_delivered_nodes_read
}

scenario_template_metadata() { node_scenario_template_metadata; }
scenario_extended_resources() { node_scenario_extended_resources; }
scenario_admin_access() { node_scenario_admin_access; }
scenario_migration_classes() { node_scenario_migration_classes; }

scenario_down_leaves_nothing() {
  k delete pods -l app=liken-workload --wait=true --timeout=120s >/dev/null 2>&1 || true
  helm uninstall "$RELEASE" -n "$DRIVER_NS" --wait --timeout 2m >/dev/null 2>&1 || true
  local out
  out=$("$REPO/hack/local-node.sh" down 2>&1) && pass "local-node.sh down" || fail "local-node.sh down: $(echo "$out" | tail -n 5 | paste -sd'|')"
  out=$("$REPO/hack/local-node.sh" leftovers 2>&1) && pass "nothing is left of the node (processes, mounts, bridge, cgroups, paths)" ||
    fail "left behind: $(echo "$out" | head -n 10 | paste -sd'|')"
}

ALL=(driver_ready claims_in_containers unprepare_on_delete render_shared_display_exclusive usb_reenumerate status_and_health restarts
  rolling_update cdi_dir_emptied startup_figure template_metadata extended_resources admin_access migration_classes delivered_nodes_read down_leaves_nothing)
[ $# -gt 0 ] && ALL=("$@")

apply_device_classes
helm_driver install --set testRecording="$LAPTOP" >/dev/null ||
  { fail "helm install of the chart: $(k -n "$DRIVER_NS" get pods -o wide 2>&1 | paste -sd'|')"; k -n "$DRIVER_NS" describe pods | tail -n 30; }

for s in "${ALL[@]}"; do
  log "scenario $s"
  "scenario_$s" || fail "scenario $s aborted"
done
summary node
