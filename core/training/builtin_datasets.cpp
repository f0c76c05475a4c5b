// The built-in datasets (builtin_datasets.h). The embedded CSVs go through the same parser as
// user files, with the layout of each file fixed here rather than guessed, so that a change to
// the detection heuristics can never change what `builtin:digits` means.
#include "training/builtin_datasets.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "training/dataset_parsing.h"

namespace dpx::core::training::detail {
namespace {

// Fashion-MNIST's README (github.com/zalandoresearch/fashion-mnist), labels 0–9.
const std::vector<std::string> kFashionMnistClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                       "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

bool fashionMnistInstalled(const std::string& directory) {
  std::error_code error;
  for (const char* file : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"}) {
    if (!std::filesystem::is_regular_file(std::filesystem::path(directory) / file, error)) return false;
  }
  return true;
}

Result<LoadedData> loadEmbeddedCsv(std::span<const std::uint8_t> gzipped, const std::string& name, bool sklearnHeader,
                                   const LoadOptions& options) {
  auto bytes = gunzip(gzipped, options.maxBytes);
  if (!bytes) return bytes.status().withContext(name);
  LoadOptions csv = options;
  csv.header = sklearnHeader;  // digits.csv has no header; breast_cancer.csv has sklearn's
  csv.delimiter = ',';
  csv.labelColumn = -1;
  csv.labelColumnName.reset();
  LoadedData loaded;
  DPX_ASSIGN_OR_RETURN(
      loaded.train, parseCsv(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), csv, name));
  return loaded;
}

}  // namespace

std::vector<std::string> availableBuiltins() {
  std::vector<std::string> names = {"builtin:digits", "builtin:breast-cancer"};
  if (fashionMnistInstalled(kFashionMnistDirectory)) names.emplace_back("builtin:fashion-mnist");
  return names;
}

Result<LoadedData> loadBuiltin(std::string_view name, const LoadOptions& options) {
  if (name == "digits") {
    // scikit-learn's 8 × 8 digits, grey levels 0–16.
    DPX_ASSIGN_OR_RETURN(LoadedData digits, loadEmbeddedCsv(embeddedDigitsCsvGz(), "builtin:digits", false, options));
    if (digits.train.dimension() == 64) digits.train.image = ImageShape{8, 8, 16.0};
    return digits;
  }
  if (name == "breast-cancer")
    return loadEmbeddedCsv(embeddedBreastCancerCsvGz(), "builtin:breast-cancer", true, options);
  if (name == "fashion-mnist") return loadFashionMnist(kFashionMnistDirectory, options);
  return Status::invalidArgument("unknown built-in dataset 'builtin:" + std::string(name.substr(0, 40)) +
                                 "'; the built-in datasets are builtin:digits, builtin:breast-cancer and " +
                                 "builtin:fashion-mnist");
}

Result<LoadedData> loadFashionMnist(const std::string& directory, const LoadOptions& options) {
  if (!fashionMnistInstalled(directory)) {
    return Status::ioError("builtin:fashion-mnist: the Fashion-MNIST files are not in " + directory +
                           "; install the Debian package dataset-fashion-mnist (apt install dataset-fashion-mnist)");
  }
  DPX_ASSIGN_OR_RETURN(auto loaded, loadIdxDirectory(directory, options, "builtin:fashion-mnist"));
  if (loaded.train.numClasses != static_cast<int>(kFashionMnistClasses.size())) {
    return Status::parseError("builtin:fashion-mnist: " + std::to_string(loaded.train.numClasses) + " classes in " +
                              directory + ", expected 10");
  }
  loaded.train.classNames = kFashionMnistClasses;
  if (loaded.test) loaded.test->classNames = kFashionMnistClasses;
  return loaded;
}

}  // namespace dpx::core::training::detail
