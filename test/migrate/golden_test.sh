#!/usr/bin/env bash
# The real binary on recorded machines prints exactly GOLDEN.
#   golden_test.sh BINARY GOLDEN CONFIG RECORDING [ARGS...]
#     `liken-dra deviceclasses --from-generic-device-plugin CONFIG ARGS` under umockdev-run on RECORDING.
#   golden_test.sh BINARY GOLDEN CONFIG NODE=RECORDING NODE=RECORDING... [-- ARGS...]
#     each node's `liken-dra report -o json` under umockdev-run on its recording, then one
#     `liken-dra deviceclasses --from-generic-device-plugin CONFIG --report NODE=REPORT... ARGS` for all of them.
# /dev is an empty directory (--dev-root), so no link of the machine running the test leaks in; the recordings
# carry their udev links as DEVLINKS. LIKEN_UPDATE_GOLDEN=1 rewrites GOLDEN instead.
set -euo pipefail
bin=$1 golden=$2 config=$3
shift 3
command -v umockdev-run >/dev/null || { echo "skip: no umockdev-run"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dev"
export TMPDIR=/dev/shm  # umockdev writes every attribute as a file; tmpfs keeps usb-heavy fast
[ -d /dev/shm ] && [ -w /dev/shm ] || export TMPDIR="$tmp"
out="$tmp/out"
if [[ "$1" == *=* ]]; then
  reports=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    node=${1%%=*} recording=${1#*=}
    umockdev-run -d "$recording" -- "$bin" report -o json --dev-root "$tmp/dev" >"$tmp/$node.json"
    reports+=(--report "$node=$tmp/$node.json")
    shift
  done
  [ $# -gt 0 ] && shift
  "$bin" deviceclasses --from-generic-device-plugin "$config" "${reports[@]}" "$@" >"$out"
else
  recording=$1
  shift
  umockdev-run -d "$recording" -- "$bin" deviceclasses --from-generic-device-plugin "$config" --dev-root "$tmp/dev" \
    "$@" >"$out"
fi
if [ "${LIKEN_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$out" "$golden"
  echo "wrote $golden"
  exit 0
fi
if diff -u "$golden" "$out"; then
  echo "ok: output matches $golden"
else
  echo "FAIL: output differs from $golden (LIKEN_UPDATE_GOLDEN=1 rewrites it)"
  exit 1
fi
