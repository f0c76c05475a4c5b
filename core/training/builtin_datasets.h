// The built-in sources of loadData (dataset.h): `builtin:digits` and `builtin:breast-cancer`
// are compiled into the binary (gzipped CSV bytes generated from resources/datasets/ by
// training/datasets.cmake), so the app trains on real data with no file at hand;
// `builtin:fashion-mnist` is read from the Debian package dataset-fashion-mnist when installed,
// since its 30 MB are too large to embed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "training/dataset.h"

namespace dpx::core::training::detail {

inline constexpr const char* kFashionMnistDirectory = "/usr/share/datasets/fashion-mnist";

// The embedded files, byte for byte (defined in the generated sources).
std::span<const std::uint8_t> embeddedDigitsCsvGz();
std::span<const std::uint8_t> embeddedBreastCancerCsvGz();

// "builtin:digits", "builtin:breast-cancer" and, when its files are installed,
// "builtin:fashion-mnist".
std::vector<std::string> availableBuiltins();

// `name` without the "builtin:" prefix.
Result<LoadedData> loadBuiltin(std::string_view name, const LoadOptions& options);

// Fashion-MNIST from `directory` (kFashionMnistDirectory for the built-in source), with its
// class names; a missing directory says which Debian package provides it.
Result<LoadedData> loadFashionMnist(const std::string& directory, const LoadOptions& options);

}  // namespace dpx::core::training::detail
