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
# Each phase's wall time, printed at the end of the run (also when it fails): where a cold run's time goes.
phase_names=() phase_secs=()
run_start=$EPOCHREALTIME
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
# phase NAME COMMAND...: runs COMMAND and records its wall time under NAME.
phase() {
  local name=$1 t0=$EPOCHREALTIME status=0
  shift
  "$@" || status=$?
  phase_names+=("$name") phase_secs+=("$(seconds_since "$t0")")
  return "$status"
}
print_phases() {
  local i
  echo "==== hack/test.sh: phases (wall time, this machine: $(nproc 2>/dev/null || echo '?') cores)"
  for i in "${!phase_names[@]}"; do printf '  %-48s %6s s\n' "${phase_names[$i]}" "${phase_secs[$i]}"; done
  if [ -s build/ctest-labels.txt ]; then
    echo "  ctest, by label (each label's tests' times added up, sec*proc; the labels run side by side):"
    sed 's/^/    /' build/ctest-labels.txt
  fi
  printf '  %-48s %6s s\n' "the whole run" "$(seconds_since "$run_start")"
}
phase "install (hack/install-deps.sh)" ./hack/install-deps.sh
# The kind tier (label `kind`, test/kind/) runs by default; LIKEN_KIND=0 leaves it out. Its tools (kind, kubeadm,
# kube-proxy, CoreDNS) are built with the control plane; its node image by the test itself, as that needs the Docker
# engine it starts.
kind=${LIKEN_KIND:-1}
# The Go-built Kubernetes components (cached outside the tree; a cached run starts no go command) build in the
# background, at a lower priority (LIKEN_BUILD_NICE), while the C++ builds run: cold, their module downloads and
# single-threaded links leave a core idle that the C++ compiles use. Once the C++ builds are done they get both cores
# at normal priority (the running ones reniced, the later ones through LIKEN_BUILD_NICE_FILE). Their output is
# printed once they are done.
go_pid=""
go_log=build/go-builds.log
go_done=build/go-builds.done
mkdir -p build
rm -f "$go_done" build/go-builds.nice build/ctest-labels.txt
export LIKEN_BUILD_NICE_FILE=$PWD/build/go-builds.nice
trap 'print_phases; if [ -n "$go_pid" ]; then kill -- -"$go_pid" 2>/dev/null || true; fi' EXIT
if [ -x hack/build-control-plane.sh ] && [ "${LIKEN_SKIP_CLUSTER:-0}" != 1 ]; then
  go_start=$EPOCHREALTIME
  set -m # its own process group, so that a failed C++ build stops it too
  (
    set -e
    ./hack/build-control-plane.sh
    ./hack/build-test-kubelet.sh
    [ "$kind" != 1 ] || LIKEN_BUILD_PARTS=kind-tools ./hack/build-control-plane.sh
    echo "$EPOCHREALTIME" >"$go_done"
  ) >"$go_log" 2>&1 &
  go_pid=$!
  set +m
fi
phase "C++ build (hack/build.sh)" ./hack/build.sh
# The sanitizer builds of the tests, run by the `sanitize` label (hack/sanitize.sh; LIKEN_SKIP_SANITIZE=1 skips).
if [ "${LIKEN_SKIP_SANITIZE:-0}" != 1 ]; then
  phase "sanitizer build, address (build-asan)" ./hack/sanitize.sh address --build-only
  phase "sanitizer build, thread (build-tsan)" ./hack/sanitize.sh thread --build-only
fi
if [ -n "$go_pid" ]; then
  # The C++ builds are done: the Go builds may have both cores now.
  echo 0 >"$LIKEN_BUILD_NICE_FILE"
  if kill -0 -- -"$go_pid" 2>/dev/null; then
    renice -n 0 -g "$go_pid" >/dev/null 2>&1 ||
      echo "hack/test.sh: could not renice the running Go builds (not root?): they finish at their nice level"
  fi
  go_status=0
  phase "waiting for the Go builds after the C++ builds" wait "$go_pid" || go_status=$?
  go_pid=""
  cat "$go_log"
  if [ -s "$go_done" ]; then
    phase_names+=("Go builds (background, from the start)")
    phase_secs+=("$(awk -v a="$go_start" -v b="$(<"$go_done")" 'BEGIN { printf "%.0f", b - a }')")
  fi
  [ "$go_status" = 0 ] || { echo "hack/test.sh: building the Kubernetes components failed (exit $go_status, above)" >&2; exit 1; }
fi
skip=()
[ "$kind" = 1 ] || skip=(-LE '^kind$')
ctest_status=0 t0=$EPOCHREALTIME
ctest --test-dir build --output-on-failure -j"$jobs" "${skip[@]}" "$@" 2>&1 | tee build/ctest.log || ctest_status=$?
phase_names+=("ctest (every label, -j$jobs)") phase_secs+=("$(seconds_since "$t0")")
# CTest's own "Label Time Summary" (each label's test times added up).
sed -n '/^Label Time Summary:/,/^$/p' build/ctest.log | sed '1d;/^$/d' >build/ctest-labels.txt || true
exit "$ctest_status"
