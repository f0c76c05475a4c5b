// Statistical checks that each training mechanism injects the noise and samples the batches its
// accountant assumes, through the real Trainer with fixed seeds. tst_trainer.cpp
// already checks DP-SGD's noise at step 0, Poisson batch sizes at one rate and uniform batches;
// this file covers the other mechanisms and what those checks leave out:
//  * the injected noise of one step — dp-sgld √(2η_k)σ_L (both schedules), cyclic ησL/b,
//    sgld-posterior √(η_t/N) (both schedules), dp-sgd ησL/m at a later step with λ > 0 — is
//    recovered exactly by replaying the step: θ_{t+1} − [θ_t − (η_t/m)Σclip(g) − η_tλθ_t], with
//    θ_t the released model of a run of t steps and θ_{t+1} that of a run of t + 1 steps with the
//    same seed (the trainer's streams are keyed by seed and step, so both runs agree up to t);
//  * dp-sgld's start θ₀ ~ Π_C(N(0, 2σ_L²/λ·I)), inside the ball and projected onto it;
//  * outpert's release noise s = σΔ_E, from two runs that differ only in σ;
//  * Poisson sampling at rates from 1/n to 1 − 1/n (size mean m and variance m(1 − q), each
//    record included with probability q, neighbours independent), and through the trainer;
//  * uniform and cyclic batches through the trainer;
//  * clipping: no clipped per-example gradient norm exceeds L.
//
// Tolerances. Noise samples are pooled over several seeds and all P parameters, N ≥ 20 000
// draws. For Gaussian samples the relative standard error of the empirical std is 1/√(2N)
// (≤ 0.5 %), of the mean 1/√N in units of the std, of the kurtosis √(24/N) (≤ 0.035). Every check
// allows 5 standard errors, so a correct mechanism passes with margin while a wrong factor (√2,
// m vs b, η vs √η, Δ_∞ for Δ_E) is off by far more. The seeds are fixed: the test is
// deterministic, the tolerances only make it meaningful.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "accounting/output_perturbation_accountant.h"
#include "accounting/sgld_accountant.h"
#include "synthetic_data.h"
#include "test_util.h"
#include "training/rng.h"
#include "training/samplers.h"
#include "training/softmax_regression.h"
#include "training/trainer.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

constexpr double kSigmas = 5.0;  // tolerance in standard errors

using dpx::test::clusters;
using dpx::test::clusterSplit;

// Moments of pooled samples, with the checks against a N(0, std²).
struct Moments {
  double count = 0;
  double sum = 0;
  double sumSq = 0;
  double sumFourth = 0;

  void add(double x) {
    count += 1;
    sum += x;
    sumSq += x * x;
    sumFourth += x * x * x * x;
  }
  double mean() const { return sum / count; }
  double std() const { return std::sqrt(sumSq / count - mean() * mean()); }
  // E[x⁴]/E[x²]² about 0 (the mean is within a few 1/√N of 0 here, a negligible correction).
  double kurtosis() const { return (sumFourth / count) / ((sumSq / count) * (sumSq / count)); }
};

QByteArray describeMoments(const Moments& m, double expectedStd) {
  return QByteArray("N = ") + QByteArray::number(m.count, 'g', 8) + ", std " + QByteArray::number(m.std(), 'g', 8) +
         " (expected " + QByteArray::number(expectedStd, 'g', 8) + ", ratio " +
         QByteArray::number(m.std() / expectedStd, 'g', 6) + "), mean/std " +
         QByteArray::number(m.mean() / expectedStd, 'g', 4) + ", kurtosis " + QByteArray::number(m.kurtosis(), 'g', 5);
}

// The samples are N(0, expectedStd²): std within 5/√(2N) relative, mean within 5/√N std,
// kurtosis within 5·√(24/N) of 3.
bool matchesGaussian(const Moments& m, double expectedStd) {
  const double n = m.count;
  return std::fabs(m.std() / expectedStd - 1.0) <= kSigmas / std::sqrt(2.0 * n) &&
         std::fabs(m.mean()) <= kSigmas * expectedStd / std::sqrt(n) &&
         std::fabs(m.kurtosis() - 3.0) <= kSigmas * std::sqrt(24.0 / n);
}

#define DPX_VERIFY_GAUSSIAN(moments, expectedStd) \
  QVERIFY2(matchesGaussian((moments), (expectedStd)), describeMoments((moments), (expectedStd)).constData())

// The run of a config after exactly `steps` steps (epochs chosen so the trainer runs that many).
Result<TrainingResult> runSteps(TrainerConfig config, const std::shared_ptr<const TrainTestSplit>& split,
                                std::int64_t steps) {
  const auto n = static_cast<double>(split->train.size());
  const auto m = static_cast<double>(config.knobs.m);
  const bool passes = config.mechanism == Mechanism::kCyclic || config.mechanism == Mechanism::kOutpert;
  // Passes over the data run whole epochs of k = ⌈n/m⌉ steps; the others ⌈epochs·n/m⌉ steps.
  const std::int64_t k = (split->train.size() + config.knobs.m - 1) / config.knobs.m;
  config.epochs = passes ? static_cast<double>((steps + k - 1) / k) : static_cast<double>(steps) * m / n;
  auto trainer = Trainer::create(config, split);
  if (!trainer) return trainer.status();
  if ((*trainer)->resolved().steps != steps) {
    return Status::invalidArgument("the config runs " + std::to_string((*trainer)->resolved().steps) + " steps, not " +
                                   std::to_string(steps));
  }
  return (*trainer)->run();
}

// The batch the trainer draws at `step` (0-based), from the same public samplers and streams.
std::vector<std::int64_t> batchAt(const TrainerConfig& config, const ResolvedRun& run, std::int64_t n,
                                  std::int64_t step) {
  std::vector<std::int64_t> batch;
  const Params& p = run.accountantParams;
  switch (config.mechanism) {
    case Mechanism::kDpSgd:
    case Mechanism::kSgldPosterior: {
      Xoshiro256 engine = streamFor(config.seed, Stream::kBatch, static_cast<std::uint64_t>(step));
      poissonBatch(n, p.q(), engine, batch);
      break;
    }
    case Mechanism::kDpSgld: {
      UniformBatchSampler sampler(n);  // its permutation carries over from step to step
      for (std::int64_t s = 0; s <= step; ++s) {
        Xoshiro256 engine = streamFor(config.seed, Stream::kBatch, static_cast<std::uint64_t>(s));
        sampler.sample(p.m, engine, batch);
      }
      break;
    }
    case Mechanism::kCyclic:
    case Mechanism::kOutpert: {
      Xoshiro256 engine = streamFor(config.seed, Stream::kPermutation, 0);
      const std::vector<std::int64_t> order = randomPermutation(n, engine);
      const std::int64_t j = step % run.stepsPerEpoch;
      batch.assign(order.begin() + j * p.m, order.begin() + std::min(n, (j + 1) * p.m));
      std::sort(batch.begin(), batch.end());
      break;
    }
    case Mechanism::kSgd:
      break;
  }
  return batch;
}

// η of step `step` (0-based) under the decreasing schedules of dp-sgld (η_k = 1/(2β + λk/2), Ryffel,
// Bach & Pointcheval 2022, Cor. 3.3) and sgld-posterior (η_t = η₁t^{−1/3}, Li, Chen, Liu & Carin 2019).
double stepSize(const TrainerConfig& config, const Params& p, std::int64_t step) {
  const auto k = static_cast<double>(step);
  if (p.schedule == Schedule::kConstant) return p.eta;
  if (config.mechanism == Mechanism::kDpSgld) return 1.0 / (2.0 * p.beta + p.lambda * k / 2.0);
  if (config.mechanism == Mechanism::kSgldPosterior) return p.eta * std::pow(k + 1.0, -1.0 / 3.0);
  return p.eta;
}

// The noise the trainer added at step t, pooled into `moments` in units of `expectedStd`
// (expectedStd is computed here from the papers' formulas and returned through `expected`).
struct StepNoise {
  Moments moments;
  double expectedStd = 0.0;
  bool projected = false;  // the ball projection acted: the residual is not pure noise
};

// Noise std of one step of the mechanism, from the knobs as each accountant maps them: s = ησL/m for
// dp-sgd and cyclic, Ryffel et al. 2022's σ_L for dp-sgld, Li et al. 2019's N(0, η_t/N) for sgld-posterior.
double expectedStepNoise(const TrainerConfig& config, const ResolvedRun& run, std::int64_t n, std::int64_t step) {
  const Params& p = run.accountantParams;
  const double eta = stepSize(config, p, step);
  const double m = static_cast<double>(p.m);
  switch (config.mechanism) {
    case Mechanism::kDpSgd:
      return eta * p.sigma * run.clipNorm / m;  // (η/m)·σL on the clipped sum
    case Mechanism::kCyclic:
      return eta * p.sigma * run.clipNorm / m;  // s = ησL/b
    case Mechanism::kDpSgld: {
      // σ_L = σL√η₀/(m√2), η₀ the first step of the schedule; per step √(2η_k)σ_L.
      const double eta0 = p.schedule == Schedule::kConstant ? p.eta : 1.0 / (2.0 * p.beta);
      const double sigmaL = p.sigma * run.lipschitzFromData * std::sqrt(eta0) / (m * std::sqrt(2.0));
      return std::sqrt(2.0 * eta) * sigmaL;
    }
    case Mechanism::kSgldPosterior:
      return std::sqrt(eta / static_cast<double>(n));  // N(0, η_t/N)
    default:
      return 0.0;
  }
}

// Replays step t of `config` over several seeds and pools the residual noise.
Result<StepNoise> stepNoise(TrainerConfig config, const std::shared_ptr<const TrainTestSplit>& split, std::int64_t t,
                            int seeds) {
  StepNoise out;
  const std::int64_t n = split->train.size();
  const std::vector<float> squaredNorms = squaredRowNorms(split->train.features);
  for (int s = 0; s < seeds; ++s) {
    config.seed = 1000 + static_cast<std::uint64_t>(s);
    auto trainer = Trainer::create(config, split);
    if (!trainer) return trainer.status();
    const ResolvedRun run = (*trainer)->resolved();
    const Params& p = run.accountantParams;

    SoftmaxModel before(split->train.dimension(), split->train.numClasses);  // θ₀ = 0 unless t > 0
    if (t > 0) {
      auto shorter = runSteps(config, split, t);
      if (!shorter) return shorter.status();
      before = *shorter->model.linear();
    } else if (config.mechanism == Mechanism::kDpSgld) {
      return Status::invalidArgument("dp-sgld starts from a random θ₀: replay a step t ≥ 1");
    }
    auto longer = runSteps(config, split, t + 1);
    if (!longer) return longer.status();

    const std::vector<std::int64_t> batch = batchAt(config, run, n, t);
    GradientWorkspace workspace;
    Eigen::VectorXf gradient;
    clippedGradientSum(before, split->train, squaredNorms, batch, run.clipNorm, workspace, gradient);
    const double eta = stepSize(config, p, t);
    const Eigen::VectorXd thetaT = before.parameters().cast<double>();
    const Eigen::VectorXd deterministic =
        thetaT - (eta / static_cast<double>(p.m)) * gradient.cast<double>() - eta * p.lambda * thetaT;
    const Eigen::VectorXd after = longer->model.parameters().cast<double>();
    if (config.mechanism == Mechanism::kDpSgld && after.norm() >= 0.999 * p.L / p.lambda) out.projected = true;
    const Eigen::VectorXd noise = after - deterministic;
    for (Eigen::Index i = 0; i < noise.size(); ++i) out.moments.add(noise(i));
    out.expectedStd = expectedStepNoise(config, run, n, t);
  }
  return out;
}

TrainerConfig config(Mechanism m) {
  TrainerConfig c;
  c.mechanism = m;
  c.knobs.m = 100;
  c.knobs.sigma = 1.0;
  c.knobs.eta = 0.5;
  c.knobs.lambda = 0.01;
  c.knobs.L = 1.0;
  c.knobs.optimizer = Optimizer::kSgd;  // one step's injected noise, as the update rule adds it
  c.threads = 2;
  return c;
}

}  // namespace

class TestMechanismStatistics : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // One step's noise, recovered by replaying the step (see the file comment). d = 100, C = 10:
  // P = 1010 parameters per run, 20 seeds → N = 20 200 draws.
  void injectedNoiseOfOneStep_data() {
    QTest::addColumn<int>("mechanism");
    QTest::addColumn<int>("schedule");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("eta");
    QTest::addColumn<double>("lambda");
    QTest::addColumn<qint64>("step");
    const int constant = static_cast<int>(Schedule::kConstant);
    const int decreasing = static_cast<int>(Schedule::kDecreasing);
    QTest::newRow("dp-sgld: √(2η)σ_L at step 1, constant η")
        << static_cast<int>(Mechanism::kDpSgld) << constant << qint64(100) << 2.0 << 0.5 << 0.1 << qint64(1);
    QTest::newRow("dp-sgld: √(2η_k)σ_L at step 3, η_k = 1/(2β + λk/2)")
        << static_cast<int>(Mechanism::kDpSgld) << decreasing << qint64(100) << 2.0 << 0.5 << 0.1 << qint64(3);
    QTest::newRow("cyclic: ησL/b at step 0 (b = n, θ₀ = 0)")
        << static_cast<int>(Mechanism::kCyclic) << constant << qint64(2000) << 3.0 << 0.5 << 0.01 << qint64(0);
    QTest::newRow("cyclic: ησL/b at step 1 (b = n, λθ term)")
        << static_cast<int>(Mechanism::kCyclic) << constant << qint64(2000) << 3.0 << 0.5 << 0.5 << qint64(1);
    QTest::newRow("sgld-posterior: √(η/N) at step 0")
        << static_cast<int>(Mechanism::kSgldPosterior) << constant << qint64(100) << 1.0 << 0.5 << 0.01 << qint64(0);
    QTest::newRow("sgld-posterior: √(η_t/N) at t = 3, η_t = η₁t^(−1/3)")
        << static_cast<int>(Mechanism::kSgldPosterior) << decreasing << qint64(100) << 1.0 << 0.5 << 0.01 << qint64(2);
    QTest::newRow("dp-sgd: ησL/m at step 2 with λ > 0")
        << static_cast<int>(Mechanism::kDpSgd) << constant << qint64(100) << 1.5 << 0.5 << 0.2 << qint64(2);
  }
  void injectedNoiseOfOneStep() {
    QFETCH(int, mechanism);
    QFETCH(int, schedule);
    QFETCH(qint64, m);
    QFETCH(double, sigma);
    QFETCH(double, eta);
    QFETCH(double, lambda);
    QFETCH(qint64, step);
    auto split = clusterSplit(2000, 100, 10);
    TrainerConfig c = config(static_cast<Mechanism>(mechanism));
    c.knobs.schedule = static_cast<Schedule>(schedule);
    c.knobs.m = m;
    c.knobs.sigma = sigma;
    c.knobs.eta = eta;
    c.knobs.lambda = lambda;
    auto noise = stepNoise(c, split, step, 20);
    QVERIFY2(noise.isOk(), noise.status().message().c_str());
    QVERIFY2(!noise->projected, "the ball projection acted: choose knobs that keep θ inside C");
    QVERIFY(noise->moments.count >= 20000);
    DPX_VERIFY_GAUSSIAN(noise->moments, noise->expectedStd);
  }

  // θ₀ ~ Π_C(N(0, 2σ_L²/λ·I)): with η = 10⁻⁶ and λ = 10 the first step moves θ by a relative
  // √(ηλ) ≈ 3·10⁻³ in noise and ηL/σ₀ ≈ 3·10⁻³ in drift, so θ₁ shows θ₀'s law to well within
  // the tolerance (a 3·10⁻³ drift changes the std by ~10⁻⁵).
  void dpSgldStartsFromTheStatedGaussian() {
    auto split = clusterSplit(2000, 100, 10);
    TrainerConfig c = config(Mechanism::kDpSgld);
    c.knobs.eta = 1e-6;
    c.knobs.lambda = 10.0;
    c.knobs.m = 1;
    c.knobs.sigma = 1.0;
    Moments moments;
    double expected = 0.0;
    for (int s = 0; s < 20; ++s) {
      c.seed = 500 + static_cast<std::uint64_t>(s);
      auto result = runSteps(c, split, 1);
      QVERIFY2(result.isOk(), result.status().message().c_str());
      const ResolvedRun& run = result->run;
      const auto schedule = accounting::sgldSchedule(run.accountantParams);
      // 2σ_L²/λ with σ_L = σL√η₀/(m√2) (the sgld accountant's knob mapping for Ryffel, Bach & Pointcheval
      // 2022), L the data's Lipschitz bound.
      const double sigmaL = c.knobs.sigma * run.lipschitzFromData * std::sqrt(c.knobs.eta) / (1.0 * std::sqrt(2.0));
      DPX_COMPARE_REL(schedule.sigmaL, sigmaL, 1e-12);
      expected = std::sqrt(2.0 / c.knobs.lambda) * sigmaL;
      const Eigen::VectorXd theta = result->model.parameters().cast<double>();
      QVERIFY2(theta.norm() < 0.5 * run.lipschitzFromData / c.knobs.lambda, "expected θ₀ inside the ball here");
      for (Eigen::Index i = 0; i < theta.size(); ++i) moments.add(theta(i));
    }
    DPX_VERIFY_GAUSSIAN(moments, expected);
  }

  // σ = 100 puts N(0, 2σ_L²/λ·I) far outside C (‖θ‖ ≈ 9× the radius L/λ): θ₀ is projected onto
  // the sphere, and one tiny step keeps it there up to the step's inward pull: the shrinkage ηλ,
  // the gradient η‖∇ℓ‖ ≤ ηL and the radial part of the Langevin noise, N(0, 2η σ_L²) (6 sd
  // allowed); the direction stays centred.
  void dpSgldStartIsProjectedOntoTheBall() {
    auto split = clusterSplit(2000, 100, 10);
    TrainerConfig c = config(Mechanism::kDpSgld);
    c.knobs.eta = 1e-6;
    c.knobs.lambda = 10.0;
    c.knobs.m = 1;
    c.knobs.sigma = 100.0;
    Moments direction;
    for (int s = 0; s < 20; ++s) {
      c.seed = 700 + static_cast<std::uint64_t>(s);
      auto result = runSteps(c, split, 1);
      QVERIFY2(result.isOk(), result.status().message().c_str());
      const double radius = result->run.lipschitzFromData / c.knobs.lambda;
      const double stepNoise =
          std::sqrt(2.0 * c.knobs.eta) * accounting::sgldSchedule(result->run.accountantParams).sigmaL;
      const double inward =
          c.knobs.eta * c.knobs.lambda * radius + c.knobs.eta * result->run.lipschitzFromData + 6.0 * stepNoise;
      QVERIFY2(inward < 0.01 * radius, "the step must be small next to the radius for this check");
      const Eigen::VectorXd theta = result->model.parameters().cast<double>();
      QVERIFY2(
          theta.norm() <= radius * (1 + 1e-6) && theta.norm() >= radius - inward,
          qPrintable(QStringLiteral("‖θ₁‖ = %1, radius %2").arg(theta.norm(), 0, 'g', 10).arg(radius, 0, 'g', 10)));
      const Eigen::VectorXd unit = theta / theta.norm() * std::sqrt(static_cast<double>(theta.size()));
      for (Eigen::Index i = 0; i < unit.size(); ++i) direction.add(unit(i));
    }
    // A uniform direction scaled by √P has coordinates with mean 0, variance 1, kurtosis ≈ 3.
    DPX_VERIFY_GAUSSIAN(direction, 1.0);
  }

  // Output perturbation releases θ_K + N(0, s²I) with s = σΔ_E. Two runs with the same seed and
  // different σ share θ_K and the standard normal draws, so (θ_A − θ_B)/(s_A − s_B) is exactly
  // that standard normal vector — with s computed here from Δ_E of Chen, Lee & Kifer 2019 (Prop. 2), not
  // taken from the trainer.
  void outpertReleaseNoiseIsSigmaTimesDeltaE() {
    auto split = clusterSplit(2000, 100, 10);
    TrainerConfig c = config(Mechanism::kOutpert);
    c.knobs.eta = 0.5;
    c.knobs.lambda = 0.05;
    c.knobs.m = 200;
    Moments moments;
    for (int s = 0; s < 20; ++s) {
      c.seed = 300 + static_cast<std::uint64_t>(s);
      TrainerConfig a = c;
      TrainerConfig b = c;
      a.knobs.sigma = 2.0;
      b.knobs.sigma = 0.5;
      auto ra = runSteps(a, split, 2 * 10);  // k = ⌈2000/200⌉ = 10 batches per epoch, E = 2
      auto rb = runSteps(b, split, 2 * 10);
      QVERIFY2(ra.isOk() && rb.isOk(), (ra.status().message() + rb.status().message()).c_str());
      const ResolvedRun& run = ra->run;
      const Params& p = run.accountantParams;
      // Δ_E = (2ηL/m)(1 − ρ^{kE})/(1 − ρ^k), ρ = max(|1 − ηλ|, |1 − ηβ|).
      const double rho = std::max(std::fabs(1 - p.eta * p.lambda), std::fabs(1 - p.eta * p.beta));
      const double k = 10;
      const double epochs = 2;
      const double deltaE = 2 * p.eta * run.lipschitzFromData / static_cast<double>(p.m) *
                            (1 - std::pow(rho, k * epochs)) / (1 - std::pow(rho, k));
      DPX_COMPARE_REL(run.outputNoiseStd, 2.0 * deltaE, 1e-9);
      DPX_COMPARE_REL(rb->run.outputNoiseStd, 0.5 * deltaE, 1e-9);
      const Eigen::VectorXd xi = (ra->model.parameters().cast<double>() - rb->model.parameters().cast<double>()) /
                                 (run.outputNoiseStd - rb->run.outputNoiseStd);
      for (Eigen::Index i = 0; i < xi.size(); ++i) moments.add(xi(i));
    }
    DPX_VERIFY_GAUSSIAN(moments, 1.0);
  }

  // Poisson sampling by geometric skips at rates from 1/n to 1 − 1/n. T draws per rate:
  //  * |B| ~ Binomial(n, q): mean within 5·√(m(1−q)/T) of m; variance within 5 standard errors
  //    of m(1 − q), SE ≈ m(1−q)·√(2/T) (plus a small binomial kurtosis term, included);
  //  * each record's inclusion count ~ Binomial(T, q): Pearson's statistic over the n records is
  //    ≈ χ²_n, so within n ± 5√(2n);
  //  * neighbours i, i+1 are both included with probability q² (the skips do not couple them):
  //    the pair count over all n − 1 pairs and T draws is within 5 standard errors of T(n−1)q².
  void poissonSamplingAcrossRates_data() {
    QTest::addColumn<qint64>("n");
    QTest::addColumn<double>("q");
    QTest::addColumn<int>("draws");
    QTest::newRow("q = 1/n (m = 1)") << qint64(1000) << 1e-3 << 40000;
    QTest::newRow("q = 0.01") << qint64(5000) << 0.01 << 10000;
    QTest::newRow("q = 0.5") << qint64(1000) << 0.5 << 10000;
    QTest::newRow("q = 1 − 1/n") << qint64(1000) << 0.999 << 10000;
  }
  void poissonSamplingAcrossRates() {
    QFETCH(qint64, n);
    QFETCH(double, q);
    QFETCH(int, draws);
    std::vector<std::int64_t> batch;
    std::vector<double> hits(static_cast<std::size_t>(n), 0.0);
    double sum = 0.0;
    double sumSq = 0.0;
    double pairs = 0.0;
    for (int t = 0; t < draws; ++t) {
      Xoshiro256 engine = streamFor(31, Stream::kBatch, static_cast<std::uint64_t>(t));
      poissonBatch(n, q, engine, batch);
      QVERIFY(std::is_sorted(batch.begin(), batch.end()));
      QVERIFY(std::adjacent_find(batch.begin(), batch.end()) == batch.end());
      QVERIFY(batch.empty() || (batch.front() >= 0 && batch.back() < n));
      const auto size = static_cast<double>(batch.size());
      sum += size;
      sumSq += size * size;
      for (std::size_t k = 0; k < batch.size(); ++k) {
        hits[static_cast<std::size_t>(batch[k])] += 1.0;
        if (k + 1 < batch.size() && batch[k + 1] == batch[k] + 1) pairs += 1.0;
      }
    }
    const double T = draws;
    const double m = q * static_cast<double>(n);
    const double mean = sum / T;
    const double variance = sumSq / T - mean * mean;
    const double binomialVariance = m * (1 - q);
    QVERIFY2(std::fabs(mean - m) <= kSigmas * std::sqrt(binomialVariance / T),
             qPrintable(QStringLiteral("mean batch size %1, expected %2").arg(mean).arg(m)));
    // Var of the sample variance ≈ σ⁴(2/(T−1) + κ/T), κ = (1 − 6q(1−q))/(nq(1−q)) the excess kurtosis.
    const double excessKurtosis = (1 - 6 * q * (1 - q)) / binomialVariance;
    const double varianceSe = binomialVariance * std::sqrt(2.0 / (T - 1) + excessKurtosis / T);
    QVERIFY2(std::fabs(variance - binomialVariance) <= kSigmas * varianceSe,
             qPrintable(QStringLiteral("batch size variance %1, expected m(1−q) = %2 ± %3")
                            .arg(variance)
                            .arg(binomialVariance)
                            .arg(varianceSe)));
    double chi2 = 0.0;
    for (const double h : hits) chi2 += (h - T * q) * (h - T * q) / (T * q * (1 - q));
    const double dof = static_cast<double>(n);
    QVERIFY2(std::fabs(chi2 - dof) <= kSigmas * std::sqrt(2 * dof),
             qPrintable(QStringLiteral("per-record inclusion χ² = %1 for %2 records").arg(chi2).arg(dof)));
    // Pair counts: a sum of T(n−1) indicators of rate p = q², correlated only between
    // overlapping pairs: Var ≈ T(n−1)(p(1−p) + 2(q³ − q⁴)).
    const double p2 = q * q;
    const double slots = T * static_cast<double>(n - 1);
    const double pairSe = std::sqrt(slots * (p2 * (1 - p2) + 2 * (q * q * q - p2 * p2)));
    QVERIFY2(std::fabs(pairs - slots * p2) <= kSigmas * pairSe + 1.0,
             qPrintable(QStringLiteral("%1 adjacent pairs, expected %2 ± %3").arg(pairs).arg(slots * p2).arg(pairSe)));
  }

  // Through the trainer: dp-sgd's K Poisson batches hold Σ|B_k| ~ Binomial(Kn, q) records in all
  // (mean Km, sd √(Km(1−q))); dp-sgld's uniform batches exactly K·m; cyclic passes exactly E·n.
  void batchSizesThroughTheTrainer() {
    auto split = clusterSplit(2000, 20, 4);
    {
      TrainerConfig c = config(Mechanism::kDpSgd);
      auto r = runSteps(c, split, 1000);
      QVERIFY2(r.isOk(), r.status().message().c_str());
      const double q = 100.0 / 2000.0;
      const double expected = 1000.0 * 100.0;
      const double sd = std::sqrt(1000.0 * 100.0 * (1 - q));
      QVERIFY2(std::fabs(static_cast<double>(r->examplesProcessed) - expected) <= kSigmas * sd,
               qPrintable(QStringLiteral("dp-sgd processed %1 examples in 1000 steps, expected %2 ± %3")
                              .arg(r->examplesProcessed)
                              .arg(expected)
                              .arg(sd)));
    }
    {
      TrainerConfig c = config(Mechanism::kDpSgld);
      auto r = runSteps(c, split, 300);
      QVERIFY2(r.isOk(), r.status().message().c_str());
      QCOMPARE(r->examplesProcessed, std::int64_t(300 * 100));
    }
    {
      TrainerConfig c = config(Mechanism::kCyclic);
      c.knobs.m = 300;  // k = ⌈2000/300⌉ = 7 batches, the last one short (200 records)
      auto r = runSteps(c, split, 3 * 7);
      QVERIFY2(r.isOk(), r.status().message().c_str());
      QCOMPARE(r->examplesProcessed, std::int64_t(3 * 2000));
      // One pass visits every record exactly once, in the same batches every pass.
      std::vector<int> seen(2000, 0);
      for (std::int64_t j = 0; j < 7; ++j) {
        for (std::int64_t i : batchAt(c, r->run, 2000, j)) ++seen[static_cast<std::size_t>(i)];
        QCOMPARE(batchAt(c, r->run, 2000, j), batchAt(c, r->run, 2000, j + 7));
      }
      QVERIFY(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
    }
  }

  // Clipping (dp-sgd's mechanism, and the safety net of the convex analyses): a batch of one
  // record returns that record's clipped gradient, whose norm must be min(‖g‖, L) — never more
  // than L (float rounding: 10⁻⁵ relative). Random θ of growing scale makes gradients from
  // tiny to saturated (‖g‖ → √2·√(‖x‖²+1)), against L across its knob range.
  void clippingNeverExceedsL_data() {
    QTest::addColumn<double>("L");
    QTest::addColumn<double>("thetaScale");
    QTest::addColumn<double>("featureNorm");
    QTest::newRow("L = 1e-3 (range min), saturated softmax") << 1e-3 << 30.0 << 1.0;
    QTest::newRow("L = 0.1, moderate θ") << 0.1 << 1.0 << 1.0;
    QTest::newRow("L = 1, mixed clipped and unclipped") << 1.0 << 3.0 << 1.0;
    QTest::newRow("L = 1e3 (range max), nothing clipped") << 1e3 << 3.0 << 1.0;
    QTest::newRow("L = 1, unscaled features of norm 1e3") << 1.0 << 0.01 << 1e3;
    QTest::newRow("L = 0.5, huge θ (1e30): logits far beyond exp's range") << 0.5 << 1e30 << 1.0;
  }
  void clippingNeverExceedsL() {
    QFETCH(double, L);
    QFETCH(double, thetaScale);
    QFETCH(double, featureNorm);
    Dataset data = clusters(400, 30, 5, 11);
    data.features *= static_cast<float>(featureNorm);  // rows of norm featureNorm (FeatureScaling::kNone)
    const std::vector<float> squaredNorms = squaredRowNorms(data.features);
    SoftmaxModel model(30, 5);
    Xoshiro256 engine(17);
    std::vector<double> init(static_cast<std::size_t>(model.parameters().size()));
    fillGaussian(init, thetaScale, engine);
    for (std::size_t i = 0; i < init.size(); ++i)
      model.parameters()(static_cast<Eigen::Index>(i)) = static_cast<float>(init[i]);

    GradientWorkspace workspace;
    Eigen::VectorXf clipped;
    std::vector<double> norms;
    std::int64_t clippedCount = 0;
    std::vector<std::int64_t> all(static_cast<std::size_t>(data.size()));
    std::iota(all.begin(), all.end(), 0);
    for (std::int64_t i = 0; i < data.size(); ++i) {
      const std::int64_t one[] = {i};
      const GradientStats stats = clippedGradientSum(model, data, squaredNorms, one, L, workspace, clipped, &norms);
      const double raw = norms.at(0);
      const double norm = clipped.cast<double>().norm();
      QVERIFY2(std::isfinite(raw) && std::isfinite(norm),
               qPrintable(QStringLiteral("record %1: ‖g‖ = %2, ‖clip(g)‖ = %3").arg(i).arg(raw).arg(norm)));
      QVERIFY2(norm <= L * (1 + 1e-5),
               qPrintable(QStringLiteral("record %1: ‖clip(g)‖ = %2 > L = %3").arg(i).arg(norm, 0, 'g', 10).arg(L)));
      QVERIFY2(std::fabs(norm - std::min(raw, L)) <= 1e-5 * std::max(norm, 1e-30) + 1e-30,
               qPrintable(QStringLiteral("record %1: ‖clip(g)‖ = %2, expected min(‖g‖ = %3, L)")
                              .arg(i)
                              .arg(norm, 0, 'g', 10)
                              .arg(raw, 0, 'g', 10)));
      QCOMPARE(stats.clipped, std::int64_t(raw > L ? 1 : 0));
      clippedCount += stats.clipped;
    }
    // The whole batch at once: same clip count, and the sum is no longer than |B|·L.
    const GradientStats stats = clippedGradientSum(model, data, squaredNorms, all, L, workspace, clipped, &norms);
    QCOMPARE(stats.clipped, clippedCount);
    QVERIFY(clipped.cast<double>().norm() <= static_cast<double>(data.size()) * L * (1 + 1e-5));
    qInfo("%lld of %lld gradients clipped", static_cast<long long>(clippedCount), static_cast<long long>(data.size()));
  }
};

QTEST_GUILESS_MAIN(TestMechanismStatistics)
#include "tst_mechanism_statistics.moc"
