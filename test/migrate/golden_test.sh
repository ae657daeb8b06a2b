#!/usr/bin/env bash
# The real binary on a recorded machine: `liken-dra deviceclasses --from-generic-device-plugin CONFIG` under
# umockdev-run prints exactly GOLDEN. LIKEN_UPDATE_GOLDEN=1 rewrites GOLDEN instead.
# usage: golden_test.sh BINARY RECORDING CONFIG GOLDEN
set -euo pipefail
bin=$1 recording=$2 config=$3 golden=$4
command -v umockdev-run >/dev/null || { echo "skip: no umockdev-run"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
umockdev-run -d "$recording" -- "$bin" deviceclasses --from-generic-device-plugin "$config" >"$out"
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
