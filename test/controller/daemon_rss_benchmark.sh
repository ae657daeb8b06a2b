#!/usr/bin/env bash
# Benchmark: the real daemon's idle footprint on a local control plane. Prints figures; asserts nothing.
#
# Brings up the local control plane (hack/local-cluster.sh, its own ports and state dir), starts
# `liken-dra run` under umockdev-run with test/machines/usb-heavy.umockdev (150 USB devices), creates N
# ResourceClaims allocated (status.allocation) to devices of the node's published slice, prepares them through
# the driver's DRA socket (build/test/kubelet/liken_prepare_claims, which registers as the kubelet does), waits
# for idle, and prints for the driver process (umockdev-run's child):
#   VmRSS / RssAnon / RssFile / VmHWM / Threads from /proc/<pid>/status, and the threads by name;
#   idle CPU over LIKEN_BENCH_IDLE_SECONDS (utime+stime from /proc/<pid>/stat);
#   API writes while idle (liken_slice_writes_total from the metrics endpoint).
#   start-up: from the exec of the driver to registered with the kubelet (a stand-in registers as soon as the
#   registration socket answers, as the kubelet's plugin watcher does) and the slice published (the driver's
#   "slices published" log line), in ms;
#   the API server's requests while idle (its own /metrics, apiserver_request_total, WATCH excluded), by kind.
# Baselines in the same run: a bare `liken-dra healthcheck --help` (max RSS: the binary and its shared
# libraries); the design card's two large libraries, linked as the product is (build/test/controller/
# liken_library_floor: its bare binary; a gRPC server with the daemon's options, idle; the daemon's API client after
# one GET over TLS, idle; both in one process); the same driver idle right after start (slice published, no claims), and the API
# server's request count over the same window before the driver started (the control plane's own traffic).
#
#   test/controller/daemon_rss_benchmark.sh
#
# Environment: LIKEN_DRA (default build/liken-dra), LIKEN_LIBRARY_FLOOR (default build/test/controller/liken_library_floor; its baselines are left out without it), LIKEN_PREPARE_CLAIMS (default
# build/test/kubelet/liken_prepare_claims), LIKEN_BENCH_CLAIMS (1000), LIKEN_BENCH_IDLE_SECONDS (120: at least two --resync-period passes),
# LIKEN_BENCH_PODS=1 also creates one Pod per claim bound to the node (the driver's claim cache then holds the
# claims, as on a real node), LIKEN_BENCH_DRIVER_FLAGS (extra `liken-dra run` flags; default
# "--kube-api-qps 100 --kube-api-burst 100", so that prepare's one GET per uncached claim is not held at 5/s),
# LIKEN_BENCH_KEEP=1 keeps the work directory. The control plane uses ports 16443/12379/12380/20259/20257
# unless LIKEN_APISERVER_PORT, LIKEN_ETCD_PORT, LIKEN_ETCD_PEER_PORT, LIKEN_SCHEDULER_PORT, LIKEN_KCM_PORT say
# otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=test/lib/bench.sh
source "$REPO/test/lib/bench.sh"
DRA=${LIKEN_DRA:-$REPO/build/liken-dra}
PREPARE=${LIKEN_PREPARE_CLAIMS:-$REPO/build/test/kubelet/liken_prepare_claims}
FLOOR=${LIKEN_LIBRARY_FLOOR:-$REPO/build/test/controller/liken_library_floor}  # optional: its baselines
RECORDING=$REPO/test/machines/usb-heavy.umockdev
CLAIMS=${LIKEN_BENCH_CLAIMS:-1000}
IDLE_SECONDS=${LIKEN_BENCH_IDLE_SECONDS:-120}
PODS=${LIKEN_BENCH_PODS:-0}
NODE=node-a
METRICS_PORT=${LIKEN_BENCH_METRICS_PORT:-19490}
export LIKEN_APISERVER_PORT=${LIKEN_APISERVER_PORT:-16443}
export LIKEN_ETCD_PORT=${LIKEN_ETCD_PORT:-12379}
export LIKEN_ETCD_PEER_PORT=${LIKEN_ETCD_PEER_PORT:-12380}
export LIKEN_SCHEDULER_PORT=${LIKEN_SCHEDULER_PORT:-20259}
export LIKEN_KCM_PORT=${LIKEN_KCM_PORT:-20257}

[ -x "$DRA" ] || { echo "no driver binary at $DRA (build first)" >&2; exit 1; }
[ -x "$PREPARE" ] || { echo "no $PREPARE (cmake --build build --target liken_prepare_claims)" >&2; exit 1; }
command -v umockdev-run >/dev/null || { echo "umockdev-run is not installed" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 1; }

# Everything in memory, but not under /dev: see make_tmpfs_dir.
WORK=$(make_tmpfs_dir)
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-$WORK/cluster}
DIR=$WORK/$NODE
DRIVER_GROUP=""

log() { echo "rss-bench: $*" >&2; }

cleanup() {
  local rc=$?
  if [ -n "$DRIVER_GROUP" ]; then stop_groups "$DRIVER_GROUP"; fi
  if [ $rc -ne 0 ] && [ -f "$DIR/driver.log" ]; then
    echo "--- tail of $DIR/driver.log" >&2
    tail -n 30 "$DIR/driver.log" >&2
  fi
  finish_work "$REPO" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$("$REPO/hack/local-cluster.sh" up)"
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }

# --- the API server, for the bulk status patches (kubectl would take a process per claim) -----------------
api_setup "$WORK"

# BEFORE AFTER (request_counts lines): "all N; verb:resource N, ..." of what grew (open watches left out)
request_delta() {
  join -a 1 -e 0 -o 0,1.2,2.2 <(echo "$2") <(echo "$1") |
    awk '$1 == "open-watches" { next }
         { d = $2 - $3; if ($1 == "all") all = d; else if (d > 0) kinds = kinds sprintf("%s %d, ", $1, d) }
         END { printf "%d requests (of the driver'"'"'s kinds: %s)", all, kinds == "" ? "none" : kinds }'
}
log "the control plane alone for ${IDLE_SECONDS}s (baseline of the API server's requests)"
sleep 5
r0=$(request_counts); sleep "$IDLE_SECONDS"; r1=$(request_counts)
API_BASELINE="$(request_delta "$r0" "$r1")"

# --- the driver -------------------------------------------------------------------------------------------
mkdir -p "$DIR/kubelet/plugins_registry" "$DIR/kubelet/plugins" "$DIR/cdi"
# The kubelet's part in start-up: register as soon as the registration socket answers.
"$PREPARE" --kubelet-root "$DIR/kubelet" --register-only --wait-seconds 120 >"$WORK/registered" 2>&1 &
REGISTRAR=$!
# shellcheck disable=SC2086,SC2016  # the flags split into words; "$0" and "$@" are the inner shell's
TMPDIR=/dev/shm setsid umockdev-run -d "$RECORDING" -- \
  sh -c 'date +%s%3N >"$0"; exec "$@"' "$WORK/exec.ms" "$DRA" run --node-name "$NODE" --kubeconfig "$LIKEN_CLUSTER_DIR/driver.kubeconfig" \
  --kubelet-root "$DIR/kubelet" --cdi-root "$DIR/cdi" --metrics-address "127.0.0.1:$METRICS_PORT" \
  ${LIKEN_BENCH_DRIVER_FLAGS:---kube-api-qps 100 --kube-api-burst 100} >>"$DIR/driver.log" 2>&1 </dev/null &
DRIVER_GROUP=$!

driver_pid() { pid_of "$DRIVER_GROUP" "$(basename "$DRA")"; } # umockdev-run's child is the driver
wait_until 30 driver_pid || { log "driver process did not appear"; exit 1; }
PID=$(driver_pid)
metric() { # NAME [LABEL-FILTER]: sum of the metric's samples
  curl -s --max-time 2 "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v name="$1" -v filter="${2:-}" '$1 ~ "^"name"({|$)" && index($1, filter) { s += $2 } END { printf "%d\n", s }'
}
slice_devices() { k get resourceslices -o json | jq -r --arg n "$NODE" '.items[] | select(.spec.nodeName == $n) | .spec.devices[].name'; }
slice_published() { [ "$(slice_devices | wc -l)" -gt 0 ]; }
wait_until 60 slice_published || { log "no slice published"; exit 1; }

wait "$REGISTRAR" || { log "the stand-in kubelet did not register: $(cat "$WORK/registered")"; exit 1; }
startup_line() { # the start-up figure from the exec, the registration and the first "slices published" line
  local exec_ms reg_ms slice_ts slice_ms
  exec_ms=$(cat "$WORK/exec.ms")
  reg_ms=$(awk '/^registered at/ { print $3 }' "$WORK/registered")
  slice_ts=$(grep -m1 'msg="slices published"' "$DIR/driver.log" | sed -E 's/^ts=([^ ]+) .*/\1/')
  [ -n "$slice_ts" ] || { echo "start-up: no \"slices published\" line in the driver's log"; return; }
  slice_ms=$(date -d "$slice_ts" +%s%3N)
  awk -v e="$exec_ms" -v r="$reg_ms" -v s="$slice_ms" 'BEGIN {
    m = r > s ? r : s
    printf "%-44s %d ms (registered with the kubelet after %d ms, slice published after %d ms)\n",
      "start-up: exec to registered and published", m - e, r - e, s - e }'
}
mapfile -t DEVICES < <(slice_devices | sort)
log "driver pid $PID publishes ${#DEVICES[@]} devices"

# --- measurements -----------------------------------------------------------------------------------------
snapshot() { # LABEL: one line of the driver's memory figures
  printf '%-44s VmRSS=%s (anon %s, file %s, shmem %s)  VmHWM=%s  threads=%s\n' "$1" \
    "$(mb "$(status_kb "$PID" VmRSS)")" "$(mb "$(status_kb "$PID" RssAnon)")" "$(mb "$(status_kb "$PID" RssFile)")" \
    "$(mb "$(status_kb "$PID" RssShmem)")" "$(mb "$(status_kb "$PID" VmHWM)")" "$(status_kb "$PID" Threads)"
  SNAPSHOTS=$((${SNAPSHOTS:-0} + 1))
  cp "/proc/$PID/smaps" "$WORK/smaps.$SNAPSHOTS" 2>/dev/null || true  # for a closer look (LIKEN_BENCH_KEEP=1)
}
idle_window() { # LABEL: CPU, slice writes and the API server's requests over IDLE_SECONDS
  local t0 t1 n0 n1 w0 w1 hz r0 r1
  hz=$(getconf CLK_TCK)
  t0=$(cpu_ticks "$PID"); n0=$(cpu_ns "$PID"); w0=$(metric liken_slice_writes_total); r0=$(request_counts)
  sleep "$IDLE_SECONDS"
  t1=$(cpu_ticks "$PID"); n1=$(cpu_ns "$PID"); w1=$(metric liken_slice_writes_total); r1=$(request_counts)
  awk -v l="$1" -v d=$((t1 - t0)) -v ns=$((n1 - n0)) -v hz="$hz" -v s="$IDLE_SECONDS" -v w=$((w1 - w0)) 'BEGIN {
    printf "%-44s CPU %.3f s over %d s (%.3f%% of a core; by schedstat %.4f%%), slice writes %d\n", l, d / hz, s,
      100 * d / hz / s, 100 * ns / 1e9 / s, w }'
  printf '%-44s API server: %s\n' "" "$(request_delta "$r0" "$r1")"
}
rss_by_mapping() { # the largest resident mappings: shared libraries by file, heap, thread stacks and anonymous
  awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anon]" : $6); sub(/.*\//, "", name); next }
       /^Rss:/ { rss[name] += $2 }
       END { for (n in rss) if (rss[n] >= 256) printf "%s %d\n", n, rss[n] }' "/proc/$PID/smaps" |
    sort -k2 -rn | head -n 12 | awk '{ printf "%s %.1f MB  ", $1, $2 / 1024 } END { print "" }'
}
threads_by_name() {
  for t in /proc/"$PID"/task/*; do cat "$t/comm"; done | sed -E 's/[0-9]+$/N/' | sort | uniq -c | sort -rn |
    awk '{ printf "%s x%d  ", $2, $1 } END { print "" }'
}

echo "liken-dra daemon footprint: $(basename "$RECORDING") (${#DEVICES[@]} devices published), $CLAIMS claims," \
  "pods=$PODS, idle window ${IDLE_SECONDS}s"
/usr/bin/time -f '%M' -o "$WORK/bare.kb" "$DRA" healthcheck --help >/dev/null
printf '%-44s maxRSS=%s\n' "baseline: liken-dra healthcheck --help" "$(mb "$(cat "$WORK/bare.kb")")"
floor_line() { # LABEL MODE [ARG...]: one liken_library_floor figure line in MB
  local label=$1
  shift
  "$FLOOR" "$@" | awk -v l="$label" '{
    for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-44s VmRSS=%.1f MB (anon %.1f MB, file %.1f MB)  threads=%s\n", l, v["VmRSS"] / 1024, v["RssAnon"] / 1024, v["RssFile"] / 1024, v["Threads"] }'
}
if [ -x "$FLOOR" ]; then
  floor_line "baseline: the libraries' binary, bare" bare
  floor_line "baseline: a gRPC server alone" grpc-server "$WORK/floor.sock"
  rm -f "$WORK/floor.sock"
  floor_line "baseline: the API client alone, after a GET" http-client "$LIKEN_CLUSTER_DIR/driver.kubeconfig"
  floor_line "baseline: both in one process" both "$WORK/floor.sock" "$LIKEN_CLUSTER_DIR/driver.kubeconfig"
fi
printf '%-44s API server: %s over %ds\n' "baseline: the control plane alone" "$API_BASELINE" "$IDLE_SECONDS"
startup_line

wait_until 30 test -S "$DIR/kubelet/plugins_registry/liken.sh-reg.sock" || { log "no registration socket"; exit 1; }
sleep 5  # the first reconcile passes and the claim refresh settle
snapshot "baseline: driver idle, 0 claims"
idle_window "baseline: driver idle, 0 claims"

# --- claims -----------------------------------------------------------------------------------------------
log "creating $CLAIMS claims"
k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bench.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh"'}
YAML
{
  for ((i = 0; i < CLAIMS; i++)); do
    printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: bench-%d, namespace: default}\nspec:\n  devices:\n    requests:\n    - name: dev\n      exactly: {deviceClassName: bench.liken.sh}\n' "$i"
  done
} >"$WORK/claims.yaml"
k create -f "$WORK/claims.yaml" >/dev/null
log "allocating them (status.allocation) round-robin over the node's devices"
allocate() { # INDEX DEVICE
  api_curl -o /dev/null -X PATCH -H "Content-Type: application/merge-patch+json" \
    --data "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"dev\",\"driver\":\"liken.sh\",\"pool\":\"$NODE\",\"device\":\"$2\"}]}}}}" \
    "$API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/bench-$1/status" || log "allocating bench-$1 failed"
}
jobs=()
for ((i = 0; i < CLAIMS; i++)); do
  allocate "$i" "${DEVICES[$((i % ${#DEVICES[@]}))]}" &
  jobs+=($!)
  if ((${#jobs[@]} == 8)); then wait "${jobs[@]}"; jobs=(); fi  # not a bare wait: the driver is a job too
done
((${#jobs[@]} == 0)) || wait "${jobs[@]}"
k get resourceclaims -n default -o json |
  jq -r '.items[] | select(.metadata.name | startswith("bench-")) | select(.status.allocation != null) |
         "\(.metadata.namespace) \(.metadata.name) \(.metadata.uid)"' >"$WORK/claims.txt"
log "$(wc -l <"$WORK/claims.txt") claims allocated"

if [ "$PODS" = 1 ]; then
  log "creating $CLAIMS pods bound to $NODE"
  {
    for ((i = 0; i < CLAIMS; i++)); do
      printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: bench-%d, namespace: default}\nspec:\n  nodeName: %s\n  containers:\n  - name: c\n    image: registry.invalid/pause:none\n    resources:\n      claims: [{name: dev}]\n  resourceClaims:\n  - name: dev\n    resourceClaimName: bench-%d\n' "$i" "$NODE" "$i"
    done
  } >"$WORK/pods.yaml"
  k create -f "$WORK/pods.yaml" >/dev/null
fi

"$PREPARE" --kubelet-root "$DIR/kubelet" --claims "$WORK/claims.txt" --batch 100
log "prepared claims (metric): $(metric liken_prepared_claims)"
sleep 5  # settle: the claim cache, the next reconcile pass
snapshot "driver idle, $(metric liken_prepared_claims) prepared claims"
idle_window "driver idle, $(metric liken_prepared_claims) prepared claims"
snapshot "driver after the idle window"
echo "threads: $(threads_by_name)"
echo "largest resident mappings: $(rss_by_mapping)"
