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
NODE_STATE=${LIKEN_NODE_DIR:-/var/lib/liken-node}
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
    for f in "$NODE_STATE"/logs/kubelet.log "$NODE_STATE"/logs/containerd.log; do
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
one_driver_ready() { [ "$(driver_pods | wc -w)" = 1 ] && driver_ready; }
scenario_unplug_within_toleration() {
  helm_driver upgrade --set testRecording="$LAPTOP" --set taintUnpluggedDevices=true >/dev/null ||
    { fail "helm upgrade with taintUnpluggedDevices=true"; return 1; }
  wait_until 120 one_driver_ready || fail "driver not Ready after the upgrade: $(driver_pods)"
  node_scenario_unplug_within_toleration
  helm_driver upgrade --set testRecording="$LAPTOP" >/dev/null || fail "helm upgrade back to taintUnpluggedDevices=false"
  wait_until 120 one_driver_ready || fail "driver not Ready after the upgrade back: $(driver_pods)"
}
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
  wait_until 60 driver_serves_metrics || true
  node_scenario_delivered_nodes_read
}

scenario_template_metadata() { node_scenario_template_metadata; }
scenario_template_metadata_uncached() { node_scenario_template_metadata_uncached; }
scenario_extended_resources() { node_scenario_extended_resources; }
scenario_extended_containers() { node_scenario_extended_containers; }
scenario_admin_access() { node_scenario_admin_access; }
scenario_migration_classes() { node_scenario_migration_classes; }

# A simulated reboot (hack/local-node.sh reboot): the kubelet, containerd and every container killed at once, the
# CDI and metadata tmpfs contents and containerd's state lost, disks kept. The driver reads the kernel's boot ID, which
# cannot change here, so while the node is down its claim records are stamped with another boot's ID, as a real
# reboot leaves them. The claim records are written without fsync: nothing the kubelet needs may depend on them
# after a reboot. The kubelet (its checkpoint still naming the claim) must prepare the claim again, the driver answer
# afresh, and the pod's new container get its device.
container_replaced() { [ "$(pod_container_id "$1")" != "$2" ] && pod_running "$1"; } # POD OLD-CONTAINER-ID
scenario_reboot() {
  local uid cid spec
  claim reboot-1 gpu-render.liken.sh
  workload_pod reboot-1 direct reboot-1
  wait_until 120 pod_running reboot-1 || { fail "reboot-1 $(pod_phase reboot-1)"; return 1; }
  uid=$(claim_uid reboot-1)
  cid=$(pod_container_id reboot-1)
  spec=$(cdi_spec_file reboot-1)
  node_file_exists "$CLAIMS_DIR/$uid.json" && node_file_exists "$spec" ||
    { fail "reboot-1 was prepared without a record or a CDI spec"; return 1; }
  local out
  out=$("$REPO/hack/local-node.sh" reboot sh -c "
    [ -z \"\$(ls -A '$CDI_DIR')\" ] || { echo 'CDI directory not emptied' >&2; exit 1; }
    sed -i 's/\"bootID\":\"[^\"]*\"/\"bootID\":\"before-the-reboot\"/' '$CLAIMS_DIR'/*.json" 2>&1) &&
    pass "simulated reboot: everything killed, CDI directory emptied, claim records of an earlier boot, node up again" ||
    { fail "local-node.sh reboot: $(echo "$out" | tail -n 5 | paste -sd'|')"; return 1; }
  wait_until 180 driver_ready && pass "the driver is Ready again after the reboot" || fail "driver not Ready: $(driver_pods)"
  if wait_until 240 container_replaced reboot-1 "$cid"; then
    pass "reboot-1 runs again in a new container after the reboot"
  else
    fail "reboot-1 after the reboot: $(pod_phase reboot-1) $(k get pod reboot-1 -o jsonpath='{.status.containerStatuses[0].state}' | head -c 300)"
    return 1
  fi
  expect_eq "the new container of reboot-1 gets its device" "/dev/dri/renderD128 c 226:128" \
    "$(container_dev_nodes reboot-1 | grep dri)"
  # The node's own files of every driver container (kubectl logs shows one container at a time).
  local recovery
  recovery=$(cat "$NODE_STATE"/pod-logs/"$DRIVER_NS"_*/liken-dra/*.log 2>/dev/null |
    grep -E 'msg=starting|recovered prepared claims|forgetting claim prepared before a reboot')
  grep -q "forgetting claim prepared before a reboot.*$uid" <<<"$recovery" &&
    pass "the driver dropped the record of the earlier boot" ||
    fail "no log of the earlier boot's record being dropped; the driver containers' start-ups: $(cut -c1-200 <<<"$recovery" | paste -sd'|')"
  [ "$(driver_metric 'liken_prepare_total{result="success"}')" -ge 1 ] 2>/dev/null &&
    pass "the kubelet called NodePrepareResources again after the reboot (although its checkpoint names the claim)" ||
    fail "no prepare counted by the driver after the reboot"
  node_sh "grep -q '\"bootID\":\"before-the-reboot\"' '$CLAIMS_DIR/$uid.json'" &&
    fail "reboot-1's record is still the earlier boot's" ||
    pass "reboot-1's record is of this boot, its CDI spec $(node_file_exists "$spec" && echo present || echo MISSING)"
  node_file_exists "$spec" || fail "reboot-1 has no CDI spec after the reboot"
  delete_pods reboot-1
}

scenario_down_leaves_nothing() {
  k delete pods -l app=liken-workload --wait=true --timeout=120s >/dev/null 2>&1 || true
  helm uninstall "$RELEASE" -n "$DRIVER_NS" --wait --timeout 2m >/dev/null 2>&1 || true
  local out
  out=$("$REPO/hack/local-node.sh" down 2>&1) && pass "local-node.sh down" || fail "local-node.sh down: $(echo "$out" | tail -n 5 | paste -sd'|')"
  out=$("$REPO/hack/local-node.sh" leftovers 2>&1) && pass "nothing is left of the node (processes, mounts, bridge, cgroups, paths)" ||
    fail "left behind: $(echo "$out" | head -n 10 | paste -sd'|')"
}

# `reboot` runs before the metadata scenarios, so they read metadata files written after a simulated power cycle.
ALL=(driver_ready claims_in_containers unprepare_on_delete render_shared_display_exclusive usb_reenumerate status_and_health
  unplug_within_toleration restarts
  rolling_update cdi_dir_emptied startup_figure reboot template_metadata template_metadata_uncached extended_resources extended_containers admin_access migration_classes delivered_nodes_read down_leaves_nothing)
[ $# -gt 0 ] && ALL=("$@")

apply_device_classes
helm_driver install --set testRecording="$LAPTOP" >/dev/null ||
  { fail "helm install of the chart: $(k -n "$DRIVER_NS" get pods -o wide 2>&1 | paste -sd'|')"; k -n "$DRIVER_NS" describe pods | tail -n 30; }

for s in "${ALL[@]}"; do
  log "scenario $s"
  "scenario_$s" || fail "scenario $s aborted"
done
summary node
