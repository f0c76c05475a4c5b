// The on-disk cache of decoded data sets: an entry reads back bit for bit; a truncated, corrupt
// or foreign entry is ignored, never trusted; the key follows the source files' size and
// modification time; a cached IDX directory loads exactly what decoding it gives, and its data
// bounds exactly what computing them gives.

#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "synthetic_data.h"
#include "training/dataset.h"
#include "training/dataset_file_cache.h"

using namespace dpx::core::training;
namespace fs = std::filesystem;

namespace {

LoadedData sample() {
  LoadedData data;
  data.train = dpx::test::clusters(300, 17, 4, 5);
  data.train.name = "train";
  data.train.classNames = {"a", "b", "c", "d"};
  data.train.rowNormBound = 1.0;  // stored with the entry, as the image shape below
  data.test = dpx::test::clusters(40, 17, 4, 6);
  data.test->name = "test";
  data.test->image = ImageShape{17, 1, 255.0};
  data.test->classNames = data.train.classNames;
  return data;
}

bool sameDataset(const Dataset& a, const Dataset& b) {
  return a.name == b.name && a.features.rows() == b.features.rows() && a.features.cols() == b.features.cols() &&
         std::memcmp(a.features.data(), b.features.data(), static_cast<std::size_t>(a.features.size()) * 4) == 0 &&
         a.labels == b.labels && a.numClasses == b.numClasses && a.classNames == b.classNames && a.image == b.image &&
         a.rowNormBound == b.rowNormBound;
}

std::vector<char> readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& file, const std::vector<char>& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void bigEndian32(std::vector<char>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// An MNIST-style IDX pair of `count` 3×4 images with pixel values from `seed`.
void writeIdxPair(const fs::path& directory, const std::string& set, std::uint32_t count, std::uint32_t seed) {
  std::vector<char> images;
  bigEndian32(images, 0x00000803);
  bigEndian32(images, count);
  bigEndian32(images, 3);
  bigEndian32(images, 4);
  std::vector<char> labels;
  bigEndian32(labels, 0x00000801);
  bigEndian32(labels, count);
  std::uint32_t state = seed;
  for (std::uint32_t i = 0; i < count; ++i) {
    for (int p = 0; p < 12; ++p) {
      state = state * 1664525u + 1013904223u;
      images.push_back(static_cast<char>(state >> 24));
    }
    labels.push_back(static_cast<char>(i % 3));
  }
  writeAll(directory / (set + "-images-idx3-ubyte"), images);
  writeAll(directory / (set + "-labels-idx1-ubyte"), labels);
}

}  // namespace

class TestDatasetFileCache : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The directory stays under its budget: least recently used entries go first, the entry just
  // written never, and files that are not entries are left alone.
  void trimKeepsTheBudgetLeastRecentlyUsedFirst() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const auto make = [&](const char* name, std::size_t bytes, int ageSeconds) {
      const fs::path p = root / name;
      std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
      fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::seconds(ageSeconds));
      return p;
    };
    const fs::path oldest = make("a.dpxdata", 1000, 300);
    const fs::path middle = make("b.dpxdata", 1000, 200);
    const fs::path newest = make("c.dpxdata", 1000, 100);
    const fs::path other = make("notes.txt", 5000, 400);
    detail::trimDatasetCache(root, 2000, oldest);  // keep the oldest: the next goes instead
    QVERIFY(fs::exists(oldest));
    QVERIFY(!fs::exists(middle));
    QVERIFY(fs::exists(newest));
    QVERIFY(fs::exists(other));
    detail::trimDatasetCache(root, 1000, newest);
    QVERIFY(!fs::exists(oldest));
    QVERIFY(fs::exists(newest));
  }

  void roundTripIsBitIdentical() {
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "entry.dpxdata";
    const LoadedData data = sample();
    QVERIFY(detail::writeCachedDataset(file, "key", data).isOk());
    const auto back = detail::readCachedDataset(file, "key", {});
    QVERIFY(back.has_value());
    QVERIFY(sameDataset(back->train, data.train));
    QVERIFY(back->test.has_value() && sameDataset(*back->test, *data.test));
    QVERIFY(!detail::readCachedDataset(file, "another key", {}).has_value());
    LoadOptions strict;
    strict.maxRecords = 100;  // an entry beyond the caller's limits is not handed back
    QVERIFY(!detail::readCachedDataset(file, "key", strict).has_value());
  }

  void damagedEntriesAreIgnored_data() {
    QTest::addColumn<int>("cut");   // bytes kept (−1: all)
    QTest::addColumn<int>("flip");  // byte to flip, counted from the start (−1: none); −2: the last byte
    QTest::addColumn<bool>("append");
    QTest::newRow("empty file") << 0 << -1 << false;
    QTest::newRow("magic only") << 8 << -1 << false;
    QTest::newRow("cut inside the header") << 20 << -1 << false;
    QTest::newRow("cut inside the features") << 3000 << -1 << false;
    QTest::newRow("checksum missing its last byte") << -3 << -1 << false;
    QTest::newRow("a feature byte flipped") << -1 << 4000 << false;
    QTest::newRow("a key byte flipped") << -1 << 25 << false;
    QTest::newRow("the checksum flipped") << -1 << -2 << false;
    QTest::newRow("a byte appended") << -1 << -1 << true;
  }

  void damagedEntriesAreIgnored() {
    QFETCH(int, cut);
    QFETCH(int, flip);
    QFETCH(bool, append);
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "entry.dpxdata";
    QVERIFY(detail::writeCachedDataset(file, "key", sample()).isOk());
    std::vector<char> bytes = readAll(file);
    if (cut == -3) bytes.pop_back();
    if (cut >= 0) bytes.resize(static_cast<std::size_t>(cut));
    if (flip >= 0) bytes[static_cast<std::size_t>(flip)] ^= 0x10;
    if (flip == -2) bytes.back() ^= 0x01;
    if (append) bytes.push_back('x');
    writeAll(file, bytes);
    QVERIFY(!detail::readCachedDataset(file, "key", {}).has_value());
  }

  void keyFollowsTheSourceFiles() {
    QTemporaryDir dir;
    const fs::path source = fs::path(dir.path().toStdString()) / "source.bin";
    writeAll(source, {'a', 'b', 'c'});
    const auto key = detail::datasetCacheKey("test", {source.string()}, {});
    QVERIFY(key.has_value());
    QCOMPARE(detail::datasetCacheKey("test", {source.string()}, {}), key);
    fs::last_write_time(source, fs::last_write_time(source) - std::chrono::hours(1));
    const auto touched = detail::datasetCacheKey("test", {source.string()}, {});
    QVERIFY(touched.has_value() && touched != key);
    writeAll(source, {'a', 'b', 'c', 'd'});
    fs::last_write_time(source, fs::last_write_time(source) - std::chrono::hours(1));
    QVERIFY(detail::datasetCacheKey("test", {source.string()}, {}) != touched);
    LoadOptions raw;
    raw.scaling = FeatureScaling::kNone;
    QVERIFY(detail::datasetCacheKey("test", {source.string()}, raw) !=
            detail::datasetCacheKey("test", {source.string()}, {}));
    QVERIFY(!detail::datasetCacheKey("test", {(source.parent_path() / "missing").string()}, {}).has_value());
  }

  // Decoded, cached, read back, and after the entry is damaged decoded again: the same data
  // every time.
  void idxDirectoryLoadsTheSameFromTheCache() {
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const fs::path source = root / "idx";
    fs::create_directories(source);
    writeIdxPair(source, "train", 50, 1);
    writeIdxPair(source, "t10k", 20, 2);
    const QByteArray previousCacheHome = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", (root / "cache").string().c_str());
    qunsetenv("DPX_NO_DATASET_CACHE");
    const auto first = loadData(source.string());
    QVERIFY2(first.isOk(), first.status().message().c_str());
    const fs::path entries = root / "cache" / "dpx-explorer" / "datasets";
    QVERIFY(fs::is_directory(entries));
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(entries)) files.push_back(e.path());
    QCOMPARE(files.size(), std::size_t(1));  // no temporary file left behind
    const auto second = loadData(source.string());
    QVERIFY(second.isOk());
    QVERIFY(sameDataset(second->train, first->train) && sameDataset(*second->test, *first->test));
    QCOMPARE(second->description, first->description);
    std::vector<char> bytes = readAll(files.front());
    bytes[bytes.size() / 2] ^= 0x40;
    writeAll(files.front(), bytes);
    const auto third = loadData(source.string());
    QVERIFY(third.isOk());
    QVERIFY(sameDataset(third->train, first->train) && sameDataset(*third->test, *first->test));
    // Back to ctest's cache directory, so later loads in this process stay out of ~/.cache.
    if (previousCacheHome.isEmpty()) {
      qunsetenv("XDG_CACHE_HOME");
    } else {
      qputenv("XDG_CACHE_HOME", previousCacheHome);
    }
  }

  void boundsRoundTripBitIdentical() {
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "entry.dpxdata";
    LoadedData data = sample();
    data.bounds = DataBounds{1.0000000423115181, 1.5971792249382784};
    QVERIFY(detail::writeCachedDataset(file, "key", data).isOk());
    const auto back = detail::readCachedDataset(file, "key", {});
    QVERIFY(back.has_value() && back->bounds.has_value());
    QVERIFY(back->bounds->maxRowNorm == data.bounds->maxRowNorm);
    QVERIFY(back->bounds->gramEigenvalue == data.bounds->gramEigenvalue);
    data.test.reset();  // without a test set the split is drawn at random: its bounds differ
    QVERIFY(detail::writeCachedDataset(file, "key", data).isOk());
    const auto noTest = detail::readCachedDataset(file, "key", {});
    QVERIFY(noTest.has_value() && !noTest->bounds.has_value());
  }

  // The data bounds stored with an IDX directory's entry are those a fresh computation gives, bit
  // for bit, and its split hands them to the trainer.
  void idxDirectoryEntryHoldsTheSplitsDataBounds() {
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const fs::path source = root / "idx";
    fs::create_directories(source);
    writeIdxPair(source, "train", 60, 3);
    writeIdxPair(source, "t10k", 25, 4);
    const QByteArray previousCacheHome = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", (root / "cache").string().c_str());
    qunsetenv("DPX_NO_DATASET_CACHE");
    for (int load = 0; load < 2; ++load) {  // decoded (and stored), then read back
      auto loaded = loadData(source.string());
      QVERIFY2(loaded.isOk(), loaded.status().message().c_str());
      QVERIFY(loaded->bounds.has_value());
      const DataBounds fresh = dataBounds(loaded->train, *loaded->test);
      QVERIFY(loaded->bounds->maxRowNorm == fresh.maxRowNorm);
      QVERIFY(loaded->bounds->gramEigenvalue == fresh.gramEigenvalue);
      const auto split = trainTestSplit(std::move(*loaded), 0.2, 1);
      QVERIFY(split.isOk() && split->bounds.has_value());
      QVERIFY(split->bounds->gramEigenvalue == fresh.gramEigenvalue);
    }
    if (previousCacheHome.isEmpty()) {
      qunsetenv("XDG_CACHE_HOME");
    } else {
      qputenv("XDG_CACHE_HOME", previousCacheHome);
    }
  }
};

QTEST_GUILESS_MAIN(TestDatasetFileCache)
#include "tst_dataset_file_cache.moc"
