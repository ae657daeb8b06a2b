# Scenarios that need several nodes with different hardware under one scheduler (the kind tier,
# test/kind/scenarios.sh). Sourced after test/lib/checks.sh, never run. Each worker runs the driver on one recorded
# machine (test/machines/), found by its label liken.sh/recording:
#   laptop      an FTDI USB serial adapter (0403:6001: /dev/ttyUSB0 188:0, /dev/bus/usb/001/003 189:2), an iGPU
#   gpu-server  two Radeon PRO W6800 (product 73a3), one per NUMA node, each render half with /dev/kfd
#   amd-gpus    a W7900 (NUMA 0) and an Instinct MI210 (class 038000, NUMA 1: /dev/dri/renderD129 and /dev/kfd)
#   usb-heavy   150 CP2102N USB serial adapters (two slices)
# Besides what test/lib/checks.sh names, the caller defines node_sh to run on $NODE (it reads NODE when called) and
# stop_node_kubelet NODE, and sets CDI_DIR and CLAIMS_DIR as seen on every node.

node_for() { k get nodes -l "liken.sh/recording=$1" -o jsonpath='{.items[0].metadata.name}'; }
pod_node() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
# Devices a node publishes, over all its slices.
node_device_count() { k get resourceslices -o json | jq --arg n "$1" '[.items[] | select(.spec.nodeName == $n) | .spec.devices[]] | length'; }
node_has_no_slices() { [ "$(slice_count "$1")" = 0 ]; }
node_device_count_is() { [ "$(node_device_count "$1")" = "$2" ]; }
# free_pod NAME CLAIM [template]: a workload pod with no node selector: the scheduler picks the node by its claim.
free_pod() {
  local NODE=""
  if [ "${3:-}" = template ]; then workload_pod "$1" template "$2"; else workload_pod "$1" direct "$2"; fi
}
# gpu_pair_claim NAME ATTRIBUTE: render and display halves of one W6800 matching on ATTRIBUTE (constraint).
gpu_pair_claim() {
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: default}
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: gpu-render.liken.sh
        selectors: [{cel: {expression: 'device.attributes["liken.sh"].product == "73a3"'}}]
    - name: display
      exactly:
        deviceClassName: gpu-display.liken.sh
        selectors: [{cel: {expression: 'device.attributes["liken.sh"].product == "73a3"'}}]
    constraints:
    - requests: [dev, display]
      matchAttribute: $2
YAML
}
device_attr() { # NODE DEVICE ATTRIBUTE: the value of one attribute in the node's slices
  k get resourceslices -o json | jq -r --arg n "$1" --arg d "$2" --arg a "$3" \
    '[.items[] | select(.spec.nodeName == $n) | .spec.devices[] | select(.name == $d) | .attributes[$a] | to_entries[0].value] | first'
}

# Each worker's driver is Ready and publishes its recording's devices; no node publishes another's.
multinode_scenario_drivers_ready() {
  local r n want
  for r in laptop:11 gpu-server:12 amd-gpus:9 usb-heavy:150; do
    want=${r#*:}; r=${r%:*}
    n=$(node_for "$r")
    [ -n "$n" ] || { fail "no node labelled liken.sh/recording=$r"; continue; }
    if NODE=$n wait_until 300 driver_ready && wait_until 180 node_device_count_is "$n" "$want"; then
      pass "$r node $n: driver Ready, $want devices in $(slice_count "$n") slice(s)"
    else
      fail "$r node $n: driver $(NODE=$n driver_pod || true) ready=$(NODE=$n driver_ready && echo yes || echo no), $(node_device_count "$n") devices (want $want)"
    fi
  done
  expect_eq "the control-plane node publishes nothing" 0 "$(node_device_count "$(k get nodes -l node-role.kubernetes.io/control-plane -o jsonpath='{.items[0].metadata.name}')")"
}

# expect_placed POD RECORDING: the pod runs, on the node with that recording.
expect_placed() {
  local want
  want=$(node_for "$2")
  if wait_until 180 pod_running "$1"; then
    expect_eq "$1 ($(claim_devices "$(pod_claim "$1")")) placed on the $2 node" "$want" "$(pod_node "$1")"
  else
    fail "$1 is $(pod_phase "$1") on [$(pod_node "$1")]: $(pod_scheduling "$1")"
  fi
}

# The scheduler places each pod where its device is; a claim no node can satisfy stays Pending with the reason.
# The GPU server's pair claims: render and display of one card (by address) and of one NUMA node.
multinode_scenario_placement() {
  claim serial-ftdi serial.liken.sh 'device.attributes["liken.sh"].vendor == "0403"'
  free_pod place-serial serial-ftdi
  gpu_pair_claim card-pair liken.sh/address
  free_pod place-card card-pair
  gpu_pair_claim numa-pair resource.kubernetes.io/numaNode
  free_pod place-numa numa-pair
  claim mi210 gpu-render.liken.sh 'device.attributes["liken.sh"].classCode == "038000"'
  free_pod place-kfd mi210
  claim two-mi210 gpu-render.liken.sh 'device.attributes["liken.sh"].classCode == "038000"' 2
  free_pod place-none two-mi210
  expect_placed place-serial laptop
  expect_placed place-card gpu-server
  expect_placed place-numa gpu-server
  expect_placed place-kfd amd-gpus
  local devs gs numas why
  devs=$(claim_devices card-pair)
  case "$devs" in
    "pci-0000-03-00-0 pci-0000-03-00-0-display" | "pci-0000-83-00-0 pci-0000-83-00-0-display") pass "card-pair: render and display of one card ($devs)" ;;
    *) fail "card-pair split across cards: $devs" ;;
  esac
  gs=$(node_for gpu-server)
  numas=$(for d in $(claim_devices numa-pair); do device_attr "$gs" "$d" resource.kubernetes.io/numaNode; done | sort -u)
  [ "$(echo "$numas" | wc -l)" = 1 ] && [ -n "$numas" ] && [ "$numas" != null ] &&
    pass "numa-pair: render and display on one NUMA node ($numas: $(claim_devices numa-pair))" ||
    fail "numa-pair spans NUMA nodes [$(echo "$numas" | paste -sd' ')]: $(claim_devices numa-pair)"
  wait_until 60 pod_scheduling_decided place-none || true
  why=$(pod_scheduling place-none)
  if [ "$(pod_phase place-none)" = Pending ] && grep -q Unschedulable <<<"$why" && grep -qi claim <<<"$why"; then
    pass "a claim for two MI210s (one exists, on the AMD node) stays Pending: $why"
  else
    fail "place-none: phase $(pod_phase place-none) on [$(pod_node place-none)], scheduling [$why]"
  fi
  delete_pods place-none
}

# On each node, the container gets exactly its claim's nodes (/dev and, on cgroup v1, the device cgroup).
multinode_scenario_exact_dev() {
  local p r other NODE
  for p in place-serial:laptop:"c 226 0" place-numa:gpu-server:"c 226 130" place-kfd:amd-gpus:"c 226 128"; do
    r=$(cut -d: -f2 <<<"$p"); other=$(cut -d: -f3 <<<"$p"); p=${p%%:*}
    NODE=$(node_for "$r")
    workload_pod "base-$r"
    wait_until 120 pod_running "base-$r" || { fail "baseline pod on $NODE: $(pod_phase "base-$r")"; continue; }
    pod_running "$p" || { fail "$p is not running"; continue; }
    check_container_devices "base-$r" "$p" "$other"
  done
  NODE=$(node_for amd-gpus)
  expect_eq "the MI210 claim's CDI spec names its render node and /dev/kfd" "/dev/dri/renderD129 /dev/kfd" "$(cdi_node_paths mi210)"
  delete_pods base-laptop base-gpu-server base-amd-gpus
}

# deployment NAME TEMPLATE AFFINITY-JSON: one replica with a claim from TEMPLATE.
deployment() {
  k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1, role: liken-drain}}
    spec:
      terminationGracePeriodSeconds: 1
      enableServiceLinks: false
      affinity: $3
      containers:
      - name: c
        image: $WORKLOAD_IMAGE
        imagePullPolicy: $PULL_POLICY
        command: [sleep, "86400"]
        resources: {claims: [{name: dev}]}
      resourceClaims:
      - name: dev
        resourceClaimTemplateName: $2
YAML
}
deployment_pod() { k get pods -l "app=$1" --field-selector=status.phase!=Succeeded -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.name // empty'; }
deployment_running_on() { local p; p=$(deployment_pod "$1") && [ -n "$p" ] && pod_running "$p" && [ "$(pod_node "$p")" = "$2" ]; }

# kubectl drain of the AMD node: its pods with claims are evicted, the kubelet unprepares them there (CDI specs and
# records gone); a pod whose device exists elsewhere lands there, one whose device exists nowhere else stays Pending.
multinode_scenario_drain() {
  local amd gs p claim uid spec specs=() records=() i ok
  amd=$(node_for amd-gpus); gs=$(node_for gpu-server)
  claim_template mi210-template gpu-render.liken.sh 'device.attributes["liken.sh"].classCode == "038000"'
  claim_template amd-render-template gpu-render.liken.sh 'device.attributes["liken.sh"].vendor == "1002"'
  deployment drain-kfd mi210-template '{}'
  # Any AMD render half: on the AMD node first (required there), then relaxed to both AMD machines.
  deployment drain-render amd-render-template "{\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"liken.sh/recording\", \"operator\": \"In\", \"values\": [\"amd-gpus\", \"gpu-server\"]}]}]}, \"preferredDuringSchedulingIgnoredDuringExecution\": [{\"weight\": 100, \"preference\": {\"matchExpressions\": [{\"key\": \"liken.sh/recording\", \"operator\": \"In\", \"values\": [\"amd-gpus\"]}]}}]}}"
  for p in drain-kfd drain-render; do
    if wait_until 180 deployment_running_on "$p" "$amd"; then
      pass "$p runs on the AMD node with $(claim_devices "$(pod_claim "$(deployment_pod "$p")")")"
    else
      p=$(deployment_pod "$p")
      fail "$p not running on $amd: $(pod_phase "$p") on [$(pod_node "$p")] $(pod_scheduling "$p")"
      return 1
    fi
  done
  local NODE=$amd
  for p in drain-kfd drain-render; do
    claim=$(pod_claim "$(deployment_pod "$p")"); uid=$(claim_uid "$claim")
    specs+=("$CDI_DIR/liken.sh-$uid.json"); records+=("$CLAIMS_DIR/$uid.json")
  done
  ok=1
  for i in 0 1; do node_file_exists "${specs[$i]}" && node_file_exists "${records[$i]}" || ok=0; done
  [ $ok = 1 ] && pass "both claims prepared on $amd (CDI specs and records)" || fail "claims on $amd lack CDI specs or records"
  if k drain "$amd" --ignore-daemonsets --delete-emptydir-data --force --timeout=180s >/dev/null 2>&1; then
    pass "kubectl drain $amd"
  else
    fail "kubectl drain $amd failed"
  fi
  if wait_until 120 node_sh "for f in ${specs[*]} ${records[*]}; do [ ! -e \$f ] || exit 1; done"; then
    pass "the kubelet on $amd unprepared the evicted pods' claims (CDI specs and records gone)"
  else
    fail "after drain, left on $amd: $(node_sh "ls ${specs[*]} ${records[*]} 2>/dev/null" | paste -sd' ')"
  fi
  if wait_until 180 deployment_running_on drain-render "$gs"; then
    pass "drain-render's new pod runs on the GPU server with $(claim_devices "$(pod_claim "$(deployment_pod drain-render)")")"
  else
    p=$(deployment_pod drain-render); fail "drain-render: $p $(pod_phase "$p") on [$(pod_node "$p")] $(pod_scheduling "$p")"
  fi
  p=$(deployment_pod drain-kfd)
  wait_until 60 pod_pending_unschedulable "$p" || true
  if pod_pending_unschedulable "$p"; then
    pass "drain-kfd's new pod stays Pending (the MI210 exists only on the drained node): $(pod_scheduling "$p")"
  else
    fail "drain-kfd's new pod $p: $(pod_phase "$p") on [$(pod_node "$p")] $(pod_scheduling "$p")"
  fi
  k uncordon "$amd" >/dev/null
  if wait_until 180 deployment_running_on drain-kfd "$amd"; then
    pass "after uncordon, drain-kfd runs on $amd again"
  else
    p=$(deployment_pod drain-kfd); fail "after uncordon: $p $(pod_phase "$p") $(pod_scheduling "$p")"
  fi
}

# Every running workload pod with a claim: "POD NODE CLAIM-UID", one a line.
prepared_claims() {
  k get pods -l 'app' -o json | jq -r '.items[] | select(.status.phase == "Running") | .metadata.name' | while read -r p; do
    local c; c=$(pod_claim "$p"); [ -n "$c" ] && echo "$p $(pod_node "$p") $(claim_uid "$c")"
  done
}
claims_files_present() { # lines of "POD NODE UID" on stdin: each claim's CDI spec and record on its node
  local p n u
  while read -r p n u; do NODE=$n node_sh "[ -e '$CDI_DIR/liken.sh-$u.json' ] && [ -e '$CLAIMS_DIR/$u.json' ]" || { echo "$p"; }; done
}

kept_driver_pods() { local p; for p in $(driver_pods); do case " $1 " in *" $p "*) echo "$p" ;; esac; done; }
old_driver_pods_gone() { [ -z "$(kept_driver_pods "$ROLLOUT_BEFORE")" ]; }
# helm upgrade of the release rolls every worker's driver; every prepared claim stays prepared, the pods keep
# running, and new claims prepare afterwards. $@: the command that upgrades (e.g. helm_driver upgrade --set ...).
multinode_scenario_rollout() {
  local before after claims missing p
  claims=$(prepared_claims)
  [ -n "$claims" ] || { fail "no prepared claims before the rollout"; return 1; }
  before=$(driver_pods)
  "$@" >/dev/null 2>&1 || { fail "helm upgrade: $*"; return 1; }
  # helm's --wait returns once the new pods are Ready; an old one may still be terminating.
  ROLLOUT_BEFORE=$before wait_until 120 old_driver_pods_gone || true
  after=$(driver_pods)
  expect_eq "every driver pod was replaced by the rollout ($(echo "$after" | wc -w) workers)" "" "$(kept_driver_pods "$before")"
  missing=$(claims_files_present <<<"$claims")
  expect_eq "the $(echo "$claims" | wc -l) prepared claims keep their CDI specs and records through the rollout" "" "$missing"
  for p in $(awk '{ print $1 }' <<<"$claims"); do pod_running "$p" || missing+=" $p"; done
  expect_eq "their pods keep running" "" "$missing"
  # The laptop's iGPU render half (shareable; its serial adapter is held by place-serial).
  claim after-rollout gpu-render.liken.sh 'device.attributes["liken.sh"].vendor == "8086"'
  free_pod after-rollout after-rollout
  expect_placed after-rollout laptop
  delete_pods after-rollout
}

# A Node deleted from the cluster: its slices are garbage-collected through their owner reference; no other
# node's slice and no claim changes.
multinode_scenario_node_delete() {
  local gone others_before others_after claims_before claims_after
  gone=$(node_for usb-heavy)
  others_before=$(k get resourceslices -o json | jq -r --arg n "$gone" '.items[] | select(.spec.nodeName != $n) | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort)
  claims_before=$(k get resourceclaims -o json | jq -r '.items[] | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort)
  expect_eq "$gone publishes its slices before" 2 "$(slice_count "$gone")"
  jq -e --arg n "$gone" 'all(.items[] | select(.spec.nodeName == $n); .metadata.ownerReferences[0].kind == "Node")' \
    <(k get resourceslices -o json) >/dev/null && pass "$gone's slices are owned by its Node" || fail "$gone's slices lack a Node owner"
  # The node's kubelet would register the Node again: stop it first.
  stop_node_kubelet "$gone"
  k delete node "$gone" --wait=true --timeout=60s >/dev/null
  if wait_until 120 node_has_no_slices "$gone"; then
    pass "the deleted Node's slices are garbage-collected"
  else
    fail "slices of deleted node $gone remain: $(slice_count "$gone")"
  fi
  others_after=$(k get resourceslices -o json | jq -r --arg n "$gone" '.items[] | select(.spec.nodeName != $n) | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort)
  claims_after=$(k get resourceclaims -o json | jq -r '.items[] | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort)
  expect_eq "no other node's slice changed" "$others_before" "$others_after"
  expect_eq "no claim changed" "$claims_before" "$claims_after"
}

# --- a real Prometheus on the host, scraping every worker's driver -------------------------------------------------
# Debian's /usr/bin/prometheus, run on this machine (as the tier runs dockerd), listening on loopback only; it reaches
# each worker's metrics port (the DaemonSet uses the host network, so the node's address) over the cluster's Docker
# bridge. Its config, rules and data lie in PROM_DIR (a temporary directory); prometheus_stop ends it and removes them.
PROM_PID="" PROM_DIR="" PROM_URL=""
# The job's name as the chart's ServiceMonitor makes it (<release>-liken-dra-metrics): the rules match it.
PROM_JOB=liken-liken-dra-metrics
# prometheus_start RULES TARGET...: scrape and evaluate every 2 s with RULES loaded; false if it does not get ready.
# The targets come from a file (file_sd, as service discovery hands them over), so prometheus_set_targets can take
# them away as Endpoints losing their pods would.
prometheus_start() {
  local rules=$1 port
  shift
  PROM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/liken-prometheus.XXXXXX")
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PROM_URL=http://127.0.0.1:$port
  cp "$rules" "$PROM_DIR/rules.yaml"
  prometheus_set_targets "$@"
  {
    printf 'global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}\n'
    printf 'rule_files: [%s/rules.yaml]\n' "$PROM_DIR"
    printf 'scrape_configs:\n- job_name: %s\n  file_sd_configs:\n  - {files: [%s/targets.json], refresh_interval: 2s}\n' \
      "$PROM_JOB" "$PROM_DIR"
  } >"$PROM_DIR/prometheus.yml"
  /usr/bin/prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
    --web.listen-address="127.0.0.1:$port" >"$PROM_DIR/prometheus.log" 2>&1 </dev/null &
  PROM_PID=$!
  wait_until 60 curl -sf --max-time 2 "$PROM_URL/-/ready"
}
# prometheus_set_targets TARGET...: the targets the driver job scrapes from now on (none: the job has no target).
prometheus_set_targets() {
  python3 -c 'import json, sys; json.dump([{"targets": sys.argv[2:]}] if sys.argv[2:] else [], open(sys.argv[1], "w"))' \
    "$PROM_DIR/targets.json.tmp" "$@" && mv "$PROM_DIR/targets.json.tmp" "$PROM_DIR/targets.json"
}
prom_active_targets() { prom_get targets | jq '.data.activeTargets | length'; }
prom_active_targets_are() { [ "$(prom_active_targets)" = "$1" ]; }
prometheus_stop() {
  if [ -n "$PROM_PID" ]; then
    kill -TERM "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
  fi
  [ -z "$PROM_DIR" ] || rm -rf "$PROM_DIR"
  PROM_PID="" PROM_DIR=""
}
prom_get() { curl -sf --max-time 5 "$PROM_URL/api/v1/$1"; }
# prom_query EXPR: the instant query's samples, "INSTANCE VALUE" one a line.
prom_query() { curl -sf --max-time 5 "$PROM_URL/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[] | "\(.metric.instance) \(.value[1])"'; }
# prom_targets_up: the scraped targets whose health is up, sorted, one a line.
prom_targets_up() { prom_get targets | jq -r '.data.activeTargets[] | select(.health == "up") | .labels.instance' | sort; }
prom_targets_up_are() { [ "$(prom_targets_up | paste -sd' ')" = "$1" ]; }
# prom_alerts NAME INSTANCE: the alert's entries in /api/v1/alerts, "STATE VALUE" one a line (none once resolved:
# the API lists pending and firing alerts only). INSTANCE "-" matches an alert without an instance label.
prom_alerts() {
  prom_get alerts | jq -r --arg n "$1" --arg i "$2" '.data.alerts[] | select(.labels.alertname == $n and (.labels.instance // "-") == $i) | "\(.state) \(.value | tonumber)"'
}
# prom_alert_state NAME INSTANCE: the alert's states, "|"-joined ("" once resolved).
prom_alert_state() { prom_alerts "$1" "$2" | awk '{ print $1 }' | paste -sd'|'; }
prom_alert_state_is() { [ "$(prom_alert_state "$1" "$2")" = "$3" ]; }
prom_has_series() { [ -n "$(prom_query "$1")" ]; }
prom_alert_is() { [ "$(prom_alerts "$1" "$2" | paste -sd'|')" = "$3" ]; }
prom_alert_json() { prom_get alerts | jq -c --arg n "$1" '[.data.alerts[] | select(.labels.alertname == $n) | {labels: {alertname: .labels.alertname, instance: .labels.instance, severity: .labels.severity}, state, value, summary: .annotations.summary}]'; }

# A ValidatingAdmissionPolicy that refuses every create and update of NODE's ResourceSlices with 403 Forbidden (a
# refusal the driver retries, as it would a webhook's or an RBAC change's): the slice write failures of
# LikenSliceWritesFailing, made by the API server itself.
refuse_slice_writes_yaml() {
  cat <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: liken-test-refuse-slice-writes}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [resource.k8s.io], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [resourceslices]}
  validations:
  - expression: "!has(object.spec.nodeName) || object.spec.nodeName != '$1'"
    reason: Forbidden
    message: "liken's kind tier refuses $1's slice writes"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: liken-test-refuse-slice-writes}
spec: {policyName: liken-test-refuse-slice-writes, validationActions: [Deny]}
YAML
}
# slice_write_refused NODE: a server-side dry run of an update of NODE's first slice is refused by that policy.
slice_write_refused() {
  local out
  out=$(k get resourceslice "$1-liken.sh" -o json | k replace --dry-run=server -f - 2>&1) || true
  [[ $out == *"refuses $1's slice writes"* ]]
}
allow_slice_writes() {
  k delete validatingadmissionpolicybinding liken-test-refuse-slice-writes --ignore-not-found >/dev/null 2>&1 || true
  k delete validatingadmissionpolicy liken-test-refuse-slice-writes --ignore-not-found >/dev/null 2>&1 || true
}

# The chart's rules file in a real Prometheus, one alert of each kind firing and resolving, on the laptop worker:
# - a gauge, LikenClaimedDeviceUnhealthy: the worker's claimed FTDI adapter (USB port 1-1, held by a running pod) is
#   unplugged in the driver container's umockdev testbed (testbed_unplug_usb), then plugged back;
# - a counter, LikenSliceWritesFailing: an admission policy refuses the worker's slice writes, a device is
#   unplugged so the slice must change, the driver's retries fail; then the policy is removed;
# - an absence, LikenDriverMetricsAbsent: the driver job's targets are taken away (as when its Service has no
#   endpoints left); then they come back.
multinode_scenario_alert() {
  local NODE laptop_ip workers targets t want_rules tb t0 fired start=$SECONDS name=LikenClaimedDeviceUnhealthy
  local rules_short="${TMPDIR:-/tmp}/liken-rules-short.yaml"
  NODE=$(node_for laptop)
  laptop_ip=$(k get node "$NODE" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
  workers=$(k get nodes -l liken.sh/recording -o jsonpath='{range .items[*]}{.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}')
  targets=$(for t in $workers; do echo "$t:9410"; done | sort)
  # A test-only copy of the rules with every `for:` cut to 4 s and every range window to 30 s, so that an alert
  # fires within seconds and a counter alert resolves within a minute of its last error (the chart's rules wait 1 to
  # 30 minutes and count errors over 2 to 5); nothing else of the file changes.
  sed -E -e 's/^( *)for: .*/\1for: 4s/' -e 's/\[[0-9]+[smh]\]/[30s]/g' \
    "$REPO/charts/liken-dra/files/prometheus-rules.yaml" >"$rules_short"
  want_rules=$(grep -c '^ *- alert:' "$REPO/charts/liken-dra/files/prometheus-rules.yaml")
  prometheus_start "$rules_short" $targets ||
    { fail "Prometheus did not get ready: $(tail -n 5 "$PROM_DIR/prometheus.log" | paste -sd'|')"; rm -f "$rules_short"; prometheus_stop; return 1; }
  rm -f "$rules_short"
  expect_eq "Prometheus ($(/usr/bin/prometheus --version 2>&1 | head -n 1 | awk '{ print $3 }')) loaded the chart's $want_rules alerting rules" \
    "$want_rules" "$(prom_get rules | jq '[.data.groups[].rules[] | select(.type == "alerting")] | length')"
  if wait_until 60 prom_targets_up_are "$(echo "$targets" | paste -sd' ')"; then
    pass "Prometheus scrapes every worker's driver: $(echo "$targets" | paste -sd' ') up"
  else
    fail "targets up: [$(prom_targets_up | paste -sd' ')], want [$(echo "$targets" | paste -sd' ')]: $(prom_get targets | jq -c '[.data.activeTargets[] | {instance: .labels.instance, health, lastError}]')"
  fi
  wait_until 30 prom_has_series "liken_unhealthy_claimed_devices{instance=\"$laptop_ip:9410\"}" || true
  expect_eq "before the unplug: liken_unhealthy_claimed_devices 0 on $laptop_ip:9410, no $name" "$laptop_ip:9410 0|" \
    "$(prom_query "liken_unhealthy_claimed_devices{instance=\"$laptop_ip:9410\"}")|$(prom_alerts "$name" "$laptop_ip:9410")"

  # The gauge.
  claim alert-serial serial.liken.sh 'device.attributes["liken.sh"].vendor == "0403"'
  workload_pod alert-serial direct alert-serial
  if ! wait_until 120 pod_running alert-serial; then
    fail "alert-serial $(pod_phase alert-serial): $(pod_scheduling alert-serial)"
    delete_pods alert-serial; k delete resourceclaim alert-serial --wait=false >/dev/null 2>&1 || true; prometheus_stop; return 1
  fi
  tb=$(driver_testbed)
  if [ -z "$tb" ] || ! testbed_unplug_usb "$tb" 1-1; then
    fail "could not unplug port 1-1 in the laptop driver's testbed [$tb]"
  else
    t0=$SECONDS fired=0
    if wait_until 90 prom_alert_is "$name" "$laptop_ip:9410" "firing 1"; then
      fired=1
      pass "unplugged $(claim_devices alert-serial) on $NODE: $name firing for $laptop_ip:9410 after $((SECONDS - t0)) s: $(prom_alert_json "$name")"
    else
      fail "$name after the unplug: [$(prom_alerts "$name" "$laptop_ip:9410" | paste -sd'|')]; liken_unhealthy_claimed_devices: [$(prom_query liken_unhealthy_claimed_devices | paste -sd'|')]; from the node: [$(driver_metric liken_unhealthy_claimed_devices)]; claim status [$(claim_device_status alert-serial)]; testbed $tb: [$(node_sh "ls $tb/unplugged/device $tb/unplugged/links" 2>&1 | paste -sd' ')]; driver log: $(k -n "$DRIVER_NS" logs "$(driver_pod)" --tail=6 2>&1 | cut -c1-300 | paste -sd'|')"
    fi
    expect_eq "while unplugged, liken_unhealthy_claimed_devices is 1 on the laptop worker only" \
      "$(for t in $targets; do [ "$t" = "$laptop_ip:9410" ] && echo "$t 1" || echo "$t 0"; done | paste -sd'|')" \
      "$(prom_query liken_unhealthy_claimed_devices | sort | paste -sd'|')"
    testbed_replug_usb "$tb" 1-1 || fail "could not plug port 1-1 back"
    t0=$SECONDS
    if [ "$fired" = 0 ]; then
      fail "$name never fired, so its resolution cannot be checked"
    elif wait_until 90 prom_alert_is "$name" "$laptop_ip:9410" ""; then
      pass "plugged back: $name resolved (gone from /api/v1/alerts) after $((SECONDS - t0)) s; liken_unhealthy_claimed_devices $(prom_query "liken_unhealthy_claimed_devices{instance=\"$laptop_ip:9410\"}" | awk '{ print $2 }')"
    else
      fail "$name after plugging back: [$(prom_alerts "$name" "$laptop_ip:9410" | paste -sd'|')]"
    fi
  fi
  delete_pods alert-serial
  k delete resourceclaim alert-serial --wait=false >/dev/null 2>&1 || true

  alert_scenario_counter "$laptop_ip:9410"
  alert_scenario_absent "$laptop_ip:9410"
  prometheus_stop
  echo "--- the alert scenario took $((SECONDS - start)) s"
}

# The counter: the laptop worker's slice writes refused by an admission policy while its FTDI adapter is unplugged
# (no claim holds it now), so the driver's slice update fails on every retry; LikenSliceWritesFailing fires for the
# worker and no other, and resolves once the policy is gone and the write goes through.
alert_scenario_counter() {
  local instance=$1 name=LikenSliceWritesFailing tb t0 fired=0 errors
  allow_slice_writes
  refuse_slice_writes_yaml "$NODE" | k apply -f - >/dev/null || { fail "could not create the slice-refusing policy"; return 1; }
  if ! wait_until 60 slice_write_refused "$NODE"; then
    fail "the policy does not refuse $NODE's slice writes: $(k get resourceslice "$NODE-liken.sh" -o json | k replace --dry-run=server -f - 2>&1 | tail -n 1)"
    allow_slice_writes; return 1
  fi
  expect_eq "before the refused writes: no $name for $instance" "" "$(prom_alert_state "$name" "$instance")"
  tb=$(driver_testbed)
  if [ -z "$tb" ] || ! testbed_unplug_usb "$tb" 1-1; then
    fail "could not unplug port 1-1 in the laptop driver's testbed [$tb]"; allow_slice_writes; return 1
  fi
  t0=$SECONDS
  if wait_until 90 prom_alert_state_is "$name" "$instance" firing; then
    fired=1
    errors=$(prom_query "sum by (instance) (liken_slice_writes_total{result=\"error\"})" | sort | paste -sd'|')
    pass "$NODE's slice writes refused, port 1-1 unplugged: $name firing for $instance after $((SECONDS - t0)) s (slice write errors by instance: $errors): $(prom_alert_json "$name")"
  else
    fail "$name with $NODE's slice writes refused: [$(prom_alerts "$name" "$instance" | paste -sd'|')]; errors [$(prom_query 'liken_slice_writes_total{result="error"}' | paste -sd'|')]; driver log: $(k -n "$DRIVER_NS" logs "$(driver_pod)" --tail=4 2>&1 | cut -c1-300 | paste -sd'|')"
  fi
  expect_eq "$name fires for $instance only" "$instance" \
    "$(prom_get alerts | jq -r --arg n "$name" '[.data.alerts[] | select(.labels.alertname == $n and .state == "firing") | .labels.instance] | unique | join(" ")')"
  allow_slice_writes
  t0=$SECONDS
  if [ "$fired" = 0 ]; then
    fail "$name never fired, so its resolution cannot be checked"
  elif wait_until 120 prom_alert_state_is "$name" "$instance" ""; then
    pass "policy removed: $NODE's slice lacks the adapter ($(slice_lacks_device "$NODE" usb-1-1-1-0 >/dev/null && echo yes || echo no)), $name resolved after $((SECONDS - t0)) s"
  else
    fail "$name after the policy was removed: [$(prom_alerts "$name" "$instance" | paste -sd'|')]"
  fi
  testbed_replug_usb "$tb" 1-1 || fail "could not plug port 1-1 back"
  wait_until 60 slice_has_device "$NODE" usb-1-1-1-0 || fail "$NODE's slice lacks usb-1-1-1-0 after the replug"
}

# The absence: the driver job's targets taken away (an empty target list, as when the metrics Service loses its
# endpoints or the ServiceMonitor its Service), so no up series of a liken-dra job is left: LikenDriverMetricsAbsent
# fires; with the targets back it resolves.
alert_scenario_absent() {
  local name=LikenDriverMetricsAbsent t0 fired=0 targets
  targets=$(prom_get targets | jq -r '.data.activeTargets[].labels.instance' | sort | paste -sd' ')
  expect_eq "before: no $name" "" "$(prom_alert_state "$name" -)"
  prometheus_set_targets
  wait_until 30 prom_active_targets_are 0 || fail "Prometheus still has $(prom_active_targets) targets after they were taken away"
  t0=$SECONDS
  if wait_until 90 prom_alert_state_is "$name" - firing; then
    fired=1
    pass "the driver job's targets taken away: $name firing after $((SECONDS - t0)) s: $(prom_alert_json "$name")"
  else
    fail "$name without targets: [$(prom_alert_state "$name" -)]; up: [$(prom_query 'up' | paste -sd'|')]"
  fi
  # shellcheck disable=SC2086 # one target a word
  prometheus_set_targets $targets
  t0=$SECONDS
  if [ "$fired" = 0 ]; then
    fail "$name never fired, so its resolution cannot be checked"
  elif wait_until 60 prom_alert_state_is "$name" - ""; then
    pass "the targets back ($targets): $name resolved after $((SECONDS - t0)) s"
  else
    fail "$name with the targets back: [$(prom_alert_state "$name" -)]"
  fi
}

# --- a USB device moved from one worker to another -----------------------------------------------------------------
# usb_port_path PATH OLD NEW: PATH (relative, '/'-separated) with each component named for USB port OLD (OLD itself,
# OLD:C.I for an interface, OLD.N for a device behind a hub on it) renamed for port NEW.
usb_port_path() {
  local IFS=/ c out=() old=$2 new=$3
  for c in $1; do
    case "$c" in "$old" | "$old":* | "$old".*) c=$new${c#"$old"} ;; esac
    out+=("$c")
  done
  echo "${out[*]}"
}
# testbed_move_usb FROM_NODE FROM_TB PORT TO_NODE TO_TB NEW_PORT: plugs the USB device that testbed_unplug_usb took
# out of port PORT of FROM_NODE's umockdev testbed (driver_testbed) into port NEW_PORT (free, e.g. 1-2) of
# TO_NODE's, as that node's kernel would show it: the sysfs directories named for the new port; the next free device
# number on that bus (devnum, dev, DEVNAME, DEVNUM, MINOR); devpath, busnum, the port link and the by-path link of
# the new port; every relative link aimed from its new place; then the /sys/bus/usb/devices links, the interfaces'
# last, so that a pass never sees half a device (the scanner enters through them; /sys/class links are left out, as
# testbed_unplug_usb leaves them). The copy in FROM_TB/unplugged stays there for testbed_replug_usb. Runs through
# node_sh only (the files travel as base64 text); the rewriting happens here, in a temporary directory.
testbed_move_usb() {
  local from=$1 ftb=$2 port=$3 to=$4 ttb=$5 new=$6
  local tmp oldparent newparent root bus devnum minor l r target abs oldctl newctl b64 links="" d
  local fake=/liken-testbed-root # a root that does not exist here, so that realpath -m resolves nothing
  oldparent=$(NODE=$from node_sh "cat $ftb/unplugged/parent") || return 1
  oldparent=${oldparent#"$ftb"/}
  bus=${new%%-*}
  root=$(NODE=$to node_sh "find $ttb/sys/devices -type d -path '*/usb$bus' | head -n 1")
  [ -n "$root" ] || { echo "testbed_move_usb: no usb$bus in $to's testbed" >&2; return 1; }
  newparent=$root
  case "$new" in *.*) newparent=$(NODE=$to node_sh "find $root -type d -name '${new%.*}' | head -n 1") ;; esac
  [ -n "$newparent" ] || return 1
  NODE=$to node_sh "[ ! -e $newparent/$new ]" || { echo "testbed_move_usb: port $new of $to is taken" >&2; return 1; }
  devnum=$(NODE=$to node_sh "find $root -name devnum -exec cat {} +" | sort -n | tail -n 1)
  devnum=$((devnum + 1))
  minor=$(((bus - 1) * 128 + devnum - 1))
  newparent=${newparent#"$ttb"/}
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/liken-usb-move.XXXXXX")
  NODE=$from node_sh "tar -C $ftb/unplugged/device -czf - $port | base64 -w0" | base64 -d | tar -C "$tmp" -xzf - ||
    { rm -rf "$tmp"; return 1; }
  # Links, from their old place to their new one (a target inside the device moves with it).
  while IFS= read -r l; do
    r=${l#"$tmp"/}
    target=$(readlink "$l")
    abs=$(realpath -m "$fake/$oldparent/$(dirname "$r")/$target")
    case "$abs" in
      "$fake/$oldparent/$port" | "$fake/$oldparent/$port"/*) target=$(usb_port_path "$target" "$port" "$new") ;; # moves along
      *) target=$(realpath -m --relative-to="$fake/$newparent/$(dirname "$(usb_port_path "$r" "$port" "$new")")" "$abs") ;;
    esac
    ln -sfn "$target" "$l"
  done < <(find "$tmp/$port" -type l)
  # Names, deepest first.
  while IFS= read -r l; do
    r=${l##*/}
    case "$r" in "$port" | "$port":* | "$port".*) mv "$l" "${l%/*}/$new${r#"$port"}" ;; esac
  done < <(find "$tmp/$port" -depth)
  d=$tmp/$new
  # The device's number and place on its bus.
  printf '%s\n' "$devnum" >"$d/devnum"
  printf '%s\n' "$bus" >"$d/busnum"
  printf '%s\n' "${new#*-}" >"$d/devpath"
  printf '189:%s\n' "$minor" >"$d/dev"
  sed -i -E "s|^DEVNAME=(/dev/)?bus/usb/.*|DEVNAME=\\1bus/usb/$(printf %03d "$bus")/$(printf %03d "$devnum")|;
    s|^DEVNUM=.*|DEVNUM=$(printf %03d "$devnum")|; s|^BUSNUM=.*|BUSNUM=$(printf %03d "$bus")|; s|^MINOR=.*|MINOR=$minor|" "$d/uevent"
  case "$new" in
    *.*) ln -sfn "../${new%.*}:1.0/${new%.*}-port${new##*.}" "$d/port" ;;
    *) ln -sfn "../$bus-0:1.0/usb$bus-port${new##*-}" "$d/port" ;;
  esac
  # udev's by-path names: pci-<controller>-usb-0:<devpath>:<config>.<interface>.
  oldctl=$(basename "$(dirname "$(echo "$oldparent" | sed -E 's|/usb[0-9]+(/.*)?$|/usbX|')")")
  newctl=$(basename "$(dirname "$(echo "$root" | sed -E 's|/usb[0-9]+$|/usbX|')")")
  find "$d" -name uevent -exec sed -i "s|pci-$oldctl-usb-0:${port#*-}:|pci-$newctl-usb-0:${new#*-}:|g" {} +
  b64=$(tar -C "$tmp" -czf - "$new" | base64 -w0)
  for l in "$d"/"$new":*; do links+=" ${l##*/}"; done
  rm -rf "$tmp"
  r=$(realpath -m --relative-to="$fake/sys/bus/usb/devices" "$fake/$newparent")
  NODE=$to node_sh "cd $ttb/$newparent && echo '$b64' | base64 -d | tar -xzf - &&
    ln -s $r/$new $ttb/sys/bus/usb/devices/$new && for i in $links; do ln -s $r/$new/\$i $ttb/sys/bus/usb/devices/\$i; done"
}

# --- a pod follows its device (README "A pod follows its device") --------------------------------------------------
# The laptop worker's FTDI stick (serial A50285BI, USB port 1-1, usb-1-1-1-0) is claimed by a Deployment's pod
# through a template whose CEL selects that serial; the stick is unplugged on the laptop worker and plugged into port
# 1-2 of the GPU server worker (testbed_move_usb; published there as usb-1-2-1-0).
FOLLOW_SERIAL=A50285BI
# driver_args_taint: how many of the driver's DaemonSets run with --taint-unplugged-devices, "N of M".
driver_args_taint() {
  k -n "$DRIVER_NS" get daemonsets -l "$DRIVER_SELECTOR" -o json |
    jq -r '[.items[] | .spec.template.spec.containers[0].args | any(. == "--taint-unplugged-devices")] |
      "\(map(select(.)) | length) of \(length)"'
}
# node_serial_devices NODE SERIAL: the devices NODE publishes with that serial, space-separated.
node_serial_devices() {
  k get resourceslices -o json | jq -r --arg n "$1" --arg s "$2" '[.items[] | select(.spec.nodeName == $n) |
    .spec.devices[] | select((.attributes["liken.sh/serial"] // .attributes.serial).string == $s) | .name] | join(" ")'
}
node_serial_devices_are() { [ "$(node_serial_devices "$1" "$2")" = "$3" ]; }
# slice_watch_start NODE FILE / slice_watch_stop: every version of NODE's slice, as JSON objects one after another.
SLICE_WATCH_PID=""
slice_watch_start() { k get resourceslice "$1-liken.sh" --watch -o json >"$2" 2>/dev/null & SLICE_WATCH_PID=$!; }
slice_watch_stop() {
  [ -n "$SLICE_WATCH_PID" ] || return 0
  pkill -P "$SLICE_WATCH_PID" 2>/dev/null || true
  kill "$SLICE_WATCH_PID" 2>/dev/null || true
  wait "$SLICE_WATCH_PID" 2>/dev/null || true
  SLICE_WATCH_PID=""
}
# watched_taints FILE DEVICE: the taints DEVICE carried in any watched version, "KEY=VALUE:EFFECT@TIME", sorted, unique.
watched_taints() {
  jq -r --arg d "$2" '.spec.devices[]? | select(.name == $d) | .taints[]? | "\(.key)=\(.value // ""):\(.effect)@\(.timeAdded)"' "$1" |
    sort -u | paste -sd' '
}
# describe_slice_device NODE DEVICE: the DEVICE's entry in `kubectl describe resourceslice <NODE>-liken.sh`.
describe_slice_device() {
  k describe resourceslice "$1-liken.sh" | awk -v dev="$2" '
    function flush() { if (hit) printf "%s", buf; buf = ""; hit = 0; named = 0 }
    /^  Devices:/ { on = 1; next }
    /^  ?[^ ]/ { flush(); on = 0; next }
    !on { next }
    # A device'"'"'s fields come sorted: after its Name only its Taints.
    /^    [^ ][^:]*:/ && named && $1 != "Taints:" { flush() }
    /^    Name: / { named = 1; if ($2 == dev) hit = 1 }
    { buf = buf $0 "\n" }
    END { flush() }'
}
pod_events() { k get events --field-selector "involvedObject.name=$1,reason=$2" -o jsonpath='{.items[*].message}'; }
pod_has_event() { [ -n "$(pod_events "$1" "$2")" ]; }
deployment_pods() { k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}'; }
deployment_pods_gone() { [ -z "$(deployment_pods "$1")" ]; }
seconds_since() { awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.1f", b - a }'; }
epoch_of() { date -d "$1" +%s.%N; } # an RFC 3339 time of the API server's, as seconds since the epoch
# pod_event_time POD REASON: when the first such event of the pod happened, in seconds since the epoch.
pod_event_time() {
  epoch_of "$(k get events --field-selector "involvedObject.name=$1,reason=$2" -o json |
    jq -r '.items[0] | .eventTime // .firstTimestamp // .lastTimestamp')"
}
pod_started_time() { epoch_of "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}')"; }
# node_driver_settled: exactly one driver pod on $NODE, and it is Ready (after a rollout).
node_driver_settled() {
  [ "$(k -n "$DRIVER_NS" get pods -l "$DRIVER_SELECTOR" --field-selector "spec.nodeName=$NODE" -o name | wc -l)" = 1 ] && driver_ready
}

# follow_phase on|off A B: the Deployment's pod runs on A with the stick; the stick moves to B. on: the pod is
# evicted by the device taint and its replacement runs on B with the stick's nodes. off: the pod stays on A, the
# stick leaves A's slice untainted and the pod's status shows it Unhealthy. Then everything is put back.
follow_phase() {
  local mode=$1 a=$2 b=$3 pod uid claim tba tbb t0 t_plug t_gone t_run new want got watch ok=1
  deployment follow follow-stick '{}'
  if ! wait_until 180 deployment_running_on follow "$a"; then
    pod=$(deployment_pod follow)
    fail "[$mode] follow's pod does not run on $a: $(pod_phase "$pod") on [$(pod_node "$pod")] $(pod_scheduling "$pod")"
    k delete deployment follow --wait=true >/dev/null 2>&1 || true
    return 1
  fi
  pod=$(deployment_pod follow); uid=$(pod_uid "$pod"); claim=$(pod_claim "$pod")
  expect_eq "[$mode] follow's pod $pod runs on $a; its claim from the template (serial $FOLLOW_SERIAL) holds the stick on port 1-1" \
    usb-1-1-1-0 "$(claim_devices "$claim")"
  got=$(container_dev_nodes "$pod" | grep -E '^/dev/(ttyUSB|bus/usb/)' | paste -sd' ')
  expect_eq "[$mode] $pod's container has the stick's nodes in /dev" "/dev/bus/usb/001/003 c 189:2 /dev/ttyUSB0 c 188:0" "$got"
  if [ "$mode" = on ]; then
    echo "--- before: kubectl get pods -o wide -l app=follow"; k get pods -o wide -l app=follow
    echo "--- before: kubectl describe resourceslice $a-liken.sh (the stick)"
    describe_slice_device "$a" usb-1-1-1-0 || true
  fi
  tba=$(NODE=$a driver_testbed); tbb=$(NODE=$b driver_testbed)
  [ -n "$tba" ] && [ -n "$tbb" ] || { fail "[$mode] no umockdev testbed in the driver containers of $a [$tba] and $b [$tbb]"; return 1; }
  watch=$(mktemp "${TMPDIR:-/tmp}/liken-follow-watch.XXXXXX")
  slice_watch_start "$a" "$watch"
  sleep 1 # the watch lists the slice first
  t0=$EPOCHREALTIME
  NODE=$a testbed_unplug_usb "$tba" 1-1 || { fail "[$mode] could not unplug port 1-1 on $a"; ok=0; }
  [ $ok = 1 ] && { testbed_move_usb "$a" "$tba" 1-1 "$b" "$tbb" 1-2 || { fail "[$mode] could not plug the stick into port 1-2 of $b"; ok=0; }; }
  t_plug=$(seconds_since "$t0")
  if [ $ok = 1 ]; then
    if wait_until 60 node_serial_devices_are "$b" "$FOLLOW_SERIAL" usb-1-2-1-0; then
      pass "[$mode] plugged into $b ${t_plug} s after the unplug: $b publishes it as usb-1-2-1-0 (serial $FOLLOW_SERIAL, port 1-2) after $(seconds_since "$t0") s"
    else
      fail "[$mode] $b's devices with serial $FOLLOW_SERIAL: [$(node_serial_devices "$b" "$FOLLOW_SERIAL")]"
    fi
  fi
  if [ $ok = 1 ] && [ "$mode" = on ]; then
    if NODE=$a wait_until 8 slice_device_taints_are usb-1-1-1-0 "liken.sh/unplugged=device-gone:NoExecute"; then
      echo "--- while unplugged: kubectl describe resourceslice $a-liken.sh (the stick)"
      describe_slice_device "$a" usb-1-1-1-0 || true
    fi
    if wait_until 90 pod_gone "$pod"; then
      wait_until 30 pod_has_event "$pod" DeviceTaintManagerEviction || true
      t_gone=$(seconds_since "$t0" "$(pod_event_time "$pod" DeviceTaintManagerEviction)")
      expect_eq "[$mode] $pod evicted from $a by the device taint ($t_gone s after the unplug, its event says)" \
        "Marking for deletion" "$(pod_events "$pod" DeviceTaintManagerEviction)"
    else
      fail "[$mode] $pod after the unplug: $(k get pod "$pod" -o jsonpath='{.metadata.deletionTimestamp} {.status.phase} on {.spec.nodeName}' 2>&1)"
    fi
    if wait_until 120 deployment_running_on follow "$b"; then
      new=$(deployment_pod follow); claim=$(pod_claim "$new")
      t_run=$(seconds_since "$t0" "$(pod_started_time "$new")")
      expect_eq "[$mode] the replacement $new runs on $b; its new claim holds the stick there" usb-1-2-1-0 "$(claim_devices "$claim")"
      want=$(NODE=$b cdi_spec_nodes "$claim")
      got=$(comm -12 <(echo "$want") <(container_dev_nodes "$new"))
      expect_eq "[$mode] $new's container has the stick's nodes on $b in /dev" \
        "/dev/bus/usb/001/004 c 189:3|/dev/ttyUSB0 c 188:0" "$(echo "$got" | paste -sd'|')"
      echo "figure: unplug on $a to the replacement Running on $b: $t_run s (its container's start; plugged into $b at $t_plug s, the old pod marked for deletion at $t_gone s; the API server's times have whole seconds; the driver's periodic pass every 5 s)"
    else
      new=$(deployment_pod follow)
      fail "[$mode] no replacement running on $b: $new $(pod_phase "$new") on [$(pod_node "$new")] $(pod_scheduling "$new")"
    fi
    NODE=$a wait_until 60 slice_device_taints_are usb-1-1-1-0 absent &&
      pass "[$mode] once the old claim is unprepared, the stick leaves $a's slice" ||
      fail "[$mode] the stick in $a's slice after the eviction: [$(NODE=$a slice_device_taints usb-1-1-1-0)]"
    slice_watch_stop
    got=$(watched_taints "$watch" usb-1-1-1-0)
    case "$got" in
      "liken.sh/unplugged=device-gone:NoExecute@"*) pass "[$mode] meanwhile $a's slice listed the stick with the taint ($got)" ;;
      *) fail "[$mode] taints of usb-1-1-1-0 in $a's watched slice: [$got]" ;;
    esac
    echo "--- after: kubectl get pods -o wide -l app=follow"; k get pods -o wide -l app=follow
    echo "--- after: kubectl describe resourceslice $b-liken.sh (the stick)"
    describe_slice_device "$b" usb-1-2-1-0 || true
  elif [ $ok = 1 ]; then
    NODE=$a wait_until 60 slice_device_taints_are usb-1-1-1-0 absent &&
      pass "[$mode] the unplugged stick leaves $a's slice (the contract)" ||
      fail "[$mode] the stick in $a's slice after the unplug: [$(NODE=$a slice_device_taints usb-1-1-1-0)]"
    wait_until 90 pod_resource_health_is "$pod" claim:dev Unhealthy &&
      pass "[$mode] $pod's allocatedResourcesStatus shows claim:dev Unhealthy" ||
      fail "[$mode] claim:dev health after the unplug: [$(pod_resource_health "$pod" claim:dev)]"
    sleep 10 # two of the driver's periodic passes, and time for a controller that would evict
    pod_kept "$pod" "$uid" && [ "$(pod_node "$pod")" = "$a" ] && [ "$(deployment_pods follow)" = "$pod " ] &&
      pass "[$mode] $pod stays on $a, the same object and Running; no pod on $b" ||
      fail "[$mode] after the move: pods [$(deployment_pods follow)], $pod $(k get pod "$pod" -o jsonpath='{.metadata.uid} {.metadata.deletionTimestamp} {.status.phase} on {.spec.nodeName}' 2>&1)"
    slice_watch_stop
    expect_eq "[$mode] $a's slice never listed the stick with a taint, and no eviction event" "|" \
      "$(watched_taints "$watch" usb-1-1-1-0)|$(pod_events "$pod" DeviceTaintManagerEviction)"
  fi
  slice_watch_stop
  rm -f "$watch"
  # Put everything back: no pod, the stick on port 1-1 of A again.
  k delete deployment follow --wait=true >/dev/null 2>&1 || true
  wait_until 120 deployment_pods_gone follow || fail "[$mode] pods left: $(deployment_pods follow)"
  if [ $ok = 1 ]; then
    NODE=$b testbed_unplug_usb "$tbb" 1-2 && NODE=$b node_sh "rm -rf $tbb/unplugged" || fail "[$mode] could not unplug port 1-2 on $b"
    NODE=$a testbed_replug_usb "$tba" 1-1 || fail "[$mode] could not plug port 1-1 back on $a"
  fi
  NODE=$a wait_until 60 slice_device_taints_are usb-1-1-1-0 "" && wait_until 60 node_serial_devices_are "$b" "$FOLLOW_SERIAL" "" ||
    fail "[$mode] afterwards: $a's stick [$(NODE=$a slice_device_taints usb-1-1-1-0)], $b's [$(node_serial_devices "$b" "$FOLLOW_SERIAL")]"
}

# A pod follows its device, with taintUnpluggedDevices off (as installed: the contract) and on. $@: the command
# that upgrades the driver's release with the values it is given (e.g. upgrade_driver); the value is off again at
# the end.
multinode_scenario_follow_device() {
  local a b n start=$SECONDS t
  a=$(node_for laptop); b=$(node_for gpu-server)
  claim_template follow-stick serial.liken.sh "device.attributes[\"liken.sh\"].serial == \"$FOLLOW_SERIAL\""
  if [ "$(driver_args_taint)" != "0 of 4" ]; then
    "$@" >/dev/null 2>&1 || { fail "helm upgrade: $*"; return 1; }
  fi
  for n in "$a" "$b"; do NODE=$n wait_until 300 node_driver_settled || fail "driver on $n not settled"; done
  NODE=$a wait_until 120 slice_device_taints_are usb-1-1-1-0 "" || fail "$a does not publish the stick: [$(NODE=$a slice_device_taints usb-1-1-1-0)]"
  expect_eq "taintUnpluggedDevices off: no driver runs with --taint-unplugged-devices" "0 of 4" "$(driver_args_taint)"
  follow_phase off "$a" "$b"
  t=$SECONDS
  "$@" --set taintUnpluggedDevices=true >/dev/null 2>&1 || { fail "helm upgrade: $* --set taintUnpluggedDevices=true"; return 1; }
  for n in "$a" "$b"; do NODE=$n wait_until 120 node_driver_settled || fail "driver on $n not settled after the upgrade"; done
  NODE=$a wait_until 60 slice_device_taints_are usb-1-1-1-0 "" || true
  echo "--- helm upgrade --set taintUnpluggedDevices=true took $((SECONDS - t)) s"
  expect_eq "taintUnpluggedDevices=true: every driver runs with --taint-unplugged-devices" "4 of 4" "$(driver_args_taint)"
  follow_phase on "$a" "$b"
  t=$SECONDS
  "$@" >/dev/null 2>&1 || fail "helm upgrade: $* (taintUnpluggedDevices off again)"
  for n in "$a" "$b"; do NODE=$n wait_until 120 node_driver_settled || fail "driver on $n not settled after the upgrade"; done
  echo "--- helm upgrade back to taintUnpluggedDevices off took $((SECONDS - t)) s"
  k delete resourceclaimtemplate follow-stick --wait=false >/dev/null 2>&1 || true
  echo "--- the follow_device scenario took $((SECONDS - start)) s"
}

# --- a mixed cluster: squat/generic-device-plugin on one worker, liken-dra on another, one pod spec ---------------
# The real plugin (hack/gdp-image.sh builds it from its upstream tree) runs on the laptop worker, pinned there by the
# node label liken.sh/gdp-plugin, serving squat.ai/serial for /dev/ttyUSB0, a node made in that worker's /dev with
# the recording's numbers (188:0, the FTDI adapter liken publishes there too). The DeviceClass is what
# `liken-dra deviceclasses --from-generic-device-plugin` prints for the plugin's own manifest and both workers'
# reports. One DaemonSet whose pod spec is never edited (limits squat.ai/serial: 1) runs on the laptop and the
# usb-heavy worker (label liken.sh/gdp-workload).
GDP_NAMESPACE=kube-system
GDP_RESOURCE=squat.ai/serial
GDP_CLASS=serial.squat.ai
# gdp_manifest IMAGE: the plugin's DaemonSet, as its upstream manifest deploys it (privileged, the node's /dev and
# device-plugins directory), with one --device value.
gdp_manifest() {
  cat <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: generic-device-plugin, namespace: $GDP_NAMESPACE, labels: {app.kubernetes.io/name: generic-device-plugin}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: generic-device-plugin}}
  template:
    metadata: {labels: {app.kubernetes.io/name: generic-device-plugin}}
    spec:
      nodeSelector: {liken.sh/gdp-plugin: "on"}
      tolerations: [{operator: Exists, effect: NoExecute}, {operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 5
      containers:
      - name: generic-device-plugin
        image: $1
        imagePullPolicy: Never
        args:
        - --device
        - |
          name: serial
          groups:
            - paths:
                - path: /dev/ttyUSB*
        securityContext: {privileged: true}
        volumeMounts:
        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}
        - {name: dev, mountPath: /dev}
      volumes:
      - {name: device-plugin, hostPath: {path: /var/lib/kubelet/device-plugins}}
      - {name: dev, hostPath: {path: /dev}}
YAML
}
# The workload: one pod spec, written for the plugin, on every node labelled liken.sh/gdp-workload.
gdp_workload_manifest() {
  cat <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gdp-workload, namespace: default}
spec:
  selector: {matchLabels: {app: gdp-workload}}
  template:
    metadata: {labels: {app: gdp-workload}}
    spec:
      nodeSelector: {liken.sh/gdp-workload: "on"}
      terminationGracePeriodSeconds: 1
      enableServiceLinks: false
      containers:
      - name: c
        image: $WORKLOAD_IMAGE
        imagePullPolicy: $PULL_POLICY
        command: [sleep, "86400"]
        resources:
          limits: {$GDP_RESOURCE: 1}
YAML
}
# gdp_workload_pod NODE: the workload's pod on NODE that is not being deleted (empty if none).
gdp_workload_pod() {
  k get pods -l app=gdp-workload -o json | jq -r --arg n "$1" \
    '[.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null)][0].metadata.name // empty'
}
gdp_workload_running_on() { local p; p=$(gdp_workload_pod "$1") && [ -n "$p" ] && pod_running "$p"; }
gdp_plugin_pod() { k -n "$GDP_NAMESPACE" get pods -l app.kubernetes.io/name=generic-device-plugin -o jsonpath='{.items[0].metadata.name}'; }
gdp_plugin_gone() { [ -z "$(gdp_plugin_pod)" ]; }
# node_resource NODE capacity|allocatable: the node's figure for GDP_RESOURCE ("absent" when the name is not listed).
node_resource() { k get node "$1" -o json | jq -r --arg r "$GDP_RESOURCE" --arg f "$2" '.status[$f][$r] // "absent"'; }
node_resource_is() { [ "$(node_resource "$1" "$2")" = "$3" ]; }
node_resource_unserved() { case "$(node_resource "$1" allocatable)" in 0 | absent) return 0 ;; *) return 1 ;; esac; }
# pod_spec_summary POD: what POD's spec, as the API server holds it, asks of a node: each container's image, command
# and resources, and the pod's resourceClaims (a claim the scheduler makes for an extended resource goes into the
# status, never the spec).
pod_spec_summary() {
  k get pod "$1" -o json | jq -c '{containers: [.spec.containers[] | {image, command, resources}], resourceClaims: (.spec.resourceClaims // [])}'
}
# pod_asks POD: "LIMIT CLAIMS": the first container's limit for GDP_RESOURCE ("none" without) and the number of
# resourceClaims in the spec.
pod_asks() { k get pod "$1" -o json | jq -r --arg r "$GDP_RESOURCE" '"\(.spec.containers[0].resources.limits[$r] // "none") \(.spec.resourceClaims // [] | length)"'; }
# node_pools NODE: the pools of liken.sh's slices on NODE; claim_pools CLAIM: the pools its allocation took devices from.
node_pools() { k get resourceslices -o json | jq -r --arg n "$1" '[.items[] | select(.spec.nodeName == $n and .spec.driver == "liken.sh") | .spec.pool.name] | unique | join(" ")'; }
claim_pools() { k get resourceclaim "$1" -o json | jq -r '[.status.allocation.devices.results[]? | "\(.driver)/\(.pool)"] | unique | join(" ")'; }
# new_dev_nodes BASE POD: the device nodes in POD's container on top of the claim-less pod BASE's.
new_dev_nodes() { comm -13 <(container_dev_nodes "$1") <(container_dev_nodes "$2"); }
# The scheduler's claims of this scenario's pods (named after them), for the wait until they are collected.
gdp_claims_gone() { [ "$(k get resourceclaims -o json | jq '[.items[] | select(.metadata.name | startswith("gdp-"))] | length')" = 0 ]; }
gdp_cleanup() { # NODES...
  local n
  k delete daemonset gdp-workload --wait=false >/dev/null 2>&1 || true
  k -n "$GDP_NAMESPACE" delete daemonset generic-device-plugin --wait=false >/dev/null 2>&1 || true
  delete_pods gdp-base gdp-probe
  k delete pods -l app=gdp-workload --wait=true --timeout=60s >/dev/null 2>&1 || true
  wait_until 60 gdp_claims_gone || fail "claims of the mixed-cluster pods remain: $(k get resourceclaims -o name | grep gdp- | paste -sd' ')"
  k delete deviceclass "$GDP_CLASS" >/dev/null 2>&1 || true
  for n in "$@"; do k label node "$n" liken.sh/gdp-plugin- liken.sh/gdp-workload- >/dev/null 2>&1 || true; done
}

# multinode_scenario_gdp_mixed IMAGE LOAD: IMAGE is the plugin's image reference; LOAD NODE is a command that makes
# it available on NODE. The same pod spec gets its device through the plugin on the laptop worker and through a DRA
# claim on the usb-heavy worker; a second pod asking for the name on the laptop shows which way the scheduler serves
# it there; then the laptop is migrated (plugin off, allocatable to 0, the pod deleted and created again, unedited)
# and its pod gets the adapter through a claim.
multinode_scenario_gdp_mixed() {
  local image=$1 load=$2 bin=${LIKEN_DRA:-$REPO/build/liken-dra} start=$SECONDS laptop heavy NODE tmp out p q claim
  local got want t0 made=0 alloc cap spec_before=""
  laptop=$(node_for laptop); heavy=$(node_for usb-heavy)
  gdp_cleanup "$laptop" "$heavy"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/liken-gdp.XXXXXX")
  # The classes from the plugin's manifest and each worker's report (as docs/migrate.md says: one run for all nodes).
  gdp_manifest "$image" >"$tmp/gdp.yaml"
  mkdir "$tmp/dev"
  for p in laptop:"$laptop" usb-heavy:"$heavy"; do
    TMPDIR=/dev/shm umockdev-run -d "$REPO/test/machines/${p%%:*}.umockdev" -- "$bin" report -o json --dev-root "$tmp/dev" \
      >"$tmp/${p#*:}.json" 2>"$tmp/report.err" || { fail "liken-dra report on ${p%%:*}: $(tail -n 2 "$tmp/report.err" | paste -sd'|')"; rm -rf "$tmp"; return 1; }
  done
  if ! out=$("$bin" deviceclasses --from-generic-device-plugin "$tmp/gdp.yaml" --report "$laptop=$tmp/$laptop.json" \
    --report "$heavy=$tmp/$heavy.json" 2>&1); then
    fail "liken-dra deviceclasses: $(echo "$out" | tail -n 3 | paste -sd'|')"; rm -rf "$tmp"; return 1
  fi
  echo "$out" | grep '^#' | grep -v '^#   .*: moves to usb-\|also delivers' | sed 's/^/    /'
  echo "$out" >"$tmp/classes.yaml"
  expect_eq "the command prints one class, $GDP_CLASS, for $GDP_RESOURCE" "$GDP_CLASS $GDP_RESOURCE" \
    "$(k apply --dry-run=client -f "$tmp/classes.yaml" -o json | jq -r 'if .kind == "List" then .items[] else . end | "\(.metadata.name) \(.spec.extendedResourceName)"' | paste -sd'|')"
  k apply -f "$tmp/classes.yaml" >/dev/null || { fail "kubectl apply of the printed classes"; rm -rf "$tmp"; return 1; }

  # The plugin on the laptop worker, for a node in that worker's /dev.
  NODE=$laptop
  node_sh '[ -e /dev/ttyUSB0 ]' || { node_sh 'mknod -m 0660 /dev/ttyUSB0 c 188 0' && made=1; }
  "$load" "$laptop" >/dev/null || { fail "could not load $image on $laptop"; rm -rf "$tmp"; return 1; }
  k label node "$laptop" liken.sh/gdp-plugin=on --overwrite >/dev/null
  k apply -f "$tmp/gdp.yaml" >/dev/null
  if wait_until 120 node_resource_is "$laptop" allocatable 1; then
    pass "the plugin ($image) runs on $laptop only: $GDP_RESOURCE allocatable 1 there, $(node_resource "$heavy" allocatable) on $heavy"
  else
    fail "plugin on $laptop: allocatable $(node_resource "$laptop" allocatable), pod $(gdp_plugin_pod) $(k -n "$GDP_NAMESPACE" logs "$(gdp_plugin_pod)" --tail=5 2>&1 | paste -sd'|')"
  fi
  # The usb-heavy worker has no plugin: its Node object lists no such resource, so the scheduler can only serve the
  # name there through liken-dra's DeviceClass.
  expect_eq "$heavy's Node lists no $GDP_RESOURCE (capacity, allocatable): no plugin serves it there" "absent absent" \
    "$(node_resource "$heavy" capacity) $(node_resource "$heavy" allocatable)"

  # One pod spec on both workers; a claim-less pod for the runtime's own /dev.
  workload_pod gdp-base
  k label node "$laptop" "$heavy" liken.sh/gdp-workload=on --overwrite >/dev/null
  gdp_workload_manifest | k apply -f - >/dev/null
  for n in "$laptop" "$heavy"; do
    wait_until 120 gdp_workload_running_on "$n" ||
      fail "the workload's pod on $n: $(gdp_workload_pod "$n") $(pod_phase "$(gdp_workload_pod "$n")") $(pod_scheduling "$(gdp_workload_pod "$n")")"
  done
  wait_until 60 pod_running gdp-base || fail "gdp-base $(pod_phase gdp-base)"
  p=$(gdp_workload_pod "$laptop")
  expect_eq "$p on $laptop: no claim, /dev/ttyUSB0 (188:0) from the plugin on top of the runtime's nodes" \
    "|/dev/ttyUSB0 c 188:0" "$(pod_extended_claim "$p")|$(new_dev_nodes gdp-base "$p")"
  q=$(gdp_workload_pod "$heavy")
  claim=$(pod_extended_claim "$q")
  if [ -n "$claim" ]; then
    NODE=$heavy want=$(cdi_spec_nodes "$claim")
    got=$(new_dev_nodes gdp-base "$q")
    [ -n "$want" ] && [ "$got" = "$want" ] &&
      pass "$q on $heavy: the scheduler's claim $claim ($(claim_devices "$claim")); /dev holds its nodes: $(echo "$got" | paste -sd' ' )" ||
      fail "$q on $heavy: claim $claim, CDI spec [$(echo "$want" | paste -sd'|')], /dev [$(echo "$got" | paste -sd'|')]"
  else
    fail "$q on $heavy: no status.extendedResourceClaimStatus; /dev [$(new_dev_nodes gdp-base "$q" | paste -sd'|')]"
  fi
  # One pod spec, served two ways: both pods, as the API server holds them, ask limits {squat.ai/serial: 1} and name
  # no claim; only the usb-heavy pod's status names the scheduler's claim, which took its device from that worker's
  # pool.
  expect_eq "both pods' specs ask $GDP_RESOURCE 1 and no resourceClaims, and are the same spec" "1 0|1 0|same" \
    "$(pod_asks "$p")|$(pod_asks "$q")|$([ "$(pod_spec_summary "$p")" = "$(pod_spec_summary "$q")" ] && echo same || echo "differ: $(pod_spec_summary "$p") vs $(pod_spec_summary "$q")")"
  [ -z "$claim" ] || expect_eq "the claim of $q on $heavy took its device from $heavy's pool" "liken.sh/$(node_pools "$heavy")" \
    "$(claim_pools "$claim")"
  spec_before=$(pod_spec_summary "$p")

  # Served both ways: on the laptop the plugin's allocatable decides, even with liken's adapter free there.
  NODE=$laptop
  workload_pod gdp-probe limits "$GDP_RESOURCE"
  wait_until 60 pod_scheduling_decided gdp-probe || true
  if [ "$(pod_phase gdp-probe)" = Pending ] && pod_scheduling gdp-probe | grep -q "Insufficient $GDP_RESOURCE"; then
    pass "a second pod for $GDP_RESOURCE on $laptop stays Pending, no claim made, though liken's adapter there is free: $(pod_scheduling gdp-probe)"
  else
    fail "gdp-probe on $laptop: $(pod_phase gdp-probe) claim [$(pod_extended_claim gdp-probe)] $(pod_scheduling gdp-probe)"
  fi

  # Migrate the laptop: the plugin off (its node label removed), allocatable to 0, then the pod created again.
  k label node "$laptop" liken.sh/gdp-plugin- >/dev/null
  wait_until 60 gdp_plugin_gone || fail "the plugin's pod is still there: $(gdp_plugin_pod)"
  t0=$SECONDS
  if wait_until 120 node_resource_unserved "$laptop"; then
    pass "plugin gone from $laptop: $GDP_RESOURCE allocatable $(node_resource "$laptop" allocatable) after $((SECONDS - t0)) s (capacity $(node_resource "$laptop" capacity))"
  else
    fail "$laptop after the plugin left: allocatable $(node_resource "$laptop" allocatable), capacity $(node_resource "$laptop" capacity)"
  fi
  # The Pending probe is scheduled as soon as allocatable is 0: through a claim, on the adapter whose node the old pod
  # still holds through the plugin (the FTDI is the laptop's only adapter). The guide (docs/migrate.md) says so.
  if wait_until 60 pod_running gdp-probe; then
    claim=$(pod_extended_claim gdp-probe)
    expect_eq "in the window, gdp-probe runs $((SECONDS - t0)) s after the plugin left, through claim [$claim] on the adapter $p still holds through the plugin" \
      "usb-1-1-1-0 Running /dev/ttyUSB0 c 188:0" "$(claim_devices "$claim") $(pod_phase "$p") $(new_dev_nodes gdp-base "$p")"
  else
    fail "gdp-probe $(pod_phase gdp-probe) $((SECONDS - t0)) s after the plugin left: $(pod_scheduling gdp-probe)"
  fi
  delete_pods gdp-probe
  expect_eq "gdp-probe deleted; $p still Running on $laptop with the plugin's /dev/ttyUSB0" "Running /dev/ttyUSB0 c 188:0" \
    "$(pod_phase "$p") $(new_dev_nodes gdp-base "$p")"
  k delete pod "$p" --wait=true --timeout=60s >/dev/null 2>&1 || true
  if wait_until 120 gdp_workload_running_on "$laptop"; then
    q=$(gdp_workload_pod "$laptop")
    claim=$(pod_extended_claim "$q")
    want=$(cdi_spec_nodes "$claim" 2>/dev/null || true)
    got=$(new_dev_nodes gdp-base "$q")
    [ -n "$claim" ] && [ -n "$want" ] && [ "$got" = "$want" ] &&
      pass "$p deleted; $q, from the same template (revision $(k get pod "$q" -o jsonpath='{.metadata.labels.controller-revision-hash}')), runs on $laptop through claim $claim ($(claim_devices "$claim")): $(echo "$got" | paste -sd' ')" ||
      fail "$q on $laptop: claim [$claim], CDI spec [$(echo "$want" | paste -sd'|')], /dev [$(echo "$got" | paste -sd'|')]"
  else
    q=$(gdp_workload_pod "$laptop"); fail "after migration, the workload's pod on $laptop: $q $(pod_phase "$q") $(pod_scheduling "$q")"
  fi
  # The migrated pod asks what the plugin's pod asked, unedited: the same spec, now served through a claim.
  q=$(gdp_workload_pod "$laptop")
  expect_eq "after migration, $q's spec is the plugin-era pod's spec, unedited ($spec_before)" "$spec_before" \
    "$([ -n "$q" ] && pod_spec_summary "$q")"

  gdp_cleanup "$laptop" "$heavy"
  [ "$made" = 1 ] && node_sh 'rm -f /dev/ttyUSB0'
  rm -rf "$tmp"
  echo "--- the mixed-cluster scenario took $((SECONDS - start)) s"
}
