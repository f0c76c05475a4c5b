// The privacy–utility frontier: test accuracy against ε for each mechanism, each point a run
// calibrated to its target ε (so every mechanism is compared at the same (ε, δ)), averaged over
// several seeds with the min–max spread; or accuracy against epochs at one fixed ε, each point
// recalibrated, which shows whether more epochs help at equal privacy (for DP-SGLD, whose
// Langevin bound saturates in K (Ryffel, Bach & Pointcheval 2022, Thm 3.1), more epochs cost
// almost no extra noise). Non-private SGD gives the ceiling.
// All runs of a frontier go through one oneTBB arena: the (mechanism, point) cells train side by
// side, each point's seeds reuse one calibration, and results are the same for any thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "training/trainer.h"

namespace dpx::core::training {

enum class FrontierVary { kEpsilon, kEpochs };

struct FrontierRequest {
  std::vector<Mechanism> mechanisms;  // private ones; sgd is the ceiling, not a series
  // Knobs, epochs, first seed, threads and accountant of every run; targetEpsilon is ignored.
  TrainerConfig base;
  FrontierVary vary = FrontierVary::kEpsilon;
  std::vector<double> epsilons;    // targets (vary ε); with vary epochs only the first is used
  std::vector<double> epochsList;  // vary epochs: the epochs of each point
  int seeds = 3;                   // runs per point: seeds base.seed, base.seed + 1, …
  bool nonPrivateCeiling = true;   // also train sgd (same epochs, same seeds)
};

struct FrontierPoint {
  double targetEpsilon = 0.0;
  double epochs = 0.0;
  std::optional<double> epsilon;  // the largest ε any of its runs reports (≤ target)
  double sigma = 0.0;             // noise multiplier used (sgld-posterior: its effective σ)
  double eta = 0.0;               // step size used (sgld-posterior: calibrated)
  std::int64_t steps = 0;
  std::int64_t batch = 0;     // expected batch size m of its runs (a recipe may set its own)
  double accuracyMean = 0.0;  // test accuracy over the seeds
  double accuracyMin = 0.0;
  double accuracyMax = 0.0;
  int seeds = 0;
  std::string error;  // why this point has no runs (e.g. the target is out of reach)
  bool ok() const { return error.empty() && seeds > 0; }
};

struct FrontierSeries {
  Mechanism mechanism = Mechanism::kDpSgld;
  std::string accountant;
  std::vector<FrontierPoint> points;  // in request order
};

struct FrontierResult {
  FrontierVary vary = FrontierVary::kEpsilon;
  double delta = 0.0;
  std::vector<FrontierSeries> series;
  std::optional<double> nonPrivateAccuracy;  // sgd, mean over the seeds (vary ε)
  // vary epochs: sgd's mean accuracy at each epochs point
  std::vector<double> nonPrivateByEpochs;
  bool cancelled = false;
  double seconds = 0.0;
  std::int64_t runs = 0;
};

struct FrontierCallbacks {
  // A point finished (all its seeds), from a worker thread: series index, point index, point.
  std::function<void(std::size_t, std::size_t, const FrontierPoint&)> pointDone;
  // The non-private ceiling finished (vary ε), from a worker thread.
  std::function<void(double)> ceilingDone;
  // Fraction of runs done, from a worker thread.
  std::function<void(double)> progress;
};

// `points` targets log-spaced over [ε/8, 8ε] (points ≥ 2), the frontier's default ε grid.
std::vector<double> frontierEpsilonGrid(double epsilon, int points);
// `points` epochs log-spaced over [E/8, 8E], rounded to whole epochs, at least 1, no repeats.
std::vector<double> frontierEpochsGrid(double epochs, int points);

// Validates the request (mechanisms private, targets > 0, 1–50 seeds, …) and trains every run.
// Cancelled: the points done so far, `cancelled` set.
Result<FrontierResult> computeFrontier(const FrontierRequest& request, std::shared_ptr<const TrainTestSplit> data,
                                       const FrontierCallbacks& callbacks = {},
                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace dpx::core::training
