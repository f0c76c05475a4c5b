#include "io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/format.h"

namespace dpx::core {

std::string jsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string roundTripNumber(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc()) return formatNumber(value, 17);
  return std::string(buffer, end);
}

void JsonWriter::separate() {
  if (m_afterKey) {
    m_afterKey = false;
    return;
  }
  if (!m_first.empty()) {
    if (!m_first.back()) m_out += ',';
    m_first.back() = false;
  }
}

JsonWriter& JsonWriter::beginObject() {
  separate();
  m_out += '{';
  m_first.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  m_out += '}';
  m_first.pop_back();
  return *this;
}

JsonWriter& JsonWriter::beginArray() {
  separate();
  m_out += '[';
  m_first.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  m_out += ']';
  m_first.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  m_out += '"';
  m_out += jsonEscape(name);
  m_out += "\":";
  m_afterKey = true;
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) {
    ++m_nonFinite;
    return null();
  }
  separate();
  m_out += m_numbers == JsonNumbers::kRoundTrip ? roundTripNumber(number) : formatNumber(number);
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  separate();
  m_out += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  separate();
  m_out += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  m_out += '"';
  m_out += jsonEscape(text);
  m_out += '"';
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  m_out += "null";
  return *this;
}

JsonWriter& JsonWriter::numberArray(const std::vector<double>& numbers) {
  beginArray();
  for (double v : numbers) value(v);
  return endArray();
}

}  // namespace dpx::core
