#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for integration tests: etcd, kube-apiserver, kube-scheduler and
# kube-controller-manager, plus a fake Node object (no kubelet) that the scheduler can place pods on.
#
#   hack/local-cluster.sh up     start it (binaries from hack/build-control-plane.sh), print the env lines
#   hack/local-cluster.sh down   stop every process `up` started (tracked by PID in the state dir)
#   hack/local-cluster.sh env    print the env lines for a running cluster
#   hack/local-cluster.sh restart COMPONENT   restart one component with its original arguments
#   NODE_NAME=node-b hack/local-cluster.sh add-node   add another fake Node
#   usage: eval "$(hack/local-cluster.sh up)"; kubectl get nodes
#
# `up` prints on stdout only:
#   export KUBECONFIG=<state dir>/admin.kubeconfig      (user "admin", group system:masters, client cert)
#   export LIKEN_K8S_BIN=<dir with kubectl, helm, ...>
# and writes <state dir>/driver.kubeconfig for ServiceAccount liken-system/liken-dra (a TokenRequest token), with the
# ServiceAccount and RBAC rendered from the Helm chart (charts/liken-dra) exactly as it ships them (unless
# LIKEN_APPLY_DRIVER_RBAC=0; LIKEN_DRIVER_ACCOUNT=0 creates neither, for a test that installs the chart with helm).
# The chart's admission policy is not applied here: it needs pod-bound tokens
# (test/cluster/chart.sh checks it).
#
# The node: created as ${NODE_NAME:-node-a} with allocatable pods/cpu/memory and a Ready condition. Nothing posts
# heartbeats for it, so the node-lifecycle-controller is disabled (it would mark the node Unknown after
# --node-monitor-grace-period and taint it unreachable) and so is the TaintNodesByCondition admission plugin (it
# taints every new Node node.kubernetes.io/not-ready, a taint that only the node-lifecycle-controller removes).
#
# Environment: K8S_VERSION (the release, default v1.37.2), LIKEN_CLUSTER_DIR (state dir, default /tmp/liken-cluster),
# NODE_NAME, LIKEN_K8S_BIN (skip the build and use these binaries), LIKEN_FEATURE_GATES (default: see below), ports LIKEN_APISERVER_PORT
# (6443), LIKEN_ETCD_PORT (2379), LIKEN_ETCD_PEER_PORT (2380), LIKEN_SCHEDULER_PORT (10259), LIKEN_KCM_PORT (10257),
# LIKEN_UP_TIMEOUT (seconds to wait for readiness, default 120).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
STATE=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
NODE_NAME=${NODE_NAME:-node-a}
# DRAConsumableCapacity keeps ResourceSlice devices' allowMultipleAllocations (and capacity sharing); it is alpha
# (off) in 1.34/1.35 and beta (on) from 1.36. Unset, the gates are the release's defaults as an operator's cluster
# has them (hack/lib/k8s-release.sh: none before 1.36, DRAConsumableCapacity=true from 1.36), so that the
# scenarios meet an old release's degraded behaviour; LIKEN_FEATURE_GATES=DRAConsumableCapacity=true turns it on.
. "$HERE/lib/k8s-release.sh"
FEATURE_GATES=${LIKEN_FEATURE_GATES-$(k8s_default_gates)}
APISERVER_PORT=${LIKEN_APISERVER_PORT:-6443}
ETCD_PORT=${LIKEN_ETCD_PORT:-2379}
ETCD_PEER_PORT=${LIKEN_ETCD_PEER_PORT:-2380}
SCHEDULER_PORT=${LIKEN_SCHEDULER_PORT:-10259}
KCM_PORT=${LIKEN_KCM_PORT:-10257}
UP_TIMEOUT=${LIKEN_UP_TIMEOUT:-120}
COMPONENTS=(etcd kube-apiserver kube-scheduler kube-controller-manager) # start order; stopped in reverse

PKI="$STATE/pki"
PIDS="$STATE/pids"
LOGS="$STATE/logs"
ADMIN_KUBECONFIG="$STATE/admin.kubeconfig"
SERVER="https://127.0.0.1:$APISERVER_PORT"

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# --- process tracking ---------------------------------------------------------------------------------------------

. "$HERE/lib/pids.sh"

# Starts a component in its own session (so that `down` can signal its whole process group), logging to logs/.
start() {
  local name=$1
  shift
  printf '%q ' "$@" >"$STATE/$name.args" # for `restart`
  setsid "$BIN/$name" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
}

# Restarts one running component with the arguments it was started with (tests: an API server restart).
restart() {
  local name=$1 args
  running || die "not running (state dir $STATE); run: $0 up"
  [ -f "$STATE/$name.args" ] || die "unknown component $name"
  BIN=$(cat "$STATE/bin-dir")
  args=$(cat "$STATE/$name.args")
  stop_one "$name"
  eval "start $name $args"
  case "$name" in
    kube-apiserver) wait_for "kube-apiserver /readyz" kube-apiserver kc get --raw /readyz ;;
    etcd) wait_for "etcd" etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" ;;
  esac
  log "restarted $name"
}

# Adds another fake Node ($NODE_NAME) to a running cluster.
add_node() {
  running || die "not running (state dir $STATE); run: $0 up"
  BIN=$(cat "$STATE/bin-dir")
  K8S_GIT_VERSION=$("$BIN/kubectl" version --client -o json 2>/dev/null |
    sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n 1)
  create_node
  log "node $NODE_NAME added"
}

# Stops one component: SIGTERM to its process group, SIGKILL after 15s, then waits until it is gone.
stop_one() {
  local name=$1 pid deadline
  pid_alive "$name" || { rm -f "$PIDS/$name.pid"; return 0; }
  pid=$(cat "$PIDS/$name.pid")
  log "stopping $name (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name (pid $pid) did not stop on SIGTERM; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$PIDS/$name.pid"
}

# Stops the components in reverse start order, each before the next (the apiserver shuts down cleanly only while
# etcd is still there).
stop_all() {
  local i
  [ -d "$PIDS" ] || return 0
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_one "${COMPONENTS[$i]}"; done
}

running() {
  local name
  for name in "${COMPONENTS[@]}"; do pid_alive "$name" || return 1; done
}

# --- certificates and kubeconfigs ---------------------------------------------------------------------------------

gen_pki() {
  local rc
  mkdir -p "$PKI"
  set +e # a subshell on the left of || would run with errexit off; check its status explicitly instead
  (
    set -e
    cd "$PKI"
    exec 2>openssl.log
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=liken-local-ca" -out ca.crt
    # name, subject, extensions
    issue() {
      openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 3650 \
        -extfile "$1.ext" -out "$1.crt"
      rm -f "$1.csr" "$1.ext"
    }
    local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    issue apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    issue admin "/O=system:masters/CN=admin" "$client"
    issue scheduler "/CN=system:kube-scheduler" "$client"
    issue controller-manager "/CN=system:kube-controller-manager" "$client"
    # The apiserver's aggregation-layer client; configuring it also gives the scheduler and controller manager the
    # requestheader CA they look for (without it they log "missing content for CA bundle" errors every second).
    issue front-proxy-client "/CN=front-proxy-client" "$client"
    # Service-account token signing key pair.
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key
    openssl pkey -in sa.key -pubout -out sa.pub
  )
  rc=$?
  set -e
  [ $rc -eq 0 ] || { cat "$PKI/openssl.log" >&2; die "certificate generation failed"; }
}

b64() { base64 -w0 <"$1"; }

# $1 output file, $2 user name, then either "cert <name>" or "token <token>".
write_kubeconfig() {
  local out=$1 user=$2 kind=$3 cred=$4 auth
  if [ "$kind" = cert ]; then
    auth="    client-certificate-data: $(b64 "$PKI/$cred.crt")
    client-key-data: $(b64 "$PKI/$cred.key")"
  else
    auth="    token: $cred"
  fi
  umask 077
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: liken-local
  cluster:
    server: $SERVER
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $user
  user:
$auth
contexts:
- name: liken-local
  context:
    cluster: liken-local
    user: $user
current-context: liken-local
EOF
}

# --- readiness ----------------------------------------------------------------------------------------------------

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# $1 what, $2 component whose log to show on failure, then a command that succeeds when ready.
wait_for() {
  local what=$1 comp=$2 deadline=$((SECONDS + UP_TIMEOUT))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ -n "$comp" ] && ! pid_alive "$comp"; then
      log "$comp exited while waiting for $what; last log lines:"
      tail -n 40 "$LOGS/$comp.log" >&2 || true
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "timed out after ${UP_TIMEOUT}s waiting for $what; last log lines of $comp:"
      tail -n 40 "$LOGS/$comp.log" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

kc() { "$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }
healthz() { curl -ksf --max-time 2 "https://127.0.0.1:$1/healthz"; }

print_env() {
  echo "export KUBECONFIG=$ADMIN_KUBECONFIG"
  echo "export LIKEN_K8S_BIN=$(cat "$STATE/bin-dir")"
}

# --- up -----------------------------------------------------------------------------------------------------------

create_node() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $NODE_NAME
  labels:
    kubernetes.io/hostname: $NODE_NAME
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec: {}
EOF
  kc patch node "$NODE_NAME" --subresource=status --type=merge -p "{\"status\":{
    \"capacity\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"100Gi\"},
    \"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"100Gi\"},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",
      \"message\":\"fake node for liken-dra tests (no kubelet)\",\"lastHeartbeatTime\":\"$now\",
      \"lastTransitionTime\":\"$now\"}],
    \"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"},{\"type\":\"Hostname\",\"address\":\"$NODE_NAME\"}],
    \"nodeInfo\":{\"architecture\":\"amd64\",\"operatingSystem\":\"linux\",\"kubeletVersion\":\"$K8S_GIT_VERSION\",
      \"bootID\":\"\",\"containerRuntimeVersion\":\"\",\"kernelVersion\":\"\",\"kubeProxyVersion\":\"\",
      \"machineID\":\"\",\"osImage\":\"\",\"systemUUID\":\"\"}}}" >/dev/null
  # No taints at all: nothing would remove them without a kubelet and the node-lifecycle-controller.
  kc patch node "$NODE_NAME" --type=json -p '[{"op":"remove","path":"/spec/taints"}]' >/dev/null 2>&1 || true
}

setup_driver_account() {
  local token
  kc create namespace liken-system --dry-run=client -o yaml | kc apply -f - >/dev/null
  if [ "${LIKEN_APPLY_DRIVER_RBAC:-1}" != 0 ] && [ -x "$BIN/helm" ]; then
    "$BIN/helm" template liken "$REPO/charts/liken-dra" --namespace liken-system \
      --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | kc apply -f - >/dev/null
  else
    kc -n liken-system create serviceaccount liken-dra --dry-run=client -o yaml | kc apply -f - >/dev/null
  fi
  token=$(kc -n liken-system create token liken-dra --duration=8760h)
  write_kubeconfig "$STATE/driver.kubeconfig" liken-dra token "$token"
}

up() {
  local p gates bin
  if running; then
    log "already running (state dir $STATE)"
    print_env
    return 0
  fi
  stop_all # leftovers of a half-dead cluster
  rm -rf "$STATE"
  mkdir -p "$STATE" "$PIDS" "$LOGS"
  UP_DONE=0
  trap 'if [ "$UP_DONE" != 1 ]; then log "up failed; stopping what was started (logs in $LOGS)"; stop_all; fi' EXIT
  trap 'exit 130' INT TERM

  if [ -n "${LIKEN_K8S_BIN:-}" ]; then
    BIN=$LIKEN_K8S_BIN
  else
    BIN=$(LIKEN_BUILD_PARTS=control-plane "$HERE/build-control-plane.sh" | tail -n 1)
  fi
  for bin in etcd kube-apiserver kube-scheduler kube-controller-manager kubectl; do
    [ -x "$BIN/$bin" ] || die "missing $BIN/$bin"
  done
  echo "$BIN" >"$STATE/bin-dir"
  K8S_GIT_VERSION=$("$BIN/kubectl" version --client -o json 2>/dev/null |
    sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n 1)
  log "kubernetes ${K8S_GIT_VERSION:-?} from $BIN; state in $STATE"

  for p in "$APISERVER_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$SCHEDULER_PORT" "$KCM_PORT"; do
    port_free "$p" || die "port 127.0.0.1:$p is in use (another cluster? try: $0 down)"
  done

  gen_pki
  write_kubeconfig "$ADMIN_KUBECONFIG" admin cert admin
  write_kubeconfig "$STATE/scheduler.kubeconfig" system:kube-scheduler cert scheduler
  write_kubeconfig "$STATE/controller-manager.kubeconfig" system:kube-controller-manager cert controller-manager
  gates=()
  [ -z "$FEATURE_GATES" ] || gates=(--feature-gates "$FEATURE_GATES")

  start etcd --name liken --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "liken=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --log-level warn
  wait_for "etcd" etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  start kube-apiserver \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --requestheader-client-ca-file "$PKI/ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --authorization-mode Node,RBAC \
    --allow-privileged=true \
    --disable-admission-plugins TaintNodesByCondition \
    "${gates[@]}"
  wait_for "kube-apiserver /readyz" kube-apiserver kc get --raw /readyz

  cat >"$STATE/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $STATE/scheduler.kubeconfig
leaderElection:
  leaderElect: false
EOF
  start kube-scheduler --config "$STATE/scheduler.yaml" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --cert-dir "$STATE/scheduler-certs" \
    "${gates[@]}"

  start kube-controller-manager --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --cert-dir "$STATE/controller-manager-certs" \
    --leader-elect=false --use-service-account-credentials=true \
    --controllers '*,-node-lifecycle-controller' \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    "${gates[@]}"

  wait_for "kube-scheduler /healthz" kube-scheduler healthz "$SCHEDULER_PORT"
  wait_for "kube-controller-manager /healthz" kube-controller-manager healthz "$KCM_PORT"
  create_node
  [ "${LIKEN_DRIVER_ACCOUNT:-1}" = 0 ] || setup_driver_account
  # Pods need the namespace's default ServiceAccount, which the controller manager creates.
  wait_for "default ServiceAccount" kube-controller-manager kc -n default get serviceaccount default
  UP_DONE=1
  log "up: node $NODE_NAME ready; admin kubeconfig $ADMIN_KUBECONFIG, driver kubeconfig $STATE/driver.kubeconfig"
  print_env
}

case "${1:-}" in
  up) up ;;
  down)
    stop_all
    log "down (state kept in $STATE)"
    ;;
  env)
    running || die "not running (state dir $STATE); run: $0 up"
    print_env
    ;;
  restart) restart "${2:?usage: $0 restart COMPONENT}" ;;
  add-node) add_node ;;
  *)
    echo "usage: $0 up|down|env|restart COMPONENT|add-node" >&2
    exit 2
    ;;
esac
