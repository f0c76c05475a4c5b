// parseLibsvm (dataset.h): the sparse "label index:value …" format of LIBSVM and SVMlight, read
// into the dense matrix the trainer works on. Indices are 1-based and strictly increasing per
// line as both tools require; anything else is refused with its line rather than guessed at.
// The dense size is checked against maxBytes before allocating, since a few sparse lines can
// name an index that would make the dense matrix enormous.
#include <algorithm>
#include <charconv>
#include <climits>
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

struct Entry {
  std::int32_t column;
  float value;
};

// The next token separated by blanks, or an empty view at the end of the line.
std::string_view nextToken(std::string_view line, std::size_t& i) {
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const std::size_t start = i;
  while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
  return line.substr(start, i - start);
}

// The records read so far, sparse: entries[rowStart[r]…rowStart[r + 1]) are record r's.
struct SparseRecords {
  std::vector<Entry> entries;
  std::vector<std::size_t> rowStart;  // into entries
  std::vector<std::int32_t> labels;
  detail::LabelMapper mapper;
  std::int64_t dimension = 0;  // the largest index seen
};

// Where a message points: "what: line 3", "what: line 3, token 2".
struct Location {
  const std::string& prefix;
  std::int64_t line;

  std::string at() const { return prefix + ": line " + std::to_string(line); }
  std::string atToken(int token) const { return at() + ", token " + std::to_string(token); }
};

// One index:value token, the tokenNumber-th of its line; `previous` is the line's last index.
Status readPair(std::string_view token, int tokenNumber, const Location& where, std::int64_t maxFeatures,
                std::int64_t& previous, SparseRecords& records) {
  const auto colon = token.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::parseError(where.atToken(tokenNumber) + ": " + quoteForMessage(token) +
                              " is not an index:value pair");
  }
  const std::string_view indexText = token.substr(0, colon);
  std::uint64_t index = 0;
  const auto [stop, error] = std::from_chars(indexText.data(), indexText.data() + indexText.size(), index);
  const bool tooLarge = error == std::errc::result_out_of_range;
  if (stop != indexText.data() + indexText.size() || (error != std::errc{} && !tooLarge)) {
    return Status::parseError(where.atToken(tokenNumber) + ": " + quoteForMessage(indexText) +
                              " is not a feature index");
  }
  if (tooLarge || index > static_cast<std::uint64_t>(maxFeatures)) {
    return Status::parseError(where.atToken(tokenNumber) + ": feature index " + std::string(indexText.substr(0, 24)) +
                              " is above the limit of " + std::to_string(maxFeatures) + " features");
  }
  if (index == 0) return Status::parseError(where.atToken(tokenNumber) + ": feature index 0 (indices start at 1)");
  const auto signedIndex = static_cast<std::int64_t>(index);
  if (signedIndex <= previous) {
    return Status::parseError(where.atToken(tokenNumber) + ": feature index " + std::to_string(signedIndex) +
                              " after " + std::to_string(previous) + " (indices must increase)");
  }
  previous = signedIndex;
  const std::string_view valueText = token.substr(colon + 1);
  double value = 0.0;
  if (const auto status = parseNumber(valueText, value); status != NumberStatus::kOk) {
    return Status::parseError(where.atToken(tokenNumber) + ": value " + describeNumberError(status, valueText));
  }
  records.entries.push_back({static_cast<std::int32_t>(signedIndex - 1), static_cast<float>(value)});
  records.dimension = std::max(records.dimension, signedIndex);
  return Status::ok();
}

// One line: a label, then index:value pairs (and SVMlight's qid:, skipped); blank lines and
// comments add nothing.
Status readLine(std::string_view line, const Location& where, const LoadOptions& options, std::int64_t maxFeatures,
                SparseRecords& records) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::size_t i = 0;
  const std::string_view labelToken = nextToken(line, i);
  if (labelToken.empty()) return Status::ok();
  double labelValue = 0.0;
  if (const auto status = parseNumber(labelToken, labelValue); status != NumberStatus::kOk) {
    return Status::parseError(where.at() + ": label " + describeNumberError(status, labelToken));
  }
  if (static_cast<std::int64_t>(records.labels.size()) >= options.maxRecords) {
    return Status::parseError(where.at() + ": more than " + std::to_string(options.maxRecords) +
                              " records (the limit)");
  }
  std::int32_t id = 0;
  if (!records.mapper.add(labelToken, id)) {
    return Status::parseError(where.at() + ": more than " + std::to_string(detail::kMaxClasses) + " distinct labels");
  }
  records.labels.push_back(id);
  records.rowStart.push_back(records.entries.size());
  std::int64_t previous = 0;
  for (int tokenNumber = 2;; ++tokenNumber) {
    const std::string_view token = nextToken(line, i);
    if (token.empty()) return Status::ok();
    if (token.starts_with("qid:")) continue;  // SVMlight ranking groups: irrelevant to classification
    DPX_RETURN_IF_ERROR(readPair(token, tokenNumber, where, maxFeatures, previous, records));
  }
}

// The dense matrix, once its size is known to be within options.maxBytes.
Result<FeatureMatrix> densify(SparseRecords& records, const LoadOptions& options, const std::string& prefix) {
  const auto count = static_cast<std::int64_t>(records.labels.size());
  const std::int64_t dimension = records.dimension;
  if (count == 0) return Status::parseError(prefix + ": no records");
  if (dimension == 0) return Status::parseError(prefix + ": no index:value pair in any record");
  // records·4 cannot overflow (records ≤ the text's length); the product with d might.
  std::uint64_t denseBytes = 0;
  const bool fits = detail::multiplyChecked(static_cast<std::uint64_t>(count) * sizeof(float),
                                            static_cast<std::uint64_t>(dimension), denseBytes);
  if (!fits || denseBytes > static_cast<std::uint64_t>(std::max<std::int64_t>(options.maxBytes, 0))) {
    return Status::invalidArgument(prefix + ": " + std::to_string(count) + " records × " + std::to_string(dimension) +
                                   " features as a dense float matrix take " +
                                   (fits ? std::to_string(denseBytes) : std::string("more than 2^64")) +
                                   " bytes, above the limit of " + std::to_string(options.maxBytes) + " bytes");
  }
  FeatureMatrix features = FeatureMatrix::Zero(count, dimension);
  std::vector<std::size_t>& rowStart = records.rowStart;
  rowStart.push_back(records.entries.size());
  for (std::int64_t r = 0; r < count; ++r) {
    for (std::size_t k = rowStart[static_cast<std::size_t>(r)]; k < rowStart[static_cast<std::size_t>(r) + 1]; ++k) {
      features(r, records.entries[k].column) = records.entries[k].value;
    }
  }
  return features;
}

Result<Dataset> parseLibsvmText(std::string_view text, const LoadOptions& options, std::string_view what) {
  const std::string prefix(what);
  const std::int64_t maxFeatures = std::clamp<std::int64_t>(options.maxFeatures, 0, INT_MAX - 1);
  SparseRecords records;
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    DPX_RETURN_IF_ERROR(readLine(line, Location{prefix, cursor.lineNumber()}, options, maxFeatures, records));
  }
  DPX_ASSIGN_OR_RETURN(FeatureMatrix features, densify(records, options, prefix));
  std::vector<std::string> classNames = records.mapper.finish(records.labels);
  const int numClasses = static_cast<int>(classNames.size());
  return detail::finishDataset(what, std::move(features), std::move(records.labels), numClasses, std::move(classNames),
                               options.effectiveScaling());
}

}  // namespace

Result<Dataset> parseLibsvm(std::string_view text, const LoadOptions& options, std::string_view what) {
  return detail::guarded<Dataset>(what, [&] { return parseLibsvmText(text, options, what); });
}

}  // namespace dpx::core::training
