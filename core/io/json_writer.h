// A small streaming JSON writer for the `dpx --json` machine interface: compact output,
// numbers with 10 significant digits (or, for documents that are recomputed and compared, the
// shortest text that reads back to the same double), strings escaped per RFC 8259. Plain C++ so
// core reports and the CLI share it without Qt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dpx::core {

// kDisplay: 10 significant digits, as the dpx contract prints them. kRoundTrip: the shortest
// decimal that parses back to the identical double (at most 17 significant digits).
enum class JsonNumbers { kDisplay, kRoundTrip };

class JsonWriter {
 public:
  JsonWriter() = default;
  explicit JsonWriter(JsonNumbers numbers) : m_numbers(numbers) {}

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);
  // A non-finite double breaks the "nothing non-finite leaves core" contract: it is written
  // as null and counted, so tests can assert nonFiniteCount() == 0.
  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& null();
  JsonWriter& numberArray(const std::vector<double>& numbers);

  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& str() const { return m_out; }
  int nonFiniteCount() const { return m_nonFinite; }

 private:
  void separate();
  std::string m_out;
  std::vector<bool> m_first;  // per open container: no element written yet
  bool m_afterKey = false;
  int m_nonFinite = 0;
  JsonNumbers m_numbers = JsonNumbers::kDisplay;
};

std::string jsonEscape(std::string_view text);
// The shortest decimal text of a finite double that reads back to it exactly ("1e-05", "0.1").
std::string roundTripNumber(double value);

}  // namespace dpx::core
