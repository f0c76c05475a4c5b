#include "training/model_comparison.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/format.h"
#include "training/feature_extraction.h"

namespace dpx::core::training {
namespace {

constexpr int kMaxSeeds = 50;
constexpr std::size_t kMaxPoints = 64;

TrainerConfig dpSgd(ModelKind kind, std::int64_t batch, double eta, double epochs) {
  TrainerConfig c;
  c.mechanism = Mechanism::kDpSgd;
  c.model.kind = kind;
  c.epochs = epochs;
  c.evaluateEachEpoch = false;
  c.knobs.m = batch;
  c.knobs.eta = eta;
  c.knobs.L = 0.1;
  c.knobs.lambda = 0.0;
  c.knobs.optimizer = Optimizer::kMomentum;
  c.momentum = 0.9;
  return c;
}

std::vector<ModelRecipe> buildRecipes() {
  // Their README's commands and their code's defaults (momentum 0.9, clip 0.1, no weight decay):
  // baselines.py --batch_size=8192 --lr=16 for ScatterNet + linear, cnns.py --batch_size=2048
  // --lr=4 for both CNNs. Linear on pixels is not in their Table 1: it takes the CNN's settings,
  // which suit it as well (a linear model is the CNN's simplest special case).
  const auto recipe = [](std::string id, std::string label, FeatureKind features, TrainerConfig config) {
    ModelRecipe r;
    r.id = std::move(id);
    r.label = std::move(label);
    r.features = features;
    r.scaling = FeatureScaling::kNone;  // pixels x/255, ScatterNet as GroupNorm leaves it
    r.config = std::move(config);
    r.settings = std::string(features == FeatureKind::kScatterNet ? "ScatterNet features, " : "pixels x/255, ") +
                 "Poisson batches of expected size " + std::to_string(r.config.knobs.m) +
                 ", η = " + formatNumber(r.config.knobs.eta) + ", momentum 0.9, clip L = 0.1, λ = 0, " +
                 formatNumber(r.config.epochs) + " epochs";
    return r;
  };
  return {
      recipe("linear-pixels", "linear on pixels", FeatureKind::kRaw, dpSgd(ModelKind::kLinear, 2048, 4, 40)),
      recipe("scatter-linear", "ScatterNet + linear", FeatureKind::kScatterNet,
             dpSgd(ModelKind::kLinear, 8192, 16, 40)),
      recipe("cnn", "CNN on pixels (end to end)", FeatureKind::kRaw, dpSgd(ModelKind::kCnn, 2048, 4, 40)),
      recipe("scatter-cnn", "ScatterNet + CNN", FeatureKind::kScatterNet, dpSgd(ModelKind::kScatterCnn, 2048, 4, 40)),
  };
}

Status validate(const ModelComparisonRequest& r) {
  if (r.recipes.empty()) return Status::invalidArgument("the comparison needs at least one model");
  for (const std::string& id : r.recipes) {
    if (!findRecipe(id)) {
      std::string known;
      for (const ModelRecipe& recipe : tramerBonehRecipes()) known += (known.empty() ? "" : ", ") + recipe.id;
      return Status::invalidArgument("unknown model recipe '" + id.substr(0, 60) + "': the recipes are " + known);
    }
  }
  if (r.epsilons.empty() || r.epsilons.size() > kMaxPoints) {
    return Status::invalidArgument("targets: " + std::to_string(r.epsilons.size()) + " points, must be 1 to 64");
  }
  for (double e : r.epsilons) {
    if (!std::isfinite(e) || !(e > 0.0)) {
      return Status::invalidArgument("target ε = " + formatNumber(e) + " is out of range: must be a finite number > 0");
    }
  }
  if (r.seeds < 1 || r.seeds > kMaxSeeds) {
    return Status::invalidArgument("seeds = " + std::to_string(r.seeds) + " is out of range: must be in [1, 50]");
  }
  return Status::ok();
}

DatasetKey keyOf(const ModelComparisonRequest& request, const ModelRecipe& recipe) {
  DatasetKey key;
  key.source = request.source;
  key.features = recipe.features;
  key.scaling = recipe.scaling;
  key.splitSeed = request.seed;
  return key;
}

TrainerConfig configOf(const ModelComparisonRequest& request, const ModelRecipe& recipe, const CachedDataset& data) {
  TrainerConfig c = recipe.config;
  c.knobs.delta = request.delta;
  c.seed = request.seed;
  c.threads = request.threads;
  c.accountant = request.accountant;
  c.bounds = data.bounds;
  return c;
}

// One recipe's work (trainingWork) for every point and seed of the request.
double recipeWork(const ModelComparisonRequest& request, const ModelRecipe& recipe, const CachedDataset& data) {
  const TrainerConfig c = configOf(request, recipe, data);
  const Dataset& train = data.data->train;
  const double macs = forwardMacsOf(c.model, modelInput(c.model, train), train.numClasses);
  return trainingWork(c, train.size(), data.data->test.size(), macs) * static_cast<double>(request.epsilons.size()) *
         request.seeds;
}

}  // namespace

const std::vector<ModelRecipe>& tramerBonehRecipes() {
  static const std::vector<ModelRecipe> recipes = buildRecipes();
  return recipes;
}

const ModelRecipe* findRecipe(std::string_view id) {
  for (const ModelRecipe& r : tramerBonehRecipes()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::optional<double> comparisonSecondsEstimate(const ModelComparisonRequest& request, const DatasetCache& cache,
                                                double linearMacsPerSecond, double networkMacsPerSecond) {
  if (!validate(request).isOk() || !(linearMacsPerSecond > 0.0) || !(networkMacsPerSecond > 0.0)) return std::nullopt;
  double seconds = 0.0;
  for (const std::string& id : request.recipes) {
    const ModelRecipe& recipe = *findRecipe(id);
    const std::optional<CachedDataset> data = cache.peek(keyOf(request, recipe));
    if (!data) return std::nullopt;
    seconds += recipeWork(request, recipe, *data) /
               (recipe.config.model.convex() ? linearMacsPerSecond : networkMacsPerSecond);
  }
  return seconds;
}

Result<ModelComparisonResult> compareModels(const ModelComparisonRequest& request, DatasetCache& cache,
                                            const ModelComparisonCallbacks& callbacks,
                                            const std::atomic<bool>* cancel) {
  DPX_RETURN_IF_ERROR(validate(request));
  const auto start = std::chrono::steady_clock::now();
  const auto cancelled = [&] { return cancel && cancel->load(); };
  const auto say = [&](const std::string& text) {
    if (callbacks.status) callbacks.status(text);
  };
  ModelComparisonResult out;
  out.delta = request.delta;
  out.accountant = request.accountant;

  // The data first (ScatterNet features are extracted once, at most a tenth of the bar), then the
  // runs, the bar advancing by each recipe's share of the estimated work.
  constexpr double kLoadingShare = 0.1;
  std::vector<std::optional<CachedDataset>> data(request.recipes.size());
  for (std::size_t i = 0; i < request.recipes.size() && !cancelled(); ++i) {
    const ModelRecipe& recipe = *findRecipe(request.recipes[i]);
    ModelComparisonSeries series;
    series.id = recipe.id;
    series.label = recipe.label;
    series.settings = recipe.settings;
    series.points.resize(request.epsilons.size());
    for (std::size_t p = 0; p < request.epsilons.size(); ++p) series.points[p].targetEpsilon = request.epsilons[p];
    FeatureExtractionControl extraction;
    extraction.cancel = cancel;
    extraction.progress = [&](double f) {
      if (callbacks.progress) {
        callbacks.progress(kLoadingShare * (static_cast<double>(i) + f) / static_cast<double>(request.recipes.size()));
      }
    };
    say("loading " + request.source + (recipe.features == FeatureKind::kRaw ? "" : " with ScatterNet features"));
    Result<CachedDataset> loaded = cache.get(keyOf(request, recipe), &extraction);
    if (!loaded) {
      if (!cancelled()) series.error = loaded.status().message();
    } else if (Status reads = Model::create(recipe.config.model, loaded->data->train, 1).status(); !reads.isOk()) {
      series.data = loaded->description;
      series.error = reads.message();  // the model cannot read these rows (a CNN on tabular data)
    } else {
      series.data = loaded->description;
      data[i] = std::move(*loaded);
    }
    out.series.push_back(std::move(series));
  }
  std::vector<double> work(request.recipes.size(), 0.0);
  double totalWork = 0.0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data[i]) work[i] = recipeWork(request, *findRecipe(request.recipes[i]), *data[i]);
    totalWork += work[i];
  }

  double workDone = 0.0;
  for (std::size_t i = 0; i < out.series.size() && !cancelled(); ++i) {
    if (!data[i]) continue;
    const ModelRecipe& recipe = *findRecipe(request.recipes[i]);
    FrontierRequest frontier;
    frontier.mechanisms = {Mechanism::kDpSgd};
    frontier.base = configOf(request, recipe, *data[i]);
    frontier.epsilons = request.epsilons;
    frontier.seeds = request.seeds;
    frontier.nonPrivateCeiling = false;  // at these learning rates unclipped SGD diverges
    FrontierCallbacks forward;
    forward.pointDone = [&, i](std::size_t, std::size_t point, const FrontierPoint& p) {
      if (callbacks.pointDone) callbacks.pointDone(i, point, p);
    };
    forward.progress = [&, i](double f) {
      if (callbacks.progress && totalWork > 0.0) {
        callbacks.progress(kLoadingShare + (1.0 - kLoadingShare) * (workDone + f * work[i]) / totalWork);
      }
    };
    say("training: " + recipe.label);
    Result<FrontierResult> r = computeFrontier(frontier, data[i]->data, forward, cancel);
    if (!r) {
      out.series[i].error = r.status().message();
    } else {
      out.series[i].points = r->series.front().points;
      out.runs += r->runs;
    }
    workDone += work[i];
  }
  out.cancelled = cancelled();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace dpx::core::training
