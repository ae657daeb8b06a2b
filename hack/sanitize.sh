#!/usr/bin/env bash
# Sanitizer builds of the tests, each in its own build directory, compiled with clang. Only the binary and the
# test executables are built (target test_binaries), and every test but the cluster, e2e, node, image and kind labels runs (those need the real, uninstrumented binary).
#   hack/sanitize.sh address   build-asan: AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer,
#                              and clang's thread-safety analysis (-Wthread-safety -Werror) on the same compile
#   hack/sanitize.sh thread    build-tsan: ThreadSanitizer
# Options after the variant: --build-only (configure and build, run nothing); --if-configured (exit 77, CTest's
# skip, when the build directory was never configured: the `sanitize` label in build/ uses this); anything else
# goes to ctest (e.g. -R informer).
# A sanitizer report anywhere, also in a process whose exit status a test expects to be non-zero, fails the run;
# the reports are printed at the end. Suppressions (third-party code only, each with its reason): test/sanitizers/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
variant="${1:-}"
case "$variant" in
  address) dir=build-asan; cmake_args=(-DLIKEN_SANITIZE=address -DLIKEN_THREAD_SAFETY_ANALYSIS=ON) ;;
  thread) dir=build-tsan; cmake_args=(-DLIKEN_SANITIZE=thread) ;;
  *) echo "usage: hack/sanitize.sh address|thread [--build-only|--if-configured] [ctest args]" >&2; exit 2 ;;
esac
shift
build_only=0
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --build-only) build_only=1 ;;
    --if-configured)
      if [ ! -f "$dir/CMakeCache.txt" ]; then
        echo "$dir is not configured: run hack/sanitize.sh $variant (hack/test.sh does)"
        exit 77
      fi ;;
    *) ctest_args+=("$arg") ;;
  esac
done

jobs="${LIKEN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
if [ ! -f "$dir/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  # -O1 with line tables: readable reports at a fraction of -O2 -g's compile time. Tests are listed when CTest
  # runs (PRE_TEST), not by running every instrumented test binary during the build.
  CC=clang CXX=clang++ cmake -S . -B "$dir" "${generator[@]}" "${cmake_args[@]}" \
    -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" \
    -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST
fi
cmake --build "$dir" -j"$jobs" --target test_binaries
[ "$build_only" = 1 ] && exit 0

# Reports go to files, so that one in a process whose failure a test expects still fails the run. The name has no
# directory: the runtime would create one with libc's mkdir before umockdev's preload library (which wraps it) is
# ready, and crash. So each report lands in its process's working directory (the test's, under $dir/test).
report_name=sanitizer-report
find "$dir" -name "$report_name.*" -delete
supp="$root/test/sanitizers"
export ASAN_OPTIONS="log_path=$report_name:detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$report_name:suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=1"
# Debian's gRPC, protobuf, Abseil, cpprestsdk and libstdc++ are not instrumented: their own accesses are
# invisible, and the ones TSan sees in its interceptors (memcpy, free, epoll) race with nothing it can order.
# ignore_noninstrumented_modules skips those; every access from this project's code is still checked.
export TSAN_OPTIONS="log_path=$report_name:suppressions=$supp/tsan.supp:ignore_noninstrumented_modules=1:second_deadlock_stack=1:print_suppressions=0"

run=(ctest --test-dir "$dir" --output-on-failure -j"$jobs" -LE '^(cluster|e2e|node|image|kind)$' "${ctest_args[@]}")
# ThreadSanitizer needs the narrower address layout of a process without address randomization on kernels with
# more mmap entropy than it knows (vm.mmap_rnd_bits > 28); the personality is inherited by every test process.
if [ "$variant" = thread ] && command -v setarch >/dev/null 2>&1; then
  run=(setarch "$(uname -m)" -R "${run[@]}")
fi
status=0
"${run[@]}" || status=$?
mapfile -t reports < <(find "$dir" -name "$report_name.*" | sort)
if [ ${#reports[@]} -gt 0 ]; then
  for report in "${reports[@]}"; do
    echo "==== $report"
    cat "$report"
  done
  echo "sanitizer reports: ${#reports[@]} (listed above)" >&2
  [ "$status" = 0 ] && status=1
fi
exit "$status"
