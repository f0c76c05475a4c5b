// Membership-inference audit: the IN/OUT game of Steinke, Nasr & Jagielski 2023 — the pool with
// its canaries, the coins that decide who trains on what, the target and shadow models trained in
// parallel — and runAudit, which hands their φ to the attacks (membership_inference_attacks.cpp)
// and the scores to the verdicts (membership_inference_verdicts.cpp).
#include "audit/membership_inference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "audit/membership_inference_detail.h"
#include "common/format.h"
#include "common/parallel.h"
#include "training/rng.h"

namespace dpx::core::audit {
namespace {

using Clock = std::chrono::steady_clock;
using namespace training;
using namespace detail;

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

}  // namespace dpx::core::audit
