// Models side by side on one privacy–utility frontier: Tramèr & Boneh 2021's central picture
// ("Differentially private learning needs better features (or much more data)", Fig. 1 and
// Table 1) — at moderate ε a linear model on handcrafted ScatterNet features beats an end-to-end
// CNN, and both beat a linear model on pixels. Each model trains with DP-SGD at the settings that
// suit it (their recipes: batch, learning rate, momentum, clip, epochs, preprocessing), every point
// calibrated to its target ε, so the comparison is at equal (ε, δ) and each model at its best.
// The recipes are shared with `dpx reproduce` (reproduction.h), which runs them at ε = 3.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "training/dataset_cache.h"
#include "training/frontier.h"
#include "training/mechanism.h"
#include "training/trainer.h"

namespace dpx::core::training {

// A model and how to train it privately: its features, its scaling and a DP-SGD configuration.
struct ModelRecipe {
  std::string id;        // "linear-pixels" | "scatter-linear" | "cnn" | "scatter-cnn"
  std::string label;     // "ScatterNet + linear"
  std::string settings;  // "Poisson batches of 8192, η = 16, momentum 0.9, clip 0.1, 40 epochs"
  FeatureKind features = FeatureKind::kRaw;
  FeatureScaling scaling = FeatureScaling::kUnitNorm;
  TrainerConfig config;  // mechanism dp-sgd; δ, seed, threads and target are set per use
};

// Tramèr & Boneh 2021's recipes for 28 × 28 grey images (their Fashion-MNIST settings):
// linear-pixels, scatter-linear, cnn, scatter-cnn, in that order.
const std::vector<ModelRecipe>& tramerBonehRecipes();
const ModelRecipe* findRecipe(std::string_view id);

struct ModelComparisonRequest {
  std::string source;                // "builtin:fashion-mnist", an IDX path, …
  std::vector<std::string> recipes;  // ids, in the chart's order
  std::vector<double> epsilons;      // target ε of each point
  double delta = 1e-5;
  int seeds = 1;  // runs per point: seeds seed, seed + 1, …
  std::uint64_t seed = 1;
  int threads = 0;
  // dp-sgd's: rdp | gdp | pld; its first (rdp) unless set.
  std::string accountant{accountantsFor(Mechanism::kDpSgd).front()};
};

struct ModelComparisonSeries {
  std::string id;
  std::string label;
  std::string settings;
  std::string data;                   // the loaded data's description
  std::vector<FrontierPoint> points;  // in request order
  std::string error;                  // why the model has no points (it cannot read the data, …)
};

struct ModelComparisonResult {
  double delta = 0.0;
  std::string accountant;
  std::vector<ModelComparisonSeries> series;
  bool cancelled = false;
  double seconds = 0.0;
  std::int64_t runs = 0;
};

struct ModelComparisonCallbacks {
  // From worker threads: a point of a series finished; the fraction of the work done (the
  // features' extraction first, then the runs weighted by their estimated work); what is done now.
  std::function<void(std::size_t, std::size_t, const FrontierPoint&)> pointDone;
  std::function<void(double)> progress;
  std::function<void(const std::string&)> status;
};

// Validates the request, loads each recipe's data through `cache` (features extracted once) and
// computes every series. A recipe that cannot train on the data gets its error, the others go on.
// Cancelled: the points done so far, `cancelled` set.
Result<ModelComparisonResult> compareModels(const ModelComparisonRequest& request, DatasetCache& cache,
                                            const ModelComparisonCallbacks& callbacks = {},
                                            const std::atomic<bool>* cancel = nullptr);

// The seconds a comparison would take at `macsPerSecond` (trainingWork's units), or nullopt when
// a recipe's data is not in `cache` yet (its size is unknown).
std::optional<double> comparisonSecondsEstimate(const ModelComparisonRequest& request, const DatasetCache& cache,
                                                double linearMacsPerSecond, double networkMacsPerSecond);

}  // namespace dpx::core::training
