#!/usr/bin/env bash
# The product binary built with LIKEN_STATIC_DEPS needs none of the shared libraries it links statically
# (gRPC, protobuf, Abseil, re2, c-ares, upb, yaml-cpp), and still runs.
#   static_deps_test.sh BINARY
set -euo pipefail
bin=${1:?usage: $0 BINARY}
needed=$(readelf -d "$bin" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }')
[ -n "$needed" ] || { echo "FAIL: readelf found no NEEDED entries in $bin"; exit 1; }
bad=$(echo "$needed" | grep -E '^lib(grpc|gpr|absl_|protobuf|re2|cares|upb|address_sorting|yaml-cpp)' || true)
if [ -n "$bad" ]; then
  echo "FAIL: $bin still needs shared libraries it should link statically:"
  echo "$bad"
  exit 1
fi
"$bin" healthcheck --help >/dev/null || { echo "FAIL: $bin healthcheck --help does not run"; exit 1; }
echo "ok: $bin needs only: $(echo "$needed" | tr '\n' ' ')"
