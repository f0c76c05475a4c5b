// parseCsv (dataset.h): delimited text with one record per line, numbers read by
// std::from_chars. The delimiter and the header are guessed from the first lines because users
// bring files from spreadsheets, R, pandas and sklearn alike; every guess can be overridden in
// LoadOptions. Quoted fields may hold delimiters but not line breaks, so every record is one
// line and every error can name it.
#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "training/dataset.h"
#include "training/dataset_parsing.h"

namespace dpx::core::training {
namespace {

using detail::describeNumberError;
using detail::LineCursor;
using detail::NumberStatus;
using detail::parseNumber;
using detail::quoteForMessage;
using detail::trimBlanks;

// The internal delimiter standing for "runs of spaces and tabs".
constexpr char kBlankRuns = ' ';
// Lines looked at to guess the delimiter: enough to outvote one odd line, cheap on any file.
constexpr std::size_t kSniffLines = 5;

struct Field {
  std::string_view text;  // without the quotes, if any
  bool escaped = false;   // holds "" pairs, each standing for one quote
};

struct SplitError {
  std::size_t field = 0;  // 1-based
  const char* reason = nullptr;
};

bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Reads a quoted field whose opening quote is at line[i]; leaves i after the closing quote.
bool readQuoted(std::string_view line, std::size_t& i, Field& field) {
  const std::size_t start = ++i;
  for (;;) {
    if (i >= line.size()) return false;
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        field.escaped = true;
        i += 2;
        continue;
      }
      break;
    }
    ++i;
  }
  field.text = line.substr(start, i - start);
  ++i;
  return true;
}

// Fields are capped at maxFields so that a line of a million commas costs no more than a
// well-formed one would.
SplitError splitDelimited(std::string_view line, char delimiter, std::vector<Field>& fields, std::size_t maxFields) {
  fields.clear();
  const std::size_t n = line.size();
  std::size_t i = 0;
  for (;;) {
    if (fields.size() >= maxFields) return {fields.size() + 1, "too many fields"};
    const std::size_t start = i;
    while (i < n && line[i] != delimiter && isBlank(line[i])) ++i;
    Field field;
    if (i < n && line[i] == '"') {
      if (!readQuoted(line, i, field)) return {fields.size() + 1, "unterminated quoted field"};
      while (i < n && line[i] != delimiter && isBlank(line[i])) ++i;
      if (i < n && line[i] != delimiter) return {fields.size() + 1, "text after the closing quote"};
    } else {
      while (i < n && line[i] != delimiter) ++i;
      field.text = trimBlanks(line.substr(start, i - start));
    }
    fields.push_back(field);
    if (i >= n) return {};
    ++i;  // past the delimiter; a delimiter at the very end leaves one empty last field
  }
}

SplitError splitBlankRuns(std::string_view line, std::vector<Field>& fields, std::size_t maxFields) {
  fields.clear();
  const std::size_t n = line.size();
  std::size_t i = 0;
  for (;;) {
    while (i < n && isBlank(line[i])) ++i;
    if (i >= n) return {};
    if (fields.size() >= maxFields) return {fields.size() + 1, "too many fields"};
    Field field;
    if (line[i] == '"') {
      if (!readQuoted(line, i, field)) return {fields.size() + 1, "unterminated quoted field"};
      if (i < n && !isBlank(line[i])) return {fields.size() + 1, "text after the closing quote"};
    } else {
      const std::size_t start = i;
      while (i < n && !isBlank(line[i])) ++i;
      field.text = line.substr(start, i - start);
    }
    fields.push_back(field);
  }
}

std::size_t countOutsideQuotes(std::string_view line, char c) {
  std::size_t count = 0;
  bool quoted = false;
  for (const char ch : line) {
    if (ch == '"')
      quoted = !quoted;
    else if (ch == c && !quoted)
      ++count;
  }
  return count;
}

// The candidate present on every sampled line with the most occurrences; ties go to the earlier
// candidate. Without one, fields are separated by blanks (the format of many .dat files).
char detectDelimiter(const std::vector<std::string_view>& lines) {
  static constexpr char kCandidates[] = {',', '\t', ';'};
  char best = kBlankRuns;
  std::size_t bestTotal = 0;
  for (const char candidate : kCandidates) {
    std::size_t total = 0;
    bool onEveryLine = true;
    for (const auto line : lines) {
      const std::size_t count = countOutsideQuotes(line, candidate);
      if (count == 0) {
        onEveryLine = false;
        break;
      }
      total += count;
    }
    if (onEveryLine && total > bestTotal) {
      best = candidate;
      bestTotal = total;
    }
  }
  return best;
}

std::string unescape(const Field& field) {
  if (!field.escaped) return std::string(field.text);
  std::string out;
  out.reserve(field.text.size());
  for (std::size_t i = 0; i < field.text.size(); ++i) {
    out += field.text[i];
    if (field.text[i] == '"') ++i;  // the second quote of a "" pair
  }
  return out;
}

bool isNumber(const Field& field) {
  double value = 0.0;
  return !field.escaped && parseNumber(field.text, value) == NumberStatus::kOk;
}

// A count in a sklearn header: a non-negative integer small enough to be exact in a double.
bool readCount(const Field& field, std::int64_t& count) {
  double value = 0.0;
  if (field.escaped || parseNumber(field.text, value) != NumberStatus::kOk) return false;
  if (value < 0.0 || value > 1e15 || std::floor(value) != value) return false;
  count = static_cast<std::int64_t>(value);
  return true;
}

std::optional<std::size_t> resolveColumn(int column, std::size_t columns) {
  const auto signedColumns = static_cast<std::int64_t>(columns);
  const std::int64_t index = column < 0 ? signedColumns + column : column;
  if (index < 0 || index >= signedColumns) return std::nullopt;
  return static_cast<std::size_t>(index);
}

enum class HeaderKind { kNone, kNames, kSklearn };

// sklearn's bundled CSVs start with "n_samples,n_features,class names…": two counts followed
// by names only, on a line whose field count differs from the data's.
bool looksLikeSklearnHeader(const std::vector<Field>& first, const std::vector<Field>* second) {
  if (second == nullptr || first.size() < 2 || first.size() == second->size()) return false;
  std::int64_t count = 0;
  if (!readCount(first[0], count) || !readCount(first[1], count)) return false;
  return std::none_of(first.begin() + 2, first.end(), isNumber);
}

HeaderKind detectHeader(const std::vector<Field>& first, const std::vector<Field>* second, const LoadOptions& options) {
  if (options.header == false) return HeaderKind::kNone;
  if (looksLikeSklearnHeader(first, second)) return HeaderKind::kSklearn;
  if (options.header == true || options.labelColumnName) return HeaderKind::kNames;
  // A first line whose features are not all numbers names the columns. Its label field alone may
  // be text (string classes), so that field only counts when the next line has a number there.
  const auto label = resolveColumn(options.labelColumn, first.size());
  for (std::size_t j = 0; j < first.size(); ++j) {
    if (j != label && !isNumber(first[j])) return HeaderKind::kNames;
  }
  if (label && !isNumber(first[*label]) && second != nullptr && second->size() == first.size() &&
      isNumber((*second)[*label])) {
    return HeaderKind::kNames;
  }
  return HeaderKind::kNone;
}

Result<Dataset> parseCsvText(std::string_view text, const LoadOptions& options, std::string_view what) {
  const std::string prefix(what);
  const auto at = [&prefix](std::int64_t line) { return prefix + ": line " + std::to_string(line); };
  const auto atField = [&at](std::int64_t line, std::size_t field) {
    return at(line) + ", field " + std::to_string(field);
  };

  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte-order mark
  const std::int64_t maxFeatures = std::clamp<std::int64_t>(options.maxFeatures, 0, INT_MAX - 1);
  const auto maxFields = static_cast<std::size_t>(maxFeatures) + 1;

  std::vector<std::string_view> sample;
  std::vector<std::int64_t> sampleLine;
  {
    LineCursor cursor(text);
    std::string_view line;
    while (sample.size() < kSniffLines && cursor.next(line)) {
      if (trimBlanks(line).empty()) continue;
      sample.push_back(line);
      sampleLine.push_back(cursor.lineNumber());
    }
  }
  if (sample.empty()) return Status::parseError(prefix + ": no records");

  char delimiter = options.delimiter;
  if (delimiter == '\n' || delimiter == '\r' || delimiter == '"') {
    return Status::invalidArgument(prefix + ": a line break or a quote cannot be the delimiter");
  }
  if (delimiter == 0) delimiter = detectDelimiter(sample);
  const auto split = [&](std::string_view line, std::vector<Field>& fields) {
    return delimiter == kBlankRuns ? splitBlankRuns(line, fields, maxFields)
                                   : splitDelimited(line, delimiter, fields, maxFields);
  };
  const auto splitFailure = [&](std::int64_t line, const SplitError& error) {
    if (error.field > maxFields) {
      return Status::parseError(at(line) + ": more than " + std::to_string(maxFields) + " fields (the limit is " +
                                std::to_string(maxFeatures) + " features and a label)");
    }
    return Status::parseError(atField(line, error.field) + ": " + error.reason);
  };

  std::vector<Field> first;
  std::vector<Field> second;
  if (const auto error = split(sample[0], first); error.reason) return splitFailure(sampleLine[0], error);
  const bool haveSecond = sample.size() > 1;
  if (haveSecond) {
    if (const auto error = split(sample[1], second); error.reason) return splitFailure(sampleLine[1], error);
  }
  const HeaderKind header = detectHeader(first, haveSecond ? &second : nullptr, options);

  std::int64_t headerLine = 0;  // 0: no header
  std::int64_t claimedRecords = -1;
  std::vector<std::string> namedClasses;  // from a sklearn header
  std::vector<std::string> columnNames;
  std::size_t expected = first.size();
  if (header == HeaderKind::kSklearn) {
    headerLine = sampleLine[0];
    std::int64_t claimedFeatures = 0;
    readCount(first[0], claimedRecords);
    readCount(first[1], claimedFeatures);
    for (std::size_t j = 2; j < first.size(); ++j) namedClasses.push_back(unescape(first[j]));
    if (static_cast<std::int64_t>(second.size()) != claimedFeatures + 1) {
      return Status::parseError(at(headerLine) + ": header claims " + std::to_string(claimedFeatures) +
                                " features per record, but line " + std::to_string(sampleLine[1]) + " has " +
                                std::to_string(second.size()) + " fields (expected " +
                                std::to_string(claimedFeatures + 1) + ": the features and a label)");
    }
    expected = second.size();
  } else if (header == HeaderKind::kNames) {
    headerLine = sampleLine[0];
    for (const auto& field : first) columnNames.push_back(unescape(field));
  }
  if (expected < 2) {
    return Status::parseError(at(sampleLine[0]) + ": found 1 field; a record needs a label and at least one feature " +
                              "(is the delimiter right?)");
  }

  std::size_t labelIndex = 0;
  if (options.labelColumnName) {
    if (header != HeaderKind::kNames) {
      return Status::invalidArgument(prefix + ": the label column " + quoteForMessage(*options.labelColumnName) +
                                     " is given by name, but the file has no header line naming its columns");
    }
    const auto found = std::find(columnNames.begin(), columnNames.end(), *options.labelColumnName);
    if (found == columnNames.end()) {
      return Status::invalidArgument(prefix + ": no column named " + quoteForMessage(*options.labelColumnName) +
                                     " in the header on line " + std::to_string(headerLine));
    }
    labelIndex = static_cast<std::size_t>(found - columnNames.begin());
  } else if (const auto index = resolveColumn(options.labelColumn, expected)) {
    labelIndex = *index;
  } else {
    return Status::invalidArgument(prefix + ": label column " + std::to_string(options.labelColumn) +
                                   " is outside the " + std::to_string(expected) + " columns");
  }

  const std::size_t dimension = expected - 1;
  std::vector<float> values;
  std::vector<std::int32_t> labels;
  {
    // Reservations are bounded by the text itself (every field takes at least two bytes), never
    // by what the first line or a header claims.
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    const std::size_t byText = text.size() / 2 + 1;
    const std::size_t rows =
        std::min({lines, byText, static_cast<std::size_t>(std::max<std::int64_t>(options.maxRecords, 0))});
    values.reserve(rows > byText / dimension ? byText : rows * dimension);
    labels.reserve(rows);
  }

  const bool classesNamed = header == HeaderKind::kSklearn && !namedClasses.empty();
  detail::LabelMapper mapper;
  std::vector<Field> fields;
  fields.reserve(expected);
  std::string unescaped;
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    const std::int64_t lineNumber = cursor.lineNumber();
    if (lineNumber <= headerLine || trimBlanks(line).empty()) continue;
    if (const auto error = split(line, fields); error.reason) return splitFailure(lineNumber, error);
    if (fields.size() != expected) {
      return Status::parseError(at(lineNumber) + ": expected " + std::to_string(expected) + " fields, found " +
                                std::to_string(fields.size()));
    }
    if (static_cast<std::int64_t>(labels.size()) >= options.maxRecords) {
      return Status::parseError(at(lineNumber) + ": more than " + std::to_string(options.maxRecords) +
                                " records (the limit)");
    }
    for (std::size_t j = 0; j < expected; ++j) {
      const Field& field = fields[j];
      if (j != labelIndex) {
        double value = 0.0;
        const NumberStatus status = field.escaped ? NumberStatus::kNotANumber : parseNumber(field.text, value);
        if (status != NumberStatus::kOk) {
          return Status::parseError(atField(lineNumber, j + 1) + ": " + describeNumberError(status, field.text));
        }
        values.push_back(static_cast<float>(value));
        continue;
      }
      if (classesNamed) {
        double value = -1.0;
        if (field.escaped || parseNumber(field.text, value) != NumberStatus::kOk || value < 0.0 ||
            value >= static_cast<double>(namedClasses.size()) || std::floor(value) != value) {
          return Status::parseError(atField(lineNumber, j + 1) + ": label " + quoteForMessage(field.text) +
                                    " is not one of the " + std::to_string(namedClasses.size()) +
                                    " classes named in the header (0 to " + std::to_string(namedClasses.size() - 1) +
                                    ")");
        }
        labels.push_back(static_cast<std::int32_t>(value));
        continue;
      }
      std::string_view label = field.text;
      if (field.escaped) {
        unescaped = unescape(field);
        label = unescaped;
      }
      if (label.empty()) return Status::parseError(atField(lineNumber, j + 1) + ": empty label");
      std::int32_t id = 0;
      if (!mapper.add(label, id)) {
        return Status::parseError(atField(lineNumber, j + 1) + ": more than " + std::to_string(detail::kMaxClasses) +
                                  " distinct labels; is column " + std::to_string(j + 1) + " really the label?");
      }
      labels.push_back(id);
    }
  }

  const auto records = static_cast<std::int64_t>(labels.size());
  if (claimedRecords >= 0 && claimedRecords != records) {
    return Status::parseError(at(headerLine) + ": header claims " + std::to_string(claimedRecords) +
                              " records, but the file holds " + std::to_string(records));
  }
  std::vector<std::string> classNames = classesNamed ? std::move(namedClasses) : mapper.finish(labels);
  const int numClasses = static_cast<int>(classNames.size());
  FeatureMatrix features =
      Eigen::Map<const FeatureMatrix>(values.data(), records, static_cast<Eigen::Index>(dimension));
  std::vector<float>().swap(values);  // the matrix holds its own copy; free this one before scaling
  return detail::finishDataset(what, std::move(features), std::move(labels), numClasses, std::move(classNames),
                               options.scaling);
}

}  // namespace

Result<Dataset> parseCsv(std::string_view text, const LoadOptions& options, std::string_view what) {
  return detail::guarded<Dataset>(what, [&] { return parseCsvText(text, options, what); });
}

}  // namespace dpx::core::training
