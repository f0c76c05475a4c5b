// loadData and the operations on loaded datasets (dataset.h): choosing a parser for a source,
// per-record feature scaling, and the stratified train/test split. The split draws from
// std::mt19937_64 with a hand-written bounded draw and Fisher–Yates shuffle, because
// std::shuffle and std::uniform_int_distribution differ between standard libraries and a seed
// must give the same split everywhere.
#include <tbb/blocked_range.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "common/format.h"
#include "common/parallel.h"
#include "training/builtin_datasets.h"
#include "training/dataset.h"
#include "training/dataset_file_cache.h"
#include "training/dataset_parsing.h"
#include "training/feature_extraction.h"
#include "training/softmax_regression.h"

namespace dpx::core::training {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBuiltinPrefix = "builtin:";
// Below this many elements the cost of starting TBB tasks exceeds the work.
constexpr Eigen::Index kParallelScalingElements = Eigen::Index{1} << 20;

// Uniform in [0, bound) by rejection, so that no value is favoured by the modulo.
std::uint64_t uniformBelow(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t draw = 0;
  do {
    draw = engine();
  } while (draw >= limit);
  return draw % bound;
}

void shuffle(std::vector<std::int64_t>& items, std::mt19937_64& engine) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniformBelow(engine, i));
    std::swap(items[i - 1], items[j]);
  }
}

Dataset subset(const Dataset& data, const std::vector<std::int64_t>& rows, std::string name) {
  Dataset out;
  out.name = std::move(name);
  out.features.resize(static_cast<Eigen::Index>(rows.size()), data.features.cols());
  out.labels.reserve(rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    out.features.row(static_cast<Eigen::Index>(k)) = data.features.row(rows[k]);
    out.labels.push_back(data.labels[static_cast<std::size_t>(rows[k])]);
  }
  out.numClasses = data.numClasses;
  out.classNames = data.classNames;
  out.image = data.image;
  out.featureMap = data.featureMap;
  out.rowNormBound = data.rowNormBound;  // a bound on every row is one on any subset's
  return out;
}

Status checkSplittable(const Dataset& data, double testFraction) {
  if (!(testFraction > 0.0 && testFraction < 1.0)) {
    return Status::invalidArgument("test fraction " + formatNumber(testFraction) + " is outside (0, 1): " + data.name +
                                   " has no test set of its own, so a share of it must be held out");
  }
  const std::int64_t n = data.size();
  if (n < 2)
    return Status::invalidArgument(data.name + ": a split needs at least 2 records, the dataset has " +
                                   std::to_string(n));
  if (data.features.rows() != n || data.numClasses < 1) {
    return Status::invalidArgument(data.name + ": inconsistent dataset (" + std::to_string(data.features.rows()) +
                                   " feature rows, " + std::to_string(n) + " labels)");
  }
  return Status::ok();
}

// The rows of each class, in file order.
Result<std::vector<std::vector<std::int64_t>>> rowsByClass(const Dataset& data) {
  std::vector<std::vector<std::int64_t>> byClass(static_cast<std::size_t>(data.numClasses));
  for (std::int64_t i = 0; i < data.size(); ++i) {
    const std::int32_t label = data.labels[static_cast<std::size_t>(i)];
    if (label < 0 || label >= data.numClasses) {
      return Status::invalidArgument(data.name + ": record " + std::to_string(i) + " has label " +
                                     std::to_string(label) + ", outside [0, " + std::to_string(data.numClasses) + ")");
    }
    byClass[static_cast<std::size_t>(label)].push_back(i);
  }
  return byClass;
}

// Test records per class: each class gives ⌊f·n_c⌋ records, and the rounding left over goes to
// the classes with the largest remainders (Hamilton's method), so the test set has round(f·n)
// records and every class's share differs from f·n_c by less than one record.
std::vector<std::int64_t> testShares(const std::vector<std::vector<std::int64_t>>& byClass, double testFraction,
                                     std::int64_t n) {
  const std::int64_t target = std::clamp<std::int64_t>(std::llround(testFraction * static_cast<double>(n)), 1, n - 1);
  std::vector<std::int64_t> take(byClass.size(), 0);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::int64_t assigned = 0;
  for (std::size_t c = 0; c < byClass.size(); ++c) {
    const double exact = testFraction * static_cast<double>(byClass[c].size());
    take[c] = static_cast<std::int64_t>(std::floor(exact));
    assigned += take[c];
    remainders.emplace_back(exact - std::floor(exact), c);
  }
  std::sort(remainders.begin(), remainders.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (std::int64_t left = target - assigned; left > 0;) {
    bool gave = false;
    for (const auto& [fraction, c] : remainders) {
      if (left == 0) break;
      if (take[c] < static_cast<std::int64_t>(byClass[c].size())) {
        ++take[c];
        --left;
        gave = true;
      }
    }
    if (!gave) break;
  }
  return take;
}

Result<TrainTestSplit> split(const Dataset& data, double testFraction, std::uint64_t seed) {
  DPX_RETURN_IF_ERROR(checkSplittable(data, testFraction));
  DPX_ASSIGN_OR_RETURN(std::vector<std::vector<std::int64_t>> byClass, rowsByClass(data));
  const std::vector<std::int64_t> take = testShares(byClass, testFraction, data.size());
  std::mt19937_64 engine(seed);
  std::vector<std::int64_t> trainRows;
  std::vector<std::int64_t> testRows;
  for (std::size_t c = 0; c < byClass.size(); ++c) {
    shuffle(byClass[c], engine);
    const auto cut = static_cast<std::size_t>(take[c]);
    testRows.insert(testRows.end(), byClass[c].begin(), byClass[c].begin() + static_cast<std::ptrdiff_t>(cut));
    trainRows.insert(trainRows.end(), byClass[c].begin() + static_cast<std::ptrdiff_t>(cut), byClass[c].end());
  }
  // File order within each set: the trainer samples its own batches, and sorted rows make a
  // split easy to compare by eye.
  std::sort(trainRows.begin(), trainRows.end());
  std::sort(testRows.begin(), testRows.end());
  return TrainTestSplit{subset(data, trainRows, data.name + " (train)"), subset(data, testRows, data.name + " (test)"),
                        std::nullopt};
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool looksLikeIdx(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 4 && bytes[0] == 0 && bytes[1] == 0 && bytes[2] >= 0x08 && bytes[2] <= 0x0E && bytes[3] >= 1 &&
         bytes[3] <= 4;
}

// LIBSVM when the first line with two tokens has index:value after its label.
bool looksLikeLibsvm(std::string_view text) {
  detail::LineCursor cursor(text);
  std::string_view line;
  for (int looked = 0; looked < 20 && cursor.next(line); ++looked) {
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = detail::trimBlanks(line);
    if (line.empty()) continue;
    const auto blank = line.find_first_of(" \t");
    if (blank == std::string_view::npos) continue;
    const std::string_view label = line.substr(0, blank);
    const std::string_view rest = detail::trimBlanks(line.substr(blank));
    const std::string_view second = rest.substr(0, rest.find_first_of(" \t"));
    return label.find_first_of(":,;") == std::string_view::npos && line.find(',') == std::string_view::npos &&
           second.find(':') != std::string_view::npos;
  }
  return false;
}

Result<std::vector<std::uint8_t>> readMaybeGzipped(const std::string& path, std::int64_t maxBytes) {
  DPX_ASSIGN_OR_RETURN(auto bytes, detail::readFile(path, maxBytes));
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
    auto inflated = gunzip(bytes, maxBytes);
    if (!inflated) return inflated.status().withContext(path);
    return inflated;
  }
  return bytes;
}

std::string_view asText(const std::vector<std::uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

Result<LoadedData> loadFile(const std::string& path, const LoadOptions& options) {
  std::string name = lowercase(fs::path(path).filename().string());
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  const auto dot = name.rfind('.');
  const std::string extension = dot == std::string::npos ? std::string() : name.substr(dot + 1);

  DPX_ASSIGN_OR_RETURN(const auto bytes, readMaybeGzipped(path, options.maxBytes));
  if (looksLikeIdx(bytes) && extension != "csv" && extension != "tsv") {
    return Status::invalidArgument("'" + path + "' is an IDX file: give its labels too, as 'IMAGES,LABELS', or " +
                                   "the directory holding the MNIST-style files");
  }
  const std::string_view text = asText(bytes);
  // .csv/.tsv and .svm/.libsvm/.svmlight say what they hold; anything else (.txt, .dat, none) is
  // sniffed, since LIBSVM files are as often called .txt as CSV files are.
  const bool libsvm = extension == "svm" || extension == "libsvm" || extension == "svmlight" ||
                      (extension != "csv" && extension != "tsv" && looksLikeLibsvm(text));
  LoadOptions csv = options;
  if (extension == "tsv" && csv.delimiter == 0) csv.delimiter = '\t';
  LoadedData loaded;
  DPX_ASSIGN_OR_RETURN(loaded.train, libsvm ? parseLibsvm(text, options, path) : parseCsv(text, csv, path));
  return loaded;
}

Result<LoadedData> loadIdxPair(const std::string& source, const LoadOptions& options) {
  const auto comma = source.find(',');
  const std::string imagesPath(detail::trimBlanks(std::string_view(source).substr(0, comma)));
  const std::string labelsPath(detail::trimBlanks(std::string_view(source).substr(comma + 1)));
  // Raw bytes: parseIdx inflates gzip itself, checking the trailer before it allocates.
  DPX_ASSIGN_OR_RETURN(const auto images, detail::readFile(imagesPath, options.maxBytes));
  DPX_ASSIGN_OR_RETURN(const auto labels, detail::readFile(labelsPath, options.maxBytes));
  LoadedData loaded;
  DPX_ASSIGN_OR_RETURN(loaded.train, parseIdx(images, labels, options, source));
  return loaded;
}

// A directory of MNIST-style IDX files: the loader that caches decoded data (and features) on disk.
bool isIdxDirectorySource(std::string_view source) {
  if (source == "builtin:fashion-mnist") return true;
  std::error_code error;
  return !source.starts_with(kBuiltinPrefix) && fs::is_directory(std::string(source), error);
}

Result<LoadedData> loadSource(std::string_view source, const LoadOptions& options) {
  if (options.features != FeatureKind::kRaw && !isIdxDirectorySource(source)) {
    // Features from the pixels as read; IDX directories do this themselves, with a disk cache.
    LoadOptions pixelOptions = options;
    pixelOptions.features = FeatureKind::kRaw;
    pixelOptions.scaling = FeatureScaling::kNone;
    DPX_ASSIGN_OR_RETURN(LoadedData pixels, loadSource(source, pixelOptions));
    return extractFeatures(std::move(pixels), options.features, options.effectiveScaling(), options.extraction);
  }
  if (source.starts_with(kBuiltinPrefix)) return detail::loadBuiltin(source.substr(kBuiltinPrefix.size()), options);
  const std::string path(source);
  if (path.empty()) return Status::invalidArgument("no data source given");
  std::error_code error;
  if (fs::is_directory(path, error)) {
    if (!detail::hasIdxTrainingFiles(path)) {
      return Status::ioError("directory '" + path + "' holds no train-images-idx3-ubyte[.gz] and " +
                             "train-labels-idx1-ubyte[.gz] (MNIST-style IDX files)");
    }
    return detail::loadIdxDirectory(path, options, path);
  }
  if (!fs::exists(path, error) && path.find(',') != std::string::npos) return loadIdxPair(path, options);
  return loadFile(path, options);
}

}  // namespace

double Dataset::maxRowNorm() const {
  constexpr Eigen::Index kBlock = 4096;
  const Eigen::Index rows = features.rows();
  const Eigen::Index blocks = (rows + kBlock - 1) / kBlock;
  // One maximum per block, combined afterwards: a maximum is exact, so the result is the same
  // whatever the threads.
  std::vector<double> largest(static_cast<std::size_t>(blocks), 0.0);
  parallelFor(Eigen::Index{0}, blocks, [&](Eigen::Index b) {
    double& top = largest[static_cast<std::size_t>(b)];
    for (Eigen::Index r = b * kBlock; r < std::min(rows, (b + 1) * kBlock); ++r)
      top = std::max(top, std::sqrt(features.row(r).cast<double>().squaredNorm()));
  });
  return largest.empty() ? 0.0 : *std::max_element(largest.begin(), largest.end());
}

std::string_view featureScalingName(FeatureScaling scaling) {
  switch (scaling) {
    case FeatureScaling::kUnitNorm:
      return "unit-norm";
    case FeatureScaling::kClipNorm:
      return "clip-norm";
    case FeatureScaling::kNone:
      return "none";
  }
  return "unit-norm";
}

std::optional<FeatureScaling> parseFeatureScaling(std::string_view text) {
  for (FeatureScaling s : {FeatureScaling::kUnitNorm, FeatureScaling::kClipNorm, FeatureScaling::kNone}) {
    if (featureScalingName(s) == text) return s;
  }
  return std::nullopt;
}

std::string_view featureKindName(FeatureKind kind) { return kind == FeatureKind::kScatterNet ? "scatternet" : "raw"; }

std::optional<FeatureKind> parseFeatureKind(std::string_view text) {
  if (text == "raw") return FeatureKind::kRaw;
  if (text == "scatternet") return FeatureKind::kScatterNet;
  return std::nullopt;
}

FeatureScaling defaultScaling(FeatureKind) { return FeatureScaling::kUnitNorm; }

DataBounds dataBounds(const Dataset& train, const Dataset& test) {
  DataBounds b;
  // The preprocessing's own bound where both sets have one: it holds whatever the data, so the
  // analyses that read R do not read the data.
  if (train.rowNormBound && (test.size() == 0 || test.rowNormBound)) {
    b.maxRowNorm = std::max(*train.rowNormBound, test.size() > 0 ? *test.rowNormBound : 0.0);
  } else {
    b.maxRowNorm = std::max(train.maxRowNorm(), test.size() > 0 ? test.maxRowNorm() : 0.0);
  }
  b.gramEigenvalue = largestEigenvalueOfGram(train);
  return b;
}

void scaleFeatures(FeatureMatrix& features, FeatureScaling scaling) {
  if (scaling == FeatureScaling::kNone) return;
  const auto scaleRows = [&features, scaling](Eigen::Index begin, Eigen::Index end) {
    for (Eigen::Index r = begin; r < end; ++r) {
      auto row = features.row(r);
      // The norm in double and one rounding per element keep ‖x‖ within 1e-7 of 1.
      const double norm = std::sqrt(row.cast<double>().squaredNorm());
      if (norm == 0.0 || (scaling == FeatureScaling::kClipNorm && norm <= 1.0)) continue;
      row = (row.cast<double>() * (1.0 / norm)).cast<float>();
    }
  };
  const Eigen::Index rows = features.rows();
  if (features.size() < kParallelScalingElements) {
    scaleRows(0, rows);
    return;
  }
  try {
    // Rows are independent, so the result does not depend on how TBB splits them.
    parallelFor(tbb::blocked_range<Eigen::Index>(0, rows, 256),
                [&scaleRows](const tbb::blocked_range<Eigen::Index>& range) { scaleRows(range.begin(), range.end()); });
  } catch (...) {
    // TBB could not start its tasks; both scalings are idempotent, so rows already done are safe
    // to scale again.
    scaleRows(0, rows);
  }
}

Result<TrainTestSplit> splitDataset(const Dataset& data, double testFraction, std::uint64_t seed) {
  return detail::guarded<TrainTestSplit>(data.name, [&] { return split(data, testFraction, seed); });
}

Result<TrainTestSplit> trainTestSplit(const LoadedData& data, double testFraction, std::uint64_t seed) {
  return detail::guarded<TrainTestSplit>(data.train.name, [&]() -> Result<TrainTestSplit> {
    if (data.test) return TrainTestSplit{data.train, *data.test, data.bounds};
    return split(data.train, testFraction, seed);
  });
}

Result<TrainTestSplit> trainTestSplit(LoadedData&& data, double testFraction, std::uint64_t seed) {
  // A source with its own test set hands its matrices over instead of copying them (Fashion-MNIST
  // would otherwise hold two copies of 220 MB during training).
  if (data.test) return TrainTestSplit{std::move(data.train), std::move(*data.test), data.bounds};
  return trainTestSplit(static_cast<const LoadedData&>(data), testFraction, seed);
}

Result<LoadedData> loadData(std::string_view source, const LoadOptions& options) {
  return detail::guarded<LoadedData>(source, [&]() -> Result<LoadedData> {
    DPX_ASSIGN_OR_RETURN(auto loaded, loadSource(source, options));
    loaded.description = std::string(source) + " — " + detail::describeData(loaded, options);
    return loaded;
  });
}

std::vector<std::string> builtinSources() {
  try {
    return detail::availableBuiltins();
  } catch (...) {
    return {};
  }
}

namespace detail {

namespace {

// The names MNIST-style files go by: the original hyphenated ones, and the dotted ones some
// unpackers produce; each may be gzipped.
std::optional<std::string> findIdxFile(const fs::path& directory, std::string_view set, std::string_view kind) {
  for (const char* separator : {"-", "."}) {
    for (const char* suffix : {"", ".gz"}) {
      const fs::path candidate = directory / (std::string(set) + "-" + std::string(kind) + separator +
                                              (kind == "images" ? "idx3-ubyte" : "idx1-ubyte") + suffix);
      std::error_code error;
      if (fs::is_regular_file(candidate, error)) return candidate.string();
    }
  }
  return std::nullopt;
}

Result<Dataset> loadIdxSet(const std::string& images, const std::string& labels, const LoadOptions& options,
                           const std::string& what) {
  DPX_ASSIGN_OR_RETURN(const auto imageBytes, readFile(images, options.maxBytes));
  DPX_ASSIGN_OR_RETURN(const auto labelBytes, readFile(labels, options.maxBytes));
  return parseIdx(imageBytes, labelBytes, options, what);
}

}  // namespace

bool hasIdxTrainingFiles(const std::string& directory) {
  return findIdxFile(directory, "train", "images") && findIdxFile(directory, "train", "labels");
}

Result<LoadedData> loadIdxDirectory(const std::string& directory, const LoadOptions& options, const std::string& name) {
  const auto trainImages = findIdxFile(directory, "train", "images");
  const auto trainLabels = findIdxFile(directory, "train", "labels");
  if (!trainImages || !trainLabels) {
    return Status::ioError("directory '" + directory + "' holds no train-images-idx3-ubyte[.gz] and " +
                           "train-labels-idx1-ubyte[.gz]");
  }
  const auto testImages = findIdxFile(directory, "t10k", "images");
  const auto testLabels = findIdxFile(directory, "t10k", "labels");
  if (testImages.has_value() != testLabels.has_value()) {
    return Status::ioError("directory '" + directory + "' holds t10k " + (testImages ? "images" : "labels") +
                           " without their " + (testImages ? "labels" : "images"));
  }
  if (options.features != FeatureKind::kRaw && options.effectiveScaling() != FeatureScaling::kNone) {
    // Features are cached as extracted (one entry for every scaling): scaled here, per row.
    LoadOptions unscaled = options;
    unscaled.scaling = FeatureScaling::kNone;
    DPX_ASSIGN_OR_RETURN(LoadedData features, loadIdxDirectory(directory, unscaled, name));
    return extractFeatures(std::move(features), FeatureKind::kRaw, options.effectiveScaling());
  }
  std::vector<std::string> files = {*trainImages, *trainLabels};
  if (testImages) files.insert(files.end(), {*testImages, *testLabels});
  const std::optional<std::filesystem::path> cacheDirectory = datasetCacheDirectory();
  const std::optional<std::string> cacheKey =
      cacheDirectory ? datasetCacheKey("idx-directory", files, options) : std::nullopt;
  const std::optional<std::filesystem::path> cacheFile =
      cacheKey ? std::optional(datasetCacheFile(*cacheDirectory, *cacheKey)) : std::nullopt;
  if (cacheFile) {
    if (std::optional<LoadedData> cached = readCachedDataset(*cacheFile, *cacheKey, options)) {
      cached->train.name = name;
      if (cached->test) cached->test->name = name + " (test)";
      return std::move(*cached);
    }
  }
  if (options.features != FeatureKind::kRaw) {
    // The features of the pixels as read (themselves from the cache when decoded before).
    LoadOptions pixelOptions = options;
    pixelOptions.features = FeatureKind::kRaw;
    pixelOptions.scaling = FeatureScaling::kNone;
    DPX_ASSIGN_OR_RETURN(LoadedData pixels, loadIdxDirectory(directory, pixelOptions, name));
    DPX_ASSIGN_OR_RETURN(LoadedData features, extractFeatures(std::move(pixels), options.features,
                                                              options.effectiveScaling(), options.extraction));
    if (cacheFile) {
      if (features.test) features.bounds = dataBounds(features.train, *features.test);
      (void)writeCachedDataset(*cacheFile, *cacheKey, features);
    }
    return features;
  }
  LoadedData loaded;
  DPX_ASSIGN_OR_RETURN(loaded.train, loadIdxSet(*trainImages, *trainLabels, options, directory + " (train)"));
  loaded.train.name = name;
  if (testImages) {
    DPX_ASSIGN_OR_RETURN(loaded.test, loadIdxSet(*testImages, *testLabels, options, directory + " (test)"));
    loaded.test->name = name + " (test)";
    if (loaded.test->dimension() != loaded.train.dimension()) {
      return Status::parseError(directory + ": test images have " + std::to_string(loaded.test->dimension()) +
                                " pixels, training images " + std::to_string(loaded.train.dimension()));
    }
    // Classes are numbered by the largest label of each file; both sets must share them.
    const int classes = std::max(loaded.train.numClasses, loaded.test->numClasses);
    loaded.train.numClasses = loaded.test->numClasses = classes;
    loaded.train.classNames = loaded.test->classNames = numberedClassNames(classes);
  }
  if (cacheFile) {
    // Stored with the data, so that no later run makes the power iteration's passes again; the
    // loader computes them for a run that would compute them anyway.
    if (loaded.test) loaded.bounds = dataBounds(loaded.train, *loaded.test);
    // A cache that cannot be written (read-only home, full disk) only costs the next run time.
    (void)writeCachedDataset(*cacheFile, *cacheKey, loaded);
  }
  return loaded;
}

std::string describeData(const LoadedData& data, const LoadOptions& options) {
  std::string text = data.test ? std::to_string(data.train.size()) + " training + " +
                                     std::to_string(data.test->size()) + " test records"
                               : std::to_string(data.train.size()) + " records";
  text += ", " + (options.features == FeatureKind::kRaw ? std::to_string(data.train.dimension()) + " features"
                                                        : describeFeatures(options.features, data.train.dimension()));
  text += ", " + std::to_string(data.train.numClasses) + " classes, ";
  const FeatureScaling scaling = options.effectiveScaling();
  if (scaling == FeatureScaling::kNone && data.train.rowNormBound) {
    return text + "rows of norm < " + formatNumber(*data.train.rowNormBound, 4) + " (GroupNorm, not scaled)";
  }
  switch (scaling) {
    case FeatureScaling::kUnitNorm:
      text += "rows scaled to unit norm";
      break;
    case FeatureScaling::kClipNorm:
      text += "rows clipped to norm at most 1";
      break;
    case FeatureScaling::kNone:
      text += "features as read (not scaled)";
      break;
  }
  return text;
}

}  // namespace detail

}  // namespace dpx::core::training
