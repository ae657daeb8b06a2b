#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what is needed, build, build (or reuse) the local
# Kubernetes control plane, and run every CTest test (unit, recordings, sanitizers, integration, e2e, node, kind).
#
#   hack/test.sh [CTEST ARGS...]              everything, against Kubernetes v1.37.2
#   hack/test.sh --k8s v1.34.4 [CTEST ARGS...]  the tiers that run a real Kubernetes (cluster, e2e, node) against
#                                             that release (its own cache directory; the unit tests do not
#                                             depend on the release and are not run again). hack/test-matrix.sh
#                                             runs it for every supported release.
set -euo pipefail
cd "$(dirname "$0")/.."
release=""
if [ "${1:-}" = "--k8s" ]; then
  release=${2:?usage: hack/test.sh --k8s vX.Y.Z [ctest args]}
  shift 2
elif [[ "${1:-}" == --k8s=* ]]; then
  release=${1#--k8s=}
  shift
fi
jobs="${LIKEN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
if [ -n "$release" ]; then
  export K8S_VERSION=$release
  ./hack/install-deps.sh
  ./hack/build.sh
  ./hack/build-control-plane.sh >/dev/null
  ./hack/build-test-kubelet.sh >/dev/null
  # The tiers share one cluster's ports (RESOURCE_LOCK), so -j only overlaps their set-up.
  exec ctest --test-dir build --output-on-failure -j"$jobs" -L '^(cluster|e2e|node)$' "$@"
fi
./hack/install-deps.sh
# The kind tier (label `kind`, test/kind/) runs by default; LIKEN_KIND=0 leaves it out. Its tools (kind, kubeadm,
# kube-proxy, CoreDNS) are built with the control plane; its node image by the test itself, as that needs the Docker
# engine it starts.
kind=${LIKEN_KIND:-1}
# The Go-built Kubernetes components (cached outside the tree; a cached run starts no go command) build in the
# background, at a lower priority (LIKEN_BUILD_NICE), while the C++ builds run: cold, their module downloads and
# single-threaded links leave a core idle that the C++ compiles use. Their output is printed once they are done.
go_pid=""
go_log=build/go-builds.log
if [ -x hack/build-control-plane.sh ] && [ "${LIKEN_SKIP_CLUSTER:-0}" != 1 ]; then
  mkdir -p build
  set -m # its own process group, so that a failed C++ build stops it too
  (
    set -e
    ./hack/build-control-plane.sh
    ./hack/build-test-kubelet.sh
    [ "$kind" != 1 ] || LIKEN_BUILD_PARTS=kind-tools ./hack/build-control-plane.sh
  ) >"$go_log" 2>&1 &
  go_pid=$!
  set +m
  trap 'if [ -n "$go_pid" ]; then kill -- -"$go_pid" 2>/dev/null || true; fi' EXIT
fi
./hack/build.sh
# The sanitizer builds of the tests, run by the `sanitize` label (hack/sanitize.sh; LIKEN_SKIP_SANITIZE=1 skips).
if [ "${LIKEN_SKIP_SANITIZE:-0}" != 1 ]; then
  ./hack/sanitize.sh address --build-only
  ./hack/sanitize.sh thread --build-only
fi
if [ -n "$go_pid" ]; then
  go_status=0
  wait "$go_pid" || go_status=$?
  go_pid=""
  cat "$go_log"
  [ "$go_status" = 0 ] || { echo "hack/test.sh: building the Kubernetes components failed (exit $go_status, above)" >&2; exit 1; }
fi
skip=()
[ "$kind" = 1 ] || skip=(-LE '^kind$')
ctest --test-dir build --output-on-failure -j"$jobs" "${skip[@]}" "$@"
