#include "io/json_reader.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>

#include "common/utf8.h"
#include "io/json_writer.h"

namespace dpx::core {

JsonValue::JsonValue() = default;
JsonValue::JsonValue(bool flag) : m_data(flag) {}
JsonValue::JsonValue(std::string text) : m_data(std::move(text)) {}
JsonValue::JsonValue(const char* text) : m_data(std::string(text)) {}
JsonValue::JsonValue(Array elements) : m_data(std::move(elements)) {}
JsonValue::JsonValue(Object members) : m_data(std::move(members)) {}
JsonValue::JsonValue(double number, std::string text)
    : m_data(Number{number, text.empty() ? roundTripNumber(number) : std::move(text)}) {}

bool JsonValue::asBool() const {
  const bool* flag = std::get_if<bool>(&m_data);
  return flag != nullptr && *flag;
}

double JsonValue::asNumber() const {
  const Number* number = std::get_if<Number>(&m_data);
  return number != nullptr ? number->value : 0.0;
}

const std::string& JsonValue::asString() const {
  static const std::string empty;
  const std::string* text = std::get_if<std::string>(&m_data);
  return text != nullptr ? *text : empty;
}

const JsonValue::Array& JsonValue::asArray() const {
  static const Array empty;
  const Array* elements = std::get_if<Array>(&m_data);
  return elements != nullptr ? *elements : empty;
}

const JsonValue::Object& JsonValue::asObject() const {
  static const Object empty;
  const Object* members = std::get_if<Object>(&m_data);
  return members != nullptr ? *members : empty;
}

const std::string& JsonValue::numberText() const {
  static const std::string empty;
  const Number* number = std::get_if<Number>(&m_data);
  return number != nullptr ? number->text : empty;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  const Object* members = std::get_if<Object>(&m_data);
  if (members == nullptr) return nullptr;
  for (auto it = members->rbegin(); it != members->rend(); ++it) {
    if (it->key == key) return &it->value;
  }
  return nullptr;
}

namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string hex4(unsigned value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04X", value);
  return buffer;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : m_text(text) {
    if (m_text.substr(0, kByteOrderMark.size()) == kByteOrderMark) m_pos = kByteOrderMark.size();
  }

  Result<JsonValue> parse() {
    JsonValue value;
    if (!parseValue(value, "expected a JSON value")) return *m_error;
    skipSpace();
    if (m_pos != m_text.size()) {
      fail("expected the end of the text after the JSON value");
      return *m_error;
    }
    return value;
  }

 private:
  bool atEnd() const { return m_pos >= m_text.size(); }
  char peek() const { return m_text[m_pos]; }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++m_pos;
  }

  // "<what> at byte N (line L, column C)"; at the end of the text, "<what> but the text ends at …".
  bool fail(const std::string& what) { return failAt(m_pos, what); }
  bool failAt(std::size_t offset, const std::string& what) {
    std::size_t line = 1;
    std::size_t column = 1;
    const std::size_t start = m_text.substr(0, kByteOrderMark.size()) == kByteOrderMark ? kByteOrderMark.size() : 0;
    for (std::size_t i = start; i < offset && i < m_text.size(); ++i) {
      const char c = m_text[i];
      if (c == '\n' || (c == '\r' && (i + 1 >= m_text.size() || m_text[i + 1] != '\n'))) {
        ++line;
        column = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && c != '\r') {
        ++column;  // one per character: continuation bytes of UTF-8 do not count
      }
    }
    const bool atTheEnd = offset >= m_text.size();
    m_error =
        Status::parseError(what + (atTheEnd ? " but the text ends at byte " : " at byte ") + std::to_string(offset) +
                           " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")");
    return false;
  }

  bool parseValue(JsonValue& out, const char* expected) {
    skipSpace();
    if (atEnd()) return fail(expected);
    switch (peek()) {
      case '{':
        return parseObject(out);
      case '[':
        return parseArray(out);
      case '"': {
        std::string text;
        if (!parseString(text)) return false;
        out = JsonValue(std::move(text));
        return true;
      }
      case 't':
        return parseLiteral("true", JsonValue(true), out);
      case 'f':
        return parseLiteral("false", JsonValue(false), out);
      case 'n':
        return parseLiteral("null", JsonValue(), out);
      default:
        if (peek() == '-' || isDigit(peek())) return parseNumber(out);
        return fail(expected);
    }
  }

  bool parseLiteral(std::string_view word, JsonValue value, JsonValue& out) {
    if (m_text.substr(m_pos, word.size()) != word) return fail("expected '" + std::string(word) + "'");
    m_pos += word.size();
    out = std::move(value);
    return true;
  }

  bool enter() {
    if (++m_depth > kMaxJsonDepth) {
      return fail("expected at most " + std::to_string(kMaxJsonDepth) + " nested arrays and objects");
    }
    return true;
  }

  bool parseArray(JsonValue& out) {
    if (!enter()) return false;
    ++m_pos;  // '['
    JsonValue::Array elements;
    skipSpace();
    if (!atEnd() && peek() == ']') {
      ++m_pos;
    } else {
      const char* expected = "expected a value or ']'";
      while (true) {
        if (!parseValue(elements.emplace_back(), expected)) return false;
        skipSpace();
        if (atEnd() || (peek() != ',' && peek() != ']')) return fail("expected ',' or ']' after an array element");
        if (peek() == ']') {
          ++m_pos;
          break;
        }
        ++m_pos;
        expected = "expected a value after ','";
      }
    }
    --m_depth;
    out = JsonValue(std::move(elements));
    return true;
  }

  bool parseObject(JsonValue& out) {
    if (!enter()) return false;
    ++m_pos;  // '{'
    JsonValue::Object members;
    skipSpace();
    if (!atEnd() && peek() == '}') {
      ++m_pos;
    } else {
      const char* expected = "expected a string key or '}'";
      while (true) {
        skipSpace();
        if (atEnd() || peek() != '"') return fail(expected);
        JsonMember& member = members.emplace_back();
        if (!parseString(member.key)) return false;
        skipSpace();
        if (atEnd() || peek() != ':') return fail("expected ':' after an object key");
        ++m_pos;
        if (!parseValue(member.value, "expected a value after ':'")) return false;
        skipSpace();
        if (atEnd() || (peek() != ',' && peek() != '}')) return fail("expected ',' or '}' after an object member");
        if (peek() == '}') {
          ++m_pos;
          break;
        }
        ++m_pos;
        expected = "expected a string key after ','";
      }
    }
    --m_depth;
    out = JsonValue(std::move(members));
    return true;
  }

  // Four hex digits after "\u" (m_pos at the first); false with the error set when they are not.
  bool parseHex4(unsigned& value) {
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = atEnd() ? -1 : hexDigit(peek());
      if (digit < 0) return fail("expected four hex digits after '\\u'");
      value = value * 16 + static_cast<unsigned>(digit);
      ++m_pos;
    }
    return true;
  }

  bool parseEscape(std::string& out) {
    const std::size_t backslash = m_pos++;
    if (atEnd()) return fail("expected an escape sequence after '\\'");
    const char c = peek();
    ++m_pos;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out += c;
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        break;
      default:
        return failAt(m_pos - 1,
                      "expected an escape sequence (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX) after '\\'");
    }
    unsigned unit = 0;
    if (!parseHex4(unit)) return false;
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return failAt(backslash,
                    "expected a high surrogate (\\uD800 to \\uDBFF) before the low surrogate \\u" + hex4(unit));
    }
    if (unit < 0xD800 || unit > 0xDBFF) {
      out += encodeUtf8(std::u32string(1, static_cast<char32_t>(unit)));
      return true;
    }
    const auto lowExpected = [&](std::size_t offset) {
      return failAt(offset, "expected a low surrogate (\\uDC00 to \\uDFFF) after the high surrogate \\u" + hex4(unit));
    };
    if (m_text.substr(m_pos, 2) != "\\u") return lowExpected(m_pos);
    const std::size_t second = m_pos;
    m_pos += 2;
    unsigned next = 0;
    if (!parseHex4(next)) return false;
    if (next < 0xDC00 || next > 0xDFFF) return lowExpected(second);
    out += encodeUtf8(std::u32string(1, static_cast<char32_t>(0x10000 + ((unit - 0xD800) << 10) + (next - 0xDC00))));
    return true;
  }

  bool parseString(std::string& out) {
    const std::size_t open = m_pos++;
    while (true) {
      if (atEnd()) return fail("expected '\"' to close the string opened at byte " + std::to_string(open));
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++m_pos;
        return true;
      }
      if (c == '\\') {
        if (!parseEscape(out)) return false;
      } else if (c < 0x20) {
        return fail("expected an escape sequence instead of the control character U+" + hex4(c) + " in a string");
      } else {
        const std::size_t length = utf8SequenceLength(m_text.substr(m_pos));
        if (length == 0) return fail("expected valid UTF-8 in a string");
        out.append(m_text.substr(m_pos, length));
        m_pos += length;
      }
    }
  }

  // number = [ "-" ] int [ frac ] [ exp ]; int = "0" / digit1-9 *digit (RFC 8259, section 6).
  bool parseNumber(JsonValue& out) {
    const std::size_t start = m_pos;
    const auto digits = [&] {
      const std::size_t from = m_pos;
      while (!atEnd() && isDigit(peek())) ++m_pos;
      return m_pos - from;
    };
    const bool negative = peek() == '-';
    if (negative) ++m_pos;
    if (atEnd() || !isDigit(peek())) return fail("expected a digit after '-'");
    // The decimal exponent of the first significant digit, to tell overflow from underflow.
    std::int64_t magnitude = 0;
    if (peek() == '0') {
      ++m_pos;
      if (!atEnd() && isDigit(peek())) return fail("expected '.', 'e' or the end of the number after a leading '0'");
    } else {
      magnitude = static_cast<std::int64_t>(digits()) - 1;
    }
    if (!atEnd() && peek() == '.') {
      ++m_pos;
      const std::size_t fraction = m_pos;
      if (digits() == 0) return fail("expected a digit after the decimal point");
      if (magnitude == 0 && m_text[start + (negative ? 1 : 0)] == '0') {
        std::size_t zeros = 0;
        while (fraction + zeros < m_pos && m_text[fraction + zeros] == '0') ++zeros;
        magnitude = -static_cast<std::int64_t>(zeros) - 1;
      }
    }
    if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
      ++m_pos;
      bool negativeExponent = false;
      if (!atEnd() && (peek() == '+' || peek() == '-')) negativeExponent = m_text[m_pos++] == '-';
      const std::size_t from = m_pos;
      if (digits() == 0) return fail("expected a digit in the exponent");
      std::int64_t exponent = 0;
      for (std::size_t i = from; i < m_pos && exponent < 1'000'000'000; ++i)
        exponent = exponent * 10 + (m_text[i] - '0');
      magnitude += negativeExponent ? -exponent : exponent;
    }
    const std::string_view token = m_text.substr(start, m_pos - start);
    double value = 0.0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error == std::errc::result_out_of_range) {
      return failAt(start, magnitude > 0 ? "expected a number within the range of a double (magnitude at most 1.8e308)"
                                         : "expected a number within the range of a double (a nonzero magnitude at "
                                           "least 4.9e-324)");
    }
    if (error != std::errc() || end != token.data() + token.size()) return failAt(start, "expected a number");
    out = JsonValue(value, std::string(token));
    return true;
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
  int m_depth = 0;
  std::optional<Status> m_error;
};

}  // namespace

Result<JsonValue> parseJson(std::string_view text) { return Parser(text).parse(); }

const char* describeJsonType(const JsonValue& value) {
  switch (value.type()) {
    case JsonValue::Type::kNull:
      return "null";
    case JsonValue::Type::kBool:
      return "a boolean";
    case JsonValue::Type::kNumber:
      return "a number";
    case JsonValue::Type::kString:
      return "a string";
    case JsonValue::Type::kArray:
      return "an array";
    case JsonValue::Type::kObject:
      return "an object";
  }
  return "a value";
}

}  // namespace dpx::core
