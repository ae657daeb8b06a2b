#!/usr/bin/env bash
# The kind tier: a cluster of one control-plane node and four workers, each a different recorded machine
# (hack/e2e-kind.sh), with the driver installed once by the chart. Scenarios that need several nodes under one
# scheduler (test/lib/multinode-scenarios.sh), then those shared with the node tier on the laptop worker
# (test/lib/node-scenarios.sh). Ends with `hack/e2e-kind.sh down` and its leftovers check.
#
# usage: test/kind/scenarios.sh [SCENARIO...]   (default: all; names are the scenario_* functions below)
# Environment: as hack/e2e-kind.sh (LIKEN_KIND_MODE, LIKEN_KIND_DIR, ...); LIKEN_KIND_KEEP=1 leaves the cluster up.
# Exit 0 when every check passed; 77 (skipped) when this machine cannot run it (not root, no Docker engine to use
# or to start).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/checks.sh
source "$REPO/test/lib/checks.sh"
# shellcheck source=../lib/node-scenarios.sh
source "$REPO/test/lib/node-scenarios.sh"
# shellcheck source=../lib/multinode-scenarios.sh
source "$REPO/test/lib/multinode-scenarios.sh"
log() { echo "kind: $*" >&2; }
E2E=$REPO/hack/e2e-kind.sh

[ "$(id -u)" = 0 ] || [ "${LIKEN_KIND_MODE:-}" = stock ] || { echo "skip: the kind tier's local mode needs root"; exit 77; }
[ "${LIKEN_KIND_MODE:-}" = stock ] || [ -x /usr/sbin/dockerd ] || { echo "skip: no dockerd (hack/install-deps.sh)"; exit 77; }

T0=$SECONDS
cleanup() {
  local rc=$? out
  prometheus_stop # the alert scenario's Prometheus, if a failure left it running
  slice_watch_stop # the follow_device scenario's slice watch, likewise
  if [ "${LIKEN_KIND_KEEP:-0}" = 1 ]; then log "kept running: eval \"\$($E2E env)\""; return; fi
  if [ "$rc" -ne 0 ] || [ "$FAILURES" -gt 0 ]; then
    k get pods -A -o wide 2>&1 | tail -n 30 || true
  fi
  "$E2E" down >/dev/null 2>&1 || true
  if out=$("$E2E" leftovers 2>&1); then
    echo "ok   nothing is left of the kind cluster (containers, processes, mounts, bridges, cgroups, paths, iptables)"
  else
    echo "FAIL left behind: $(echo "$out" | head -n 10 | paste -sd'|')"
    [ "$rc" -ne 0 ] || rc=1
  fi
  log "kind tier done in $((SECONDS - T0))s"
  exit "$rc"
}
trap cleanup EXIT

eval "$("$E2E" up)"
log "cluster up in $((SECONDS - T0))s"
k() { kubectl "$@"; }
node_sh() { docker exec "$NODE" sh -c "$1"; }
stop_node_kubelet() { docker exec "$1" systemctl stop kubelet >/dev/null 2>&1 || true; }
DRIVER_IMAGE=$LIKEN_DRIVER_IMAGE
WORKLOAD_IMAGE=$LIKEN_WORKLOAD_IMAGE
CDI_DIR=/var/run/cdi
CLAIMS_DIR=/var/lib/kubelet/plugins/liken.sh/claims
DRIVER_NS=liken-system
DRIVER_SELECTOR=app.kubernetes.io/name=liken-dra
upgrade_driver() { # the chart's upgrade, as hack/e2e-kind.sh installed it, with a changed value
  local r sets=()
  for r in laptop gpu-server amd-gpus usb-heavy; do sets+=(--set "testRecordings.$r=$LIKEN_RECORDINGS_DIR/$r.umockdev"); done
  helm upgrade liken "$REPO/charts/liken-dra" -n "$DRIVER_NS" --wait --timeout 5m \
    --set image.repository="${DRIVER_IMAGE%:*}" --set image.tag="${DRIVER_IMAGE##*:}" --set image.pullPolicy=Never \
    --set resyncSeconds=5 "${sets[@]}" "$@"
}

scenario_drivers_ready() { multinode_scenario_drivers_ready; }
scenario_placement() { multinode_scenario_placement; }
scenario_exact_dev() { multinode_scenario_exact_dev; }
scenario_drain() { multinode_scenario_drain; }
scenario_rollout() { multinode_scenario_rollout upgrade_driver --set verbosity=1; }
# The node tier's scenarios, on the laptop worker.
scenario_laptop_node() {
  local NODE
  NODE=$(node_for laptop)
  k delete deployment drain-kfd drain-render --wait=true >/dev/null 2>&1 || true
  delete_pods place-serial place-card place-numa place-kfd
  node_scenario_claims_in_containers
  node_scenario_unprepare_on_delete
  node_scenario_render_shared_display_exclusive
}
# A real Prometheus on the host scrapes every worker's driver with the chart's rules: an unplugged claimed device on
# the laptop worker fires LikenClaimedDeviceUnhealthy, plugging it back resolves it.
scenario_alert() { multinode_scenario_alert; }
# The laptop worker's serial stick, claimed by a Deployment's pod, moves to the GPU server worker: with
# taintUnpluggedDevices off the pod stays, Unhealthy; with it on the pod follows (README "A pod follows its device").
scenario_follow_device() { multinode_scenario_follow_device upgrade_driver; }
scenario_node_delete() { multinode_scenario_node_delete; }
# squat/generic-device-plugin (built by hack/gdp-image.sh, loaded on the laptop worker only) and liken-dra serving one
# name, squat.ai/serial, to one unedited pod spec on two workers; then the laptop worker migrated.
load_gdp_image() { kind load image-archive "$GDP_ARCHIVE" --name "$LIKEN_KIND_CLUSTER" --nodes "$1"; }
scenario_mixed_cluster() {
  local ref t0=$SECONDS
  IFS=$'\t' read -r GDP_ARCHIVE ref < <("$REPO/hack/gdp-image.sh") && [ -n "$ref" ] ||
    { fail "hack/gdp-image.sh could not build the plugin's image"; return 1; }
  log "plugin image $ref ready in $((SECONDS - t0))s"
  multinode_scenario_gdp_mixed "$ref" load_gdp_image
}

ALL=(drivers_ready placement exact_dev drain rollout laptop_node alert follow_device mixed_cluster node_delete)
[ $# -gt 0 ] && ALL=("$@")
apply_device_classes
for s in "${ALL[@]}"; do
  log "scenario $s ($((SECONDS - T0))s)"
  "scenario_$s" || fail "scenario $s aborted"
done
summary kind
