// The field-by-field comparison of dpx verify and the compact rendering of its difference lines;
// apart from the commands because its matching rules and wording are a contract (statement_diff.h).
#include "statement_diff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "io/json_writer.h"
#include "statement_parsing.h"

namespace dpx::cli {

using core::JsonValue;

namespace {

std::string excerpt(const std::string& text, std::size_t from) {
  constexpr std::size_t kWidth = 48;
  if (text.size() <= kWidth + 12) return text;
  const std::size_t start = from > 16 ? from - 16 : 0;
  return (start > 0 ? "…" : "") + text.substr(start, kWidth) + (start + kWidth < text.size() ? "…" : "");
}

// An object's members in the order the difference lines have always followed: by name (in the
// byte order of their UTF-8), a name given twice once, with its last value (the one find() reads).
std::vector<const core::JsonMember*> sortedMembers(const JsonValue& object) {
  std::vector<const core::JsonMember*> members;
  for (const core::JsonMember& m : object.asObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(),
                   [](const core::JsonMember* a, const core::JsonMember* b) { return a->key < b->key; });
  std::vector<const core::JsonMember*> lastOfEach;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() && members[i + 1]->key == members[i]->key) continue;
    lastOfEach.push_back(members[i]);
  }
  return lastOfEach;
}

// A string in a compact document: quote, backslash and control characters escaped (\b \f \n \r \t
// by name, the others as \u00XX), everything else as its UTF-8.
std::string compactString(const std::string& text) {
  std::string out(1, '"');
  out += core::jsonEscape(text);
  out += '"';
  return out;
}

// A number in a compact document: an integer within 64 bits in full (as written, or as the double
// it reads as), any other number with its shortest round-trip digits, in decimal form unless the
// exponent form is shorter ("1e-05", "1.5e+300", but "12345678901234567000").
std::string compactNumber(const JsonValue& v) {
  const std::string& text = v.numberText();
  if (text.find_first_of(".eE") == std::string::npos) {
    std::int64_t integer = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
    if (error == std::errc() && end == text.data() + text.size()) return std::to_string(integer);
  }
  const double d = v.asNumber();
  if (d == std::floor(d) && d >= -0x1p63 && d < 0x1p63) return std::to_string(static_cast<std::int64_t>(d));
  // "d.ddde±x": the shortest digits and the decimal exponent.
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  if (error != std::errc()) return core::roundTripNumber(d);
  const std::string scientific(buffer, end);
  const bool negative = scientific.front() == '-';
  const std::size_t e = scientific.find('e');
  std::string digits = scientific.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int point = std::stoi(scientific.substr(e + 1)) + 1;  // digits[0] is followed by `point - 1` places
  const int count = static_cast<int>(digits.size());
  // Characters the decimal form saves over the exponent form, the two-digit exponent and its
  // "e±" being 4, a point only in one of the forms shifting it by one.
  int bias = 4;
  if (count <= point && count > 1) {
    ++bias;
  } else if (count == 1 && point <= 0) {
    --bias;
  }
  const bool decimal = point <= 0 ? 1 - point <= bias : point <= count ? true : point <= count + bias;
  std::string out = negative ? "-" : "";
  if (decimal) {
    if (point <= 0) {
      out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    } else if (point < count) {
      out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    } else {
      out += digits + std::string(static_cast<std::size_t>(point - count), '0');
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (count > 1) out.append(".").append(digits.substr(1));
  const int exponent = point - 1;
  out += exponent < 0 ? "e-" : "e+";
  const std::string magnitude = std::to_string(exponent < 0 ? -exponent : exponent);
  return out + (magnitude.size() < 2 ? "0" : "") + magnitude;
}

// The compact JSON text of a value as the difference lines show an array or an object: members
// by name, no white space.
std::string compactJson(const JsonValue& v) {
  switch (v.type()) {
    case JsonValue::Type::kNull:
      return "null";
    case JsonValue::Type::kBool:
      return v.asBool() ? "true" : "false";
    case JsonValue::Type::kNumber:
      return compactNumber(v);
    case JsonValue::Type::kString:
      return compactString(v.asString());
    case JsonValue::Type::kArray: {
      std::string out = "[";
      for (const JsonValue& x : v.asArray()) out.append(out.size() > 1 ? "," : "").append(compactJson(x));
      return out + "]";
    }
    case JsonValue::Type::kObject: {
      std::string out = "{";
      for (const core::JsonMember* m : sortedMembers(v)) {
        out.append(out.size() > 1 ? "," : "").append(compactString(m->key)).append(":").append(compactJson(m->value));
      }
      return out + "}";
    }
  }
  return "null";
}

// A value as the difference lines show it; for two long strings, the part where they first differ.
std::string render(const JsonValue* v, const JsonValue* other = nullptr) {
  if (v == nullptr) return "nothing";
  switch (v->type()) {
    case JsonValue::Type::kNumber:
      return core::roundTripNumber(statementNumber(*v));
    case JsonValue::Type::kString: {
      const std::string& text = v->asString();
      const std::string& o = other != nullptr ? other->asString() : std::string();
      std::size_t at = 0;
      while (at < text.size() && at < o.size() && text[at] == o[at]) ++at;
      return compactString(excerpt(text, at));
    }
    case JsonValue::Type::kArray:
    case JsonValue::Type::kObject:
      return excerpt(compactJson(*v), 0);
    case JsonValue::Type::kBool:
      return v->asBool() ? "true" : "false";
    case JsonValue::Type::kNull:
      return "null";
  }
  return "nothing";
}

// Numbers compare exactly: both sides are the same decimal text parsed by the same parser.
bool sameValue(const JsonValue* a, const JsonValue* b) {
  if (a == nullptr || b == nullptr || a->type() != b->type()) return false;
  switch (a->type()) {
    case JsonValue::Type::kNull:
      return true;
    case JsonValue::Type::kBool:
      return a->asBool() == b->asBool();
    case JsonValue::Type::kNumber:
      return a->asNumber() == b->asNumber();
    case JsonValue::Type::kString:
      return a->asString() == b->asString();
    case JsonValue::Type::kArray:
    case JsonValue::Type::kObject:
      break;
  }
  return false;
}

// `stated` or `recomputed` is nullptr where the field is missing from that document. Numbers
// within `tolerance` (relative; 0: exactly) match.
void compareValues(const JsonValue* stated, const JsonValue* recomputed, const std::string& path, Comparison& c,
                   double tolerance = 0.0);

// |x − y| ≤ tolerance · max(|x|, |y|, 1): relative, and absolute below 1, where a difference of
// two close values (a bracket's relative width) has lost the leading digits it would be relative to.
bool closeNumbers(double x, double y, double tolerance) {
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  return std::fabs(x - y) <= tolerance * std::max({std::fabs(x), std::fabs(y), 1.0});
}

// A text's runs of digits (with a decimal point and an exponent) apart from the words between them.
struct NumbersInText {
  std::vector<std::string> words;
  std::vector<double> numbers;
};

NumbersInText splitNumbers(const std::string& text) {
  NumbersInText out;
  std::string word;
  std::size_t i = 0;
  auto digit = [&](std::size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
  while (i < text.size()) {
    if (!digit(i)) {
      word += text[i++];
      continue;
    }
    std::size_t end = i;
    while (digit(end) || (end < text.size() && text[end] == '.' && digit(end + 1))) ++end;
    if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
      std::size_t exponent = end + 1;
      if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
      if (digit(exponent)) {
        end = exponent;
        while (digit(end)) ++end;
      }
    }
    out.words.push_back(word);
    word.clear();
    out.numbers.push_back(std::strtod(text.substr(i, end - i).c_str(), nullptr));
    i = end;
  }
  out.words.push_back(word);
  return out;
}

// Two values that differ only in the last bits another CPU's arithmetic moves: numbers within the
// tolerance, or texts (the hand-off snippets quote ε) whose words agree and whose numbers do.
bool withinTolerance(const JsonValue* a, const JsonValue* b, double tolerance) {
  if (tolerance <= 0.0 || a == nullptr || b == nullptr || a->type() != b->type()) return false;
  if (a->isNumber()) return closeNumbers(a->asNumber(), b->asNumber(), tolerance);
  if (!a->isString()) return false;
  const NumbersInText x = splitNumbers(a->asString());
  const NumbersInText y = splitNumbers(b->asString());
  if (x.words != y.words || x.numbers.size() != y.numbers.size()) return false;
  for (std::size_t i = 0; i < x.numbers.size(); ++i) {
    if (!closeNumbers(x.numbers[i], y.numbers[i], tolerance)) return false;
  }
  return true;
}

// The tolerance each accountant's entry records, read from the recomputed document (this build's,
// so a statement cannot widen its own; the stated "tolerance" fields are compared exactly).
std::map<std::string, double> tolerancesOf(const JsonValue& statement) {
  std::map<std::string, double> out;
  const JsonValue* accountants = statement.find("accountants");
  if (accountants == nullptr || !accountants->isArray()) return out;
  for (const JsonValue& a : accountants->asArray()) {
    const JsonValue* id = a.find("id");
    const JsonValue* tolerance = a.find("tolerance");
    const JsonValue* relative = tolerance != nullptr ? tolerance->find("relative") : nullptr;
    if (id != nullptr && id->isString() && relative != nullptr && relative->isNumber()) {
      out[id->asString()] = relative->asNumber();
    }
  }
  return out;
}

// An element's name in a path: its "id", "accountant" or "check" when every element has a
// distinct one (accountants[rdp], checks[sampling]), else its index.
std::vector<std::string> elementLabels(const JsonValue::Array& a) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::string label = std::to_string(i);
    for (const char* key : {"id", "accountant", "check"}) {
      if (const JsonValue* name = a[i].find(key); name != nullptr && name->isString()) {
        label = name->asString();
        break;
      }
    }
    labels.push_back(label);
  }
  std::vector<std::string> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = std::to_string(i);
  }
  return labels;
}

void compareArrays(const JsonValue::Array& stated, const JsonValue::Array& recomputed, const std::string& path,
                   Comparison& c, double tolerance) {
  const std::vector<std::string> statedLabels = elementLabels(stated);
  const std::vector<std::string> recomputedLabels = elementLabels(recomputed);
  std::map<std::string, const JsonValue*> statedByLabel;
  for (std::size_t i = 0; i < statedLabels.size(); ++i) statedByLabel[statedLabels[i]] = &stated[i];
  for (std::size_t i = 0; i < recomputedLabels.size(); ++i) {
    auto it = statedByLabel.find(recomputedLabels[i]);
    const JsonValue* s = it == statedByLabel.end() ? nullptr : it->second;
    compareValues(s, &recomputed[i], path + "[" + recomputedLabels[i] + "]", c, tolerance);
    if (it != statedByLabel.end()) statedByLabel.erase(it);
  }
  for (const std::string& label : statedLabels) {
    if (statedByLabel.count(label)) {
      compareValues(statedByLabel[label], nullptr, path + "[" + label + "]", c, tolerance);
    }
  }
}

void compareObjects(const JsonValue& stated, const JsonValue& recomputed, const std::string& path, Comparison& c,
                    double tolerance) {
  const std::string prefix = path.empty() ? "" : path + ".";
  // An accountant's entry carries its own tolerance; the hand-off's ε is the named accountant's.
  const JsonValue* owner = recomputed.find(path == "handoff" ? "dp_sgd_epsilon_from" : "id");
  if ((path == "handoff" || path.rfind("accountants[", 0) == 0) && owner != nullptr && owner->isString()) {
    const auto it = c.toleranceOf.find(owner->asString());
    if (it != c.toleranceOf.end()) tolerance = it->second;
  }
  for (const core::JsonMember* m : sortedMembers(recomputed)) {
    // Which build wrote the statement is reported as a note, not a difference.
    if (path.empty() && m->key == "dpexplorer_version") continue;
    compareValues(stated.find(m->key), &m->value, prefix + m->key, c, m->key == "tolerance" ? 0.0 : tolerance);
  }
  for (const core::JsonMember* m : sortedMembers(stated)) {
    if (recomputed.find(m->key) == nullptr) compareValues(&m->value, nullptr, prefix + m->key, c);
  }
}

void compareValues(const JsonValue* stated, const JsonValue* recomputed, const std::string& path, Comparison& c,
                   double tolerance) {
  if (stated != nullptr && recomputed != nullptr) {
    if (stated->isObject() && recomputed->isObject()) return compareObjects(*stated, *recomputed, path, c, tolerance);
    if (stated->isArray() && recomputed->isArray())
      return compareArrays(stated->asArray(), recomputed->asArray(), path, c, tolerance);
  }
  if (sameValue(stated, recomputed)) {
    ++c.matches;
  } else if (withinTolerance(stated, recomputed, tolerance)) {
    ++c.matches;
    c.withinTolerance.push_back(path + ": statement " + render(stated, recomputed) + " recomputed " +
                                render(recomputed, stated) + " (within the tolerance " +
                                core::roundTripNumber(tolerance) + " its accountant records)");
  } else if (stated == nullptr) {
    c.differences.push_back(path + ": missing from the statement, recomputed " + render(recomputed));
  } else if (recomputed == nullptr) {
    c.differences.push_back(path + ": statement " + render(stated) + ", not in the recomputed statement");
  } else {
    c.differences.push_back(path + ": statement " + render(stated, recomputed) + " recomputed " +
                            render(recomputed, stated));
  }
}

}  // namespace

Comparison compareStatements(const JsonValue& stated, const JsonValue& recomputed) {
  Comparison c;
  c.toleranceOf = tolerancesOf(recomputed);
  compareValues(&stated, &recomputed, "", c);
  return c;
}

}  // namespace dpx::cli
