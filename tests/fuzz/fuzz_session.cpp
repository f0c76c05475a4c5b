// libFuzzer harness for parseSession (ui/session/session_file.cpp), the reader of .dpxsession
// files: any bytes must give a Status naming the reason, or a session whose knobs (and pinned
// knobs) pass Params::validate() and that serializeSession → parseSession writes back unchanged
// (what the atomic save relies on).
#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "session/session_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy, so that reading past the end of the input is caught by ASan at the input's edge.
  const QByteArray json(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  const dpx::ui::ModelState current;
  const auto parsed = dpx::ui::parseSession(json, QStringLiteral("fuzz.dpxsession"), current);
  if (!parsed.isOk()) {
    if (parsed.status().message().empty()) dpx::fuzz::invariantFailed("fuzz_session", "error status without a message");
    return 0;
  }
  if (const auto valid = parsed->state.params.validate(); !valid.isOk()) {
    dpx::fuzz::invariantFailed("fuzz_session", "accepted knobs fail validate(): " + valid.message());
  }
  if (parsed->pinned) {
    if (const auto valid = parsed->pinned->validate(); !valid.isOk()) {
      dpx::fuzz::invariantFailed("fuzz_session", "accepted pinned knobs fail validate(): " + valid.message());
    }
  }
  const QByteArray written = dpx::ui::serializeSession(*parsed);
  const auto reread = dpx::ui::parseSession(written, QStringLiteral("round trip"), current);
  if (!reread.isOk()) {
    dpx::fuzz::invariantFailed("fuzz_session", "serializeSession output is refused: " + reread.status().message());
  }
  if (dpx::ui::serializeSession(*reread) != written) {
    dpx::fuzz::invariantFailed("fuzz_session", "round trip changed the session");
  }
  return 0;
}
