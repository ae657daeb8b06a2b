#!/usr/bin/env bash
# Benchmark: the real driver's prepare path against the local control plane. Prints figures; asserts nothing.
#
# Brings up the local control plane (hack/local-cluster.sh: fake Node node-a, no kubelet), starts `liken-dra run`
# under umockdev-run on test/machines/usb-heavy.umockdev with its kubelet root in a directory on
# $LIKEN_BENCH_DIR's filesystem (default /tmp), its CDI and metadata roots on a tmpfs (as /var/run is on a
# node; the example driver's CDI root too), and drives its DRA socket as the kubelet does
# (build/test/kubelet/liken_prepare_timing). Two sets of claims:
#   with pods: in the scheduler's order: Pod created unbound, ResourceClaim allocated and reserved for it, then
#              the Pod bound to node-a (POST binding), so the driver's node-scoped claim cache holds the claim;
#   no pods:   claims allocated, named by no pod on the node: each prepare falls back to one GET.
# For each: prepare p50/p99 with one claim per call (LIKEN_BENCH_SINGLE claims, default 200), one call with
# LIKEN_BENCH_BATCH claims (100) and the unprepare of them in one call, and the API requests per prepare read
# from the API server's own apiserver_request_total (all clients, all resources, watches excluded) around the
# calls (all clients; resource requests, watches excluded), beside the driver's liken_claim_get_fallbacks_total.
# Floors in the same run: a durable small-file write (temp, fsync, rename, directory fsync) on the roots'
# filesystem and on the tmpfs, 100 such writes one by one against one batch (concurrent fsyncs, one directory
# fsync: what the daemon paid before it dropped fsync from prepare) and against one syncfs (one directory
# fsync), and 100 unsynced writes (what it pays now), and one GET of a claim over a kept-alive connection (curl).
# Side by side, when $LIKEN_EXAMPLE_DRIVER names a built dra-example-kubeletplugin (kubernetes-sigs/
# dra-example-driver, built outside the tree; test infrastructure only): the same calls against it on node-b.
#
#   test/kubelet/cluster_prepare_benchmark.sh
#
# The first line says the kubelet roots' filesystem, and for ext4 whether it has a journal: a journal-less ext4
# reads its inode table at each new file (to skip recently deleted inodes), which costs a claim record far more
# than the journaled ext4 of a node's disk. On such a host, point LIKEN_BENCH_DIR at a journaled ext4, e.g. a loop
# mount: truncate -s 1G /var/tmp/j.img; mkfs.ext4 -q /var/tmp/j.img; mount -o loop /var/tmp/j.img /mnt/j.
#
# Environment: LIKEN_DRA, LIKEN_PREPARE_TIMING, LIKEN_BENCH_DIR, LIKEN_BENCH_SINGLE, LIKEN_BENCH_BATCH,
# LIKEN_BENCH_METRICS_PORT (9511), LIKEN_BENCH_DRIVER_FLAGS (default "--kube-api-qps 1000 --kube-api-burst 1000",
# the limits the example driver was given), LIKEN_EXAMPLE_DRIVER, and the control plane's LIKEN_CLUSTER_DIR,
# LIKEN_APISERVER_PORT, LIKEN_ETCD_PORT, LIKEN_ETCD_PEER_PORT, LIKEN_SCHEDULER_PORT, LIKEN_KCM_PORT (defaults
# 16443/12379/12380/20259/20257, not the defaults of hack/local-cluster.sh).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=test/lib/bench.sh
source "$REPO/test/lib/bench.sh"
DRA=${LIKEN_DRA:-$REPO/build/liken-dra}
TIMING=${LIKEN_PREPARE_TIMING:-$REPO/build/test/kubelet/liken_prepare_timing}
RECORDING=$REPO/test/machines/usb-heavy.umockdev
SINGLE=${LIKEN_BENCH_SINGLE:-200}
BATCH=${LIKEN_BENCH_BATCH:-100}
METRICS_PORT=${LIKEN_BENCH_METRICS_PORT:-9511}
EXAMPLE=${LIKEN_EXAMPLE_DRIVER:-}
export LIKEN_APISERVER_PORT=${LIKEN_APISERVER_PORT:-16443}
export LIKEN_ETCD_PORT=${LIKEN_ETCD_PORT:-12379}
export LIKEN_ETCD_PEER_PORT=${LIKEN_ETCD_PEER_PORT:-12380}
export LIKEN_SCHEDULER_PORT=${LIKEN_SCHEDULER_PORT:-20259}
export LIKEN_KCM_PORT=${LIKEN_KCM_PORT:-20257}

[ -x "$DRA" ] || { echo "no driver binary at $DRA (build first)" >&2; exit 1; }
[ -x "$TIMING" ] || { echo "no $TIMING (hack/build.sh liken_prepare_timing)" >&2; exit 1; }
for tool in umockdev-run jq curl; do command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 1; }; done

WORK=$(mktemp -d "${LIKEN_BENCH_DIR:-/tmp}/liken-prepare-bench.XXXXXX")
# The CDI specs and the device metadata files on a tmpfs, as a node has them (/var/run), outside /dev (see
# make_tmpfs_dir); the claim records on WORK's filesystem (the kubelet root's disk). LIKEN_BENCH_RUN_DIR=<dir> puts
# them elsewhere (on WORK: "$WORK").
RUNDIR=${LIKEN_BENCH_RUN_DIR:-$(make_tmpfs_dir)}
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-$WORK/cluster}
GROUPS_STARTED=()
log() { echo "prepare-bench: $*" >&2; }

cleanup() {
  local rc=$? f
  stop_groups "${GROUPS_STARTED[@]}"
  if [ $rc -ne 0 ]; then for f in "$WORK"/*/driver.log; do [ -f "$f" ] && { echo "--- tail of $f" >&2; tail -n 20 "$f" >&2; }; done; fi
  finish_work "$REPO" "$WORK"
  [ -n "${LIKEN_BENCH_RUN_DIR:-}" ] || release_tmpfs_dir "$RUNDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$("$REPO/hack/local-cluster.sh" up)"
NODE_NAME=node-b "$REPO/hack/local-cluster.sh" add-node >/dev/null
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }
api_setup "$WORK"

# --- drivers ------------------------------------------------------------------------------------------------
start_liken() {
  local dir=$WORK/liken
  mkdir -p "$dir/kubelet/plugins_registry" "$dir/kubelet/plugins" "$RUNDIR/liken/cdi"
  # shellcheck disable=SC2086
  TMPDIR=/dev/shm setsid umockdev-run -d "$RECORDING" -- \
    "$DRA" run --node-name node-a --kubeconfig "$LIKEN_CLUSTER_DIR/driver.kubeconfig" \
    --kubelet-root "$dir/kubelet" --cdi-root "$RUNDIR/liken/cdi" --metadata-root "$RUNDIR/liken/metadata" --metrics-address "127.0.0.1:$METRICS_PORT" \
    ${LIKEN_BENCH_DRIVER_FLAGS:---kube-api-qps 1000 --kube-api-burst 1000} >>"$dir/driver.log" 2>&1 </dev/null &
  GROUPS_STARTED+=($!)
}
start_example() {
  local dir=$WORK/example
  mkdir -p "$dir/kubelet/plugins_registry" "$dir/kubelet/plugins" "$RUNDIR/example/cdi"
  KUBECONFIG=$KUBECONFIG setsid "$EXAMPLE" --node-name node-b --cdi-root "$RUNDIR/example/cdi" --num-devices 8 \
    --kubelet-registrar-directory-path "$dir/kubelet/plugins_registry" \
    --kubelet-plugins-directory-path "$dir/kubelet/plugins" --kube-api-qps 1000 --kube-api-burst 1000 \
    >>"$dir/driver.log" 2>&1 </dev/null &
  GROUPS_STARTED+=($!)
}
liken_metric() { # NAME: sum of the driver's samples of NAME
  curl -s --max-time 2 "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v name="$1" '$1 ~ "^"name"({|$)" { s += $2 } END { printf "%d\n", s }'
}
slice_devices() { # NODE DRIVER
  k get resourceslices -o json | jq -r --arg n "$1" --arg d "$2" '.items[] | select(.spec.nodeName == $n and .spec.driver == $d) | .spec.devices[].name'
}
published() { [ "$(slice_devices "$1" "$2" | wc -l)" -gt 0 ]; }

# --- claims -------------------------------------------------------------------------------------------------
make_claims() { # PREFIX COUNT NODE DRIVER CLASS PODS(0|1): writes $WORK/PREFIX.txt ("ns name uid" lines)
  local prefix=$1 count=$2 node=$3 driver=$4 class=$5 pods=$6 i
  mapfile -t devs < <(slice_devices "$node" "$driver" | sort)
  {
    for ((i = 0; i < count; i++)); do
      printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s-%d, namespace: default}\nspec:\n  devices:\n    requests:\n    - name: dev\n      exactly: {deviceClassName: %s}\n' "$prefix" "$i" "$class"
      if [ "$pods" = 1 ]; then  # unbound, for a scheduler that does not exist: this script plays the scheduler
        printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default}\nspec:\n  schedulerName: liken-bench\n  containers:\n  - name: c\n    image: registry.invalid/pause:none\n    resources:\n      claims: [{name: dev}]\n  resourceClaims:\n  - name: dev\n    resourceClaimName: %s-%d\n' "$prefix" "$i" "$prefix" "$i"
      fi
    done
  } >"$WORK/$prefix.yaml"
  k create -f "$WORK/$prefix.yaml" >/dev/null
  local uids
  uids=$(k get pods -n default -o json | jq -r --arg p "$prefix-" '.items[] | select(.metadata.name | startswith($p)) | "\(.metadata.name) \(.metadata.uid)"')
  one() { # INDEX DEVICE
    local reserved="" pod_uid
    if [ "$pods" = 1 ]; then
      pod_uid=$(awk -v n="$prefix-$1" '$1 == n { print $2 }' <<<"$uids")
      reserved=",\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"$prefix-$1\",\"uid\":\"$pod_uid\"}]"
    fi
    api_curl -o /dev/null -X PATCH -H "Content-Type: application/merge-patch+json" \
      --data "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"dev\",\"driver\":\"$driver\",\"pool\":\"$node\",\"device\":\"$2\"}]}}$reserved}}" \
      "$API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/$prefix-$1/status"
    if [ "$pods" = 1 ]; then
      api_curl -o /dev/null -X POST -H "Content-Type: application/json" \
        --data "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$prefix-$1\"},\"target\":{\"kind\":\"Node\",\"name\":\"$node\"}}" \
        "$API/api/v1/namespaces/default/pods/$prefix-$1/binding"
    fi
  }
  local jobs=()
  for ((i = 0; i < count; i++)); do
    one "$i" "${devs[$((i % ${#devs[@]}))]}" &
    jobs+=($!)
    if ((${#jobs[@]} == 8)); then wait "${jobs[@]}"; jobs=(); fi  # not a bare wait: the drivers are jobs too
  done
  ((${#jobs[@]} == 0)) || wait "${jobs[@]}"
  k get resourceclaims -n default -o json |
    jq -r --arg p "$prefix-" '.items[] | select(.metadata.name | startswith($p)) | select(.status.allocation != null) |
           "\(.metadata.namespace) \(.metadata.name) \(.metadata.uid)"' >"$WORK/$prefix.txt"
  [ "$(wc -l <"$WORK/$prefix.txt")" = "$count" ] || { log "only $(wc -l <"$WORK/$prefix.txt") of $count $prefix claims allocated"; return 1; }
}

# The claim caches fill by themselves once the pods are bound; wait until the API server has been quiet for 2 s.
settle() {
  local before after
  before=$(api_requests)
  while sleep 2; after=$(api_requests); [ "$((after - before))" -gt 4 ]; do before=$after; done
}

# Runs one timing mode; prints its figures with the API requests the calls caused.
run_calls() { # LABEL KUBELET_ROOT CLAIMS_FILE MODE COUNT WITH_FALLBACK_METRIC(0|1)
  local r0 g0 f0 r1 g1 f1 out
  settle
  r0=$(api_requests); g0=$(claim_gets); f0=$([ "$6" = 1 ] && liken_metric liken_claim_get_fallbacks_total || echo 0)
  out=$("$TIMING" calls --kubelet-root "$2" --claims "$3" --mode "$4")
  # "<label without the repetition>|<figure>|<value>" lines, for the ratios at the end
  awk -v l="${1% \[*}" '$1 ~ /_ms$/ { print l "|" $1 "|" $2 }' <<<"$out" >>"$WORK/figures.txt"
  r1=$(api_requests); g1=$(claim_gets); f1=$([ "$6" = 1 ] && liken_metric liken_claim_get_fallbacks_total || echo 0)
  awk -v l="$1" -v r=$((r1 - r0)) -v g=$((g1 - g0)) -v f=$((f1 - f0)) -v n="$5" -v m="$6" '
    { v[$1] = $2 }
    END {
      if ("prepare_p50_ms" in v) printf "%-34s prepare p50 %6.2f ms  p99 %6.2f ms  (unprepare p50 %.2f ms)", l, v["prepare_p50_ms"], v["prepare_p99_ms"], v["unprepare_p50_ms"]
      else printf "%-34s one call with %d claims: prepare %6.1f ms, unprepare %6.1f ms", l, n, v["batch_prepare_ms"], v["batch_unprepare_ms"]
      printf "  API requests per prepare: %.2f (GET resourceclaims %.2f)", r / n, g / n
      if (m == 1) printf ", driver GET fallbacks %d", f
      if (v["failed"] > 0) printf "  FAILED %d", v["failed"]
      printf "\n"
    }' <<<"$out"
}

# --- run ------------------------------------------------------------------------------------------------------
FS=$(fs_of "$WORK")
echo "prepare benchmark: kubelet roots on $FS ($WORK), CDI and metadata roots on $(fs_of "$RUNDIR") ($RUNDIR), $SINGLE claims one per call, $BATCH in one call; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bench.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bench.gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
YAML

# Floors.
mkdir -p "$WORK/floors" "$RUNDIR/floors"
"$TIMING" floors --dir "$WORK/floors" --files "$BATCH" | awk -v fs="$FS" '{ v[$1] = $2 } END {
  printf "%-34s one durable file write p50 %.3f ms; %d one by one %.1f ms, batched (concurrent fsyncs + 1 dir fsync) %.1f ms, with 1 syncfs instead %.1f ms, unsynced %.1f ms\n", "floor: fsync on " fs, v["durable_write_p50_ms"], v["files"], v["one_by_one_ms"], v["batched_ms"], v["syncfs_batched_ms"], v["unsynced_ms"] }'
"$TIMING" floors --dir "$RUNDIR/floors" --files "$BATCH" | awk '{ v[$1] = $2 } END {
  printf "%-34s one durable file write p50 %.3f ms; %d one by one %.1f ms, as one batch %.1f ms, unsynced %.1f ms\n", "floor: fsync on tmpfs", v["durable_write_p50_ms"], v["files"], v["one_by_one_ms"], v["batched_ms"], v["unsynced_ms"] }'
rmdir "$RUNDIR/floors"

start_liken
wait_until 60 published node-a liken.sh || { log "liken-dra published no slice"; exit 1; }
wait_until 30 test -S "$WORK/liken/kubelet/plugins_registry/liken.sh-reg.sock" || { log "no registration socket"; exit 1; }
if [ -n "$EXAMPLE" ]; then
  start_example
  wait_until 60 published node-b gpu.example.com || { log "the example driver published no slice"; exit 1; }
fi

log "creating claims"
make_claims lp "$SINGLE" node-a liken.sh bench.liken.sh 1
make_claims lb "$BATCH" node-a liken.sh bench.liken.sh 1
make_claims ln "$SINGLE" node-a liken.sh bench.liken.sh 0
make_claims lm "$BATCH" node-a liken.sh bench.liken.sh 0
if [ -n "$EXAMPLE" ]; then
  make_claims ep "$SINGLE" node-b gpu.example.com bench.gpu.example.com 1
  make_claims eb "$BATCH" node-b gpu.example.com bench.gpu.example.com 1
fi

# One GET of a claim over a kept-alive connection: the last of 20 transfers of one curl process.
url="$API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/ln-0"
# shellcheck disable=SC2046  # one "-o /dev/null URL" pair per transfer
get_ms=$(api_curl -w '%{time_total}\n' $(for _ in $(seq 20); do echo "-o /dev/null $url"; done) | tail -n +2 | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int(NR / 2) + 1] * 1000 }')
printf '%-34s %s ms (median of the last 19 of 20 over one connection)\n' "floor: one GET of a claim" "$get_ms"

LR=$WORK/liken/kubelet
ER=$WORK/example/kubelet
for rep in 1 2; do
  run_calls "liken-dra, pods bound [$rep]" "$LR" "$WORK/lp.txt" single "$SINGLE" 1
  run_calls "liken-dra, pods bound [$rep]" "$LR" "$WORK/lb.txt" batch "$BATCH" 1
  if [ -n "$EXAMPLE" ]; then
    run_calls "example driver, pods bound [$rep]" "$ER" "$WORK/ep.txt" single "$SINGLE" 0
    run_calls "example driver, pods bound [$rep]" "$ER" "$WORK/eb.txt" batch "$BATCH" 0
  fi
done

# --- side by side: ratios, footprint, idle --------------------------------------------------------------------
# The claims without pods come last: the driver retries their status writes for a while (their claims are not in
# its node's claim cache), which would be counted in the idle windows.
no_pods() {
  run_calls "liken-dra, no pods" "$LR" "$WORK/ln.txt" single "$SINGLE" 1
  run_calls "liken-dra, no pods" "$LR" "$WORK/lm.txt" batch "$BATCH" 1
}
[ -n "$EXAMPLE" ] || { no_pods; exit 0; }
# Ratios liken-dra / example driver of the means over the repetitions above (below 1: liken-dra is faster).
awk -F'|' '{ n[$1 "|" $2]++; s[$1 "|" $2] += $3 }
  END {
    split("prepare_p50_ms prepare_p99_ms unprepare_p50_ms batch_prepare_ms batch_unprepare_ms", keys, " ")
    for (i = 1; i in keys; i++) {
      a = "liken-dra, pods bound|" keys[i]; b = "example driver, pods bound|" keys[i]
      if (n[a] && n[b] && s[b] > 0)
        printf "%-34s %-20s liken-dra %8.2f ms, example %8.2f ms: ratio %.2f\n", "ratio, pods bound (mean of reps)", keys[i], s[a] / n[a], s[b] / n[b], (s[a] / n[a]) / (s[b] / n[b])
    }
  }' "$WORK/figures.txt"

LPID=$(pid_of "${GROUPS_STARTED[0]}" "$(basename "$DRA")") || { log "no liken-dra process"; exit 1; }
EPID=$(pid_of "${GROUPS_STARTED[1]}" "$(basename "$EXAMPLE")") || { log "no example driver process"; exit 1; }
footprint() { # LABEL: both drivers' memory, then their CPU over an idle window of IDLE seconds
  local p l t0=() t1=()
  for p in "$LPID" "$EPID"; do
    l=$([ "$p" = "$LPID" ] && echo liken-dra || echo "example driver")
    printf '%-34s %-15s VmRSS %s (anon %s, file %s)  VmHWM %s  threads %s\n' "footprint, $1" "$l" \
      "$(mb "$(status_kb "$p" VmRSS)")" "$(mb "$(status_kb "$p" RssAnon)")" "$(mb "$(status_kb "$p" RssFile)")" \
      "$(mb "$(status_kb "$p" VmHWM)")" "$(status_kb "$p" Threads)"
  done
  # On-CPU nanoseconds of the live threads (schedstat): a 60 s window of a quiet daemon is a few clock ticks.
  t0=("$(cpu_ns "$LPID")" "$(cpu_ns "$EPID")")
  sleep "$IDLE"
  t1=("$(cpu_ns "$LPID")" "$(cpu_ns "$EPID")")
  awk -v l="idle CPU, $1" -v a=$((t1[0] - t0[0])) -v b=$((t1[1] - t0[1])) -v s="$IDLE" 'BEGIN {
    printf "%-34s liken-dra %.4f%% of a core, example driver %.4f%% over %d s", l, 100 * a / 1e9 / s, 100 * b / 1e9 / s, s
    if (b > 0) printf ": ratio %.2f", a / b
    printf "\n" }'
}
IDLE=${LIKEN_BENCH_IDLE_SECONDS:-60}
settle
sleep 6  # the heap trim 5 s after the last call
footprint "no claims"
"$TIMING" calls --kubelet-root "$LR" --claims "$WORK/lp.txt" --mode prepare >/dev/null
"$TIMING" calls --kubelet-root "$ER" --claims "$WORK/ep.txt" --mode prepare >/dev/null
settle
sleep 6
footprint "$SINGLE claims"
"$TIMING" calls --kubelet-root "$LR" --claims "$WORK/lp.txt" --mode unprepare >/dev/null
"$TIMING" calls --kubelet-root "$ER" --claims "$WORK/ep.txt" --mode unprepare >/dev/null
no_pods
