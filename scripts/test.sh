#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a full test run: installs what is missing
# (apt, including Fashion-MNIST so the tests that read it run instead of skipping), builds, then
# runs the suite in two steps (GUI tests on Qt's offscreen platform):
#   1. the default suite: every test except the `exhaustive` label (a few minutes of test time);
#   2. the exhaustive label: the 10⁵-combination knob sweep, in three parts ctest runs in parallel.
# Arguments go to both ctest calls (e.g. `scripts/test.sh -R trainer`). DPX_TEST_STEPS=default
# runs only step 1, DPX_TEST_STEPS=exhaustive only step 2.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

dpx_install_packages "${DPX_PACKAGES[@]}" "${DPX_PACKAGING_TOOLS[@]}" dataset-fashion-mnist clang-format
dpx_build "${DPX_BUILD_TYPE:-Release}"
cd "$DPX_BUILD_DIR"
export QT_QPA_PLATFORM=offscreen
steps="${DPX_TEST_STEPS:-default,exhaustive}"

if [[ ",$steps," == *",default,"* ]]; then
  echo "== Step 1: default suite (ctest -LE exhaustive)"
  start=$SECONDS
  ctest --output-on-failure --parallel "$(nproc)" -LE exhaustive "$@"
  echo "== Step 1 passed in $((SECONDS - start)) s"
fi
if [[ ",$steps," == *",exhaustive,"* ]]; then
  echo "== Step 2: exhaustive label (ctest -L exhaustive)"
  start=$SECONDS
  # An empty selection (e.g. a -R that matches no exhaustive test) is not a failure.
  ctest --output-on-failure --parallel "$(nproc)" -L exhaustive --no-tests=ignore "$@"
  echo "== Step 2 passed in $((SECONDS - start)) s"
fi
