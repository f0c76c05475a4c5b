// Published experiments, run here beside the numbers their papers print (`dpx reproduce`,
// Presets): every row is a training run of this trainer with the paper's settings, repeated over
// seeds, reported with the mean and the min–max of its test accuracy and the ε its accountant
// proves for the run actually made. Where this run differs from the paper's (Poisson batches
// where their loader shuffled, Fashion-MNIST where their features are not available here), the
// experiment says so in its notes.
//
// - tramer-boneh-2021-fmnist-scatter-linear: Tramèr & Boneh 2021, "Differentially private learning
//   needs better features (or much more data)", Table 1: a linear model on ScatterNet features of
//   Fashion-MNIST, DP-SGD at (3, 10⁻⁵); then the same run with σ from the exact PLD accountant.
// - ryffel-2022-table1-fmnist: Ryffel, Bach & Pointcheval 2022, Tables 1–2's protocol (DP-SGLD
//   against DP-SGD against non-private at (1, 10⁻⁵), η = 1/(2β), 30 epochs, constant and decreasing
//   step) on Fashion-MNIST's ScatterNet features.
// - fmnist-logistic-baseline: non-private softmax regression on Fashion-MNIST's pixels against
//   Xiao, Rasul & Vollgraf 2017's logistic regression.
// - tramer-boneh-2021-fmnist-cnn, tramer-boneh-2021-fmnist-scatter-cnn: Table 1's end-to-end tanh CNN
//   and CNN on ScatterNet features, DP-SGD at (3, 10⁻⁵); then σ from the exact PLD accountant.
// - bu-2020-fig4-fmnist: Bu, Dong, Long & Su 2020, Fig. 4 (top): the same (ε, δ) with the moments
//   accountant's σ, the CLT's and the exact PLD accountant's, test accuracy per epoch.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "training/trainer.h"

namespace dpx::core::training {

struct ExperimentInfo {
  std::string id;
  std::string title;     // one line for people
  std::string citation;  // authors, year, table
  std::string source;    // the data set it trains on
  int runsPerSeed = 0;   // training runs per seed
};

std::span<const ExperimentInfo> experiments();
const ExperimentInfo* findExperiment(std::string_view id);

struct ReproducedRow {
  std::string name;                 // "DP-SGD, σ from RDP (as published)"
  std::optional<double> published;  // test accuracy in [0, 1] the paper prints; absent for new rows
  double measuredMean = 0.0;        // test accuracy over the seeds
  double measuredMin = 0.0;
  double measuredMax = 0.0;
  std::vector<double> perSeed;
  std::optional<double> epsilon;  // the largest ε its accountant proves for a seed's run (absent: not private)
  double delta = 0.0;
  std::optional<double> sigma;  // noise multiplier (absent: not private)
  std::string accountant;       // "rdp", "pld", "sgld", "" for non-private
  std::string mechanism;        // "dp-sgd", …
  std::string settings;         // "m = 8192 (Poisson), η = 16, momentum 0.9, L = 0.1, 40 epochs"
  double seconds = 0.0;         // training time of its runs (all seeds)
  // Experiments that follow training epoch by epoch (Bu et al.'s Fig. 4): the test accuracy after
  // each epoch (mean over the seeds) and the ε spent by then (the largest over the seeds).
  std::vector<double> epochTestAccuracy;
  std::vector<double> epochEpsilon;
};

struct Reproduction {
  std::string experiment;
  std::string title;
  std::string citation;
  std::string data;                // the loaded data's description
  std::vector<std::string> notes;  // how this run differs from the paper's, and what it shows
  std::vector<ReproducedRow> rows;
  int seeds = 0;
  bool cancelled = false;
  double seconds = 0.0;  // end to end: loading, features, calibration, training
};

struct ReproductionControl {
  std::function<void(double)> progress;            // fraction of runs done
  std::function<void(const std::string&)> status;  // what is being done now ("ScatterNet features 40 %")
  const std::atomic<bool>* cancel = nullptr;
  int threads = 0;  // 0: all cores
};

// Runs experiment `id` with seeds 1 … seeds (1 ≤ seeds ≤ 20).
Result<Reproduction> reproduce(std::string_view id, int seeds, const ReproductionControl& control = {});

}  // namespace dpx::core::training
