#!/usr/bin/env bash
# Starts DP Explorer under a virtual X server, lets it compute every view, train on the embedded
# digits and audit, and saves PNGs of the main views to docs/screenshots/ (used by the README).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
dpx_install_packages "${DPX_PACKAGES[@]}"
[ -x "$DPX_BUILD_DIR/app/dpexplorer" ] || dpx_build Release
out="${1:-$DPX_ROOT/docs/screenshots}"
# The Phases tab shows a Poisson warm-up followed by epochs of random allocation.
xvfb-run -a -s "-screen 0 1600x1000x24" "$DPX_BUILD_DIR/app/dpexplorer" --screenshot "$out" \
  --events "$DPX_ROOT/tests/data/events/warmup_then_allocation.json"
echo "Screenshots in $out:"
ls -1 "$out"
