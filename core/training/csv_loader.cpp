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

// The first non-blank lines, from which the delimiter and the header are guessed.
struct Sample {
  std::vector<std::string_view> lines;
  std::vector<std::int64_t> lineNumbers;
};

Sample sniff(std::string_view text) {
  Sample sample;
  LineCursor cursor(text);
  std::string_view line;
  while (sample.lines.size() < kSniffLines && cursor.next(line)) {
    if (trimBlanks(line).empty()) continue;
    sample.lines.push_back(line);
    sample.lineNumbers.push_back(cursor.lineNumber());
  }
  return sample;
}

// Splits lines into fields at the file's delimiter and names lines and fields in messages.
class CsvSplitter {
 public:
  CsvSplitter(const std::string& prefix, char delimiter, std::int64_t maxFeatures)
      : m_prefix(prefix),
        m_delimiter(delimiter),
        m_maxFeatures(maxFeatures),
        m_maxFields(static_cast<std::size_t>(maxFeatures) + 1) {}

  const std::string& prefix() const { return m_prefix; }
  std::string at(std::int64_t line) const { return m_prefix + ": line " + std::to_string(line); }
  std::string atField(std::int64_t line, std::size_t field) const {
    return at(line) + ", field " + std::to_string(field);
  }

  // The fields of `line`, or the status naming the line and field that could not be split.
  Status split(std::string_view line, std::int64_t lineNumber, std::vector<Field>& fields) const {
    const SplitError error = m_delimiter == kBlankRuns ? splitBlankRuns(line, fields, m_maxFields)
                                                       : splitDelimited(line, m_delimiter, fields, m_maxFields);
    if (!error.reason) return Status::ok();
    if (error.field > m_maxFields) {
      return Status::parseError(at(lineNumber) + ": more than " + std::to_string(m_maxFields) +
                                " fields (the limit is " + std::to_string(m_maxFeatures) + " features and a label)");
    }
    return Status::parseError(atField(lineNumber, error.field) + ": " + error.reason);
  }

 private:
  const std::string& m_prefix;
  char m_delimiter;
  std::int64_t m_maxFeatures;
  std::size_t m_maxFields;
};

Result<char> chooseDelimiter(const LoadOptions& options, const Sample& sample, const std::string& prefix) {
  const char delimiter = options.delimiter;
  if (delimiter == '\n' || delimiter == '\r' || delimiter == '"') {
    return Status::invalidArgument(prefix + ": a line break or a quote cannot be the delimiter");
  }
  return delimiter == 0 ? detectDelimiter(sample.lines) : delimiter;
}

// What the first lines say about the rest of the file.
struct CsvLayout {
  HeaderKind header = HeaderKind::kNone;
  std::int64_t headerLine = 0;            // 0: no header
  std::int64_t claimedRecords = -1;       // from a sklearn header
  std::vector<std::string> namedClasses;  // from a sklearn header
  std::vector<std::string> columnNames;   // from a header naming the columns
  std::size_t expected = 0;               // fields per record
  std::size_t labelIndex = 0;

  bool classesNamed() const { return header == HeaderKind::kSklearn && !namedClasses.empty(); }
};

// Reads the header, if any, from the first line (the second tells how many fields a record has).
Status readHeader(CsvLayout& layout, const std::vector<Field>& first, const std::vector<Field>& second,
                  const Sample& sample, const CsvSplitter& splitter) {
  layout.expected = first.size();
  if (layout.header == HeaderKind::kSklearn) {
    layout.headerLine = sample.lineNumbers[0];
    std::int64_t claimedFeatures = 0;
    readCount(first[0], layout.claimedRecords);
    readCount(first[1], claimedFeatures);
    for (std::size_t j = 2; j < first.size(); ++j) layout.namedClasses.push_back(unescape(first[j]));
    if (static_cast<std::int64_t>(second.size()) != claimedFeatures + 1) {
      return Status::parseError(splitter.at(layout.headerLine) + ": header claims " + std::to_string(claimedFeatures) +
                                " features per record, but line " + std::to_string(sample.lineNumbers[1]) + " has " +
                                std::to_string(second.size()) + " fields (expected " +
                                std::to_string(claimedFeatures + 1) + ": the features and a label)");
    }
    layout.expected = second.size();
  } else if (layout.header == HeaderKind::kNames) {
    layout.headerLine = sample.lineNumbers[0];
    for (const auto& field : first) layout.columnNames.push_back(unescape(field));
  }
  if (layout.expected < 2) {
    return Status::parseError(splitter.at(sample.lineNumbers[0]) +
                              ": found 1 field; a record needs a label and at least one feature " +
                              "(is the delimiter right?)");
  }
  return Status::ok();
}

// The label's column: named in the header, or by (possibly negative) position.
Result<std::size_t> labelColumnIndex(const CsvLayout& layout, const LoadOptions& options, const std::string& prefix) {
  if (options.labelColumnName) {
    if (layout.header != HeaderKind::kNames) {
      return Status::invalidArgument(prefix + ": the label column " + quoteForMessage(*options.labelColumnName) +
                                     " is given by name, but the file has no header line naming its columns");
    }
    const std::vector<std::string>& names = layout.columnNames;
    const auto found = std::find(names.begin(), names.end(), *options.labelColumnName);
    if (found == names.end()) {
      return Status::invalidArgument(prefix + ": no column named " + quoteForMessage(*options.labelColumnName) +
                                     " in the header on line " + std::to_string(layout.headerLine));
    }
    return static_cast<std::size_t>(found - names.begin());
  }
  if (const auto index = resolveColumn(options.labelColumn, layout.expected)) return *index;
  return Status::invalidArgument(prefix + ": label column " + std::to_string(options.labelColumn) + " is outside the " +
                                 std::to_string(layout.expected) + " columns");
}

Result<CsvLayout> readLayout(const Sample& sample, const CsvSplitter& splitter, const LoadOptions& options) {
  std::vector<Field> first;
  std::vector<Field> second;
  DPX_RETURN_IF_ERROR(splitter.split(sample.lines[0], sample.lineNumbers[0], first));
  const bool haveSecond = sample.lines.size() > 1;
  if (haveSecond) DPX_RETURN_IF_ERROR(splitter.split(sample.lines[1], sample.lineNumbers[1], second));
  CsvLayout layout;
  layout.header = detectHeader(first, haveSecond ? &second : nullptr, options);
  DPX_RETURN_IF_ERROR(readHeader(layout, first, second, sample, splitter));
  DPX_ASSIGN_OR_RETURN(layout.labelIndex, labelColumnIndex(layout, options, splitter.prefix()));
  return layout;
}

// The records read so far: features row-major, labels as classes (or provisional ids of mapper).
struct CsvRecords {
  std::vector<float> values;
  std::vector<std::int32_t> labels;
  detail::LabelMapper mapper;
};

// Reservations are bounded by the text itself (every field takes at least two bytes), never by
// what the first line or a header claims.
void reserveRecords(std::string_view text, std::int64_t maxRecords, std::size_t dimension, CsvRecords& records) {
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const std::size_t byText = text.size() / 2 + 1;
  const std::size_t rows = std::min({lines, byText, static_cast<std::size_t>(std::max<std::int64_t>(maxRecords, 0))});
  records.values.reserve(rows > byText / dimension ? byText : rows * dimension);
  records.labels.reserve(rows);
}

// The label in field j (0-based) of a record: a class named in a sklearn header, or any text.
Status readLabel(const Field& field, std::size_t j, std::int64_t lineNumber, const CsvLayout& layout,
                 const CsvSplitter& splitter, CsvRecords& records) {
  if (layout.classesNamed()) {
    const std::size_t classes = layout.namedClasses.size();
    double value = -1.0;
    if (field.escaped || parseNumber(field.text, value) != NumberStatus::kOk || value < 0.0 ||
        value >= static_cast<double>(classes) || std::floor(value) != value) {
      return Status::parseError(splitter.atField(lineNumber, j + 1) + ": label " + quoteForMessage(field.text) +
                                " is not one of the " + std::to_string(classes) +
                                " classes named in the header (0 to " + std::to_string(classes - 1) + ")");
    }
    records.labels.push_back(static_cast<std::int32_t>(value));
    return Status::ok();
  }
  std::string unescaped;
  std::string_view label = field.text;
  if (field.escaped) {
    unescaped = unescape(field);
    label = unescaped;
  }
  if (label.empty()) return Status::parseError(splitter.atField(lineNumber, j + 1) + ": empty label");
  std::int32_t id = 0;
  if (!records.mapper.add(label, id)) {
    return Status::parseError(splitter.atField(lineNumber, j + 1) + ": more than " +
                              std::to_string(detail::kMaxClasses) + " distinct labels; is column " +
                              std::to_string(j + 1) + " really the label?");
  }
  records.labels.push_back(id);
  return Status::ok();
}

// The fields of one record, already split and counted.
Status readRecord(const std::vector<Field>& fields, std::int64_t lineNumber, const CsvLayout& layout,
                  const CsvSplitter& splitter, CsvRecords& records) {
  for (std::size_t j = 0; j < layout.expected; ++j) {
    const Field& field = fields[j];
    if (j == layout.labelIndex) {
      DPX_RETURN_IF_ERROR(readLabel(field, j, lineNumber, layout, splitter, records));
      continue;
    }
    double value = 0.0;
    const NumberStatus status = field.escaped ? NumberStatus::kNotANumber : parseNumber(field.text, value);
    if (status != NumberStatus::kOk) {
      return Status::parseError(splitter.atField(lineNumber, j + 1) + ": " + describeNumberError(status, field.text));
    }
    records.values.push_back(static_cast<float>(value));
  }
  return Status::ok();
}

Status readRecords(std::string_view text, const CsvLayout& layout, const CsvSplitter& splitter, std::int64_t maxRecords,
                   CsvRecords& records) {
  std::vector<Field> fields;
  fields.reserve(layout.expected);
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    const std::int64_t lineNumber = cursor.lineNumber();
    if (lineNumber <= layout.headerLine || trimBlanks(line).empty()) continue;
    DPX_RETURN_IF_ERROR(splitter.split(line, lineNumber, fields));
    if (fields.size() != layout.expected) {
      return Status::parseError(splitter.at(lineNumber) + ": expected " + std::to_string(layout.expected) +
                                " fields, found " + std::to_string(fields.size()));
    }
    if (static_cast<std::int64_t>(records.labels.size()) >= maxRecords) {
      return Status::parseError(splitter.at(lineNumber) + ": more than " + std::to_string(maxRecords) +
                                " records (the limit)");
    }
    DPX_RETURN_IF_ERROR(readRecord(fields, lineNumber, layout, splitter, records));
  }
  return Status::ok();
}

Result<Dataset> parseCsvText(std::string_view text, const LoadOptions& options, std::string_view what) {
  const std::string prefix(what);
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte-order mark
  const std::int64_t maxFeatures = std::clamp<std::int64_t>(options.maxFeatures, 0, INT_MAX - 1);
  const Sample sample = sniff(text);
  if (sample.lines.empty()) return Status::parseError(prefix + ": no records");
  DPX_ASSIGN_OR_RETURN(const char delimiter, chooseDelimiter(options, sample, prefix));
  const CsvSplitter splitter(prefix, delimiter, maxFeatures);
  DPX_ASSIGN_OR_RETURN(CsvLayout layout, readLayout(sample, splitter, options));

  const std::size_t dimension = layout.expected - 1;
  CsvRecords records;
  reserveRecords(text, options.maxRecords, dimension, records);
  DPX_RETURN_IF_ERROR(readRecords(text, layout, splitter, options.maxRecords, records));

  const auto count = static_cast<std::int64_t>(records.labels.size());
  if (layout.claimedRecords >= 0 && layout.claimedRecords != count) {
    return Status::parseError(splitter.at(layout.headerLine) + ": header claims " +
                              std::to_string(layout.claimedRecords) + " records, but the file holds " +
                              std::to_string(count));
  }
  std::vector<std::string> classNames =
      layout.classesNamed() ? std::move(layout.namedClasses) : records.mapper.finish(records.labels);
  const int numClasses = static_cast<int>(classNames.size());
  FeatureMatrix features =
      Eigen::Map<const FeatureMatrix>(records.values.data(), count, static_cast<Eigen::Index>(dimension));
  std::vector<float>().swap(records.values);  // the matrix holds its own copy; free this one before scaling
  return detail::finishDataset(what, std::move(features), std::move(records.labels), numClasses, std::move(classNames),
                               options.effectiveScaling());
}

}  // namespace

Result<Dataset> parseCsv(std::string_view text, const LoadOptions& options, std::string_view what) {
  return detail::guarded<Dataset>(what, [&] { return parseCsvText(text, options, what); });
}

}  // namespace dpx::core::training
