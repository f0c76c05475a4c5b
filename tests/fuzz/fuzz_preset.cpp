// libFuzzer harness for parsePreset (ui/presets.cpp), the reader of preset and session files:
// any bytes must give a Status naming the reason, or a preset whose knobs pass Params::validate()
// and that survives serializePreset → parsePreset unchanged (what the atomic save relies on).
#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "presets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy, so that reading past the end of the input is caught by ASan at the input's edge.
  const QByteArray json(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  const auto parsed = dpx::ui::parsePreset(json, QStringLiteral("fuzz.json"));
  if (!parsed.isOk()) {
    if (parsed.status().message().empty()) dpx::fuzz::invariantFailed("fuzz_preset", "error status without a message");
    return 0;
  }
  if (const auto valid = parsed->params.validate(); !valid.isOk()) {
    dpx::fuzz::invariantFailed("fuzz_preset", "accepted params fail validate(): " + valid.message());
  }
  const QByteArray written = dpx::ui::serializePreset(*parsed);
  const auto reread = dpx::ui::parsePreset(written, QStringLiteral("round trip"));
  if (!reread.isOk()) {
    dpx::fuzz::invariantFailed("fuzz_preset", "serializePreset output is refused: " + reread.status().message());
  }
  if (!(*reread == *parsed)) dpx::fuzz::invariantFailed("fuzz_preset", "round trip changed the preset");
  return 0;
}
