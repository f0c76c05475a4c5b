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

Result<Dataset> parseLibsvmText(std::string_view text, const LoadOptions& options, std::string_view what) {
  const std::string prefix(what);
  const auto at = [&prefix](std::int64_t line) { return prefix + ": line " + std::to_string(line); };
  const std::int64_t maxFeatures = std::clamp<std::int64_t>(options.maxFeatures, 0, INT_MAX - 1);

  std::vector<Entry> entries;
  std::vector<std::size_t> rowStart;  // into entries
  std::vector<std::int32_t> labels;
  detail::LabelMapper mapper;
  std::int64_t dimension = 0;

  LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    const std::int64_t lineNumber = cursor.lineNumber();
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::size_t i = 0;
    const std::string_view labelToken = nextToken(line, i);
    if (labelToken.empty()) continue;
    double labelValue = 0.0;
    if (const auto status = parseNumber(labelToken, labelValue); status != NumberStatus::kOk) {
      return Status::parseError(at(lineNumber) + ": label " + describeNumberError(status, labelToken));
    }
    if (static_cast<std::int64_t>(labels.size()) >= options.maxRecords) {
      return Status::parseError(at(lineNumber) + ": more than " + std::to_string(options.maxRecords) +
                                " records (the limit)");
    }
    std::int32_t id = 0;
    if (!mapper.add(labelToken, id)) {
      return Status::parseError(at(lineNumber) + ": more than " + std::to_string(detail::kMaxClasses) +
                                " distinct labels");
    }
    labels.push_back(id);
    rowStart.push_back(entries.size());

    std::int64_t previous = 0;
    for (int tokenNumber = 2;; ++tokenNumber) {
      const std::string_view token = nextToken(line, i);
      if (token.empty()) break;
      if (token.starts_with("qid:")) continue;  // SVMlight ranking groups: irrelevant to classification
      const auto colon = token.find(':');
      if (colon == std::string_view::npos || colon == 0) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) + ": " +
                                  quoteForMessage(token) + " is not an index:value pair");
      }
      const std::string_view indexText = token.substr(0, colon);
      std::uint64_t index = 0;
      const auto [stop, error] = std::from_chars(indexText.data(), indexText.data() + indexText.size(), index);
      const bool tooLarge = error == std::errc::result_out_of_range;
      if (stop != indexText.data() + indexText.size() || (error != std::errc{} && !tooLarge)) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) + ": " +
                                  quoteForMessage(indexText) + " is not a feature index");
      }
      if (tooLarge || index > static_cast<std::uint64_t>(maxFeatures)) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) + ": feature index " +
                                  std::string(indexText.substr(0, 24)) + " is above the limit of " +
                                  std::to_string(maxFeatures) + " features");
      }
      if (index == 0) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) +
                                  ": feature index 0 (indices start at 1)");
      }
      const auto signedIndex = static_cast<std::int64_t>(index);
      if (signedIndex <= previous) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) + ": feature index " +
                                  std::to_string(signedIndex) + " after " + std::to_string(previous) +
                                  " (indices must increase)");
      }
      previous = signedIndex;
      const std::string_view valueText = token.substr(colon + 1);
      double value = 0.0;
      if (const auto status = parseNumber(valueText, value); status != NumberStatus::kOk) {
        return Status::parseError(at(lineNumber) + ", token " + std::to_string(tokenNumber) + ": value " +
                                  describeNumberError(status, valueText));
      }
      entries.push_back({static_cast<std::int32_t>(signedIndex - 1), static_cast<float>(value)});
      dimension = std::max(dimension, signedIndex);
    }
  }

  const auto records = static_cast<std::int64_t>(labels.size());
  if (records == 0) return Status::parseError(prefix + ": no records");
  if (dimension == 0) return Status::parseError(prefix + ": no index:value pair in any record");
  // records·4 cannot overflow (records ≤ the text's length); the product with d might.
  std::uint64_t denseBytes = 0;
  const bool fits = detail::multiplyChecked(static_cast<std::uint64_t>(records) * sizeof(float),
                                            static_cast<std::uint64_t>(dimension), denseBytes);
  if (!fits || denseBytes > static_cast<std::uint64_t>(std::max<std::int64_t>(options.maxBytes, 0))) {
    return Status::invalidArgument(prefix + ": " + std::to_string(records) + " records × " + std::to_string(dimension) +
                                   " features as a dense float matrix take " +
                                   (fits ? std::to_string(denseBytes) : std::string("more than 2^64")) +
                                   " bytes, above the limit of " + std::to_string(options.maxBytes) + " bytes");
  }
  FeatureMatrix features = FeatureMatrix::Zero(records, dimension);
  rowStart.push_back(entries.size());
  for (std::int64_t r = 0; r < records; ++r) {
    for (std::size_t k = rowStart[static_cast<std::size_t>(r)]; k < rowStart[static_cast<std::size_t>(r) + 1]; ++k) {
      features(r, entries[k].column) = entries[k].value;
    }
  }
  std::vector<std::string> classNames = mapper.finish(labels);
  const int numClasses = static_cast<int>(classNames.size());
  return detail::finishDataset(what, std::move(features), std::move(labels), numClasses, std::move(classNames),
                               options.scaling);
}

}  // namespace

Result<Dataset> parseLibsvm(std::string_view text, const LoadOptions& options, std::string_view what) {
  return detail::guarded<Dataset>(what, [&] { return parseLibsvmText(text, options, what); });
}

}  // namespace dpx::core::training
