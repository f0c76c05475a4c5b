#include "training/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "accounting/calibration.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/stepsize_analysis.h"
#include "common/format.h"
#include "training/rng.h"
#include "training/samplers.h"

namespace dpx::core::training {
namespace {

using Clock = std::chrono::steady_clock;
using accounting::Accountant;

constexpr std::size_t kNoiseParts = 8;  // fixed, so noise does not depend on the thread count

Sampling samplingOf(Mechanism m) {
  switch (m) {
    case Mechanism::kDpSgd:
    case Mechanism::kSgldPosterior: return Sampling::kPoisson;
    case Mechanism::kDpSgld: return Sampling::kUniform;
    case Mechanism::kCyclic: return Sampling::kCyclic;
    case Mechanism::kOutpert:
    case Mechanism::kSgd: return Sampling::kShuffle;
  }
  return Sampling::kPoisson;
}

bool passesOverData(Mechanism m) {
  return m == Mechanism::kCyclic || m == Mechanism::kOutpert || m == Mechanism::kSgd;
}

// Adds N(0, stddev²) to every parameter, from streams keyed by (step, part).
void addNoise(Eigen::VectorXf& theta, double stddev, std::uint64_t seed, Stream stream, std::uint64_t index) {
  if (stddev <= 0.0) return;
  const auto size = static_cast<std::size_t>(theta.size());
  const std::size_t partSize = (size + kNoiseParts - 1) / kNoiseParts;
  tbb::parallel_for(std::size_t{0}, kNoiseParts, [&](std::size_t part) {
    const std::size_t begin = part * partSize;
    if (begin >= size) return;
    const std::size_t end = std::min(size, begin + partSize);
    Xoshiro256 engine = streamFor(seed, stream, index, part);
    addGaussianNoise(std::span<float>(theta.data() + begin, end - begin), stddev, engine);
  });
}

void projectOntoBall(Eigen::VectorXf& theta, double radius) {
  const double norm = theta.cast<double>().norm();
  if (norm > radius) theta *= static_cast<float>(radius / norm);
}

std::string describe(double value) { return formatNumber(value, 4); }

}  // namespace

Result<std::unique_ptr<Trainer>> Trainer::create(const TrainerConfig& config,
                                                 std::shared_ptr<const TrainTestSplit> data) {
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
    return Status::invalidArgument("threads = " + std::to_string(config.threads) + " is out of range: must be in [0, 1024]");
  }
  const Mechanism mechanism = config.mechanism;
  ResolvedRun run;
  run.mechanism = mechanism;
  const auto accountants = accountantsFor(mechanism);
  if (!accountants.empty()) {
    run.accountant = config.accountant.empty() ? std::string(accountants.front()) : config.accountant;
    if (std::find(accountants.begin(), accountants.end(), run.accountant) == accountants.end()) {
      std::string allowed;
      for (std::string_view a : accountants) allowed += (allowed.empty() ? "" : ", ") + std::string(a);
      return Status::invalidArgument("accountant '" + run.accountant + "' does not analyse " +
                                     std::string(mechanismId(mechanism)) + ": use " + allowed);
    }
  }

  Params p = config.knobs;
  p.n = train.size();
  if (p.m > p.n) {
    return Status::invalidArgument("m = " + std::to_string(p.m) + " exceeds the " + std::to_string(p.n) +
                                   " training records: the batch size must be in [1, n]");
  }
  const double R = std::max(train.maxRowNorm(), data->test.size() > 0 ? data->test.maxRowNorm() : 0.0);
  run.lipschitzFromData = std::sqrt(2.0) * std::sqrt(R * R + 1.0);
  run.betaUsed = (R * R + 1.0) / 2.0 + p.lambda;
  run.betaEmpirical = largestEigenvalueOfGram(train) / 2.0 + p.lambda;
  run.clipNorm = clipsWithUserNorm(mechanism) ? p.L : run.lipschitzFromData;
  if (mechanism == Mechanism::kSgd) run.clipNorm = std::numeric_limits<double>::infinity();

  // Steps: passes of k = ⌈n/m⌉ batches for the permutation-based mechanisms, ⌈E·n/m⌉ otherwise.
  run.epochs = static_cast<int>(std::ceil(config.epochs - 1e-9));
  if (passesOverData(mechanism)) {
    run.stepsPerEpoch = (p.n + p.m - 1) / p.m;
    run.steps = run.stepsPerEpoch * run.epochs;
  } else {
    Result<std::int64_t> steps = stepsForEpochs(config.epochs, p.n, p.m);
    if (!steps) return steps.status();
    run.steps = *steps;
    run.stepsPerEpoch = (p.n + p.m - 1) / p.m;
  }
  if (run.steps > 10'000'000) {
    return Status::invalidArgument(std::to_string(run.steps) + " steps: the trainer runs at most 1e7 steps");
  }
  p.K = std::max<std::int64_t>(1, run.steps);
  p.L = clipsWithUserNorm(mechanism) ? config.knobs.L : run.lipschitzFromData;
  p.beta = run.betaUsed;
  p.w = 0.0;           // softmax cross-entropy is convex
  p.M = run.betaUsed;  // and its curvature is at most β
  p.sampling = samplingOf(mechanism);
  if (Status s = p.validate(); !s.isOk()) return s;
  if (mechanism == Mechanism::kDpSgld && !(p.lambda > 0.0)) {
    return Status::invalidArgument("dp-sgld needs λ > 0: its projection radius L/λ and its start distribution "
                                   "N(0, 2σ_L²/λ·I) are undefined at λ = 0 (set --lambda)");
  }

  if (!clipsWithUserNorm(mechanism) && mechanism != Mechanism::kSgd) {
    run.notes.push_back("L = " + describe(run.lipschitzFromData) + " from the data (rows have norm ≤ " + describe(R) +
                        "; softmax gradients ≤ √2·√(R²+1)): clipping never activates, so the convex analysis applies");
    if (config.knobs.L < run.lipschitzFromData) {
      run.notes.push_back("the L knob (" + describe(config.knobs.L) + ") is below the data's Lipschitz bound; the run "
                          "uses " + describe(run.lipschitzFromData));
    }
  }
  run.notes.push_back("β = " + describe(run.betaUsed) + " (per-example bound (R²+1)/2 + λ); empirical β of seed 000 "
                      "Lemma 5.1 = " + describe(run.betaEmpirical));

  const Accountant* accountant = run.accountant.empty() ? nullptr : accounting::findAccountant(run.accountant);
  if (config.targetEpsilon) {
    if (!accountant) return Status::invalidArgument("sgd is not private: a target ε needs a private mechanism");
    const double target = *config.targetEpsilon;
    if (mechanism == Mechanism::kSgldPosterior) {
      Result<accounting::StepSizeAnalysis> a = accounting::analyzeStepSize(p, target);
      if (!a) return a.status().withContext("calibrating the step size to ε = " + formatNumber(target));
      p.eta = p.schedule == Schedule::kDecreasing ? a->exactDecreasingEta1 : a->exactFixed;
      p.eta = std::clamp(p.eta, knobInfo(Knob::kEta).min, knobInfo(Knob::kEta).max);
      run.notes.push_back("η calibrated to ε = " + formatNumber(target) + ": " + formatNumber(p.eta));
    } else {
      Result<accounting::Calibration> c = accounting::calibrateSigma(*accountant, p, target);
      if (!c) return c.status().withContext("calibrating σ to ε = " + formatNumber(target));
      p.sigma = c->sigma;
      run.notes.push_back("σ calibrated to ε = " + formatNumber(target) + " with " + run.accountant + ": " +
                          formatNumber(p.sigma));
    }
  }
  // SGLD posterior sampling has no σ knob: its Langevin noise N(0, η/N) acts as the noise
  // multiplier τ/(L√(ηN)) of the subsampled Gaussian that `sgmcmc` accounts for.
  run.sigma = mechanism == Mechanism::kSgldPosterior ? accounting::sgmcmcNoiseMultiplier(p, p.eta) : p.sigma;
  run.eta = p.eta;
  if (mechanism == Mechanism::kDpSgld) {
    const accounting::SgldSchedule schedule = accounting::sgldSchedule(p);
    DPX_RETURN_IF_ERROR(accounting::sgldScheduleStatus(p, schedule));
    run.eta = schedule.eta0;
  }
  if (mechanism == Mechanism::kOutpert) {
    Result<accounting::OutputPerturbationConstants> c = accounting::outputPerturbationConstants(p);
    if (!c) return c.status();
    run.outputNoiseStd = c->noiseStd;
  }
  if (accountant) {
    for (const accounting::Violation& v : accountant->check(p)) run.violations.push_back(v.assumption + ": " + v.reason);
  }
  run.accountantParams = p;
  return std::unique_ptr<Trainer>(new Trainer(config, std::move(data), std::move(run)));
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

Result<TrainingResult> Trainer::run(TrainingControl* control, const TrainerCallbacks& callbacks) {
  const Dataset& train = m_data->train;
  const Dataset& test = m_data->test;
  const ResolvedRun& r = m_run;
  const Params& p = r.accountantParams;
  const Mechanism mechanism = r.mechanism;
  const std::uint64_t seed = m_config.seed;
  const std::int64_t n = train.size();
  const double m = static_cast<double>(p.m);

  TrainingResult result;
  result.run = r;
  result.delta = p.delta;
  SoftmaxModel model(train.dimension(), train.numClasses);
  Eigen::VectorXf& theta = model.parameters();
  const std::vector<float> squaredNorms = squaredRowNorms(train.features);
  GradientWorkspace workspace;
  Eigen::VectorXf gradient;
  std::vector<std::int64_t> batch;
  UniformBatchSampler uniform(n);
  std::vector<std::int64_t> order;
  if (mechanism == Mechanism::kCyclic || mechanism == Mechanism::kOutpert) {
    Xoshiro256 engine = streamFor(seed, Stream::kPermutation, 0);
    order = randomPermutation(n, engine);  // fixed for the whole run, data-independent
  }
  const accounting::SgldSchedule langevin = accounting::sgldSchedule(p);
  const double projectionRadius = p.lambda > 0.0 ? p.L / p.lambda : std::numeric_limits<double>::infinity();
  if (mechanism == Mechanism::kDpSgld) {
    addNoise(theta, std::sqrt(2.0 / p.lambda) * langevin.sigmaL, seed, Stream::kInit, 0);
    projectOntoBall(theta, projectionRadius);
  }
  Eigen::VectorXf lastEpochSum;
  std::int64_t lastEpochCount = 0;

  // Epoch e (1-based) ends after this many steps.
  auto epochEnd = [&](int e) -> std::int64_t {
    if (passesOverData(mechanism)) return std::min(r.steps, static_cast<std::int64_t>(e) * r.stepsPerEpoch);
    Result<std::int64_t> s = stepsForEpochs(std::min<double>(e, m_config.epochs), n, p.m);
    return s ? std::min(r.steps, *s) : r.steps;
  };

  const auto wallStart = Clock::now();
  double trainingSeconds = 0.0;
  auto lastProgress = Clock::now() - std::chrono::seconds(1);
  int epoch = 1;
  std::int64_t nextEpochEnd = epochEnd(1);
  bool cancelled = false;
  std::int64_t step = 0;

  auto evaluateEpoch = [&](int e, std::int64_t stepsDone) {
    EpochRecord record;
    record.epoch = e;
    record.steps = stepsDone;
    record.seconds = trainingSeconds;
    SoftmaxModel shown = model;
    bool averagedRelease = false;
    if (mechanism == Mechanism::kOutpert) {
      // What a release at this epoch would look like: the model (the last epoch's average at the
      // end of an averaged run) plus its output noise.
      averagedRelease = p.averaged && stepsDone == r.steps && lastEpochCount > 0;
      if (averagedRelease) shown.parameters() = lastEpochSum / static_cast<float>(lastEpochCount);
      addNoise(shown.parameters(), r.outputNoiseStd, seed, Stream::kDisplayNoise, static_cast<std::uint64_t>(e));
    }
    const Evaluation onTrain = evaluate(shown, train);
    record.trainAccuracy = onTrain.accuracy;
    record.loss = onTrain.meanLoss;
    record.testAccuracy = test.size() > 0 ? evaluate(shown, test).accuracy : 0.0;
    record.epsilonSpent = epsilonAfter(stepsDone, averagedRelease);
    result.history.push_back(record);
    if (result.history.size() == 1) {
      result.secondsToFirstEpoch = std::chrono::duration<double>(Clock::now() - wallStart).count();
    }
    if (callbacks.epochDone) callbacks.epochDone(record);
  };

  const int threads = m_config.threads > 0 ? m_config.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::task_arena arena(threads);
  arena.execute([&] {
    for (step = 0; step < r.steps; ++step) {
      if (control) {
        while (control->pauseRequested() && !control->cancelRequested()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(15));
        }
        if (control->cancelRequested()) {
          cancelled = true;
          break;
        }
      }
      const auto stepStart = Clock::now();
      Xoshiro256 batchEngine = streamFor(seed, Stream::kBatch, static_cast<std::uint64_t>(step));
      switch (mechanism) {
        case Mechanism::kDpSgd:
        case Mechanism::kSgldPosterior: poissonBatch(n, p.q(), batchEngine, batch); break;
        case Mechanism::kDpSgld: uniform.sample(p.m, batchEngine, batch); break;
        case Mechanism::kCyclic:
        case Mechanism::kOutpert:
        case Mechanism::kSgd: {
          const std::int64_t j = step % r.stepsPerEpoch;
          if (mechanism == Mechanism::kSgd && j == 0) {
            Xoshiro256 engine = streamFor(seed, Stream::kPermutation, static_cast<std::uint64_t>(step / r.stepsPerEpoch));
            order = randomPermutation(n, engine);
          }
          const std::int64_t begin = j * p.m;
          const std::int64_t end = std::min(n, begin + p.m);
          batch.assign(order.begin() + begin, order.begin() + end);
          std::sort(batch.begin(), batch.end());
          break;
        }
      }
      const GradientStats stats = clippedGradientSum(model, train, squaredNorms, batch, r.clipNorm, workspace, gradient);
      result.examplesProcessed += static_cast<std::int64_t>(batch.size());
      result.clippedExamples += stats.clipped;
      const auto t = static_cast<double>(step + 1);
      switch (mechanism) {
        case Mechanism::kDpSgd: {
          // θ ← θ − η[(1/m)(Σ clip(g) + σL·ξ) + λθ]; dividing by the expected m, never |B|.
          addNoise(gradient, p.sigma * r.clipNorm, seed, Stream::kNoise, static_cast<std::uint64_t>(step));
          theta -= static_cast<float>(p.eta / m) * gradient + static_cast<float>(p.eta * p.lambda) * theta;
          break;
        }
        case Mechanism::kDpSgld: {
          // θ ← Π_C(θ − η_k(∇L_B + λθ) + √(2η_k)σ_L ξ), η_k of the schedule.
          const double eta = p.schedule == Schedule::kConstant
                                 ? p.eta
                                 : 1.0 / (2.0 * p.beta + p.lambda * static_cast<double>(step) / 2.0);
          theta -= static_cast<float>(eta / m) * gradient + static_cast<float>(eta * p.lambda) * theta;
          addNoise(theta, std::sqrt(2.0 * eta) * langevin.sigmaL, seed, Stream::kNoise, static_cast<std::uint64_t>(step));
          projectOntoBall(theta, projectionRadius);
          break;
        }
        case Mechanism::kCyclic: {
          // Nominal b = m even for a short last batch, so every step's sensitivity is 2ηL/b.
          theta -= static_cast<float>(p.eta / m) * gradient + static_cast<float>(p.eta * p.lambda) * theta;
          addNoise(theta, p.eta * p.sigma * r.clipNorm / m, seed, Stream::kNoise, static_cast<std::uint64_t>(step));
          break;
        }
        case Mechanism::kOutpert: {
          theta -= static_cast<float>(p.eta / m) * gradient + static_cast<float>(p.eta * p.lambda) * theta;
          if (p.averaged && step >= r.steps - r.stepsPerEpoch) {
            if (lastEpochCount == 0) lastEpochSum.setZero(theta.size());
            lastEpochSum += theta;
            ++lastEpochCount;
          }
          break;
        }
        case Mechanism::kSgldPosterior: {
          // θ ← θ − η_t(λθ + (1/τ)Σ clip(g)) + N(0, η_t/N).
          const double eta = p.schedule == Schedule::kConstant ? p.eta : p.eta * std::pow(t, -1.0 / 3.0);
          theta -= static_cast<float>(eta / m) * gradient + static_cast<float>(eta * p.lambda) * theta;
          addNoise(theta, std::sqrt(eta / static_cast<double>(n)), seed, Stream::kNoise, static_cast<std::uint64_t>(step));
          break;
        }
        case Mechanism::kSgd: {
          const double size = std::max<double>(1.0, static_cast<double>(batch.size()));
          theta -= static_cast<float>(p.eta / size) * gradient + static_cast<float>(p.eta * p.lambda) * theta;
          break;
        }
      }
      trainingSeconds += std::chrono::duration<double>(Clock::now() - stepStart).count();
      if (callbacks.progress && Clock::now() - lastProgress > std::chrono::milliseconds(33)) {
        lastProgress = Clock::now();
        callbacks.progress(static_cast<double>(step + 1) / static_cast<double>(r.steps), step + 1);
      }
      if (step + 1 == nextEpochEnd) {
        evaluateEpoch(epoch, step + 1);
        ++epoch;
        nextEpochEnd = epoch <= r.epochs ? epochEnd(epoch) : -1;
      }
    }
  });
  result.cancelled = cancelled;
  result.stepsDone = step;
  result.trainingSeconds = trainingSeconds;

  // The release. A cancelled outpert run is released too — with its output noise, which the
  // steps done need at least as much as the full run (Δ grows with the steps) — never bare.
  bool averagedRelease = false;
  if (mechanism == Mechanism::kOutpert) {
    averagedRelease = p.averaged && !cancelled && lastEpochCount > 0;
    if (averagedRelease) theta = lastEpochSum / static_cast<float>(lastEpochCount);
    addNoise(theta, r.outputNoiseStd, seed, Stream::kReleaseNoise, 0);
  }
  result.model = model;
  result.epsilon = epsilonAfter(result.stepsDone, averagedRelease);
  const Evaluation finalTrain = evaluate(model, train);
  result.finalTrainAccuracy = finalTrain.accuracy;
  result.finalTestAccuracy = test.size() > 0 ? evaluate(model, test).accuracy : 0.0;
  if (result.clippedExamples > 0 && !clipsWithUserNorm(mechanism)) {
    result.run.violations.push_back("Lipschitz: " + std::to_string(result.clippedExamples) +
                                    " gradients exceeded the data bound L and were clipped");
  }
  if (callbacks.progress) callbacks.progress(static_cast<double>(step) / static_cast<double>(std::max<std::int64_t>(1, r.steps)), step);
  result.seconds = std::chrono::duration<double>(Clock::now() - wallStart).count();
  return result;
}

}  // namespace dpx::core::training
