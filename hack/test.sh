#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what is needed, build, build (or reuse) the local
# Kubernetes control plane, and run every CTest test (unit, recordings, sanitizers, integration, e2e; the kind tier
# with LIKEN_KIND=1).
set -euo pipefail
cd "$(dirname "$0")/.."
./hack/install-deps.sh
./hack/build.sh
# The sanitizer builds of the tests, run by the `sanitize` label (hack/sanitize.sh; LIKEN_SKIP_SANITIZE=1 skips).
if [ "${LIKEN_SKIP_SANITIZE:-0}" != 1 ]; then
  ./hack/sanitize.sh address --build-only
  ./hack/sanitize.sh thread --build-only
fi
# The kind tier (label `kind`, test/kind/): LIKEN_KIND=1 runs it, 0 leaves it out. Its tools (kind, kubeadm,
# kube-proxy, CoreDNS) are built here; its node image by the test itself, as that needs the Docker engine it starts.
kind=${LIKEN_KIND:-0}
if [ -x hack/build-control-plane.sh ] && [ "${LIKEN_SKIP_CLUSTER:-0}" != 1 ]; then
  ./hack/build-control-plane.sh
  ./hack/build-test-kubelet.sh
  [ "$kind" != 1 ] || LIKEN_BUILD_PARTS=kind-tools ./hack/build-control-plane.sh >/dev/null
fi
skip=()
[ "$kind" = 1 ] || skip=(-LE '^kind$')
jobs="${LIKEN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
ctest --test-dir build --output-on-failure -j"$jobs" "${skip[@]}" "$@"
