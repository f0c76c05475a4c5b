// Reading membership scores from CSV or JSON (score_import.h): the format is documented there.
#include "audit/score_import.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "io/json_reader.h"
#include "training/dataset_parsing.h"

namespace dpx::core::audit {
namespace {

using training::detail::quoteForMessage;
using training::detail::trimBlanks;

std::string lineAt(std::int64_t line) { return "line " + std::to_string(line) + ": "; }

// A finite double from the whole field (blanks around it and a leading '+' allowed).
enum class ScoreStatus { kOk, kEmpty, kNotANumber, kNotFinite };
ScoreStatus parseScore(std::string_view field, double& value) {
  std::string_view text = trimBlanks(field);
  if (text.empty()) return ScoreStatus::kEmpty;
  if (text.front() == '+') text.remove_prefix(1);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size()) return ScoreStatus::kNotANumber;
  if (error == std::errc::result_out_of_range) return ScoreStatus::kNotFinite;  // beyond ±1.8e308
  if (error != std::errc()) return ScoreStatus::kNotANumber;
  return std::isfinite(value) ? ScoreStatus::kOk : ScoreStatus::kNotFinite;
}

std::string describeScoreError(ScoreStatus status, std::string_view field) {
  switch (status) {
    case ScoreStatus::kEmpty:
      return "score is empty";
    case ScoreStatus::kNotFinite:
      return "score " + quoteForMessage(trimBlanks(field)) + " is not a finite number";
    default:
      return "score " + quoteForMessage(trimBlanks(field)) + " is not a number";
  }
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// 0/1 (also "0.0"/"1.0" is refused: a flag is written as an integer) or true/false.
std::optional<std::uint8_t> parseFlag(std::string_view field) {
  const std::string_view text = trimBlanks(field);
  if (text == "0" || equalsIgnoringCase(text, "false")) return 0;
  if (text == "1" || equalsIgnoringCase(text, "true")) return 1;
  return std::nullopt;
}

// One CSV line into fields: comma-separated, a field may be double-quoted ("" is a quote inside).
// Returns false on an unterminated quote or text after a closing quote.
bool splitCsvLine(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::size_t i = 0;
  for (;;) {
    std::string field;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) return false;
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') return false;
    } else {
      const std::size_t comma = line.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
      field = std::string(line.substr(i, end - i));
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

bool isBlankLine(std::string_view line) { return trimBlanks(line).empty(); }

// Audited records (the canaries when any record is one), and the refusal without both sides.
struct Collected {
  std::vector<double> scores, canaryScores;
  std::vector<std::uint8_t> members, canaryMembers;
  std::int64_t records = 0;
};

void collect(Collected& c, double score, std::uint8_t member, bool canary) {
  ++c.records;
  c.scores.push_back(score);
  c.members.push_back(member);
  if (canary) {
    c.canaryScores.push_back(score);
    c.canaryMembers.push_back(member);
  }
}

Result<ImportedScores> finish(Collected c, std::string format) {
  ImportedScores out;
  out.format = std::move(format);
  out.records = c.records;
  out.canaries = static_cast<std::int64_t>(c.canaryScores.size());
  if (out.canaries > 0) {
    out.scores = std::move(c.canaryScores);
    out.members = std::move(c.canaryMembers);
  } else {
    out.scores = std::move(c.scores);
    out.members = std::move(c.members);
  }
  if (out.records == 0) return Status::parseError("no records: the file has no scores");
  const std::int64_t members = out.auditedMembers();
  const std::string which =
      out.canaries > 0 ? std::to_string(out.audited()) + " canaries" : std::to_string(out.audited()) + " records";
  if (members == 0 || members == out.audited()) {
    return Status::parseError("the " + which + " are all " + (members == 0 ? "non-members" : "members") +
                              " (member = " + (members == 0 ? "0" : "1") +
                              "): an audit needs at least one member and one non-member");
  }
  return out;
}

std::optional<std::size_t> columnOf(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t j = 0; j < header.size(); ++j) {
    if (equalsIgnoringCase(trimBlanks(header[j]), name)) return j;
  }
  return std::nullopt;
}

std::string_view withoutByteOrderMark(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

}  // namespace

std::int64_t ImportedScores::auditedMembers() const {
  return static_cast<std::int64_t>(std::count(members.begin(), members.end(), std::uint8_t{1}));
}

Result<ImportedScores> parseScoresCsv(std::string_view text) {
  try {
    training::detail::LineCursor lines(withoutByteOrderMark(text));
    std::string_view line;
    std::vector<std::string> fields;
    // The header: the first line that is not blank.
    bool haveHeader = false;
    while (lines.next(line)) {
      if (isBlankLine(line)) continue;
      haveHeader = true;
      break;
    }
    if (!haveHeader) return Status::parseError("no header: a scores CSV starts with a line naming its columns");
    const std::int64_t headerLine = lines.lineNumber();
    if (!splitCsvLine(line, fields)) return Status::parseError(lineAt(headerLine) + "unterminated quoted field");
    const std::vector<std::string> header = fields;
    const std::optional<std::size_t> scoreColumn = columnOf(header, "score");
    const std::optional<std::size_t> memberColumn = columnOf(header, "member");
    const std::optional<std::size_t> canaryColumn = columnOf(header, "canary");
    if (!scoreColumn || !memberColumn) {
      std::string names;
      for (const std::string& h : header) names += (names.empty() ? "" : ", ") + quoteForMessage(trimBlanks(h));
      return Status::parseError(lineAt(headerLine) + "the header has no '" + (scoreColumn ? "member" : "score") +
                                "' column (columns: " + names + "); a scores CSV needs 'score' and 'member'");
    }
    Collected c;
    while (lines.next(line)) {
      if (isBlankLine(line)) continue;
      const std::string where = lineAt(lines.lineNumber());
      if (!splitCsvLine(line, fields)) return Status::parseError(where + "unterminated quoted field");
      if (fields.size() != header.size()) {
        return Status::parseError(where + std::to_string(fields.size()) + (fields.size() == 1 ? " field" : " fields") +
                                  ", the header has " + std::to_string(header.size()));
      }
      double score = 0.0;
      if (ScoreStatus s = parseScore(fields[*scoreColumn], score); s != ScoreStatus::kOk) {
        return Status::parseError(where + describeScoreError(s, fields[*scoreColumn]));
      }
      const std::optional<std::uint8_t> member = parseFlag(fields[*memberColumn]);
      if (!member) {
        return Status::parseError(where + "member must be 0 or 1, got " +
                                  quoteForMessage(trimBlanks(fields[*memberColumn])));
      }
      std::uint8_t canary = 0;
      if (canaryColumn) {
        const std::optional<std::uint8_t> flag = parseFlag(fields[*canaryColumn]);
        if (!flag) {
          return Status::parseError(where + "canary must be 0 or 1, got " +
                                    quoteForMessage(trimBlanks(fields[*canaryColumn])));
        }
        canary = *flag;
      }
      collect(c, score, *member, canary != 0);
    }
    return finish(std::move(c), "csv");
  } catch (const std::bad_alloc&) {
    return Status::invalidArgument("scores CSV: out of memory");
  }
}

namespace {

// A 0/1 flag of a JSON record: the numbers 0 and 1 or the booleans.
Result<std::uint8_t> jsonFlag(const JsonValue& v, const std::string& path) {
  if (v.isBool()) return static_cast<std::uint8_t>(v.asBool() ? 1 : 0);
  if (v.isNumber() && (v.asNumber() == 0.0 || v.asNumber() == 1.0)) {
    return static_cast<std::uint8_t>(v.asNumber() == 1.0 ? 1 : 0);
  }
  std::string got;
  if (v.isNumber()) {
    got = v.numberText();
  } else if (v.isString()) {
    got = "the string " + quoteForMessage(v.asString());
  } else {
    got = v.isNull() ? "null" : (v.isArray() ? "an array" : "an object");
  }
  return Status::parseError(path + " must be 0 or 1, got " + got);
}

}  // namespace

Result<ImportedScores> parseScoresJson(std::string_view text) {
  try {
    Result<JsonValue> doc = parseJson(text);
    if (!doc) return Status::parseError("not JSON: " + doc.status().message());
    const JsonValue* records = &*doc;
    std::string prefix;
    if (doc->isObject()) {
      records = doc->find("scores");
      if (!records) {
        return Status::parseError(
            "no \"scores\" key: a scores JSON is {\"scores\": [{\"score\": …, \"member\": 0|1}, …]} or a plain array "
            "of such records");
      }
      prefix = "scores";
    }
    if (!records->isArray()) {
      return Status::parseError((prefix.empty() ? std::string("the document") : prefix) +
                                " must be an array of {\"score\": …, \"member\": 0|1} records");
    }
    Collected c;
    const JsonValue::Array& array = records->asArray();
    for (std::size_t i = 0; i < array.size(); ++i) {
      const std::string path = prefix + "[" + std::to_string(i) + "]";
      const JsonValue& r = array[i];
      if (!r.isObject()) return Status::parseError(path + " must be an object {\"score\": …, \"member\": 0|1}");
      const JsonValue* score = r.find("score");
      if (!score) return Status::parseError(path + " has no \"score\"");
      if (!score->isNumber()) return Status::parseError(path + ".score must be a number");
      if (!std::isfinite(score->asNumber())) {
        return Status::parseError(path + ".score " + score->numberText() + " is not a finite number");
      }
      const JsonValue* member = r.find("member");
      if (!member) return Status::parseError(path + " has no \"member\"");
      DPX_ASSIGN_OR_RETURN(const std::uint8_t isMember, jsonFlag(*member, path + ".member"));
      std::uint8_t canary = 0;
      if (const JsonValue* flag = r.find("canary")) {
        DPX_ASSIGN_OR_RETURN(canary, jsonFlag(*flag, path + ".canary"));
      }
      collect(c, score->asNumber(), isMember, canary != 0);
    }
    return finish(std::move(c), "json");
  } catch (const std::bad_alloc&) {
    return Status::invalidArgument("scores JSON: out of memory");
  }
}

Result<ImportedScores> parseScores(std::string_view text) {
  const std::string_view body = withoutByteOrderMark(text);
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (body[first] == '{' || body[first] == '[')) return parseScoresJson(text);
  return parseScoresCsv(text);
}

Result<ImportedScores> readScoresFile(const std::string& path) {
  Result<std::vector<std::uint8_t>> bytes = training::detail::readFile(path, kMaxScoreFileBytes);
  if (!bytes) return bytes.status();
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  Result<ImportedScores> scores = parseScores(text);
  if (!scores) return scores.status().withContext(path);
  return scores;
}

}  // namespace dpx::core::audit
