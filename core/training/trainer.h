// The trainer: multinomial logistic regression trained by one of the mechanisms of mechanism.h,
// on a train/test split, in parallel with oneTBB (in an arena of the requested thread count, or
// in the caller's arena when several trainers run side by side), bit-identical for a seed
// whatever the thread count.
// Honesty: the ε it reports is what the mechanism's accountant proves for the run it performed —
// the same n, batch size, sampling scheme, noise, step sizes and number of steps (or, with an
// accountant that only estimates ε, dp-sgd's `gdp`, that estimate, marked as one). For the convex
// analyses (dp-sgld, cyclic, outpert) L is the data's Lipschitz bound √2·√(R² + 1) (R = largest
// row norm) and β the worst-case per-example smoothness (R² + 1)/2 + λ, both data-independent
// given the per-record scaling, so clipping never activates and the theorems apply; the
// empirical β of Ryffel, Bach & Pointcheval 2022, Lemma 5.1 (λ_max(X̃ᵀX̃/n)/2 + λ) is reported
// for comparison. Where the run uses another value than the caller's knob (n from the data, K
// from the epochs, L and β from the data, σ or η from calibration) it says so in `overrides`.
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
#include "training/model.h"
#include "training/softmax_regression.h"

namespace dpx::core::training {

// The split's DataBounds: those it carries (a source whose own test set it kept, read from the
// dataset cache), else computed from its rows.
DataBounds computeDataBounds(const TrainTestSplit& data);

// Whether `mechanism` may train `model`: a network only by the mechanisms whose accountants hold
// for any loss (dp-sgd, sgld-posterior, sgd); the convex analyses' refusal says why.
Status mechanismTrainsModel(Mechanism mechanism, const ModelSpec& model);

struct TrainerConfig {
  Mechanism mechanism = Mechanism::kDpSgld;
  // What is trained: softmax regression (convex: every mechanism), or a network (mlp, cnn,
  // scatter-cnn: not convex, so only the mechanisms whose accountants compose — dp-sgd,
  // sgld-posterior, sgd — may train it).
  ModelSpec model;
  // m, σ, η, δ, L (clip norm), λ, schedule, sampling and `averaged` are read; n comes from the
  // training set and K from `epochs` (K = ⌈E·n/m⌉, or whole passes for pass-based samplers).
  // A set `sampling` replaces the mechanism's own sampler (its accountant then says whether its
  // analysis still applies).
  Params knobs;
  double epochs = 10;
  // Calibrate σ (or η for sgld-posterior) to this ε at knobs.delta before training.
  std::optional<double> targetEpsilon;
  std::string accountant;  // dp-sgd: "rdp" (default), "gdp" or "pld"
  std::uint64_t seed = 1;
  int threads = 0;  // 0: all cores
  // Run in the caller's oneTBB arena (trainers side by side share its threads) instead of an
  // arena of `threads`; results are the same either way.
  bool useCallerArena = false;
  // Evaluate accuracy, loss and ε at every epoch end (the charts). Off: only the final model is
  // evaluated (the frontier, which needs one number per run).
  bool evaluateEachEpoch = true;
  // sgld-posterior: share of the steps discarded as burn-in before the step-weighted posterior
  // average (Li, Chen, Liu & Carin 2019, Lemma 6).
  double posteriorBurnIn = 0.5;
  // Data constants computed beforehand (computeDataBounds); unset: create() computes them.
  std::optional<DataBounds> bounds;
  // η = 1/(2β) with β the run's per-example smoothness bound (R² + 1)/2 + λ, which the
  // preprocessing fixes (β ≈ 1 on unit-norm rows, ≈ 1985 on GroupNorm'd ScatterNet features):
  // the step of Ryffel, Bach & Pointcheval 2022's utility analysis (Lemma 4.1 needs η ≤ 1/(2β)),
  // below the Langevin bound's η < 1/β and output perturbation's η < 2/β. Replaces knobs.eta.
  bool etaFromSmoothness = false;
  // The optimiser's constants (the optimiser itself is knobs.optimizer, or the mechanism's own):
  // heavy-ball momentum μ (PyTorch's convention: v ← μv + g, θ ← θ − ηv), and Adam's β₁, β₂, ε.
  double momentum = 0.9;
  double adamBeta1 = 0.9;
  double adamBeta2 = 0.999;
  double adamEpsilon = 1e-8;
};

// A value the run uses instead of the caller's knob, and why (shown beside the knob's value).
struct KnobOverride {
  std::string knob;  // key of the knob table: "n", "K", "sigma", "eta", "L", "beta", "sampling"
  double knobValue = 0.0;
  double usedValue = 0.0;
  std::string reason;
};

// What the run will do, resolved from the config and the data.
struct ResolvedRun {
  Mechanism mechanism = Mechanism::kSgd;
  std::string accountant;                  // id, empty for sgd
  bool epsilonIsEstimate = false;          // the accountant's ε is an estimate, not a proven bound (gdp)
  Params accountantParams;                 // the run as its accountant sees it (n, m, K, σ, η, L, β, …)
  Sampling sampling = Sampling::kPoisson;  // the sampler the run uses
  Optimizer optimizer = Optimizer::kSgd;   // the optimiser the run uses
  std::int64_t steps = 0;
  std::int64_t stepsPerEpoch = 0;
  int epochs = 0;
  double sigma = 0.0;     // noise multiplier used (after calibration; sgld-posterior: τ/(L√(ηN)))
  double eta = 0.0;       // step size (η₀ / η₁ of a schedule)
  double clipNorm = 0.0;  // L used for clipping
  double lipschitzFromData = 0.0;
  double betaUsed = 0.0;                // worst-case per-example smoothness
  double betaEmpirical = 0.0;           // Ryffel et al. 2022, Lemma 5.1
  double outputNoiseStd = 0.0;          // outpert: s = σΔ_E
  std::vector<KnobOverride> overrides;  // values used instead of the caller's knobs
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

// sgld-posterior's estimate of the posterior mean: θ̄ = Σ_{t>B} η_t θ_t / Σ_{t>B} η_t over the
// steps after the burn-in B (Li, Chen, Liu & Carin 2019, Lemma 6). A post-processing of the
// iterates `sgmcmc` already accounts for, so it costs no extra privacy.
struct PosteriorAverage {
  std::int64_t burnInSteps = 0;
  std::int64_t averagedSteps = 0;
  double weightSum = 0.0;  // Σ η_t over the averaged steps
  double trainAccuracy = 0.0;
  double testAccuracy = 0.0;
  double loss = 0.0;  // mean training cross-entropy of θ̄
};

struct TrainingResult {
  ResolvedRun run;
  std::optional<double> epsilon;  // final ε at δ; absent for the non-private baseline
  double delta = 0.0;
  std::vector<EpochRecord> history;
  bool cancelled = false;
  std::int64_t stepsDone = 0;
  std::int64_t examplesProcessed = 0;
  std::int64_t examplesEvaluated = 0;  // rows run through the model by the evaluations
  std::int64_t clippedExamples = 0;
  double trainingSeconds = 0.0;  // gradient steps only
  double seconds = 0.0;          // wall time including evaluation
  double secondsToFirstEpoch = 0.0;
  double finalTrainAccuracy = 0.0;
  double finalTestAccuracy = 0.0;
  double finalLoss = 0.0;
  std::optional<PosteriorAverage> posteriorAverage;  // sgld-posterior
  Model model;                                       // the released model
};

// Shared between the GUI thread and the worker: cancel takes effect within one step.
class TrainingControl {
 public:
  TrainingControl() = default;
  // Also cancelled when `external` becomes true (a caller's cancel flag for many runs).
  explicit TrainingControl(const std::atomic<bool>* external) : m_external(external) {}
  void requestCancel() { m_cancel.store(true); }
  void setPaused(bool paused) { m_pause.store(paused); }
  bool cancelRequested() const {
    return m_cancel.load(std::memory_order_relaxed) || (m_external && m_external->load(std::memory_order_relaxed));
  }
  bool pauseRequested() const { return m_pause.load(std::memory_order_relaxed); }
  // This control's own cancel flag, for work the run waits for (a feature extraction).
  const std::atomic<bool>* cancelFlag() const { return &m_cancel; }

 private:
  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_pause{false};
  const std::atomic<bool>* m_external = nullptr;
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
  // The same resolved run (calibration included) with another seed: the frontier trains one
  // calibrated configuration several times.
  std::unique_ptr<Trainer> withSeed(std::uint64_t seed) const;
  // Trains to the end, or until cancelled (then the result says so, with ε for the steps run).
  Result<TrainingResult> run(TrainingControl* control = nullptr, const TrainerCallbacks& callbacks = {});
  // ε of releasing the model after `steps` steps; for outpert `averagedRelease` says whether the
  // released θ is the last epoch's average (Prop. 3) or the plain iterate.
  std::optional<double> epsilonAfter(std::int64_t steps, bool averagedRelease = false) const;
  // The model a run with this seed starts from (create() checked that it fits the data).
  Model initialModel(std::uint64_t seed) const;

 private:
  Trainer(TrainerConfig config, std::shared_ptr<const TrainTestSplit> data, ResolvedRun run)
      : m_config(std::move(config)), m_data(std::move(data)), m_run(std::move(run)) {}
  TrainerConfig m_config;
  std::shared_ptr<const TrainTestSplit> m_data;
  ResolvedRun m_run;
};

// The work of a run in forward multiply-adds (`forwardMacs` per example, forwardMacsOf): its
// gradient examples (a network's counted as three passes: forward, backward, per-example norms;
// the softmax kernel's fused gradient as one) plus one pass over the training and test rows per
// evaluation. Estimates divide it by a measured rate.
double trainingWork(const TrainerConfig& config, std::int64_t trainRecords, std::int64_t testRecords,
                    double forwardMacs);

}  // namespace dpx::core::training
