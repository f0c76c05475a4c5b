#include "training/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include "accounting/calibration.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/stepsize_analysis.h"
#include "common/format.h"
#include "common/parallel.h"
#include "training/rng.h"
#include "training/samplers.h"

namespace dpx::core::training {
namespace {

using Clock = std::chrono::steady_clock;
using accounting::Accountant;

constexpr std::size_t kNoiseParts = 8;  // fixed, so noise does not depend on the thread count
constexpr std::int64_t kMaxSteps = 10'000'000;

// The mechanisms that follow the decreasing schedule: η_k = 1/(2β + λk/2) (Ryffel, Bach &
// Pointcheval 2022, §5.2, whose Table 2 runs it for DP-SGLD, DP-SGD and non-private SGD alike; the
// step size does not enter DP-SGD's accounting), or sgld-posterior's η₁·t^{−1/3}. Cyclic and
// output perturbation are analysed for a constant step.
bool takesDecreasingSchedule(Mechanism m) {
  return m == Mechanism::kDpSgld || m == Mechanism::kDpSgd || m == Mechanism::kSgd || m == Mechanism::kSgldPosterior;
}

// Cyclic and shuffled samplers cut a permutation into ⌈n/m⌉ consecutive batches, and balls in
// bins spreads the records over ⌈n/m⌉ steps: a run is a whole number of passes.
bool walksPasses(Sampling s) {
  return s == Sampling::kCyclic || s == Sampling::kShuffle || s == Sampling::kBallsInBins;
}

// A fresh permutation every pass (shuffled batches), except for output perturbation: Chen, Lee &
// Kifer's sensitivity bound contracts over exactly one pass between two visits of a record, which
// holds only if every pass uses the same order.
bool reshufflesEachPass(Mechanism m, Sampling s) { return s == Sampling::kShuffle && m != Mechanism::kOutpert; }

// Elements [begin, end) of part `part` when a vector of `size` elements is cut into kNoiseParts.
std::pair<std::size_t, std::size_t> noisePart(std::size_t size, std::size_t part) {
  const std::size_t partSize = (size + kNoiseParts - 1) / kNoiseParts;
  const std::size_t begin = std::min(size, part * partSize);
  return {begin, std::min(size, begin + partSize)};
}

// Adds part `part` of N(0, stddev²)·I to `theta`, from the stream keyed by (index, part).
void addNoisePart(Eigen::VectorXf& theta, std::size_t part, double stddev, std::uint64_t seed, Stream stream,
                  std::uint64_t index) {
  const auto [begin, end] = noisePart(static_cast<std::size_t>(theta.size()), part);
  if (begin >= end) return;
  Xoshiro256 engine = streamFor(seed, stream, index, part);
  addGaussianNoise(std::span<float>(theta.data() + begin, end - begin), stddev, engine);
}

// Adds N(0, stddev²) to every parameter, from streams keyed by (step, part).
void addNoise(Eigen::VectorXf& theta, double stddev, std::uint64_t seed, Stream stream, std::uint64_t index) {
  if (stddev <= 0.0) return;
  parallelFor(std::size_t{0}, kNoiseParts,
              [&](std::size_t part) { addNoisePart(theta, part, stddev, seed, stream, index); });
}

void projectOntoBall(Eigen::VectorXf& theta, double radius) {
  const double norm = theta.cast<double>().norm();
  if (norm > radius) theta *= static_cast<float>(radius / norm);
}

std::string describe(double value) { return formatNumber(value, 4); }

// ---- Trainer::create, phase by phase ----------------------------------------------------------

Status validateConfig(const TrainerConfig& config, const TrainTestSplit* data) {
  if (!data) return Status::invalidArgument("no dataset");
  const Dataset& train = data->train;
  if (train.size() < 10) {
    return Status::invalidArgument("the training set has " + std::to_string(train.size()) +
                                   " records: the trainer needs at least 10");
  }
  if (train.numClasses < 2) return Status::invalidArgument("the training set needs at least 2 classes");
  if (data->test.size() > 0 && data->test.dimension() != train.dimension()) {
    return Status::invalidArgument("train and test sets differ in their number of features");
  }
  if (!std::isfinite(config.epochs) || config.epochs <= 0.0 || config.epochs > 100000.0) {
    return Status::invalidArgument("epochs = " + formatNumber(config.epochs) + " is out of range: must be in (0, 1e5]");
  }
  if (config.threads < 0 || config.threads > 1024) {
    return Status::invalidArgument("threads = " + std::to_string(config.threads) +
                                   " is out of range: must be in [0, 1024]");
  }
  if (!(config.momentum >= 0.0 && config.momentum < 1.0)) {
    return Status::invalidArgument("momentum = " + formatNumber(config.momentum) +
                                   " is out of range: the heavy-ball coefficient must be in [0, 1)");
  }
  if (!(config.adamBeta1 >= 0.0 && config.adamBeta1 < 1.0) || !(config.adamBeta2 >= 0.0 && config.adamBeta2 < 1.0) ||
      !(config.adamEpsilon > 0.0 && std::isfinite(config.adamEpsilon))) {
    return Status::invalidArgument("Adam's β₁ and β₂ must be in [0, 1) and its ε positive");
  }
  if (!(config.posteriorBurnIn >= 0.0 && config.posteriorBurnIn < 1.0)) {
    return Status::invalidArgument("posterior burn-in = " + formatNumber(config.posteriorBurnIn) +
                                   " is out of range: the share of discarded steps must be in [0, 1)");
  }
  if (config.knobs.m > train.size()) {
    return Status::invalidArgument("m = " + std::to_string(config.knobs.m) + " exceeds the " +
                                   std::to_string(train.size()) +
                                   " training records: the batch size must be in [1, n]");
  }
  return Status::ok();
}

// Steps: whole passes of k = ⌈n/m⌉ batches for the pass-based samplers, ⌈E·n/m⌉ otherwise.
Status resolveSteps(const TrainerConfig& config, const Params& p, ResolvedRun& run) {
  run.epochs = static_cast<int>(std::ceil(config.epochs - 1e-9));
  run.stepsPerEpoch = (p.n + p.m - 1) / p.m;
  if (walksPasses(run.sampling)) {
    run.steps = run.stepsPerEpoch * run.epochs;
  } else {
    DPX_ASSIGN_OR_RETURN(run.steps, stepsForEpochs(config.epochs, p.n, p.m));
  }
  if (run.steps > kMaxSteps) {
    return Status::invalidArgument(std::to_string(run.steps) + " steps: the trainer runs at most 1e7 steps");
  }
  return Status::ok();
}

// L and β from the data; the knobs the accountant reads for this run.
Status resolveDataConstants(const TrainerConfig& config, const DataBounds& bounds, Params& p, ResolvedRun& run) {
  const Mechanism mechanism = run.mechanism;
  const double R = bounds.maxRowNorm;
  run.lipschitzFromData = std::sqrt(2.0) * std::sqrt(R * R + 1.0);
  run.betaUsed = (R * R + 1.0) / 2.0 + p.lambda;
  run.betaEmpirical = bounds.gramEigenvalue / 2.0 + p.lambda;
  run.clipNorm = clipsWithUserNorm(mechanism) ? p.L : run.lipschitzFromData;
  if (mechanism == Mechanism::kSgd) run.clipNorm = std::numeric_limits<double>::infinity();
  p.K = std::max<std::int64_t>(1, run.steps);
  p.L = clipsWithUserNorm(mechanism) ? config.knobs.L : run.lipschitzFromData;
  p.beta = run.betaUsed;
  if (config.etaFromSmoothness) {
    p.eta = 1.0 / (2.0 * run.betaUsed);
    run.notes.push_back("η = 1/(2β) = " + describe(p.eta) + " from β = (R²+1)/2 + λ = " + describe(run.betaUsed) +
                        " (rows of norm ≤ " + describe(R) + ")");
  }
  p.w = 0.0;           // softmax cross-entropy is convex
  p.M = run.betaUsed;  // and its curvature is at most β
  p.sampling = run.sampling;
  p.optimizer = run.optimizer;  // what the run does, so that the analyses that need plain steps can say so
  if (run.optimizer != Optimizer::kSgd && mechanism == Mechanism::kDpSgd) {
    run.notes.push_back(std::string(optimizerName(run.optimizer)) +
                        (run.optimizer == Optimizer::kMomentum ? " (μ = " + describe(config.momentum) + ")" : "") +
                        " on the privatised gradient: post-processing, so ε is the same as with plain steps");
  }
  if (p.schedule == Schedule::kDecreasing && !takesDecreasingSchedule(mechanism)) {
    p.schedule = Schedule::kConstant;  // what the run does, and so what its accountant must read
    run.notes.push_back(std::string(mechanismId(mechanism)) +
                        " runs a constant step size η: its analysis assumes one (the decreasing schedule is "
                        "dp-sgld's, dp-sgd's, sgd's and sgld-posterior's)");
  }
  if (Status s = p.validate(); !s.isOk()) return s;
  if (mechanism == Mechanism::kDpSgld && !(p.lambda > 0.0)) {
    return Status::invalidArgument(
        "dp-sgld needs λ > 0: its projection radius L/λ and its start distribution "
        "N(0, 2σ_L²/λ·I) are undefined at λ = 0 (set --lambda)");
  }
  if (!clipsWithUserNorm(mechanism) && mechanism != Mechanism::kSgd) {
    run.notes.push_back("L = " + describe(run.lipschitzFromData) + " from the data (rows have norm ≤ " + describe(R) +
                        "; softmax gradients ≤ √2·√(R²+1)): clipping never activates, so the convex analysis applies");
  }
  if (mechanism == Mechanism::kDpSgld && p.lambda > 0.0 && static_cast<double>(p.K) * p.lambda < run.betaUsed) {
    run.notes.push_back("λ = " + describe(p.lambda) +
                        " is small for the Langevin bound: it saturates only once K ≫ β/λ = " +
                        describe(run.betaUsed / p.lambda) + " steps (this run: " + std::to_string(p.K) +
                        "), and its start N(0, 2σ_L²/λ·I) is wide; Ryffel et al.'s runs use β/λ ≈ 10⁴–10⁵");
  }
  if (!config.model.convex()) {
    run.notes.push_back("the " + std::string(modelKindName(config.model.kind)) +
                        " is not convex: its ε is composition's (rdp, gdp, pld and the sampler-aware accountants); "
                        "the Langevin, cyclic and output-perturbation analyses do not apply");
    return Status::ok();
  }
  run.notes.push_back("β = " + describe(run.betaUsed) +
                      " (per-example bound (R²+1)/2 + λ); empirical β of Ryffel et "
                      "al. 2022, Lemma 5.1 = " +
                      describe(run.betaEmpirical));
  return Status::ok();
}

// Target-ε mode: σ (η for sgld-posterior, whose noise the step size sets) from the accountant.
Status calibrate(const TrainerConfig& config, const Accountant* accountant, Params& p, ResolvedRun& run) {
  if (!config.targetEpsilon) return Status::ok();
  if (!accountant) return Status::invalidArgument("sgd is not private: a target ε needs a private mechanism");
  const double target = *config.targetEpsilon;
  if (run.mechanism == Mechanism::kSgldPosterior) {
    Result<accounting::StepSizeAnalysis> a = accounting::analyzeStepSize(p, target);
    if (!a) return a.status().withContext("calibrating the step size to ε = " + formatNumber(target));
    p.eta = p.schedule == Schedule::kDecreasing ? a->exactDecreasingEta1 : a->exactFixed;
    p.eta = std::clamp(p.eta, knobInfo(Knob::kEta).min, knobInfo(Knob::kEta).max);
    run.notes.push_back("η calibrated to ε = " + formatNumber(target) + ": " + formatNumber(p.eta));
    return Status::ok();
  }
  Result<accounting::Calibration> c = accounting::calibrateSigma(*accountant, p, target);
  if (!c) return c.status().withContext("calibrating σ to ε = " + formatNumber(target));
  p.sigma = c->sigma;
  run.notes.push_back("σ calibrated to ε = " + formatNumber(target) + " with " + run.accountant + ": " +
                      formatNumber(p.sigma));
  return Status::ok();
}

// The noise the run adds and the step size it starts from, as its analysis reads them.
Status resolveNoise(const Params& p, ResolvedRun& run) {
  // SGLD posterior sampling has no σ knob: its Langevin noise N(0, η/N) acts as the noise
  // multiplier τ/(L√(ηN)) of the subsampled Gaussian that `sgmcmc` accounts for.
  run.sigma = run.mechanism == Mechanism::kSgldPosterior ? accounting::sgmcmcNoiseMultiplier(p, p.eta) : p.sigma;
  run.eta = p.eta;
  if ((run.mechanism == Mechanism::kDpSgd || run.mechanism == Mechanism::kSgd) && p.schedule == Schedule::kDecreasing) {
    run.eta = 1.0 / (2.0 * p.beta);  // η₀ of η_k = 1/(2β + λk/2)
  }
  if (run.mechanism == Mechanism::kDpSgld) {
    const accounting::SgldSchedule schedule = accounting::sgldSchedule(p);
    DPX_RETURN_IF_ERROR(accounting::sgldScheduleStatus(p, schedule));
    run.eta = schedule.eta0;
  }
  if (run.mechanism == Mechanism::kOutpert) {
    DPX_ASSIGN_OR_RETURN(const accounting::OutputPerturbationConstants c, accounting::outputPerturbationConstants(p));
    run.outputNoiseStd = c.noiseStd;
  }
  return Status::ok();
}

void addOverride(ResolvedRun& run, const char* knob, double knobValue, double used, std::string reason) {
  if (knobValue == used) return;
  run.overrides.push_back({knob, knobValue, used, std::move(reason)});
}

// Every value the run uses instead of the caller's knob, with the reason in words.
void recordOverrides(const TrainerConfig& config, ResolvedRun& run) {
  const Params& knobs = config.knobs;
  const Params p = run.accountantParams;
  if (config.etaFromSmoothness && p.schedule == Schedule::kConstant) {
    addOverride(
        run, "eta", knobs.eta, run.eta,
        "η = 1/(2β) for this data's smoothness bound β = " + describe(run.betaUsed) + " (asked for with η = auto)");
  }
  addOverride(run, "n", static_cast<double>(knobs.n), static_cast<double>(p.n),
              "a run uses its training set: n = " + std::to_string(p.n) + " records");
  const std::string stepsReason =
      walksPasses(run.sampling)
          ? std::to_string(run.epochs) + " whole passes of " + std::to_string(run.stepsPerEpoch) +
                " batches (its sampler walks the data in passes)"
          : "K = ⌈E·n/m⌉ for E = " + describe(config.epochs) + " epochs of the " + std::to_string(p.n) + " records";
  addOverride(run, "K", static_cast<double>(knobs.K), static_cast<double>(run.steps), stepsReason);
  if (run.mechanism == Mechanism::kSgldPosterior) {
    addOverride(run, "sigma", knobs.sigma, run.sigma,
                "SGLD's noise N(0, η/N) is the noise multiplier τ/(L√(ηN)); the σ knob is not used");
  } else if (config.targetEpsilon && isPrivate(run.mechanism)) {
    addOverride(run, "sigma", knobs.sigma, run.sigma,
                "calibrated with " + run.accountant + " so that ε ≤ " + formatNumber(*config.targetEpsilon));
  }
  if (run.mechanism == Mechanism::kSgldPosterior && config.targetEpsilon) {
    addOverride(run, "eta", knobs.eta, run.eta,
                "the step size sets SGLD's noise: calibrated so that ε ≤ " + formatNumber(*config.targetEpsilon));
  }
  if (p.schedule == Schedule::kDecreasing && run.mechanism != Mechanism::kSgldPosterior &&
      takesDecreasingSchedule(run.mechanism)) {
    addOverride(run, "eta", knobs.eta, run.eta,
                "the decreasing schedule η_k = 1/(2β + λk/2) starts at 1/(2β); the η knob is not used");
  }
  if (!clipsWithUserNorm(run.mechanism) && isPrivate(run.mechanism)) {
    addOverride(run, "L", knobs.L, run.lipschitzFromData,
                "the convex analysis needs L to bound every gradient (√2·√(R²+1) for rows of norm ≤ R), so "
                "clipping never activates");
  }
  if (isPrivate(run.mechanism) && !clipsWithUserNorm(run.mechanism)) {
    addOverride(run, "beta", knobs.beta, run.betaUsed,
                "the per-example smoothness of softmax regression on this data, (R²+1)/2 + λ");
  }
}

}  // namespace

DataBounds computeDataBounds(const TrainTestSplit& data) {
  return data.bounds ? *data.bounds : dataBounds(data.train, data.test);
}

double trainingWork(const TrainerConfig& config, std::int64_t trainRecords, std::int64_t testRecords,
                    double forwardMacs) {
  const double epochs = std::max(1.0, std::ceil(config.epochs - 1e-9));
  const double gradientPasses = config.model.convex() ? 1.0 : 3.0;
  const double examples = gradientPasses * config.epochs * static_cast<double>(trainRecords);
  const double evaluations =
      (config.evaluateEachEpoch ? epochs : 1.0) * static_cast<double>(trainRecords + testRecords);
  return forwardMacs * (examples + evaluations);
}

Status mechanismTrainsModel(Mechanism mechanism, const ModelSpec& model) {
  if (model.convex()) return Status::ok();
  const std::string name(modelKindName(model.kind));
  switch (mechanism) {
    case Mechanism::kDpSgld:
      return Status::invalidArgument(
          "dp-sgld cannot train the " + name +
          ": its ε is the Langevin bound of Ryffel, Bach & Pointcheval 2022 (Thm 3.1), which needs a λ-strongly "
          "convex, β-smooth loss, and a network's loss is not convex. Use dp-sgd (or sgld-posterior), whose "
          "composition accountants hold for any loss, or --model linear");
    case Mechanism::kCyclic:
      return Status::invalidArgument(
          "cyclic cannot train the " + name +
          ": Kong & Ribero 2024's last-iterate bounds (Thm 4.4/4.5) need the loss's weak convexity w and upper "
          "curvature M (their A2) and unclipped gradients bounded by L, and no w or M can be certified for a "
          "network, whose curvature grows with its weights. Use dp-sgd, or --model linear");
    case Mechanism::kOutpert:
      return Status::invalidArgument(
          "outpert cannot train the " + name +
          ": output perturbation's sensitivity (Chen, Lee & Kifer 2019, Lemma 2) needs SGD to contract, which takes "
          "a λ-strongly convex, β-smooth loss, and a network's loss is not convex. Use dp-sgd, or --model linear");
    case Mechanism::kDpSgd:
    case Mechanism::kSgldPosterior:
    case Mechanism::kSgd:
      break;
  }
  return Status::ok();
}

namespace {

// The model reads the data (a CNN needs images), and a network is trained only by the
// mechanisms whose accountants hold for any loss: the others' analyses need a convex one.
Status validateModel(const TrainerConfig& config, const Dataset& train) {
  if (config.model.kind == ModelKind::kLinear) return Status::ok();
  DPX_RETURN_IF_ERROR(Model::create(config.model, train, config.seed).status());
  DPX_RETURN_IF_ERROR(mechanismTrainsModel(config.mechanism, config.model));
  if (config.etaFromSmoothness || config.knobs.schedule == Schedule::kDecreasing) {
    return Status::invalidArgument(
        std::string(config.etaFromSmoothness ? "η = auto" : "the decreasing schedule η_k = 1/(2β + λk/2)") +
        " reads the loss's smoothness β, which is certified for softmax regression ((R² + 1)/2 + λ) but not for the " +
        std::string(modelKindName(config.model.kind)) +
        ", whose curvature grows with its weights: set η (and a constant schedule), or --model linear");
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Trainer>> Trainer::create(const TrainerConfig& config,
                                                 std::shared_ptr<const TrainTestSplit> data) {
  DPX_RETURN_IF_ERROR(validateConfig(config, data.get()));
  DPX_RETURN_IF_ERROR(validateModel(config, data->train));
  ResolvedRun run;
  run.mechanism = config.mechanism;
  run.sampling = config.knobs.sampling.value_or(mechanismInfo(config.mechanism).sampling);
  run.optimizer = config.knobs.optimizer.value_or(defaultOptimizer(config.mechanism));
  DPX_ASSIGN_OR_RETURN(const std::string accountantId,
                       resolveAccountant(config.mechanism, config.accountant, config.knobs.sampling));
  run.accountant = accountantId;

  Params p = config.knobs;
  p.n = data->train.size();
  p.convexLoss = config.model.convex();
  DPX_RETURN_IF_ERROR(resolveSteps(config, p, run));
  const DataBounds bounds = config.bounds ? *config.bounds : computeDataBounds(*data);
  DPX_RETURN_IF_ERROR(resolveDataConstants(config, bounds, p, run));
  const Accountant* accountant = run.accountant.empty() ? nullptr : accounting::findAccountant(run.accountant);
  if (accountant && accountant->boundKind() != accounting::BoundKind::kUpper) {
    run.epsilonIsEstimate = true;
    run.notes.push_back("ε from " + run.accountant + " is an estimate (" + std::string(accountant->name()) +
                        "), not a proven bound: the run's true ε may be larger; rdp and pld bound it");
  }
  DPX_RETURN_IF_ERROR(calibrate(config, accountant, p, run));
  DPX_RETURN_IF_ERROR(resolveNoise(p, run));
  if (accountant) {
    for (const accounting::Violation& v : accountant->check(p)) run.violations.push_back(v.text());
  }
  run.accountantParams = p;
  recordOverrides(config, run);
  return std::unique_ptr<Trainer>(new Trainer(config, std::move(data), std::move(run)));
}

Model Trainer::initialModel(std::uint64_t seed) const {
  Result<Model> model = Model::create(m_config.model, m_data->train, seed);
  return model ? std::move(*model) : Model(SoftmaxModel(m_data->train.dimension(), m_data->train.numClasses));
}

std::unique_ptr<Trainer> Trainer::withSeed(std::uint64_t seed) const {
  TrainerConfig config = m_config;
  config.seed = seed;
  return std::unique_ptr<Trainer>(new Trainer(std::move(config), m_data, m_run));
}

std::optional<double> Trainer::epsilonAfter(std::int64_t steps, bool averagedRelease) const {
  if (m_run.accountant.empty()) return std::nullopt;
  if (steps <= 0) return 0.0;  // nothing private has been touched
  const Accountant* accountant = accounting::findAccountant(m_run.accountant);
  Params p = m_run.accountantParams;
  if (m_run.mechanism == Mechanism::kOutpert) {
    // Prop. 3's averaged release has the smaller ε; a plain iterate must be charged Prop. 2.
    p.averaged = p.averaged && averagedRelease;
    // Releasing θ_e with the run's final noise s = σΔ_E: ε_α = α(Δ_e/Δ_E)²/(2σ²).
    Params at = p;
    at.K = steps;
    auto now = accounting::outputPerturbationConstants(at);
    auto end = accounting::outputPerturbationConstants(p);
    if (!now || !end || now->sensitivity <= 0.0) return std::nullopt;
    p.sigma = p.sigma * end->sensitivity / now->sensitivity;
    p.sigma = std::min(p.sigma, knobInfo(Knob::kSigma).max);
  }
  p.K = steps;
  Result<accounting::EpsilonResult> e = accountant->epsilon(p);
  if (!e) return std::nullopt;
  return e->epsilon;
}

namespace {

// One run of the trainer as a loop of named steps: sample a batch → clipped gradient sum →
// the mechanism's update → progress → (at an epoch's end) evaluation; then the release.
class TrainingLoop {
 public:
  TrainingLoop(const Trainer& trainer, const TrainTestSplit& data, TrainingControl* control,
               const TrainerCallbacks& callbacks)
      : m_trainer(trainer),
        m_config(trainer.config()),
        m_run(trainer.resolved()),
        m_p(m_run.accountantParams),
        m_train(data.train),
        m_test(data.test),
        m_control(control),
        m_callbacks(callbacks),
        m_model(trainer.initialModel(trainer.config().seed)),
        m_uniform(data.train.size()),
        m_ballsInBins(data.train.size(), m_run.stepsPerEpoch),
        m_langevin(accounting::sgldSchedule(m_p)) {
    m_result.run = m_run;
    m_result.delta = m_p.delta;
  }

  TrainingResult run() {
    m_wallStart = Clock::now();
    start();
    std::int64_t nextEpochEnd = epochEnd(1);
    int epoch = 1;
    for (m_step = 0; m_step < m_run.steps; ++m_step) {
      if (!waitWhilePaused()) break;
      const auto stepStart = Clock::now();
      sampleBatch(m_step);
      const GradientStats stats = gradientAndNoise(m_step);
      m_result.examplesProcessed += static_cast<std::int64_t>(m_batch.size());
      m_result.clippedExamples += stats.clipped;
      applyUpdate(m_step);
      m_trainingSeconds += std::chrono::duration<double>(Clock::now() - stepStart).count();
      reportProgress(m_step + 1);
      if (m_step + 1 == nextEpochEnd) {
        endEpoch(epoch, m_step + 1);
        ++epoch;
        nextEpochEnd = epoch <= m_run.epochs ? epochEnd(epoch) : -1;
      }
    }
    release();
    return std::move(m_result);
  }

 private:
  // The start: a fixed data-independent order for cyclic/outpert passes; DP-SGLD's draw from
  // Π_C(N(0, 2σ_L²/λ·I)).
  void start() {
    if (walksPasses(m_run.sampling) && !reshufflesEachPass(m_run.mechanism, m_run.sampling)) {
      Xoshiro256 engine = streamFor(m_config.seed, Stream::kPermutation, 0);
      m_order = randomPermutation(m_train.size(), engine);
    }
    m_projectionRadius = m_p.lambda > 0.0 ? m_p.L / m_p.lambda : std::numeric_limits<double>::infinity();
    if (m_run.mechanism == Mechanism::kDpSgld) {
      addNoise(m_model.parameters(), std::sqrt(2.0 / m_p.lambda) * m_langevin.sigmaL, m_config.seed, Stream::kInit, 0);
      projectOntoBall(m_model.parameters(), m_projectionRadius);
    }
    if (m_run.mechanism == Mechanism::kSgldPosterior) {
      m_burnInSteps =
          static_cast<std::int64_t>(std::floor(m_config.posteriorBurnIn * static_cast<double>(m_run.steps)));
    }
  }

  // False when cancelled (the loop ends and the run is released as it is).
  bool waitWhilePaused() {
    if (!m_control) return true;
    while (m_control->pauseRequested() && !m_control->cancelRequested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
    if (m_control->cancelRequested()) m_result.cancelled = true;
    return !m_result.cancelled;
  }

  void sampleBatch(std::int64_t step) {
    Xoshiro256 engine = streamFor(m_config.seed, Stream::kBatch, static_cast<std::uint64_t>(step));
    const std::int64_t n = m_train.size();
    switch (m_run.sampling) {
      case Sampling::kPoisson:
        poissonBatch(n, m_p.q(), engine, m_batch);
        return;
      case Sampling::kUniform:
        m_uniform.sample(m_p.m, engine, m_batch);
        return;
      case Sampling::kBallsInBins: {
        const std::int64_t j = step % m_run.stepsPerEpoch;
        if (j == 0) {
          Xoshiro256 allocation =
              streamFor(m_config.seed, Stream::kPermutation, static_cast<std::uint64_t>(step / m_run.stepsPerEpoch));
          m_ballsInBins.allocate(allocation);
        }
        m_ballsInBins.batch(j, m_batch);
        return;
      }
      case Sampling::kCyclic:
      case Sampling::kShuffle:
        break;
    }
    const std::int64_t j = step % m_run.stepsPerEpoch;
    if (j == 0 && reshufflesEachPass(m_run.mechanism, m_run.sampling)) {
      Xoshiro256 permutation =
          streamFor(m_config.seed, Stream::kPermutation, static_cast<std::uint64_t>(step / m_run.stepsPerEpoch));
      m_order = randomPermutation(n, permutation);
    }
    const std::int64_t begin = j * m_p.m;
    const std::int64_t end = std::min(n, begin + m_p.m);
    m_batch.assign(m_order.begin() + begin, m_order.begin() + end);
    std::sort(m_batch.begin(), m_batch.end());
  }

  // The step's clipped gradient sum, and its noise drawn into m_noise meanwhile (the noise does
  // not depend on the gradient: one parallel loop does both). Squared row norms come from the rows
  // the kernel reads anyway, rather than from a pass over the whole training set per run.
  GradientStats gradientAndNoise(std::int64_t step) {
    m_noiseStd = noiseStd(step);
    if (!(m_noiseStd > 0.0))
      return m_model.clippedGradientSum(m_train, m_batch, m_run.clipNorm, m_workspace, m_gradient);
    m_noise.setZero(m_model.parameters().size());
    const auto index = static_cast<std::uint64_t>(step);
    return m_model.clippedGradientSum(
        m_train, m_batch, m_run.clipNorm, m_workspace, m_gradient, kNoiseParts,
        [&](std::size_t part) { addNoisePart(m_noise, part, m_noiseStd, m_config.seed, Stream::kNoise, index); });
  }

  // The standard deviation of the Gaussian noise step `step` adds per coordinate (0: none): to the
  // gradient sum for dp-sgd, to θ after the gradient step for the others.
  double noiseStd(std::int64_t step) const {
    const double m = static_cast<double>(m_p.m);
    const double eta = stepSize(step);
    switch (m_run.mechanism) {
      case Mechanism::kDpSgd:
        return m_p.sigma * m_run.clipNorm;
      case Mechanism::kDpSgld:
        return std::sqrt(2.0 * eta) * m_langevin.sigmaL;
      case Mechanism::kCyclic:
        return eta * m_p.sigma * m_run.clipNorm / m;
      case Mechanism::kSgldPosterior:
        return std::sqrt(eta / static_cast<double>(m_train.size()));
      case Mechanism::kOutpert:
      case Mechanism::kSgd:
        return 0.0;
    }
    return 0.0;
  }

  // Adds the step's noise drawn by gradientAndNoise.
  void addStepNoise(Eigen::VectorXf& target) const {
    if (m_noiseStd > 0.0) target += m_noise;
  }

  // η of step `step` (0-based) under the run's schedule.
  double stepSize(std::int64_t step) const {
    if (m_p.schedule == Schedule::kConstant) return m_p.eta;
    if (m_run.mechanism == Mechanism::kDpSgld || m_run.mechanism == Mechanism::kDpSgd ||
        m_run.mechanism == Mechanism::kSgd)
      return 1.0 / (2.0 * m_p.beta + m_p.lambda * static_cast<double>(step) / 2.0);
    if (m_run.mechanism == Mechanism::kSgldPosterior)
      return m_p.eta * std::pow(static_cast<double>(step + 1), -1.0 / 3.0);
    return m_p.eta;
  }

  // The mechanism's update; the gradient holds the batch's clipped gradient sum. Every mean
  // divides by the nominal batch size m (the expected size under Poisson sampling), never by the
  // realised |B|, so the sensitivity is the analysed one.
  void applyUpdate(std::int64_t step) {
    Eigen::VectorXf& theta = m_model.parameters();
    const double m = static_cast<double>(m_p.m);
    const double eta = stepSize(step);
    switch (m_run.mechanism) {
      case Mechanism::kDpSgd:  // θ ← θ − η[(1/m)(Σ clip(g) + σL·ξ) + λθ]
        addStepNoise(m_gradient);
        gradientStep(eta, m);
        return;
      case Mechanism::kDpSgld:  // θ ← Π_C(θ − η_k(∇L_B + λθ) + √(2η_k)σ_L ξ)
        gradientStep(eta, m);
        addStepNoise(theta);
        projectOntoBall(theta, m_projectionRadius);
        return;
      case Mechanism::kCyclic:  // nominal b = m even for a short last batch: sensitivity 2ηL/b
        gradientStep(eta, m);
        addStepNoise(theta);
        return;
      case Mechanism::kOutpert:
        gradientStep(eta, m);
        accumulateLastEpoch(step);
        return;
      case Mechanism::kSgldPosterior:  // θ ← θ − η_t(λθ + (1/τ)Σ clip(g)) + N(0, η_t/N)
        gradientStep(eta, m);
        addStepNoise(theta);
        accumulatePosterior(step, eta);
        return;
      case Mechanism::kSgd:
        gradientStep(eta, std::max<double>(1.0, static_cast<double>(m_batch.size())));
        return;
    }
  }

  // θ ← θ − η·step(g) for the gradient g = (clipped sum [+ noise])/divisor + λθ, by the run's
  // optimiser. Plain steps keep their historical arithmetic (one expression, bit for bit).
  void gradientStep(double eta, double divisor) {
    Eigen::VectorXf& theta = m_model.parameters();
    if (m_run.optimizer == Optimizer::kSgd) {
      theta -= static_cast<float>(eta / divisor) * m_gradient + static_cast<float>(eta * m_p.lambda) * theta;
      return;
    }
    m_gradient = m_gradient * static_cast<float>(1.0 / divisor) + static_cast<float>(m_p.lambda) * theta;
    if (m_run.optimizer == Optimizer::kMomentum) {
      if (m_velocity.size() == 0) m_velocity.setZero(theta.size());
      m_velocity = static_cast<float>(m_config.momentum) * m_velocity + m_gradient;
      theta -= static_cast<float>(eta) * m_velocity;
      return;
    }
    // Adam (Kingma & Ba 2015, Alg. 1) on the privatised gradient: Bu, Dong, Long & Su 2020's NoisyAdam.
    if (m_adamFirst.size() == 0) {
      m_adamFirst.setZero(theta.size());
      m_adamSecond.setZero(theta.size());
    }
    ++m_adamSteps;
    const auto b1 = static_cast<float>(m_config.adamBeta1);
    const auto b2 = static_cast<float>(m_config.adamBeta2);
    m_adamFirst = b1 * m_adamFirst + (1.0f - b1) * m_gradient;
    m_adamSecond = b2 * m_adamSecond + (1.0f - b2) * m_gradient.cwiseAbs2();
    const double firstCorrection = 1.0 - std::pow(m_config.adamBeta1, static_cast<double>(m_adamSteps));
    const double secondCorrection = 1.0 - std::pow(m_config.adamBeta2, static_cast<double>(m_adamSteps));
    const auto stepSize = static_cast<float>(eta / firstCorrection);
    const auto root = static_cast<float>(1.0 / std::sqrt(secondCorrection));
    const auto epsilon = static_cast<float>(m_config.adamEpsilon);
    theta.array() -= stepSize * m_adamFirst.array() / (m_adamSecond.array().sqrt() * root + epsilon);
  }

  // outpert's averaged release (Prop. 3): the mean of the last epoch's iterates.
  void accumulateLastEpoch(std::int64_t step) {
    if (!m_p.averaged || step < m_run.steps - m_run.stepsPerEpoch) return;
    if (m_lastEpochCount == 0) m_lastEpochSum.setZero(m_model.parameters().size());
    m_lastEpochSum += m_model.parameters();
    ++m_lastEpochCount;
  }

  // sgld-posterior's step-weighted average after the burn-in, in double (thousands of steps).
  void accumulatePosterior(std::int64_t step, double eta) {
    if (step < m_burnInSteps) return;
    if (m_posteriorSteps == 0) m_posteriorSum.setZero(m_model.parameters().size());
    m_posteriorSum += eta * m_model.parameters().cast<double>();
    m_posteriorWeight += eta;
    ++m_posteriorSteps;
  }

  void reportProgress(std::int64_t stepsDone) {
    if (!m_callbacks.progress || Clock::now() - m_lastProgress < std::chrono::milliseconds(33)) return;
    m_lastProgress = Clock::now();
    m_callbacks.progress(static_cast<double>(stepsDone) / static_cast<double>(m_run.steps), stepsDone);
  }

  // Epoch e (1-based) ends after this many steps.
  std::int64_t epochEnd(int e) const {
    if (walksPasses(m_run.sampling)) return std::min(m_run.steps, static_cast<std::int64_t>(e) * m_run.stepsPerEpoch);
    Result<std::int64_t> s = stepsForEpochs(std::min<double>(e, m_config.epochs), m_train.size(), m_p.m);
    return s ? std::min(m_run.steps, *s) : m_run.steps;
  }

  // What a release at this epoch would look like, evaluated: for outpert the model (the last
  // epoch's average at the end of an averaged run) plus its output noise.
  void endEpoch(int epoch, std::int64_t stepsDone) {
    if (!m_config.evaluateEachEpoch) return;
    EpochRecord record;
    record.epoch = epoch;
    record.steps = stepsDone;
    record.seconds = m_trainingSeconds;
    Model shown = m_model;
    bool averagedRelease = false;
    if (m_run.mechanism == Mechanism::kOutpert) {
      averagedRelease = m_p.averaged && stepsDone == m_run.steps && m_lastEpochCount > 0;
      if (averagedRelease) shown.parameters() = m_lastEpochSum / static_cast<float>(m_lastEpochCount);
      addNoise(shown.parameters(), m_run.outputNoiseStd, m_config.seed, Stream::kDisplayNoise,
               static_cast<std::uint64_t>(epoch));
    }
    const ModelEvaluation evaluation = evaluateOnBothSets(shown, stepsDone);
    record.trainAccuracy = evaluation.onTrain.accuracy;
    record.loss = evaluation.onTrain.meanLoss;
    record.testAccuracy = evaluation.testAccuracy;
    // outpert shows the model with display noise of its own, never the model itself.
    if (m_run.mechanism != Mechanism::kOutpert) m_modelEvaluation = evaluation;
    record.epsilonSpent = m_trainer.epsilonAfter(stepsDone, averagedRelease);
    m_result.history.push_back(record);
    if (m_result.history.size() == 1) {
      m_result.secondsToFirstEpoch = std::chrono::duration<double>(Clock::now() - m_wallStart).count();
    }
    if (m_callbacks.epochDone) m_callbacks.epochDone(record);
  }

  // The release. A cancelled outpert run is released too — with its output noise, which the
  // steps done need at least as much as the full run (Δ grows with the steps) — never bare.
  void release() {
    Eigen::VectorXf& theta = m_model.parameters();
    bool averagedRelease = false;
    if (m_run.mechanism == Mechanism::kOutpert) {
      averagedRelease = m_p.averaged && !m_result.cancelled && m_lastEpochCount > 0;
      if (averagedRelease) theta = m_lastEpochSum / static_cast<float>(m_lastEpochCount);
      addNoise(theta, m_run.outputNoiseStd, m_config.seed, Stream::kReleaseNoise, 0);
    }
    m_result.cancelled = m_result.cancelled || m_step < m_run.steps;
    m_result.stepsDone = m_step;
    m_result.trainingSeconds = m_trainingSeconds;
    m_result.model = m_model;
    m_result.epsilon = m_trainer.epsilonAfter(m_result.stepsDone, averagedRelease);
    // A run whose last epoch ended at its last step has just evaluated this very model: the
    // evaluation is deterministic, so a second pass over both sets would only repeat its numbers.
    if (!m_modelEvaluation || m_modelEvaluation->steps != m_step || m_run.mechanism == Mechanism::kOutpert) {
      m_modelEvaluation = evaluateOnBothSets(m_model, m_step);
    }
    m_result.finalTrainAccuracy = m_modelEvaluation->onTrain.accuracy;
    m_result.finalLoss = m_modelEvaluation->onTrain.meanLoss;
    m_result.finalTestAccuracy = m_modelEvaluation->testAccuracy;
    releasePosteriorAverage();
    if (m_result.clippedExamples > 0 && !clipsWithUserNorm(m_run.mechanism)) {
      m_result.run.violations.push_back("Lipschitz: " + std::to_string(m_result.clippedExamples) +
                                        " gradients exceeded the data bound L and were clipped");
    }
    if (m_callbacks.progress) {
      m_callbacks.progress(static_cast<double>(m_step) / static_cast<double>(std::max<std::int64_t>(1, m_run.steps)),
                           m_step);
    }
    m_result.seconds = std::chrono::duration<double>(Clock::now() - m_wallStart).count();
  }

  void releasePosteriorAverage() {
    if (m_run.mechanism != Mechanism::kSgldPosterior || m_posteriorSteps == 0 || !(m_posteriorWeight > 0.0)) return;
    Model average = m_model;
    average.parameters() = (m_posteriorSum / m_posteriorWeight).cast<float>();
    PosteriorAverage a;
    a.burnInSteps = m_burnInSteps;
    a.averagedSteps = m_posteriorSteps;
    a.weightSum = m_posteriorWeight;
    const ModelEvaluation evaluation = evaluateOnBothSets(average, m_step, false);
    a.trainAccuracy = evaluation.onTrain.accuracy;
    a.loss = evaluation.onTrain.meanLoss;
    a.testAccuracy = evaluation.testAccuracy;
    m_result.posteriorAverage = a;
  }

  // The last evaluation of m_model itself (not of a noised or averaged copy), after `steps` steps.
  struct ModelEvaluation {
    std::int64_t steps = 0;
    Evaluation onTrain;
    double testAccuracy = 0.0;
  };

  // `model` on the training and the test set (test accuracy 0 without test records); `counted`:
  // the rows count towards examplesEvaluated.
  ModelEvaluation evaluateOnBothSets(const Model& model, std::int64_t steps, bool counted = true) {
    const Dataset* const sets[] = {&m_train, &m_test};
    const std::vector<Evaluation> e = model.evaluate(std::span(sets, m_test.size() > 0 ? 2 : 1));
    if (counted) m_result.examplesEvaluated += m_train.size() + m_test.size();
    return {steps, e[0], m_test.size() > 0 ? e[1].accuracy : 0.0};
  }

  const Trainer& m_trainer;
  const TrainerConfig& m_config;
  const ResolvedRun& m_run;
  const Params& m_p;
  const Dataset& m_train;
  const Dataset& m_test;
  TrainingControl* m_control;
  const TrainerCallbacks& m_callbacks;
  TrainingResult m_result;
  Model m_model;
  GradientWorkspace m_workspace;
  Eigen::VectorXf m_gradient;
  Eigen::VectorXf m_noise;                    // the current step's noise (when m_noiseStd > 0)
  Eigen::VectorXf m_velocity;                 // momentum's v
  Eigen::VectorXf m_adamFirst, m_adamSecond;  // Adam's moment estimates
  std::int64_t m_adamSteps = 0;
  double m_noiseStd = 0.0;
  std::vector<std::int64_t> m_batch;
  UniformBatchSampler m_uniform;
  BallsInBinsSampler m_ballsInBins;
  std::vector<std::int64_t> m_order;
  const accounting::SgldSchedule m_langevin;
  double m_projectionRadius = std::numeric_limits<double>::infinity();
  Eigen::VectorXf m_lastEpochSum;
  std::int64_t m_lastEpochCount = 0;
  std::int64_t m_burnInSteps = 0;
  Eigen::VectorXd m_posteriorSum;
  double m_posteriorWeight = 0.0;
  std::int64_t m_posteriorSteps = 0;
  std::optional<ModelEvaluation> m_modelEvaluation;
  std::int64_t m_step = 0;
  double m_trainingSeconds = 0.0;
  Clock::time_point m_wallStart;
  Clock::time_point m_lastProgress = Clock::now() - std::chrono::seconds(1);
};

}  // namespace

Result<TrainingResult> Trainer::run(TrainingControl* control, const TrainerCallbacks& callbacks) {
  TrainingLoop loop(*this, *m_data, control, callbacks);
  if (m_config.useCallerArena) return loop.run();
  return inArena(m_config.threads, [&] { return loop.run(); });
}

}  // namespace dpx::core::training
