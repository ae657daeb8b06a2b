#!/usr/bin/env bash
# Builds the kind node image for the pinned Kubernetes release from Debian packages and the project's own builds,
# with no registry: what hack/e2e-kind.sh uses on machines without one (CI here). Three cached steps, each skipped
# when its stamp matches:
#   rootfs  a Debian bookworm root filesystem (mmdebstrap) with systemd and what kind's base image installs, runc and
#           the CNI plugins from Debian, and kind's own base files (entrypoint, units, containerd config).
#           bookworm, not kind's trixie: trixie's systemd drops cgroup v1, which machines like this one still use.
#   base    rootfs + containerd, ctr, the shim and crictl (hack/build-control-plane.sh) + the runtime spec kind's
#           containerd config names; STOPSIGNAL and ENTRYPOINT as kind's base image has them.
#   node    base + kubeadm, kubelet, kubectl and the kubelet unit, and in its containerd (namespace k8s.io) the images
#           kubeadm asks for under their registry names: kube-apiserver, kube-controller-manager, kube-scheduler,
#           kube-proxy, etcd, CoreDNS, pause. What `kind build node-image` does, without its registry pulls.
# The node image is kept as a `docker save` archive in <cache>/kind/, which `hack/e2e-kind.sh` loads into its
# (fresh) Docker data root; a cached run only loads it.
#
# usage: hack/kind-images.sh [rootfs]   (rootfs: only the first step) prints the node image's archive path and its reference, tab-separated
# Needs: DOCKER_HOST pointing at a running Docker engine that can run privileged containers (hack/e2e-kind.sh
# starts one), mmdebstrap, the binaries of `hack/build-control-plane.sh` (LIKEN_BUILD_PARTS all and kind-tools).
# Environment: LIKEN_CACHE, K8S_VERSION (as hack/build-control-plane.sh), DEBIAN_MIRROR (default
# http://deb.debian.org/debian), LIKEN_BUILD_NICE.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
LIKEN_CACHE=${LIKEN_CACHE:-$HOME/.cache/liken-dra}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NICE=${LIKEN_BUILD_NICE:-10}
# Bump when a step's recipe changes, so the cached result is rebuilt.
RECIPE=1
# Image names and tags kubeadm (v1.37) and kind's containerd config ask for.
ETCD_TAG=3.7.0-0
COREDNS_TAG=v1.14.6
PAUSE_TAGS=(3.10 3.10.2)
BASE_PACKAGES=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod libseccomp2 pigz
  fuse-overlayfs bash ca-certificates curl jq procps runc containernetworking-plugins)

KIND_CACHE="$LIKEN_CACHE/kind"
ROOTFS_TAR="$KIND_CACHE/rootfs-bookworm.tar"
NODE_TAR="$KIND_CACHE/node-$K8S_VERSION.tar"
NODE_REF="liken.sh/kind-node:$K8S_VERSION"
BASE_REF="liken.sh/kind-base:bookworm"
mkdir -p "$KIND_CACHE"
log() { echo "kind-images: $*" >&2; }
die() { log "$*"; exit 1; }
stamp_ok() { [ -f "$1.stamp" ] && [ -f "$1" ] && [ "$(cat "$1.stamp")" = "$2" ]; }

exec 8>"$KIND_CACHE/.lock"
flock 8
WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-kind-images.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

KBIN=$(LIKEN_BUILD_PARTS=kind "$HERE/build-control-plane.sh" | tail -n 1)
FILES="$(dirname "$KBIN")/share/kind-base-files"
[ -d "$FILES" ] || die "missing $FILES (hack/build-control-plane.sh with LIKEN_BUILD_PARTS=kind)"

# --- rootfs -------------------------------------------------------------------------------------------------------
rootfs_stamp="bookworm recipe=$RECIPE packages=${BASE_PACKAGES[*]} kind-files=$(cd "$FILES" && find . -type f | sort | xargs sha256sum | sha256sum | cut -c1-16)"
if ! stamp_ok "$ROOTFS_TAR" "$rootfs_stamp"; then
  command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (hack/install-deps.sh)"
  t0=$(date +%s)
  log "rootfs: mmdebstrap bookworm (${#BASE_PACKAGES[@]} packages)"
  # The hook does what kind's base Dockerfile does after installing its packages.
  nice -n "$NICE" mmdebstrap --variant=minbase --mode=root --format=tar --include="$(IFS=,; echo "${BASE_PACKAGES[*]}")" \
    --customize-hook="cp -a '$FILES'/. \"\$1\"/ && chmod 0755 \"\$1\"/usr/local/bin/* \"\$1\"/kind/bin/*" \
    --customize-hook='rm -f "$1"/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service
      rm -f "$1"/lib/systemd/system/multi-user.target.wants/* "$1"/etc/systemd/system/*.wants/*
      rm -f "$1"/lib/systemd/system/local-fs.target.wants/* "$1"/lib/systemd/system/sockets.target.wants/*udev*
      rm -f "$1"/lib/systemd/system/sockets.target.wants/*initctl* "$1"/lib/systemd/system/basic.target.wants/*
      echo ReadKMsg=no >>"$1"/etc/systemd/journald.conf
      ln -sf /usr/lib/systemd/systemd "$1"/sbin/init
      chroot "$1" systemctl enable kubelet.service containerd.service undo-mount-hacks.service
      chroot "$1" systemctl mask systemd-binfmt.service
      mkdir -p "$1"/etc/kubernetes/manifests "$1"/opt/cni
      ln -sfn /usr/lib/cni "$1"/opt/cni/bin
      ln -sf /usr/sbin/runc "$1"/usr/local/sbin/runc
      rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    bookworm "$ROOTFS_TAR.tmp" "$MIRROR" >"$WORK/mmdebstrap.log" 2>&1 ||
    { tail -n 30 "$WORK/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
  mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
  echo "$rootfs_stamp" >"$ROOTFS_TAR.stamp"
  log "rootfs built in $(($(date +%s) - t0))s ($(du -h "$ROOTFS_TAR" | cut -f1))"
fi
[ "${1:-}" = rootfs ] && exit 0
BIN=$(LIKEN_BUILD_PARTS=all "$HERE/build-control-plane.sh" | tail -n 1)
KBIN=$(LIKEN_BUILD_PARTS=kind-tools "$HERE/build-control-plane.sh" | tail -n 1)

# --- node image (with its base) -----------------------------------------------------------------------------------
bin_stamps=$(cat "$(dirname "$BIN")"/stamps/{k8s,kubelet,containerd,crictl,etcd,kubeadm,coredns} | cut -d' ' -f1 | paste -sd' ')
node_stamp="recipe=$RECIPE rootfs=$(cat "$ROOTFS_TAR.stamp" | sha256sum | cut -c1-16) $bin_stamps"
if stamp_ok "$NODE_TAR" "$node_stamp"; then
  printf '%s\t%s\n' "$NODE_TAR" "$NODE_REF"
  exit 0
fi
[ -n "${DOCKER_HOST:-}" ] || die "DOCKER_HOST is not set (hack/e2e-kind.sh starts a Docker engine)"
t0=$(date +%s)
docker version >/dev/null || die "no Docker engine at $DOCKER_HOST"

log "base image"
docker import "$ROOTFS_TAR" liken.sh/kind-rootfs:bookworm >/dev/null
mkdir -p "$WORK/base"
cp "$BIN"/{containerd,ctr,containerd-shim-runc-v2,crictl} "$WORK/base/"
# kind's containerd config names this runtime spec: the default one, with kind's createContainer hook.
"$BIN/ctr" oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
  jq 'del(.process.rlimits)' >"$WORK/base/cri-base.json"
cat >"$WORK/base/Dockerfile" <<'EOF'
FROM liken.sh/kind-rootfs:bookworm
COPY containerd ctr containerd-shim-runc-v2 crictl /usr/local/bin/
COPY cri-base.json /etc/containerd/cri-base.json
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
EOF
DOCKER_BUILDKIT=0 docker build -q -t "$BASE_REF" "$WORK/base" >/dev/null

log "component images"
IMG="$WORK/images"
mkdir -p "$IMG"
oci() { python3 "$HERE/oci-image.py" "$@" >/dev/null; }
PATH_ENV=PATH=/usr/local/bin:/usr/bin:/bin
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  oci --ref "registry.k8s.io/$c:$K8S_VERSION" --out "$IMG/$c.tar" --copy "$BIN/$c=/usr/local/bin/$c" \
    --env "$PATH_ENV" --dir /tmp=1777
done
oci --ref "registry.k8s.io/etcd:$ETCD_TAG" --out "$IMG/etcd.tar" --copy "$BIN/etcd=/usr/local/bin/etcd" \
  --env "$PATH_ENV" --dir /tmp=1777 --dir /var/lib/etcd
oci --ref "registry.k8s.io/coredns/coredns:$COREDNS_TAG" --out "$IMG/coredns.tar" \
  --copy "$KBIN/coredns=/coredns" --host /etc/ssl/certs/ca-certificates.crt --entrypoint '["/coredns"]'
# pause: busybox's sh waiting for SIGTERM (as hack/build-image.sh's pause image).
for t in "${PAUSE_TAGS[@]}"; do
  oci --ref "registry.k8s.io/pause:$t" --out "$IMG/pause-$t.tar" --copy /bin/busybox=/bin/busybox \
    --entrypoint '["/bin/busybox","sh","-c","trap \"exit 0\" TERM INT; while :; do /bin/busybox sleep 2147483647 & wait $!; done"]'
done
# kube-proxy needs iptables (the nft variant, as the nodes use): on top of the base image.
mkdir -p "$WORK/proxy"
cp "$KBIN/kube-proxy" "$WORK/proxy/"
printf 'FROM %s\nCOPY kube-proxy /usr/local/bin/kube-proxy\nENTRYPOINT ["/usr/local/bin/kube-proxy"]\n' "$BASE_REF" >"$WORK/proxy/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "registry.k8s.io/kube-proxy:$K8S_VERSION" "$WORK/proxy" >/dev/null
docker save "registry.k8s.io/kube-proxy:$K8S_VERSION" -o "$IMG/kube-proxy.tar"

log "node image"
c=$(docker run -d --privileged --entrypoint sleep "$BASE_REF" infinity)
trap 'docker rm -f "$c" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
docker cp "$KBIN/kubeadm" "$c:/usr/bin/kubeadm"
docker cp "$BIN/kubelet" "$c:/usr/bin/kubelet"
docker cp "$BIN/kubectl" "$c:/usr/bin/kubectl"
docker cp "$IMG" "$c:/kind/images"
docker exec "$c" sh -ec '
  echo "'"$K8S_VERSION"'" >/kind/version
  mkdir -p /kind/manifests
  (containerd >/tmp/containerd.log 2>&1 &)
  for i in $(seq 1 100); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done
  for f in /kind/images/*.tar; do ctr -n k8s.io images import --all-platforms --no-unpack "$f" >/dev/null; done
  ctr -n k8s.io images ls -q
  pkill containerd || true
  for i in $(seq 1 50); do pgrep containerd >/dev/null || break; sleep 0.1; done
  rm -rf /kind/images /tmp/containerd.log /run/containerd' >"$WORK/node-images.txt"
grep -q "kube-apiserver:$K8S_VERSION" "$WORK/node-images.txt" || die "images not imported: $(paste -sd' ' "$WORK/node-images.txt")"
docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' --change 'CMD []' "$c" "$NODE_REF" >/dev/null
docker rm -f "$c" >/dev/null
docker save "$NODE_REF" -o "$NODE_TAR.tmp"
mv "$NODE_TAR.tmp" "$NODE_TAR"
echo "$node_stamp" >"$NODE_TAR.stamp"
log "base and node image built in $(($(date +%s) - t0))s ($(du -h "$NODE_TAR" | cut -f1)): $(paste -sd' ' "$WORK/node-images.txt")"
printf '%s\t%s\n' "$NODE_TAR" "$NODE_REF"
