// Loaded and split datasets kept for reuse: the trainer, the frontier and the audit of the GUI
// all read the same split of the same source, and a live re-run must not re-read a file. Keyed
// by (source, features, scaling, label column, test fraction, split seed); the few most recent
// entries are kept (a decoded Fashion-MNIST is ~220 MB, its ScatterNet features 1.1 GB).
// Thread-safe: loads run on worker threads.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "training/dataset.h"
#include "training/trainer.h"

namespace dpx::core::training {

struct DatasetKey {
  std::string source;
  FeatureKind features = FeatureKind::kRaw;
  std::optional<FeatureScaling> scaling;  // unset: defaultScaling(features)
  int labelColumn = -1;
  double testFraction = 0.2;
  std::uint64_t splitSeed = 1;
  bool operator==(const DatasetKey&) const = default;
};

struct CachedDataset {
  std::shared_ptr<const TrainTestSplit> data;
  std::string description;
  DataBounds bounds;         // computed once, handed to every trainer of this data
  double loadSeconds = 0.0;  // reading, decoding and splitting
};

class DatasetCache {
 public:
  explicit DatasetCache(std::size_t capacity = 3) : m_capacity(capacity) {}
  // The cached entry, or loads it (on the calling thread); `extraction` reports the features'
  // extraction when they have to be computed (and can cancel it).
  Result<CachedDataset> get(const DatasetKey& key, const FeatureExtractionControl* extraction = nullptr);
  std::optional<CachedDataset> peek(const DatasetKey& key) const;

 private:
  std::size_t m_capacity;
  mutable std::mutex m_mutex;
  std::list<std::pair<DatasetKey, CachedDataset>> m_entries;  // most recent first
};

}  // namespace dpx::core::training
