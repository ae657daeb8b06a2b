#!/usr/bin/env bash
# Every supported Kubernetes release: builds (or reuses) its control plane, node and test kubelet, timing the build
# and a second, cached run of it, then runs the cluster, e2e and node tiers against it (hack/test.sh --k8s). Prints
# one line per release and a summary; exits non-zero when any release fails.
#
#   hack/test-matrix.sh [--build-only] [RELEASE...]   (default: v1.34.4 v1.35.4 v1.36.3 v1.37.2)
#
# A build's time is "cold" only when the release's cache directory (~/.cache/liken-dra/k8s-<release>) was empty;
# the Go module and build caches are shared, so the second release builds faster than the first. Results go to
# stdout and to ${LIKEN_MATRIX_LOG:-build/matrix}/<release>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(v1.34.4 v1.35.4 v1.36.3 v1.37.2)
LOGS=${LIKEN_MATRIX_LOG:-build/matrix}
CACHE=${LIKEN_CACHE:-$HOME/.cache/liken-dra}
mkdir -p "$LOGS"
summary=()
failures=0
for r in "${releases[@]}"; do
  log="$LOGS/$r.log"
  state=cold
  [ -d "$CACHE/k8s-$r/bin" ] && state=warm
  t0=$(date +%s)
  if ! K8S_VERSION=$r ./hack/build-control-plane.sh >>"$log" 2>&1 ||
    ! K8S_VERSION=$r ./hack/build-test-kubelet.sh >>"$log" 2>&1; then
    summary+=("$r build FAILED (see $log)")
    failures=$((failures + 1))
    continue
  fi
  t1=$(date +%s)
  K8S_VERSION=$r ./hack/build-control-plane.sh >>"$log" 2>&1
  K8S_VERSION=$r ./hack/build-test-kubelet.sh >>"$log" 2>&1
  t2=$(date +%s)
  line="$r build ($state cache) $((t1 - t0))s, cached $((t2 - t1))s"
  if [ $build_only = 0 ]; then
    if ./hack/test.sh --k8s "$r" >>"$log" 2>&1; then
      line+=", tiers passed in $(($(date +%s) - t2))s"
    else
      line+=", tiers FAILED after $(($(date +%s) - t2))s (see $log)"
      failures=$((failures + 1))
    fi
  fi
  echo "$line"
  summary+=("$line")
done
echo "--- matrix ($(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d))"
printf '%s\n' "${summary[@]}"
[ $failures -eq 0 ]
