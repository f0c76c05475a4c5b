// What the parts of the membership-inference audit hand one another: the game (the models and the
// records they train on), the attacks that score them and the verdicts drawn from the scores. Not
// part of the audit's interface (membership_inference.h): these types change with the pipeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit/membership_inference.h"
#include "audit/rmia.h"
#include "common/status.h"
#include "training/rng.h"
#include "training/trainer.h"

namespace dpx::core::audit::detail {

// Parts of the training::Stream::kAudit stream: each decision has its own engine, so adding
// canaries or shadow models never changes the coins of the target run.
enum AuditPart : std::uint64_t {
  kTargetMembership = 1,
  kCanaryRecords = 2,
  kShadowMembership = 3,
  kShadowSeeds = 4,
  kSplitHalves = 5,
};

inline bool coin(training::Xoshiro256& engine) { return (engine() >> 63) != 0; }

// What the target and the shadow models train on, and the records they are scored on.
struct AuditPlan {
  training::Dataset pool;                           // the training records, then the canaries
  std::vector<std::vector<std::uint8_t>> included;  // per job: 0 the target, 1…N the shadow models
  std::vector<std::uint64_t> seeds;                 // per job
  std::int64_t firstAudited = 0;                    // the audited records are the pool's rows from here on
  training::FeatureMatrix auditedFeatures;
  std::vector<std::int32_t> auditedLabels;

  std::size_t jobs() const { return included.size(); }
  std::int64_t audited() const { return pool.size() - firstAudited; }
};

struct ModelOutcome {
  Status status;
  std::vector<double> phi;                         // on the audited records
  std::vector<double> populationPhi;               // on the test split (RMIA's population)
  std::optional<training::TrainingResult> result;  // kept for the target only
};

// Each attack's score per audited record, and which of those records the target trained on.
struct AttackScores {
  std::vector<std::uint8_t> members;
  std::vector<std::vector<double>> scores;  // loss threshold, LiRA, then RMIA when it ran
  RmiaRun rmia;
};

// The scores of every attack from the models' φ (the shadow models' φ is moved out of `outcomes`).
Result<AttackScores> attackScores(std::vector<ModelOutcome>& outcomes, const AuditPlan& plan, const RmiaConfig& rmia);

// Who an attack is, for the report.
struct AttackIdentity {
  std::string id;
  std::string name;
  std::string citation;
};

// The attacks with their ROC and both ε lower bounds (at report.testConfidence()), their bands and
// Gaussian-DP fits; the report's bounds are the largest. `seed` draws the split halves of the
// Clopper–Pearson estimate. The first form names runAudit's attacks (loss threshold, LiRA, RMIA);
// the second takes one identity per score list (an audit of imported scores).
Status addAttacks(AuditReport& report, AttackScores scored, std::uint64_t seed);
Status addAttacks(AuditReport& report, const std::vector<AttackIdentity>& identities, AttackScores scored,
                  std::uint64_t seed);

// What was decided and why, caveats included.
void addNotes(AuditReport& report);

}  // namespace dpx::core::audit::detail
