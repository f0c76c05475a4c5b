// Decoded data sets kept on disk between runs: inflating and parsing Fashion-MNIST's gzipped IDX
// files takes about half a second, reading back its decoded floats a few tens of milliseconds.
//
// An entry is one file under the user's cache directory ($XDG_CACHE_HOME/dpx-explorer/datasets,
// else ~/.cache/dpx-explorer/datasets), named after a hash of its key. The key is text that
// names everything the decoded data depends on — the format version, the loader, the canonical
// path, size and modification time of every source file, and the load options — and it is
// stored whole in the entry and compared on read, so a hash collision cannot hand back another
// source's data. The entry ends with a checksum of everything before it: a truncated, corrupt or
// foreign file is ignored (and overwritten by the next load), never trusted. Entries are written
// to a temporary file and renamed into place, so a reader sees a whole entry or none, even with
// several processes loading at once.
//
// An entry of a source with its own test set also holds the split's DataBounds (the largest row
// norm and the power iteration's eigenvalue), computed when it was written: the key then also
// names how they were computed (code version, compiler, SIMD width), so a read returns exactly
// what a fresh computation would.
//
// The cache only saves time: every failure to read or write it falls back to decoding the source.
// DPX_NO_DATASET_CACHE=1 in the environment turns it off. The directory is kept under 4 GiB,
// least recently used entries first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "training/dataset.h"

namespace dpx::core::training::detail {

// Where entries live, or nothing when neither XDG_CACHE_HOME nor HOME is set, or the cache is
// turned off.
std::optional<std::filesystem::path> datasetCacheDirectory();

// The key of a decoded source: `loader` names the decoding ("idx-directory"), `files` are the
// source files it reads. Nothing when a file cannot be stat'ed (the load itself will say why).
std::optional<std::string> datasetCacheKey(const std::string& loader, const std::vector<std::string>& files,
                                           const LoadOptions& options);

// The entry's file for a key, in `directory`.
std::filesystem::path datasetCacheFile(const std::filesystem::path& directory, const std::string& key);

// The data stored under `key` in `file`, or nothing when the file is missing, truncated, corrupt,
// written for another key or by another format version, or beyond the options' limits.
std::optional<LoadedData> readCachedDataset(const std::filesystem::path& file, const std::string& key,
                                            const LoadOptions& options);

// Stores `data` under `key` in `file` (temporary file, then rename), then trims the directory to
// kDatasetCacheBudgetBytes.
Status writeCachedDataset(const std::filesystem::path& file, const std::string& key, const LoadedData& data);

// The cache's size limit: a few sources' decoded data and ScatterNet features (1.1 GB for
// Fashion-MNIST's) fit; entries of older format versions and sources no longer used age out.
inline constexpr std::uintmax_t kDatasetCacheBudgetBytes = std::uintmax_t{4} << 30;

// Deletes the least recently used entries of `directory` (by modification time, which a read
// refreshes) until the entries total at most budgetBytes; never `keep`.
void trimDatasetCache(const std::filesystem::path& directory, std::uintmax_t budgetBytes,
                      const std::filesystem::path& keep);

}  // namespace dpx::core::training::detail
