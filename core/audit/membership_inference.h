// Membership-inference audit of a trained logistic-regression model (the empirical points of the
// trade-off chart, `dpx audit`): the strongest check of a DP claim is an attack that tries to break it.
//
// The game (Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One (1) Training Run"):
// every record of the training pool — plus k crafted canaries — is included in the target run
// independently with probability 1/2 (seeded coins). The target model is trained with the
// user's TrainerConfig (mechanism, knobs, epochs, target-ε mode) on the included records; its
// accountant's ε is the proven upper bound the audit is checked against.
//
// Attacks, each giving a score per audited record (higher = more likely a member):
//  - loss threshold (Yeom, Giacomelli, Fredrikson & Jha 2018): −cross-entropy of the target
//    model on the record;
//  - LiRA, online (Carlini, Chien, Nasr, Song, Terzis & Tramèr 2022, "Membership Inference
//    Attacks From First Principles", §IV): N reference ("shadow") models trained on random
//    halves of the pool, each record IN for half of them; φ = log(p_y/(1 − p_y)) (the logit of
//    the model's true-class probability); Gaussians fitted to φ over the shadow models where the
//    record was IN and where it was OUT; score = log N(φ_target; μ_in, σ_in²) −
//    log N(φ_target; μ_out, σ_out²). A side with fewer than 2 samples uses the pooled
//    within-record variance of that side (their "global variance", §VI-B, recommended for
//    few shadow models) and, with none, the side's pooled mean;
//  - RMIA, online (Zarifzadeh, Liu & Shokri 2024, rmia.h): the same shadow models as reference
//    models and the dataset's test split as the population (records no model trained on); the
//    target's true-class probability over its mean under the reference models, compared with the
//    population's; the audit ranks by the score with its ties broken by that ratio (rmia.h says
//    why). Absent when the test split is empty.
//
// Audited records: the canaries when k > 0 (the worst case: mislabelled points far from the
// data, Jagielski et al. 2020 / Nasr et al. 2021), else the whole pool. Outputs per attack: ROC,
// AUC, TPR at FPR 1e−3 and 1e−2, trade-off points (x = FPR, y = 1 − TPR); and the ε lower bounds
// of epsilon_lower_bound.h: the one-run bound (rigorous, Bonferroni over rules × attacks) and
// the split Clopper–Pearson estimate. A lower bound above the run's proven ε is a contradiction:
// a bug in the trainer or in the accountant, and the report says so loudly.
//
// Cost: N + 1 small models, trained in parallel with oneTBB (one thread each, inside an arena of
// the configured thread count); results are bit-identical for a seed whatever the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.h"
#include "audit/epsilon_lower_bound.h"
#include "audit/fdp_audit.h"
#include "audit/rmia.h"
#include "audit/roc.h"
#include "audit/roc_band.h"
#include "common/status.h"
#include "io/json_writer.h"
#include "training/trainer.h"

namespace dpx::core::audit {

inline constexpr int kMaxShadowModels = 1024;
inline constexpr std::int64_t kMaxCanaries = 1'000'000;

struct AuditConfig {
  int shadowModels = 16;      // reference models for LiRA, in [1, 1024]
  std::int64_t canaries = 0;  // crafted records audited instead of the pool, in [0, min(pool, 1e6)]
  double confidence = 0.95;   // of the ε lower bounds, in [0.5, 1)
  RmiaConfig rmia;            // γ and a (fitted unless given) of the RMIA attack
  // Fraction done in [0, 1], from worker threads (serialised by the audit), ~30 times a second.
  std::function<void(double)> progress;
  // Set to true to stop: the audit returns StatusCode::kCancelled within one training step.
  const std::atomic<bool>* cancel = nullptr;
};

struct AttackReport {
  std::string id;    // "loss-threshold" | "lira" | "rmia"
  std::string name;  // for people
  std::string citation;
  std::vector<RocPoint> roc;  // every distinct score (thinRoc() for display)
  double auc = 0.5;
  double tprAtFpr1e3 = 0.0;
  double tprAtFpr1e2 = 0.0;
  std::vector<TradeoffPoint> tradeoff;  // (FPR, 1 − TPR) of every ROC point
  OneRunBound oneRun;
  SplitBound split;
  std::vector<double> scores;                // per audited record
  RocBand band;                              // simultaneous ROC band (no points when one side is empty)
  std::optional<GaussianDpFit> gaussianFit;  // μ read from the band (Nasr et al. 2023)
};

// What one accountant that covers the audited mechanism says of the run (dp-sgd: rdp, gdp, pld).
struct AccountantEpsilon {
  std::string accountant;
  double epsilon = 0.0;
  accounting::BoundKind kind = accounting::BoundKind::kUpper;
  bool applicable = true;  // its check() passed: an upper bound it gives is proven for this run
};

// How RMIA ran in an audit.
struct RmiaRun {
  double gamma = 2.0;
  double offlineA = kRmiaDefaultOfflineA;  // the a used for records OUT of every model
  bool offlineAFitted = false;             // fitted on the shadow models
  std::int64_t population = 0;             // test records compared with (0: RMIA did not run)
};

// Where the audited scores came from: the attacks of runAudit on a model it trained, or a file of
// scores computed elsewhere and audited against a claimed guarantee (score_audit.h).
enum class AuditSource { kTraining, kScores };

// Type I errors of the proven (or claimed) trade-off curve an audit is checked against: the
// curve on defaultTypeOneGrid(kProvenCurvePoints), log-spaced from 1e−6.
inline constexpr int kProvenCurvePoints = 400;

struct AuditReport {
  AuditSource source = AuditSource::kTraining;
  training::TrainingResult training;  // the target run (its model, history and ε); empty for kScores
  std::vector<AttackReport> attacks;  // loss threshold, LiRA, then RMIA (when there is a population)
  int bestAttack = 0;                 // index of the largest AUC (ROC/AUC keys of the JSON)
  double epsilonLowerBound = 0.0;     // one-run bound, max over attacks, at `confidence`
  double epsilonLowerBoundCp = 0.0;   // split Clopper–Pearson estimate, max over attacks
  std::string boundMethod;            // names the method of epsilonLowerBound
  double confidence = 0.95;
  // The tests behind the contradiction flag each run at testConfidence(), so that with
  // verdictTests > 1 the flag (any of them rejecting) holds at `confidence` by Bonferroni. runAudit
  // keeps 1 (each statement at `confidence` on its own); an audit of imported scores splits over
  // its 3 tests (one-run ε bound, ROC band, one-run f-DP audit) because its verdict is their union.
  int verdictTests = 1;
  double testConfidence() const { return 1.0 - (1.0 - confidence) / static_cast<double>(std::max(1, verdictTests)); }
  double delta = 0.0;                       // δ of both the bound and the run's guarantee
  std::optional<double> epsilonUpperBound;  // the target run's accountant ε (absent for sgd)
  std::string accountant;                   // who proved it
  // Every accountant of the mechanism at the run's δ (the run's own first); the audit is checked
  // against the smallest applicable upper bound among them and the run's own ε.
  std::vector<AccountantEpsilon> accountantEpsilons;
  bool contradiction = false;  // epsilonLowerBound > the smallest proven upper bound
  std::string message;         // the loud one when contradiction, else empty
  std::int64_t poolSize = 0;   // training records + canaries
  std::int64_t canaries = 0;
  std::int64_t auditedRecords = 0;  // canaries if any, else the pool
  std::int64_t auditedMembers = 0;  // audited records in the target run
  std::int64_t targetRecords = 0;   // records the target was trained on
  int shadowModels = 0;
  RmiaRun rmia;  // how RMIA ran
  // The tightest proven trade-off of the run: dp-sgd → the pessimistic PLD curve; other private
  // mechanisms → the pointwise max of the curves of their applicable upper-bound accountants;
  // sgd → none; imported scores → the claimed configuration's curve. Checked against every
  // attack's band and by the one-run f-DP audit.
  std::optional<accounting::TradeoffCurve> provenCurve;
  std::string provenCurveSource;
  BandCheck bandCheck;                     // of the best attack's band
  bool bandContradiction = false;          // a band point of any attack above the proven curve
  std::optional<FdpAuditResult> fdpAudit;  // best attack against provenCurve (Mahloujifar et al. 2025)
  std::vector<std::string> notes;          // what was decided and why (caveats included)
  double seconds = 0.0;
  // kScores: one line, "consistent with the claimed ε = … (δ = …)" or "contradicts it at 95 %: …"
  // naming the tests that reject (score_audit.h); empty for kTraining.
  std::string verdict;
};

// Runs the audit with the configuration of `configured` (Trainer::create already validated
// it on `data`); the pool is data->train, the test set is kept for accuracies. Errors name the
// parameter and its range ("--shadow-models", "canaries = k exceeds …").
Result<AuditReport> runAudit(const training::Trainer& configured, std::shared_ptr<const training::TrainTestSplit> data,
                             const AuditConfig& config);

// φ = log(p_y/(1 − p_y)) of the model on each row, in double: z_y − log Σ_{j≠y} e^{z_j}.
std::vector<double> trueClassLogits(const training::Model& model, const training::FeatureMatrix& features,
                                    std::span<const std::int32_t> labels);

// LiRA scores (see above). shadowPhi[j][i] and shadowIn[j][i] for shadow model j and audited
// record i; every vector has targetPhi.size() entries.
std::vector<double> liraScores(std::span<const double> targetPhi, const std::vector<std::vector<double>>& shadowPhi,
                               const std::vector<std::vector<std::uint8_t>>& shadowIn);

// ε of the run (steps done, its δ) from every accountant that covers its mechanism, its own first.
std::vector<AccountantEpsilon> accountantEpsilons(const training::TrainingResult& run);

// Sets `contradiction` and the loud `message` when epsilonLowerBound exceeds epsilonUpperBound or
// any applicable upper bound in accountantEpsilons, or when bandContradiction is set
// (runAudit calls it; public so the rule is testable without a broken trainer).
void flagContradiction(AuditReport& report);

// Every attack's ROC band (simultaneous, at the report's confidence) and the Gaussian-DP μ read
// from it; members[i] is audited record i's membership. Called at the end of the attacks.
void addBandsAndFits(AuditReport& report, const std::vector<std::uint8_t>& members);

// provenCurve and its source from the run and accountantEpsilons, then checkAgainstCurve.
// runAudit calls it before flagContradiction.
void checkAgainstProvenCurve(AuditReport& report, const std::vector<std::uint8_t>& members);

// With report.provenCurve set (or not: then only the band note is added): the check of every
// attack's band against it (bandCheck of the best attack, bandContradiction of any) and the
// one-run f-DP audit of the best attack against it, at report.testConfidence(). Shared by
// runAudit and the audit of imported scores.
void checkAgainstCurve(AuditReport& report, const std::vector<std::uint8_t>& members);

// The `dpx audit --json` keys, written into an object the caller has opened (after the `train`
// keys): source ("training" | "scores"), verdict (kScores only), roc ([[fpr, tpr], …] of the best attack, thinned),
// auc, tpr_at_fpr {"0.001", "0.01"}, tradeoff, epsilon_lower_bound, confidence, bound_method, epsilon_lower_bound_cp,
// epsilon_upper_bound, contradiction, message, counts, audit_notes, `attacks` (details) and `rmia`
// ({auc, tpr_at_fpr, gamma, offline_a, offline_a_fitted, population, population_source, variant};
// null when RMIA did not run), `roc_band` of the best attack ({method, confidence, points:
// [{fpr, fpr_lower, fpr_upper, tpr, tpr_lower, tpr_upper}]}), `mu_hat` and `mu_interval` [lo, hi]
// of its Gaussian-DP fit (null without one), `fdp_audit` ({rejected, confidence, family, p_value,
// mu_lower_bound, method}, null without a proven curve), `band_contradiction`, `band_flagged`
// (indices into roc_band.points) and `proven_curve_source`.
void writeAuditJson(JsonWriter& json, const AuditReport& report);

// The report for people, several lines; the contradiction, if any, first and in capitals.
std::string describeAudit(const AuditReport& report);

}  // namespace dpx::core::audit
