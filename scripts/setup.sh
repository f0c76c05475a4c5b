#!/usr/bin/env bash
# Installs the Debian 12 packages DP Explorer needs (only those missing) and builds it.
# Sourced by scripts/run.sh and scripts/test.sh; usable alone: scripts/setup.sh [Release|Debug]
set -euo pipefail

DPX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DPX_BUILD_DIR="${DPX_BUILD_DIR:-$DPX_ROOT/build}"

# Build and test dependencies. libqt6opengl6-dev is listed because Debian 12's qt6-charts-dev
# needs its CMake config but does not depend on it.
DPX_PACKAGES=(cmake g++ make ninja-build pkg-config
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  libeigen3-dev libtbb-dev libboost-math-dev zlib1g-dev libfftw3-dev
  xvfb xauth)
# The Debian package (`cpack -G DEB`: dpkg-shlibdeps computes its Depends) and the checks of its
# files that the package_check test runs.
DPX_PACKAGING_TOOLS=(dpkg-dev appstream desktop-file-utils groff-base)

# New build trees use Ninja: unlike Make, it compiles a target's objects while the libraries it
# links are still being built, so both cores stay busy (a sanitizer build used 1.5 of them under
# Make). CMake ignores this for a tree configured before with another generator.
export CMAKE_GENERATOR="${CMAKE_GENERATOR:-Ninja}"

dpx_install_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
    $sudo apt-get update
    $sudo apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

dpx_build() {
  local type="${1:-Release}"
  cmake -S "$DPX_ROOT" -B "$DPX_BUILD_DIR" -DCMAKE_BUILD_TYPE="$type"
  cmake --build "$DPX_BUILD_DIR" --parallel "$(nproc)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  dpx_install_packages "${DPX_PACKAGES[@]}"
  dpx_build "${1:-Release}"
fi
