#!/usr/bin/env bash
# Builds liken-test-kubelet (a kubelet stand-in for integration tests: DRA plugin registration and
# NodePrepareResources/NodeUnprepareResources against the real wire, see test/kubelet-go/README.md) and its fake DRA
# plugin, liken-fake-dra-plugin, from test/kubelet-go with the upstream k8s.io/kubelet and k8s.io/client-go modules
# of the same Kubernetes release as the control plane (hack/build-control-plane.sh).
#
# The binaries land next to the control plane's:
#   ${LIKEN_CACHE:-$HOME/.cache/liken-dra}/k8s-<K8S_VERSION>/bin/{liken-test-kubelet,liken-fake-dra-plugin}
# A stamp keyed on the version and a hash of the Go sources (go.mod, go.sum, *.go) makes a second run a no-op. The
# path of liken-test-kubelet is printed as the last line on stdout; progress goes to stderr, so
# `KUBELET=$(hack/build-test-kubelet.sh | tail -n 1)` works.
#
# test/kubelet-go/go.mod pins the staging modules at the default release (v0.37.2 for v1.37.2). For another
# K8S_VERSION the build runs in a copy of the module whose k8s.io requirements are moved to v0.<minor>.<patch> through
# the module proxy; the source tree is never written.
#
# Environment: K8S_VERSION (default v1.37.2), LIKEN_CACHE, LIKEN_BUILD_JOBS (go build -p, default 2),
#   LIKEN_BUILD_NICE (default 10), LIKEN_BUILD_NICE_FILE (as in hack/build-control-plane.sh); GOPROXY / GOMODCACHE /
#   GOCACHE / GOFLAGS are honoured as usual.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
MOD="$REPO/test/kubelet-go"
K8S_VERSION=${K8S_VERSION:-v1.37.2}
LIKEN_CACHE=${LIKEN_CACHE:-$HOME/.cache/liken-dra}
JOBS=${LIKEN_BUILD_JOBS:-2}
NICE=${LIKEN_BUILD_NICE:-10}
RECIPE=1 # bump when the way the binaries are built changes

ROOT="$LIKEN_CACHE/k8s-$K8S_VERSION"
BIN="$ROOT/bin"
STAMP="$ROOT/stamps/test-kubelet"
OUT="$BIN/liken-test-kubelet"
FAKE="$BIN/liken-fake-dra-plugin"

log() { echo "build-test-kubelet: $*" >&2; }

ver=${K8S_VERSION#v}
STAGING_VER="v0.${ver#*.}"
src_hash=$(cd "$MOD" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print | LC_ALL=C sort |
  while read -r f; do printf '%s\n' "$f"; sha256sum <"$f"; done | sha256sum | cut -d' ' -f1)
stamp="kubernetes=$K8S_VERSION staging=$STAGING_VER src=$src_hash recipe=$RECIPE"

cached() { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$stamp" ] && [ -x "$OUT" ] && [ -x "$FAKE" ]; }
if cached; then
  log "cached: $OUT ($K8S_VERSION)"
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$BIN" "$(dirname "$STAMP")"
exec 9>"$ROOT/.lock-test-kubelet"
flock 9
if cached; then # another process built it while this one waited
  echo "$OUT"
  exit 0
fi

export CGO_ENABLED=0
# go_nice COMMAND...: COMMAND at LIKEN_BUILD_NICE, or at the level LIKEN_BUILD_NICE_FILE holds once it holds one.
go_nice() {
  local n=$NICE
  if [ -n "${LIKEN_BUILD_NICE_FILE:-}" ] && [ -s "$LIKEN_BUILD_NICE_FILE" ]; then n=$(<"$LIKEN_BUILD_NICE_FILE"); fi
  nice -n "$n" "$@"
}
GO_BUILD=(go_nice go build -p "$JOBS" -trimpath -ldflags "-s -w")
tmp=$(mktemp -d "$ROOT/out-test-kubelet.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pinned=$(sed -n 's#^[[:space:]]*k8s\.io/kubelet[[:space:]]\{1,\}\(v[^[:space:]]*\).*#\1#p' "$MOD/go.mod" | head -n 1)
if [ "$pinned" = "$STAGING_VER" ]; then
  log "building with k8s.io/kubelet $STAGING_VER (Kubernetes $K8S_VERSION)"
  (cd "$MOD" && GOFLAGS="${GOFLAGS:-} -mod=readonly" "${GO_BUILD[@]}" -o "$tmp/" . ./fakeplugin)
else
  log "go.mod pins $pinned; moving the k8s.io modules to $STAGING_VER (Kubernetes $K8S_VERSION) in a copy"
  work="$tmp/src"
  mkdir -p "$work"
  (cd "$MOD" && tar cf - --exclude=README.md .) | (cd "$work" && tar xf -)
  mods=$(sed -n 's#^[[:space:]]*\(k8s\.io/\(api\|apimachinery\|client-go\|kubelet\|component-base\)\)[[:space:]].*#\1#p' "$work/go.mod" | sort -u)
  args=()
  for m in $mods; do args+=("$m@$STAGING_VER"); done
  (cd "$work" && go get "${args[@]}" >&2 && go mod tidy >&2)
  # k8s.io/kubelet v0.34 generated its DRA types with gogo-protobuf names (UID, CDIDeviceIDs): test/kubelet-go/draapi.
  tags=()
  case "$STAGING_VER" in v0.34.*) tags=(-tags liken_dra_gogo) ;; esac
  (cd "$work" && "${GO_BUILD[@]}" "${tags[@]}" -o "$tmp/" . ./fakeplugin)
fi
mv -f "$tmp/kubelet-go" "$OUT"
mv -f "$tmp/fakeplugin" "$FAKE"
echo "$stamp" >"$STAMP"
log "built $OUT and $FAKE"
echo "$OUT"
