# Scenarios that need a real kubelet and container runtime, shared by test/node/scenarios.sh (this machine) and
# hack/e2e-kind.sh (kind). Sourced after test/lib/checks.sh, never run. The driver runs on the laptop recording
# (test/machines/laptop.umockdev): its iGPU's render half is /dev/dri/renderD128 (226:128), its display half
# /dev/dri/card0 (226:0). See test/lib/checks.sh for what the caller defines. Where the release lacks a feature
# (hack/lib/k8s-release.sh, K8S_VERSION), a scenario checks the documented degraded behaviour instead.
# shellcheck source=../../hack/lib/k8s-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib/k8s-release.sh"

# The DaemonSet's pod is Ready, the slice holds $1 devices, metrics scrape through the pod's port.
node_scenario_driver_ready() { check_driver_ready "$1"; }


# render_claim_beside NAME HOLDER: the claim a pod names when it needs a render half while HOLDER's claim holds the
# laptop's only one: NAME, a render claim of its own, where the release shares render halves; where it does not
# (DRAConsumableCapacity off), HOLDER itself, as the documented way to share there is one claim named by every pod.
render_claim_beside() {
  if k8s_serves render-sharing; then claim "$1" gpu-render.liken.sh; echo "$1"; else echo "$2"; fi
}
node_scenario_claims_in_containers() {
  # The template's claim takes the render half too where the release shares it, else the display half.
  local template_class=gpu-render.liken.sh template_other="c 226 0"
  k8s_serves render-sharing || { template_class=gpu-display.liken.sh; template_other="c 226 128"; }
  claim render-direct gpu-render.liken.sh
  claim_template render-template "$template_class"
  workload_pod baseline
  workload_pod with-direct direct render-direct
  workload_pod with-template template render-template
  local p
  for p in baseline with-direct with-template; do
    if wait_until 120 pod_running "$p"; then
      pass "pod $p Running$( [ "$p" = baseline ] || echo " with claim $(pod_claim "$p") ($(claim_devices "$(pod_claim "$p")"))")"
    else
      fail "pod $p is $(pod_phase "$p"): $(k get pod "$p" -o jsonpath='{.status.conditions}' | head -c 600)"
      return 1
    fi
  done
  [ "$(k get resourceclaim -o json | jq -r --arg p with-template \
    '.items[] | select(.metadata.ownerReferences[]?.name == $p) | .metadata.name')" = "$(pod_claim with-template)" ] &&
    pass "the template's claim was generated for its pod" || fail "no claim owned by pod with-template"
  # The laptop's iGPU: the render half is 226:128, the display half (not claimed) 226:0.
  check_container_devices baseline with-direct "c 226 0"
  check_container_devices baseline with-template "$template_other"
  expect_eq "the direct claim's CDI spec names the render node" "/dev/dri/renderD128 c 226:128" "$(cdi_spec_nodes render-direct)"
}

# Deleting a pod makes the kubelet call NodeUnprepareResources: the driver counts the call, and the claim's CDI spec
# and checkpoint record are gone.
node_scenario_unprepare_on_delete() {
  local claim uid spec before after
  claim=$(pod_claim with-direct)
  uid=$(claim_uid "$claim")
  spec=$(cdi_spec_file "$claim")
  node_file_exists "$spec" && node_file_exists "$CLAIMS_DIR/$uid.json" &&
    pass "prepared claim $claim has a CDI spec and a checkpoint record" ||
    { fail "prepared claim $claim: spec $(node_file_exists "$spec" && echo present || echo missing), record $(node_file_exists "$CLAIMS_DIR/$uid.json" && echo present || echo missing)"; return 1; }
  before=$(driver_metric 'liken_unprepare_total{result="success"}')
  k delete pod with-direct --wait=false >/dev/null
  if wait_until 60 node_sh "[ ! -e '$spec' ] && [ ! -e '$CLAIMS_DIR/$uid.json' ]"; then
    pass "deleting the pod makes the kubelet unprepare: CDI spec and checkpoint record of $claim are gone"
  else
    fail "after deleting with-direct: spec $(node_file_exists "$spec" && echo remains || echo gone), record $(node_file_exists "$CLAIMS_DIR/$uid.json" && echo remains || echo gone)"
  fi
  after=$(driver_metric 'liken_unprepare_total{result="success"}')
  [ "${after:-0}" -gt "${before:-0}" ] 2>/dev/null &&
    pass "the driver answered NodeUnprepareResources (liken_unprepare_total success $before -> $after)" ||
    fail "no NodeUnprepareResources call counted (liken_unprepare_total success $before -> $after)"
  k delete pod with-template --wait=false >/dev/null
}

node_scenario_render_shared_display_exclusive() {
  claim render-a gpu-render.liken.sh; claim render-b gpu-render.liken.sh
  workload_pod share-a direct render-a; workload_pod share-b direct render-b
  if ! k8s_serves render-sharing; then
    # allowMultipleAllocations dropped: the render half is exclusive; pods share it by naming one claim.
    workload_pod share-a2 direct render-a
    if wait_until 120 pod_running share-a && wait_until 120 pod_running share-a2; then
      expect_eq "release $(k8s_minor): two pods naming one claim share the render node" \
        "/dev/dri/renderD128 c 226:128|/dev/dri/renderD128 c 226:128" \
        "$(container_dev_nodes share-a | grep dri | paste -sd'|')|$(container_dev_nodes share-a2 | grep dri | paste -sd'|')"
    else
      fail "render pods on one claim: share-a $(pod_phase share-a), share-a2 $(pod_phase share-a2)"
    fi
    wait_until 30 pod_scheduling_decided share-b || true
    [ "$(pod_phase share-b)" = Pending ] && grep -q Unschedulable <<<"$(pod_scheduling share-b)" &&
      pass "release $(k8s_minor): a second render claim stays Pending (exclusive render half, documented)" ||
      fail "share-b on $(k8s_minor): phase $(pod_phase share-b), scheduling [$(pod_scheduling share-b)]"
    delete_pods share-b
  elif wait_until 120 pod_running share-a && wait_until 120 pod_running share-b; then
    expect_eq "two running pods share the render node" "pci-0000-00-02-0 pci-0000-00-02-0" \
      "$(claim_devices render-a) $(claim_devices render-b)"
    expect_eq "both containers hold /dev/dri/renderD128" "/dev/dri/renderD128 c 226:128|/dev/dri/renderD128 c 226:128" \
      "$(container_dev_nodes share-a | grep dri | paste -sd'|')|$(container_dev_nodes share-b | grep dri | paste -sd'|')"
  else
    fail "render pods: share-a $(pod_phase share-a), share-b $(pod_phase share-b)"
  fi
  claim display-a gpu-display.liken.sh; claim display-b gpu-display.liken.sh
  workload_pod disp-a direct display-a
  wait_until 120 pod_running disp-a && pass "display pod disp-a Running ($(claim_devices display-a))" ||
    { fail "disp-a $(pod_phase disp-a)"; return 1; }
  workload_pod disp-b direct display-b
  local why
  wait_until 30 pod_scheduling_decided disp-b || true
  why=$(pod_scheduling disp-b)
  if [ "$(pod_phase disp-b)" = Pending ] && grep -q "Unschedulable" <<<"$why" && grep -qi "claim" <<<"$why"; then
    pass "the second display pod stays Pending: $why"
  else
    fail "second display pod: phase $(pod_phase disp-b), scheduling [$why]"
  fi
  k delete pod disp-a --wait=false >/dev/null
  if wait_until 120 pod_running disp-b; then
    pass "once disp-a is deleted, disp-b runs with $(claim_devices display-b)"
  else
    fail "disp-b still $(pod_phase disp-b) after disp-a was deleted: $(pod_scheduling disp-b)"
  fi
  delete_pods share-a share-b disp-b
  k8s_serves render-sharing || delete_pods share-a2
}

# Pod creation to container Running, p50 over $LIKEN_FIGURE_PODS (20) pods with a claim (each from a template, so
# each its own claim) and as many without, created together in one request and interleaved, so both see the same
# load. The time is read on this machine: from when the create request was sent to when a 0.3 s poll first sees the
# container running. A figure, not a test.
node_scenario_startup_figure() {
  local n=${LIKEN_FIGURE_PODS:-20} i t0 now pods=() seen=" " line name f source=template note=""
  # Each pod its own claim from a template, all on the shared render half; where the release does not share render
  # halves (no DRAConsumableCapacity), one claim by name for every pod, the documented way to share there.
  if k8s_serves render-sharing; then
    claim_template figure-render gpu-render.liken.sh
  else
    claim figure-render gpu-render.liken.sh
    source=direct note=" (one ResourceClaim named by every pod: release $(k8s_minor) does not share render halves)"
  fi
  f=$(mktemp)
  for i in $(seq 1 "$n"); do pods+=("plain-$i" "claimed-$i"); done
  for name in "${pods[@]}"; do
    case "$name" in claimed-*) workload_pod_yaml "$name" "$source" figure-render ;; *) workload_pod_yaml "$name" ;; esac
    echo "---"
  done >"$f"
  t0=$(date +%s%3N)
  k apply -f "$f" >/dev/null
  : >"$f"
  local deadline=$((SECONDS + 300))
  while [ "$(wc -l <"$f")" -lt $((2 * n)) ] && [ $SECONDS -lt $deadline ]; do
    now=$(date +%s%3N)
    for name in $(k get pods -l app=liken-workload -o json |
      jq -r '.items[] | select(.status.containerStatuses[0].state.running) | .metadata.name'); do
      case "$seen" in *" $name "*) continue ;; esac
      seen+="$name "
      echo "$name $((now - t0))" >>"$f"
    done
    sleep 0.3
  done
  p50() { grep "^$1" "$f" | awk '{ print $2 }' | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "none"; else printf "%.1f s (n=%d)", v[int((NR + 1) / 2)] / 1000, NR }'; }
  echo "figure: pod creation to container Running, p50 over $n pods each, created together: $(p50 claimed-) with a claim, $(p50 plain-) without$note"
  rm -f "$f"
  k delete pods -l app=liken-workload --wait=false >/dev/null
  [ "$source" = template ] || k delete resourceclaim figure-render --wait=false >/dev/null 2>&1 || true
}

pod_scheduling_decided() { [ -n "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" ]; }
container_restarted_since() { # POD RESTARTS: restartCount rose above RESTARTS and the new container runs
  [ "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}')" -gt "$2" ] &&
    [ -n "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.running}')" ]
}
driver_replaced() { # OLD: a driver pod other than OLD runs on the node and is Ready
  local p
  p=$(driver_pod) && [ -n "$p" ] && [ "$p" != "$1" ] && pod_ready_in "$DRIVER_NS" "$p"
}

# restart_container POD: stops the pod's container through the runtime (crictl on the node); the kubelet starts a new
# one. Waits until it runs.
restart_container() {
  local before cid
  before=$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}')
  cid=$(pod_container_id "$1")
  node_sh "crictl stop --timeout 0 $cid >/dev/null 2>&1"
  wait_until 90 container_restarted_since "$1" "$before" ||
    echo "note: container of $1 did not restart: $(k get pod "$1" -o jsonpath='{.status.containerStatuses[0]}' | head -c 300)"
}

# slice_gap_watch FILE: polls the node's slice every 0.2 s in the background, appending "<epoch-ms> present|absent".
slice_gap_watch() {
  local f=$1
  (
    while :; do
      if k get resourceslice "$NODE-liken.sh" >/dev/null 2>&1; then s=present; else s=absent; fi
      echo "$(date +%s%3N) $s" >>"$f"
      sleep 0.2
    done
  ) &
  GAP_WATCHER=$!
}
# slice_gap FILE: stops the watcher and prints how long the slice was absent in total, in seconds.
slice_gap() {
  kill "$GAP_WATCHER" 2>/dev/null || true
  wait "$GAP_WATCHER" 2>/dev/null || true
  awk 'prev != "" && p == "absent" { gap += $1 - prev } { prev = $1; p = $2 } END { printf "%.1f", gap / 1000 }' "$1"
}

# Restarts: the kubelet restarts with prepared claims (the caller's restart_kubelet); the driver pod is deleted and
# replaced; `helm upgrade` rolls the DaemonSet (the chart's rollingUpdate) while a new workload pod is being created
# (the arguments: the upgrade command).
node_scenario_restarts() {
  local cid gap watch old new claim uid records
  claim keep-1 gpu-render.liken.sh
  workload_pod keep-1 direct keep-1
  wait_until 120 pod_running keep-1 || { fail "keep-1 $(pod_phase keep-1)"; return 1; }
  cid=$(pod_container_id keep-1)
  watch=$(mktemp)
  slice_gap_watch "$watch"
  restart_kubelet
  wait_until 120 driver_ready && wait_until 60 slice_has_device "$NODE" pci-0000-00-02-0 || true
  sleep 10 # the kubelet wipes the slices of drivers that have not registered again shortly after it starts
  wait_until 60 slice_has_device "$NODE" pci-0000-00-02-0 || true
  gap=$(slice_gap "$watch")
  rm -f "$watch"
  echo "figure: the node was without its slice for $gap s across a kubelet restart"
  expect_eq "a kubelet restart leaves the pod with a prepared claim running, same container" "Running $cid" \
    "$(pod_phase keep-1) $(pod_container_id keep-1)"
  slice_has_device "$NODE" pci-0000-00-02-0 >/dev/null && pass "the slice is published again after the kubelet restart" ||
    fail "no slice after the kubelet restart"

  old=$(driver_pod)
  uid=$(claim_uid keep-1)
  k -n "$DRIVER_NS" delete pod "$old" --wait=false >/dev/null
  if wait_until 180 driver_replaced "$old"; then
    new=$(driver_pod)
    pass "the DaemonSet replaced the deleted driver pod ($old -> $new) and it is Ready (registered)"
  else
    fail "no Ready replacement for driver pod $old: $(driver_pods)"
  fi
  node_file_exists "$CDI_DIR/liken.sh-$uid.json" && node_file_exists "$CLAIMS_DIR/$uid.json" &&
    pass "the new driver pod keeps the prepared claim keep-1 (CDI spec and checkpoint record)" ||
    fail "keep-1's CDI spec or record is gone after the driver pod was replaced"
  records=$(node_sh "ls '$CLAIMS_DIR' | grep -c '\.json$'")
  wait_until 30 driver_metric_is liken_prepared_claims "$records" || true
  expect_eq "the replacement driver took over every checkpointed claim (liken_prepared_claims = records on the node)" \
    "$records" "$(driver_metric liken_prepared_claims)"
  workload_pod after-restart direct "$(render_claim_beside after-restart keep-1)"
  wait_until 120 pod_running after-restart && pass "a new pod with a claim runs after the driver pod was replaced" ||
    fail "after-restart $(pod_phase after-restart)"

  old=$(driver_pod)
  "$@" >"${TMPDIR:-/tmp}/liken-upgrade.log" 2>&1 &
  local upgrade=$!
  sleep 1
  workload_pod during-roll direct "$(render_claim_beside during-roll keep-1)"
  if wait_until 180 pod_running during-roll; then
    pass "a pod created while helm upgrade rolls the DaemonSet starts ($(claim_devices "$(pod_claim during-roll)"))"
  else
    fail "during-roll $(pod_phase during-roll) while the DaemonSet rolled: $(k get pod during-roll -o jsonpath='{.status.conditions}' | head -c 400)"
  fi
  if wait "$upgrade"; then
    new=$(driver_pod)
    [ -n "$new" ] && [ "$new" != "$old" ] && pass "helm upgrade rolled the driver pod ($old -> $new)" ||
      fail "helm upgrade left the driver pod $old in place"
  else
    fail "helm upgrade: $(tail -n 3 "${TMPDIR:-/tmp}/liken-upgrade.log" | paste -sd'|')"
  fi
  expect_eq "keep-1 still runs with its first container" "Running $cid" "$(pod_phase keep-1) $(pod_container_id keep-1)"
  delete_pods after-restart during-roll
}

# The CDI directory is emptied under a running node, as a reboot clears a tmpfs /var/run/cdi. Pods created
# afterwards get their devices; the specs of claims that were already prepared (keep-1) are written again on the
# driver's next pass from its checkpoint, so a restarted container of such a pod still gets its devices.
node_scenario_cdi_dir_emptied() {
  local uid restarts
  pod_running keep-1 || { claim keep-1 gpu-render.liken.sh; workload_pod keep-1 direct keep-1; wait_until 120 pod_running keep-1; }
  uid=$(claim_uid keep-1)
  node_sh "rm -f '$CDI_DIR'/*"
  [ -z "$(node_sh "ls -A '$CDI_DIR'")" ] && pass "CDI directory emptied" || fail "CDI directory not empty"
  workload_pod after-wipe direct "$(render_claim_beside after-wipe keep-1)"
  if wait_until 120 pod_running after-wipe; then
    expect_eq "a pod created after the wipe gets its device" "/dev/dri/renderD128 c 226:128" \
      "$(container_dev_nodes after-wipe | grep dri)"
  else
    fail "after-wipe $(pod_phase after-wipe)"
  fi
  if wait_until 60 node_file_exists "$CDI_DIR/liken.sh-$uid.json"; then
    pass "the already prepared claim keep-1 has its CDI spec written again from the checkpoint"
  else
    fail "keep-1's CDI spec was not written again"
  fi
  restart_container keep-1
  expect_eq "a restarted container of keep-1 gets its device again" "/dev/dri/renderD128 c 226:128" \
    "$(container_dev_nodes keep-1 | grep dri)"
  delete_pods after-wipe
}

# A USB device re-enumerates while its pod runs: the FTDI serial adapter (port 1-1, usbfs node 001/003 = 189:2)
# comes back as device 9 (189:8) in the testbed of the driver's container (reached from the node through
# /proc/PID/root). The driver's next pass rewrites the claim's CDI spec with the new usbfs node, and a restarted
# container of that pod gets it. (umockdev offers no way to inject a uevent into the daemon from outside its process,
# so the change is picked up by the periodic pass, resyncSeconds.)
node_scenario_usb_reenumerate() {
  local cid pid tb uid
  claim serial-1 serial.liken.sh
  workload_pod serial-1 direct serial-1
  wait_until 120 pod_running serial-1 || { fail "serial-1 $(pod_phase serial-1)"; return 1; }
  expect_eq "serial claim delivers the tty and the usbfs node" "/dev/bus/usb/001/003 c 189:2|/dev/ttyUSB0 c 188:0" \
    "$(container_dev_nodes serial-1 | grep -E 'ttyUSB|bus/usb' | paste -sd'|')"
  cid=$(k -n "$DRIVER_NS" get pod "$(driver_pod)" -o jsonpath='{.status.containerStatuses[0].containerID}' | sed 's|^.*://||')
  pid=$(node_sh "crictl inspect --output go-template --template '{{.info.pid}}' $cid 2>/dev/null")
  tb=$(node_sh "ls -d /proc/$pid/root/tmp/umockdev.* | head -n 1")
  [ -n "$tb" ] || { fail "no umockdev testbed in the driver container (pid $pid)"; return 1; }
  node_sh "d=\$(find $tb/sys/devices -type d -path '*/usb1/1-1' | head -n 1) && echo 9 >\"\$d/devnum\" && echo 189:8 >\"\$d/dev\" &&
    sed -i 's|^DEVNAME=.*|DEVNAME=bus/usb/001/009|; s|^DEVNUM=.*|DEVNUM=009|; s|^MINOR=.*|MINOR=8|' \"\$d/uevent\""
  uid=$(claim_uid serial-1)
  if wait_until 60 node_sh "grep -q /dev/bus/usb/001/009 '$CDI_DIR/liken.sh-$uid.json'"; then
    pass "re-enumeration: the claim's CDI spec names the new usbfs node /dev/bus/usb/001/009"
  else
    fail "CDI spec after re-enumeration: $(cdi_spec_nodes serial-1 | paste -sd'|')"
  fi
  restart_container serial-1
  expect_eq "a restarted container of serial-1 gets the new usbfs node" "/dev/bus/usb/001/009 c 189:8|/dev/ttyUSB0 c 188:0" \
    "$(container_dev_nodes serial-1 | grep -E 'ttyUSB|bus/usb' | paste -sd'|')"
  delete_pods serial-1
}

# A delivered node really opens and reads. The driver runs on test/machines/harmless-nodes.umockdev (real device
# names, nodes numbered like /dev/null 1:3, /dev/zero 1:5, /dev/random 1:8): the display half's /dev/dri/card0 is
# 1:5, the serial adapter's /dev/ttyUSB0 1:8. Each claimed node is read inside the container.
node_scenario_delivered_nodes_read() {
  local p node want got
  claim read-display gpu-display.liken.sh; workload_pod read-display direct read-display
  claim read-serial serial.liken.sh; workload_pod read-serial direct read-serial
  for p in read-display read-serial; do
    wait_until 120 pod_running "$p" || { fail "$p $(pod_phase "$p"): $(pod_scheduling "$p")"; continue; }
    case "$p" in read-display) node=/dev/dri/card0 want="$node c 1:5" ;; *) node=/dev/ttyUSB0 want="$node c 1:8" ;; esac
    expect_eq "$p: the container holds $node with the recording's numbers" "$want" "$(container_dev_nodes "$p" | grep "^$node ")"
    got=$(k exec "$p" -- sh -c "head -c 16 $node | wc -c" 2>&1 | tr -d ' ')
    expect_eq "$p: $node opens and reads 16 bytes" "16" "$got"
  done
  got=$(k exec read-display -- sh -c 'head -c 16 /dev/dri/card0 | od -An -tx1 | tr -d " \n"' 2>&1)
  expect_eq "read-display: card0 (1:5) reads zeros" "00000000000000000000000000000000" "$got"
  # The claim's device metadata file, mounted by the runtime from the claim's CDI spec (request "dev").
  got=$(k exec read-serial -- cat /var/run/kubernetes.io/dra-device-attributes/resourceclaims/read-serial/dev/liken.sh-metadata.json 2>&1 |
    jq -rs '.[0] as $m | $m.requests[0].devices[0].attributes as $a |
      [$m.apiVersion, $m.metadata.name, $m.requests[0].name, ($a["liken.sh/devicePaths"].strings | sort | join(",")),
       $a["liken.sh/usbBusNumber"].int, $a["liken.sh/usbDeviceNumber"].int] | map(tostring) | join(" ")' 2>&1)
  expect_eq "read-serial: the container reads its device metadata (version, claim, request, nodes, USB bus and device)" \
    "metadata.resource.k8s.io/v1beta1 read-serial dev /dev/bus/usb/001/002,/dev/ttyUSB0 1 2" "$got"
  delete_pods read-display read-serial
}

# driver_testbed: the umockdev testbed of the running driver's container, as the node sees it (/proc/PID/root/...).
driver_testbed() {
  local cid pid
  cid=$(k -n "$DRIVER_NS" get pod "$(driver_pod)" -o jsonpath='{.status.containerStatuses[0].containerID}' | sed 's|^.*://||')
  pid=$(node_sh "crictl inspect --output go-template --template '{{.info.pid}}' $cid 2>/dev/null")
  node_sh "ls -d /proc/$pid/root/tmp/umockdev.* | head -n 1"
}
# testbed_unplug_usb TB PORT: a hot unplug of USB port PORT (e.g. 1-1) in the umockdev testbed TB (a path as node_sh
# sees it, driver_testbed): its sysfs directory and its /sys/bus/usb/devices links move to TB/unplugged.
testbed_unplug_usb() {
  node_sh "d=\$(find $1/sys/devices -type d -path '*/usb${2%%-*}/$2' | head -n 1) && [ -n \"\$d\" ] &&
    mkdir -p $1/unplugged/device $1/unplugged/links && dirname \"\$d\" >$1/unplugged/parent &&
    mv \"\$d\" $1/unplugged/device/ && mv $1/sys/bus/usb/devices/$2 $1/sys/bus/usb/devices/$2:* $1/unplugged/links/"
}
# testbed_replug_usb TB PORT: puts back what testbed_unplug_usb moved.
testbed_replug_usb() {
  node_sh "p=\$(cat $1/unplugged/parent) && mv $1/unplugged/device/$2 \"\$p\"/ && mv $1/unplugged/links/* $1/sys/bus/usb/devices/ &&
    rm -rf $1/unplugged"
}
# claim_device_status CLAIM: this driver's status.devices entries, "DEVICE Ready=STATUS/REASON PATH,PATH" per line
# (paths sorted).
claim_device_status() {
  k get resourceclaim "$1" -o json | jq -r '.status.devices[]? | select(.driver == "liken.sh") |
    "\(.device) Ready=\(.conditions[]? | select(.type == "Ready") | "\(.status)/\(.reason)") \(.data.devicePaths // [] | sort | join(","))"'
}
claim_device_ready() { claim_device_status "$1" | grep -q " Ready=$2/"; }
claim_device_status_empty() { [ -z "$(claim_device_status "$1")" ]; }
# pod_resource_health POD NAME: the health of each device in the container's allocatedResourcesStatus entry NAME.
pod_resource_health() {
  k get pod "$1" -o json | jq -r --arg n "$2" \
    '[.status.containerStatuses[0].allocatedResourcesStatus[]? | select(.name == $n) | .resources[]?.health] | join(" ")'
}
pod_resource_health_is() { [ "$(pod_resource_health "$1" "$2")" = "$3" ]; }

# What the operator and the kubelet see of a device: a running pod holds the serial adapter (USB port 1-1) through
# request `dev` of its claim. The claim's status.devices gets the driver's entry (Ready=True, the delivered /dev
# nodes), and the pod's container shows `claim:dev/dev` Healthy in status.containerStatuses[].allocatedResourcesStatus.
# The adapter is unplugged (its sysfs directories moved out of the driver container's umockdev testbed, as a hot
# unplug removes them; noticed by the driver's periodic pass): the entry turns Ready=False (DeviceUnplugged) and the
# pod's health Unhealthy. Plugged back: Ready=True and Healthy again. Deleting the pod unprepares the claim and the
# driver removes its entries.
node_scenario_status_and_health() {
  local tb dev uid status
  claim health-1 serial.liken.sh
  workload_pod_yaml health-1 direct health-1 | sed 's/claims: \[{name: dev}\]/claims: [{name: dev, request: dev}]/' |
    k apply -f - >/dev/null
  wait_until 120 pod_running health-1 || { fail "health-1 $(pod_phase health-1): $(pod_scheduling health-1)"; return 1; }
  dev=$(claim_devices health-1)
  if wait_until 60 claim_device_ready health-1 True; then
    status=$(claim_device_status health-1)
    expect_eq "after prepare the claim's status.devices shows the device Ready with its delivered nodes" \
      "$dev Ready=True/Prepared $(cdi_spec_nodes health-1 | awk '{ print $1 }' | sort | paste -sd,)" "$status"
  else
    fail "no Ready=True entry in health-1's status.devices: [$(k get resourceclaim health-1 -o jsonpath='{.status.devices}' | head -c 400)]"
  fi
  echo "--- kubectl describe resourceclaim health-1 (status part)"
  k describe resourceclaim health-1 | sed -n '/^Status:/,$p' | head -n 40
  if ! k8s_serves pod-health; then
    [ -z "$(k get pod health-1 -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}')" ] &&
      pass "release $(k8s_minor): no allocatedResourcesStatus in the pod (ResourceHealthStatus off, documented)" ||
      fail "allocatedResourcesStatus present on $(k8s_minor)"
  else
  wait_until 60 pod_resource_health_is health-1 claim:dev/dev Healthy &&
    pass "the pod's allocatedResourcesStatus shows claim:dev/dev Healthy" ||
    fail "claim:dev/dev health before the unplug: [$(pod_resource_health health-1 claim:dev/dev)] $(k get pod health-1 -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}' | head -c 300)"
  fi

  local writes
  writes=$(driver_metric 'liken_claim_status_writes_total{result="success"}')
  sleep 12 # more than two of the driver's periodic passes (resyncSeconds=5), each comparing the claim with its cache
  expect_eq "idle: no status write across two periodic passes" "$writes" \
    "$(driver_metric 'liken_claim_status_writes_total{result="success"}')"

  tb=$(driver_testbed)
  [ -n "$tb" ] || { fail "no umockdev testbed in the driver container"; return 1; }
  testbed_unplug_usb "$tb" 1-1 || { fail "could not unplug port 1-1 in the testbed"; return 1; }
  if wait_until 60 claim_device_ready health-1 False; then
    expect_eq "unplugged: the claim's entry turns Ready=False" "$dev Ready=False/DeviceUnplugged" \
      "$(claim_device_status health-1 | awk '{ print $1, $2 }')"
  else
    fail "status.devices after the unplug: $(claim_device_status health-1)"
  fi
  if k8s_serves pod-health; then
  wait_until 90 pod_resource_health_is health-1 claim:dev/dev Unhealthy &&
    pass "unplugged: the pod's allocatedResourcesStatus shows claim:dev/dev Unhealthy" ||
    fail "claim:dev/dev health after the unplug: [$(pod_resource_health health-1 claim:dev/dev)]"
  fi
  echo "--- pod health-1 allocatedResourcesStatus while unplugged"
  k get pod health-1 -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}' | jq -c . || true

  testbed_replug_usb "$tb" 1-1 || fail "could not plug port 1-1 back"
  wait_until 60 claim_device_ready health-1 True && pass "plugged back: the entry is Ready=True again" ||
    fail "status.devices after plugging back: $(claim_device_status health-1)"
  if k8s_serves pod-health; then
  wait_until 90 pod_resource_health_is health-1 claim:dev/dev Healthy &&
    pass "plugged back: claim:dev/dev Healthy again" ||
    fail "claim:dev/dev health after plugging back: [$(pod_resource_health health-1 claim:dev/dev)]"
  fi

  # At unprepare the driver applies no entries (one more successful write); the API server would also drop them when
  # the claim is deallocated, which comes later: after the kubelet's unprepare and the pod's deletion.
  writes=$(driver_metric 'liken_claim_status_writes_total{result="success"}')
  uid=$(claim_uid health-1)
  delete_pods health-1
  wait_until 60 node_sh "[ ! -e '$CLAIMS_DIR/$uid.json' ]" || true
  wait_until 60 claim_device_status_empty health-1 &&
    pass "after the pod is deleted (unprepare) the claim's status.devices holds no liken.sh entry" ||
    fail "entries left after unprepare: $(claim_device_status health-1)"
  expect_eq "the driver removed its entries itself at unprepare (one more status write)" "$((writes + 1))" \
    "$(driver_metric 'liken_claim_status_writes_total{result="success"}')"
  local failed
  failed=$(( $(driver_metric 'liken_claim_status_writes_total{result="error"}') + $(driver_metric 'liken_claim_status_writes_total{result="conflict"}') ))
  [ "$failed" = 0 ] || echo "note: $failed status write(s) of this driver pod failed and were retried: $(k -n "$DRIVER_NS" logs "$(driver_pod)" |
    grep 'claim status: ' | grep -v 'status written' | tail -n 4 | cut -c1-400)"
  k delete resourceclaim health-1 --wait=false >/dev/null 2>&1 || true
}

# slice_device_taints DEVICE: the taints of DEVICE in this node's slice, "KEY=VALUE:EFFECT" each, space-separated;
# "absent" when the slice does not list the device.
slice_device_taints() {
  k get resourceslices -o json | jq -r --arg n "$NODE" --arg d "$1" '[.items[] | select(.spec.nodeName == $n and
    .spec.driver == "liken.sh") | .spec.devices[]? | select(.name == $d)] |
    if length == 0 then "absent" else [.[0].taints[]? | "\(.key)=\(.value // ""):\(.effect)"] | join(" ") end'
}
slice_device_taints_are() { [ "$(slice_device_taints "$1")" = "$2" ]; }
pod_uid() { k get pod "$1" -o jsonpath='{.metadata.uid}'; }
# pod_kept POD UID: the pod is the same object (not evicted and made again), not being deleted, and Running.
pod_kept() {
  [ "$(k get pod "$1" -o jsonpath='{.metadata.uid}/{.metadata.deletionTimestamp}/{.status.phase}')" = "$2//Running" ]
}

# A pod follows its device, on one node (the driver runs with taintUnpluggedDevices=true). A pod holds the serial
# adapter (USB port 1-1, serial A50285BI) through a claim that selects it by serial and tolerates liken.sh/unplugged
# for 300 s. Unplugged, the adapter stays in the node's slice with the NoExecute taint, and the pod's health turns
# Unhealthy from the same pass; the pod is not evicted (tolerated). Plugged back within the toleration, the taint
# goes and the pod, the same object all along, runs on. Then a pod whose claim (from a template) does not tolerate
# the taint is evicted at the unplug, and the adapter leaves the slice once its claim is unprepared. Where the API
# server drops taints (1.34 and 1.35 by default) the driver logs that once and the adapter leaves the slice while
# unplugged, as without the value.
node_scenario_unplug_within_toleration() {
  local tb uid dev
  k -n "$DRIVER_NS" get daemonset -l "$DRIVER_SELECTOR" -o jsonpath='{.items[0].spec.template.spec.containers[0].args}' |
    grep -q -- '--taint-unplugged-devices' && pass "taintUnpluggedDevices=true runs the driver with --taint-unplugged-devices" ||
    fail "no --taint-unplugged-devices in the driver's arguments"
  k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: follow-1, namespace: default}
spec:
  devices:
    requests:
    - name: dev
      exactly:
        deviceClassName: serial.liken.sh
        selectors: [{cel: {expression: 'device.attributes["liken.sh"].serial == "A50285BI"'}}]
        tolerations: [{key: liken.sh/unplugged, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]
YAML
  workload_pod_yaml follow-1 direct follow-1 | sed 's/claims: \[{name: dev}\]/claims: [{name: dev, request: dev}]/' |
    k apply -f - >/dev/null
  wait_until 120 pod_running follow-1 || { fail "follow-1 $(pod_phase follow-1): $(pod_scheduling follow-1)"; return 1; }
  dev=$(claim_devices follow-1)
  uid=$(pod_uid follow-1)
  expect_eq "the claim selecting serial A50285BI holds the adapter on port 1-1" usb-1-1-1-0 "$dev"
  expect_eq "plugged in: the adapter carries no taint" "" "$(slice_device_taints "$dev")"
  tb=$(driver_testbed)
  [ -n "$tb" ] || { fail "no umockdev testbed in the driver container"; return 1; }
  testbed_unplug_usb "$tb" 1-1 || { fail "could not unplug port 1-1 in the testbed"; return 1; }
  if k8s_serves device-taints; then
    wait_until 60 slice_device_taints_are "$dev" "liken.sh/unplugged=device-gone:NoExecute" &&
      pass "unplugged: the slice keeps the adapter with the liken.sh/unplugged NoExecute taint" ||
      fail "the adapter in the slice after the unplug: [$(slice_device_taints "$dev")]"
    local writes
    writes=$(driver_metric 'liken_slice_writes_total{operation="update",result="success"}')
    [ -n "$writes" ] || fail "no liken_slice_writes_total update series in the driver's metrics"
    echo "--- kubectl describe resourceslice $NODE-liken.sh (the unplugged adapter)"
    k describe resourceslice "$NODE-liken.sh" | grep -A 12 "Name: *$dev" | head -n 24 || true
    if k8s_serves pod-health; then
      wait_until 90 pod_resource_health_is follow-1 claim:dev/dev Unhealthy &&
        pass "unplugged: the pod's allocatedResourcesStatus shows the adapter Unhealthy as well" ||
        fail "claim:dev/dev health while tainted: [$(pod_resource_health follow-1 claim:dev/dev)]"
    fi
    sleep 11 # the eviction controller evicts a pod whose claim does not tolerate the taint as soon as it sees it
    expect_eq "tainted: no slice write across two periodic passes (the taint and its time are kept as published)" \
      "$writes" "$(driver_metric 'liken_slice_writes_total{operation="update",result="success"}')"
    pod_kept follow-1 "$uid" && pass "unplugged: the pod, whose claim tolerates the taint for 300 s, is not evicted" ||
      fail "follow-1 after the unplug: $(k get pod follow-1 -o jsonpath='{.metadata.uid} {.metadata.deletionTimestamp} {.status.phase}' 2>&1)"
  else
    wait_until 60 slice_device_taints_are "$dev" absent &&
      pass "release $(k8s_minor): the API server drops taints; the unplugged adapter leaves the slice (the contract's behaviour)" ||
      fail "the adapter in the slice after the unplug on $(k8s_minor): [$(slice_device_taints "$dev")]"
    expect_eq "release $(k8s_minor): the driver logs once that device taints are not served" 1 \
      "$(k -n "$DRIVER_NS" logs "$(driver_pod)" | grep -c 'cluster feature missing.*feature=device_taints')"
  fi
  testbed_replug_usb "$tb" 1-1 || fail "could not plug port 1-1 back"
  wait_until 60 slice_device_taints_are "$dev" "" && pass "plugged back: the adapter is in the slice without a taint" ||
    fail "the adapter in the slice after plugging back: [$(slice_device_taints "$dev")]"
  sleep 5
  pod_kept follow-1 "$uid" && pass "plugged back within the toleration: the pod was never evicted and runs on" ||
    fail "follow-1 after plugging back: $(k get pod follow-1 -o jsonpath='{.metadata.uid} {.metadata.deletionTimestamp} {.status.phase}' 2>&1)"
  delete_pods follow-1
  k delete resourceclaim follow-1 --wait=false >/dev/null 2>&1 || true
  k8s_serves device-taints || return 0

  # Without a toleration: a pod whose claim comes from a template is evicted at the unplug, its claim is unprepared,
  # and the adapter leaves the slice (no prepared claim holds it); plugged back, it is published untainted.
  local claim
  claim_template follow-t serial.liken.sh 'device.attributes["liken.sh"].serial == "A50285BI"'
  workload_pod follow-2 template follow-t
  wait_until 120 pod_running follow-2 || { fail "follow-2 $(pod_phase follow-2): $(pod_scheduling follow-2)"; return 1; }
  claim=$(pod_claim follow-2)
  expect_eq "follow-2's claim from the template holds the adapter" usb-1-1-1-0 "$(claim_devices "$claim")"
  local t0=$SECONDS
  testbed_unplug_usb "$tb" 1-1 || { fail "could not unplug port 1-1 in the testbed"; return 1; }
  wait_until 90 pod_gone follow-2 && echo "figure: unplug to the pod's deletion $((SECONDS - t0)) s (periodic pass every 5 s)" && pass "unplugged, no toleration: the pod was evicted (deleted by the kube-controller-manager)" ||
    fail "follow-2 after the unplug: $(k get pod follow-2 -o jsonpath='{.metadata.deletionTimestamp} {.status.phase} {.status.conditions}' 2>&1 | head -c 400)"
  wait_until 60 slice_device_taints_are "$dev" absent &&
    pass "once no prepared claim holds it, the unplugged adapter leaves the slice" ||
    fail "the adapter in the slice after the eviction: [$(slice_device_taints "$dev")]"
  testbed_replug_usb "$tb" 1-1 || fail "could not plug port 1-1 back"
  wait_until 60 slice_device_taints_are "$dev" "" && pass "plugged back: the adapter is published again, untainted" ||
    fail "the adapter in the slice after plugging back: [$(slice_device_taints "$dev")]"
  k delete resourceclaimtemplate follow-t --wait=false >/dev/null 2>&1 || true
}

# A template claim's device metadata file is under resourceclaimtemplates/<the pod's name for the claim>/, also when
# the claim is served from the node's claim cache (which keeps the claim slim): the prepare's fallback count tells
# which path served it. The laptop iGPU's render half (shareable).
node_scenario_template_metadata() {
  local before after claim got dir=/var/run/kubernetes.io/dra-device-attributes
  before=$(driver_metric liken_claim_get_fallbacks_total)
  claim_template meta-template gpu-render.liken.sh
  workload_pod meta-template template meta-template
  wait_until 120 pod_running meta-template || { fail "meta-template $(pod_phase meta-template): $(pod_scheduling meta-template)"; return 1; }
  claim=$(pod_claim meta-template)
  after=$(driver_metric liken_claim_get_fallbacks_total)
  got=$(k exec meta-template -- cat "$dir/resourceclaimtemplates/dev/dev/liken.sh-metadata.json" 2>&1 |
    jq -rs '.[0] | [.podClaimName, .metadata.name, .requests[0].name] | map(tostring) | join(" ")' 2>&1)
  expect_eq "meta-template: the template claim's file is under resourceclaimtemplates/dev/dev/ (prepare fallbacks $before -> $after: $([ "${after:-0}" = "${before:-0}" ] && echo 'served from the claim cache' || echo 'read from the server'))" \
    "dev $claim dev" "$got"
  k exec meta-template -- test -e "$dir/resourceclaims/$claim" 2>/dev/null &&
    fail "meta-template: a file under resourceclaims/$claim/ too" || pass "meta-template: nothing under resourceclaims/$claim/"
  delete_pods meta-template
}

# A template claim served without the node's claim cache: a claim that carries resource.kubernetes.io/pod-claim-name
# (as the resourceclaim controller writes it) and is allocated on this node, but that no pod names, so the driver's
# cache never holds it. The kubelet's calls are made directly on the driver's sockets (liken_prepare_timing, which
# registers as the kubelet does): the prepare reads the claim from the API server (one fallback), and the CDI spec
# still mounts its metadata file at resourceclaimtemplates/<pod claim name>/<request>/, the file naming it; unprepare
# removes spec, record and file.
node_scenario_template_metadata_uncached() {
  local calls=${LIKEN_PREPARE_TIMING:-$(dirname "${LIKEN_DRA:-$REPO/build/liken-dra}")/test/kubelet/liken_prepare_timing}
  [ -x "$calls" ] || { fail "no $calls (hack/build.sh liken_prepare_timing)"; return 1; }
  local name=uncached-template uid before after spec mount host list out
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $name
  namespace: default
  annotations: {resource.kubernetes.io/pod-claim-name: dev}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: gpu-render.liken.sh}
YAML
  k patch resourceclaim "$name" --subresource=status --type=merge -p "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"dev\",\"driver\":\"liken.sh\",\"pool\":\"$NODE\",\"device\":\"pci-0000-00-02-0\"}]}}}}" >/dev/null ||
    { fail "$name: allocating it by a status patch failed"; return 1; }
  uid=$(claim_uid "$name")
  list=$(mktemp)
  echo "default $name $uid" >"$list"
  before=$(driver_metric liken_claim_get_fallbacks_total)
  out=$("$calls" calls --kubelet-root "$LIKEN_NODE_KUBELET_ROOT" --claims "$list" --mode prepare 2>&1) ||
    { fail "$name: NodePrepareResources: $(echo "$out" | tail -n 3 | paste -sd'|')"; rm -f "$list"; return 1; }
  after=$(driver_metric liken_claim_get_fallbacks_total)
  expect_eq "$name: the prepare read the claim from the API server (fallbacks)" "$(( ${before:-0} + 1 ))" "${after:-0}"
  spec=$(cdi_spec_file "$name")
  mount=$(node_sh "cat '$spec'" | jq -r '[.. | .mounts? // empty | .[] | select(.containerPath | test("dra-device-attributes"))][0] | "\(.hostPath) \(.containerPath)"')
  host=${mount%% *}
  expect_eq "$name: the CDI spec mounts its metadata file under resourceclaimtemplates/dev/dev/" \
    "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/dev/dev/liken.sh-metadata.json" "${mount#* }"
  expect_eq "$name: the metadata file on the node names the claim and its pod claim name" "dev $name dev" \
    "$(node_sh "cat '$host'" 2>&1 | jq -rs '.[0] | [.podClaimName, .metadata.name, .requests[0].name] | map(tostring) | join(" ")' 2>&1)"
  out=$("$calls" calls --kubelet-root "$LIKEN_NODE_KUBELET_ROOT" --claims "$list" --mode unprepare 2>&1) ||
    fail "$name: NodeUnprepareResources: $(echo "$out" | tail -n 3 | paste -sd'|')"
  node_sh "[ ! -e '$spec' ] && [ ! -e '$CLAIMS_DIR/$uid.json' ] && [ ! -e '$host' ]" &&
    pass "$name: unprepare removed its CDI spec, record and metadata file" || fail "$name: spec, record or metadata file left after unprepare"
  rm -f "$list"
  k delete resourceclaim "$name" --wait=false >/dev/null 2>&1 || true
}

# extended_resource_pod NAME RESOURCE: a pod that asks only `resources.limits: RESOURCE: 1`, as a pod written for a
# device plugin does.
extended_resource_pod() { workload_pod "$1" limits "$2"; } # POD RESOURCE-NAME
# extended_resource_pods_at_once POD=RESOURCE-NAME...: those pods created by one apply, so the kubelet's prepares
# race the driver's claim cache (each pod's claim is made by the scheduler and fetched after the pod event).
extended_resource_pods_at_once() {
  local pr
  for pr in "$@"; do
    workload_pod_yaml "${pr%%=*}" limits "${pr#*=}"
    echo ---
  done | k apply -f - >/dev/null
}
# extended_resource_unserved POD RESOURCE: where the release does not serve DRAExtendedResource (off before 1.36), a
# pod asking for RESOURCE is refused by the API server or does not run (Pending; the scheduler's reason, if any, is
# printed: 1.34 gives none within 60 s).
extended_resource_unserved() {
  local out
  if ! out=$(workload_pod_yaml "$1" limits "$2" | k apply -f - 2>&1); then
    pass "release $(k8s_minor) (DRAExtendedResource off): the API server refuses a pod asking for $2: $(echo "$out" | tail -n 1 | cut -c1-200)"
    return 0
  fi
  if wait_until 30 pod_running "$1"; then
    fail "release $(k8s_minor): $1 asking for $2 runs where DRAExtendedResource is off"
  else
    pass "release $(k8s_minor) (DRAExtendedResource off): $1 asking for $2 stays $(pod_phase "$1"): $(pod_scheduling "$1" | head -c 200)"
  fi
  delete_pods "$1"
}
# class_lost_extended_resource_name CLASS: the API server dropped the class's extendedResourceName (gate off).
class_lost_extended_resource_name() {
  expect_eq "release $(k8s_minor) (DRAExtendedResource off): the API server dropped $1's extendedResourceName" "" \
    "$(k get deviceclass "$1" -o jsonpath='{.spec.extendedResourceName}')"
}
pod_extended_claim() { k get pod "$1" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}'; }

# Pods written for device plugins (DRAExtendedResource): a DeviceClass names an extended resource; a pod asking for
# it, and a pod asking for deviceclass.resource.kubernetes.io/<class>, each get exactly the device's nodes from the
# scheduler's claim, prepared from the node's claim cache (0 fallbacks, with a third pod created at the same time), with its metadata file under
# resourceclaims/<claim>/<request>/ and this driver's status entries; deleting the pod unprepares the claim and the
# scheduler's claim goes away.
# claim_has_device_status CLAIM: the claim has a status.devices entry of liken.sh (a function, for wait_until).
claim_has_device_status() { [ -n "$(claim_device_status "$1")" ]; }
# apply_ext_render_class: a DeviceClass that serves the extended resource example.com/render with render nodes.
apply_ext_render_class() {
  k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: ext-render.liken.sh}
spec:
  extendedResourceName: example.com/render
  selectors:
  - cel: {expression: 'device.driver == "liken.sh" && device.attributes["liken.sh"].renderNode'}
YAML
}
node_scenario_extended_resources() {
  apply_ext_render_class
  if ! k8s_serves extended-resources; then
    class_lost_extended_resource_name ext-render.liken.sh
    extended_resource_unserved ext-name example.com/render
    extended_resource_unserved ext-class deviceclass.resource.kubernetes.io/gpu-display.liken.sh
    k delete deviceclass ext-render.liken.sh >/dev/null 2>&1 || true
    return 0
  fi
  local p before after claim uid spec request got
  workload_pod ext-baseline  # its own: the start-up figure deleted every workload pod
  wait_until 120 pod_running ext-baseline || { fail "ext-baseline $(pod_phase ext-baseline)"; return 1; }
  before=$(driver_metric liken_claim_get_fallbacks_total)
  # Three pods at once: each prepare must wait for the cache's fetch of its claim, never read the API server.
  extended_resource_pods_at_once ext-name=example.com/render \
    ext-class=deviceclass.resource.kubernetes.io/gpu-display.liken.sh ext-serial=deviceclass.resource.kubernetes.io/serial.liken.sh
  wait_until 120 pod_running ext-serial && pass "ext-serial: Running with the scheduler's claim $(pod_extended_claim ext-serial)" ||
    fail "ext-serial $(pod_phase ext-serial): $(pod_scheduling ext-serial)"
  for p in ext-name ext-class; do
    wait_until 120 pod_running "$p" || { fail "$p $(pod_phase "$p"): $(pod_scheduling "$p")"; continue; }
    claim=$(pod_extended_claim "$p")
    [ -n "$claim" ] && pass "$p: the scheduler made claim $claim ($(claim_devices "$claim"))" || { fail "$p: no status.extendedResourceClaimStatus"; continue; }
    check_container_devices ext-baseline "$p" "$([ "$p" = ext-name ] && echo "c 226 0" || echo "c 226 128")"
    request=$(k get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].request}')
    got=$(k exec "$p" -- cat "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/$claim/$request/liken.sh-metadata.json" 2>&1 |
      jq -rs '.[0] | [.metadata.name, (.podClaimName // "none"), .requests[0].name] | join(" ")' 2>&1)
    expect_eq "$p: its metadata file is under resourceclaims/<claim>/<request>/" "$claim none $request" "$got"
    wait_until 30 claim_has_device_status "$claim" &&
      pass "$p: status.devices of the scheduler's claim: $(claim_device_status "$claim" | paste -sd'|')" ||
      fail "$p: no status.devices entry of liken.sh on $claim"
  done
  after=$(driver_metric liken_claim_get_fallbacks_total)
  expect_eq "three pods created at once: their claims were prepared from the node's claim cache (liken_claim_get_fallbacks_total stays ${before:-0})" \
    "${before:-0}" "${after:-0}"
  claim=$(pod_extended_claim ext-name)
  uid=$(claim_uid "$claim")
  spec=$(cdi_spec_file "$claim")
  k delete pod ext-name --wait=false >/dev/null
  wait_until 60 node_sh "[ ! -e '$spec' ] && [ ! -e '$CLAIMS_DIR/$uid.json' ]" &&
    pass "deleting ext-name unprepares $claim (CDI spec and record gone)" || fail "after deleting ext-name: $claim's spec or record remains"
  wait_until 60 claim_gone "$claim" && pass "the scheduler's claim $claim goes with its pod" || fail "claim $claim remains"
  delete_pods ext-class ext-serial ext-baseline
  k delete deviceclass ext-render.liken.sh >/dev/null 2>&1 || true
}

# Containers and extended resources: container a asks for two different names (example.com/render and the display
# class's deviceclass.resource.kubernetes.io/ name) and gets both devices; container b asks for example.com/render
# too. The scheduler makes one claim for the pod and maps each container's names to requests
# (status.extendedResourceClaimStatus.requestMappings); each container must hold exactly the nodes of the devices
# allocated to its own requests, read from the claim's allocation and the driver's CDI spec.
# mapped_container_nodes POD CLAIM CONTAINER: the CDI spec's nodes of the devices allocated to CONTAINER's requests.
mapped_container_nodes() {
  local pod=$1 claim=$2 container=$3 uid requests devices d
  uid=$(claim_uid "$claim")
  requests=$(k get pod "$pod" -o json | jq -c --arg c "$container" \
    '[.status.extendedResourceClaimStatus.requestMappings[] | select(.containerName == $c) | .requestName]')
  devices=$(k get resourceclaim "$claim" -o json | jq -r --argjson r "$requests" \
    '.status.allocation.devices.results[] | select(.driver == "liken.sh" and (.request as $q | $r | index($q))) | .device')
  for d in $devices; do
    node_sh "cat '$(cdi_spec_file "$claim")'" | jq -r --arg n "$uid-$d" \
      '.devices[] | select(.name == $n) | .containerEdits.deviceNodes[]? | "\(.path) \(.type // "c") \(.major):\(.minor)"'
  done | sort -u
}
node_scenario_extended_containers() {
  apply_ext_render_class
  if ! k8s_serves extended-resources; then
    extended_resource_unserved ext-multi example.com/render
    k delete deviceclass ext-render.liken.sh >/dev/null 2>&1 || true
    return 0
  fi
  workload_pod ext-multi-base
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ext-multi, namespace: default, labels: {app: liken-workload}}
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  terminationGracePeriodSeconds: 1
  enableServiceLinks: false
  containers:
  - name: a
    image: $WORKLOAD_IMAGE
    imagePullPolicy: $PULL_POLICY
    command: [sleep, "86400"]
    resources:
      limits: {example.com/render: 1, deviceclass.resource.kubernetes.io/gpu-display.liken.sh: 1}
  - name: b
    image: $WORKLOAD_IMAGE
    imagePullPolicy: $PULL_POLICY
    command: [sleep, "86400"]
    resources:
      limits: {example.com/render: 1}
YAML
  local p claim c want got
  for p in ext-multi-base ext-multi; do
    wait_until 120 pod_running "$p" || { fail "$p $(pod_phase "$p"): $(pod_scheduling "$p")"; delete_pods ext-multi ext-multi-base; return 1; }
  done
  claim=$(pod_extended_claim ext-multi)
  [ -n "$claim" ] || { fail "ext-multi: no status.extendedResourceClaimStatus"; delete_pods ext-multi ext-multi-base; return 1; }
  pass "ext-multi: the scheduler made claim $claim, mappings $(k get pod ext-multi -o json |
    jq -c '[.status.extendedResourceClaimStatus.requestMappings[] | "\(.containerName):\(.resourceName)->\(.requestName)"]'), results $(k get resourceclaim "$claim" -o json | jq -c '[.status.allocation.devices.results[] | "\(.request)=\(.device)"]')"
  for c in a b; do
    want=$(mapped_container_nodes ext-multi "$claim" "$c")
    got=$(comm -13 <(container_dev_nodes ext-multi-base) <(container_dev_nodes ext-multi "$c"))
    [ -n "$want" ] || fail "ext-multi/$c: no device allocated to its requests"
    expect_eq "ext-multi/$c: /dev holds exactly the nodes of its mapped requests' devices" "$want" "$got"
  done
  got=$(comm -13 <(container_dev_nodes ext-multi-base) <(container_dev_nodes ext-multi a) | awk '{print $1}' | paste -sd' ')
  expect_eq "ext-multi/a, asking for two names, holds the render and the card node" "/dev/dri/card0 /dev/dri/renderD128" "$got"
  delete_pods ext-multi ext-multi-base
  k delete deviceclass ext-render.liken.sh >/dev/null 2>&1 || true
}

# Admin access: an exclusive display half held by one pod is reached at the same time by an admin-access claim in a
# namespace labelled resource.kubernetes.io/admin-access=true; the holder keeps running, undisturbed.
# admin_pod_running: the admin-access pod runs (a function, for wait_until: sh -c cannot call k).
admin_pod_running() { [ "$(k -n liken-admin get pod admin-pod -o jsonpath='{.status.phase}')" = Running ]; }
node_scenario_admin_access() {
  claim admin-held gpu-display.liken.sh
  workload_pod admin-holder direct admin-held
  wait_until 120 pod_running admin-holder || { fail "admin-holder $(pod_phase admin-holder): $(pod_scheduling admin-holder)"; return 1; }
  k create namespace liken-admin >/dev/null 2>&1 || true
  k label namespace liken-admin resource.kubernetes.io/admin-access=true --overwrite >/dev/null
  k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: display-admin, namespace: liken-admin}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: gpu-display.liken.sh, adminAccess: true}
YAML
  workload_pod_yaml admin-pod direct display-admin | sed 's/namespace: default/namespace: liken-admin/' | k apply -f - >/dev/null
  if wait_until 120 admin_pod_running; then
    pass "admin-pod Running with the display half admin-held holds ($(k -n liken-admin get resourceclaim display-admin -o jsonpath='{.status.allocation.devices.results[0].device} adminAccess={.status.allocation.devices.results[0].adminAccess}'))"
  else
    fail "admin-pod: $(k -n liken-admin get pod admin-pod -o jsonpath='{.status.conditions}' | head -c 600)"
  fi
  expect_eq "admin-pod holds the card node (226:0, hex e2:0)" "/dev/dri/card0 e2:0" \
    "$(k -n liken-admin exec admin-pod -- stat -c '%n %t:%T' /dev/dri/card0 2>&1)"
  expect_eq "admin-holder still Running, never restarted, still holds card0" "Running 0 yes" \
    "$(pod_phase admin-holder) $(k get pod admin-holder -o jsonpath='{.status.containerStatuses[0].restartCount}') $(container_dev_nodes admin-holder | grep -q '^/dev/dri/card0 c 226:0$' && echo yes || echo no)"
  k -n liken-admin delete pod admin-pod --wait=true --timeout=120s >/dev/null 2>&1 || true
  expect_eq "after the admin pod goes, admin-holder still holds card0" "yes" \
    "$(container_dev_nodes admin-holder | grep -q '^/dev/dri/card0 c 226:0$' && echo yes || echo no)"
  k delete namespace liken-admin --wait=false >/dev/null 2>&1 || true
  delete_pods admin-holder
}

# From a device plugin to liken: `liken-dra deviceclasses` on the recording the driver publishes (the laptop) prints
# a class for squat/generic-device-plugin's serial group; the API server takes it (CEL compiled), and a pod written
# for the device plugin (`squat.ai/serial: 1`) is scheduled on this node and starts with the adapter's nodes.
node_scenario_migration_classes() {
  local bin=${LIKEN_DRA:-$REPO/build/liken-dra} out claim
  out=$(echo '{"name": "serial", "groups": [{"paths": [{"path": "/dev/ttyUSB*"}]}, {"paths": [{"path": "/dev/fuse"}]}]}' |
    umockdev-run -d "$REPO/test/machines/laptop.umockdev" -- "$bin" deviceclasses --from-generic-device-plugin - 2>&1) ||
    { fail "liken-dra deviceclasses: $(echo "$out" | tail -n 3 | paste -sd'|')"; return 1; }
  echo "$out" | grep -q '^# serial\[1\] /dev/fuse: cannot move: /dev/fuse is a virtual node' &&
    pass "deviceclasses says the /dev/fuse group cannot move" || fail "deviceclasses output: $(echo "$out" | head -n 5 | paste -sd'|')"
  echo "$out" | k apply -f - >/dev/null 2>&1 && pass "the printed DeviceClass serial.squat.ai is accepted by the API server" ||
    { fail "kubectl apply of the printed class: $(echo "$out" | k apply -f - 2>&1 | tail -n 2 | paste -sd'|')"; return 1; }
  if ! k8s_serves extended-resources; then
    class_lost_extended_resource_name serial.squat.ai
    extended_resource_unserved gdp-serial squat.ai/serial
    k delete deviceclass serial.squat.ai >/dev/null 2>&1 || true
    return 0
  fi
  extended_resource_pod gdp-serial squat.ai/serial
  if wait_until 120 pod_running gdp-serial; then
    claim=$(pod_extended_claim gdp-serial)
    pass "gdp-serial (limits squat.ai/serial: 1) Running with the scheduler's claim $claim ($(claim_devices "$claim"))"
    expect_eq "gdp-serial holds the adapter's tty" "/dev/ttyUSB0" "$(container_dev_nodes gdp-serial | awk '{ print $1 }' | grep '^/dev/ttyUSB')"
  else
    fail "gdp-serial $(pod_phase gdp-serial): $(pod_scheduling gdp-serial)"
  fi
  delete_pods gdp-serial
  k delete deviceclass serial.squat.ai >/dev/null 2>&1 || true
}

# A rolling update with maxSurge 1 (the chart's default): `helm upgrade` starts the new driver pod beside the old one
# (the pod declares no host port, and the new daemon serves its plugin while the old one still holds the metrics
# port), and the old pod stops only once the new one is Ready. A sampler connects to the driver's registration and
# DRA sockets every 100 ms during the roll: at every sample at least one of each answers, and some samples see two
# (the surge). The new pod's log shows the kubelet registered it; a claim's pod created during the roll starts.
# The arguments: the upgrade command.
driver_pod_gone() { ! k -n "$DRIVER_NS" get pod "$1" >/dev/null 2>&1; }
driver_logged() { k -n "$DRIVER_NS" logs "$1" 2>/dev/null | grep -q "$2"; }
driver_serves_metrics() { driver_metrics | grep -q '^liken_published_devices'; }
node_scenario_rolling_update_keeps_a_plugin() {
  local samples old new gaps most min_reg min_dra log
  old=$(driver_pod)
  samples=$(mktemp)
  python3 "$REPO/test/lib/plugin_sampler.py" "$LIKEN_NODE_KUBELET_ROOT" liken.sh "$samples" 100 &
  local sampler=$!
  sleep 1
  log="${TMPDIR:-/tmp}/liken-roll.log"
  "$@" >"$log" 2>&1 &
  local upgrade=$!
  workload_pod during-surge direct "$(render_claim_beside during-surge keep-1)"
  local upgraded=0
  wait "$upgrade" && upgraded=1
  # The old pod may still be terminating when helm returns: sample until it is gone.
  wait_until 120 driver_pod_gone "$old" || true
  sleep 2
  touch "$samples.stop"
  wait "$sampler" 2>/dev/null || true
  [ "$upgraded" = 1 ] && pass "helm upgrade rolled the DaemonSet with maxSurge 1" ||
    fail "helm upgrade: $(tail -n 3 "$log" | paste -sd'|')"
  new=$(driver_pod)
  [ -n "$new" ] && [ "$new" != "$old" ] && pass "the driver pod was replaced ($old -> $new)" ||
    fail "the driver pod $old was not replaced: $(driver_pods)"
  read -r min_reg min_dra most gaps < <(awk '
    NR == 1 { min_reg = $2; min_dra = $3 }
    { if ($2 < min_reg) min_reg = $2; if ($3 < min_dra) min_dra = $3; if ($2 > most) most = $2
      if ($2 == 0 || $3 == 0) gaps++ }
    END { printf "%d %d %d %d\n", min_reg, min_dra, most, gaps }' "$samples")
  echo "figure: $(wc -l <"$samples") samples over the roll: fewest registration sockets answering $min_reg, fewest DRA sockets $min_dra, most registration sockets $most, samples without a plugin $gaps"
  expect_eq "a registration socket and a DRA socket answer at every sample of the roll" "0" "$gaps"
  [ "$most" -ge 2 ] && pass "the new plugin served beside the old one (surge: two registration sockets answered)" ||
    fail "never two plugins at once: the roll did not surge ($(sort -u -k4,4 "$samples" | awk '{print $4}' | paste -sd' '))"
  # The kubelet's plugin watcher registers the new socket on its own schedule, after the socket answers.
  wait_until 60 driver_logged "$new" "kubelet registered the plugin" &&
    pass "the kubelet registered the new driver pod's plugin" || fail "no registration in $new's log within 60 s"
  if driver_logged "$new" "metrics endpoint not ready"; then
    wait_until 60 driver_logged "$new" "metrics endpoint ready" &&
      pass "the new pod waited for the metrics port the old one held, then bound it" ||
      fail "the new pod never bound the metrics port"
  fi
  wait_until 180 pod_running during-surge && pass "a pod created during the roll starts ($(claim_devices "$(pod_claim during-surge)"))" ||
    fail "during-surge $(pod_phase during-surge)"
  wait_until 60 driver_serves_metrics && pass "the new pod serves metrics" || fail "no metrics from the new pod"
  rm -f "$samples" "$samples.stop"
  delete_pods during-surge
}
