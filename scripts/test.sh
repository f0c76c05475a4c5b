#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a full test run: installs what is missing
# (apt), builds and runs every test (GUI tests on Qt's offscreen platform).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

dpx_install_packages "${DPX_PACKAGES[@]}"
dpx_build "${DPX_BUILD_TYPE:-Release}"
cd "$DPX_BUILD_DIR"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure --parallel "$(nproc)" "$@"
