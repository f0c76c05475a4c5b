// Internals shared by the dataset parsers (csv_loader.cpp, libsvm_loader.cpp, idx_loader.cpp,
// dataset_loaders.cpp, builtin_datasets.cpp): number parsing on std::from_chars, label-to-class
// mapping, quoting of untrusted text in messages and the checks every parser ends with, so that
// all formats refuse bad input the same way. Not part of the public API (dataset.h).
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "training/dataset.h"

namespace dpx::core::training::detail {

// More distinct labels than this almost always means the wrong column was taken as the label
// (a continuous target or an id); refusing early also bounds the class table on fuzzed input.
inline constexpr int kMaxClasses = 10'000;

// Untrusted text for a message: at most 40 bytes, non-printable bytes as \xNN, in quotes.
std::string quoteForMessage(std::string_view text);

std::string_view trimBlanks(std::string_view text);

enum class NumberStatus { kOk, kEmpty, kNotANumber, kNotFinite, kOutOfRange };

// Parses a whole field as a double (blanks around it and a leading '+' allowed). Infinite and
// NaN values are refused: they would poison every norm and gradient downstream. Values beyond
// the float range are kOutOfRange, since features are stored as float.
NumberStatus parseNumber(std::string_view text, double& value);

// "'abc' is not a number", "'nan' is not a finite number", …
std::string describeNumberError(NumberStatus status, std::string_view text);

// Maps label strings to classes 0..C−1: in numeric order when every label is a number (so
// "-1" < "+1" and "9" < "10", with "1" and "1.0" one class), else in byte order. Class names are
// the labels as first written in the file.
class LabelMapper {
 public:
  LabelMapper() = default;
  LabelMapper(const LabelMapper&) = delete;  // m_lastLabel points into m_ids
  LabelMapper& operator=(const LabelMapper&) = delete;

  // Returns false (and maps nothing) when `label` would be distinct label kMaxClasses + 1.
  bool add(std::string_view label, std::int32_t& provisionalId);
  std::size_t distinct() const { return m_names.size(); }
  // Rewrites provisional ids into final classes and returns the class names.
  std::vector<std::string> finish(std::vector<std::int32_t>& labels) const;

 private:
  std::map<std::string, std::int32_t, std::less<>> m_ids;
  std::vector<std::string> m_names;  // by provisional id
  std::string_view m_lastLabel;      // the previous label (a view into m_ids' key)
  std::int32_t m_lastId = -1;
};

// Names "0", "1", … for sources whose labels are already class numbers.
std::vector<std::string> numberedClassNames(int numClasses);

// The checks every parser ends with (at least one record, two classes, consistent sizes) and the
// scaling of options; `what` prefixes the messages.
Result<Dataset> finishDataset(std::string_view what, FeatureMatrix features, std::vector<std::int32_t> labels,
                              int numClasses, std::vector<std::string> classNames, FeatureScaling scaling);

Status outOfMemory(std::string_view what);

// Runs `body`, turning any exception into a Status so that none leaves a public function.
template <typename T, typename Body>
Result<T> guarded(std::string_view what, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (const std::bad_alloc&) {
    return outOfMemory(what);
  } catch (const std::exception& e) {
    return Status::invalidArgument(std::string(what) + ": " + e.what());
  } catch (...) {
    return Status::invalidArgument(std::string(what) + ": unexpected failure");
  }
}

// a·b, or false when it does not fit in 64 bits.
inline bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& product) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  product = a * b;
  return true;
}

// Splits text into lines ending in \n, \r\n or \r (terminators not included), counting from 1.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : m_text(text) {}
  bool next(std::string_view& line);
  std::int64_t lineNumber() const { return m_lineNumber; }

 private:
  std::string_view m_text;
  std::size_t m_position = 0;
  std::int64_t m_lineNumber = 0;
};

// The whole file, refusing files above maxBytes; ioError naming the path otherwise.
Result<std::vector<std::uint8_t>> readFile(const std::string& path, std::int64_t maxBytes);

// Train (and test, when present) from a directory holding MNIST-style IDX files
// (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-…); `name` names the sets.
Result<LoadedData> loadIdxDirectory(const std::string& directory, const LoadOptions& options, const std::string& name);

// True when the directory holds at least the training pair of MNIST-style files.
bool hasIdxTrainingFiles(const std::string& directory);

// "1797 records, 64 features, 10 classes, rows scaled to unit norm".
std::string describeData(const LoadedData& data, const LoadOptions& options);

}  // namespace dpx::core::training::detail
