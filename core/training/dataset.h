// Datasets for the trainer: dense float32 features, integer class labels, and the
// loaders for CSV, LIBSVM/SVMlight and IDX (MNIST/Fashion-MNIST, gzip allowed), plus the
// embedded `builtin:digits` and `builtin:breast-cancer` and `builtin:fashion-mnist` (read from
// /usr/share/datasets/fashion-mnist, Debian package dataset-fashion-mnist).
//
// Feature scaling is per record, so it costs no privacy: by default every row is scaled to unit
// L2 norm (‖x‖ = 1; all-zero rows stay zero). Statistics of the whole dataset (means, maxima)
// are never used: they would be a release of the private data the accountants do not cover.
// Images may instead be turned into ScatterNet features (feature_extraction.h): a fixed function
// of each image alone, so it costs no privacy either.
//
// Malformed input is refused with a ParseError naming the line (text formats) or byte offset
// (binary formats) and the reason; a header that claims more data than the file holds is
// refused before anything is allocated. Parsers never throw and never crash on any input.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace dpx::core::training {

using FeatureMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows that are images: height × width pixels, row-major, whose values as read lie in
// [0, maxValue] (1 for IDX files, already x/255; 16 for the embedded digits).
struct ImageShape {
  int height = 0;
  int width = 0;
  double maxValue = 1.0;
  bool operator==(const ImageShape&) const = default;
};

// Rows that are feature maps, channel-major (channel, row, column): ScatterNet's 81 × 7 × 7.
// (Outside Dataset: clang cannot default-construct a nested struct with member initialisers
// inside its enclosing class, which std::optional asks for there.)
struct FeatureMapShape {
  int channels = 0;
  int height = 0;
  int width = 0;
  bool operator==(const FeatureMapShape&) const = default;
};

struct Dataset {
  std::string name;
  FeatureMatrix features;            // n × d
  std::vector<std::int32_t> labels;  // n labels in [0, numClasses)
  int numClasses = 0;
  std::vector<std::string> classNames;  // numClasses names ("0", "1", … when the source has none)
  std::optional<ImageShape> image;      // set by the loaders of image sources
  using FeatureMapShape = training::FeatureMapShape;
  std::optional<FeatureMapShape> featureMap;
  // ‖x‖ ≤ rowNormBound for every row, whatever the data, because the preprocessing guarantees it
  // (1 after unit-norm or clip-norm scaling, √(channels·h·w) after a GroupNorm); unset when only
  // the data itself says how large its rows are (features as read).
  std::optional<double> rowNormBound;

  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
  int dimension() const { return static_cast<int>(features.cols()); }
  // Largest row norm (1 after unit-norm scaling): the R in the Lipschitz bound √2·√(R² + 1).
  double maxRowNorm() const;
};

enum class FeatureScaling {
  kUnitNorm,  // x / ‖x‖ (the default for raw features)
  kClipNorm,  // x / max(1, ‖x‖)
  kNone,      // as read (the user vouches for the range); the default after a GroupNorm
};
std::string_view featureScalingName(FeatureScaling scaling);  // "unit-norm" | "clip-norm" | "none"
std::optional<FeatureScaling> parseFeatureScaling(std::string_view text);

// What the model sees of each record: its values as read (then scaled), or the ScatterNet
// features of an image (Oyallon & Mallat 2015, as Tramèr & Boneh 2021 use them).
enum class FeatureKind { kRaw, kScatterNet };
std::string_view featureKindName(FeatureKind kind);  // "raw" | "scatternet"
std::optional<FeatureKind> parseFeatureKind(std::string_view text);
// Per-record scaling unless the caller chooses one: unit norm, for every kind of features. The
// convex analyses need bounded rows, and one scale keeps the knobs' meaning (η = 1/(2β) with
// β ≈ 1, λ, the clip norm L) the same for pixels and for ScatterNet. ScatterNet's GroupNorm already
// bounds its rows (‖x‖ < 63 for 81 × 7 × 7 features, nearly the same for every image): scaling
// "none" keeps them as Tramèr & Boneh train on them, where their learning rates mean what they say.
FeatureScaling defaultScaling(FeatureKind kind);

// Progress and cancellation of a feature extraction (ScatterNet on 70 000 images takes seconds).
struct FeatureExtractionControl {
  std::function<void(double)> progress;  // fraction done, from the extracting thread
  const std::atomic<bool>* cancel = nullptr;
};

struct LoadOptions {
  // CSV: the label column, 0-based; negative counts from the end (−1 = last, the default).
  int labelColumn = -1;
  // CSV: the label column by header name (overrides labelColumn; needs a header).
  std::optional<std::string> labelColumnName;
  // CSV: whether the first line is a header; unset = detect (a first line that does not parse
  // as numbers is a header; sklearn's "n_samples,n_features,class names…" line is recognised).
  std::optional<bool> header;
  // CSV: field delimiter; 0 = detect among ',', ';', '\t' and whitespace.
  char delimiter = 0;
  // Refuse inputs above these sizes instead of allocating for them.
  std::int64_t maxRecords = 10'000'000;
  std::int64_t maxFeatures = 100'000;
  std::int64_t maxBytes = std::int64_t{4} << 30;  // decompressed bytes
  FeatureKind features = FeatureKind::kRaw;
  std::optional<FeatureScaling> scaling;  // unset: defaultScaling(features)
  // Reports the extraction of features other than raw (not part of what is loaded).
  const FeatureExtractionControl* extraction = nullptr;

  FeatureScaling effectiveScaling() const { return scaling.value_or(defaultScaling(features)); }
};

// Constants of a training set that the analyses read, computed once per dataset.
struct DataBounds {
  double maxRowNorm = 0.0;      // R over the training and test rows
  double gramEigenvalue = 0.0;  // λ_max(X̃ᵀX̃/n), X̃ = [X | 1] (Ryffel et al. 2022, Lemma 5.1)
};
// R over both sets (their rowNormBound when both have one, else the largest row norm), λ_max of the
// training set's Gram matrix: the power iteration reads the training set up to sixty times, so
// this costs several passes over the data.
DataBounds dataBounds(const Dataset& train, const Dataset& test);

// A loaded source: a training set and, when the source defines one (MNIST-style directories),
// its test set.
struct LoadedData {
  Dataset train;
  std::optional<Dataset> test;
  std::string description;  // one line for people: source, records, features, classes, scaling
  // dataBounds(train, *test) when the source has a test set and its decoded copy in the dataset
  // cache holds them (computed when the entry was written): its split keeps both sets as they are.
  std::optional<DataBounds> bounds;
};

// `builtin:digits`, `builtin:breast-cancer`, `builtin:fashion-mnist`, or a path: a .csv/.tsv
// (or .csv.gz) file, a LIBSVM file (.svm, .libsvm, .txt with index:value pairs), an IDX pair
// given as "IMAGES,LABELS", or a directory holding the four MNIST-style IDX files.
Result<LoadedData> loadData(std::string_view source, const LoadOptions& options = {});

// Names of the built-in sources that are available on this machine.
std::vector<std::string> builtinSources();

// Parsers on bytes already in memory (the fuzzing entry points). `what` names the input in
// messages ("digits.csv").
Result<Dataset> parseCsv(std::string_view text, const LoadOptions& options, std::string_view what = "csv");
Result<Dataset> parseLibsvm(std::string_view text, const LoadOptions& options, std::string_view what = "libsvm");
Result<Dataset> parseIdx(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                         const LoadOptions& options, std::string_view what = "idx");
// gzip (or plain, passed through) → bytes, refusing output above maxBytes before allocating it.
Result<std::vector<std::uint8_t>> gunzip(std::span<const std::uint8_t> bytes, std::int64_t maxBytes);

// Applies the scaling in place (also used after parsing).
void scaleFeatures(FeatureMatrix& features, FeatureScaling scaling);

// A reproducible random split: `testFraction` of the records (stratified by class) go to test.
struct TrainTestSplit {
  Dataset train;
  Dataset test;
  std::optional<DataBounds> bounds;  // dataBounds(train, test), when the source's loader knew them
};
Result<TrainTestSplit> splitDataset(const Dataset& data, double testFraction, std::uint64_t seed);
// The source's own test set when it has one, else a split of its training set.
Result<TrainTestSplit> trainTestSplit(const LoadedData& data, double testFraction, std::uint64_t seed);
Result<TrainTestSplit> trainTestSplit(LoadedData&& data, double testFraction, std::uint64_t seed);

}  // namespace dpx::core::training
