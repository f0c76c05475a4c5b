// Synthetic data for the trainer tests: Gaussian clusters (one centre per class, N(0, 1)
// coordinates; records centre + N(0, 0.8²)), labels cycling through the classes, rows scaled as
// the loaders scale them (unit norm by default).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "training/dataset.h"
#include "training/rng.h"

namespace dpx::test {

inline core::training::Dataset clusters(
    std::int64_t n, int d, int classes, std::uint64_t seed,
    core::training::FeatureScaling scaling = core::training::FeatureScaling::kUnitNorm) {
  using namespace core::training;
  Dataset data;
  data.name = "clusters";
  data.numClasses = classes;
  for (int c = 0; c < classes; ++c) data.classNames.push_back(std::to_string(c));
  data.features.resize(n, d);
  data.labels.resize(static_cast<std::size_t>(n));
  Xoshiro256 engine(seed);
  std::vector<double> centre(static_cast<std::size_t>(d) * classes);
  fillGaussian(centre, 1.0, engine);
  std::vector<double> noise(static_cast<std::size_t>(d));
  for (std::int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % classes);
    data.labels[static_cast<std::size_t>(i)] = c;
    fillGaussian(noise, 0.8, engine);
    for (int j = 0; j < d; ++j) {
      data.features(i, j) =
          static_cast<float>(centre[static_cast<std::size_t>(c * d + j)] + noise[static_cast<std::size_t>(j)]);
    }
  }
  scaleFeatures(data.features, scaling);
  return data;
}

// n training records and n/4 held-out ones from the same clusters (rows are drawn in order, so
// the training part equals clusters(n, d, classes, seed)).
inline std::shared_ptr<const core::training::TrainTestSplit> clusterSplit(std::int64_t n = 2000, int d = 20,
                                                                          int classes = 4, std::uint64_t seed = 7) {
  using namespace core::training;
  const std::int64_t held = n / 4;
  Dataset all = clusters(n + held, d, classes, seed);
  auto split = std::make_shared<TrainTestSplit>();
  for (Dataset* part : {&split->train, &split->test}) {
    part->name = all.name;
    part->numClasses = all.numClasses;
    part->classNames = all.classNames;
  }
  split->train.features = all.features.topRows(n);
  split->train.labels.assign(all.labels.begin(), all.labels.begin() + n);
  split->test.features = all.features.bottomRows(held);
  split->test.labels.assign(all.labels.begin() + n, all.labels.end());
  return split;
}

}  // namespace dpx::test
