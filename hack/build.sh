#!/usr/bin/env bash
# Configures and builds liken-dra in build/ with both cores (or $LIKEN_JOBS): everything, or the targets given.
#   hack/build.sh              binary, tests, benchmarks
#   hack/build.sh liken-dra    the binary only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${LIKEN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE="${LIKEN_BUILD_TYPE:-RelWithDebInfo}"
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$jobs" "${targets[@]}"
