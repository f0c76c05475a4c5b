#!/usr/bin/env bash
# Fails when a C++ source or header under app/ core/ ui/ tests/ bench/ resources/ is not
# formatted as .clang-format says (Google style, 120 columns), naming each file and line. Run by
# ctest (format_check, label core); `clang-format -i FILE…` fixes what it reports.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
formatter="${CLANG_FORMAT:-clang-format}"
if ! command -v "$formatter" > /dev/null; then
  echo "format_check: $formatter is not installed (apt-get install clang-format; scripts/test.sh installs it)" >&2
  exit 1
fi
cd "$root"
mapfile -t files < <(find app core ui tests bench resources \( -name '*.cpp' -o -name '*.h' \) -not -path '*/build*' | sort)
if ! "$formatter" --dry-run --Werror "${files[@]}"; then
  echo "format_check: run clang-format -i on the files above" >&2
  exit 1
fi
echo "format_check: ${#files[@]} files formatted as .clang-format says"
