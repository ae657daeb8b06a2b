#!/usr/bin/env bash
# End-to-end check of liken-test-kubelet against liken-fake-dra-plugin on a real local control plane:
# registration, prepare (with injected per-claim errors that the kubelet retries), a template claim, a rolling update
# of the plugin to a v1beta1-only registration, a rejected plugin, and unprepare + final pod deletion.
#   test/kubelet-go/smoke-test.sh            (starts and always stops hack/local-cluster.sh)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
KUBELET=$(hack/build-test-kubelet.sh | tail -n 1)
FAKE=$(dirname "$KUBELET")/liken-fake-dra-plugin
WORK=$(mktemp -d /tmp/liken-test-kubelet.XXXXXX)
REG="$WORK/plugins_registry"
STATE="$WORK/state.json"
CALLS="$WORK/calls.jsonl"
pids=()

log() { echo "smoke: $*" >&2; }
cleanup() {
  local rc=$? p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  hack/local-cluster.sh down || true
  if [ $rc -ne 0 ]; then
    log "FAILED; logs in $WORK"
    tail -n 30 "$WORK"/*.log >&2 || true
    [ -f "$STATE" ] && jq . "$STATE" >&2 || true
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# $1 description, $2 jq expression over the state file that must be true; waits up to ${3:-60}s.
wait_state() {
  local deadline=$((SECONDS + ${3:-60}))
  until [ -f "$STATE" ] && [ "$(jq -r "$2" "$STATE" 2>/dev/null)" = true ]; do
    [ $SECONDS -lt $deadline ] || { log "timed out waiting for: $1"; return 1; }
    sleep 0.3
  done
  log "ok: $1"
}

eval "$(hack/local-cluster.sh up)"
K() { "$LIKEN_K8S_BIN/kubectl" "$@"; }

"$KUBELET" --kubeconfig "$KUBECONFIG" --node-name node-a --registry-dir "$REG" --state-file "$STATE" \
  --retry-interval 500ms >"$WORK/kubelet.log" 2>&1 &
pids+=($!)
"$FAKE" --registry-dir "$REG" --plugin-dir "$WORK/plugins/liken.sh" --versions v1.DRAPlugin,v1beta1.DRAPlugin \
  --cdi-id liken.sh/device=fake0 --request-name req0 --fail-prepare 2 --calls-file "$CALLS" >"$WORK/plugin1.log" 2>&1 &
pids+=($!)
P1=$!

wait_state "informers synced" '.synced'
wait_state "plugin registered with v1" '.plugins["liken.sh"][0].version == "v1.DRAPlugin"'

K apply -f - <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: liken-test}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-liken.sh}
spec:
  driver: liken.sh
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev0}, {name: dev1}, {name: dev2}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim-a, namespace: default}
spec:
  devices:
    requests: [{name: req0, exactly: {deviceClassName: liken-test}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pod-a, namespace: default}
spec:
  terminationGracePeriodSeconds: 30
  resourceClaims: [{name: dev, resourceClaimName: claim-a}]
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {claims: [{name: dev}]}
YAML

P='.pods["default/pod-a"]'
wait_state "pod-a prepared" "$P.state == \"prepared\""
wait_state "pod-a: claim-a devices recorded" "$P.claims[0].name == \"claim-a\" and $P.claims[0].devices[0].cdiDeviceIds == [\"liken.sh/device=fake0\"] and $P.claims[0].devices[0].poolName == \"node-a\" and $P.claims[0].devices[0].driver == \"liken.sh\" and $P.claims[0].versions[\"liken.sh\"] == \"v1.DRAPlugin\""
wait_state "per-claim errors were retried (3 attempts)" "$P.prepareAttempts == 3 and .counters.prepareClaimErrors == 2"
uid=$(K get resourceclaim claim-a -o jsonpath='{.metadata.uid}')
wait_state "claims[uid] prepared, held by pod-a" ".claims[\"$uid\"].prepared and (.claims[\"$uid\"].pods | to_entries | map(.value)) == [\"default/pod-a\"]"
phase=$(K get pod pod-a -o jsonpath='{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}')
[ "$phase" = Running/True ] || { log "pod-a status is $phase"; exit 1; }
log "ok: pod-a Running/Ready"

# A plugin with the wrong name is rejected (NotifyRegistrationStatus false).
"$FAKE" --registry-dir "$REG" --plugin-dir "$WORK/plugins/other" --driver-name other.example.com \
  --calls-file "$WORK/calls-other.jsonl" >"$WORK/plugin-other.log" 2>&1 &
pids+=($!)
wait_state "wrong driver name rejected" '[.registrations[] | select(.event == "rejected" and (.socket | endswith("other.example.com-reg.sock")))] | length == 1'
grep -q '"registered":false' "$WORK/calls-other.jsonl"

# Rolling update: a second plugin instance with pod-UID socket names that only speaks v1beta1, then the first goes.
start_plugin2() {
  "$FAKE" --registry-dir "$REG" --plugin-dir "$WORK/plugins/liken.sh" --uid 1111-2222 --versions v1beta1.DRAPlugin \
    --cdi-id liken.sh/device=fake-new --calls-file "$CALLS" >>"$WORK/plugin2.log" 2>&1 &
  pids+=($!)
  P2=$!
}
start_plugin2
wait_state "second registration in use" '.plugins["liken.sh"] | length == 2 and .[0].version == "v1beta1.DRAPlugin"'
kill -TERM "$P1"
wait_state "first plugin deregistered" '.plugins["liken.sh"] | length == 1 and (.[0].socket | endswith("liken.sh-1111-2222-reg.sock"))'

# A pod with a claim from a template, prepared through the new (v1beta1) registration.
K apply -f - <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: req0, exactly: {deviceClassName: liken-test}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pod-b, namespace: default}
spec:
  resourceClaims: [{name: dev, resourceClaimTemplateName: tmpl}]
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {claims: [{name: dev}]}
YAML
Q='.pods["default/pod-b"]'
wait_state "pod-b (template claim) prepared via v1beta1" "$Q.state == \"prepared\" and $Q.claims[0].podClaimName == \"dev\" and $Q.claims[0].versions[\"liken.sh\"] == \"v1beta1.DRAPlugin\" and $Q.claims[0].devices[0].cdiDeviceIds == [\"liken.sh/device=fake-new\"]"

# Delete pod-a: unprepare through the current registration, then the kubelet's final delete.
K delete pod pod-a --wait=true --timeout=60s
wait_state "claim-a unprepared" "([.unprepared[] | select(.uid == \"$uid\" and .versions[\"liken.sh\"] == \"v1beta1.DRAPlugin\" and .pods == [\"default/pod-a\"])] | length == 1) and (.claims | has(\"$uid\") | not)"
wait_state "pod-a unprepared and gone, devices kept" "$P.state == \"unprepared\" and $P.gone and $P.finalDeleted and $P.claims[0].prepared == false and $P.claims[0].devices[0].cdiDeviceIds == [\"liken.sh/device=fake0\"]"
grep -q "\"call\":\"NodeUnprepareResources\".*$uid" "$CALLS" || { log "no NodeUnprepareResources for $uid in $CALLS"; exit 1; }
wait_state "pod-b still prepared" "$Q.state == \"prepared\""
# The driver dies (SIGKILL: its socket files stay behind) while a new pod needs it: gRPC errors, retried; the
# restarted driver replaces the sockets, is registered again and the retry succeeds.
kill -KILL "$P2"
wait "$P2" 2>/dev/null || true
K apply -f - <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim-c, namespace: default}
spec:
  devices:
    requests: [{name: req0, exactly: {deviceClassName: liken-test}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pod-c, namespace: default}
spec:
  resourceClaims: [{name: dev, resourceClaimName: claim-c}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: dev}]}}]
YAML
R='.pods["default/pod-c"]'
wait_state "pod-c: prepare fails while the driver is down" "$R.state == \"preparing\" and .counters.prepareCallErrors >= 2"
start_plugin2
wait_state "restarted driver registered again" '[.registrations[] | select(.event == "registered" and (.socket | endswith("liken.sh-1111-2222-reg.sock")))] | length == 2'
wait_state "pod-c prepared after the restart" "$R.state == \"prepared\" and $R.claims[0].devices[0].cdiDeviceIds == [\"liken.sh/device=fake-new\"]"
log "state file:"
jq . "$STATE" >&2
log "PASS"
