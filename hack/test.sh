#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what is needed, build, build (or reuse) the local
# Kubernetes control plane, and run every CTest test (unit, recordings, sanitizers, integration, e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
./hack/install-deps.sh
./hack/build.sh
# The sanitizer builds of the tests, run by the `sanitize` label (hack/sanitize.sh; LIKEN_SKIP_SANITIZE=1 skips).
if [ "${LIKEN_SKIP_SANITIZE:-0}" != 1 ]; then
  ./hack/sanitize.sh address --build-only
  ./hack/sanitize.sh thread --build-only
fi
if [ -x hack/build-control-plane.sh ] && [ "${LIKEN_SKIP_CLUSTER:-0}" != 1 ]; then
  ./hack/build-control-plane.sh
  ./hack/build-test-kubelet.sh
fi
jobs="${LIKEN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"
