// A strict JSON reader (RFC 8259) for the documents dpx reads back, such as the privacy statements
// `dpx verify` re-checks: one value, no comments, no trailing commas, numbers as the grammar has
// them, strings in valid UTF-8. A malformed document is refused with a message saying what was
// expected and where (byte offset, line and column), so a hand-edited file can be fixed. Plain C++
// so the CLI reads JSON without Qt.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"

namespace dpx::core {

struct JsonMember;
class JsonValue;

// "null", "a boolean", "a number", "a string", "an array" or "an object": what a refusal says a
// reader found where it expected another kind of value.
const char* describeJsonType(const JsonValue& value);

// One JSON value. An object keeps its members in document order, duplicate names included;
// find() answers with the last of them, as most readers (and Qt's) keep the last duplicate.
class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<JsonValue>;
  using Object = std::vector<JsonMember>;

  // Defined where JsonMember is complete: clang instantiates the variant's members at an inline
  // definition, and a vector of an incomplete type cannot be.
  JsonValue();  // null
  explicit JsonValue(bool flag);
  // `text`: the number as the document wrote it; empty: the shortest text that reads back to it.
  explicit JsonValue(double number, std::string text = {});
  explicit JsonValue(std::string text);
  explicit JsonValue(const char* text);
  explicit JsonValue(Array elements);
  explicit JsonValue(Object members);

  Type type() const { return static_cast<Type>(m_data.index()); }
  bool isNull() const { return type() == Type::kNull; }
  bool isBool() const { return type() == Type::kBool; }
  bool isNumber() const { return type() == Type::kNumber; }
  bool isString() const { return type() == Type::kString; }
  bool isArray() const { return type() == Type::kArray; }
  bool isObject() const { return type() == Type::kObject; }

  // The value; false, 0 or empty when it is of another type.
  bool asBool() const;
  double asNumber() const;
  const std::string& asString() const;
  const Array& asArray() const;
  const Object& asObject() const;
  // A number as written ("1e6", "1000000", "-0"): what a double cannot tell apart, and integers
  // beyond 2^53 exactly. Empty for other types.
  const std::string& numberText() const;

  // The last member named `key` of an object; nullptr when there is none or this is no object.
  const JsonValue* find(std::string_view key) const;

 private:
  struct Number {
    double value = 0.0;
    std::string text;
  };
  // In the order of Type.
  std::variant<std::monostate, bool, Number, std::string, Array, Object> m_data;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

// Deeper documents are refused, so that parsing one cannot exhaust the stack.
inline constexpr int kMaxJsonDepth = 512;

// The one JSON value of `text` (UTF-8; white space around it is allowed, and a leading byte order
// mark is skipped, as RFC 8259 permits). A malformed text gives a kParseError whose message says
// what was expected and where: "expected ',' or '}' after an object member at byte 57 (line 3,
// column 12)" — the byte offset counts from 0, line and column (in characters) from 1.
Result<JsonValue> parseJson(std::string_view text);

}  // namespace dpx::core
