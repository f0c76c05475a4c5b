#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running DP Explorer: installs what is
# missing (apt), builds Release and starts the app on its embedded default dataset.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

# Fashion-MNIST for the trainer's builtin:fashion-mnist dataset (optional at run time).
dpx_install_packages "${DPX_PACKAGES[@]}" dataset-fashion-mnist || dpx_install_packages "${DPX_PACKAGES[@]}"
dpx_build Release

app="$DPX_BUILD_DIR/app/dpexplorer"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "No display found: starting DP Explorer inside a virtual X server (xvfb-run)."
  echo "scripts/screenshot.sh saves pictures of it to docs/."
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@"
fi
exec "$app" "$@"
