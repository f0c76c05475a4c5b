// The shared internals of the dataset parsers (dataset_parsing.h): numbers, labels, lines, file
// reading and the final checks, written once so every format reports errors alike.
#include "training/dataset_parsing.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <system_error>

namespace dpx::core::training::detail {

std::string quoteForMessage(std::string_view text) {
  constexpr std::size_t kShown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < std::min(text.size(), kShown); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (text.size() > kShown) out += "...";
  out += '\'';
  return out;
}

std::string_view trimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

NumberStatus parseNumber(std::string_view text, double& value) {
  text = trimBlanks(text);
  if (text.empty()) return NumberStatus::kEmpty;
  std::string_view digits = text;
  // from_chars refuses a leading '+', which LIBSVM labels (+1) and some CSV writers use.
  if (digits.front() == '+') {
    digits.remove_prefix(1);
    if (digits.empty() || digits.front() == '+' || digits.front() == '-') return NumberStatus::kNotANumber;
  }
  double parsed = 0.0;
  const char* end = digits.data() + digits.size();
  const auto [stop, error] = std::from_chars(digits.data(), end, parsed, std::chars_format::general);
  if (stop != end) return NumberStatus::kNotANumber;
  if (error == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  if (error != std::errc{}) return NumberStatus::kNotANumber;
  if (!std::isfinite(parsed)) return NumberStatus::kNotFinite;
  if (std::fabs(parsed) > static_cast<double>(std::numeric_limits<float>::max())) return NumberStatus::kOutOfRange;
  value = parsed;
  return NumberStatus::kOk;
}

std::string describeNumberError(NumberStatus status, std::string_view text) {
  switch (status) {
    case NumberStatus::kOk:
      return "no error";
    case NumberStatus::kEmpty:
      return "empty field where a number was expected";
    case NumberStatus::kNotANumber:
      return quoteForMessage(trimBlanks(text)) + " is not a number";
    case NumberStatus::kNotFinite:
      return quoteForMessage(trimBlanks(text)) + " is not a finite number";
    case NumberStatus::kOutOfRange:
      return quoteForMessage(trimBlanks(text)) + " is out of range for a 32-bit float";
  }
  return "invalid number";
}

bool LabelMapper::add(std::string_view label, std::int32_t& provisionalId) {
  // Labels usually come in runs (files sorted by class), so the previous one is checked first.
  if (m_lastId >= 0 && label == m_lastLabel) {
    provisionalId = m_lastId;
    return true;
  }
  auto found = m_ids.find(label);
  if (found == m_ids.end()) {
    if (m_names.size() >= static_cast<std::size_t>(kMaxClasses)) return false;
    found = m_ids.emplace(std::string(label), static_cast<std::int32_t>(m_names.size())).first;
    m_names.emplace_back(label);
  }
  m_lastLabel = found->first;
  m_lastId = found->second;
  provisionalId = found->second;
  return true;
}

std::vector<std::string> LabelMapper::finish(std::vector<std::int32_t>& labels) const {
  const std::size_t count = m_names.size();
  std::vector<std::int32_t> finalId(count, 0);
  std::vector<std::string> names;

  std::vector<std::pair<double, std::int32_t>> numeric;
  numeric.reserve(count);
  bool allNumeric = true;
  for (std::size_t i = 0; i < count && allNumeric; ++i) {
    double value = 0.0;
    allNumeric = parseNumber(m_names[i], value) == NumberStatus::kOk;
    numeric.emplace_back(value, static_cast<std::int32_t>(i));
  }
  if (allNumeric) {
    // Sorting by (value, first appearance) makes the first spelling of a value name its class.
    std::sort(numeric.begin(), numeric.end());
    std::int32_t cls = -1;
    double previous = 0.0;
    for (const auto& [value, id] : numeric) {
      if (cls < 0 || value != previous) {
        ++cls;
        names.push_back(m_names[static_cast<std::size_t>(id)]);
      }
      finalId[static_cast<std::size_t>(id)] = cls;
      previous = value;
    }
  } else {
    std::vector<std::int32_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [this](std::int32_t a, std::int32_t b) {
      return m_names[static_cast<std::size_t>(a)] < m_names[static_cast<std::size_t>(b)];
    });
    for (std::size_t k = 0; k < count; ++k) {
      finalId[static_cast<std::size_t>(order[k])] = static_cast<std::int32_t>(k);
      names.push_back(m_names[static_cast<std::size_t>(order[k])]);
    }
  }
  for (auto& label : labels) label = finalId[static_cast<std::size_t>(label)];
  return names;
}

std::vector<std::string> numberedClassNames(int numClasses) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(std::max(numClasses, 0)));
  for (int c = 0; c < numClasses; ++c) names.push_back(std::to_string(c));
  return names;
}

Result<Dataset> finishDataset(std::string_view what, FeatureMatrix features, std::vector<std::int32_t> labels,
                              int numClasses, std::vector<std::string> classNames, FeatureScaling scaling) {
  const std::string prefix(what);
  if (labels.empty()) return Status::parseError(prefix + ": no records");
  if (features.cols() == 0) return Status::parseError(prefix + ": no features");
  if (static_cast<std::size_t>(features.rows()) != labels.size() || numClasses < 1 ||
      classNames.size() != static_cast<std::size_t>(numClasses)) {
    return Status::invalidArgument(prefix + ": inconsistent sizes (internal error)");
  }
  std::vector<std::int64_t> perClass(static_cast<std::size_t>(numClasses), 0);
  for (const auto label : labels) {
    if (label < 0 || label >= numClasses)
      return Status::invalidArgument(prefix + ": label out of range (internal error)");
    ++perClass[static_cast<std::size_t>(label)];
  }
  const auto present = std::count_if(perClass.begin(), perClass.end(), [](std::int64_t k) { return k > 0; });
  if (present < 2) {
    return Status::parseError(prefix + ": all " + std::to_string(labels.size()) + " records have the label " +
                              quoteForMessage(classNames[static_cast<std::size_t>(labels.front())]) +
                              "; a classifier needs at least 2 classes");
  }
  scaleFeatures(features, scaling);
  Dataset data;
  data.name = prefix;
  data.features = std::move(features);
  data.labels = std::move(labels);
  data.numClasses = numClasses;
  data.classNames = std::move(classNames);
  if (scaling != FeatureScaling::kNone) data.rowNormBound = 1.0;
  return data;
}

Status outOfMemory(std::string_view what) {
  return Status::invalidArgument(std::string(what) +
                                 ": out of memory (lower the size limits or use a smaller dataset)");
}

bool LineCursor::next(std::string_view& line) {
  const std::size_t size = m_text.size();
  if (m_position >= size) return false;
  const char* base = m_text.data();
  const std::size_t start = m_position;
  // memchr twice is much faster than a byte loop on the long lines of wide CSV files.
  const void* newline = std::memchr(base + start, '\n', size - start);
  std::size_t end = newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - base) : size;
  std::size_t next = newline ? end + 1 : size;
  if (const void* cr = std::memchr(base + start, '\r', end - start)) {
    const auto crAt = static_cast<std::size_t>(static_cast<const char*>(cr) - base);
    if (crAt + 1 != end) next = crAt + 1;  // a lone \r ends the line (old Mac files)
    end = crAt;
  }
  line = m_text.substr(start, end - start);
  m_position = next;
  ++m_lineNumber;
  return true;
}

Result<std::vector<std::uint8_t>> readFile(const std::string& path, std::int64_t maxBytes) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto status = fs::status(path, error);
  if (!fs::exists(status)) return Status::ioError("cannot read '" + path + "': no such file or directory");
  if (fs::is_directory(status)) return Status::ioError("cannot read '" + path + "': it is a directory");
  const auto size = fs::file_size(path, error);
  if (!error && size > static_cast<std::uintmax_t>(std::max<std::int64_t>(maxBytes, 0))) {
    return Status::invalidArgument("'" + path + "' is " + std::to_string(size) + " bytes, above the limit of " +
                                   std::to_string(maxBytes) + " bytes");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    return Status::ioError("cannot open '" + path + "': " + std::generic_category().message(errno));
  }
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<std::uint8_t> bytes;
  if (!error) bytes.reserve(static_cast<std::size_t>(size) + kChunk);
  // Read in chunks rather than trusting file_size: pipes and growing files report something else.
  for (;;) {
    const std::size_t had = bytes.size();
    if (static_cast<std::int64_t>(had) > maxBytes) {
      return Status::invalidArgument("'" + path + "' is larger than the limit of " + std::to_string(maxBytes) +
                                     " bytes");
    }
    bytes.resize(had + kChunk);
    const std::size_t got = std::fread(bytes.data() + had, 1, kChunk, file.get());
    bytes.resize(had + got);
    if (got < kChunk) break;
  }
  if (std::ferror(file.get())) return Status::ioError("error reading '" + path + "'");
  if (static_cast<std::int64_t>(bytes.size()) > maxBytes) {
    return Status::invalidArgument("'" + path + "' is larger than the limit of " + std::to_string(maxBytes) + " bytes");
  }
  return bytes;
}

}  // namespace dpx::core::training::detail
