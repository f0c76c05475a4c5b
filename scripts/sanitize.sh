#!/usr/bin/env bash
# Runs the test suite under sanitizers: scripts/sanitize.sh [asan|tsan|all|ci] [ctest args…]
#
#   asan  builds with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and runs the
#         whole default suite (every label but exhaustive) — memory errors, leaks, overflow, bad
#         shifts, misaligned or null accesses, float→int overflow;
#   tsan  builds with ThreadSanitizer in build-tsan/ and runs the threaded tests: the trainer and
#         frontier (mechanisms side by side in one arena), the mechanisms' statistics, the audit,
#         PLD cancellation, the sweep's worker threads, the GUI's background jobs and the
#         parallel feature extraction;
#   ci    what .ci/run adds after scripts/test.sh, in time for CI: ASan+UBSan over the core and
#         cli labels (the smoke sweep and the fuzz regressions included) and TSan over the
#         threaded tests, each building only the targets it runs, at -O1 with line tables (the
#         tests' own code with ASan or TSan but not UBSan: CMakeLists.txt says why), without
#         UBSan's null and alignment checks (below: why; DPX_SANITIZE_EXCLUDE= keeps them);
#   all   (default) asan and tsan.
# Qt, oneTBB and FFTW come from Debian uninstrumented, so TSan cannot see their internal
# synchronisation. A TSan build runs our parallel loops on plain threads TSan can follow instead of
# oneTBB's scheduler (core/common/parallel.h), background jobs hand over through a thread's start
# and join, and tests/sanitizers/tsan.supp ignores only interceptors called from inside Qt; the
# tsan_canary test, a deliberate race in a parallel loop, must be reported for the step to pass.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

mode="${1:-all}"
shift || true
case "$mode" in asan | tsan | all | ci) ;; *)
  echo "usage: scripts/sanitize.sh [asan|tsan|all|ci] [ctest args…]" >&2
  exit 2
  ;;
esac
dpx_install_packages "${DPX_PACKAGES[@]}"
JOBS="${DPX_JOBS:-$(nproc)}"

sanitized_build() {  # dir sanitizers excluded-checks [targets…]
  local dir="$1" sanitizers="$2" excluded="$3"
  shift 3
  cmake -S "$DPX_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPX_SANITIZE="$sanitizers" \
    -DDPX_SANITIZE_EXCLUDE="$excluded" \
    -DDPX_NATIVE=OFF -DDPX_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${DPX_SANITIZE_FLAGS:--O2 -g}"
  if [ $# -eq 0 ]; then
    cmake --build "$dir" --parallel "$JOBS"
  else
    cmake --build "$dir" --parallel "$JOBS" --target "$@"
  fi
}

# The test executables of tests/<area>/ (their ctest names are their file names), and those
# tests/CMakeLists.txt builds a second time from one of them (tst_parallel on plain threads).
tests_of() {
  for area in "$@"; do
    for file in "$DPX_ROOT"/tests/"$area"/tst_*.cpp; do basename "$file" .cpp; done
    if [ "$area" = core ]; then echo tst_parallel_plain_threads; fi
  done
}

# GCC's -fsanitize=undefined leaves out float→int overflow (a double outside the integer's range
# converted to it); it is asked for by name.
ASAN_CHECKS=address,undefined,float-cast-overflow
THREADED='^(tst_(parallel|trainer|frontier|mechanism_statistics|membership_inference|pld_accountant|sweep|background_job|dpx_audit|feature_extraction)|tsan_canary)$'
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$DPX_ROOT/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$DPX_ROOT/tests/sanitizers/tsan.supp"
# Qt Test's watchdog stops a test function after 5 minutes, a bound meant for plain builds: under
# ASan the sweep's smoke part took 305 s on a 2-core VM about twice as slow as the reference
# machine. ctest's --timeout below still bounds every test.
export QTEST_FUNCTION_TIMEOUT="${QTEST_FUNCTION_TIMEOUT:-1800000}"

status=0
if [ "$mode" = ci ]; then
  export DPX_SANITIZE_FLAGS="${DPX_SANITIZE_FLAGS:--O1 -g1}"
  # UBSan's null and alignment checks guard every pointer and reference use, so in Eigen's and
  # Boost's inner loops they were half of the sanitized build's compile time and two thirds of its
  # test time (the smoke sweep 351 → 136 s). CI leaves them to the asan mode: ASan itself stops
  # on a null dereference with a stack, x86-64 loads tolerate misalignment, and the code reads
  # bytes as other types only through memcpy.
  ci_excluded="${DPX_SANITIZE_EXCLUDE-null,alignment}"
  start=$SECONDS
  dir="${DPX_ASAN_DIR:-$DPX_ROOT/build-asan}"
  mapfile -t targets < <(tests_of core cli)
  sanitized_build "$dir" "$ASAN_CHECKS" "$ci_excluded" dpx "${targets[@]}"
  # The smoke sweep's random part on a third of its combinations (under TSan below, a sixth): its
  # tallies are compared by the plain run (scripts/test.sh); a third of them reach the same code.
  (cd "$dir" && DPX_SWEEP_COMBINATIONS="${DPX_ASAN_SWEEP_COMBINATIONS:-1000}" QT_QPA_PLATFORM=offscreen \
    ctest --output-on-failure --parallel "$JOBS" --timeout 3600 -L 'core|cli' -LE exhaustive -E format_check "$@") ||
    status=1
  echo "== ASan+UBSan (core, cli) took $((SECONDS - start)) s"
  start=$SECONDS
  dir="${DPX_TSAN_DIR:-$DPX_ROOT/build-tsan}"
  sanitized_build "$dir" thread "" dpx tst_parallel tsan_canary tst_trainer tst_frontier tst_mechanism_statistics \
    tst_membership_inference tst_pld_accountant tst_sweep tst_background_job tst_dpx_audit tst_feature_extraction
  # The smoke sweep's random part on a sixth of its combinations: the same threads racing on the
  # same accountants (its tallies are compared by the plain run); the longest test under TSan.
  (cd "$dir" && DPX_SWEEP_COMBINATIONS="${DPX_TSAN_SWEEP_COMBINATIONS:-500}" QT_QPA_PLATFORM=offscreen \
    ctest --output-on-failure --parallel "$JOBS" --timeout 3600 -R "$THREADED" "$@") || status=1
  echo "== TSan (threaded tests) took $((SECONDS - start)) s"
fi
if [ "$mode" = asan ] || [ "$mode" = all ]; then
  dir="${DPX_ASAN_DIR:-$DPX_ROOT/build-asan}"
  sanitized_build "$dir" "$ASAN_CHECKS" "${DPX_SANITIZE_EXCLUDE:-}"
  (cd "$dir" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --parallel "$JOBS" --timeout 3600 \
    -LE exhaustive "$@") || status=1
fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then
  dir="${DPX_TSAN_DIR:-$DPX_ROOT/build-tsan}"
  sanitized_build "$dir" thread ""
  (cd "$dir" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --parallel "$JOBS" --timeout 3600 \
    -R "$THREADED" "$@") || status=1
fi
[ "$status" -eq 0 ] && echo "sanitizers: clean"
exit "$status"
