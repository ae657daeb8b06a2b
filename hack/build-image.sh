#!/usr/bin/env bash
# Builds liken-dra's OCI image archives from the build tree, with no Docker daemon and no registry:
#   liken-dra-<version>.oci.tar       localhost/liken-dra:<version>        the stripped binary, the shared libraries
#                                     ldd names (with the loader), pci.ids and the CA bundle
#   liken-dra-<version>-test.oci.tar  localhost/liken-dra:<version>-test   that, plus umockdev-run, its preload
#                                     library and theirs, and test/machines/*.umockdev in /usr/share/liken-dra/machines
#   pause.oci.tar                     localhost/pause:liken                 a pod sandbox: sleeps until SIGTERM
#   busybox.oci.tar                   localhost/busybox:liken               Debian's busybox-static with its applets
# and images.env (shell assignments naming each image's reference, archive and digest). The same inputs give the
# same digests. Load an archive with `ctr -n k8s.io images import FILE` or `kind load image-archive FILE`; pods
# use the references with imagePullPolicy: Never.
#
# usage: hack/build-image.sh [--out DIR] [--binary FILE] [IMAGE...]    IMAGE: runtime test pause busybox (default all)
#   --out DIR      where the archives go (default build/images)
#   --binary FILE  the liken-dra binary to ship, stripped (default build/liken-dra, as hack/build.sh liken-dra built
#                  it; the Dockerfile builds Release). Libraries, pci.ids and CA bundle come from this machine.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/build/images
BINARY=$REPO/build/liken-dra
images=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --binary) BINARY=$2; shift 2 ;;
    runtime|test|pause|busybox) images+=("$1"); shift ;;
    *) echo "build-image: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#images[@]} -gt 0 ] || images=(runtime test pause busybox)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}

VERSION=$(sed -n 's/^project(liken-dra VERSION \([0-9][0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
[ -n "$VERSION" ] || { echo "build-image: no project version in CMakeLists.txt" >&2; exit 1; }
REPOSITORY=localhost/liken-dra
RECORDINGS=/usr/share/liken-dra/machines    # the Dockerfile's test stage and the chart's testRecording use it
PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TOOL=(python3 "$REPO/hack/oci-image.py")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/liken-image.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Each *_entries function prints oci-image.py arguments, one a line.

# Every shared library ldd names for FILE, and the loader, one path a line. Fails on a library ldd cannot find.
libraries() {
  local out
  out=$(ldd "$1") || { echo "build-image: ldd $1 failed" >&2; return 1; }
  if grep -q 'not found' <<<"$out"; then echo "build-image: $1: $(grep 'not found' <<<"$out")" >&2; return 1; fi
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"
}

runtime_entries() {
  [ -x "$BINARY" ] || { echo "build-image: $BINARY is missing; run hack/build.sh liken-dra" >&2; return 1; }
  strip -o "$WORK/liken-dra" "$BINARY"
  printf '%s\n' --copy "$WORK/liken-dra=/usr/bin/liken-dra"
  libraries "$WORK/liken-dra" | sed 's/^/--host\n/'
  printf '%s\n' --host /usr/share/misc/pci.ids --host /etc/ssl/certs/ca-certificates.crt --dir /tmp=1777
}

test_entries() {
  local run preload f
  run=$(command -v umockdev-run) || { echo "build-image: umockdev-run is missing (hack/install-deps.sh)" >&2; return 1; }
  # awk reads to the end: an early exit would kill ldconfig with SIGPIPE (141 under pipefail).
  preload=$(ldconfig -p | awk '$1 == "libumockdev-preload.so.0" && !found { print $NF; found = 1 }')
  [ -n "$preload" ] || { echo "build-image: libumockdev-preload.so.0 is missing" >&2; return 1; }
  printf '%s\n' --host "$run" --host "$preload"
  { libraries "$run"; libraries "$preload"; } | sed 's/^/--host\n/'
  for f in "$REPO"/test/machines/*.umockdev; do printf '%s\n' --copy "$f=$RECORDINGS/$(basename "$f")"; done
}

busybox_path() {
  [ -x /bin/busybox ] && /bin/busybox --list-full >/dev/null 2>&1 ||
    { echo "build-image: /bin/busybox (Debian busybox-static) is missing; run hack/install-deps.sh" >&2; return 1; }
  ldd /bin/busybox >/dev/null 2>&1 && { echo "build-image: /bin/busybox is not static (install busybox-static)" >&2; return 1; }
  echo /bin/busybox
}

# build KEY REF ARCHIVE ENTRY-ARGS... : assembles one image and records it for images.env.
declare -A REF ARCHIVE DIGEST
build() {
  local key=$1 ref=$2 archive=$3; shift 3
  local result
  result=$("${TOOL[@]}" --ref "$ref" --out "$OUT/$archive" "$@")
  REF[$key]=$ref; ARCHIVE[$key]=$OUT/$archive
  DIGEST[$key]=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["digest"])' "$result")
  printf '%-8s %-36s %s\n' "$key" "$ref" "${DIGEST[$key]}"
}

for image in "${images[@]}"; do
  case "$image" in
    runtime)
      runtime_entries >"$WORK/runtime.args"
      mapfile -t entries <"$WORK/runtime.args"
      build runtime "$REPOSITORY:$VERSION" "liken-dra-$VERSION.oci.tar" "${entries[@]}" \
        --env "$PATH_ENV" --entrypoint '["/usr/bin/liken-dra"]' --cmd '["run"]' \
        --label "org.opencontainers.image.version=$VERSION" ;;
    test)
      runtime_entries >"$WORK/runtime.args"
      test_entries >"$WORK/test.args"
      mapfile -t entries < <(cat "$WORK/runtime.args" "$WORK/test.args")
      # Not "/": umockdev's preload joins a relative name to the working directory, not to the directory handle it
      # is opened through, so from "/" the driver's openat(claim, "dev") of a metadata request named "dev" opened the
      # testbed's /dev (test/kubelet/device_metadata_umockdev_test.cc).
      build test "$REPOSITORY:$VERSION-test" "liken-dra-$VERSION-test.oci.tar" "${entries[@]}" \
        --env "$PATH_ENV" --entrypoint '["/usr/bin/liken-dra"]' --cmd '["run"]' --workdir "$RECORDINGS" \
        --label "org.opencontainers.image.version=$VERSION" ;;
    pause)
      bb=$(busybox_path)   # a failure here ends the script (set -e)
      # PID 1 ignores signals it has no handler for, so the shell traps SIGTERM and waits on an interruptible child.
      # A background job reads /dev/null (every runtime makes it): without it the loop would spin, so it stops.
      build pause localhost/pause:liken pause.oci.tar --copy "$bb=/bin/busybox" \
        --entrypoint '["/bin/busybox","sh","-c","[ -c /dev/null ] || exit 1; trap \"exit 0\" TERM INT; while :; do /bin/busybox sleep 2147483647 & wait $!; done"]' ;;
    busybox)
      bb=$(busybox_path)
      links=()
      while read -r applet; do
        [ "$applet" = bin/busybox ] || links+=(--link "/$applet=/bin/busybox")
      done < <("$bb" --list-full | sort)
      build busybox localhost/busybox:liken busybox.oci.tar --copy "$bb=/bin/busybox" "${links[@]}" --dir /tmp=1777 \
        --env "$PATH_ENV" --cmd '["sh"]' ;;
  esac
done

# images.env: what a node or a test sources to find the images.
{
  echo "# Written by hack/build-image.sh; source it. Pods use these references with imagePullPolicy: Never."
  echo "LIKEN_VERSION=$VERSION"
  echo "LIKEN_IMAGE_REPOSITORY=$REPOSITORY"
  echo "LIKEN_RECORDINGS_DIR=$RECORDINGS"
  for key in runtime test pause busybox; do
    var=$(case $key in runtime) echo LIKEN_IMAGE ;; test) echo LIKEN_TEST_IMAGE ;;
                       pause) echo LIKEN_PAUSE_IMAGE ;; busybox) echo LIKEN_BUSYBOX_IMAGE ;; esac)
    if [ -z "${REF[$key]:-}" ]; then   # not built this time: keep what an earlier run wrote
      [ -f "$OUT/images.env" ] && grep -E "^${var}(_TAG|_ARCHIVE|_DIGEST)?=" "$OUT/images.env" || true
      continue
    fi
    echo "$var=${REF[$key]}"
    echo "${var}_TAG=${REF[$key]##*:}"
    echo "${var}_ARCHIVE=${ARCHIVE[$key]}"
    echo "${var}_DIGEST=${DIGEST[$key]}"
  done
} >"$OUT/images.env.tmp"
mv "$OUT/images.env.tmp" "$OUT/images.env"
echo "build-image: archives and images.env in $OUT"
