// How the libFuzzer harnesses in tests/fuzz turn raw fuzz bytes into parser calls, and the
// invariants every parsed result must satisfy. Shared by the harnesses (fuzz_*.cpp) and by
// tests/core/tst_fuzz_regressions.cpp, so a reproducer saved by the fuzzer replays exactly the
// same call in the ordinary test suite.
//
// Input layout (also in tests/data/fuzz/README.md):
//  * csv, libsvm: byte 0 selects the LoadOptions (see csvOptions/libsvmOptions), the rest is text;
//  * idx: byte 0 selects the scaling, bytes 1-4 (little-endian) the length of the images part
//    (taken modulo the bytes left + 1), then the images file, then the labels file;
//  * gzip: byte 0 selects maxBytes (kGzipLimits), the rest is the compressed file;
//  * preset: the whole input is the JSON file.
// Limits are small (kFuzz*), so an allocation beyond what they allow is a real bug rather than
// a large-but-legal input.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "training/dataset.h"

namespace dpx::fuzz {

using core::Result;
using core::training::Dataset;
using core::training::FeatureScaling;
using core::training::LoadOptions;

inline constexpr std::int64_t kFuzzMaxBytes = std::int64_t{16} << 20;  // 16 MB
inline constexpr std::int64_t kFuzzMaxRecords = 100'000;
inline constexpr std::int64_t kFuzzMaxFeatures = 10'000;

// The decompression limits the gzip harness tries: the fuzz default, zero, tiny ones and the
// sizes around zlib's and the loader's buffer boundaries.
inline constexpr std::int64_t kGzipLimits[8] = {kFuzzMaxBytes, 0, 1, 17, 1024, 65536, 65537, std::int64_t{1} << 20};

inline LoadOptions fuzzLimits() {
  LoadOptions options;
  options.maxBytes = kFuzzMaxBytes;
  options.maxRecords = kFuzzMaxRecords;
  options.maxFeatures = kFuzzMaxFeatures;
  return options;
}

inline FeatureScaling scalingFromBits(unsigned bits) {
  switch (bits % 3) {
    case 0:
      return FeatureScaling::kUnitNorm;
    case 1:
      return FeatureScaling::kClipNorm;
    default:
      return FeatureScaling::kNone;
  }
}

// Byte 0 of a CSV input: bits 0-1 header (detect / yes / no / by label column name "label"),
// bits 2-4 delimiter (detect , ; tab space | and the refused '"' and '\n'), bits 5-6 label column
// (−1, 0, 1, −2), bit 7 scaling (unit norm / none).
inline LoadOptions csvOptions(std::uint8_t selector) {
  LoadOptions options = fuzzLimits();
  switch (selector & 3u) {
    case 0:
      break;
    case 1:
      options.header = true;
      break;
    case 2:
      options.header = false;
      break;
    default:
      options.labelColumnName = "label";
      break;
  }
  static constexpr char kDelimiters[8] = {0, ',', ';', '\t', ' ', '|', '"', '\n'};
  options.delimiter = kDelimiters[(selector >> 2) & 7u];
  static constexpr int kLabelColumns[4] = {-1, 0, 1, -2};
  options.labelColumn = kLabelColumns[(selector >> 5) & 3u];
  options.scaling = (selector & 0x80u) ? FeatureScaling::kNone : FeatureScaling::kUnitNorm;
  return options;
}

// Byte 0 of a LIBSVM input: bits 0-1 scaling; bit 2 halves maxFeatures to 100 (so feature
// indices just above the limit are reachable by small mutations).
inline LoadOptions libsvmOptions(std::uint8_t selector) {
  LoadOptions options = fuzzLimits();
  options.scaling = scalingFromBits(selector & 3u);
  if (selector & 4u) options.maxFeatures = 100;
  return options;
}

inline std::string_view asText(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

inline Result<Dataset> runCsv(std::span<const std::uint8_t> input) {
  const std::uint8_t selector = input.empty() ? 0 : input[0];
  return core::training::parseCsv(asText(input.empty() ? input : input.subspan(1)), csvOptions(selector), "fuzz.csv");
}

inline Result<Dataset> runLibsvm(std::span<const std::uint8_t> input) {
  const std::uint8_t selector = input.empty() ? 0 : input[0];
  return core::training::parseLibsvm(asText(input.empty() ? input : input.subspan(1)), libsvmOptions(selector),
                                     "fuzz.svm");
}

struct IdxInput {
  LoadOptions options;
  std::span<const std::uint8_t> images;
  std::span<const std::uint8_t> labels;
};

inline IdxInput splitIdx(std::span<const std::uint8_t> input) {
  IdxInput out{fuzzLimits(), {}, {}};
  if (input.empty()) return out;
  out.options.scaling = scalingFromBits(input[0]);
  if (input.size() < 5) {
    out.images = input.subspan(1);
    return out;
  }
  const std::uint32_t claimed = std::uint32_t{input[1]} | (std::uint32_t{input[2]} << 8) |
                                (std::uint32_t{input[3]} << 16) | (std::uint32_t{input[4]} << 24);
  const std::span<const std::uint8_t> rest = input.subspan(5);
  const std::size_t cut = static_cast<std::size_t>(claimed % (static_cast<std::uint64_t>(rest.size()) + 1));
  out.images = rest.first(cut);
  out.labels = rest.subspan(cut);
  return out;
}

// The inverse of splitIdx, for writing seeds and tests: options byte, images length, images, labels.
inline std::vector<std::uint8_t> joinIdx(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                                         std::uint8_t selector = 0) {
  std::vector<std::uint8_t> out{selector};
  const auto length = static_cast<std::uint32_t>(images.size());
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::uint8_t>(length >> shift));
  out.insert(out.end(), images.begin(), images.end());
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

inline Result<Dataset> runIdx(std::span<const std::uint8_t> input) {
  const IdxInput split = splitIdx(input);
  return core::training::parseIdx(split.images, split.labels, split.options, "fuzz.idx");
}

inline std::int64_t gzipLimit(std::span<const std::uint8_t> input) {
  return input.empty() ? kFuzzMaxBytes : kGzipLimits[input[0] & 7u];
}

inline Result<std::vector<std::uint8_t>> runGzip(std::span<const std::uint8_t> input) {
  return core::training::gunzip(input.empty() ? input : input.subspan(1), gzipLimit(input));
}

// "" when a successfully parsed dataset is well formed, else what is wrong with it. A parser
// that returns OK must hand the trainer finite features, labels in [0, C) with ≥ 2 classes
// present, consistent sizes within the limits, and rows scaled as asked.
inline std::string datasetDefect(const Dataset& data, const LoadOptions& options) {
  const auto rows = static_cast<std::int64_t>(data.features.rows());
  if (rows != data.size())
    return "features has " + std::to_string(rows) + " rows for " + std::to_string(data.size()) + " labels";
  if (rows < 1) return "no records";
  if (rows > options.maxRecords) return std::to_string(rows) + " records exceed maxRecords";
  if (data.features.cols() < 1) return "no features";
  if (data.features.cols() > options.maxFeatures)
    return std::to_string(data.features.cols()) + " features exceed maxFeatures";
  if (data.numClasses < 2) return "fewer than 2 classes";
  if (data.classNames.size() != static_cast<std::size_t>(data.numClasses))
    return "classNames size differs from numClasses";
  std::vector<bool> present(static_cast<std::size_t>(data.numClasses), false);
  for (const std::int32_t label : data.labels) {
    if (label < 0 || label >= data.numClasses) return "label " + std::to_string(label) + " outside [0, numClasses)";
    present[static_cast<std::size_t>(label)] = true;
  }
  if (std::count(present.begin(), present.end(), true) < 2) return "fewer than 2 classes present";
  for (Eigen::Index r = 0; r < data.features.rows(); ++r) {
    double squared = 0.0;
    for (Eigen::Index c = 0; c < data.features.cols(); ++c) {
      const double x = data.features(r, c);
      if (!std::isfinite(x)) return "non-finite feature in row " + std::to_string(r);
      squared += x * x;
    }
    const double norm = std::sqrt(squared);
    if (!std::isfinite(norm) && options.scaling != FeatureScaling::kNone)
      return "row " + std::to_string(r) + " has an infinite norm after scaling";
    if (options.scaling != FeatureScaling::kNone && norm > 1.0 + 1e-5) {
      return "row " + std::to_string(r) + " has norm " + std::to_string(norm) + " > 1 after scaling";
    }
  }
  return {};
}

}  // namespace dpx::fuzz
