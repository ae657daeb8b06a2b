#!/usr/bin/env bash
# Builds a Kubernetes control plane and a real node for local integration tests from upstream Go modules:
#   etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl and helm (the control plane), and
#   kubelet, containerd, containerd-shim-runc-v2, ctr and crictl (the node, hack/local-node.sh; runc and the CNI
#   plugins come from Debian, hack/install-deps.sh), and for the kind tier (hack/e2e-kind.sh, hack/kind-images.sh)
#   kind, kubeadm, kube-proxy and CoreDNS, with kind's base-image files (images/base/files of its module) in
#   <cache>/k8s-<K8S_VERSION>/share/kind-base-files.
#
# The binaries land in a cache directory outside the source tree, one per Kubernetes release:
#   ${LIKEN_CACHE:-$HOME/.cache/liken-dra}/k8s-<K8S_VERSION>/bin
# etcd, helm, containerd and crictl do not depend on the release: one build serves all of them. A release's bin
# directory links them from a release that has them (the shared directory <cache>/shared, where they are built when
# no release has them yet, or the default release's directory). They are reused when present: each component carries a stamp naming the pinned version it was built from, so a
# second run is a no-op (it does not even start the go command). The bin directory is printed as the last line on
# stdout; all progress goes to stderr, so `BIN=$(hack/build-control-plane.sh)` works.
#
# How: k8s.io/kubernetes's go.mod requires every staging module (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
# replaces it with a ./staging path, which Go ignores when the module is a dependency. So a generated wrapper module
# requires k8s.io/kubernetes <K8S_VERSION> and replaces each staging module with its published v0.<minor>.<patch>
# release; the staging list is read from the release's own go.mod, not hard-coded. The kubelet is built in that same
# wrapper module. etcd, helm, containerd and cri-tools get wrapper modules of their own so that their dependency
# graphs stay exactly as upstream tested them.
#
# Environment:
#   K8S_VERSION   (default v1.37.2; the matrix: v1.34.4 v1.35.4 v1.36.3 v1.37.2, see hack/test-matrix.sh)   ETCD_VERSION (default v3.7.3)   HELM_VERSION (default v3.22.0)
#   CONTAINERD_VERSION (default v2.4.2)   CRICTL_VERSION (default v1.37.0)
#   KIND_VERSION (default v0.33.0)   COREDNS_VERSION (default v1.14.6)
#   LIKEN_BUILD_PARTS  which parts to make sure of: "all" (default: control plane and node), "control-plane",
#                      "node", "kind-tools" (kind, kubeadm + kube-proxy, CoreDNS), or components by name (etcd k8s
#                      helm kubelet containerd crictl kind kubeadm coredns, e.g. "kind coredns")
#   LIKEN_CACHE   cache root (default $HOME/.cache/liken-dra)
#   LIKEN_BUILD_JOBS  go build -p (default 2)    LIKEN_BUILD_NICE  nice level (default 10)
#   LIKEN_BUILD_NICE_FILE  where present and not empty, the nice level of each later go build (hack/test.sh
#                      writes 0 there once its C++ builds are done, so the rest of the Go builds get both cores)
#   GOMODCACHE / GOCACHE / GOFLAGS are honoured as usual.
set -euo pipefail

DEFAULT_K8S_VERSION=v1.37.2
K8S_VERSION=${K8S_VERSION:-$DEFAULT_K8S_VERSION}
case "$K8S_VERSION" in
  v1.[0-9]*.[0-9]*) ;;
  *) echo "build-control-plane: K8S_VERSION must look like v1.34.4 (got: $K8S_VERSION)" >&2; exit 2 ;;
esac
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
CRICTL_VERSION=${CRICTL_VERSION:-v1.37.0}
KIND_VERSION=${KIND_VERSION:-v0.33.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.6}
PARTS=${LIKEN_BUILD_PARTS:-all}
LIKEN_CACHE=${LIKEN_CACHE:-$HOME/.cache/liken-dra}
JOBS=${LIKEN_BUILD_JOBS:-2}
NICE=${LIKEN_BUILD_NICE:-10}
# Bump when the way the binaries are built changes, so cached binaries get rebuilt.
RECIPE=1

ROOT="$LIKEN_CACHE/k8s-$K8S_VERSION"
BIN="$ROOT/bin"
STAMPS="$ROOT/stamps"
SRC="$ROOT/src"
SHARED_ROOT="$LIKEN_CACHE/shared"
SHARED_COMPONENTS=" etcd helm containerd crictl "

log() { echo "build-control-plane: $*" >&2; }

stamp_for() {
  case "$1" in
    etcd) echo "etcd=$ETCD_VERSION recipe=$RECIPE" ;;
    k8s) echo "kubernetes=$K8S_VERSION recipe=$RECIPE" ;;
    helm) echo "helm=$HELM_VERSION kubernetes=$K8S_VERSION recipe=$RECIPE" ;;
    kubelet) echo "kubelet=$K8S_VERSION recipe=$RECIPE" ;;
    containerd) echo "containerd=$CONTAINERD_VERSION recipe=$RECIPE" ;;
    crictl) echo "crictl=$CRICTL_VERSION recipe=$RECIPE" ;;
    kind) echo "kind=$KIND_VERSION recipe=$RECIPE" ;;
    kubeadm) echo "kubeadm=$K8S_VERSION recipe=$RECIPE" ;;
    coredns) echo "coredns=$COREDNS_VERSION recipe=$RECIPE" ;;
  esac
}
bins_for() {
  case "$1" in
    etcd) echo "etcd" ;;
    k8s) echo "kube-apiserver kube-scheduler kube-controller-manager kubectl" ;;
    helm) echo "helm" ;;
    kubelet) echo "kubelet" ;;
    containerd) echo "containerd containerd-shim-runc-v2 ctr" ;;
    crictl) echo "crictl" ;;
    kind) echo "kind" ;;
    kubeadm) echo "kubeadm kube-proxy" ;;
    coredns) echo "coredns" ;;
  esac
}
is_cached() {
  local c=$1 b
  [ -f "$STAMPS/$c" ] && [ "$(cat "$STAMPS/$c")" = "$(stamp_for "$c")" ] || return 1
  for b in $(bins_for "$c"); do [ -x "$BIN/$b" ] || return 1; done
}

# A stamp without the release it was made for (helm's names one, though helm's build does not depend on it).
release_free() { sed 's/ kubernetes=[^ ]*//'; }
# Links a release-independent component that is built elsewhere (the shared directory, or the default release's)
# into this release's bin directory; starts no build.
adopt() {
  local c=$1 d b ok
  case "$SHARED_COMPONENTS" in *" $c "*) ;; *) return 1 ;; esac
  for d in "$SHARED_ROOT" "$LIKEN_CACHE/k8s-$DEFAULT_K8S_VERSION"; do
    [ "$d" != "$ROOT" ] && [ -f "$d/stamps/$c" ] || continue
    [ "$(release_free <"$d/stamps/$c")" = "$(stamp_for "$c" | release_free)" ] || continue
    ok=1
    for b in $(bins_for "$c"); do [ -x "$d/bin/$b" ] || ok=0; done
    [ $ok = 1 ] || continue
    mkdir -p "$BIN" "$STAMPS"
    for b in $(bins_for "$c"); do ln -sfn "$(readlink -f "$d/bin/$b")" "$BIN/$b"; done
    stamp_for "$c" >"$STAMPS/$c"
    log "$c: using the build in $d"
    return 0
  done
  return 1
}

case "$PARTS" in
  all) components=(etcd k8s helm kubelet containerd crictl) ;;
  control-plane) components=(etcd k8s helm) ;;
  node) components=(kubelet containerd crictl) ;;
  kind-tools) components=(kind kubeadm coredns) ;;
  *) read -r -a components <<<"$PARTS"
     for c in "${components[@]}"; do
       [ -n "$(stamp_for "$c")" ] || { log "LIKEN_BUILD_PARTS must be all, control-plane, node, kind or a list of components (got: $PARTS)"; exit 2; }
     done ;;
esac
todo=()
for c in "${components[@]}"; do is_cached "$c" || adopt "$c" || todo+=("$c"); done
if [ ${#todo[@]} -eq 0 ]; then
  log "cached: $(for c in "${components[@]}"; do cat "$STAMPS/$c"; done | cut -d' ' -f1 | paste -sd' ')"
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$BIN" "$STAMPS" "$SRC"

# One build at a time per wrapper module (two CI steps may call this concurrently): the kubelet and kubeadm share
# the control plane's module and build cache; the others have modules of their own.
lock_for() { case "$1" in k8s|kubelet|kubeadm) echo "$ROOT/.lock" ;; *) echo "$ROOT/.lock-$1" ;; esac; }

export CGO_ENABLED=0
# go_nice COMMAND...: COMMAND at LIKEN_BUILD_NICE, or at the level LIKEN_BUILD_NICE_FILE holds once it holds one.
go_nice() {
  local n=$NICE
  if [ -n "${LIKEN_BUILD_NICE_FILE:-}" ] && [ -s "$LIKEN_BUILD_NICE_FILE" ]; then n=$(<"$LIKEN_BUILD_NICE_FILE"); fi
  nice -n "$n" "$@"
}
GO_BUILD=(go_nice go build -p "$JOBS" -mod=mod -trimpath)

# Prints the path of a module's go.mod as the proxy serves it (downloads it into the module cache).
gomod_of() {
  (cd "$SRC" && GOFLAGS="" go mod download -json "$1@$2") | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p'
}
# Prints the replace directives of a go.mod that point at other modules (not at local paths), one per line, in
# single-line form, so that a wrapper module can repeat them (Go ignores a dependency's replaces).
remote_replaces() {
  awk '
    /^replace[[:space:]]*\($/ { inblock = 1; next }
    inblock && /^\)/ { inblock = 0; next }
    inblock { line = $0 }
    !inblock && /^replace[[:space:]]/ { line = $0; sub(/^replace[[:space:]]+/, "", line) }
    line != "" {
      sub(/\/\/.*/, "", line)
      n = split(line, parts, "=>")
      if (n == 2) { target = parts[2]; gsub(/^[[:space:]]+/, "", target)
        if (target !~ /^[.\/]/ && target != "") print line }
      line = ""
    }' "$1"
}
# Writes a wrapper module: $1 dir, $2 module path, $3 required module, $4 its version; replace lines on stdin.
write_wrapper() {
  local dir=$1 req=$2 ver=$3
  rm -rf "$dir"
  mkdir -p "$dir"
  {
    echo "// Generated by hack/build-control-plane.sh; do not edit."
    echo "module liken.sh/build/$(basename "$dir")"
    echo
    echo "go 1.26.0"
    echo
    echo "require $req $ver"
    echo
    echo "replace ("
    sed 's/^[[:space:]]*/\t/'
    echo ")"
  } >"$dir/go.mod"
}
install_bins() {
  local from=$1 c=$2 b
  for b in $(bins_for "$c"); do mv -f "$from/$b" "$BIN/$b"; done
  rm -rf "$from"
  stamp_for "$c" >"$STAMPS/$c"
}

build_etcd() {
  local dir="$SRC/etcd" mod out="$ROOT/out-etcd"
  log "etcd $ETCD_VERSION"
  mod=$(gomod_of go.etcd.io/etcd/server/v3 "$ETCD_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
  install_bins "$out" etcd
}

# Writes the Kubernetes wrapper module (unless it is already there for this release) and sets K8S_LDFLAGS.
k8s_wrapper() {
  local dir="$SRC/k8s" mod ver minor staging_ver staging n p date
  ver=${K8S_VERSION#v}
  minor=$(echo "$ver" | cut -d. -f2)
  staging_ver="v0.${ver#*.}"
  mod=$(gomod_of k8s.io/kubernetes "$K8S_VERSION")
  if [ "$(cat "$dir/.release" 2>/dev/null)" != "$K8S_VERSION recipe=$RECIPE" ]; then
    staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$mod" | sort -u)
    n=$(echo "$staging" | grep -c .)
    [ "$n" -gt 0 ] || { log "no staging replaces found in $mod"; exit 1; }
    log "$n staging modules at $staging_ver: $(echo "$staging" | tr '\n' ' ')"
    {
      for p in $staging; do echo "$p => $p $staging_ver"; done
      remote_replaces "$mod"
    } | write_wrapper "$dir" k8s.io/kubernetes "$K8S_VERSION"
    echo "$K8S_VERSION recipe=$RECIPE" >"$dir/.release"
  fi
  # Build date: the release's publication time, so the binaries do not change from one build to the next.
  date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "${mod%.mod}.info" 2>/dev/null || true)
  date=${date:-1970-01-01T00:00:00Z}
  K8S_LDFLAGS="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    K8S_LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    K8S_LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=$date"
  done
}

build_k8s() {
  local out="$ROOT/out-k8s"
  log "kubernetes $K8S_VERSION"
  k8s_wrapper
  rm -rf "$out"; mkdir -p "$out"
  (cd "$SRC/k8s" && "${GO_BUILD[@]}" -ldflags "$K8S_LDFLAGS" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl)
  install_bins "$out" k8s
}

# The kubelet, from the control plane's wrapper module (same replaces, same build cache).
build_kubelet() {
  local out="$ROOT/out-kubelet"
  log "kubelet $K8S_VERSION"
  k8s_wrapper
  rm -rf "$out"; mkdir -p "$out"
  (cd "$SRC/k8s" && "${GO_BUILD[@]}" -ldflags "$K8S_LDFLAGS" -o "$out/" k8s.io/kubernetes/cmd/kubelet)
  install_bins "$out" kubelet
}

# containerd v2: the daemon and ctr without btrfs (no cgo) and without the man-page generator; the shim without the
# gRPC server (it speaks ttrpc only), as upstream's release builds do.
build_containerd() {
  local dir="$SRC/containerd" mod out="$ROOT/out-containerd" path ldflags
  path=github.com/containerd/containerd/v2
  log "containerd $CONTAINERD_VERSION"
  mod=$(gomod_of "$path" "$CONTAINERD_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" "$path" "$CONTAINERD_VERSION"
  ldflags="-s -w -X $path/version.Version=$CONTAINERD_VERSION -X $path/version.Package=github.com/containerd/containerd"
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -tags "no_btrfs urfave_cli_no_docs" -ldflags "$ldflags" -o "$out/" \
    "$path/cmd/containerd" "$path/cmd/ctr")
  (cd "$dir" && "${GO_BUILD[@]}" -tags "no_grpc" -ldflags "$ldflags" -o "$out/" "$path/cmd/containerd-shim-runc-v2")
  install_bins "$out" containerd
}

build_crictl() {
  local dir="$SRC/crictl" mod out="$ROOT/out-crictl" path=sigs.k8s.io/cri-tools
  log "crictl $CRICTL_VERSION"
  mod=$(gomod_of "$path" "$CRICTL_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" "$path" "$CRICTL_VERSION"
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -ldflags "-s -w -X $path/pkg/version.Version=$CRICTL_VERSION" -o "$out/crictl" \
    "$path/cmd/crictl")
  install_bins "$out" crictl
}

# kind, and the files its base image is made of (systemd units, entrypoint, containerd config), from its module.
build_kind() {
  local dir="$SRC/kind" mod out="$ROOT/out-kind" path=sigs.k8s.io/kind files
  log "kind $KIND_VERSION"
  mod=$(gomod_of "$path" "$KIND_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" "$path" "$KIND_VERSION"
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -ldflags "-s -w" -o "$out/kind" "$path")
  files="$(dirname "$mod")/$KIND_VERSION/images/base/files"
  [ -d "$files" ] || files=$(cd "$dir" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' "$path")/images/base/files
  [ -d "$files" ] || { log "kind's module has no images/base/files"; exit 1; }
  rm -rf "$ROOT/share/kind-base-files"; mkdir -p "$ROOT/share"
  cp -a "$files" "$ROOT/share/kind-base-files"
  chmod -R u+w "$ROOT/share/kind-base-files"
  install_bins "$out" kind
}

# kubeadm and kube-proxy, from the control plane's wrapper module.
build_kubeadm() {
  local out="$ROOT/out-kubeadm"
  log "kubeadm and kube-proxy $K8S_VERSION"
  k8s_wrapper
  rm -rf "$out"; mkdir -p "$out"
  (cd "$SRC/k8s" && "${GO_BUILD[@]}" -ldflags "$K8S_LDFLAGS" -o "$out/" \
    k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kube-proxy)
  install_bins "$out" kubeadm
}

build_coredns() {
  local dir="$SRC/coredns" mod out="$ROOT/out-coredns" path=github.com/coredns/coredns
  log "coredns $COREDNS_VERSION"
  mod=$(gomod_of "$path" "$COREDNS_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" "$path" "$COREDNS_VERSION"
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -ldflags "-s -w" -o "$out/coredns" "$path")
  install_bins "$out" coredns
}

build_helm() {
  local dir="$SRC/helm" mod out="$ROOT/out-helm" major path ldflags kv kmaj kmin
  major=${HELM_VERSION%%.*}
  path="helm.sh/helm/$major"
  log "helm $HELM_VERSION"
  mod=$(gomod_of "$path" "$HELM_VERSION")
  remote_replaces "$mod" | write_wrapper "$dir" "$path" "$HELM_VERSION"
  ldflags="-s -w -X $path/internal/version.version=$HELM_VERSION -X $path/internal/version.gitTreeState=clean"
  if [ "$major" = v3 ]; then
    # What `helm template` reports as .Capabilities.KubeVersion: the client-go minor helm was built with.
    kv=$(cd "$dir" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' k8s.io/client-go)
    kv=${kv#v0.}; kmin=${kv%%.*}; kmaj=1
    for p in pkg/lint/rules pkg/chartutil; do
      ldflags+=" -X $path/$p.k8sVersionMajor=$kmaj -X $path/$p.k8sVersionMinor=$kmin"
    done
  fi
  rm -rf "$out"; mkdir -p "$out"
  (cd "$dir" && "${GO_BUILD[@]}" -ldflags "$ldflags" -o "$out/helm" "$path/cmd/helm")
  install_bins "$out" helm
}

start=$(date +%s)
for c in "${todo[@]}"; do
  exec 9>"$(lock_for "$c")"
  flock 9
  # Another process may have built it (or a release it can link) while this one waited for the lock.
  if ! is_cached "$c" && ! adopt "$c"; then
    t0=$(date +%s)
    case "$SHARED_COMPONENTS" in
      *" $c "*)
        # Built once for every release, in the shared directory (under its own lock), then linked here.
        (
          ROOT=$SHARED_ROOT BIN=$SHARED_ROOT/bin STAMPS=$SHARED_ROOT/stamps SRC=$SHARED_ROOT/src
          mkdir -p "$BIN" "$STAMPS" "$SRC"
          exec 8>"$ROOT/.lock"
          flock 8
          is_cached "$c" || "build_$c"
        )
        adopt "$c" || { log "$c: built but not found in $SHARED_ROOT"; exit 1; }
        ;;
      *) "build_$c" ;;
    esac
    log "$c built in $(($(date +%s) - t0))s"
  fi
  exec 9>&-
done
log "done in $(($(date +%s) - start))s"
echo "$BIN"
