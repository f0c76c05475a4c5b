#include "training/dataset_file_cache.h"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>

#include "training/dataset_parsing.h"
#include "training/feature_extraction.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace dpx::core::training::detail {
namespace fs = std::filesystem;

namespace {

// Bumped whenever the layout below or the meaning of a decoded value changes: entries of other
// versions are then ignored, never misread.
constexpr std::uint32_t kFormatVersion = 3;
constexpr char kMagic[8] = {'D', 'P', 'X', 'D', 'A', 'T', 'A', '\n'};
// Written in native order and compared on read: an entry from a machine of the other byte order
// is ignored.
constexpr std::uint32_t kByteOrderMark = 0x01020304u;
// Reads and writes of the feature matrix go in pieces this large, each checksummed while it is
// still in cache.
constexpr std::size_t kPieceBytes = std::size_t{8} << 20;

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// A fast 64-bit checksum (four independent multiply–rotate lanes, as in xxHash64's inner loop)
// to tell a damaged entry from a whole one; it runs at memory speed so that validating an entry
// costs little next to reading it. Not a defence against a forger: the cache directory is the
// user's own.
class Checksum {
 public:
  void update(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    m_total += bytes;
    if (m_pendingSize > 0) {
      const std::size_t take = std::min(bytes, kBlock - m_pendingSize);
      std::memcpy(m_pending + m_pendingSize, p, take);
      m_pendingSize += take;
      p += take;
      bytes -= take;
      if (m_pendingSize < kBlock) return;
      block(m_pending);
      m_pendingSize = 0;
    }
    for (; bytes >= kBlock; bytes -= kBlock, p += kBlock) block(p);
    std::memcpy(m_pending, p, bytes);
    m_pendingSize = bytes;
  }

  std::uint64_t value() const {
    std::uint64_t h = m_total * kPrime1;
    for (const std::uint64_t lane : m_lanes) h = rotl(h ^ round(0, lane), 27) * kPrime1 + kPrime2;
    for (std::size_t i = 0; i < m_pendingSize; ++i) h = rotl(h ^ (m_pending[i] * kPrime2), 11) * kPrime1;
    h ^= h >> 33;
    h *= kPrime2;
    h ^= h >> 29;
    return h;
  }

 private:
  static constexpr std::size_t kBlock = 32;
  static constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
  static constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;

  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t round(std::uint64_t lane, std::uint64_t input) {
    return rotl(lane + input * kPrime2, 31) * kPrime1;
  }
  void block(const unsigned char* p) {
    for (int i = 0; i < 4; ++i) {
      std::uint64_t word;
      std::memcpy(&word, p + 8 * i, 8);
      m_lanes[i] = round(m_lanes[i], word);
    }
  }

  std::uint64_t m_lanes[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  unsigned char m_pending[kBlock] = {};
  std::size_t m_pendingSize = 0;
  std::uint64_t m_total = 0;
};

class Writer {
 public:
  explicit Writer(std::FILE* file) : m_file(file) {}
  void bytes(const void* data, std::size_t size) {
    if (!m_ok || size == 0) return;
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t done = 0; done < size;) {
      const std::size_t piece = std::min(kPieceBytes, size - done);
      m_checksum.update(p + done, piece);
      m_ok = std::fwrite(p + done, 1, piece, m_file) == piece;
      if (!m_ok) return;
      done += piece;
    }
  }
  template <typename T>
  void value(T v) {
    bytes(&v, sizeof v);
  }
  void text(const std::string& s) {
    value<std::uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void trailer() {
    const std::uint64_t sum = m_checksum.value();
    if (m_ok) m_ok = std::fwrite(&sum, 1, sizeof sum, m_file) == sizeof sum;
  }
  bool ok() const { return m_ok; }

 private:
  std::FILE* m_file;
  Checksum m_checksum;
  bool m_ok = true;
};

// Reads an entry front to back; every size is checked against the bytes the file has left
// before anything is allocated for it, so a damaged size field fails instead of allocating.
class Reader {
 public:
  Reader(std::FILE* file, std::uint64_t size) : m_file(file), m_left(size) {}
  bool bytes(void* data, std::uint64_t size) {
    if (!m_ok || size > m_left) return m_ok = false;
    auto* p = static_cast<unsigned char*>(data);
    for (std::uint64_t done = 0; done < size;) {
      const auto piece = static_cast<std::size_t>(std::min<std::uint64_t>(kPieceBytes, size - done));
      if (std::fread(p + done, 1, piece, m_file) != piece) return m_ok = false;
      m_checksum.update(p + done, piece);
      done += piece;
    }
    m_left -= size;
    return true;
  }
  template <typename T>
  bool value(T& v) {
    return bytes(&v, sizeof v);
  }
  bool text(std::string& s, std::uint64_t maxSize) {
    std::uint64_t size = 0;
    if (!value(size) || size > maxSize || size > m_left) return m_ok = false;
    s.resize(static_cast<std::size_t>(size));
    return bytes(s.data(), size);
  }
  std::uint64_t left() const { return m_left; }
  // The stored checksum matches what was read, and it is the file's last byte.
  bool trailerMatches() {
    const std::uint64_t expected = m_checksum.value();
    std::uint64_t stored = 0;
    if (!m_ok || m_left != sizeof stored || std::fread(&stored, 1, sizeof stored, m_file) != sizeof stored)
      return false;
    return stored == expected;
  }

 private:
  std::FILE* m_file;
  std::uint64_t m_left;
  Checksum m_checksum;
  bool m_ok = true;
};

void writeDataset(Writer& out, const Dataset& data) {
  out.text(data.name);
  out.value<std::int64_t>(data.features.rows());
  out.value<std::int64_t>(data.features.cols());
  out.value<std::int32_t>(data.numClasses);
  out.value<std::uint64_t>(data.classNames.size());
  for (const std::string& name : data.classNames) out.text(name);
  out.bytes(data.labels.data(), data.labels.size() * sizeof(std::int32_t));
  out.bytes(data.features.data(), static_cast<std::size_t>(data.features.size()) * sizeof(float));
  out.value<std::uint8_t>(data.image ? 1 : 0);
  if (data.image) {
    out.value<std::int32_t>(data.image->height);
    out.value<std::int32_t>(data.image->width);
    out.value(data.image->maxValue);
  }
  out.value<std::uint8_t>(data.rowNormBound ? 1 : 0);
  if (data.rowNormBound) out.value(*data.rowNormBound);
  out.value<std::uint8_t>(data.featureMap ? 1 : 0);
  if (data.featureMap) {
    out.value<std::int32_t>(data.featureMap->channels);
    out.value<std::int32_t>(data.featureMap->height);
    out.value<std::int32_t>(data.featureMap->width);
  }
}

constexpr std::uint64_t kMaxNameBytes = 1 << 16;

// Fresh memory about to be filled: in 2 MiB pages the kernel takes 512 times fewer faults to
// hand it over, which is most of the cost of reading a large entry from the page cache.
void adviseHugePages([[maybe_unused]] void* data, [[maybe_unused]] std::uint64_t bytes) {
#ifdef __linux__
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

bool readDataset(Reader& in, Dataset& data, const LoadOptions& options) {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int32_t classes = 0;
  std::uint64_t names = 0;
  if (!in.text(data.name, kMaxNameBytes) || !in.value(rows) || !in.value(cols) || !in.value(classes) ||
      !in.value(names)) {
    return false;
  }
  if (rows < 0 || cols < 0 || rows > options.maxRecords || cols > options.maxFeatures || classes < 1 ||
      classes > kMaxClasses || names != static_cast<std::uint64_t>(classes)) {
    return false;
  }
  const auto labelBytes = static_cast<std::uint64_t>(rows) * sizeof(std::int32_t);
  const auto featureBytes = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * sizeof(float);
  if (labelBytes + featureBytes > in.left()) return false;
  data.numClasses = classes;
  data.classNames.resize(static_cast<std::size_t>(names));
  for (std::string& name : data.classNames) {
    if (!in.text(name, kMaxNameBytes)) return false;
  }
  data.labels.resize(static_cast<std::size_t>(rows));
  if (!in.bytes(data.labels.data(), labelBytes)) return false;
  for (const std::int32_t label : data.labels) {
    if (label < 0 || label >= classes) return false;
  }
  data.features.resize(rows, cols);
  adviseHugePages(data.features.data(), featureBytes);
  if (!in.bytes(data.features.data(), featureBytes)) return false;
  std::uint8_t hasImage = 0;
  if (!in.value(hasImage) || hasImage > 1) return false;
  if (hasImage) {
    ImageShape& shape = data.image.emplace();
    if (!in.value(shape.height) || !in.value(shape.width) || !in.value(shape.maxValue) || shape.height < 1 ||
        shape.width < 1 || static_cast<std::int64_t>(shape.height) * shape.width != cols ||
        !(std::isfinite(shape.maxValue) && shape.maxValue > 0.0)) {
      return false;
    }
  }
  std::uint8_t hasBound = 0;
  if (!in.value(hasBound) || hasBound > 1) return false;
  if (hasBound) {
    double bound = 0.0;
    if (!in.value(bound) || !(std::isfinite(bound) && bound > 0.0)) return false;
    data.rowNormBound = bound;
  }
  std::uint8_t hasMap = 0;
  if (!in.value(hasMap) || hasMap > 1) return false;
  if (hasMap) {
    Dataset::FeatureMapShape& map = data.featureMap.emplace();
    if (!in.value(map.channels) || !in.value(map.height) || !in.value(map.width) || map.channels < 1 ||
        map.height < 1 || map.width < 1 || static_cast<std::int64_t>(map.channels) * map.height * map.width != cols) {
      return false;
    }
  }
  return true;
}

std::string headerKeyLine(const char* name, const std::string& value) { return std::string(name) + "=" + value + "\n"; }

// What the stored DataBounds depend on besides the data: a cached value must equal a fresh
// computation bit for bit (β_empirical is reported to 17 digits), and the power iteration's float
// sums change with its code, the compiler, the optimisation and the SIMD width Eigen uses. Bump
// kBoundsVersion whenever dataBounds or largestEigenvalueOfGram computes differently.
std::string boundsComputation() {
  constexpr int kBoundsVersion = 1;
  std::string compiler;
#ifdef __VERSION__
  compiler = __VERSION__;
#endif
#ifdef __OPTIMIZE__
  compiler += " optimised";
#endif
#ifdef __FAST_MATH__
  compiler += " fast-math";
#endif
  return std::to_string(kBoundsVersion) + "; " + compiler + "; Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
         std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) + " " +
         Eigen::SimdInstructionSetsInUse();
}

bool validBound(double value) { return std::isfinite(value) && value >= 0.0; }

}  // namespace

std::optional<fs::path> datasetCacheDirectory() {
  const char* off = std::getenv("DPX_NO_DATASET_CACHE");
  if (off && *off && std::string_view(off) != "0") return std::nullopt;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "dpx-explorer" / "datasets";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "dpx-explorer" / "datasets";
  return std::nullopt;
}

std::optional<std::string> datasetCacheKey(const std::string& loader, const std::vector<std::string>& files,
                                           const LoadOptions& options) {
  std::string key = headerKeyLine("format", std::to_string(kFormatVersion)) + headerKeyLine("loader", loader);
  for (const std::string& file : files) {
    std::error_code error;
    const fs::path path = fs::canonical(file, error);
    if (error) return std::nullopt;
    const auto size = fs::file_size(path, error);
    if (error) return std::nullopt;
    const auto modified = fs::last_write_time(path, error);
    if (error) return std::nullopt;
    key += headerKeyLine("file", path.string());
    key += headerKeyLine("size", std::to_string(size));
    key += headerKeyLine("mtime", std::to_string(modified.time_since_epoch().count()));
  }
  key += headerKeyLine("features", featureComputation(options.features));
  key += headerKeyLine("scaling", std::to_string(static_cast<int>(options.effectiveScaling())));
  key += headerKeyLine("label-column", std::to_string(options.labelColumn));
  key += headerKeyLine("label-column-name", options.labelColumnName.value_or("-"));
  key += headerKeyLine("header", options.header ? std::to_string(*options.header) : "-");
  key += headerKeyLine("delimiter", std::to_string(static_cast<int>(options.delimiter)));
  key += headerKeyLine("limits", std::to_string(options.maxRecords) + "," + std::to_string(options.maxFeatures) + "," +
                                     std::to_string(options.maxBytes));
  key += headerKeyLine("bounds", boundsComputation());
  return key;
}

fs::path datasetCacheFile(const fs::path& directory, const std::string& key) {
  Checksum hash;
  hash.update(key.data(), key.size());
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.dpxdata", static_cast<unsigned long long>(hash.value()));
  return directory / name;
}

std::optional<LoadedData> readCachedDataset(const fs::path& file, const std::string& key, const LoadOptions& options) {
  try {
    std::error_code error;
    const auto size = fs::file_size(file, error);
    if (error) return std::nullopt;
    File handle(std::fopen(file.c_str(), "rb"), &std::fclose);
    if (!handle) return std::nullopt;
    Reader in(handle.get(), size);
    char magic[sizeof kMagic];
    std::uint32_t version = 0;
    std::uint32_t byteOrder = 0;
    std::string storedKey;
    if (!in.bytes(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0 || !in.value(version) ||
        version != kFormatVersion || !in.value(byteOrder) || byteOrder != kByteOrderMark ||
        !in.text(storedKey, key.size()) || storedKey != key) {
      return std::nullopt;
    }
    LoadedData data;
    std::uint8_t hasTest = 0;
    if (!readDataset(in, data.train, options) || !in.value(hasTest) || hasTest > 1) return std::nullopt;
    if (hasTest && !readDataset(in, data.test.emplace(), options)) return std::nullopt;
    std::uint8_t hasBounds = 0;
    if (!in.value(hasBounds) || hasBounds > hasTest) return std::nullopt;
    if (hasBounds) {
      DataBounds& bounds = data.bounds.emplace();
      if (!in.value(bounds.maxRowNorm) || !in.value(bounds.gramEigenvalue) || !validBound(bounds.maxRowNorm) ||
          !validBound(bounds.gramEigenvalue)) {
        return std::nullopt;
      }
    }
    if (!in.trailerMatches()) return std::nullopt;
    // Entries are dropped least recently used first (trimDatasetCache): a read counts as a use.
    fs::last_write_time(file, fs::file_time_type::clock::now(), error);
    return data;
  } catch (...) {
    return std::nullopt;  // out of memory for a huge entry: decode the source instead
  }
}

Status writeCachedDataset(const fs::path& file, const std::string& key, const LoadedData& data) {
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) return Status::ioError("cannot create '" + file.parent_path().string() + "': " + error.message());
  // Unique among processes and threads: a concurrent writer of the same entry has its own file.
  static std::atomic<std::uint64_t> counter{0};
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  const fs::path temporary =
      file.string() + ".tmp." +
      std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) ^ static_cast<std::size_t>(stamp)) + "." +
      std::to_string(counter.fetch_add(1));
  bool written = false;
  {
    File handle(std::fopen(temporary.c_str(), "wb"), &std::fclose);
    if (!handle) return Status::ioError("cannot write '" + temporary.string() + "'");
    Writer out(handle.get());
    out.bytes(kMagic, sizeof kMagic);
    out.value(kFormatVersion);
    out.value(kByteOrderMark);
    out.text(key);
    writeDataset(out, data.train);
    out.value<std::uint8_t>(data.test ? 1 : 0);
    if (data.test) writeDataset(out, *data.test);
    const bool withBounds = data.test && data.bounds;
    out.value<std::uint8_t>(withBounds ? 1 : 0);
    if (withBounds) {
      out.value(data.bounds->maxRowNorm);
      out.value(data.bounds->gramEigenvalue);
    }
    out.trailer();
    written = out.ok() && std::fflush(handle.get()) == 0;
    written = (std::fclose(handle.release()) == 0) && written;
  }
  if (written) fs::rename(temporary, file, error);
  if (!written || error) {
    fs::remove(temporary, error);
    return Status::ioError("cannot write the dataset cache entry '" + file.string() + "'");
  }
  trimDatasetCache(file.parent_path(), kDatasetCacheBudgetBytes, file);
  return Status::ok();
}

void trimDatasetCache(const fs::path& directory, std::uintmax_t budgetBytes, const fs::path& keep) {
  struct Entry {
    fs::path path;
    std::uintmax_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() != ".dpxdata") continue;
    std::error_code e;
    const auto bytes = it->file_size(e);
    const auto used = e ? fs::file_time_type{} : it->last_write_time(e);
    if (e) continue;
    entries.push_back({it->path(), bytes, used});
    total += bytes;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= budgetBytes) break;
    if (entry.path == keep) continue;
    std::error_code e;
    if (fs::remove(entry.path, e)) total -= entry.bytes;
  }
}

}  // namespace dpx::core::training::detail
