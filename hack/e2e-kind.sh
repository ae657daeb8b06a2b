#!/usr/bin/env bash
# A kind cluster of one control-plane node and four workers, each worker a different recorded machine
# (test/machines/): laptop, gpu-server, amd-gpus, usb-heavy. The chart installs the driver as users install it, once;
# each worker's `liken.sh/recording` label picks the recording its driver reads (the chart's `testRecordings`).
#
#   hack/e2e-kind.sh up        clean up leftovers, start the cluster, load the images, install the chart; prints
#                              `export KUBECONFIG=...` (the kubeconfig stays in the state directory)
#   hack/e2e-kind.sh down      delete the cluster and, in local mode, stop the Docker engine and remove its traces
#   hack/e2e-kind.sh leftovers print what a run left on this machine (containers, processes, mounts, bridges,
#                              cgroups, paths, iptables changes); exit 1 if anything
#   hack/e2e-kind.sh env       print the env lines for the running cluster
#
# Two modes (LIKEN_KIND_MODE):
#   local  (CI here; the default when no Docker engine answers) no registry is reached. The script starts its own
#          dockerd (own data root, exec root, socket and pidfile; --iptables=false and no default bridge, so the
#          machine's iptables and other pod networks stay as they were; a runc wrapper only when this process's
#          capability bounding set lacks capabilities Docker asks for), loads the node image hack/kind-images.sh
#          built from Debian packages and the project's own Kubernetes builds, and wires the pod network itself
#          (ptp + host-local CNI config and routes between the nodes; kindnetd is not available without a registry).
#   stock  (a contributor's machine with Docker and registries) the running Docker engine, the stock kindest/node
#          image (or KIND_NODE_IMAGE) and kindnetd.
# The images of the driver and of the workloads come from hack/build-image.sh either way (kind load image-archive).
#
# Environment: LIKEN_KIND_MODE (local|stock), LIKEN_KIND_DIR (state, default /tmp/liken-kind), KIND_CLUSTER (default
# liken-kind), KIND_NODE_IMAGE (stock mode), LIKEN_DRA (the binary for the images, default build/liken-dra),
# LIKEN_CACHE (as hack/build-control-plane.sh), LIKEN_KIND_TIMEOUT (seconds for nodes and pods, default 300).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
STATE=${LIKEN_KIND_DIR:-/tmp/liken-kind}
CLUSTER=${KIND_CLUSTER:-liken-kind}
TIMEOUT=${LIKEN_KIND_TIMEOUT:-300}
RELEASE=liken
DRIVER_NS=liken-system
DOCKER_DIR="$STATE/docker"
DOCKER_SOCK="$DOCKER_DIR/docker.sock"
DOCKER_PIDFILE="$DOCKER_DIR/dockerd.pid"
KUBECONFIG_FILE="$STATE/kubeconfig"
# Address ranges of the engine started here: none overlaps 10.244.0.0/16 (pods) or 10.96.0.0/12 (services).
DOCKER_POOL=172.29.0.0/16
# The workers: their recording (test/machines/<name>.umockdev) is the node's liken.sh/recording label.
RECORDINGS=(laptop gpu-server amd-gpus usb-heavy)

log() { echo "e2e-kind: $*" >&2; }
die() { log "$*"; exit 1; }

mode() {
  if [ -f "$STATE/mode" ]; then cat "$STATE/mode"; return; fi
  case "${LIKEN_KIND_MODE:-}" in
    local | stock) echo "$LIKEN_KIND_MODE" ;;
    "") if command -v docker >/dev/null && docker info >/dev/null 2>&1; then echo stock; else echo local; fi ;;
    *) die "LIKEN_KIND_MODE must be local or stock (got $LIKEN_KIND_MODE)" ;;
  esac
}

# The tools: kind and kubectl/helm from the cache in local mode (or when not installed), Docker's CLI from Debian
# (/usr/bin/docker) in local mode, as it matches the engine started here.
tools() {
  local kbin bin
  mkdir -p "$STATE/bin"
  if [ "$MODE" = local ] || ! command -v kind >/dev/null; then
    kbin=$(LIKEN_BUILD_PARTS=kind "$HERE/build-control-plane.sh" | tail -n 1)
    ln -sfn "$kbin/kind" "$STATE/bin/kind"
  fi
  if [ "$MODE" = local ] || ! command -v kubectl >/dev/null || ! command -v helm >/dev/null; then
    bin=$(LIKEN_BUILD_PARTS=control-plane "$HERE/build-control-plane.sh" | tail -n 1)
    ln -sfn "$bin/kubectl" "$STATE/bin/kubectl"
    ln -sfn "$bin/helm" "$STATE/bin/helm"
  fi
  if [ "$MODE" = local ]; then
    [ -x /usr/bin/docker ] && [ -x /usr/sbin/dockerd ] || die "Debian's docker.io is missing (hack/install-deps.sh)"
    ln -sfn /usr/bin/docker "$STATE/bin/docker"
  fi
  export PATH="$STATE/bin:$PATH"
}

use_engine() {
  if [ "$MODE" = local ]; then export DOCKER_HOST="unix://$DOCKER_SOCK"; fi
  export KUBECONFIG="$KUBECONFIG_FILE"
}

# --- the local Docker engine --------------------------------------------------------------------------------------

CAP_NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE
  NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN
  SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE
  MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE)
# The capabilities Docker knows that this process's bounding set lacks, as CAP_X names, one a line.
missing_caps() {
  local bnd i
  bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
  for i in "${!CAP_NAMES[@]}"; do (((bnd >> i) & 1)) || echo "CAP_${CAP_NAMES[$i]}"; done
}

# A runc wrapper for Docker: removes the capabilities the bounding set lacks from the bundle's config.json
# (create, run) or the process file (exec), then runs Debian's runc. Docker asks for every capability for a
# privileged container, and runc fails when one is not in the bounding set.
write_runc_wrapper() {
  local drop
  drop=$(missing_caps | jq -R . | jq -sc .)
  cat >"$DOCKER_DIR/runc-wrapper" <<EOF
#!/bin/bash
# Written by hack/e2e-kind.sh: runc without capabilities outside the bounding set ($drop).
drop='$drop'
strip() { local f=\$1 t
  [ -f "\$f" ] || return 0
  t=\$(mktemp "\$f.XXXXXX")
  /usr/bin/jq --argjson d "\$drop" 'def s: if type == "array" then map(select(. as \$c | \$d | index(\$c) | not)) else . end;
    if has("process") then .process.capabilities |= (if . == null then . else map_values(s) end)
    else .capabilities |= (if . == null then . else map_values(s) end) end' "\$f" >"\$t" && mv "\$t" "\$f"; }
cmd="" bundle="." process="" prev=""
for a in "\$@"; do
  case "\$prev" in --bundle | -b) bundle=\$a ;; --process | -p) process=\$a ;; esac
  case "\$a" in --bundle=*) bundle=\${a#--bundle=} ;; --process=*) process=\${a#--process=} ;; esac
  [ -z "\$cmd" ] && case "\$a" in create | run | exec) cmd=\$a ;; esac
  prev=\$a
done
case "\$cmd" in create | run) strip "\$bundle/config.json" ;; exec) strip "\$process" ;; esac
exec /usr/sbin/runc "\$@"
EOF
  chmod 0755 "$DOCKER_DIR/runc-wrapper"
}

start_dockerd() {
  local runtime=() i
  mkdir -p "$DOCKER_DIR/data" "$DOCKER_DIR/exec" "$STATE/logs"
  if [ -n "$(missing_caps)" ]; then
    write_runc_wrapper
    runtime=(--add-runtime "liken-runc=$DOCKER_DIR/runc-wrapper" --default-runtime liken-runc)
    log "dockerd: runc wrapper drops $(missing_caps | paste -sd' ') (not in the bounding set)"
  fi
  # Debian's containerd and shim for dockerd (the project's containerd v2 may be first in PATH).
  # Its config file's directory is where dockerd 20.10 keeps its key.json (otherwise /etc/docker).
  echo '{}' >"$DOCKER_DIR/daemon.json"
  PATH=/usr/sbin:/usr/bin:/sbin:/bin setsid /usr/sbin/dockerd --config-file "$DOCKER_DIR/daemon.json" --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/exec" \
    --pidfile "$DOCKER_PIDFILE" -H "unix://$DOCKER_SOCK" --iptables=false --ip-forward=false --ip-masq=false \
    --bridge=none --default-address-pool "base=$DOCKER_POOL,size=24" --storage-driver=overlay2 \
    "${runtime[@]}" >>"$STATE/logs/dockerd.log" 2>&1 </dev/null &
  for i in $(seq 1 150); do docker version >/dev/null 2>&1 && return 0; sleep 0.2; done
  tail -n 20 "$STATE/logs/dockerd.log" >&2
  die "dockerd did not answer on $DOCKER_SOCK"
}

dockerd_pid() { [ -f "$DOCKER_PIDFILE" ] && kill -0 "$(cat "$DOCKER_PIDFILE")" 2>/dev/null && cat "$DOCKER_PIDFILE"; }

# --- the cluster --------------------------------------------------------------------------------------------------

kind_config() {
  local r
  cat <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
featureGates:
  DRAConsumableCapacity: true
networking:
  disableDefaultCNI: $([ "$MODE" = local ] && echo true || echo false)
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri"]
    enable_cdi = true
YAML
  if [ -n "$(missing_caps)" ]; then
    cat <<YAML
- |-
  [plugins."io.containerd.grpc.v1.cri"]
    restrict_oom_score_adj = true
YAML
  fi
  echo "nodes:"
  echo "- role: control-plane"
  for r in "${RECORDINGS[@]}"; do
    printf -- '- role: worker\n  labels: {liken.sh/recording: %s}\n' "$r"
  done
}

# Without kindnetd: each node gets a ptp + host-local config for its podCIDR and a route to every other node's.
wire_pod_network() {
  local nodes n cidr ip other ocidr oip i
  nodes=$(kind get nodes --name "$CLUSTER")
  for i in $(seq 1 $((TIMEOUT * 5))); do
    [ -z "$(kubectl get nodes -o jsonpath='{range .items[?(@.spec.podCIDR=="")]}{.metadata.name}{end}' 2>/dev/null; \
      [ "$(kubectl get nodes -o name 2>/dev/null | wc -l)" = "$(echo "$nodes" | wc -l)" ] || echo missing)" ] && break
    sleep 0.2
  done
  for n in $nodes; do
    cidr=$(kubectl get node "$n" -o jsonpath='{.spec.podCIDR}')
    [ -n "$cidr" ] || die "node $n has no podCIDR"
    docker exec -i "$n" sh -c 'mkdir -p /etc/cni/net.d && cat >/etc/cni/net.d/10-liken-ptp.conflist' <<JSON
{"cniVersion": "0.4.0", "name": "liken-kind", "plugins": [
  {"type": "ptp", "mtu": 1500, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON
    for other in $nodes; do
      [ "$other" = "$n" ] && continue
      ocidr=$(kubectl get node "$other" -o jsonpath='{.spec.podCIDR}')
      oip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$other")
      docker exec "$n" ip route replace "$ocidr" via "$oip"
    done
  done
}

# The driver as users install it, once: each worker's liken.sh/recording label selects its recording.
helm_driver() {
  local verb=$1 r sets=()
  shift
  for r in "${RECORDINGS[@]}"; do sets+=(--set "testRecordings.$r=$RECORDINGS_DIR/$r.umockdev"); done
  helm "$verb" "$RELEASE" "$REPO/charts/liken-dra" -n "$DRIVER_NS" --create-namespace --wait --timeout "${TIMEOUT}s" \
    --set image.repository="${DRIVER_IMAGE%:*}" --set image.tag="${DRIVER_IMAGE##*:}" --set image.pullPolicy=Never \
    --set resyncSeconds=5 "${sets[@]}" "$@"
}

up() {
  local t0=$SECONDS image="" archive ref a n
  down >/dev/null 2>&1 || true
  mkdir -p "$STATE/logs"
  echo "$MODE" >"$STATE/mode"
  tools
  use_engine
  if [ "$MODE" = local ]; then
    [ -e /usr/lib/modules ] || touch "$STATE/no-usr-lib-modules"
    [ -e /etc/docker/key.json ] || touch "$STATE/no-docker-key"   # dockerd 20.10 writes it whatever its flags
    iptables-save 2>/dev/null | grep -v '^#' >"$STATE/iptables.before" || true
    start_dockerd
    log "dockerd up ($((SECONDS - t0))s)"
    IFS=$'\t' read -r archive ref < <("$HERE/kind-images.sh")
    docker load -i "$archive" >/dev/null
    image=$ref
    log "node image $ref loaded ($((SECONDS - t0))s)"
  fi
  image=${KIND_NODE_IMAGE:-$image}
  # The images of the driver and the workloads (no Docker needed to build them).
  # shellcheck source=../test/lib/images.sh
  source "$REPO/test/lib/images.sh"
  [ -x "${LIKEN_DRA:-$REPO/build/liken-dra}" ] || "$REPO/hack/build.sh" liken-dra
  build_images "$STATE/images" >/dev/null
  kind_config >"$STATE/kind.yaml"
  kind create cluster --name "$CLUSTER" --config "$STATE/kind.yaml" --kubeconfig "$KUBECONFIG_FILE" \
    ${image:+--image "$image"} >"$STATE/logs/kind-create.log" 2>&1 ||
    { tail -n 30 "$STATE/logs/kind-create.log" >&2; die "kind create cluster failed"; }
  log "cluster created ($((SECONDS - t0))s)"
  [ "$MODE" = local ] && wire_pod_network
  kubectl wait --for=condition=Ready nodes --all --timeout="${TIMEOUT}s" >/dev/null ||
    die "nodes not Ready: $(kubectl get nodes --no-headers 2>&1 | paste -sd'|')"
  log "nodes Ready ($((SECONDS - t0))s)"
  for a in "${IMAGE_ARCHIVES[@]}"; do kind load image-archive "$a" --name "$CLUSTER" >/dev/null; done
  log "images loaded ($((SECONDS - t0))s)"
  RECORDINGS_DIR=$LIKEN_RECORDINGS_DIR
  helm_driver install >"$STATE/logs/helm.log" 2>&1 ||
    { tail -n 20 "$STATE/logs/helm.log" >&2; kubectl -n "$DRIVER_NS" get pods -o wide >&2 || true; die "helm install failed"; }
  log "driver installed on $(kubectl -n "$DRIVER_NS" get pods --no-headers 2>/dev/null | wc -l) workers ($((SECONDS - t0))s)"
  {
    echo "export KUBECONFIG=$KUBECONFIG_FILE"
    [ "$MODE" = local ] && echo "export DOCKER_HOST=unix://$DOCKER_SOCK"
    echo "export PATH=$STATE/bin:\$PATH"
    echo "export LIKEN_KIND_CLUSTER=$CLUSTER LIKEN_DRIVER_IMAGE=$DRIVER_IMAGE LIKEN_WORKLOAD_IMAGE=$WORKLOAD_IMAGE"
    echo "export LIKEN_RECORDINGS_DIR=$RECORDINGS_DIR"
  } >"$STATE/env"
  cat "$STATE/env"
}

# Unmounts what the engine left mounted under the state directory, deepest first.
our_mounts() { awk -v d="$STATE/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r; }
our_processes() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$DOCKER_DIR/" && echo "${p#/proc/}"
  done
  return 0
}
our_bridges() { ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep -E '^(br-[0-9a-f]{12}|docker0)$' || true; }

down() {
  local pid i m
  MODE=$(mode)
  [ -d "$STATE" ] || return 0
  [ -x "$STATE/bin/kind" ] && export PATH="$STATE/bin:$PATH"
  use_engine
  if [ "$MODE" = stock ] || dockerd_pid >/dev/null; then
    kind delete cluster --name "$CLUSTER" --kubeconfig "$KUBECONFIG_FILE" >/dev/null 2>&1 || true
  fi
  if [ "$MODE" = local ]; then
    if pid=$(dockerd_pid); then
      docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1 || true
      docker network prune -f >/dev/null 2>&1 || true
      kill -TERM "$pid" 2>/dev/null || true
      for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    for pid in $(our_processes); do kill -KILL "$pid" 2>/dev/null || true; done
    while read -r m; do [ -n "$m" ] && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }; done < <(our_mounts)
    for m in $(our_bridges); do ip link del "$m" 2>/dev/null || true; done
    for m in /sys/fs/cgroup/*/docker /sys/fs/cgroup/systemd/kubelet.slice; do
      [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    pgrep -x dockerd >/dev/null || rm -rf /run/docker 2>/dev/null || true   # not while another engine runs
    [ -f "$STATE/no-usr-lib-modules" ] && rmdir /usr/lib/modules 2>/dev/null || true
    [ -f "$STATE/no-docker-key" ] && rm -f /etc/docker/key.json
    if [ -f "$STATE/iptables.before" ] && ! diff -q "$STATE/iptables.before" <(iptables-save 2>/dev/null | grep -v '^#') >/dev/null; then
      log "iptables differ from before the run (not restored automatically): $(diff "$STATE/iptables.before" <(iptables-save | grep -v '^#') | head -n 5 | paste -sd'|')"
    fi
  fi
  # Keep logs for diagnosis; remove the rest (the Docker data root holds the node images' layers).
  find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs ! -name mode -exec rm -rf {} + 2>/dev/null || true
  rm -f "$STATE/mode"
}

leftovers() {
  local found=0 line
  report() { echo "$1"; found=1; }
  MODE=${MODE:-local}
  [ -f "$STATE/mode" ] && report "state $STATE/mode: a cluster is up (run down)"
  for line in $(our_processes); do report "process $line: $(tr '\0' ' ' <"/proc/$line/cmdline" | cut -c1-120)"; done
  while read -r line; do [ -n "$line" ] && report "mount $line"; done < <(our_mounts)
  for line in $(our_bridges); do report "network interface $line"; done
  for line in /sys/fs/cgroup/*/docker /sys/fs/cgroup/systemd/kubelet.slice; do [ -d "$line" ] && report "cgroup $line"; done
  for line in /run/docker "$DOCKER_DIR" "$STATE/kubeconfig"; do [ -e "$line" ] && report "path $line"; done
  [ -d /usr/lib/modules ] && [ -z "$(ls -A /usr/lib/modules)" ] && report "path /usr/lib/modules (empty, made for kind's mount)"
  grep -qs "kind-$CLUSTER" "$HOME/.kube/config" && report "kubeconfig entry kind-$CLUSTER in $HOME/.kube/config"
  ls -d "${TMPDIR:-/tmp}"/k8s-tar-extract-* 2>/dev/null | while read -r line; do echo "path $line"; done | grep . && found=1
  iptables-save 2>/dev/null | grep -E '^(:DOCKER|-A DOCKER|:KUBE)' | head -n 3 | while read -r line; do echo "iptables $line"; done | grep . && found=1
  return $((found))
}

case "${1:-}" in
  up) MODE=$(mode); up ;;
  down) down ;;
  leftovers) leftovers ;;
  env) cat "$STATE/env" ;;
  *) echo "usage: hack/e2e-kind.sh up|down|leftovers|env" >&2; exit 2 ;;
esac
