# Check functions shared by the scenario scripts: test/e2e/scenarios.sh (the Go test kubelet), test/node/scenarios.sh
# (a real kubelet and containerd on this machine) and hack/e2e-kind.sh (kind). Sourced, never run.
#
# The caller defines:
#   k          a function running kubectl against the cluster
#   node_sh    a function running a shell command (one string) on the node's host, as root   (real-kubelet checks)
# and sets, where the checks it uses need them:
#   NODE            the node under test              WORKLOAD_IMAGE   image with a POSIX shell (busybox)
#   CDI_DIR         the node's CDI spec directory    PULL_POLICY      imagePullPolicy of workload pods (Never)
#   CLAIMS_DIR      the driver's checkpoint directory (<kubelet-root>/plugins/liken.sh/claims)
#   DRIVER_NS, DRIVER_SELECTOR   the driver's namespace and pod label selector
#
# Every check prints one line: "ok   WHAT" or "FAIL WHAT: what was seen". CHECKS and FAILURES count them.

CHECKS=${CHECKS:-0}
FAILURES=${FAILURES:-0}
PULL_POLICY=${PULL_POLICY:-Never}

pass() { CHECKS=$((CHECKS + 1)); echo "ok   $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILURES=$((FAILURES + 1)); echo "FAIL $*"; }
# expect_eq WHAT WANT GOT: passes when GOT equals WANT; the failure shows both (multi-line values indented).
expect_eq() {
  if [ "$2" = "$3" ]; then
    pass "$1"
  else
    fail "$1: want [$(echo "$2" | paste -sd'|')] got [$(echo "$3" | paste -sd'|')]"
  fi
}
# summary NAME: prints the counts; false when a check failed.
summary() {
  echo "$1: $CHECKS checks, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
}

# wait_until SECONDS COMMAND...: polls every 0.2 s until COMMAND succeeds; false on timeout.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# --- slices -------------------------------------------------------------------------------------------------------

slice_json() { k get resourceslice "$1-liken.sh" -o json; }
slice_has_device() { slice_json "$1" | jq -e --arg d "$2" '.spec.devices | any(.name == $d)'; }
slice_lacks_device() { slice_json "$1" | jq -e --arg d "$2" '.spec.devices | all(.name != $d)'; }
slice_device_count() { slice_json "$1" | jq '.spec.devices | length'; }
slice_count() { k get resourceslices -o json | jq --arg n "$1" '[.items[] | select(.spec.nodeName == $n)] | length'; }
generation() { slice_json "$1" | jq '.spec.pool.generation'; }

# --- device classes, claims, pods ---------------------------------------------------------------------------------

apply_device_classes() {
  k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-render.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh" && device.attributes["liken.sh"].renderNode'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-display.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh" && device.attributes["liken.sh"].displayNode'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: serial.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh" && has(device.attributes["liken.sh"].subsystem) && device.attributes["liken.sh"].subsystem == "tty"'}
YAML
}

# claim NAME CLASS [CEL [COUNT]]: a one-request ResourceClaim in namespace default; CEL adds a selector to the
# class's, COUNT asks for that many devices (default 1).
claim() {
  local selector=""
  [ -n "${3:-}" ] && selector=", selectors: [{cel: {expression: '$3'}}]"
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: default}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: $2, count: ${4:-1}$selector}
YAML
}

# claim_template NAME CLASS: a one-request ResourceClaimTemplate in namespace default.
claim_template() { # NAME CLASS [CEL]: CEL adds a selector to the class's
  local selector=""
  [ -n "${3:-}" ] && selector=", selectors: [{cel: {expression: '$3'}}]"
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly: {deviceClassName: $2$selector}
YAML
}

claim_uid() { k get resourceclaim "$1" -o jsonpath='{.metadata.uid}'; }
claim_devices() { k get resourceclaim "$1" -o json | jq -r '[.status.allocation.devices.results[]?.device] | join(" ")'; }
claim_allocated() { k get resourceclaim "$1" -o json | jq -e '.status.allocation != null'; }
claim_gone() { ! k get resourceclaim "$1" >/dev/null 2>&1; }

# workload_pod NAME [direct CLAIM | template TEMPLATE | limits RESOURCE]: a pod on $NODE running `sleep` in
# $WORKLOAD_IMAGE, with one claim (by name or from a template) given to its container, one of an extended resource
# in its limits (DRAExtendedResource: the scheduler makes the claim), or none.
workload_pod() { workload_pod_yaml "$@" | k apply -f - >/dev/null; }
# workload_pod_yaml: the same pod's manifest on stdout.
workload_pod_yaml() {
  local name=$1 kind=${2:-none} ref=${3:-} claims="" source=""
  case "$kind" in
    direct) source="resourceClaimName: $ref" ;;
    template) source="resourceClaimTemplateName: $ref" ;;
    limits) claims="
    resources:
      limits: {$ref: 1}" ;;
  esac
  if [ -n "$source" ]; then
    claims="
    resources:
      claims: [{name: dev}]
  resourceClaims:
  - name: dev
    $source"
  fi
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {app: liken-workload}}
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  terminationGracePeriodSeconds: 1
  enableServiceLinks: false
  containers:
  - name: c
    image: $WORKLOAD_IMAGE
    imagePullPolicy: $PULL_POLICY
    command: [sleep, "86400"]$claims
YAML
}

pod_phase() { k get pod "$1" -o jsonpath='{.status.phase}'; }
pod_running() { [ "$(pod_phase "$1")" = Running ]; }
pod_gone() { ! k get pod "$1" >/dev/null 2>&1; }
# The ResourceClaim a pod's claim `dev` resolved to (a template's generated claim, or the named one), else the
# scheduler's claim for its extended resources.
# (status.resourceClaimStatuses lists only claims made from templates).
pod_claim() {
  local c
  c=$(k get pod "$1" -o jsonpath='{.spec.resourceClaims[?(@.name=="dev")].resourceClaimName}')
  [ -n "$c" ] || c=$(k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="dev")].resourceClaimName}')
  # A pod written for a device plugin: the claim the scheduler made for its extended resources.
  [ -n "$c" ] || c=$(k get pod "$1" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
  echo "$c"
}
pod_container_id() { k get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}' | sed 's|^.*://||'; }
pod_pending_unschedulable() { [ "$(pod_phase "$1")" = Pending ] && pod_scheduling "$1" | grep -q Unschedulable; }
pod_scheduling() { # reason and message of PodScheduled=False
  k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}: {.status.conditions[?(@.type=="PodScheduled")].message}'
}
delete_pods() { k delete pod "$@" --wait=true --timeout=120s >/dev/null 2>&1 || true; }

# --- inside containers and on the node ----------------------------------------------------------------------------

# The device nodes inside a pod's container, one "PATH TYPE MAJOR:MINOR" line each, sorted.
container_dev_nodes() { # POD [CONTAINER]
  k exec "$1" ${2:+-c "$2"} -- sh -c 'find /dev \( -type c -o -type b \) -exec stat -c "%n %t %T %F" {} +' 2>/dev/null |
    while read -r path maj min kind; do
      case "$kind" in character*) kind=c ;; block*) kind=b ;; *) kind="?" ;; esac
      echo "$path $kind $((16#$maj)):$((16#$min))"
    done | sort
}

# The nodes the driver's CDI spec for claim $1 names, in the same form.
cdi_spec_file() { echo "$CDI_DIR/liken.sh-$(claim_uid "$1").json"; }
cdi_spec_nodes() {
  node_sh "cat '$(cdi_spec_file "$1")'" |
    jq -r '.devices[].containerEdits.deviceNodes[]? | "\(.path) \(.type // "c") \(.major):\(.minor)"' | sort
}
cdi_node_paths() { cdi_spec_nodes "$1" | awk '{ print $1 }' | paste -sd' '; }
node_file_exists() { node_sh "[ -e '$1' ]"; }

# The device-cgroup (v1) allow list of a pod's container, sorted; empty on cgroup v2. The directory is the container
# ID (cgroupfs driver) or cri-containerd-<ID>.scope (systemd driver, as on kind's nodes).
container_device_rules() {
  local id
  id=$(pod_container_id "$1")
  node_sh "d=\$(find /sys/fs/cgroup/devices/ -type d -name '*$id*' 2>/dev/null | head -n 1); [ -n \"\$d\" ] && cat \"\$d/devices.list\"" | sort
}
cgroup_v1_devices() { node_sh '[ -d /sys/fs/cgroup/devices ]'; }

# --- the driver ---------------------------------------------------------------------------------------------------

driver_pod() { k -n "$DRIVER_NS" get pods -l "$DRIVER_SELECTOR" --field-selector "spec.nodeName=$NODE,status.phase=Running" -o jsonpath='{.items[0].metadata.name}'; }
driver_pods() { k -n "$DRIVER_NS" get pods -l "$DRIVER_SELECTOR" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}'; }
pod_ready_in() { [ "$(k -n "$1" get pod "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
driver_ready() { local p; p=$(driver_pod) && [ -n "$p" ] && pod_ready_in "$DRIVER_NS" "$p"; }
# driver_metrics: the running driver pod's metrics, scraped on the node through the pod's IP and metrics port.
driver_metrics() {
  local p ip port
  p=$(driver_pod) || return 1
  ip=$(k -n "$DRIVER_NS" get pod "$p" -o jsonpath='{.status.podIP}')
  # The pod declares no port (a surge pod would clash on the host's port): read it from --metrics-address.
  port=$(k -n "$DRIVER_NS" get pod "$p" -o jsonpath='{.spec.containers[0].args}' | grep -o -- '--metrics-address=[^",]*' |
    sed 's/.*://')
  node_sh "curl -sf --max-time 5 http://$ip:$port/metrics"
}
# driver_metric SERIES: one series' value as an integer (e.g. 'liken_prepare_total{result="success"}').
driver_metric() { driver_metrics | awk -v s="$1" '$1 == s { printf "%d\n", $2 }'; }
# driver_metric_is SERIES VALUE: the series answers with VALUE (a new pod binds its metrics port after it is Ready).
driver_metric_is() { [ "$(driver_metric "$1")" = "$2" ]; }

# --- scenarios that need a real kubelet and container runtime -----------------------------------------------------

# The DaemonSet's pod is Ready (its probes pass), the node's slice is published with $1 devices, and the metrics
# scrape through the pod's metrics port.
check_driver_ready() {
  local want=$1 p ip port m
  if wait_until 180 driver_ready; then
    p=$(driver_pod)
    pass "driver pod $p is Ready on $NODE ($(k -n "$DRIVER_NS" get pod "$p" -o jsonpath='{.spec.containers[0].livenessProbe.exec.command[1]}') probe)"
  else
    fail "driver pod not Ready on $NODE: $(k -n "$DRIVER_NS" get pods -l "$DRIVER_SELECTOR" -o wide 2>&1 | tail -n +2 | paste -sd'|')"
    k -n "$DRIVER_NS" describe pods -l "$DRIVER_SELECTOR" 2>&1 | tail -n 25
    return 1
  fi
  if wait_until 60 slice_has_device "$NODE" "${SLICE_PROBE_DEVICE:-pci-0000-00-02-0}"; then
    expect_eq "slice $NODE-liken.sh published with the recording's devices" "$want" "$(slice_device_count "$NODE")"
  else
    fail "no slice $NODE-liken.sh: $(k get resourceslices 2>&1 | paste -sd'|')"
  fi
  ip=$(k -n "$DRIVER_NS" get pod "$p" -o jsonpath='{.status.podIP}')
  # The pod declares no port (a surge pod would clash on the host's port): read it from --metrics-address.
  port=$(k -n "$DRIVER_NS" get pod "$p" -o jsonpath='{.spec.containers[0].args}' | grep -o -- '--metrics-address=[^",]*' |
    sed 's/.*://')
  m=$(node_sh "curl -sf --max-time 5 http://$ip:$port/metrics" || true)
  if grep -q '^liken_kubelet_registered 1' <<<"$m" && grep -q "^liken_published_devices $want" <<<"$m"; then
    pass "metrics scrape through the pod's port $ip:$port: registered with the kubelet, $want devices published"
  else
    fail "metrics at $ip:$port: $(grep -E '^liken_(kubelet_registered|published_devices)' <<<"$m" | paste -sd' ' || echo none)"
  fi
}

# A pod with claim $2 (already Running) against a claim-less baseline pod $1: /dev holds exactly the CDI spec's
# nodes on top of the baseline's; the device cgroup allows exactly those on top of the baseline's; a node of a
# device the claim did not get ($3, "c MAJOR MINOR") cannot be made and opened; a delivered node is not refused.
check_container_devices() {
  local base=$1 pod=$2 other=$3 claim want got rules_base rules extra path maj min out
  claim=$(pod_claim "$pod")
  want=$(cdi_spec_nodes "$claim")
  [ -n "$want" ] || { fail "$pod: no CDI spec for claim $claim at $(cdi_spec_file "$claim")"; return 1; }
  got=$(comm -13 <(container_dev_nodes "$base") <(container_dev_nodes "$pod"))
  expect_eq "$pod ($claim): /dev holds exactly the claim's nodes on top of the runtime's" "$want" "$got"
  if cgroup_v1_devices; then
    rules_base=$(container_device_rules "$base")
    rules=$(container_device_rules "$pod")
    if [ -z "$rules" ] || [ -z "$rules_base" ]; then
      fail "$pod: no device cgroup found for its container"
    else
      extra=$(comm -13 <(echo "$rules_base") <(echo "$rules"))
      # Nodes the runtime allows anyway (/dev/null is 1:3) add no rule of their own.
      expect_eq "$pod: the device cgroup allows exactly the claim's nodes on top of the runtime's" \
        "$(echo "$want" | awk '{ print $2 " " $3 " rwm" }' | sort | grep -vxFf <(echo "$rules_base") || true)" "$extra"
    fi
  else
    echo "skip $pod: device cgroup check (no cgroup v1 devices controller on the node)"
  fi
  read -r _ maj min <<<"$other"
  out=$(k exec "$pod" -- sh -c "mknod /tmp/other c $maj $min && head -c 1 /tmp/other >/dev/null; echo rc=\$?" 2>&1 || true)
  case "$out" in
    *"Operation not permitted"* | *"Permission denied"*) pass "$pod: a node of a device it did not get ($maj:$min) cannot be made and opened" ;;
    *) fail "$pod: made and opened $maj:$min: $(echo "$out" | paste -sd' ')" ;;
  esac
  path=$(echo "$want" | head -n 1 | awk '{ print $1 }')
  out=$(k exec "$pod" -- sh -c "head -c 1 $path >/dev/null; echo rc=\$?" 2>&1 || true)
  case "$out" in
    *"Operation not permitted"*) fail "$pod: the device cgroup refuses its own node $path: $(echo "$out" | paste -sd' ')" ;;
    *) pass "$pod: its own node $path passes the device cgroup ($(echo "$out" | tr '\n' ' ' | sed 's/ *$//'))" ;;
  esac
}
