#!/usr/bin/env bash
# Benchmark: many nodes, simulated. Prints figures; asserts nothing.
#
# Brings up the local control plane (hack/local-cluster.sh, its own state dir and ports), then runs real
# `liken-dra run` daemons, each as a different Node (hack/local-cluster.sh add-node) on its own recorded machine
# (test/machines/*.umockdev under umockdev-run, taken in turn), each with its own kubelet root, CDI root and
# metrics port, --no-uevents. For each step of LIKEN_SCALE_STEPS (default "1 10 50" drivers) it waits until every
# driver published its slice, lets them idle, and prints over LIKEN_SCALE_WINDOW seconds (default 90, more than
# one --resync-period of the drivers):
#   the API server's requests per second (its own /metrics, apiserver_request_total, WATCH excluded: a watch is
#   counted when it ends) and the requests of the kinds the driver makes (GET nodes, resourceslices, pods,
#   resourceclaims), its open watches (apiserver_longrunning_requests), and its VmRSS;
#   the drivers' total RSS and CPU.
# Baseline in the same run: the same figures for the control plane with no driver (the scheduler's and the
# controller-manager's own traffic).
# Then, with all drivers running, it churns claims and pods bound to the first node (LIKEN_SCALE_CHURN cycles of
# create claim + pod, delete both) and prints the watch events (ADDED/MODIFIED/DELETED, from each driver's
# liken_watch_events_total) that every other node received meanwhile (should be 0), and those the churned node
# received (the control: counting works).
#
#   test/controller/scale_benchmark.sh
#
# Environment: LIKEN_DRA (default build/liken-dra), LIKEN_SCALE_STEPS, LIKEN_SCALE_WINDOW, LIKEN_SCALE_CHURN (20),
# LIKEN_SCALE_METRICS_BASE (9600: driver i listens on base+i), LIKEN_SCALE_DRIVER_FLAGS (extra `liken-dra run`
# flags), LIKEN_BENCH_KEEP=1 keeps the work directory. The control plane uses LIKEN_CLUSTER_DIR (default: in the
# work directory) and ports 16443/12379/12380/20259/20257 unless LIKEN_APISERVER_PORT, LIKEN_ETCD_PORT,
# LIKEN_ETCD_PEER_PORT, LIKEN_SCHEDULER_PORT, LIKEN_KCM_PORT say otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=test/lib/bench.sh
source "$REPO/test/lib/bench.sh"
WAIT_POLL_SECONDS=0.5
DRA=${LIKEN_DRA:-$REPO/build/liken-dra}
read -r -a STEPS <<<"${LIKEN_SCALE_STEPS:-1 10 50}"
WINDOW=${LIKEN_SCALE_WINDOW:-90}
CHURN=${LIKEN_SCALE_CHURN:-20}
METRICS_BASE=${LIKEN_SCALE_METRICS_BASE:-9600}
RECORDINGS=("$REPO"/test/machines/*.umockdev)
export LIKEN_APISERVER_PORT=${LIKEN_APISERVER_PORT:-16443}
export LIKEN_ETCD_PORT=${LIKEN_ETCD_PORT:-12379}
export LIKEN_ETCD_PEER_PORT=${LIKEN_ETCD_PEER_PORT:-12380}
export LIKEN_SCHEDULER_PORT=${LIKEN_SCHEDULER_PORT:-20259}
export LIKEN_KCM_PORT=${LIKEN_KCM_PORT:-20257}

[ -x "$DRA" ] || { echo "no driver binary at $DRA (build first)" >&2; exit 1; }
command -v umockdev-run >/dev/null || { echo "umockdev-run is not installed" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 1; }
((${#RECORDINGS[@]} > 0)) || { echo "no recordings in test/machines" >&2; exit 1; }

WORK=$(mktemp -d /dev/shm/liken-scale-bench.XXXXXX)
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-$WORK/cluster}
GROUPS_STARTED=()  # the drivers' process groups (umockdev-run, started with setsid)

log() { echo "scale-bench: $*" >&2; }

cleanup() {
  local rc=$?
  stop_groups "${GROUPS_STARTED[@]}"
  if [ $rc -ne 0 ]; then
    local f=$WORK/sim-1/driver.log
    if [ -f "$f" ]; then echo "--- tail of $f" >&2; tail -n 20 "$f" >&2; fi
  fi
  finish_work "$REPO" "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$("$REPO/hack/local-cluster.sh" up)"
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }
APISERVER_PID=$(cat "$LIKEN_CLUSTER_DIR/pids/kube-apiserver.pid")

api_setup "$WORK"
HZ=$(getconf CLK_TCK)

# --- drivers -------------------------------------------------------------------------------------------------
DRIVER_PIDS=()  # index i-1: driver i's pid (umockdev-run's child)
start_driver() { # I
  local i=$1 node="sim-$1" dir="$WORK/sim-$1" rec group child
  rec=${RECORDINGS[$(((i - 1) % ${#RECORDINGS[@]}))]}
  NODE_NAME=$node "$REPO/hack/local-cluster.sh" add-node 2>/dev/null
  mkdir -p "$dir/kubelet/plugins_registry" "$dir/kubelet/plugins" "$dir/cdi"
  # shellcheck disable=SC2086
  TMPDIR=/dev/shm setsid umockdev-run -d "$rec" -- \
    "$DRA" run --node-name "$node" --kubeconfig "$LIKEN_CLUSTER_DIR/driver.kubeconfig" --no-uevents \
    --kubelet-root "$dir/kubelet" --cdi-root "$dir/cdi" --metrics-address "127.0.0.1:$((METRICS_BASE + i))" \
    ${LIKEN_SCALE_DRIVER_FLAGS:-} >>"$dir/driver.log" 2>&1 </dev/null &
  group=$!
  GROUPS_STARTED+=("$group")
  child=""
  for _ in $(seq 1200); do  # umockdev-run loads a large recording slowly on a busy machine
    child=$(awk '{print $1}' "/proc/$group/task/$group/children" 2>/dev/null || true)
    [ -n "$child" ] && [ "$(basename "$(readlink "/proc/$child/exe" 2>/dev/null)")" = "$(basename "$DRA")" ] && break
    child=""
    sleep 0.1
  done
  [ -n "$child" ] || { log "driver $node did not start"; exit 1; }
  DRIVER_PIDS+=("$child")
}
nodes_published() { # N: every sim node 1..N has a slice
  local have
  have=$(k get resourceslices -o json | jq '[.items[].spec.nodeName | select(startswith("sim-"))] | unique | length')
  [ "$have" -ge "$1" ]
}
driver_metric() { # I NAME [FILTER]: sum of the metric's samples of driver I
  curl -s --max-time 2 "http://127.0.0.1:$((METRICS_BASE + $1))/metrics" |
    awk -v name="$2" -v filter="${3:-}" '$1 ~ "^"name"({|$)" && index($1, filter) { s += $2 } END { printf "%d\n", s }'
}
changes_received() { # I: watch events that change something (not bookmarks) driver I received so far
  local a m d
  a=$(driver_metric "$1" liken_watch_events_total 'type="ADDED"')
  m=$(driver_metric "$1" liken_watch_events_total 'type="MODIFIED"')
  d=$(driver_metric "$1" liken_watch_events_total 'type="DELETED"')
  echo $((a + m + d))
}
drivers_figures() { # RSS (MB) and CPU ticks of all drivers: "rss_kb ticks"
  local p rss=0 t=0
  for p in "${DRIVER_PIDS[@]}"; do
    rss=$((rss + $(status_kb "$p" VmRSS)))
    t=$((t + $(cpu_ticks "$p")))
  done
  echo "$rss $t"
}

# One idle window: prints the API server's figures (and the drivers', when there are any).
measure() { # LABEL
  local label=$1 before after rss1 t0 t1 drv
  before=$(request_counts)
  drv=$(drivers_figures); t0=${drv#* }
  sleep "$WINDOW"
  after=$(request_counts)
  drv=$(drivers_figures); t1=${drv#* }; rss1=${drv% *}
  join -a 1 -e 0 -o 0,1.2,2.2 <(echo "$after") <(echo "$before") |
    awk -v w="$WINDOW" -v label="$label" -v rss="$(status_kb "$APISERVER_PID" VmRSS)" '
      { delta[$1] = $2 - $3; now[$1] = $2 }
      END {
        printf "%-30s API server: %.2f requests/s (%d in %d s), open watches %d, VmRSS %.1f MB\n", label,
          delta["all"] / w, delta["all"], w, now["open-watches"], rss / 1024
        line = ""
        for (k in delta) if (k != "all" && k != "open-watches" && delta[k] > 0) line = line sprintf("%s %d, ", k, delta[k])
        printf "%-30s   requests of the kinds a driver makes: %s\n", "", (line == "" ? "none" : line)
      }'
  if ((${#DRIVER_PIDS[@]} > 0)); then
    awk -v n="${#DRIVER_PIDS[@]}" -v rss="$rss1" -v d=$((t1 - t0)) -v hz="$HZ" -v w="$WINDOW" -v label="$label" 'BEGIN {
      printf "%-30s   drivers: %d, RSS %.1f MB in all (%.1f MB each), CPU %.3f%% of a core each\n", "", n,
        rss / 1024, rss / 1024 / n, 100 * d / hz / w / n }'
  fi
}

echo "liken-dra at scale: steps ${STEPS[*]} drivers, idle windows of ${WINDOW}s, recordings:" \
  "$(for r in "${RECORDINGS[@]}"; do basename "$r" .umockdev; done | tr '\n' ' ')"
sleep 10  # the control plane's start-up traffic settles
measure "baseline: no driver"

started=0
for n in "${STEPS[@]}"; do
  t_start=$SECONDS
  while ((started < n)); do
    started=$((started + 1))
    start_driver "$started"
  done
  wait_until 600 nodes_published "$n" || { log "not every node published its slice"; exit 1; }
  echo "$n drivers: all slices published $((SECONDS - t_start)) s after the first new driver started"
  sleep 10  # the first passes settle
  measure "$n drivers idle"
done

# --- churn on one node, silence on the others -------------------------------------------------------------------
k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: scale.liken.sh}
spec:
  selectors:
  - cel: {expression: 'device.driver == "liken.sh"'}
YAML
declare -a BEFORE
for ((i = 1; i <= started; i++)); do BEFORE[i]=$(changes_received "$i"); done
for ((c = 0; c < CHURN; c++)); do
  cat <<YAML | k apply -f - >/dev/null
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: churn-$c, namespace: default}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: scale.liken.sh}
---
apiVersion: v1
kind: Pod
metadata: {name: churn-$c, namespace: default}
spec:
  nodeName: sim-1
  containers:
  - name: c
    image: registry.invalid/pause:none
    resources:
      claims: [{name: dev}]
  resourceClaims:
  - name: dev
    resourceClaimName: churn-$c
YAML
  k delete pod "churn-$c" --grace-period=0 --force >/dev/null 2>&1
  k delete resourceclaim "churn-$c" --wait=false >/dev/null
done
sleep 5  # the last events arrive
others=0; max_other=0
for ((i = 2; i <= started; i++)); do
  d=$(($(changes_received "$i") - BEFORE[i]))
  others=$((others + d))
  ((d > max_other)) && max_other=$d
done
churned=$(($(changes_received 1) - BEFORE[1]))
echo "churn: $CHURN claims and pods bound to sim-1 created and deleted"
echo "  watch events (ADDED/MODIFIED/DELETED) received by the $((started - 1)) other nodes: $others in all," \
  "at most $max_other on one node"
echo "  received by sim-1 itself (the control): $churned"
