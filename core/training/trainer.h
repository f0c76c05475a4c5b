// The trainer (SPEC §4): multinomial logistic regression trained by one of the mechanisms of
// mechanism.h, on a train/test split, in parallel with oneTBB inside a task_arena of the
// requested thread count, bit-identical for a seed whatever that count.
// Honesty: the ε it reports is what the mechanism's accountant proves for the run it performed —
// the same n, batch size, sampling scheme, noise, step sizes and number of steps. For the convex
// analyses (dp-sgld, cyclic, outpert) L is the data's Lipschitz bound √2·√(R² + 1) (R = largest
// row norm) and β the worst-case per-example smoothness (R² + 1)/2 + λ, both data-independent
// given the per-record scaling, so clipping never activates and the theorems apply; the
// empirical β of seed 000 Lemma 5.1 (λ_max(X̃ᵀX̃/n)/2 + λ) is reported for comparison.
// Per-epoch accuracies are diagnostics for the person running the trainer: training accuracy
// reads the private data, and for last-iterate mechanisms the intermediate models are not part
// of the release; the ε column says what releasing the model at that epoch would cost.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/status.h"
#include "training/dataset.h"
#include "training/mechanism.h"
#include "training/softmax_regression.h"

namespace dpx::core::training {

struct TrainerConfig {
  Mechanism mechanism = Mechanism::kDpSgld;
  // m, σ, η, δ, L (clip norm), λ, schedule and `averaged` are read; n comes from the training
  // set and K from `epochs`.
  Params knobs;
  double epochs = 10;
  // Calibrate σ (or η for sgld-posterior) to this ε at knobs.delta before training.
  std::optional<double> targetEpsilon;
  std::string accountant;  // dp-sgd: "rdp" (default), "gdp" or "pld"
  std::uint64_t seed = 1;
  int threads = 0;  // 0: all cores
};

// What the run will do, resolved from the config and the data.
struct ResolvedRun {
  Mechanism mechanism;
  std::string accountant;      // id, empty for sgd
  Params accountantParams;     // the run as its accountant sees it (n, m, K, σ, η, L, β, …)
  std::int64_t steps = 0;
  std::int64_t stepsPerEpoch = 0;
  int epochs = 0;
  double sigma = 0.0;          // noise multiplier used (after calibration; sgld-posterior: τ/(L√(ηN)))
  double eta = 0.0;            // step size (η₀ / η₁ of a schedule)
  double clipNorm = 0.0;       // L used for clipping
  double lipschitzFromData = 0.0;
  double betaUsed = 0.0;       // worst-case per-example smoothness
  double betaEmpirical = 0.0;  // seed 000 Lemma 5.1
  double outputNoiseStd = 0.0;  // outpert: s = σΔ_E
  std::vector<std::string> notes;       // what was derived and why
  std::vector<std::string> violations;  // accountant assumptions the run breaks
};

struct EpochRecord {
  int epoch = 0;
  std::int64_t steps = 0;
  double trainAccuracy = 0.0;
  double testAccuracy = 0.0;
  double loss = 0.0;                   // mean training cross-entropy
  std::optional<double> epsilonSpent;  // ε of releasing the model now (absent for sgd)
  double seconds = 0.0;                // training time so far (evaluation excluded)
};

struct TrainingResult {
  ResolvedRun run;
  std::optional<double> epsilon;  // final ε at δ; absent for the non-private baseline
  double delta = 0.0;
  std::vector<EpochRecord> history;
  bool cancelled = false;
  std::int64_t stepsDone = 0;
  std::int64_t examplesProcessed = 0;
  std::int64_t clippedExamples = 0;
  double trainingSeconds = 0.0;     // gradient steps only
  double seconds = 0.0;             // wall time including evaluation
  double secondsToFirstEpoch = 0.0;
  double finalTrainAccuracy = 0.0;
  double finalTestAccuracy = 0.0;
  SoftmaxModel model{0, 0};         // the released model
};

// Shared between the GUI thread and the worker: cancel takes effect within one step.
class TrainingControl {
 public:
  void requestCancel() { m_cancel.store(true); }
  void setPaused(bool paused) { m_pause.store(paused); }
  bool cancelRequested() const { return m_cancel.load(std::memory_order_relaxed); }
  bool pauseRequested() const { return m_pause.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_pause{false};
};

struct TrainerCallbacks {
  // Called at most ~30 times a second from the training thread.
  std::function<void(double fraction, std::int64_t step)> progress;
  // Called after each epoch's evaluation, from the training thread.
  std::function<void(const EpochRecord&)> epochDone;
};

class Trainer {
 public:
  // Validates, computes β and L from the data, calibrates in target-ε mode.
  static Result<std::unique_ptr<Trainer>> create(const TrainerConfig& config,
                                                 std::shared_ptr<const TrainTestSplit> data);
  const ResolvedRun& resolved() const { return m_run; }
  const TrainerConfig& config() const { return m_config; }
  // Trains to the end, or until cancelled (then the result says so, with ε for the steps run).
  Result<TrainingResult> run(TrainingControl* control = nullptr, const TrainerCallbacks& callbacks = {});

 private:
  Trainer(TrainerConfig config, std::shared_ptr<const TrainTestSplit> data, ResolvedRun run)
      : m_config(std::move(config)), m_data(std::move(data)), m_run(std::move(run)) {}
  // ε of releasing the model after `steps` steps; for outpert `averagedRelease` says whether the
  // released θ is the last epoch's average (Prop. 3) or the plain iterate.
  std::optional<double> epsilonAfter(std::int64_t steps, bool averagedRelease = false) const;
  TrainerConfig m_config;
  std::shared_ptr<const TrainTestSplit> m_data;
  ResolvedRun m_run;
};

}  // namespace dpx::core::training
