#!/usr/bin/env bash
# A real Kubernetes node on this machine for the local control plane (hack/local-cluster.sh): containerd v2 with
# runc, CDI and bridge networking, and the upstream kubelet, registered as the node `localhost`. Nothing listens on
# anything but 127.0.0.1 and pods get no route off the machine.
#
#   hack/local-node.sh up [ARCHIVE...]  clean up leftovers, start containerd and the kubelet, import the OCI image
#                                       archives (and those in $LIKEN_NODE_IMAGES), wait for the node to be Ready
#   hack/local-node.sh down             stop everything `up` started and remove every trace of it (see `leftovers`)
#   hack/local-node.sh import ARCHIVE...  import OCI image archives into the running node (namespace k8s.io)
#   hack/local-node.sh restart kubelet|containerd   restart one daemon with its configuration
#   hack/local-node.sh reboot [COMMAND...]  a simulated power cycle that keeps the disks (see reboot_node); COMMAND
#                                       runs while the node is down
#   hack/local-node.sh leftovers        print what a node left behind on this machine; exit 1 if anything
#   hack/local-node.sh env              print the env lines for the running node
#   usage: eval "$(NODE_NAME=localhost hack/local-cluster.sh up)"; eval "$(hack/local-node.sh up img.tar)"
#
# `up` prints on stdout only:
#   export LIKEN_NODE_DIR=<state dir>  LIKEN_NODE_NAME=localhost  CONTAINER_RUNTIME_ENDPOINT=unix://<socket>
#   export LIKEN_NODE_KUBELET_ROOT=<kubelet --root-dir>  LIKEN_NODE_CDI_ROOT=<containerd's CDI spec dir>
#   export LIKEN_NODE_METADATA_ROOT=<the driver's device metadata directory>
#
# The control plane must be running (LIKEN_CLUSTER_DIR, default /tmp/liken-cluster): the kubelet's client
# certificate (system:node:localhost) is issued by its CA. Start the cluster with NODE_NAME=localhost: the kubelet
# takes over that Node object; a fake node without a kubelet would get DaemonSet pods that never run.
#
# Why `localhost`: the kubelet refuses a loopback --node-ip, and the API server reaches a kubelet (logs, exec) by
# the node's Hostname address first; `localhost` resolves to 127.0.0.1 from /etc/hosts, so nothing asks a DNS server.
# The API server has no kubelet client certificate, so the kubelet allows anonymous requests, on 127.0.0.1 only.
#
# State lives in LIKEN_NODE_DIR (default /var/lib/liken-node): containerd's root and state, the kubelet's root dir,
# the CDI spec dir, CNI configuration and IP allocations, pod logs; `logs/` is kept by `down` for diagnosis.
# The programs also use fixed paths outside it, which `down` cleans: /run/containerd/s (shim sockets; only those no
# process serves, as another containerd on the machine may share the directory), /run/containerd/runc/k8s.io,
# /var/lib/cni (libcni's result cache), /var/lib/kubelet/device-plugins (the device-plugin socket),
# /var/log/containers (the kubelet's log symlinks), /run/netns/cni-* (pod network namespaces), the bridge
# liken-cni0, and the cgroups the kubelet and runc made (kubepods in every hierarchy).
#
# Environment: LIKEN_NODE_DIR, LIKEN_CLUSTER_DIR, LIKEN_K8S_BIN (skip the build; binaries as from
# hack/build-control-plane.sh), LIKEN_NODE_IMAGES (archives to import), LIKEN_SANDBOX_IMAGE (the pause image's
# name, default liken.sh/pause:3.10), LIKEN_POD_CIDR (default 10.244.0.0/24), LIKEN_KUBELET_PORT (10250),
# LIKEN_UP_TIMEOUT (seconds, default 120).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${LIKEN_NODE_DIR:-/var/lib/liken-node}
CLUSTER=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
NODE=localhost
SANDBOX_IMAGE=${LIKEN_SANDBOX_IMAGE:-liken.sh/pause:3.10}
POD_CIDR=${LIKEN_POD_CIDR:-10.244.0.0/24}
KUBELET_PORT=${LIKEN_KUBELET_PORT:-10250}
UP_TIMEOUT=${LIKEN_UP_TIMEOUT:-120}
BRIDGE=liken-cni0
CNI_NETWORK=liken-node
CNI_BIN=/usr/lib/cni

RUN="$STATE/run"           # containerd's state dir and sockets
SOCK="$RUN/containerd.sock"
KUBELET_ROOT="$STATE/kubelet"
CDI_ROOT="$STATE/cdi"
METADATA_ROOT="$STATE/metadata"  # the driver's device metadata files (the chart's metadataRoot)
LOGS="$STATE/logs"
PIDS="$STATE/pids"
# Paths outside the state dir that containerd, runc, libcni and the kubelet write to.
FIXED_DIRS=(/run/containerd /var/lib/cni /var/lib/kubelet /var/log/containers)

log() { echo "local-node: $*" >&2; }
die() { log "$*"; exit 1; }

find_bin() {
  if [ -n "${LIKEN_K8S_BIN:-}" ]; then
    BIN=$LIKEN_K8S_BIN
  elif [ -f "$STATE/bin-dir" ]; then
    BIN=$(cat "$STATE/bin-dir")
  else
    BIN=$(LIKEN_BUILD_PARTS=node "$HERE/build-control-plane.sh" | tail -n 1)
  fi
  local b
  for b in kubelet containerd containerd-shim-runc-v2 ctr crictl kubectl; do
    [ -x "$BIN/$b" ] || die "missing $BIN/$b (run hack/build-control-plane.sh)"
  done
}

# --- processes ----------------------------------------------------------------------------------------------------

. "$HERE/lib/pids.sh"

start() {
  local name=$1
  shift
  mkdir -p "$PIDS" "$LOGS"
  printf '%q ' "$@" >"$STATE/$name.args"
  setsid "$BIN/$name" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
}

# Stops a daemon by its recorded PID: SIGTERM, SIGKILL after $2 seconds (default 15).
stop_one() {
  local name=$1 grace=${2:-15} pid deadline
  pid_alive "$name" || { rm -f "$PIDS/$name.pid"; return 0; }
  pid=$(cat "$PIDS/$name.pid")
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + grace))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name (pid $pid) did not stop on SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$PIDS/$name.pid"
}

# PIDs of shims serving this node's containerd (their command line names its socket).
our_shims() {
  local p exe
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    case "$(basename "${exe% (deleted)}")" in containerd-shim-runc-v2) ;; *) continue ;; esac
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$SOCK" && echo "${p#/proc/}"
  done
  return 0
}

# Processes in the cgroups of this node's pods (containers whose shim is gone).
pod_processes() {
  local f
  for f in /sys/fs/cgroup/*/kubepods; do
    [ -d "$f" ] && find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
  return 0
}

kill_pids() { # SIGNAL PID...
  local sig=$1 p
  shift
  for p in "$@"; do kill "-$sig" "$p" 2>/dev/null || true; done
}

# --- cleanup ------------------------------------------------------------------------------------------------------

# Mount points (deepest first) under the node's paths: pod volumes, container rootfs and shm, network namespaces.
our_mounts() {
  awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
    m=$(printf '%b' "${m//\\/\\0}")
    case "$m" in
      "$STATE" | "$STATE"/* | /run/netns/cni-* | /var/run/netns/cni-* | /var/lib/kubelet/*)
        echo "$m" ;;
    esac
  done | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

# Shim sockets under /run/containerd/s that no process listens on any more (another containerd on the machine, e.g.
# a test's, may have live ones there; those are not this node's).
stale_shim_sockets() {
  local f
  for f in /run/containerd/s/*; do
    [ -S "$f" ] || continue
    grep -qF " $f" /proc/net/unix || echo "$f"
  done
  return 0
}

# The fixed paths, with everything the node put there; empty when clean. Under /run/containerd only what this
# node's runtime makes (the k8s.io namespace's runc state, its shims' sockets): other containerd instances on the
# machine share that directory.
fixed_leftovers() {
  local d
  for d in /var/lib/cni /var/lib/kubelet /var/log/containers; do [ -e "$d" ] && find "$d" -mindepth 0 2>/dev/null | head -n 5; done
  [ -e /run/containerd/runc/k8s.io ] && echo /run/containerd/runc/k8s.io
  stale_shim_sockets
  ls -d /run/netns/cni-* 2>/dev/null || true
  return 0
}

# The chains the upstream kubelet adds to the machine's iptables and ip6tables (its canaries, the iptables hint, and
# KUBE-FIREWALL with its INPUT and OUTPUT jumps); a node of this kind is the only kubelet on the machine.
KUBELET_CHAINS=(KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT)
kubelet_iptables_chains() {
  local cmd
  for cmd in iptables-save ip6tables-save; do
    command -v "$cmd" >/dev/null 2>&1 || continue
    "$cmd" 2>/dev/null | grep -E "^:($(IFS='|'; echo "${KUBELET_CHAINS[*]}")) " | sed "s/^:\([^ ]*\) .*/${cmd%-save} \1/"
  done | sort -u
}
remove_kubelet_iptables_chains() {
  local cmd table chain
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null 2>&1 || continue
    for chain in INPUT OUTPUT; do
      while "$cmd" -w 5 -t filter -D "$chain" -j KUBE-FIREWALL 2>/dev/null; do :; done
    done
    for table in filter nat mangle; do
      for chain in "${KUBELET_CHAINS[@]}"; do
        "$cmd" -w 5 -t "$table" -F "$chain" 2>/dev/null && "$cmd" -w 5 -t "$table" -X "$chain" 2>/dev/null
      done
    done
  done
  return 0
}

# kill_pod_processes TRIES: SIGKILL to every shim and pod process of this node, up to TRIES rounds half a second apart.
kill_pod_processes() {
  local i pids
  for i in $(seq 1 "$1"); do
    pids=$(our_shims; pod_processes)
    [ -n "$pids" ] || break
    # shellcheck disable=SC2086
    kill_pids KILL $pids
    sleep 0.5
  done
}

# Removes every trace of a node; safe to run when nothing is there. Order matters: pods (through the runtime, so
# CNI releases their addresses), daemons, stray processes, mounts, network, cgroups, files.
clean() {
  local pids m d i
  stop_one kubelet 20
  if pid_alive containerd && [ -S "$SOCK" ]; then
    timeout 60 "$BIN/crictl" --runtime-endpoint "unix://$SOCK" --timeout 30s rmp --all --force >/dev/null 2>&1 ||
      log "crictl rmp failed; killing what is left"
  fi
  stop_one containerd 15
  kill_pod_processes 2
  while read -r m; do
    [ -n "$m" ] || continue
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done < <(our_mounts)
  ip link del "$BRIDGE" 2>/dev/null || true
  remove_kubelet_iptables_chains
  for d in /sys/fs/cgroup/*/kubepods; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
    [ -d "$d" ] && log "cannot remove cgroup $d"
  done
  rm -f /run/netns/cni-* 2>/dev/null || true
  rmdir /run/netns 2>/dev/null || true
  # The fixed paths: only what a node of this kind puts there, then the directories if that left them empty.
  rm -rf /run/containerd/runc/k8s.io
  stale_shim_sockets | xargs -r rm -f
  rm -rf /var/lib/cni/results /var/lib/cni/networks/"$CNI_NETWORK" /var/lib/cni/cache
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
  find /var/log/containers -maxdepth 1 -type l -delete 2>/dev/null || true
  for d in /var/lib/cni/networks /var/lib/kubelet/device-plugins /var/lib/kubelet/plugins_registry \
    /var/lib/kubelet/plugins /run/containerd/s /run/containerd/runc "${FIXED_DIRS[@]}"; do
    rmdir "$d" 2>/dev/null || true
  done
  rm -rf "$RUN" "$STATE/containerd" "$KUBELET_ROOT" "$CDI_ROOT" "$METADATA_ROOT" "$STATE/cni" "$STATE/pod-logs" "$PIDS" \
    "$STATE"/*.args "$STATE"/*.kubeconfig "$STATE"/*.toml "$STATE"/*.yaml "$STATE/pki" "$STATE/bin-dir"
}

# Prints one line per leftover of a node; exit status 1 when there is any.
leftovers() {
  local found=0 line
  report() { echo "$1"; found=1; }
  for line in $(our_shims; pod_processes); do report "process $line: $(tr '\0' ' ' <"/proc/$line/cmdline" 2>/dev/null)"; done
  for name in kubelet containerd; do pid_alive "$name" && report "process $(cat "$PIDS/$name.pid"): $name"; done
  while read -r line; do [ -n "$line" ] && report "mount $line"; done < <(our_mounts)
  ip link show "$BRIDGE" >/dev/null 2>&1 && report "network interface $BRIDGE"
  while read -r line; do [ -n "$line" ] && report "chain $line"; done < <(kubelet_iptables_chains)
  for line in /sys/fs/cgroup/*/kubepods; do [ -d "$line" ] && report "cgroup $line"; done
  while read -r line; do [ -n "$line" ] && report "path $line"; done < <(fixed_leftovers)
  for line in "$RUN" "$STATE/containerd" "$KUBELET_ROOT" "$CDI_ROOT" "$METADATA_ROOT" "$STATE/cni"; do
    [ -e "$line" ] && report "path $line"
  done
  return $((found))
}

# --- configuration ------------------------------------------------------------------------------------------------

gen_kubelet_credentials() {
  local pki="$STATE/pki" ca="$CLUSTER/pki"
  [ -f "$ca/ca.key" ] || die "no control plane CA at $ca (start it: NODE_NAME=$NODE hack/local-cluster.sh up)"
  mkdir -p "$pki"
  (
    cd "$pki"
    exec 2>openssl.log
    openssl ecparam -name prime256v1 -genkey -noout -out kubelet.key
    openssl req -new -key kubelet.key -subj "/O=system:nodes/CN=system:node:$NODE" -out kubelet.csr
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >kubelet.ext
    openssl x509 -req -in kubelet.csr -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial -CAserial kubelet.srl \
      -sha256 -days 30 -extfile kubelet.ext -out kubelet.crt
  ) || { cat "$pki/openssl.log" >&2; die "kubelet certificate"; }
  local server
  server=$(sed -n 's/^[[:space:]]*server:[[:space:]]*//p' "$CLUSTER/admin.kubeconfig" | head -n 1)
  umask 077
  cat >"$STATE/kubelet.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: liken-local
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <"$ca/ca.crt")
users:
- name: system:node:$NODE
  user:
    client-certificate-data: $(base64 -w0 <"$pki/kubelet.crt")
    client-key-data: $(base64 -w0 <"$pki/kubelet.key")
contexts:
- name: liken-local
  context: {cluster: liken-local, user: "system:node:$NODE"}
current-context: liken-local
EOF
  umask 022
}

write_configs() {
  local gateway
  mkdir -p "$STATE/cni/net.d" "$STATE/cni/ipam" "$CDI_ROOT" "$KUBELET_ROOT" "$STATE/pod-logs" "$RUN"
  # containerd 2.x: CDI is always on; only the spec directory is named. The process lacks CAP_SYS_RESOURCE in
  # some containers, so the OOM score of containers is never set below containerd's own. Pod network namespaces
  # are pinned under the state dir instead of /run/netns.
  cat >"$STATE/containerd.toml" <<EOF
version = 3
root = "$STATE/containerd"
state = "$RUN/containerd"

[grpc]
  address = "$SOCK"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$SANDBOX_IMAGE"

[plugins.'io.containerd.cri.v1.runtime']
  cdi_spec_dirs = ["$CDI_ROOT"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$STATE/cni/net.d"

[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
  # Pods get an address on a host-only bridge and no default route: nothing they send leaves the machine.
  gateway="${POD_CIDR%.*}.1"
  cat >"$STATE/cni/net.d/10-liken-node.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$gateway"}]],
        "dataDir": "$STATE/cni/ipam"
      }
    }
  ]
}
EOF
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: $STATE/pod-logs
clusterDomain: cluster.local
podCIDR: $POD_CIDR
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1%"
  nodefs.available: "1%"
  imagefs.available: "1%"
EOF
}

# --- up -----------------------------------------------------------------------------------------------------------

kc() { "$BIN/kubectl" --kubeconfig "$CLUSTER/admin.kubeconfig" "$@"; }
cri() { "$BIN/crictl" --runtime-endpoint "unix://$SOCK" "$@"; }

wait_for() { # WHAT DAEMON COMMAND...
  local what=$1 daemon=$2 deadline=$((SECONDS + UP_TIMEOUT))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ! pid_alive "$daemon"; then
      log "$daemon exited while waiting for $what; last log lines:"
      tail -n 40 "$LOGS/$daemon.log" >&2 || true
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "timed out after ${UP_TIMEOUT}s waiting for $what; last log lines of $daemon:"
      tail -n 40 "$LOGS/$daemon.log" >&2 || true
      return 1
    fi
    sleep 0.3
  done
}

node_ready() {
  [ "$(kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] &&
    [ "$(kc get node "$NODE" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')" != "" ]
}

print_env() {
  echo "export LIKEN_NODE_DIR=$STATE"
  echo "export LIKEN_NODE_NAME=$NODE"
  echo "export CONTAINER_RUNTIME_ENDPOINT=unix://$SOCK"
  echo "export LIKEN_NODE_KUBELET_ROOT=$KUBELET_ROOT"
  echo "export LIKEN_NODE_CDI_ROOT=$CDI_ROOT"
  echo "export LIKEN_NODE_METADATA_ROOT=$METADATA_ROOT"
}

import_images() {
  local a
  for a in "$@"; do
    [ -f "$a" ] || die "no image archive $a"
    "$BIN/ctr" --address "$SOCK" -n k8s.io images import --local --snapshotter overlayfs "$a" >&2 ||
      die "importing $a failed"
  done
}

start_containerd() {
  PATH="$BIN:$PATH" start containerd --config "$STATE/containerd.toml"
  wait_for "containerd" containerd cri info
}

start_kubelet() {
  start kubelet --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$KUBELET_ROOT" --cert-dir "$STATE/kubelet-pki" --hostname-override "$NODE" --v 2
  wait_for "the kubelet's /healthz" kubelet curl -sf --max-time 2 http://127.0.0.1:10248/healthz
  wait_for "node $NODE Ready" kubelet node_ready
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root (mounts, cgroups, network namespaces)"
  command -v runc >/dev/null || die "runc is not installed (hack/install-deps.sh)"
  [ -x "$CNI_BIN/bridge" ] || die "CNI plugins missing in $CNI_BIN (hack/install-deps.sh)"
  getent hosts "$NODE" | grep -q '^127\.' || die "$NODE does not resolve to 127.0.0.1 (/etc/hosts)"
  find_bin
  if pid_alive kubelet && pid_alive containerd; then
    log "already running (state dir $STATE)"
    import_images "$@" ${LIKEN_NODE_IMAGES:-}
    print_env
    return 0
  fi
  clean # leftovers of an earlier node
  rm -rf "$LOGS"
  mkdir -p "$STATE" "$LOGS" "$PIDS"
  echo "$BIN" >"$STATE/bin-dir"
  UP_DONE=0
  trap 'if [ "$UP_DONE" != 1 ]; then log "up failed; cleaning up (logs in $LOGS)"; clean; fi' EXIT
  trap 'exit 130' INT TERM
  gen_kubelet_credentials
  write_configs
  start_containerd
  # shellcheck disable=SC2086
  import_images "$@" ${LIKEN_NODE_IMAGES:-}
  start_kubelet
  UP_DONE=1
  log "up: node $NODE Ready ($("$BIN/kubelet" --version 2>/dev/null), $(cri version 2>/dev/null |
    sed -n 's/^RuntimeVersion:[[:space:]]*//p' | head -n 1)); logs in $LOGS"
  print_env
}

restart() {
  find_bin
  case "$1" in
    kubelet) stop_one kubelet 20; start_kubelet ;;
    containerd) stop_one containerd 15; start_containerd ;;
    *) die "usage: $0 restart kubelet|containerd" ;;
  esac
  log "restarted $1"
}

# A power cycle of the node that keeps its disks: the kubelet, containerd, every shim and container are killed at
# once (SIGKILL: nothing stops gracefully), what a node keeps in memory or on tmpfs is lost (containerd's state dir
# with its sockets and network namespaces, runc's state, pod volume mounts, the CDI and device metadata
# directories), the optional COMMAND runs, then containerd and the kubelet start again with their disks (containerd's
# root, the kubelet's root with its checkpoints) as they were. What it cannot change is the kernel's boot ID.
reboot_node() {
  [ "$(id -u)" = 0 ] || die "needs root"
  find_bin
  local name pid m
  for name in kubelet containerd; do
    pid_alive "$name" || continue
    pid=$(cat "$PIDS/$name.pid")
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$PIDS/$name.pid"
  done
  kill_pod_processes 3
  while read -r m; do
    [ -n "$m" ] && [ "$m" != "$STATE" ] || continue
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done < <(our_mounts)
  rm -rf "$RUN" /run/containerd/runc/k8s.io
  stale_shim_sockets | xargs -r rm -f
  rm -f /run/netns/cni-* 2>/dev/null || true
  find "$CDI_ROOT" "$METADATA_ROOT" -mindepth 1 -delete 2>/dev/null || true
  mkdir -p "$RUN"
  log "node down (power cut)"
  if [ $# -gt 0 ]; then "$@" || die "the command run while the node was down failed: $*"; fi
  start_containerd
  start_kubelet
  log "node up again after the simulated reboot"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  reboot) shift; reboot_node "$@" ;;
  down)
    [ "$(id -u)" = 0 ] || die "needs root"
    BIN=$(cat "$STATE/bin-dir" 2>/dev/null || true)
    [ -n "$BIN" ] || find_bin
    clean
    if out=$(leftovers); then log "down: nothing left (logs kept in $LOGS)"; else log "down left:"; echo "$out" >&2; exit 1; fi
    ;;
  import) shift; find_bin; import_images "$@" ;;
  restart) restart "${2:-}" ;;
  leftovers) leftovers ;;
  env)
    pid_alive kubelet && pid_alive containerd || die "not running (state dir $STATE); run: $0 up"
    print_env
    ;;
  *)
    echo "usage: $0 up [ARCHIVE...]|down|import ARCHIVE...|restart kubelet|containerd|reboot [COMMAND...]|leftovers|env" >&2
    exit 2
    ;;
esac
