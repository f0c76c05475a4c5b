#!/usr/bin/env bash
# Fails when an include crosses a layer the architecture forbids, naming the file and line:
#   - core/ is plain C++: no Qt header;
#   - ui/session/ (the application layer) and ui/compute/ are widget-free: no Qt Widgets or
#     Qt Charts header and no header of ui/'s views;
#   - a view under ui/ (a panel, tab, table or check view) includes no other view's header: views
#     receive the session, and only main_window composes them.
# Run by ctest (layer_check, label ui).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
failures=0
report() {
  echo "layer_check: $1" >&2
  failures=$((failures + 1))
}

while IFS= read -r hit; do
  report "$hit: core/ includes a Qt header"
done < <(grep -rnE '#include <Q[A-Za-z]+>' core --include='*.h' --include='*.cpp' || true)

views=$(cd ui && ls ./*.h | sed 's|^\./||' | grep -E '_(panel|tab|table|view)\.h$|^main_window\.h$|^knob_widget\.h$' || true)
widgetHeaders='#include <Q(Widget|Dialog|MainWindow|Label|PushButton|ComboBox|SpinBox|CheckBox|LineEdit|TableWidget|TabWidget|Chart|ChartView|LineSeries|ValueAxis|Application)>'
for dir in ui/session ui/compute; do
  while IFS= read -r hit; do
    report "$hit: $dir is widget-free"
  done < <(grep -rnE "$widgetHeaders" "$dir" || true)
  for view in $views; do
    while IFS= read -r hit; do
      report "$hit: $dir must not include the view $view"
    done < <(grep -rnF "#include \"$view\"" "$dir" || true)
  done
done

for file in ui/*.cpp ui/*.h; do
  own="$(basename "${file%.*}").h"
  [[ "$own" == "main_window.h" ]] && continue
  for view in $views; do
    [[ "$view" == "$own" || "$view" == "knob_widget.h" ]] && continue
    while IFS= read -r hit; do
      report "$file:$hit: a view includes another view ($view); pass it the session instead"
    done < <(grep -nF "#include \"$view\"" "$file" || true)
  done
done

if ((failures > 0)); then
  echo "layer_check: $failures crossing(s)" >&2
  exit 1
fi
echo "layer_check: core is Qt-free, ui/session and ui/compute are widget-free, views include no other view"
