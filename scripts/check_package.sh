#!/usr/bin/env bash
# Builds the Debian package of a build tree (cpack -G DEB, into its own directory) and fails,
# naming what is wrong, unless:
#   - `dpkg-deb --contents` lists dpexplorer and dpx, the desktop entry, the AppStream metainfo, the
#     icon (SVG and every PNG size) and dpx's man page;
#   - the control fields are right: package dpexplorer at the project's version, section science,
#     Depends computed by dpkg-shlibdeps (the Qt, oneTBB and C++ runtime packages);
#   - the unpacked executables find every shared library (ldd) and run: `dpx --version` and
#     `dpexplorer --version` print the version;
#   - the desktop entry and the metainfo validate (desktop-file-validate, appstreamcli), the
#     metainfo's newest release is the project's version;
#   - the man page renders without a groff warning, names every command `dpx --help` lists and
#     the project's version.
# Usage: scripts/check_package.sh BUILD_DIR VERSION (ctest package_check, label package; the
# tools come from scripts/setup.sh's DPX_PACKAGING_TOOLS, which scripts/test.sh installs).
set -euo pipefail
build="$(cd "$1" && pwd)"
version="$2"
cpack="${CPACK:-cpack}"
app_id=io.github.dpexplorer.DPExplorer
failures=0
fail() {
  echo "package_check: $1" >&2
  failures=$((failures + 1))
}

for tool in "$cpack" dpkg-deb dpkg-shlibdeps appstreamcli desktop-file-validate groff; do
  if ! command -v "$tool" > /dev/null; then
    echo "package_check: $tool is not installed (scripts/test.sh installs DPX_PACKAGING_TOOLS)" >&2
    exit 1
  fi
done

# Its own directory: cpack stages the installation under its output directory, so this never
# meets a `cpack` the user runs in the build tree.
out="$build/package-check"
rm -rf "$out"
mkdir -p "$out"
if ! "$cpack" -G DEB -B "$out" --config "$build/CPackConfig.cmake" > "$out/cpack.log" 2>&1; then
  cat "$out/cpack.log" >&2
  echo "package_check: cpack -G DEB failed" >&2
  exit 1
fi
shopt -s nullglob
debs=("$out"/dpexplorer_"$version"_*.deb)
if ((${#debs[@]} != 1)); then
  echo "package_check: expected one dpexplorer_${version}_<arch>.deb in $out, found: $(ls "$out")" >&2
  exit 1
fi
deb="${debs[0]}"

listing="$(dpkg-deb --contents "$deb" | awk '{print $NF}')"
expected=(./usr/bin/dpexplorer ./usr/bin/dpx
  "./usr/share/applications/$app_id.desktop"
  "./usr/share/metainfo/$app_id.metainfo.xml"
  "./usr/share/icons/hicolor/scalable/apps/$app_id.svg"
  ./usr/share/man/man1/dpx.1.gz
  ./usr/share/doc/dpexplorer/USER_GUIDE.md ./usr/share/doc/dpexplorer/DATASETS.md)
for size in 16 32 48 64 128 256; do
  expected+=("./usr/share/icons/hicolor/${size}x${size}/apps/$app_id.png")
done
for path in "${expected[@]}"; do
  grep -qxF "$path" <<< "$listing" || fail "the package does not contain $path"
done

field() { dpkg-deb --field "$deb" "$1"; }
[[ "$(field Package)" == dpexplorer ]] || fail "Package is '$(field Package)', not dpexplorer"
[[ "$(field Version)" == "$version" ]] || fail "Version is '$(field Version)', not $version"
[[ "$(field Section)" == science ]] || fail "Section is '$(field Section)', not science"
[[ -n "$(field Maintainer)" ]] || fail "no Maintainer field"
depends="$(field Depends)"
depended=" $(sed 's/ *([^)]*)//g; s/,/ /g' <<< "$depends") "  # the package names alone
for library in libc6 libstdc++6 libqt6core6 libqt6gui6 libqt6widgets6 libqt6charts6 libqt6svg6 libtbb12; do
  [[ "$depended" == *" $library "* ]] || fail "Depends lacks $library: $depends"
done

root="$out/root"
dpkg-deb -x "$deb" "$root"
for exe in dpexplorer dpx; do
  missing="$(ldd "$root/usr/bin/$exe" | grep 'not found' || true)"
  [[ -z "$missing" ]] || fail "usr/bin/$exe: shared libraries not found: $missing"
  # Nothing of the build tree may be needed: no RPATH or RUNPATH into it.
  if readelf -d "$root/usr/bin/$exe" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    fail "usr/bin/$exe has an RPATH into the build tree"
  fi
done
dpx_version="$("$root/usr/bin/dpx" --version)" || fail "the packaged dpx --version failed"
[[ "$(head -1 <<< "$dpx_version")" == "dpx $version" ]] || fail "the packaged dpx --version printed: $dpx_version"
gui_version="$(QT_QPA_PLATFORM=offscreen "$root/usr/bin/dpexplorer" --version 2> /dev/null)" ||
  fail "the packaged dpexplorer --version failed"
grep -qF "$version" <<< "$gui_version" || fail "the packaged dpexplorer --version printed: $gui_version"

desktop-file-validate "$root/usr/share/applications/$app_id.desktop" >&2 ||
  fail "desktop-file-validate rejects $app_id.desktop"
metainfo="$root/usr/share/metainfo/$app_id.metainfo.xml"
appstreamcli validate --no-net "$metainfo" > "$out/appstream.log" 2>&1 || {
  cat "$out/appstream.log" >&2
  fail "appstreamcli validate rejects $app_id.metainfo.xml"
}
release="$(grep -o '<release version="[^"]*"' "$metainfo" | head -1 | cut -d'"' -f2)"
[[ "$release" == "$version" ]] ||
  fail "the metainfo's newest release is '$release', not $version: add <release version=\"$version\" date=…>"

man_page="$(gunzip -c "$root/usr/share/man/man1/dpx.1.gz")"
warnings="$(groff -man -Tutf8 -ww -z <<< "$man_page" 2>&1)"
[[ -z "$warnings" ]] || fail "dpx.1: groff warns: $warnings"
grep -qF "\"DP Explorer $version\"" <<< "$man_page" || fail "dpx.1's .TH line does not name DP Explorer $version"
commands="$("$root/usr/bin/dpx" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')"
[[ -n "$commands" ]] || fail "dpx --help lists no commands"
for command in $commands; do
  grep -qE "^\.(SS|TP|B) .*\b$command\b" <<< "$man_page" || fail "dpx.1 does not describe 'dpx $command'"
done

if ((failures > 0)); then
  echo "package_check: $failures problems in $deb" >&2
  exit 1
fi
echo "package_check: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) lists ${#expected[@]} expected files;" \
  "Depends: $depends"
