#!/usr/bin/env bash
# Test infrastructure only: builds squat/generic-device-plugin (the device plugin that clusters moving to liken-dra
# run today) from its upstream tree in ../shared/peers/ (or LIKEN_GDP_TARBALL) and an OCI image archive of it, for
# the kind tier's mixed-cluster scenario (test/lib/multinode-scenarios.sh). Its Go modules come from the Go module
# proxy, as its own go.mod pins them; nothing of it is copied into the project.
#
# The binary and the archive are cached in ${LIKEN_CACHE:-$HOME/.cache/liken-dra}/peers/generic-device-plugin-<commit>/
# with a stamp (recipe, the tarball's sha256, the Go version): a cached run starts no go command and writes nothing.
# The image, liken.sh/generic-device-plugin:<commit>, holds only the static binary at /generic-device-plugin (its
# entrypoint), as the upstream image does; load it with `kind load image-archive` and use imagePullPolicy: Never.
#
# usage: hack/gdp-image.sh   prints the archive's path and the image reference, tab-separated (progress on stderr)
# Environment: LIKEN_GDP_TARBALL (default: the newest ../shared/peers/generic-device-plugin-*.tar.gz next to the
# repository or its main worktree), LIKEN_CACHE, LIKEN_BUILD_JOBS (go build -p, default 2), LIKEN_BUILD_NICE (default
# 10); GOMODCACHE, GOCACHE and GOPROXY as usual.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
LIKEN_CACHE=${LIKEN_CACHE:-$HOME/.cache/liken-dra}
JOBS=${LIKEN_BUILD_JOBS:-2}
NICE=${LIKEN_BUILD_NICE:-10}
# Bump when the way the binary or image is made changes, so the cached one is rebuilt.
RECIPE=1
log() { echo "gdp-image: $*" >&2; }
die() { log "$*"; exit 1; }

tarball=${LIKEN_GDP_TARBALL:-}
if [ -z "$tarball" ]; then
  # The peers folder sits beside the checkout (../shared/peers); a worktree's main checkout has the same parent.
  for d in "$REPO/../shared/peers" "$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/peers"; do
    f=$(ls -t "$d"/generic-device-plugin-*.tar.gz 2>/dev/null | head -n 1 || true)
    [ -n "$f" ] && { tarball=$f; break; }
  done
fi
[ -n "$tarball" ] && [ -f "$tarball" ] || die "no generic-device-plugin tarball (set LIKEN_GDP_TARBALL)"
commit=$(basename "$tarball" .tar.gz)
commit=${commit##*-}
OUT="$LIKEN_CACHE/peers/generic-device-plugin-$commit"
ARCHIVE="$OUT/image.oci.tar"
REF="liken.sh/generic-device-plugin:$commit"
mkdir -p "$OUT"
exec 8>"$OUT/.lock"
flock 8

sum=$(sha256sum "$tarball" | cut -c1-16)
goversion=$(go env GOVERSION 2>/dev/null || echo none)
stamp="recipe=$RECIPE tarball=$sum go=$goversion"
if [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$stamp" ] && [ -f "$ARCHIVE" ] && [ -x "$OUT/generic-device-plugin" ]; then
  printf '%s\t%s\n' "$ARCHIVE" "$REF"
  exit 0
fi
command -v go >/dev/null || die "go is not installed"
t0=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-gdp.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
tar -xzf "$tarball" -C "$WORK"
[ -f "$WORK/go.mod" ] || die "$tarball has no go.mod at its top"
log "building generic-device-plugin $commit (go build, modules from ${GOPROXY:-$(go env GOPROXY)})"
# Static, as the upstream image is built (FROM scratch); -mod=mod because the tarball leaves vendor/ out.
(cd "$WORK" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false nice -n "$NICE" go build -p "$JOBS" -mod=mod -trimpath \
  -ldflags "-s -w" -o "$WORK/generic-device-plugin" .) >"$WORK/build.log" 2>&1 ||
  { tail -n 20 "$WORK/build.log" >&2; die "go build failed"; }
"$WORK/generic-device-plugin" --help 2>&1 | grep -q -- '--device' || die "the built binary does not take --device"
SOURCE_DATE_EPOCH=0 python3 "$HERE/oci-image.py" --ref "$REF" --out "$WORK/image.oci.tar" \
  --copy "$WORK/generic-device-plugin=/generic-device-plugin" --entrypoint '["/generic-device-plugin"]' \
  --label "org.opencontainers.image.source=https://github.com/squat/generic-device-plugin" \
  --label "org.opencontainers.image.revision=$commit" >/dev/null
mv "$WORK/generic-device-plugin" "$OUT/generic-device-plugin"
mv "$WORK/image.oci.tar" "$ARCHIVE"
echo "$stamp" >"$OUT/stamp"
log "built in $(($(date +%s) - t0))s ($(du -h "$ARCHIVE" | cut -f1))"
printf '%s\t%s\n' "$ARCHIVE" "$REF"
