#!/usr/bin/env bash
# Runs the test suite under sanitizers: scripts/sanitize.sh [asan|tsan|all] [ctest args…]
#
#   asan  builds with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and runs the
#         whole suite (every label) — memory errors, leaks, overflow, bad shifts, misaligned or
#         null accesses, float→int overflow;
#   tsan  builds with ThreadSanitizer in build-tsan/ and runs the threaded tests: the trainer,
#         the mechanisms' statistics, the audit and the GUI's background workers.
#   all   (default) both.
# Qt, oneTBB and FFTW come from Debian uninstrumented, so TSan cannot see their internal
# synchronisation; tests/sanitizers/tsan.supp suppresses reports *inside* those libraries only —
# a race in our code is still reported.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

mode="${1:-all}"
shift || true
case "$mode" in asan | tsan | all) ;; *)
  echo "usage: scripts/sanitize.sh [asan|tsan|all] [ctest args…]" >&2
  exit 2
  ;;
esac
dpx_install_packages "${DPX_PACKAGES[@]}"
JOBS="${DPX_JOBS:-$(nproc)}"

sanitized_build() {  # dir sanitizers
  cmake -S "$DPX_ROOT" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPX_SANITIZE="$2" \
    -DDPX_NATIVE=OFF -DDPX_BUILD_BENCH=OFF
  cmake --build "$1" --parallel "$JOBS"
}

status=0
if [ "$mode" = asan ] || [ "$mode" = all ]; then
  dir="${DPX_ASAN_DIR:-$DPX_ROOT/build-asan}"
  sanitized_build "$dir" address,undefined
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$DPX_ROOT/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  (cd "$dir" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --parallel "$JOBS" --timeout 3600 "$@") || status=1
fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then
  dir="${DPX_TSAN_DIR:-$DPX_ROOT/build-tsan}"
  sanitized_build "$dir" thread
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$DPX_ROOT/tests/sanitizers/tsan.supp"
  (cd "$dir" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 3600 \
    -R 'tst_(trainer|mechanism_statistics|membership_inference|main_window|dpx_audit)$' "$@") || status=1
fi
[ "$status" -eq 0 ] && echo "sanitizers: clean"
exit "$status"
