#!/usr/bin/env bash
# Fails when an include crosses a layer the architecture forbids, naming the file and line:
#   - core/ is plain C++: no Qt header;
#   - ui/session/ (the application layer) and ui/compute/ are widget-free: no Qt Widgets or
#     Qt Charts header and no header of ui/'s views;
#   - a view under ui/ (a panel, tab, table or check view) includes no other view's header: views
#     receive the session, and only main_window composes them;
#   - an accountant's or a mechanism's id is written once, in its info record (the accountant's
#     AccountantInfo, the row of core/training/mechanism.cpp): ui/ and app/ read it from there
#     (accountantOf<PldAccountant>().id(), mechanismId(Mechanism::kSgd)) and hold no literal
#     "pld", "dp-sgd" or curve key "pld:lower" / "tradeoff:pld". Comments and prose that merely
#     mention an id are fine; a literal that is not a reference to the analysis (a command name, a
#     format field) carries the comment `id-literal-ok: <why>` on its line.
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

# The ids, read from where they are defined; a count that does not match the registry means this
# script no longer reads them right, which must not pass silently.
ids_of() { sed -n 's/.*"\([^"]*\)".*/\1/p'; }
accountant_ids=$(grep -ho '\.id = "[^"]*"' core/accounting/*_accountant.cpp | ids_of)
registered=$(tr '\n' ' ' <core/accounting/registry.cpp | grep -o 'instances<[^>]*>' | tail -1 | tr -cd ',' | wc -c)
registered=$((registered + 1))
mechanism_ids=$(tr '\n' ' ' <core/training/mechanism.cpp | grep -o 'Mechanism::k[A-Za-z]*, *"[^"]*"' | ids_of)
mechanisms=$(sed -n '/^enum class Mechanism {/,/^};/p' core/training/mechanism.h | grep -c '^ *k[A-Za-z]*,' || true)
if (($(wc -w <<<"$accountant_ids") != registered || $(wc -w <<<"$mechanism_ids") != mechanisms)); then
  report "read $(wc -w <<<"$accountant_ids") accountant ids for $registered registered accountants and" \
    "$(wc -w <<<"$mechanism_ids") mechanism ids for $mechanisms mechanisms: update the id check"
fi
ids=$(printf '%s\n' $accountant_ids $mechanism_ids | sort -u | paste -sd'|')
# "pld", "pld:lower", "tradeoff:pld" — not prose such as "pld: the largest TPR …".
literal="\"($ids)(:[A-Za-z0-9_-]+)?\"|\"[A-Za-z0-9_-]+:($ids)\""
while IFS= read -r hit; do
  report "$hit: an id literal; read it from its accountant or mechanism (accountantOf<A>().id(), mechanismId(m))"
done < <(grep -rnE "$literal" ui app --include='*.cpp' --include='*.h' | grep -v 'id-literal-ok:' |
  sed -E 's#(^[^:]+:[0-9]+:)[[:space:]]*//.*#\1#; s#[[:space:]]//[[:space:]].*$##' | grep -E "$literal" |
  sed -E 's/^([^:]+:[0-9]+):.*/\1/' || true)

if ((failures > 0)); then
  echo "layer_check: $failures crossing(s)" >&2
  exit 1
fi
echo "layer_check: core is Qt-free, ui/session and ui/compute are widget-free, views include no other view," \
  "ui/ and app/ hold no accountant or mechanism id literal"
