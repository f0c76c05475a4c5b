#!/usr/bin/env bash
# Fuzzes every reader of untrusted files with libFuzzer: scripts/fuzz.sh [SECONDS] [HARNESS…]
#
# Installs clang (Debian's, with libFuzzer and the sanitizer runtimes) when missing, configures
# a clang build with ASan + UBSan + coverage in build-fuzz/ (DPX_BUILD_FUZZERS=ON), builds the
# harnesses of tests/fuzz and runs each for SECONDS (default 600; DPX_JOBS or nproc of them at a
# time) starting from its seed corpus
# in tests/data/fuzz/<harness>/ and the kept reproducers in tests/data/fuzz/regressions/<harness>/.
# New coverage goes to build-fuzz/corpus/<harness>/, findings to build-fuzz/crashes/<harness>/
# (crash-*, leak-*, timeout-*, oom-*). Exits non-zero when any harness found something.
# Harnesses: csv libsvm idx gzip preset session (all by default). DPX_FUZZ_FLAGS sets the optimisation
# (default -O2 -g; .ci/run builds at -O1 -g1 and fuzzes each harness 15 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

SECONDS_PER_HARNESS="${1:-600}"
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=(csv libsvm idx gzip preset session)
if ! [[ "$SECONDS_PER_HARNESS" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_HARNESS" -lt 1 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [csv|libsvm|idx|gzip|preset|session …]" >&2
  exit 2
fi

# clang-14 brings libFuzzer and the ASan/UBSan runtimes (libclang-rt-14-dev); lld links faster.
FUZZ_PACKAGES=(clang libclang-rt-14-dev lld)
dpx_install_packages "${DPX_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"

FUZZ_DIR="${DPX_FUZZ_DIR:-$DPX_ROOT/build-fuzz}"
JOBS="${DPX_JOBS:-$(nproc)}"
CXX_COMPILER="$(command -v clang++ || command -v clang++-14)"
LINKER_FLAGS=""
command -v ld.lld >/dev/null && LINKER_FLAGS="-fuse-ld=lld"

cmake -S "$DPX_ROOT" -B "$FUZZ_DIR" \
  -DCMAKE_CXX_COMPILER="$CXX_COMPILER" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${DPX_FUZZ_FLAGS:--O2 -g}" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINKER_FLAGS" \
  -DDPX_BUILD_FUZZERS=ON -DDPX_BUILD_TESTS=OFF -DDPX_BUILD_BENCH=OFF -DDPX_NATIVE=OFF \
  -DDPX_SANITIZE=fuzzer-no-link,address,undefined
targets=()
for harness in "${HARNESSES[@]}"; do targets+=(--target "fuzz_$harness"); done
cmake --build "$FUZZ_DIR" --parallel "$JOBS" "${targets[@]}"

# Abort on the first report so libFuzzer saves the input; a huge allocation is a finding
# (allocator_may_return_null=0), not a std::bad_alloc the parser may swallow.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:allocator_may_return_null=0:symbolize=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:symbolize=1"

failed=()
summary=()
marker="$FUZZ_DIR/.fuzz-run-start"
touch "$marker"
# One harness, its exit status written beside its log (the harnesses run $JOBS at a time: each
# libFuzzer process is single-threaded).
run_harness() {
  local harness="$1"
  local seeds="$DPX_ROOT/tests/data/fuzz/$harness"
  local regressions="$DPX_ROOT/tests/data/fuzz/regressions/$harness"
  local corpus="$FUZZ_DIR/corpus/$harness"
  local crashes="$FUZZ_DIR/crashes/$harness"
  local log="$FUZZ_DIR/logs/$harness.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local dirs=("$corpus" "$seeds")
  [ -d "$regressions" ] && dirs+=("$regressions")
  local dict=()
  [ -f "$DPX_ROOT/tests/fuzz/$harness.dict" ] && dict=(-dict="$DPX_ROOT/tests/fuzz/$harness.dict")
  local max_len
  case "$harness" in
    idx | gzip) max_len=65536 ;;  # room for a compressed payload
    *) max_len=16384 ;;
  esac
  local status=0
  "$FUZZ_DIR/tests/fuzz/fuzz_$harness" "${dirs[@]}" "${dict[@]}" \
    -max_total_time="$SECONDS_PER_HARNESS" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  echo "$status" >"$FUZZ_DIR/logs/$harness.status"
}

running=0
for harness in "${HARNESSES[@]}"; do
  echo "== fuzz_$harness: ${SECONDS_PER_HARNESS}s (log: $FUZZ_DIR/logs/$harness.log)"
  run_harness "$harness" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

for harness in "${HARNESSES[@]}"; do
  crashes="$FUZZ_DIR/crashes/$harness"
  log="$FUZZ_DIR/logs/$harness.log"
  status="$(cat "$FUZZ_DIR/logs/$harness.status" 2>/dev/null || echo '?')"
  execs="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')"
  found="$(find "$crashes" -type f -newer "$marker" | wc -l)"
  summary+=("fuzz_$harness: ${SECONDS_PER_HARNESS}s, $execs executions, exit $status, $found new finding(s) in $crashes")
  if [ "$status" != 0 ] || [ "$found" -gt 0 ]; then
    failed+=("$harness")
    tail -n 40 "$log" >&2
  fi
done

printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (inputs in $FUZZ_DIR/crashes/)" >&2
  exit 1
fi
echo "no crashes, hangs or out-of-memory inputs"
