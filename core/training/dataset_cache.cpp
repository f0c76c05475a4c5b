#include "training/dataset_cache.h"

#include <chrono>

namespace dpx::core::training {

std::optional<CachedDataset> DatasetCache::peek(const DatasetKey& key) const {
  std::lock_guard lock(m_mutex);
  for (const auto& [k, entry] : m_entries) {
    if (k == key) return entry;
  }
  return std::nullopt;
}

Result<CachedDataset> DatasetCache::get(const DatasetKey& key, const FeatureExtractionControl* extraction) {
  {
    std::lock_guard lock(m_mutex);
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
      if (!(it->first == key)) continue;
      m_entries.splice(m_entries.begin(), m_entries, it);
      return m_entries.front().second;
    }
  }
  // Loaded outside the lock: a slow file does not hold up other sources.
  const auto start = std::chrono::steady_clock::now();
  LoadOptions options;
  options.labelColumn = key.labelColumn;
  options.features = key.features;
  options.scaling = key.scaling;
  options.extraction = extraction;
  DPX_ASSIGN_OR_RETURN(LoadedData loaded, loadData(key.source, options));
  CachedDataset entry;
  entry.description = loaded.description;
  DPX_ASSIGN_OR_RETURN(TrainTestSplit split, trainTestSplit(std::move(loaded), key.testFraction, key.splitSeed));
  auto data = std::make_shared<const TrainTestSplit>(std::move(split));
  entry.bounds = computeDataBounds(*data);
  entry.data = std::move(data);
  entry.loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(m_mutex);
  for (const auto& [k, existing] : m_entries) {
    if (k == key) return existing;  // another thread was faster: one copy in memory
  }
  m_entries.emplace_front(key, entry);
  while (m_entries.size() > m_capacity) m_entries.pop_back();
  return entry;
}

}  // namespace dpx::core::training
