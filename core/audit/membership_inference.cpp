// Membership-inference audit: the IN/OUT game of Steinke, Nasr & Jagielski 2023, the loss
// threshold attack of Yeom et al. 2018, online LiRA of Carlini et al. 2022 and online RMIA of
// Zarifzadeh, Liu & Shokri 2024, the ROC and the ε lower bounds (see membership_inference.h,
// rmia.h and epsilon_lower_bound.h).
#include "audit/membership_inference.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numbers>
#include <sstream>

#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "common/parallel.h"
#include "training/mechanism.h"
#include "training/rng.h"

namespace dpx::core::audit {
namespace {

using Clock = std::chrono::steady_clock;
using namespace training;

// Parts of the training::Stream::kAudit stream: each decision has its own engine, so adding
// canaries or shadow models never changes the coins of the target run.
enum AuditPart : std::uint64_t {
  kTargetMembership = 1,
  kCanaryRecords = 2,
  kShadowMembership = 3,
  kShadowSeeds = 4,
  kSplitHalves = 5,
};

constexpr double kMinimumVariance = 1e-6;  // φ is a logit; below this a Gaussian fit is degenerate

bool coin(Xoshiro256& engine) { return (engine() >> 63) != 0; }

double uniform01(Xoshiro256& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

// The pool with k canaries appended: uniformly random directions scaled to the pool's largest
// row norm (1 under the default unit-norm scaling, so they leave the data's Lipschitz bound
// unchanged), each with a label drawn uniformly among the classes — points far from the data
// whose label is, for most of them, wrong for the region they sit in.
Dataset poolWithCanaries(const Dataset& train, std::int64_t canaries, std::uint64_t seed) {
  Dataset pool;
  pool.name = train.name;
  pool.numClasses = train.numClasses;
  pool.classNames = train.classNames;
  const Eigen::Index n = train.features.rows();
  const Eigen::Index d = train.features.cols();
  pool.features.resize(n + canaries, d);
  pool.features.topRows(n) = train.features;
  pool.labels = train.labels;
  pool.labels.resize(static_cast<std::size_t>(n + canaries));
  const double largest = train.maxRowNorm();
  const double radius = largest > 0.0 ? largest : 1.0;
  Xoshiro256 engine = streamFor(seed, Stream::kAudit, kCanaryRecords);
  std::vector<double> direction(static_cast<std::size_t>(d));
  for (std::int64_t c = 0; c < canaries; ++c) {
    fillGaussian(direction, 1.0, engine);
    double norm = 0.0;
    for (double x : direction) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > 0.0)) {
      std::fill(direction.begin(), direction.end(), 0.0);
      direction[0] = 1.0;
      norm = 1.0;
    }
    for (Eigen::Index j = 0; j < d; ++j) {
      pool.features(n + c, j) = static_cast<float>(radius * direction[static_cast<std::size_t>(j)] / norm);
    }
    const auto label = static_cast<std::int32_t>(uniform01(engine) * train.numClasses);
    pool.labels[static_cast<std::size_t>(n + c)] = std::min(label, train.numClasses - 1);
  }
  return pool;
}

Dataset subset(const Dataset& pool, std::span<const std::uint8_t> included, std::int64_t count) {
  Dataset out;
  out.name = pool.name;
  out.numClasses = pool.numClasses;
  out.classNames = pool.classNames;
  out.features.resize(count, pool.features.cols());
  out.labels.reserve(static_cast<std::size_t>(count));
  Eigen::Index row = 0;
  for (std::size_t i = 0; i < included.size(); ++i) {
    if (!included[i]) continue;
    out.features.row(row++) = pool.features.row(static_cast<Eigen::Index>(i));
    out.labels.push_back(pool.labels[i]);
  }
  return out;
}

std::int64_t countOf(std::span<const std::uint8_t> mask) {
  std::int64_t c = 0;
  for (std::uint8_t b : mask) c += b ? 1 : 0;
  return c;
}

// Every record is IN for ⌊N/2⌋ or ⌈N/2⌉ of the N shadow models (a coin decides for odd N), a
// random choice per record — Carlini et al. 2022's construction, so each record has IN and OUT
// samples whenever N ≥ 2.
std::vector<std::vector<std::uint8_t>> shadowMemberships(std::int64_t poolSize, int shadows, std::uint64_t seed) {
  std::vector<std::vector<std::uint8_t>> in(static_cast<std::size_t>(shadows),
                                            std::vector<std::uint8_t>(static_cast<std::size_t>(poolSize), 0));
  std::vector<int> models(static_cast<std::size_t>(shadows));
  for (std::int64_t i = 0; i < poolSize; ++i) {
    Xoshiro256 engine = streamFor(seed, Stream::kAudit, kShadowMembership, static_cast<std::uint64_t>(i));
    int half = shadows / 2;
    if (shadows % 2 == 1 && coin(engine)) ++half;
    for (int j = 0; j < shadows; ++j) models[static_cast<std::size_t>(j)] = j;
    for (int j = 0; j < half; ++j) {  // partial Fisher–Yates: the first `half` are IN
      const int k = j + static_cast<int>(uniform01(engine) * (shadows - j));
      std::swap(models[static_cast<std::size_t>(j)], models[static_cast<std::size_t>(std::min(k, shadows - 1))]);
      in[static_cast<std::size_t>(models[static_cast<std::size_t>(j)])][static_cast<std::size_t>(i)] = 1;
    }
  }
  return in;
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

double logGaussian(double x, double mean, double variance) {
  const double z = x - mean;
  return -0.5 * std::log(2.0 * std::numbers::pi * variance) - z * z / (2.0 * variance);
}

// Serialises the progress of parallel jobs into one fraction, at most ~30 calls a second.
class ProgressMeter {
 public:
  ProgressMeter(const std::function<void(double)>& callback, std::size_t jobs)
      : m_callback(callback), m_fractions(jobs, 0.0) {}
  void update(std::size_t job, double fraction) {
    if (!m_callback) return;
    std::lock_guard lock(m_mutex);
    m_fractions[job] = std::clamp(fraction, m_fractions[job], 1.0);
    const auto now = Clock::now();
    if (now - m_last < std::chrono::milliseconds(33)) return;
    m_last = now;
    double sum = 0.0;
    for (double f : m_fractions) sum += f;
    // The statistics after training take a moment too: training is shown as 98 %.
    m_callback(0.98 * sum / static_cast<double>(m_fractions.size()));
  }
  void finish() {
    if (!m_callback) return;
    std::lock_guard lock(m_mutex);
    m_callback(1.0);
  }

 private:
  const std::function<void(double)>& m_callback;
  std::vector<double> m_fractions;
  std::mutex m_mutex;
  Clock::time_point m_last = Clock::now() - std::chrono::seconds(1);
};

struct ModelOutcome {
  Status status;
  std::vector<double> phi;               // on the audited records
  std::vector<double> populationPhi;     // on the test split (RMIA's population)
  std::optional<TrainingResult> result;  // kept for the target only
};

std::string jobName(std::size_t job) {
  return job == 0 ? std::string("target run") : "shadow model " + std::to_string(job);
}

Status validate(const AuditConfig& config, const TrainTestSplit* data) {
  if (!data) return Status::invalidArgument("no dataset to audit");
  if (config.shadowModels < 1 || config.shadowModels > kMaxShadowModels) {
    return Status::invalidArgument("shadow models = " + std::to_string(config.shadowModels) +
                                   " is out of range: --shadow-models (reference models of the likelihood-ratio "
                                   "attack) must be in [1, " +
                                   std::to_string(kMaxShadowModels) + "]");
  }
  if (!(config.confidence >= 0.5 && config.confidence < 1.0)) {
    return Status::invalidArgument("confidence = " + formatNumber(config.confidence) +
                                   " is out of range: --confidence must be in [0.5, 1)");
  }
  const std::int64_t pool = data->train.size();
  if (config.canaries < 0) {
    return Status::invalidArgument("canaries = " + std::to_string(config.canaries) +
                                   " is out of range: --canaries must be in [0, " + std::to_string(pool) + "]");
  }
  if (config.canaries > kMaxCanaries) {
    return Status::invalidArgument("canaries = " + std::to_string(config.canaries) + " exceeds the limit of 1e6 " +
                                   "crafted records (--canaries)");
  }
  if (config.canaries > pool) {
    return Status::invalidArgument("canaries = " + std::to_string(config.canaries) + " exceeds the pool of " +
                                   std::to_string(pool) + " training records: --canaries must be in [0, " +
                                   std::to_string(pool) + "]");
  }
  return config.rmia.validate();
}

}  // namespace

std::vector<double> trueClassLogits(const Model& model, const FeatureMatrix& features,
                                    std::span<const std::int32_t> labels) {
  const Eigen::Index n = features.rows();
  std::vector<double> phi(static_cast<std::size_t>(n), 0.0);
  constexpr Eigen::Index kBlock = 256;  // bounded memory whatever n
  for (Eigen::Index begin = 0; begin < n; begin += kBlock) {
    const Eigen::Index rows = std::min(kBlock, n - begin);
    const Eigen::MatrixXd z = model.logits(FeatureMatrix(features.middleRows(begin, rows)));
    const Eigen::Index classes = z.cols();
    for (Eigen::Index i = 0; i < rows; ++i) {
      const int y = labels[static_cast<std::size_t>(begin + i)];
      double top = -std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < classes; ++j) {
        if (j != y) top = std::max(top, z(i, j));
      }
      double sum = 0.0;
      for (Eigen::Index j = 0; j < classes; ++j) {
        if (j != y) sum += std::exp(z(i, j) - top);
      }
      phi[static_cast<std::size_t>(begin + i)] = z(i, y) - top - std::log(sum);
    }
  }
  return phi;
}

namespace {

// φ over the shadow models of one side (0: OUT, 1: IN) of every audited record.
struct LiraSide {
  std::vector<double> mean, m2;  // Welford's running mean and sum of squared deviations, per record
  std::vector<std::int64_t> count;
  double pooledVariance = 1.0;  // for records with fewer than 2 samples on this side
  double globalMean = 0.0;      // for records with none
};

// Welford per record and side.
std::array<LiraSide, 2> welfordSides(std::size_t m, const std::vector<std::vector<double>>& shadowPhi,
                                     const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  std::array<LiraSide, 2> side;
  for (LiraSide& s : side) {
    s.mean.assign(m, 0.0);
    s.m2.assign(m, 0.0);
    s.count.assign(m, 0);
  }
  for (std::size_t j = 0; j < shadowPhi.size(); ++j) {
    for (std::size_t i = 0; i < m; ++i) {
      LiraSide& s = side[shadowIn[j][i] ? 1 : 0];
      const double x = shadowPhi[j][i];
      const double n = static_cast<double>(++s.count[i]);
      const double d = x - s.mean[i];
      s.mean[i] += d / n;
      s.m2[i] += d * (x - s.mean[i]);
    }
  }
  return side;
}

// The side's global mean and its pooled within-record variance (Carlini et al. 2022 §VI-B).
void poolSide(LiraSide& s, int k, const std::vector<std::vector<double>>& shadowPhi,
              const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  const std::size_t m = s.mean.size();
  double within = 0.0;
  double dof = 0.0;
  double total = 0.0;
  double samples = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    total += s.mean[i] * static_cast<double>(s.count[i]);
    samples += static_cast<double>(s.count[i]);
    if (s.count[i] >= 2) {
      within += s.m2[i];
      dof += static_cast<double>(s.count[i] - 1);
    }
  }
  s.globalMean = samples > 0.0 ? total / samples : 0.0;
  if (dof > 0.0) {
    s.pooledVariance = within / dof;
  } else if (samples >= 2.0) {
    // At most one sample per record (N ≤ 2): the spread of the side around its global mean.
    double spread = 0.0;
    for (std::size_t j = 0; j < shadowPhi.size(); ++j) {
      for (std::size_t i = 0; i < m; ++i) {
        if ((shadowIn[j][i] ? 1 : 0) != k) continue;
        const double d = shadowPhi[j][i] - s.globalMean;
        spread += d * d;
      }
    }
    s.pooledVariance = spread / (samples - 1.0);
  }
  s.pooledVariance = std::max(s.pooledVariance, kMinimumVariance);
}

// log N(φ; μ, σ²) of record i on one side, with the side's pooled estimates where it has too few samples.
double sideLogLikelihood(const LiraSide& s, std::size_t i, double phi) {
  const double mean = s.count[i] > 0 ? s.mean[i] : s.globalMean;
  const double variance =
      s.count[i] >= 2 ? std::max(s.m2[i] / static_cast<double>(s.count[i] - 1), kMinimumVariance) : s.pooledVariance;
  return logGaussian(phi, mean, variance);
}

}  // namespace

std::vector<double> liraScores(std::span<const double> targetPhi, const std::vector<std::vector<double>>& shadowPhi,
                               const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  const std::size_t m = targetPhi.size();
  std::array<LiraSide, 2> side = welfordSides(m, shadowPhi, shadowIn);  // 0: OUT, 1: IN
  for (int k = 0; k < 2; ++k) poolSide(side[static_cast<std::size_t>(k)], k, shadowPhi, shadowIn);
  std::vector<double> scores(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    scores[i] = sideLogLikelihood(side[1], i, targetPhi[i]) - sideLogLikelihood(side[0], i, targetPhi[i]);
  }
  return scores;
}

namespace {

// What the target and the shadow models train on, and the records they are scored on.
struct AuditPlan {
  Dataset pool;                                     // the training records, then the canaries
  std::vector<std::vector<std::uint8_t>> included;  // per job: 0 the target, 1…N the shadow models
  std::vector<std::uint64_t> seeds;                 // per job
  std::int64_t firstAudited = 0;                    // the audited records are the pool's rows from here on
  FeatureMatrix auditedFeatures;
  std::vector<std::int32_t> auditedLabels;

  std::size_t jobs() const { return included.size(); }
  std::int64_t audited() const { return pool.size() - firstAudited; }
};

// Memberships: job 0 is the target (independent coins), jobs 1…N the shadow models.
std::vector<std::vector<std::uint8_t>> memberships(std::int64_t poolSize, int shadows, std::uint64_t seed) {
  std::vector<std::vector<std::uint8_t>> included;
  included.reserve(static_cast<std::size_t>(shadows) + 1);
  std::vector<std::uint8_t> target(static_cast<std::size_t>(poolSize));
  Xoshiro256 engine = streamFor(seed, Stream::kAudit, kTargetMembership);
  for (std::uint8_t& b : target) b = coin(engine) ? 1 : 0;
  included.push_back(std::move(target));
  for (std::vector<std::uint8_t>& s : shadowMemberships(poolSize, shadows, seed)) included.push_back(std::move(s));
  return included;
}

// The target keeps the configured seed; each shadow model gets its own.
std::vector<std::uint64_t> jobSeeds(std::uint64_t seed, std::size_t jobs) {
  std::vector<std::uint64_t> seeds(jobs, seed);
  for (std::size_t j = 1; j < jobs; ++j) seeds[j] = streamFor(seed, Stream::kAudit, kShadowSeeds, j)();
  return seeds;
}

// Each run must be trainable: at least 10 records and a batch no larger than its data.
Status checkTrainable(const std::vector<std::vector<std::uint8_t>>& included, std::int64_t poolSize, std::int64_t m) {
  const std::int64_t needed = std::max<std::int64_t>(10, m);
  for (std::size_t j = 0; j < included.size(); ++j) {
    const std::int64_t size = countOf(included[j]);
    if (size < needed) {
      return Status::invalidArgument("the audit trains on random halves of the " + std::to_string(poolSize) +
                                     " pooled records, and the " + jobName(j) + " drew only " + std::to_string(size) +
                                     ": that is below " +
                                     (m >= 10 ? "the batch size m = " + std::to_string(m) + " (lower --m)"
                                              : std::string("the trainer's minimum of 10 records")) +
                                     " — use more data");
    }
  }
  return Status::ok();
}

Result<AuditPlan> planAudit(const TrainTestSplit& data, const AuditConfig& config, const TrainerConfig& base) {
  AuditPlan plan;
  plan.pool = poolWithCanaries(data.train, config.canaries, base.seed);
  const std::int64_t poolSize = plan.pool.size();
  plan.included = memberships(poolSize, config.shadowModels, base.seed);
  plan.seeds = jobSeeds(base.seed, plan.included.size());
  DPX_RETURN_IF_ERROR(checkTrainable(plan.included, poolSize, base.knobs.m));
  // The audited records: the canaries when there are any (the worst case), else the pool.
  plan.firstAudited = config.canaries > 0 ? data.train.size() : 0;
  plan.auditedFeatures = plan.pool.features.bottomRows(plan.audited());
  plan.auditedLabels.assign(plan.pool.labels.begin() + plan.firstAudited, plan.pool.labels.end());
  return plan;
}

bool cancelRequested(const AuditConfig& config) {
  return config.cancel && config.cancel->load(std::memory_order_relaxed);
}

// Trains model `job` on its half of the pool (one thread: the parallelism is across models) and
// keeps its φ on the audited records, and the whole result for the target.
void trainModel(std::size_t job, const AuditPlan& plan, const TrainTestSplit& data, const TrainerConfig& base,
                const AuditConfig& config, ProgressMeter& meter, ModelOutcome& out) {
  if (cancelRequested(config)) {
    out.status = Status::cancelled("audit cancelled");
    return;
  }
  try {
    auto split = std::make_shared<TrainTestSplit>();
    split->train = subset(plan.pool, plan.included[job], countOf(plan.included[job]));
    split->test = data.test;
    TrainerConfig c = base;
    c.threads = 1;
    c.seed = plan.seeds[job];
    Result<std::unique_ptr<Trainer>> trainer = Trainer::create(c, split);
    if (!trainer) {
      out.status = trainer.status().withContext(jobName(job));
      return;
    }
    TrainingControl control;
    TrainerCallbacks callbacks;
    callbacks.progress = [&](double fraction, std::int64_t) {
      if (cancelRequested(config)) control.requestCancel();
      meter.update(job, fraction);
    };
    Result<TrainingResult> result = (*trainer)->run(&control, callbacks);
    if (!result) {
      out.status = result.status().withContext(jobName(job));
      return;
    }
    if (result->cancelled) {
      out.status = Status::cancelled("audit cancelled");
      return;
    }
    out.phi = trueClassLogits(result->model, plan.auditedFeatures, plan.auditedLabels);
    out.populationPhi = trueClassLogits(result->model, data.test.features, data.test.labels);
    meter.update(job, 1.0);
    if (job == 0) out.result = std::move(*result);
  } catch (const std::exception& e) {
    out.status = Status::numericalIssue(jobName(job) + ": " + e.what());
  }
}

// The target and every shadow model, in parallel inside an arena of the configured thread count.
Result<std::vector<ModelOutcome>> trainModels(const AuditPlan& plan, const TrainTestSplit& data,
                                              const TrainerConfig& base, const AuditConfig& config,
                                              ProgressMeter& meter) {
  const std::size_t jobs = plan.jobs();
  std::vector<ModelOutcome> outcomes(jobs);
  {
    inArena(base.threads, [&] {
      parallelFor(std::size_t{0}, jobs,
                  [&](std::size_t job) { trainModel(job, plan, data, base, config, meter, outcomes[job]); });
    });
  }
  if (cancelRequested(config)) return Status::cancelled("audit cancelled");
  for (const ModelOutcome& o : outcomes) {
    if (!o.status.isOk()) return o.status;
  }
  return outcomes;
}

// The report's target run and counts.
AuditReport reportFor(TrainingResult target, const AuditPlan& plan, const AuditConfig& config) {
  AuditReport report;
  report.training = std::move(target);
  report.confidence = config.confidence;
  report.delta = report.training.delta;
  report.epsilonUpperBound = report.training.epsilon;
  report.accountant = report.training.run.accountant;
  report.poolSize = plan.pool.size();
  report.canaries = config.canaries;
  report.auditedRecords = plan.audited();
  report.targetRecords = countOf(plan.included[0]);
  report.shadowModels = config.shadowModels;
  return report;
}

// Each attack's score per audited record, and which of those records the target trained on.
struct AttackScores {
  std::vector<std::uint8_t> members;
  std::vector<std::vector<double>> scores;  // loss threshold, LiRA, then RMIA when it ran
  RmiaRun rmia;
};

// The true-class probability p = 1/(1 + e^{−φ}) from φ = log(p/(1 − p)).
std::vector<double> probabilities(std::span<const double> phi) {
  std::vector<double> p(phi.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = std::exp(-std::fabs(phi[i]));  // in (0, 1]: no overflow on either side
    p[i] = phi[i] >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
  }
  return p;
}

// RMIA on the probabilities of the audited records and of the population under every model.
Result<RmiaResult> rmiaFromPhi(const std::vector<ModelOutcome>& outcomes, std::span<const double> targetPhi,
                               const std::vector<std::vector<double>>& shadowPhi,
                               const std::vector<std::vector<std::uint8_t>>& shadowIn, const RmiaConfig& config) {
  std::vector<std::vector<double>> shadowAudited;
  std::vector<std::vector<double>> shadowPopulation;
  for (const std::vector<double>& phi : shadowPhi) shadowAudited.push_back(probabilities(phi));
  for (std::size_t j = 1; j < outcomes.size(); ++j) {
    shadowPopulation.push_back(probabilities(outcomes[j].populationPhi));
  }
  Result<RmiaResult> scores = rmiaScores(probabilities(targetPhi), shadowAudited, shadowIn,
                                         probabilities(outcomes[0].populationPhi), shadowPopulation, config);
  if (!scores) return scores.status().withContext("RMIA");
  return scores;
}

Result<AttackScores> attackScores(std::vector<ModelOutcome>& outcomes, const AuditPlan& plan, const RmiaConfig& rmia) {
  AttackScores out;
  const std::span<const std::uint8_t> targetIn(plan.included[0]);
  out.members.assign(targetIn.begin() + plan.firstAudited, targetIn.end());
  const std::vector<double>& targetPhi = outcomes[0].phi;
  std::vector<std::vector<double>> shadowPhi;
  std::vector<std::vector<std::uint8_t>> shadowIn;
  for (std::size_t j = 1; j < plan.jobs(); ++j) {
    shadowPhi.push_back(std::move(outcomes[j].phi));
    shadowIn.emplace_back(plan.included[j].begin() + plan.firstAudited, plan.included[j].end());
  }
  out.scores.resize(2);
  // −loss: the cross-entropy of the true class is log(1 + e^{−φ}).
  for (double phi : targetPhi) out.scores[0].push_back(-softplus(-phi));
  out.scores[1] = liraScores(targetPhi, shadowPhi, shadowIn);
  // RMIA needs a population that no model trained on: the test split, when there is one.
  if (!outcomes[0].populationPhi.empty()) {
    DPX_ASSIGN_OR_RETURN(RmiaResult relative, rmiaFromPhi(outcomes, targetPhi, shadowPhi, shadowIn, rmia));
    out.scores.push_back(std::move(relative.ranking));  // Score(x), its ties broken by LR(x)
    out.rmia = {rmia.gamma, relative.offlineA, relative.offlineAFitted,
                static_cast<std::int64_t>(outcomes[0].populationPhi.size())};
  }
  return out;
}

AttackReport attackReport(std::size_t a, std::vector<double> scores, const std::vector<std::uint8_t>& members) {
  static constexpr const char* kIds[] = {"loss-threshold", "lira", "rmia"};
  static constexpr const char* kNames[] = {"loss threshold", "likelihood ratio (LiRA, online)",
                                           "RMIA (Zarifzadeh et al. 2024)"};
  static constexpr const char* kCitations[] = {"Yeom, Giacomelli, Fredrikson & Jha 2018",
                                               "Carlini, Chien, Nasr, Song, Terzis & Tramèr 2022",
                                               "Zarifzadeh, Liu & Shokri 2024"};
  AttackReport attack;
  attack.id = kIds[a];
  attack.name = kNames[a];
  attack.citation = kCitations[a];
  attack.roc = rocCurve(scores, members);
  attack.auc = areaUnderCurve(attack.roc);
  attack.tprAtFpr1e3 = tprAtFpr(attack.roc, 1e-3);
  attack.tprAtFpr1e2 = tprAtFpr(attack.roc, 1e-2);
  attack.tradeoff = tradeoffPoints(attack.roc);
  attack.scores = std::move(scores);
  return attack;
}

// The attacks with their ROC and both ε lower bounds; the report's bounds are the largest.
Status addAttacks(AuditReport& report, AttackScores scored, std::uint64_t seed) {
  const std::vector<std::uint8_t>& members = scored.members;
  std::vector<std::uint8_t> selectionHalf(members.size());
  Xoshiro256 engine = streamFor(seed, Stream::kAudit, kSplitHalves);
  for (std::uint8_t& b : selectionHalf) b = coin(engine) ? 1 : 0;
  Result<std::vector<OneRunBound>> oneRun = oneRunAudit(scored.scores, members, report.delta, report.confidence);
  if (!oneRun) return oneRun.status().withContext("one-run ε lower bound");
  Result<std::vector<SplitBound>> split =
      splitClopperPearsonAudit(scored.scores, members, selectionHalf, report.delta, report.confidence);
  if (!split) return split.status().withContext("Clopper–Pearson ε estimate");
  for (std::size_t a = 0; a < scored.scores.size(); ++a) {
    AttackReport attack = attackReport(a, std::move(scored.scores[a]), members);
    attack.oneRun = (*oneRun)[a];
    attack.split = (*split)[a];
    report.epsilonLowerBound = std::max(report.epsilonLowerBound, attack.oneRun.epsilon);
    report.epsilonLowerBoundCp = std::max(report.epsilonLowerBoundCp, attack.split.epsilon);
    report.attacks.push_back(std::move(attack));
  }
  report.bestAttack = 0;
  for (std::size_t a = 1; a < report.attacks.size(); ++a) {
    if (report.attacks[a].auc > report.attacks[static_cast<std::size_t>(report.bestAttack)].auc) {
      report.bestAttack = static_cast<int>(a);
    }
  }
  report.boundMethod = "one-run (Steinke, Nasr & Jagielski 2023, Thm 3.1), " +
                       std::to_string(report.attacks[0].oneRun.tests) + " tests (guess rules x attacks), Bonferroni";
  addBandsAndFits(report, members);
  return Status::ok();
}

// How RMIA ran, or why it did not.
std::string rmiaNote(const AuditReport& report) {
  const RmiaRun& rmia = report.rmia;
  if (rmia.population == 0) {
    return "RMIA did not run: the test split is empty, and it needs a population of records no model trained on";
  }
  return "RMIA (Zarifzadeh, Liu & Shokri 2024), " + rmiaVariant(rmia.gamma, rmia.offlineA, rmia.offlineAFitted) +
         "; population: the " + std::to_string(rmia.population) + " test records, members of no model";
}

// What was decided and why, caveats included.
void addNotes(AuditReport& report) {
  const OneRunBound& any = report.attacks[0].oneRun;
  const std::int64_t audited = report.auditedRecords;
  std::vector<std::string>& notes = report.notes;
  notes.push_back("each of the " + std::to_string(report.poolSize) +
                  " pooled records was included with probability 1/2: "
                  "the target trained on " +
                  std::to_string(report.targetRecords) + "; " + std::to_string(audited) + " audited (" +
                  (report.canaries > 0 ? "the canaries" : "the whole pool") + "), " +
                  std::to_string(report.auditedMembers) + " of them members");
  notes.push_back(rmiaNote(report));
  notes.push_back("one-run bound: m = " + std::to_string(audited) + " audited records, significance " +
                  formatNumber(1.0 - report.confidence) + " split over " + std::to_string(any.tests) +
                  " tests (each at confidence " + formatNumber(any.testConfidence, 6) + ")");
  notes.push_back(
      "epsilon_lower_bound_cp: Clopper-Pearson on a held-out half with the threshold chosen on the "
      "other half; the records share one training run, so they are not independent trials and this "
      "is an estimate, not a bound");
  if (audited == 0 || report.auditedMembers == 0 || report.auditedMembers == audited) {
    notes.push_back("all audited records fell on one side (IN or OUT): the ROC is degenerate; use more records");
  }
  if (!report.epsilonUpperBound) {
    notes.push_back(std::string(mechanismId(report.training.run.mechanism)) +
                    " is not private: there is no proven upper bound to compare with");
  }
  if (const accounting::Accountant* acc = accounting::findAccountant(report.accountant);
      acc && acc->assumptions().neighbouring == Neighbouring::kReplaceOne) {
    notes.push_back(report.accountant +
                    " proves ε for replace-one neighbours, while the audit's IN/OUT game adds "
                    "or removes records: the comparison is indicative, not a theorem");
  }
  if (!report.training.run.violations.empty()) {
    notes.push_back(
        "the target run violates assumptions of its accountant, so its ε may not be a valid upper "
        "bound (see violations)");
  }
}

}  // namespace

Result<AuditReport> runAudit(const Trainer& configured, std::shared_ptr<const TrainTestSplit> data,
                             const AuditConfig& config) {
  try {
    DPX_RETURN_IF_ERROR(validate(config, data.get()));
    const auto start = Clock::now();
    const TrainerConfig& base = configured.config();
    DPX_ASSIGN_OR_RETURN(const AuditPlan plan, planAudit(*data, config, base));
    ProgressMeter meter(config.progress, plan.jobs());
    DPX_ASSIGN_OR_RETURN(std::vector<ModelOutcome> outcomes, trainModels(plan, *data, base, config, meter));

    AuditReport report = reportFor(std::move(*outcomes[0].result), plan, config);
    DPX_ASSIGN_OR_RETURN(AttackScores scored, attackScores(outcomes, plan, config.rmia));
    report.auditedMembers = countOf(scored.members);
    report.rmia = scored.rmia;
    const std::vector<std::uint8_t> members = scored.members;
    DPX_RETURN_IF_ERROR(addAttacks(report, std::move(scored), base.seed));
    addNotes(report);
    report.accountantEpsilons = accountantEpsilons(report.training);
    checkAgainstProvenCurve(report, members);
    flagContradiction(report);
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    meter.finish();
    return report;
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("audit failed: ") + e.what());
  }
}

std::vector<AccountantEpsilon> accountantEpsilons(const training::TrainingResult& run) {
  std::vector<AccountantEpsilon> out;
  if (run.epsilon && !run.run.accountant.empty()) {
    const accounting::Accountant* own = accounting::findAccountant(run.run.accountant);
    out.push_back({run.run.accountant, *run.epsilon, own ? own->boundKind() : accounting::BoundKind::kUpper,
                   run.run.violations.empty()});
  }
  if (run.stepsDone <= 0) return out;
  Params p = run.run.accountantParams;
  p.K = run.stepsDone;
  for (std::string_view id : training::accountantsFor(run.run.mechanism)) {
    if (id == run.run.accountant) continue;
    const accounting::Accountant* a = accounting::findAccountant(id);
    if (!a) continue;
    Result<accounting::EpsilonResult> e = a->epsilon(p);
    if (!e) continue;  // an analysis that cannot answer for this run proves nothing here
    out.push_back({std::string(id), e->epsilon, e->bound, a->check(p).empty()});
  }
  return out;
}

namespace {

constexpr int kProvenCurvePoints = 400;  // type I errors of the proven curve, log-spaced from 1e−6

// The tightest proven trade-off of the run (see AuditReport::provenCurve); `source` says whose.
std::optional<accounting::TradeoffCurve> provenCurveOf(const AuditReport& report, std::string& source) {
  const TrainingResult& run = report.training;
  source = "none: " + std::string(mechanismId(run.run.mechanism)) + " is not private";
  if (run.run.mechanism == Mechanism::kSgd || run.stepsDone <= 0) return std::nullopt;
  Params p = run.run.accountantParams;
  p.K = run.stepsDone;
  const std::vector<double> grid = accounting::defaultTypeOneGrid(kProvenCurvePoints);
  const bool dpSgd = run.run.mechanism == Mechanism::kDpSgd;
  std::optional<accounting::TradeoffCurve> curve;
  std::string provers;
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    if (a.kind != accounting::BoundKind::kUpper || !a.applicable || (dpSgd && a.accountant != "pld")) continue;
    const accounting::Accountant* accountant = accounting::findAccountant(a.accountant);
    if (!accountant) continue;
    Result<accounting::TradeoffCurve> c = accountant->tradeoff(p, grid);
    if (!c || c->typeTwo.size() != grid.size()) continue;  // no curve from it: it proves none here
    if (!curve) {
      curve = std::move(*c);
    } else {
      for (std::size_t k = 0; k < grid.size(); ++k) curve->typeTwo[k] = std::max(curve->typeTwo[k], c->typeTwo[k]);
    }
    provers += (provers.empty() ? "" : ", ") + a.accountant;
  }
  if (!curve) {
    source = dpSgd ? "none: the pld accountant gave no curve applicable to this run"
                   : "none: no applicable upper-bound accountant gives a trade-off curve for this run";
  } else {
    source = dpSgd ? "pld (pessimistic exact composition, add and remove neighbours)"
                   : "pointwise maximum of the curves of " + provers;
  }
  return curve;
}

// Adds the band and f-DP contradictions to `contradiction` and the loud message.
void flagCurveContradiction(AuditReport& report) {
  const bool fdpRejected = report.fdpAudit && report.fdpAudit->rejected;
  if (!report.bandContradiction && !fdpRejected) return;
  std::string text = "CONTRADICTION: ";
  if (report.bandContradiction && report.provenCurve) {
    std::string attacks;
    double gap = 0.0;
    for (const AttackReport& a : report.attacks) {
      const BandCheck check = checkBand(a.band, *report.provenCurve);
      if (check.flagged.empty()) continue;
      attacks += (attacks.empty() ? "" : ", ") + a.id;
      gap = std::max(gap, check.worstGap);
    }
    text += "the ROC band of " + attacks + " lies above the trade-off curve proven for this run (" +
            report.provenCurveSource + ") by up to " + formatNumber(gap, 6) + " in TPR";
  } else if (report.bandContradiction) {
    text += "an attack's ROC band lies above the trade-off curve proven for this run";
  }
  if (fdpRejected) {
    text += std::string(report.bandContradiction ? "; " : "") +
            "the one-run f-DP audit rejects the proven curve (p = " + formatNumber(report.fdpAudit->pValue, 6) +
            ", confidence " + formatNumber(report.fdpAudit->confidence) + ")";
  }
  text += ": the trainer or the accountant has a bug";
  report.contradiction = true;
  report.message = report.message.empty() ? text : report.message + "; " + text;
}

}  // namespace

void flagContradiction(AuditReport& report) {
  // The tightest proven bound: the run's own ε and every applicable upper bound of the mechanism.
  std::optional<double> tightest = report.epsilonUpperBound;
  std::string prover = report.accountant.empty() ? std::string("the accountant") : report.accountant;
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    if (a.kind != accounting::BoundKind::kUpper || !a.applicable) continue;
    if (!tightest || a.epsilon < *tightest) {
      tightest = a.epsilon;
      prover = a.accountant;
    }
  }
  report.contradiction = tightest && report.epsilonLowerBound > *tightest;
  report.message.clear();
  if (report.contradiction) {
    report.message = "CONTRADICTION: the audit proves ε ≥ " + formatNumber(report.epsilonLowerBound, 6) +
                     " (confidence " + formatNumber(report.confidence) + ", δ = " + formatNumber(report.delta) +
                     "), above the ε = " + formatNumber(*tightest, 6) + " that " + prover +
                     " proved for this run: the trainer or the accountant has a bug";
  }
  flagCurveContradiction(report);
}

void addBandsAndFits(AuditReport& report, const std::vector<std::uint8_t>& members) {
  // Split over the attacks, so "some attack's band crosses the proven curve" keeps the confidence.
  const double bandConfidence =
      1.0 - (1.0 - report.confidence) / static_cast<double>(std::max<std::size_t>(1, report.attacks.size()));
  for (AttackReport& attack : report.attacks) {
    attack.gaussianFit.reset();
    Result<RocBand> band = rocBand(attack.scores, members, bandConfidence);
    if (!band) {
      attack.band = RocBand{};
      attack.band.confidence = bandConfidence;
      attack.band.method = "no band: " + band.status().message();
      continue;
    }
    attack.band = std::move(*band);
    Result<GaussianDpFit> fit = fitGaussianDp(attack.band);
    if (fit) attack.gaussianFit = std::move(*fit);
  }
}

void checkAgainstProvenCurve(AuditReport& report, const std::vector<std::uint8_t>& members) {
  report.provenCurve = provenCurveOf(report, report.provenCurveSource);
  report.bandCheck = BandCheck{};
  report.bandContradiction = false;
  report.fdpAudit.reset();
  report.notes.push_back("proven trade-off curve: " + report.provenCurveSource);
  if (report.attacks.empty()) return;
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  report.notes.push_back(
      "ROC band: " + (best.band.method.empty() ? std::string("none") : best.band.method) +
      " (each attack's band at confidence " + formatNumber(best.band.confidence, 6) +
      ", so the flag over all attacks holds at " + formatNumber(report.confidence) +
      "); the audited records share one training run, so they are not independent trials: the band is a "
      "diagnostic, and the one-run f-DP audit is the rigorous test");
  if (!report.provenCurve) return;
  for (std::size_t a = 0; a < report.attacks.size(); ++a) {
    BandCheck check = checkBand(report.attacks[a].band, *report.provenCurve);
    report.bandContradiction = report.bandContradiction || !check.flagged.empty();
    if (static_cast<int>(a) == report.bestAttack) report.bandCheck = std::move(check);
  }
  Result<FdpAuditResult> fdp = fdpAudit(best.scores, members, *report.provenCurve, report.confidence,
                                        "proven curve (" + report.provenCurveSource + ")");
  if (fdp) {
    report.fdpAudit = std::move(*fdp);
  } else {
    report.notes.push_back("the one-run f-DP audit did not run: " + fdp.status().message());
  }
}

namespace {

void writePairs(JsonWriter& json, std::string_view key, const std::vector<RocPoint>& points, bool tradeoff) {
  json.key(key).beginArray();
  for (const RocPoint& p : points) {
    json.beginArray().value(p.fpr).value(tradeoff ? 1.0 - p.tpr : p.tpr).endArray();
  }
  json.endArray();
}

void writeTprAtFpr(JsonWriter& json, const AttackReport& a) {
  json.key("tpr_at_fpr").beginObject().field("0.001", a.tprAtFpr1e3).field("0.01", a.tprAtFpr1e2).endObject();
}

// One element of `attacks`: the attack, its thinned ROC and both ε estimates in detail.
void writeAttack(JsonWriter& json, const AttackReport& a) {
  json.beginObject().field("id", a.id).field("name", a.name).field("citation", a.citation);
  json.field("auc", a.auc);
  writeTprAtFpr(json, a);
  const std::vector<RocPoint> roc = thinRoc(a.roc);
  writePairs(json, "roc", roc, false);
  writePairs(json, "tradeoff", roc, true);
  json.key("one_run").beginObject().field("epsilon", a.oneRun.epsilon).field("k_plus", a.oneRun.rule.kPlus);
  json.field("k_minus", a.oneRun.rule.kMinus).field("guesses", a.oneRun.guesses).field("correct", a.oneRun.correct);
  json.field("examples", a.oneRun.examples).field("tests", a.oneRun.tests);
  json.field("test_confidence", a.oneRun.testConfidence).endObject();
  json.key("split_cp").beginObject().field("epsilon", a.split.epsilon).field("threshold", a.split.threshold);
  json.field("fpr", a.split.fpr).field("fnr", a.split.fnr).field("fpr_upper", a.split.fprUpper);
  json.field("fnr_upper", a.split.fnrUpper).field("positives", a.split.positives);
  json.field("negatives", a.split.negatives).endObject();
  json.endObject();
}

// `rmia`: its headline numbers and how it ran; null when it did not (no population).
void writeRmia(JsonWriter& json, const AuditReport& report) {
  json.key("rmia");
  const auto rmia =
      std::find_if(report.attacks.begin(), report.attacks.end(), [](const AttackReport& a) { return a.id == "rmia"; });
  if (rmia == report.attacks.end()) {
    json.null();
    return;
  }
  json.beginObject().field("auc", rmia->auc);
  writeTprAtFpr(json, *rmia);
  json.field("gamma", report.rmia.gamma).field("offline_a", report.rmia.offlineA);
  json.field("offline_a_fitted", report.rmia.offlineAFitted);
  json.field("population", report.rmia.population).field("population_source", std::string("test split"));
  json.field("variant", std::string("online")).endObject();
}

// roc_band, mu_hat, mu_interval of the best attack; fdp_audit; the band flags.
void writeBandJson(JsonWriter& json, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  json.key("roc_band").beginObject().field("method", best.band.method).field("confidence", best.band.confidence);
  json.key("points").beginArray();
  for (const RocBandPoint& p : best.band.points) {
    json.beginObject().field("fpr", p.fpr).field("fpr_lower", p.fprLower).field("fpr_upper", p.fprUpper);
    json.field("tpr", p.tpr).field("tpr_lower", p.tprLower).field("tpr_upper", p.tprUpper).endObject();
  }
  json.endArray().endObject();
  json.key("mu_hat");
  if (best.gaussianFit) {
    json.value(best.gaussianFit->muHat);
    json.key("mu_interval").beginArray().value(best.gaussianFit->muLower).value(best.gaussianFit->muUpper).endArray();
  } else {
    json.null();
    json.key("mu_interval").null();
  }
  json.key("fdp_audit");
  if (report.fdpAudit) {
    const FdpAuditResult& f = *report.fdpAudit;
    json.beginObject().field("rejected", f.rejected).field("confidence", f.confidence).field("family", f.family);
    json.field("p_value", f.pValue).field("mu_lower_bound", f.muLowerBound).field("method", f.method);
    json.field("examples", f.examples).field("guesses", f.guesses).field("correct", f.correct).endObject();
  } else {
    json.null();
  }
  json.field("band_contradiction", report.bandContradiction);
  json.key("band_flagged").beginArray();
  for (int j : report.bandCheck.flagged) json.value(j);
  json.endArray();
  json.field("proven_curve_source", report.provenCurveSource);
}

}  // namespace

void writeAuditJson(JsonWriter& json, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  const std::vector<RocPoint> bestRoc = thinRoc(best.roc);
  json.field("attack", best.id);
  writePairs(json, "roc", bestRoc, false);
  json.field("auc", best.auc);
  writeTprAtFpr(json, best);
  writePairs(json, "tradeoff", bestRoc, true);
  json.field("epsilon_lower_bound", report.epsilonLowerBound);
  json.field("confidence", report.confidence);
  json.field("bound_method", report.boundMethod);
  json.field("epsilon_lower_bound_cp", report.epsilonLowerBoundCp);
  json.key("epsilon_upper_bound");
  if (report.epsilonUpperBound) {
    json.value(*report.epsilonUpperBound);
  } else {
    json.null();
  }
  json.field("upper_bound_accountant", report.accountant);
  json.key("accountant_epsilons").beginArray();
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    json.beginObject().field("accountant", a.accountant).field("epsilon", a.epsilon);
    json.field("bound", std::string(accounting::boundKindName(a.kind))).field("applicable", a.applicable).endObject();
  }
  json.endArray();
  json.field("contradiction", report.contradiction);
  json.field("message", report.message);
  json.field("pool_size", report.poolSize).field("canaries", report.canaries);
  json.field("audited_records", report.auditedRecords).field("audited_members", report.auditedMembers);
  json.field("target_records", report.targetRecords).field("shadow_models", report.shadowModels);
  json.field("audit_seconds", report.seconds);
  json.key("audit_notes").beginArray();
  for (const std::string& n : report.notes) json.value(n);
  json.endArray();
  json.key("attacks").beginArray();
  for (const AttackReport& a : report.attacks) writeAttack(json, a);
  json.endArray();
  writeRmia(json, report);
  writeBandJson(json, report);
}

namespace {

// The band, μ and f-DP audit lines of describeAudit.
void describeBand(std::ostringstream& out, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  if (best.gaussianFit) {
    out << "Gaussian DP of " << best.id << ": μ ≈ " << formatNumber(best.gaussianFit->muHat, 4) << ", interval ["
        << formatNumber(best.gaussianFit->muLower, 4) << ", " << formatNumber(best.gaussianFit->muUpper, 4)
        << "] at confidence " << formatNumber(best.gaussianFit->confidence, 6) << " (" << best.band.points.size()
        << "-point ROC band)\n";
  }
  if (!report.provenCurve) return;
  out << "ROC bands against the proven curve (" << report.provenCurveSource
      << "): " << (report.bandContradiction ? "CROSSED" : "below it") << "\n";
  if (report.fdpAudit) {
    const FdpAuditResult& f = *report.fdpAudit;
    out << "one-run f-DP audit of the proven curve: " << (f.rejected ? "REJECTED" : "not rejected")
        << " (p = " << formatNumber(f.pValue, 4) << ", " << f.correct << "/" << f.guesses
        << " correct); Gaussian DP μ ≥ " << formatNumber(f.muLowerBound, 4) << " at confidence "
        << formatNumber(f.confidence) << "\n";
  }
}

}  // namespace

std::string describeAudit(const AuditReport& report) {
  std::ostringstream out;
  if (report.contradiction) out << "!!! " << report.message << " !!!\n";
  const TrainingResult& t = report.training;
  out << "membership-inference audit of " << mechanismId(t.run.mechanism) << ": " << report.shadowModels
      << " shadow models, " << report.auditedRecords << " audited records ("
      << (report.canaries > 0 ? std::to_string(report.canaries) + " canaries" : std::string("the whole pool")) << ", "
      << report.auditedMembers << " members), " << formatNumber(report.seconds, 4) << " s\n";
  out << "target run: " << report.targetRecords << " records, test accuracy "
      << formatNumber(100 * t.finalTestAccuracy, 4) << "%, train " << formatNumber(100 * t.finalTrainAccuracy, 4)
      << "%\n";
  for (const AttackReport& a : report.attacks) {
    out << "  " << a.name << ": AUC " << formatNumber(a.auc, 4) << ", TPR " << formatNumber(a.tprAtFpr1e3, 4)
        << " at FPR 0.001, " << formatNumber(a.tprAtFpr1e2, 4) << " at FPR 0.01; one-run ε ≥ "
        << formatNumber(a.oneRun.epsilon, 4) << " (" << a.oneRun.correct << "/" << a.oneRun.guesses
        << " correct guesses), split Clopper-Pearson ε ≈ " << formatNumber(a.split.epsilon, 4) << "\n";
  }
  out << "empirical ε ≥ " << formatNumber(report.epsilonLowerBound, 6) << " at δ = " << formatNumber(report.delta)
      << " with confidence " << formatNumber(report.confidence) << " (" << report.boundMethod << ")\n";
  if (report.epsilonUpperBound) {
    out << "proven ε ≤ " << formatNumber(*report.epsilonUpperBound, 6) << " (" << report.accountant
        << "): " << (report.contradiction ? "CONTRADICTED" : "consistent with the audit") << "\n";
    for (const AccountantEpsilon& a : report.accountantEpsilons) {
      if (a.accountant == report.accountant) continue;
      out << "  " << a.accountant << ": ε " << (a.kind == accounting::BoundKind::kUpper ? "≤ " : "≈ ")
          << formatNumber(a.epsilon, 6) << " (" << accounting::boundKindName(a.kind)
          << (a.applicable ? "" : ", assumptions violated") << ")\n";
    }
  } else {
    out << "no proven upper bound (not private)\n";
  }
  describeBand(out, report);
  for (const std::string& n : report.notes) out << "note: " << n << "\n";
  return out.str();
}

}  // namespace dpx::core::audit
